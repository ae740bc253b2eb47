// Capture (steel_batch_set_capture, STEEL_CAPTURE): every solve appends one size-prefixed
// snapshot, and the stream replays solve by solve.
#include "test_snapshot_support.hpp"

#include <cstdlib>
#include <string>

namespace {

using steel::snapshot::decode;
using steel::snapshot::split_capture;

bool message_has(const char* needle) { return std::string(steel_last_error_message()).find(needle) != std::string::npos; }

std::vector<std::vector<uint8_t>> records_of(const std::string& path) {
    const std::vector<uint8_t> stream = snaptest::read_bytes(path);
    std::vector<std::vector<uint8_t>> records;
    for (const steel::snapshot::Record& record : split_capture(stream.data(), stream.size(), "test"))
        records.emplace_back(stream.begin() + int64_t(record.offset),
                             stream.begin() + int64_t(record.offset + record.size));
    return records;
}

uint64_t file_size(const std::string& path) { return snaptest::read_bytes(path).size(); }

} // namespace

TEST_CASE("a capture of several solves in a row replays solve by solve") {
    const std::string path = snaptest::temporary_path("capture.steel");
    const scenes::RowsBuilder first_rows = snaptest::varied_scene(31, 3);
    const scenes::RowsBuilder second_rows = snaptest::varied_scene(32, 3);
    REQUIRE(first_rows.world_count() == second_rows.world_count());
    const steel_batch batch = test::make_batch(first_rows, {});
    REQUIRE_OK(steel_batch_set_capture(batch, path.c_str()));

    // Solve 1: the first rows; solve 2: other options; solve 3: other rows, warm started.
    std::vector<snaptest::Outputs> live;
    steel_rows_desc rows = first_rows.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));
    live.push_back(snaptest::read_outputs(batch));
    const steel_solve_options options = snaptest::unusual_options(STEEL_PATH_DENSE);
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    live.push_back(snaptest::read_outputs(batch));
    rows = second_rows.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));
    live.push_back(snaptest::read_outputs(batch));

    // Stopping leaves the file as it is.
    const uint64_t size = file_size(path);
    REQUIRE_OK(steel_batch_set_capture(batch, nullptr));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(file_size(path) == size);

    const std::vector<std::vector<uint8_t>> records = records_of(path);
    REQUIRE(records.size() == 3);
    for (size_t k = 0; k < records.size(); ++k) {
        CAPTURE(k);
        steel_batch replay{};
        REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, records[k].data(), records[k].size(), &replay));
        CHECK(snaptest::same_outputs(snaptest::read_outputs(replay), live[k])); // as recorded
        REQUIRE_OK(steel_batch_solve(replay));
        CHECK(snaptest::same_outputs(snaptest::read_outputs(replay), live[k])); // and solved again
        REQUIRE_OK(steel_batch_destroy(replay));
    }
    REQUIRE_OK(steel_batch_destroy(batch));
    std::remove(path.c_str());
}

TEST_CASE("capture appends to an existing file and refuses a path it cannot open") {
    const std::string path = snaptest::temporary_path("append.steel");
    const scenes::RowsBuilder scene = snaptest::varied_scene(1, 1);
    for (int run = 0; run < 2; ++run) {
        const steel_batch batch = test::make_batch(scene, {});
        REQUIRE_OK(steel_batch_set_capture(batch, path.c_str()));
        const steel_rows_desc rows = scene.desc();
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
        REQUIRE_OK(steel_batch_solve(batch));
        REQUIRE_OK(steel_batch_destroy(batch));
    }
    CHECK(records_of(path).size() == 2);
    std::remove(path.c_str());

    const steel_batch batch = test::make_batch(scene, {});
    CHECK(steel_batch_set_capture(batch, "/nonexistent-folder/capture.steel") == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("steel_batch_set_capture"));
    CHECK(message_has("/nonexistent-folder/capture.steel"));
    REQUIRE_OK(steel_batch_set_capture(batch, ""));
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("STEEL_CAPTURE turns capture on for created batches, never for loaded ones, and never fails a create") {
    const std::string path = snaptest::temporary_path("environment.steel");
    const scenes::RowsBuilder scene = snaptest::varied_scene(2, 1);
    REQUIRE(::setenv("STEEL_CAPTURE", path.c_str(), 1) == 0);
    const steel_batch batch = test::make_batch(scene, {});
    const steel_rows_desc rows = scene.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));
    REQUIRE_OK(steel_batch_solve(batch));
    const std::vector<uint8_t> saved = snaptest::save_memory(batch);
    steel_batch loaded{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, saved.data(), saved.size(), &loaded));
    REQUIRE_OK(steel_batch_solve(loaded)); // a replay does not record itself
    REQUIRE_OK(steel_batch_destroy(loaded));
    REQUIRE_OK(steel_batch_destroy(batch));
    CHECK(records_of(path).size() == 2);
    std::remove(path.c_str());

    REQUIRE(::setenv("STEEL_CAPTURE", "/nonexistent-folder/capture.steel", 1) == 0);
    const steel_batch unrecorded = test::make_batch(scene, {}); // reports on stderr, still creates
    REQUIRE_OK(steel_batch_upload_rows(unrecorded, &rows));
    REQUIRE_OK(steel_batch_solve(unrecorded));
    REQUIRE_OK(steel_batch_destroy(unrecorded));
    REQUIRE(::unsetenv("STEEL_CAPTURE") == 0);
}
