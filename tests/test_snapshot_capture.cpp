// Capture (steel_batch_set_capture, STEEL_CAPTURE): every solve appends one size-prefixed
// snapshot, and the stream replays solve by solve.
#include "test_snapshot_support.hpp"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>

namespace {

using steel::snapshot::decode;
using steel::snapshot::split_capture;

bool message_has(const char* needle) {
    return std::string(steel_last_error_message()).find(needle) != std::string::npos;
}

std::vector<std::vector<uint8_t>> records_of(const std::string& path) {
    const std::vector<uint8_t> stream = snaptest::read_bytes(path);
    std::vector<std::vector<uint8_t>> records;
    for (const steel::snapshot::Record& record :
         split_capture(stream.data(), stream.size(), "test"))
        records.emplace_back(stream.begin() + int64_t(record.offset),
                             stream.begin() + int64_t(record.offset + record.size));
    return records;
}

uint64_t file_size(const std::string& path) {
    return snaptest::read_bytes(path).size();
}

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
        REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, records[k].data(), records[k].size(),
                                           &replay));
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
    CHECK(steel_batch_set_capture(batch, "/nonexistent-folder/capture.steel") ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("steel_batch_set_capture"));
    CHECK(message_has("/nonexistent-folder/capture.steel"));
    REQUIRE_OK(steel_batch_set_capture(batch, ""));
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("STEEL_CAPTURE turns capture on for created batches, never for loaded ones, and never "
          "fails a create") {
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

TEST_CASE(
    "a capture append that fails part way leaves no torn record, so later records stay readable") {
    const std::string path = snaptest::temporary_path("torn.steel");
    const scenes::RowsBuilder scene = snaptest::varied_scene(5, 2);
    const steel_rows_desc rows = scene.desc();
    const steel_batch first = test::make_batch(scene, {}), second = test::make_batch(scene, {});
    for (const steel_batch batch : {first, second}) {
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
        REQUIRE_OK(steel_batch_set_capture(batch, path.c_str()));
    }
    REQUIRE_OK(steel_batch_solve(first));
    const uint64_t one = file_size(path);

    // A file size limit half way through the next record stands in for a full disk: the write
    // stops part way (EFBIG; the signal it would raise is ignored, as a full disk raises none).
    struct rlimit limit;
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &limit) == 0);
    const struct rlimit unlimited = limit;
    limit.rlim_cur = rlim_t(one + one / 2);
    void (*const handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
    const steel_status solved = steel_batch_solve(first); // reports on stderr, turns capture off
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &unlimited) == 0);
    std::signal(SIGXFSZ, handler);
    CHECK(solved == STEEL_OK);
    CHECK(file_size(path) == one); // the partial record was cut off again

    REQUIRE_OK(steel_batch_solve(first)); // capture is off for this batch now
    CHECK(file_size(path) == one);
    REQUIRE_OK(steel_batch_solve(second)); // another batch's record follows a whole one
    const std::vector<std::vector<uint8_t>> records = records_of(path);
    CHECK(records.size() == 2);
    for (const std::vector<uint8_t>& record : records) {
        steel_batch loaded{};
        REQUIRE_OK(
            steel_batch_load_memory(STEEL_ABI_VERSION, record.data(), record.size(), &loaded));
        REQUIRE_OK(steel_batch_destroy(loaded));
    }
    REQUIRE_OK(steel_batch_destroy(first));
    REQUIRE_OK(steel_batch_destroy(second));
    std::remove(path.c_str());
}

TEST_CASE(
    "steel-replay replays the complete records of a capture cut short, then reports the tail") {
    const std::string path = snaptest::temporary_path("cut_source.steel");
    const scenes::RowsBuilder scene = snaptest::varied_scene(6, 2);
    const steel_rows_desc rows = scene.desc();
    const steel_batch batch = test::make_batch(scene, {});
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_set_capture(batch, path.c_str()));
    for (int k = 0; k < 3; ++k)
        REQUIRE_OK(steel_batch_solve(batch));
    REQUIRE_OK(steel_batch_destroy(batch));
    std::vector<uint8_t> stream = snaptest::read_bytes(path);
    std::remove(path.c_str());
    stream.resize(stream.size() - 100); // a process killed during its third append
    const std::string cut = snaptest::temporary_path("cut.steel");
    snaptest::write_bytes(cut, stream);

    std::string output;
    CHECK(snaptest::run_replay(cut, &output) == 2); // the file is damaged...
    INFO("output: " << output);
    CHECK(output.find("2 complete records and a damaged or truncated tail") != std::string::npos);
    CHECK(output.find("record 0: ") != std::string::npos); // ...but what it holds is replayed
    CHECK(output.find("record 1: ") != std::string::npos);
    CHECK(output.find("every world within") != std::string::npos);
    CHECK(output.find("BEYOND") == std::string::npos);
    CHECK(output.find("capture record 2 at byte") != std::string::npos);
    CHECK(output.find("truncated capture") != std::string::npos);

    CHECK(snaptest::run_replay("--record 1 " + cut, &output) == 2);
    CHECK(output.find("record 1: ") != std::string::npos);
    CHECK(output.find("record 0: ") == std::string::npos);
    CHECK(snaptest::run_replay("--record 2 " + cut, &output) == 2);
    CHECK(output.find("truncated capture") != std::string::npos);
    CHECK(snaptest::run_replay("--info " + cut, &output) == 2);
    CHECK(output.find("record 1 (") != std::string::npos);
    std::remove(cut.c_str());
}

TEST_CASE("capture refuses a FIFO at once, through steel_batch_set_capture and STEEL_CAPTURE") {
    const std::string fifo = snaptest::temporary_path("capture.fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const scenes::RowsBuilder scene = snaptest::varied_scene(7, 1);
    const steel_batch batch = test::make_batch(scene, {});
    const std::pair<steel_status, std::string> set = snaptest::without_waiting(
        fifo, O_RDONLY, [&] { return steel_batch_set_capture(batch, fifo.c_str()); });
    CHECK(set.first == STEEL_ERROR_INVALID_ARGUMENT);
    INFO("message: " << set.second);
    CHECK(set.second.find("not a regular file") != std::string::npos);
    CHECK(set.second.find(fifo) != std::string::npos);
    REQUIRE_OK(steel_batch_destroy(batch));

    REQUIRE(::setenv("STEEL_CAPTURE", fifo.c_str(), 1) == 0);
    steel_batch created{};
    const auto created_status = snaptest::without_waiting(fifo, O_RDONLY, [&] {
        steel_batch_desc desc;
        steel_batch_desc_default(&desc);
        desc.world_count = scene.world_count();
        return steel_batch_create(STEEL_ABI_VERSION, &desc, &created); // reports on stderr
    });
    REQUIRE(::unsetenv("STEEL_CAPTURE") == 0);
    CHECK(created_status.first == STEEL_OK);
    const steel_rows_desc rows = scene.desc();
    REQUIRE_OK(steel_batch_upload_rows(created, &rows));
    const auto solved =
        snaptest::without_waiting(fifo, O_RDONLY, [&] { return steel_batch_solve(created); });
    CHECK(solved.first == STEEL_OK); // without capture
    REQUIRE_OK(steel_batch_destroy(created));
    std::remove(fifo.c_str());
}
