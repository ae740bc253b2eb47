// Residual history (issue: opt-in, per world, one value per sweep): entry k equals the residual
// a solve stopped after k + 1 sweeps reports.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cstring>
#include <string>

TEST_CASE("the residual history holds every sweep's residual, oldest first") {
    std::mt19937_64 rng(11);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 6; ++w)
        scenes::add_random_world(builder, rng, scenes::RandomWorldSpec{});
    scenes::StackSpec spec;
    spec.height = 6;
    scenes::add_stack_world(builder, spec);

    test::SolveSetup setup;
    setup.iterations = 25;
    setup.tolerance = 1e-9;
    steel_solve_options options = test::options_for(setup);
    options.record_residual_history = 1;
    const steel_batch batch = test::solved_batch(builder, setup, options);
    const test::Solved full = test::read_all(batch);

    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        uint32_t count = 0;
        REQUIRE_OK(steel_batch_read_residual_history(batch, w, nullptr, 0, &count));
        CHECK(count == full.stats[w].sweeps);
        std::vector<double> history(count);
        REQUIRE_OK(steel_batch_read_residual_history(batch, w, history.data(), count, &count));
        CHECK(history.front() == full.stats[w].first_residual);
        CHECK(history.back() == full.stats[w].residual);
        for (uint32_t k = 0; k < count; k += 4) {
            setup.iterations = k + 1;
            setup.tolerance = 0;
            // AUTO weighs the sweeps a solve will run, so a shorter solve may take the other path,
            // which agrees only to rounding: hold it to the path the full solve took.
            setup.path = full.stats[w].path;
            const test::Solved shorter = test::solve(builder, setup);
            CHECK(history[k] == shorter.stats[w].residual);
        }
    }
    double value = 0;
    CHECK(steel_batch_read_residual_history(batch, 99, &value, 1, nullptr) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(steel_batch_read_residual_history(batch, 0, &value, 0, nullptr) ==
          STEEL_ERROR_BUFFER_TOO_SMALL);
    CHECK(std::string(steel_last_error_message())
              .find("steel_batch_read_residual_history: capacity 0 is smaller than the ") == 0);
    CHECK(std::string(steel_last_error_message()).find(" sweeps of world 0") != std::string::npos);

    options.record_residual_history = 0;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(steel_batch_read_residual_history(batch, 0, &value, 1, nullptr) == STEEL_ERROR_NO_DATA);
    CHECK(std::string(steel_last_error_message()).find("record_residual_history = 0") !=
          std::string::npos);
    REQUIRE_OK(steel_batch_destroy(batch));
}

// Under the sanitizers an allocation the address space cannot hold ends the process (their
// allocators report it instead of throwing), so only the plain builds run this.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST_CASE("a solve refused for want of history memory leaves the last history readable") {
    // 65,536 one-row worlds: a history of 2^32 - 1 sweeps each is 2.25e15 bytes, more than a
    // process's 47-bit address space, so the allocation fails whatever the overcommit policy.
    scenes::RowsBuilder builder;
    scenes::StackSpec spec;
    spec.height = 1;
    for (uint32_t w = 0; w < 65536; ++w)
        scenes::add_stack_world(builder, spec);
    test::SolveSetup setup;
    setup.iterations = 5;
    steel_solve_options options = test::options_for(setup);
    options.record_residual_history = 1;
    const steel_batch batch = test::solved_batch(builder, setup, options);
    const test::Solved before = test::read_all(batch);
    const uint32_t last = builder.world_count() - 1;
    double history_before[5] = {};
    uint32_t count_before = 0;
    REQUIRE_OK(steel_batch_read_residual_history(batch, last, history_before, 5, &count_before));

    options.iterations = UINT32_MAX;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    CHECK(steel_batch_solve(batch) == STEEL_ERROR_OUT_OF_MEMORY);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_solve: out of memory; nothing was changed");

    double history_after[5] = {};
    uint32_t count_after = 0;
    REQUIRE_OK(steel_batch_read_residual_history(batch, last, history_after, 5, &count_after));
    CHECK(count_after == count_before);
    for (uint32_t k = 0; k < count_before; ++k)
        CHECK(history_after[k] == history_before[k]);
    const test::Solved after = test::read_all(batch);
    CHECK(after.impulses == before.impulses);
    CHECK(after.velocities == before.velocities);
    // The stride a snapshot records still matches the history it holds. A snapshot holds results
    // only next to the options that solved them: set those again first.
    options.iterations = setup.iterations;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    uint64_t bytes = 0;
    REQUIRE_OK(steel_batch_save_memory(batch, nullptr, 0, &bytes));
    std::vector<unsigned char> snapshot(bytes);
    REQUIRE_OK(steel_batch_save_memory(batch, snapshot.data(), bytes, &bytes));
    steel_batch loaded{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, snapshot.data(), bytes, &loaded));
    double history_loaded[5] = {};
    uint32_t count_loaded = 0;
    REQUIRE_OK(steel_batch_read_residual_history(loaded, last, history_loaded, 5, &count_loaded));
    REQUIRE(count_loaded == count_before);
    CHECK(history_before[0] > 0); // a real residual, not the zeros the arrays start as
    CHECK(count_loaded == setup.iterations);
    CHECK(std::memcmp(history_loaded, history_before, count_before * sizeof(double)) == 0);
    REQUIRE_OK(steel_batch_destroy(loaded));
    REQUIRE_OK(steel_batch_destroy(batch));
}
#endif
