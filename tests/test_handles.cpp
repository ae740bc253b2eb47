// Handles, statuses and output buffers: null, destroyed and made-up handles are errors in every
// build; reads report sizes and never write past a capacity.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <string>

namespace {

bool message_has(const char* needle) {
    return std::string(steel_last_error_message()).find(needle) != std::string::npos;
}

// Every batch function, called with `batch`, must answer INVALID_HANDLE.
void expect_every_call_rejects(steel_batch batch) {
    steel_batch_desc desc;
    steel_solve_options options;
    steel_solve_options_default(&options);
    steel_rows_desc rows;
    steel_rows_desc_default(&rows);
    double value = 0;
    uint64_t count = 0;
    uint32_t worlds = 0;
    steel_world_stats stats;
    CHECK(steel_batch_get_desc(batch, &desc) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_upload_rows(batch, &rows) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_set_options(batch, &options) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_get_options(batch, &options) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_solve(batch) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_read_impulses(batch, &value, 1, &count) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_read_velocities(batch, &value, 1, &count) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_read_world_stats(batch, sizeof(stats), &stats, 1, &worlds) ==
          STEEL_ERROR_INVALID_HANDLE);
    CHECK(message_has("steel_batch_read_world_stats"));
}

scenes::RowsBuilder small_stack() {
    scenes::RowsBuilder builder;
    scenes::StackSpec spec;
    spec.height = 3;
    scenes::add_stack_world(builder, spec);
    return builder;
}

} // namespace

TEST_CASE("the null handle is rejected by every call, and destroying it is a no-op") {
    expect_every_call_rejects(steel_batch{0});
    CHECK(message_has("null"));
    CHECK(steel_batch_destroy(steel_batch{0}) == STEEL_OK);
}

TEST_CASE("a destroyed handle is rejected by every call, including a second destroy") {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    CHECK(batch.id != 0);
    REQUIRE_OK(steel_batch_destroy(batch));
    expect_every_call_rejects(batch);
    CHECK(steel_batch_destroy(batch) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(message_has("not a live batch"));

    // The slot is reused by the next batch, under a new generation: the old id stays dead.
    steel_batch next{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &next));
    CHECK(next.id != batch.id);
    expect_every_call_rejects(batch);
    REQUIRE_OK(steel_batch_destroy(next));
}

TEST_CASE("made-up handles are rejected") {
    expect_every_call_rejects(steel_batch{0x12345678deadbeefull});
    expect_every_call_rejects(steel_batch{1});
}

TEST_CASE("create checks its arguments") {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{77};
    CHECK(steel_batch_create(STEEL_ABI_VERSION + 1, &desc, &batch) == STEEL_ERROR_ABI_MISMATCH);
    CHECK(batch.id == 0);
    CHECK(message_has("ABI version 2"));
    CHECK(steel_batch_create(STEEL_ABI_VERSION, nullptr, &batch) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(steel_batch_create(STEEL_ABI_VERSION, &desc, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    steel_batch_desc bad = desc;
    bad.world_count = 0;
    CHECK(steel_batch_create(STEEL_ABI_VERSION, &bad, &batch) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("world_count is 0"));
    bad = desc;
    bad.precision = 3;
    CHECK(steel_batch_create(STEEL_ABI_VERSION, &bad, &batch) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("precision = 3"));
    bad = desc;
    bad.backend = 9;
    CHECK(steel_batch_create(STEEL_ABI_VERSION, &bad, &batch) == STEEL_ERROR_INVALID_ARGUMENT);
    bad = desc;
    bad.backend = STEEL_BACKEND_CUDA;
    const steel_status cuda = steel_batch_create(STEEL_ABI_VERSION, &bad, &batch);
    if (cuda == STEEL_OK) { // a device is here (tests/test_cuda_no_device.cpp has the details)
        REQUIRE_OK(steel_batch_destroy(batch));
    } else {
        CHECK(cuda == (steel_build_features() & STEEL_FEATURE_CUDA ? STEEL_ERROR_NO_DEVICE
                                                                   : STEEL_ERROR_UNSUPPORTED));
        CHECK(message_has("CUDA"));
    }
    bad = desc;
    bad.thread_count = 100000;
    CHECK(steel_batch_create(STEEL_ABI_VERSION, &bad, &batch) == STEEL_ERROR_INVALID_ARGUMENT);
    bad = desc;
    bad.struct_size = 4;
    CHECK(steel_batch_create(STEEL_ABI_VERSION, &bad, &batch) == STEEL_ERROR_STRUCT_VERSION);
}

TEST_CASE("thread_count 0 resolves to the hardware's core count") {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.thread_count = 0;
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_batch_desc got;
    REQUIRE_OK(steel_batch_get_desc(batch, &got));
    CHECK(got.thread_count >= 1);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("solve and reads before data exist answer NO_DATA") {
    const scenes::RowsBuilder builder = small_stack();
    const steel_batch batch = test::make_batch(builder, test::SolveSetup{});
    double value = 0;
    uint64_t count = 0;
    CHECK(steel_batch_solve(batch) == STEEL_ERROR_NO_DATA);
    CHECK(message_has("no rows have been uploaded"));
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    CHECK(steel_batch_read_impulses(batch, &value, 1, &count) == STEEL_ERROR_NO_DATA);
    CHECK(message_has("not been solved"));
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("reads report the size, refuse a small buffer, and write nothing past it") {
    const scenes::RowsBuilder builder = small_stack();
    const steel_batch batch = test::make_batch(builder, test::SolveSetup{});
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));

    uint64_t count = 0;
    REQUIRE_OK(steel_batch_read_impulses(batch, nullptr, 0, &count));
    CHECK(count == 3);
    double buffer[3] = {-7, -7, -7};
    CHECK(steel_batch_read_impulses(batch, buffer, 2, &count) == STEEL_ERROR_BUFFER_TOO_SMALL);
    CHECK(count == 3);
    CHECK(buffer[0] == -7);
    CHECK(buffer[1] == -7);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_read_impulses: capacity 2 is smaller than the 3 values to write");
    CHECK(steel_batch_read_velocities(batch, nullptr, 0, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_read_velocities: out and out_count are both NULL");
    REQUIRE_OK(steel_batch_read_impulses(batch, buffer, 3, nullptr));
    CHECK(buffer[0] > 0);
    CHECK(std::string(steel_last_error_message()).empty()); // success clears the message

    steel_world_stats stats[2];
    uint32_t worlds = 0;
    CHECK(steel_batch_read_world_stats(batch, 32, stats, 2, &worlds) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats, 0, &worlds) ==
          STEEL_ERROR_BUFFER_TOO_SMALL);
    CHECK(worlds == 1);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_read_world_stats: capacity 0 is smaller than the 1 worlds");
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a newer caller's bigger stats element gets our fields and zeros after them") {
    const scenes::RowsBuilder builder = small_stack();
    const steel_batch batch = test::make_batch(builder, test::SolveSetup{});
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));
    struct NewerStats {
        steel_world_stats known;
        double future[2];
    } newer[1];
    newer[0].future[0] = newer[0].future[1] = 99.0;
    REQUIRE_OK(
        steel_batch_read_world_stats(batch, sizeof(NewerStats), &newer[0].known, 1, nullptr));
    CHECK(newer[0].known.struct_size == sizeof(steel_world_stats));
    CHECK(newer[0].known.sweeps == 50);
    CHECK(newer[0].future[0] == 0.0);
    CHECK(newer[0].future[1] == 0.0);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("status strings and versions") {
    CHECK(std::string(steel_status_string(STEEL_OK)) == "ok");
    CHECK(std::string(steel_status_string(STEEL_ERROR_INVALID_HANDLE)) == "invalid handle");
    CHECK(std::string(steel_status_string(-1000)) == "unknown status");
    CHECK(steel_abi_version() == STEEL_ABI_VERSION);
    CHECK((steel_build_features() & STEEL_FEATURE_FLOAT64) != 0);
    CHECK(std::string(steel_version()).find('.') != std::string::npos);
}
