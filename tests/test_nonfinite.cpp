// A world whose numbers overflow is flagged and isolated (SPEC 9): its impulses are reset to
// zero and its velocity to v-hat, and its neighbours get exactly what they get alone.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cmath>
#include <cstring>

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
                CHECK(std::memcmp(&solved.impulses[row0], reference.impulses.data(), 4 * sizeof(double)) == 0);
                CHECK(std::memcmp(&solved.velocities[dof0], reference.velocities.data(), 4 * sizeof(double)) == 0);
            }
            for (double value : solved.impulses) CHECK(std::isfinite(value));
            for (double value : solved.velocities) CHECK(std::isfinite(value));
        }
}
