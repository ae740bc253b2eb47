// Bilateral pre-elimination (SPEC 5): the same converged answer as sweeping the bilateral rows,
// in far fewer sweeps; a redundant bilateral set still solves, and cfm shows in its answer.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cmath>

namespace {

test::Solved solve_with(const scenes::RowsBuilder& builder, bool preeliminate, uint32_t iterations,
                        double tolerance, double cfm = 0) {
    test::SolveSetup setup;
    setup.iterations = iterations;
    setup.tolerance = tolerance;
    setup.cfm = cfm;
    const steel_batch batch = test::make_batch(builder, setup);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    steel_solve_options options = test::options_for(setup);
    options.enable_bilateral_preelimination = preeliminate ? 1 : 0;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    test::Solved solved = test::read_all(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    return solved;
}

} // namespace

TEST_CASE("pre-elimination converges to the same impulses as sweeping bilateral rows, in far fewer "
          "sweeps") {
    std::mt19937_64 rng(8);
    scenes::RowsBuilder builder;
    for (uint32_t links : {3u, 4u, 6u, 8u, 12u})
        scenes::add_loop_world(builder, rng, links);
    const test::Solved swept = solve_with(builder, false, 2000000, 1e-13);
    const test::Solved eliminated = solve_with(builder, true, 2000000, 1e-13);
    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        CAPTURE(w);
        CHECK((swept.stats[w].flags & STEEL_WORLD_CONVERGED) != 0);
        CHECK((eliminated.stats[w].flags & STEEL_WORLD_CONVERGED) != 0);
        MESSAGE("world " << w << ": " << swept.stats[w].sweeps << " sweeps swept, "
                         << eliminated.stats[w].sweeps << " with pre-elimination");
        CHECK(eliminated.stats[w].sweeps * 3 < swept.stats[w].sweeps);
    }
    const double scale = std::max(1.0, test::max_abs(swept.impulses));
    CHECK(test::max_abs_diff(swept.impulses, eliminated.impulses) <= 1e-7 * scale);
    // v = v-hat + Y lambda still holds for the recovered impulses.
    const std::vector<double> expected = test::velocity_from(builder, eliminated.impulses);
    CHECK(test::max_abs_diff(eliminated.velocities, expected) <=
          1e-12 * std::max(1.0, test::max_abs(expected)));
}

TEST_CASE("pre-elimination works on both paths and with momentum") {
    std::mt19937_64 rng(9);
    scenes::RowsBuilder builder;
    scenes::add_loop_world(builder, rng, 5);
    const test::Solved reference = solve_with(builder, true, 100000, 1e-13);
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE})
        for (uint32_t momentum : {0u, 1u}) {
            test::SolveSetup setup;
            setup.iterations = 100000;
            setup.tolerance = 1e-13;
            setup.path = path;
            const steel_batch batch = test::make_batch(builder, setup);
            const steel_rows_desc rows = builder.desc();
            REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
            steel_solve_options options = test::options_for(setup);
            options.enable_bilateral_preelimination = 1;
            options.nesterov_momentum = momentum;
            REQUIRE_OK(steel_batch_set_options(batch, &options));
            REQUIRE_OK(steel_batch_solve(batch));
            const test::Solved solved = test::read_all(batch);
            REQUIRE_OK(steel_batch_destroy(batch));
            CHECK(test::max_abs_diff(solved.impulses, reference.impulses) <=
                  1e-9 * test::max_abs(reference.impulses));
        }
}

TEST_CASE("a redundant bilateral set solves without NaN, and cfm floors its elimination") {
    // Two copies of one bilateral row plus a contact: S = [[a a] [a a]] + r I is singular at r = 0.
    scenes::RowsBuilder builder;
    builder.begin_world({0.3, -2.0});
    scenes::Row bilateral;
    bilateral.blocks[0] = {0, {1.0, 0.5}, {0.5, 0.125}};
    bilateral.bias = 0.2;
    builder.add_row(bilateral);
    builder.add_row(bilateral);
    scenes::Row contact;
    contact.kind = STEEL_ROW_CONTACT_NORMAL;
    contact.blocks[0] = {1, {1.0}, {0.25}};
    builder.add_row(contact);

    for (double cfm : {0.0, 0.01, 0.1}) {
        const test::Solved solved = solve_with(builder, true, 500, 1e-14, cfm);
        CAPTURE(cfm);
        CHECK(solved.stats[0].flags == STEEL_WORLD_CONVERGED);
        for (double value : solved.impulses)
            CHECK(std::isfinite(value));
        // The redundant pair shares its load equally.
        CHECK(solved.impulses[0] == doctest::Approx(solved.impulses[1]).epsilon(1e-9));
        if (cfm > 0) {
            // With r = cfm (above the floor) the pair solves J v + b + cfm lambda = 0: the
            // constraint is left violated by exactly -cfm lambda, which a swept bilateral row
            // (cfm does not move its fixed point) would not show.
            const std::vector<double> v = solved.velocities;
            const double constraint_velocity = 1.0 * v[0] + 0.5 * v[1] + 0.2;
            CHECK(std::fabs(constraint_velocity + cfm * solved.impulses[0]) < 1e-12);
            CHECK(constraint_velocity == doctest::Approx(-cfm * solved.impulses[0]));
            CHECK(std::fabs(constraint_velocity) > 1e-6); // cfm is observable
        } else {
            const double constraint_velocity =
                1.0 * solved.velocities[0] + 0.5 * solved.velocities[1] + 0.2;
            CHECK(std::fabs(constraint_velocity) < 1e-8);
        }
    }
}

TEST_CASE("a regularized bilateral row stays soft under pre-elimination, as the sweep solves it") {
    // One DOF of unit mass, one bilateral row J = Y = 1, b = -1, c = 1 (a drive row's spring):
    // J v + b + c lambda = 0 with v = lambda gives lambda = 1 / (1 + c) = 0.5, whatever cfm is.
    scenes::RowsBuilder single;
    single.begin_world({0.0});
    scenes::Row soft;
    soft.blocks[0] = {0, {1.0}, {1.0}};
    soft.bias = -1.0;
    soft.regularization = 1.0;
    single.add_row(soft);
    for (double cfm : {0.0, 0.01}) {
        CAPTURE(cfm);
        const test::Solved eliminated = solve_with(single, true, 10, 0, cfm);
        CHECK(eliminated.impulses[0] == doctest::Approx(0.5).epsilon(1e-14));
        CHECK(eliminated.velocities[0] == doctest::Approx(0.5).epsilon(1e-14));
    }

    // Loops whose bilateral rows are soft: the same converged answer swept or eliminated.
    std::mt19937_64 rng(12);
    scenes::RowsBuilder loops;
    for (uint32_t links : {3u, 5u, 8u})
        scenes::add_loop_world(loops, rng, links);
    uint32_t soft_rows = 0;
    for (size_t i = 0; i < loops.kind.size(); ++i)
        if (loops.kind[i] == STEEL_ROW_BILATERAL) {
            loops.regularization[i] = 0.05 * double(1 + i % 3);
            ++soft_rows;
        }
    REQUIRE(soft_rows > 0);
    const test::Solved swept = solve_with(loops, false, 2000000, 1e-13);
    const test::Solved eliminated = solve_with(loops, true, 2000000, 1e-13);
    for (uint32_t w = 0; w < loops.world_count(); ++w) {
        CAPTURE(w);
        CHECK((swept.stats[w].flags & STEEL_WORLD_CONVERGED) != 0);
        CHECK((eliminated.stats[w].flags & STEEL_WORLD_CONVERGED) != 0);
    }
    const double scale = std::max(1.0, test::max_abs(swept.impulses));
    CHECK(test::max_abs_diff(swept.impulses, eliminated.impulses) <= 1e-7 * scale);
}

TEST_CASE(
    "an independent hard bilateral row is softened by the floor relative to its own J.Y only") {
    // Two independent bilateral rows, one with J.Y = 1 (v-hat 1, so lambda = -1 exactly) beside
    // one with a far larger J.Y (a light DOF beside an ordinary one). The floor that lets a
    // redundant set factor is relative to each row's own diagonal, so the ordinary row's answer
    // is off by the floor's ratio (1e-5 in float32, 1e-10 in float64) whatever its neighbour; a
    // floor relative to the world's largest diagonal was off by 9 % here in float32.
    for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64}) {
        for (double heavy : {1.0, 1e3, 1e4, 1e6}) {
            CAPTURE(precision);
            CAPTURE(heavy);
            scenes::RowsBuilder builder;
            builder.begin_world({0.0, 1.0});
            scenes::Row light;
            light.blocks[0] = {0, {1.0}, {heavy}};
            builder.add_row(light);
            scenes::Row ordinary;
            ordinary.blocks[0] = {1, {1.0}, {1.0}};
            builder.add_row(ordinary);
            test::SolveSetup setup;
            setup.precision = precision;
            setup.iterations = 5;
            steel_solve_options options = test::options_for(setup);
            options.enable_bilateral_preelimination = 1;
            const test::Solved solved = test::solve(builder, setup, options);
            const double floor = precision == STEEL_PRECISION_FLOAT32 ? 1e-5 : 1e-10;
            CHECK(std::fabs(solved.impulses[1] + 1.0) <= 1.5 * floor);
            CHECK(std::fabs(solved.velocities[1]) <= 1.5 * floor);
        }
    }
}
