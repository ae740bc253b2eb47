// A world whose numbers overflow is flagged and isolated (SPEC 9): its impulses are reset to
// zero and its velocity to v-hat, and its neighbours get exactly what they get alone.
#include "robot_scenes.hpp"
#include "rows_scenes.hpp"
#include "scene_support.hpp"
#include "support.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace {

// One bilateral row with finite inputs whose first update overflows: J.Y = 1, but
// Y * (b / J.Y) = 1e10 * 1e300 is beyond double (and 1e3 * 3e38 beyond float).
void add_overflowing_world(scenes::RowsBuilder& builder, bool float32) {
    builder.begin_world({0.0, 0.0});
    scenes::Row row;
    row.blocks[0] = float32 ? scenes::Block{0, {1e-3}, {1e3}} : scenes::Block{0, {1e-10}, {1e10}};
    row.bias = float32 ? 3e38 : 1e300;
    builder.add_row(row);
    scenes::Row second;
    second.blocks[0] = {0, {1.0, 1.0}, {1.0, 1.0}};
    builder.add_row(second);
}

} // namespace

TEST_CASE("an overflowing world is flagged, reset, and does not touch its neighbours") {
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
            const bool float32 = precision == STEEL_PRECISION_FLOAT32;
            scenes::StackSpec stack;
            stack.height = 4;
            scenes::RowsBuilder mixed, alone;
            scenes::add_stack_world(mixed, stack);
            add_overflowing_world(mixed, float32);
            scenes::add_stack_world(mixed, stack);
            scenes::add_stack_world(alone, stack);

            test::SolveSetup setup;
            setup.precision = precision;
            setup.path = path;
            setup.iterations = 20;
            setup.threads = 2;
            const test::Solved solved = test::solve(mixed, setup);
            const test::Solved reference = test::solve(alone, setup);
            CAPTURE(precision);
            CAPTURE(path);

            CHECK((solved.stats[1].flags & STEEL_WORLD_NONFINITE) != 0);
            CHECK(solved.stats[1].sweeps <= 20);
            CHECK(solved.impulses[4] == 0.0);
            CHECK(solved.impulses[5] == 0.0);
            CHECK(solved.velocities[4] == 0.0);
            CHECK(solved.velocities[5] == 0.0);
            for (int w : {0, 2}) {
                CHECK(solved.stats[w].flags == 0);
                const size_t row0 = w == 0 ? 0 : 6, dof0 = w == 0 ? 0 : 6;
                CHECK(std::memcmp(&solved.impulses[row0], reference.impulses.data(),
                                  4 * sizeof(double)) == 0);
                CHECK(std::memcmp(&solved.velocities[dof0], reference.velocities.data(),
                                  4 * sizeof(double)) == 0);
            }
            for (double value : solved.impulses)
                CHECK(std::isfinite(value));
            for (double value : solved.velocities)
                CHECK(std::isfinite(value));
        }
}

namespace {

// A scene world of one heavy free box (mass 1e10: its contact's J.Y is about 1e-10) pressed
// into the ground by a finite but huge penetration: the contact's bias, beta * distance / dt,
// is -1.2e301 in float64 (-1.2e31 in float32), and the first update's impulse -error / J.Y
// is beyond the precision. Without the contact, the world has no rows: its velocity is v-hat.
void add_overflowing_box(scenes::SceneBuilder& builder, bool float32, bool contact) {
    builder.begin_world();
    builder.add_body(scenes::free_box(1e10, {0.5, 0.5, 0.5}, {0, 0, 0.5}));
    if (contact)
        builder.add_contact(
            scenes::ContactSpec{0, -1, {0.1, 0.2, 0}, {0, 0, 1}, float32 ? -1e30 : -1e300, 0.5, 0});
}

// Three ordinary worlds: a pile of free boxes (packed contacts), the arm with its grasp (a tree:
// contacts solved one by one through the walks), a stack.
void add_ordinary_world(scenes::SceneBuilder& builder, int which) {
    builder.begin_world();
    if (which == 0) scenes::add_box_pile(builder, 20);
    if (which == 1) scenes::add_arm_with_box(builder, 0.8, 40.0);
    if (which == 2) scenes::add_box_stack(builder, 3);
}

bool same_bits(const double* a, const double* b, size_t count) {
    return std::memcmp(a, b, count * sizeof(double)) == 0;
}

} // namespace

TEST_CASE("colored sweeps: an overflowing world is flagged, reset, and does not touch its "
          "neighbours") {
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (uint32_t threads : {1u, 3u, 8u}) { // 8: fewer worlds than threads
            CAPTURE(precision);
            CAPTURE(threads);
            const bool float32 = precision == STEEL_PRECISION_FLOAT32;
            // mixed: world 0, the overflowing world, worlds 1 and 2; alone: the three without it.
            scenes::SceneBuilder mixed, alone, first, unconstrained;
            add_ordinary_world(mixed, 0);
            add_overflowing_box(mixed, float32, true);
            add_ordinary_world(mixed, 1);
            add_ordinary_world(mixed, 2);
            for (int which : {0, 1, 2})
                add_ordinary_world(alone, which);
            add_ordinary_world(first, 0);
            add_overflowing_box(unconstrained, float32, false);

            test::SceneMode mode;
            mode.response = STEEL_RESPONSE_PROPAGATION;
            mode.solve_mode = STEEL_SOLVE_COLORED;
            mode.precision = precision;
            mode.iterations = 20;
            mode.threads = threads;
            const test::Solved solved = test::solve_with(mixed.desc(), mode);
            const test::Solved reference = test::solve_with(alone.desc(), mode);
            // Where the overflowing world's rows and DOFs sit: after world 0's.
            const test::Solved world0 = test::solve_with(first.desc(), mode);
            const size_t rows0 = world0.impulses.size(), dofs0 = world0.velocities.size();
            const test::Solved v_hat = test::solve_with(unconstrained.desc(), mode);
            REQUIRE(solved.stats.size() == 4);
            REQUIRE(solved.impulses.size() == reference.impulses.size() + 3);
            REQUIRE(solved.velocities.size() == reference.velocities.size() + 6);
            REQUIRE(v_hat.velocities.size() == 6);

            // The overflowing world: flagged, stopped, its impulses zero, its velocity v-hat.
            CHECK((solved.stats[1].flags & STEEL_WORLD_NONFINITE) != 0);
            CHECK((solved.stats[1].flags & STEEL_WORLD_CONVERGED) == 0);
            CHECK(solved.stats[1].sweeps < 20);
            for (size_t k = rows0; k < rows0 + 3; ++k)
                CHECK(solved.impulses[k] == 0.0);
            CHECK(same_bits(&solved.velocities[dofs0], v_hat.velocities.data(), 6));

            // The others: exactly what they get without it.
            for (uint32_t w : {0u, 2u, 3u}) {
                const uint32_t r = w == 0 ? 0 : w - 1;
                CAPTURE(w);
                CHECK(std::memcmp(&solved.stats[w], &reference.stats[r],
                                  sizeof(steel_world_stats)) == 0);
            }
            CHECK(same_bits(solved.impulses.data(), reference.impulses.data(), rows0));
            CHECK(same_bits(&solved.impulses[rows0 + 3], &reference.impulses[rows0],
                            reference.impulses.size() - rows0));
            CHECK(same_bits(solved.velocities.data(), reference.velocities.data(), dofs0));
            CHECK(same_bits(&solved.velocities[dofs0 + 6], &reference.velocities[dofs0],
                            reference.velocities.size() - dofs0));
            for (double value : solved.impulses)
                CHECK(std::isfinite(value));
            for (double value : solved.velocities)
                CHECK(std::isfinite(value));
        }
}
