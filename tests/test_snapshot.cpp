// Snapshots round-trip (DESIGN "Snapshots"): a loaded batch solves to exactly the numbers of the
// original, reads the recorded outputs until then, and saves to the same decoded content again.
#include "test_snapshot_support.hpp"

#include "batch.hpp"
#include "error.hpp"
#include "handle_registry.hpp"

#include <string>
#include <sys/stat.h>

namespace {

using steel::snapshot::decode;
using steel::snapshot::Snapshot;

bool message_has(const char* needle) {
    return std::string(steel_last_error_message()).find(needle) != std::string::npos;
}

steel_batch load(const std::vector<uint8_t>& bytes) {
    steel_batch batch{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &batch));
    REQUIRE(batch.id != 0);
    return batch;
}

// Uploads the scene with the options and solves it once.
steel_batch solved_batch(const scenes::RowsBuilder& builder, int32_t precision,
                         const steel_solve_options& options, uint32_t threads = 1) {
    test::SolveSetup setup;
    setup.precision = precision;
    setup.threads = threads;
    return test::solved_batch(builder, setup, options);
}

} // namespace

TEST_CASE("a loaded snapshot solves bit-identically to the original, in both precisions and on "
          "every path") {
    const scenes::RowsBuilder builder = snaptest::varied_scene(11, 6);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_AUTO, STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
            CAPTURE(precision);
            CAPTURE(path);
            const steel_batch original =
                solved_batch(builder, precision, snaptest::unusual_options(path), 2);
            const snaptest::Outputs first = snaptest::read_outputs(original);
            const std::vector<uint8_t> bytes = snaptest::save_memory(original);

            const steel_batch loaded = load(bytes);
            // Until it is solved, the loaded batch reads the recorded outputs.
            CHECK(snaptest::same_outputs(snaptest::read_outputs(loaded), first));
            REQUIRE_OK(steel_batch_solve(loaded));
            REQUIRE_OK(steel_batch_solve(original));
            CHECK(snaptest::same_outputs(snaptest::read_outputs(loaded),
                                         snaptest::read_outputs(original)));
            CHECK(snaptest::same_outputs(snaptest::read_outputs(loaded), first));

            steel_batch_desc a, b;
            REQUIRE_OK(steel_batch_get_desc(original, &a));
            REQUIRE_OK(steel_batch_get_desc(loaded, &b));
            CHECK(std::memcmp(&a, &b, sizeof(a)) == 0);
            steel_solve_options oa, ob;
            steel_solve_options_default(&oa);
            steel_solve_options_default(&ob);
            REQUIRE_OK(steel_batch_get_options(original, &oa));
            REQUIRE_OK(steel_batch_get_options(loaded, &ob));
            CHECK(std::memcmp(&oa, &ob, sizeof(oa)) == 0);
            REQUIRE_OK(steel_batch_destroy(loaded));
            REQUIRE_OK(steel_batch_destroy(original));
        }
}

TEST_CASE("saving a loaded batch again gives the same decoded content") {
    const scenes::RowsBuilder builder = snaptest::varied_scene(5, 4);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        const steel_batch original =
            solved_batch(builder, precision, snaptest::unusual_options(STEEL_PATH_AUTO));
        const std::vector<uint8_t> first = snaptest::save_memory(original);
        const steel_batch loaded = load(first);
        const std::vector<uint8_t> second = snaptest::save_memory(loaded);
        const Snapshot a = decode(first.data(), first.size(), "test");
        const Snapshot b = decode(second.data(), second.size(), "test");
        CHECK(snaptest::same_content(a, b));
        CHECK(a.solved);
        CHECK(a.results.history_stride == 37);
        CHECK(a.rows.upper.back() == INFINITY);
        REQUIRE_OK(steel_batch_destroy(loaded));
        REQUIRE_OK(steel_batch_destroy(original));
    }
}

TEST_CASE("options equal to their defaults but for the sign of zero survive a round trip") {
    // FlatBuffers drops a field equal to its default unless told not to, and -0.0 == 0.0.
    const scenes::RowsBuilder builder = snaptest::varied_scene(6, 1);
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.cfm = -0.0;
    options.tolerance = -0.0;
    options.contact_regularization = -0.0;
    const steel_batch batch = solved_batch(builder, STEEL_PRECISION_FLOAT64, options);
    const steel_batch loaded = load(snaptest::save_memory(batch));
    steel_solve_options back;
    steel_solve_options_default(&back);
    REQUIRE_OK(steel_batch_get_options(loaded, &back));
    CHECK(std::memcmp(&back, &options, sizeof(options)) == 0);
    REQUIRE_OK(steel_batch_destroy(loaded));
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a float32 batch's snapshot holds exactly its floats, widened") {
    const scenes::RowsBuilder builder = snaptest::varied_scene(3, 2);
    steel_solve_options options;
    steel_solve_options_default(&options);
    const steel_batch batch = solved_batch(builder, STEEL_PRECISION_FLOAT32, options);
    const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
    const Snapshot snapshot = decode(bytes.data(), bytes.size(), "test");
    REQUIRE(snapshot.rows.jacobian.size() == builder.jacobian.size());
    for (size_t k = 0; k < builder.jacobian.size(); ++k)
        CHECK(snapshot.rows.jacobian[k] == double(float(builder.jacobian[k])));
    for (double impulse : snapshot.results.impulses)
        CHECK(impulse == double(float(impulse)));
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a batch round-trips before upload, after upload, and after an upload that cleared its "
          "results") {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = 3;
    steel_batch empty{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &empty));
    steel_batch loaded = load(snaptest::save_memory(empty));
    CHECK(steel_batch_solve(loaded) == STEEL_ERROR_NO_DATA);
    steel_batch_desc got;
    REQUIRE_OK(steel_batch_get_desc(loaded, &got));
    CHECK(got.world_count == 3);
    REQUIRE_OK(steel_batch_destroy(loaded));
    REQUIRE_OK(steel_batch_destroy(empty));

    const scenes::RowsBuilder builder = snaptest::varied_scene(8, 1);
    const steel_batch uploaded = test::make_batch(builder, {});
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(uploaded, &rows));
    loaded = load(snaptest::save_memory(uploaded));
    uint64_t count = 0;
    CHECK(steel_batch_read_impulses(loaded, nullptr, 0, &count) == STEEL_ERROR_NO_DATA);
    REQUIRE_OK(steel_batch_solve(loaded));
    REQUIRE_OK(steel_batch_solve(uploaded));
    CHECK(snaptest::same_outputs(snaptest::read_outputs(loaded), snaptest::read_outputs(uploaded)));
    REQUIRE_OK(steel_batch_destroy(loaded));
    REQUIRE_OK(steel_batch_destroy(uploaded));
}

TEST_CASE("steel_batch_save_memory answers the size first and never writes past the capacity") {
    const scenes::RowsBuilder builder = snaptest::varied_scene(2, 1);
    steel_solve_options options;
    steel_solve_options_default(&options);
    const steel_batch batch = solved_batch(builder, STEEL_PRECISION_FLOAT64, options);
    uint64_t size = 0;
    REQUIRE_OK(steel_batch_save_memory(batch, nullptr, 0, &size));
    CHECK(size > 8);
    std::vector<uint8_t> buffer(size + 16, 0xAB);
    uint64_t reported = 0;
    CHECK(steel_batch_save_memory(batch, buffer.data(), size - 1, &reported) ==
          STEEL_ERROR_BUFFER_TOO_SMALL);
    CHECK(reported == size);
    CHECK(message_has("steel_batch_save_memory"));
    for (uint8_t byte : buffer)
        CHECK(byte == 0xAB);
    CHECK(steel_batch_save_memory(batch, nullptr, 0, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    REQUIRE_OK(steel_batch_save_memory(batch, buffer.data(), buffer.size(), nullptr));
    CHECK(buffer[size] == 0xAB);
    CHECK(steel_batch_save_memory(steel_batch{0}, buffer.data(), buffer.size(), &size) ==
          STEEL_ERROR_INVALID_HANDLE);
    REQUIRE_OK(steel_batch_destroy(batch));
    CHECK(steel_batch_save_memory(batch, nullptr, 0, &size) == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_save_file(batch, "/tmp/never-written.steel") == STEEL_ERROR_INVALID_HANDLE);
    CHECK(steel_batch_set_capture(batch, nullptr) == STEEL_ERROR_INVALID_HANDLE);
}

TEST_CASE("a snapshot's size bound holds every saved size tightly, and a batch past the limit is "
          "refused") {
    for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64})
        for (uint32_t history : {0u, 1u})
            for (uint32_t random_worlds : {1u, 9u}) {
                CAPTURE(precision);
                CAPTURE(history);
                CAPTURE(random_worlds);
                const scenes::RowsBuilder builder = snaptest::varied_scene(3, random_worlds);
                steel_solve_options options;
                steel_solve_options_default(&options);
                options.record_residual_history = history;
                const steel_batch batch = solved_batch(builder, precision, options);
                const steel::Batch& internal = steel::lookup_batch(batch.id, "test");
                const uint64_t bound = steel::snapshot::snapshot_size_bound(internal);
                const uint64_t size = snaptest::save_memory(batch).size();
                CHECK(bound >= size);
                CHECK(bound <= size + 8192 + 64 * uint64_t(builder.world_count()));

                // The writers' check, at a limit just under the bound: refused, nothing written.
                CHECK_NOTHROW(steel::snapshot::check_snapshot_fits(internal, "test", bound));
                try {
                    steel::snapshot::check_snapshot_fits(internal, "steel_batch_save_memory",
                                                         bound - 1);
                    FAIL("a batch past the limit passed");
                } catch (const steel::Error& error) {
                    CHECK(error.status == STEEL_ERROR_UNSUPPORTED);
                    CHECK(error.message.find(
                              "steel_batch_save_memory: the batch's snapshot would take up to " +
                              std::to_string(bound) + " bytes, more than the " +
                              std::to_string(bound - 1)) == 0);
                }
                REQUIRE_OK(steel_batch_destroy(batch));
            }
}

TEST_CASE(
    "snapshots load from any alignment, and files round-trip through save_file and load_file") {
    const scenes::RowsBuilder builder = snaptest::varied_scene(4, 2);
    const steel_batch batch =
        solved_batch(builder, STEEL_PRECISION_FLOAT64, snaptest::unusual_options(STEEL_PATH_AUTO));
    const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
    const snaptest::Outputs original = snaptest::read_outputs(batch);
    REQUIRE(!original.solved.impulses.empty());
    REQUIRE(!original.history.front().empty());
    for (size_t shift = 1; shift < 8; ++shift) {
        CAPTURE(shift);
        std::vector<uint8_t> shifted(bytes.size() + shift);
        std::memcpy(shifted.data() + shift, bytes.data(), bytes.size());
        steel_batch loaded{};
        REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, shifted.data() + shift, bytes.size(),
                                           &loaded));
        // Every number read at its own bits: impulses, velocities, stats and residual histories.
        CHECK(snaptest::same_outputs(snaptest::read_outputs(loaded), original));
        REQUIRE_OK(steel_batch_destroy(loaded));
    }

    const std::string path = snaptest::temporary_path("roundtrip.steel");
    REQUIRE_OK(steel_batch_save_file(batch, path.c_str()));
    REQUIRE_OK(steel_batch_save_file(batch, path.c_str())); // replacing works too
    steel_batch loaded{};
    REQUIRE_OK(steel_batch_load_file(STEEL_ABI_VERSION, path.c_str(), &loaded));
    CHECK(snaptest::same_outputs(snaptest::read_outputs(loaded), snaptest::read_outputs(batch)));
    REQUIRE_OK(steel_batch_destroy(loaded));
    std::remove(path.c_str());

    CHECK(steel_batch_save_file(batch, "/nonexistent-folder/x.steel") ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("/nonexistent-folder/x.steel"));
    CHECK(steel_batch_save_file(batch, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    steel_batch missing{123};
    CHECK(steel_batch_load_file(STEEL_ABI_VERSION, "/nonexistent-folder/x.steel", &missing) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(missing.id == 0);
    CHECK(message_has("steel_batch_load_file"));
    CHECK(message_has("No such file"));
    CHECK(steel_batch_load_file(STEEL_ABI_VERSION, "/tmp", &missing) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("not a regular file"));
    CHECK(steel_batch_load_file(STEEL_ABI_VERSION, nullptr, &missing) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(steel_batch_load_file(STEEL_ABI_VERSION, path.c_str(), nullptr) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(steel_batch_load_memory(STEEL_ABI_VERSION + 1, bytes.data(), bytes.size(), &missing) ==
          STEEL_ERROR_ABI_MISMATCH);
    CHECK(missing.id == 0);
    CHECK(steel_batch_load_memory(STEEL_ABI_VERSION, nullptr, 100, &missing) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), nullptr) ==
          STEEL_ERROR_INVALID_ARGUMENT);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("one world extracted from a snapshot replays like that world in the whole batch") {
    const scenes::RowsBuilder builder = snaptest::varied_scene(21, 5);
    const steel_batch batch =
        solved_batch(builder, STEEL_PRECISION_FLOAT64, snaptest::unusual_options(STEEL_PATH_AUTO));
    const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
    const Snapshot whole = decode(bytes.data(), bytes.size(), "test");
    const test::Solved all = test::read_all(batch);
    uint64_t row0 = 0, dof0 = 0;
    for (uint32_t w = 0; w < whole.desc.world_count; ++w) {
        CAPTURE(w);
        const std::vector<uint8_t> one =
            steel::snapshot::encode(steel::snapshot::extract_world(whole, w));
        const steel_batch loaded = load(one);
        REQUIRE_OK(steel_batch_solve(loaded));
        const test::Solved alone = test::read_all(loaded);
        const uint32_t m = whole.rows.world_row_counts[w], n = whole.rows.world_dof_counts[w];
        CHECK(std::memcmp(alone.impulses.data(), all.impulses.data() + row0, m * sizeof(double)) ==
              0);
        CHECK(std::memcmp(alone.velocities.data(), all.velocities.data() + dof0,
                          n * sizeof(double)) == 0);
        CHECK(std::memcmp(&alone.stats[0], &all.stats[w], sizeof(steel_world_stats)) == 0);
        row0 += m;
        dof0 += n;
        REQUIRE_OK(steel_batch_destroy(loaded));
    }
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a snapshot holds results only next to the options that solved them") {
    const scenes::RowsBuilder builder = snaptest::varied_scene(8, 2);
    const steel_solve_options solved_with = snaptest::unusual_options(STEEL_PATH_AUTO);
    const steel_batch batch = solved_batch(builder, STEEL_PRECISION_FLOAT64, solved_with);
    const auto saved = [&] {
        const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
        return decode(bytes.data(), bytes.size(), "test");
    };
    CHECK(saved().solved);
    REQUIRE_OK(steel_batch_set_options(batch, &solved_with)); // the same options: still theirs
    CHECK(saved().solved);

    // Other options: the batch still reads its results, but a snapshot would present them as the
    // other options' outputs and a replay would report the solver as differing from itself.
    steel_solve_options other = solved_with;
    other.iterations = 5;
    REQUIRE_OK(steel_batch_set_options(batch, &other));
    uint64_t count = 0;
    CHECK(steel_batch_read_impulses(batch, nullptr, 0, &count) == STEEL_OK);
    const Snapshot without = saved();
    CHECK_FALSE(without.solved);
    CHECK(without.has_rows);
    CHECK(without.options.iterations == 5);
    const steel_batch loaded = load(snaptest::save_memory(batch));
    CHECK(steel_batch_read_impulses(loaded, nullptr, 0, &count) == STEEL_ERROR_NO_DATA);
    REQUIRE_OK(steel_batch_destroy(loaded));
    other = solved_with; // any field counts
    other.cfm = solved_with.cfm * 2;
    REQUIRE_OK(steel_batch_set_options(batch, &other));
    CHECK_FALSE(saved().solved);

    REQUIRE_OK(
        steel_batch_set_options(batch, &solved_with)); // back to the options that solved them
    CHECK(saved().solved);
    REQUIRE_OK(steel_batch_set_options(batch, &other));
    REQUIRE_OK(steel_batch_solve(batch)); // a solve pairs the results with the options again
    const Snapshot resolved = saved();
    CHECK(resolved.solved);
    CHECK(std::memcmp(&resolved.options, &other, sizeof(other)) == 0);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("loading from a FIFO is refused at once, never waits for a writer") {
    const std::string fifo = snaptest::temporary_path("load.fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    steel_batch loaded{77};
    const auto result = snaptest::without_waiting(fifo, O_WRONLY, [&] {
        return steel_batch_load_file(STEEL_ABI_VERSION, fifo.c_str(), &loaded);
    });
    CHECK(result.first == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(loaded.id == 0);
    INFO("message: " << result.second);
    CHECK(result.second.find("not a regular file") != std::string::npos);
    std::string output;
    CHECK(snaptest::run_replay(fifo, &output) == 2); // steel-replay reads files the same way
    CHECK(output.find("not a regular file") != std::string::npos);
    std::remove(fifo.c_str());
}

TEST_CASE("save_file gives a new file the umask's mode, and a replaced file keeps its own") {
    const auto mode_of = [](const std::string& path) {
        struct stat info;
        REQUIRE(::stat(path.c_str(), &info) == 0);
        return unsigned(info.st_mode & 07777);
    };
    const scenes::RowsBuilder builder = snaptest::varied_scene(9, 1);
    const steel_batch batch =
        solved_batch(builder, STEEL_PRECISION_FLOAT64, snaptest::unusual_options(STEEL_PATH_AUTO));
    const std::string saved = snaptest::temporary_path("mode.steel");
    const std::string captured = snaptest::temporary_path("mode_capture.steel");
    const mode_t umask_before = ::umask(027);
    const steel_status first = steel_batch_save_file(batch, saved.c_str());
    const steel_status capture = steel_batch_set_capture(batch, captured.c_str());
    ::umask(umask_before);
    REQUIRE_OK(first);
    REQUIRE_OK(capture);
    CHECK(mode_of(saved) == 0640u); // 0666 less the umask, like the capture file
    CHECK(mode_of(captured) == 0640u);
    for (unsigned mode : {0600u, 0664u, 0444u}) {
        CAPTURE(mode);
        REQUIRE(::chmod(saved.c_str(), mode) == 0);
        REQUIRE_OK(steel_batch_save_file(batch, saved.c_str()));
        CHECK(mode_of(saved) == mode);
    }
    steel_batch loaded{};
    REQUIRE_OK(steel_batch_load_file(STEEL_ABI_VERSION, saved.c_str(), &loaded));
    REQUIRE_OK(steel_batch_destroy(loaded));
    REQUIRE_OK(steel_batch_destroy(batch));
    std::remove(saved.c_str());
    std::remove(captured.c_str());
}
