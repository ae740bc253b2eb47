// Residual history (issue: opt-in, per world, one value per sweep): entry k equals the residual
// a solve stopped after k + 1 sweeps reports.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <string>

TEST_CASE("the residual history holds every sweep's residual, oldest first") {
    std::mt19937_64 rng(11);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 6; ++w) scenes::add_random_world(builder, rng, scenes::RandomWorldSpec{});
    scenes::StackSpec spec;
    spec.height = 6;
    scenes::add_stack_world(builder, spec);

    test::SolveSetup setup;
    setup.iterations = 25;
    setup.tolerance = 1e-9;
    const steel_batch batch = test::make_batch(builder, setup);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    steel_solve_options options = test::options_for(setup);
    options.record_residual_history = 1;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
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
            const test::Solved shorter = test::solve(builder, setup);
            CHECK(history[k] == shorter.stats[w].residual);
        }
    }
    double value = 0;
    CHECK(steel_batch_read_residual_history(batch, 99, &value, 1, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(steel_batch_read_residual_history(batch, 0, &value, 0, nullptr) == STEEL_ERROR_BUFFER_TOO_SMALL);
    CHECK(std::string(steel_last_error_message())
              .find("steel_batch_read_residual_history: capacity 0 is smaller than the ") == 0);
    CHECK(std::string(steel_last_error_message()).find(" sweeps of world 0") != std::string::npos);

    options.record_residual_history = 0;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(steel_batch_read_residual_history(batch, 0, &value, 1, nullptr) == STEEL_ERROR_NO_DATA);
    CHECK(std::string(steel_last_error_message()).find("record_residual_history = 0") != std::string::npos);
    REQUIRE_OK(steel_batch_destroy(batch));
}
