// The resting 1D stack: contact k carries the weight of everything above it for one step.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cmath>

TEST_CASE("both paths converge to the stack's closed-form impulses for heights 1 to 20") {
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        for (uint32_t height = 1; height <= 20; ++height) {
            scenes::StackSpec spec;
            spec.height = height;
            spec.bottom_mass = 1.0;
            spec.top_mass = 3.0;
            scenes::RowsBuilder builder;
            scenes::add_stack_world(builder, spec);

            test::SolveSetup setup;
            setup.path = path;
            setup.iterations = 20000;
            setup.tolerance = 1e-14;
            const test::Solved solved = test::solve(builder, setup);

            CAPTURE(path);
            CAPTURE(height);
            CHECK(solved.stats[0].path == path);
            CHECK((solved.stats[0].flags & STEEL_WORLD_CONVERGED) != 0);
            const std::vector<double> exact = scenes::stack_exact_impulses(spec);
            for (uint32_t k = 0; k < height; ++k)
                CHECK(solved.impulses[k] == doctest::Approx(exact[k]).epsilon(1e-9));
            // At rest: every box's velocity is zero.
            CHECK(test::max_abs(solved.velocities) < 1e-9);
        }
    }
}

TEST_CASE("float32 stacks converge to the closed form within float32 rounding") {
    scenes::StackSpec spec;
    spec.height = 10;
    scenes::RowsBuilder builder;
    scenes::add_stack_world(builder, spec);
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        test::SolveSetup setup;
        setup.precision = STEEL_PRECISION_FLOAT32;
        setup.path = path;
        setup.iterations = 3000;
        const test::Solved solved = test::solve(builder, setup);
        const std::vector<double> exact = scenes::stack_exact_impulses(spec);
        for (uint32_t k = 0; k < spec.height; ++k)
            CHECK(solved.impulses[k] == doctest::Approx(exact[k]).epsilon(1e-5));
    }
}
