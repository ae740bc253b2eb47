// Early exit at the residual tolerance, the residual's definition, and warm starting.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cmath>

TEST_CASE("a single bilateral row's first residual is its velocity error |J.v-hat + b|") {
    scenes::RowsBuilder builder;
    builder.begin_world({2.0, -1.0});
    scenes::Row row;
    row.blocks[0] = {0, {1.0, 3.0}, {0.5, 1.5}};
    row.bias = 0.25;
    builder.add_row(row);
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        test::SolveSetup setup;
        setup.path = path;
        setup.iterations = 3;
        const test::Solved solved = test::solve(builder, setup);
        CAPTURE(path);
        test::check_path_taken(solved, path);
        CHECK(solved.stats[0].first_residual == doctest::Approx(std::fabs(2.0 - 3.0 + 0.25)));
        CHECK(solved.stats[0].residual <= 1e-15); // one update solves a lone row exactly
    }
}

TEST_CASE("the solve stops once the residual reaches the tolerance, and says so") {
    scenes::StackSpec spec;
    spec.height = 12;
    scenes::RowsBuilder builder;
    scenes::add_stack_world(builder, spec);
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        test::SolveSetup setup;
        setup.path = path;
        setup.iterations = 10000;
        setup.tolerance = 1e-8;
        const test::Solved solved = test::solve(builder, setup);
        CAPTURE(path);
        test::check_path_taken(solved, path);
        const steel_world_stats& stats = solved.stats[0];
        CHECK((stats.flags & STEEL_WORLD_CONVERGED) != 0);
        CHECK(stats.residual <= 1e-8);
        CHECK(stats.sweeps > 1);
        CHECK(stats.sweeps < 10000);
        // One sweep fewer must not have been enough.
        setup.iterations = stats.sweeps - 1;
        setup.tolerance = 0;
        const test::Solved shorter = test::solve(builder, setup);
        test::check_path_taken(shorter, path);
        CHECK(shorter.stats[0].residual > 1e-8);
        CHECK((shorter.stats[0].flags & STEEL_WORLD_CONVERGED) == 0);
    }
}

TEST_CASE("warm starting from the exact answer needs no correction; warm_start 0 ignores it") {
    scenes::StackSpec spec;
    spec.height = 8;
    scenes::RowsBuilder builder;
    scenes::add_stack_world(builder, spec);
    const std::vector<double> exact = scenes::stack_exact_impulses(spec);
    builder.initial_impulse = exact;
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        test::SolveSetup setup;
        setup.path = path;
        setup.iterations = 1;
        const test::Solved warm = test::solve(builder, setup);
        CAPTURE(path);
        test::check_path_taken(warm, path);
        CHECK(warm.stats[0].first_residual < 1e-12);
        for (size_t k = 0; k < exact.size(); ++k)
            CHECK(warm.impulses[k] == doctest::Approx(exact[k]).epsilon(1e-12));

        setup.warm_start = 0;
        const test::Solved cold = test::solve(builder, setup);
        test::check_path_taken(cold, path);
        CHECK(cold.stats[0].first_residual > 0.01);
        CHECK(std::fabs(cold.impulses[0] - exact[0]) > 0.01);
    }
}
