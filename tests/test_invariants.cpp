// v = v-hat + Y lambda holds after every solve (SPEC 2), on both paths and in both precisions.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <algorithm>

TEST_CASE("velocity equals v-hat plus Y lambda after every solve") {
    std::mt19937_64 rng(2024);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 40; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1 + uint32_t(rng() % 4);
        spec.row_count = 1 + uint32_t(rng() % 30);
        scenes::add_random_world(builder, rng, spec);
    }
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE})
            for (uint32_t sweeps : {1u, 7u, 60u}) {
                test::SolveSetup setup;
                setup.precision = precision;
                setup.path = path;
                setup.iterations = sweeps;
                const test::Solved solved = test::solve(builder, setup);
                const std::vector<double> expected = test::velocity_from(builder, solved.impulses);
                const double unit = precision == STEEL_PRECISION_FLOAT64 ? 1e-12 : 2e-5;
                const double scale = std::max(1.0, test::max_abs(expected));
                CAPTURE(precision);
                CAPTURE(path);
                CAPTURE(sweeps);
                CHECK(test::max_abs_diff(solved.velocities, expected) <= unit * scale);
            }
}
