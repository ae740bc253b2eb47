// Results are bit-identical for any thread count: a world's result depends only on its data.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cstring>

namespace {

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

} // namespace

TEST_CASE("1, 2 and 8 threads give bit-identical impulses, velocities and statistics") {
    std::mt19937_64 rng(77);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 1000; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1 + uint32_t(rng() % 6);
        spec.row_count = 1 + uint32_t(rng() % 40);
        scenes::add_random_world(builder, rng, spec);
    }
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        test::SolveSetup setup;
        setup.precision = precision;
        setup.iterations = 30;
        setup.tolerance = 1e-6; // worlds stop at different sweeps: more ways to go wrong
        setup.threads = 1;
        const test::Solved one = test::solve(builder, setup);
        for (uint32_t threads : {2u, 8u}) {
            setup.threads = threads;
            const test::Solved many = test::solve(builder, setup);
            CAPTURE(threads);
            CHECK(same_bits(one.impulses, many.impulses));
            CHECK(same_bits(one.velocities, many.velocities));
            REQUIRE(one.stats.size() == many.stats.size());
            CHECK(std::memcmp(one.stats.data(), many.stats.data(),
                              one.stats.size() * sizeof(steel_world_stats)) == 0);
        }
    }
}

TEST_CASE("solving the same batch twice gives bit-identical results") {
    std::mt19937_64 rng(78);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 50; ++w)
        scenes::add_random_world(builder, rng, scenes::RandomWorldSpec{});
    test::SolveSetup setup;
    setup.threads = 2;
    const steel_batch batch = test::make_batch(builder, setup);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved first = test::read_all(batch);
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved second = test::read_all(batch);
    CHECK(same_bits(first.impulses, second.impulses));
    CHECK(same_bits(first.velocities, second.velocities));
    REQUIRE_OK(steel_batch_destroy(batch));
}
