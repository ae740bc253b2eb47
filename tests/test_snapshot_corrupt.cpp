// A bad snapshot is an error status and a message, never a crash, and never a batch: truncated
// or damaged bytes, a foreign identifier, a newer format, absurd counts, non-finite numbers.
#include "error.hpp"
#include "test_snapshot_support.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <unistd.h>

namespace {

using steel::snapshot::decode;
using steel::snapshot::encode;
using steel::snapshot::Snapshot;

bool message_has(const char* needle) {
    return std::string(steel_last_error_message()).find(needle) != std::string::npos;
}

// Loads bytes that must be refused: an error status, a message naming the call, no batch.
steel_status refused(const std::vector<uint8_t>& bytes) {
    steel_batch batch{77};
    const steel_status status =
        steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &batch);
    CHECK(status != STEEL_OK);
    CHECK(batch.id == 0);
    CHECK(message_has("steel_batch_load_memory"));
    if (status == STEEL_OK) steel_batch_destroy(batch);
    return status;
}

// A small solved batch (one stack world and one random world) as snapshot bytes.
std::vector<uint8_t> small_snapshot() {
    scenes::RowsBuilder builder;
    scenes::StackSpec stack;
    stack.height = 2;
    scenes::add_stack_world(builder, stack);
    std::mt19937_64 rng(1);
    scenes::RandomWorldSpec spec;
    spec.body_count = 2;
    spec.max_body_dofs = 2;
    spec.row_count = 3;
    scenes::add_random_world(builder, rng, spec);
    const steel_batch batch = test::make_batch(builder, {});
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));
    std::vector<uint8_t> bytes = snaptest::save_memory(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    return bytes;
}

Snapshot small_content() {
    const std::vector<uint8_t> bytes = small_snapshot();
    return decode(bytes.data(), bytes.size(), "test");
}

// Encodes a changed copy of the small snapshot (with a valid checksum) and expects a refusal
// whose message contains `needle`.
void refused_after(const std::function<void(Snapshot&)>& change, const char* needle,
                   steel_status expected = STEEL_ERROR_INVALID_ARGUMENT) {
    Snapshot snapshot = small_content();
    change(snapshot);
    CHECK(refused(encode(snapshot)) == expected);
    INFO("message: " << std::string(steel_last_error_message()));
    CHECK(message_has(needle));
}

} // namespace

TEST_CASE("every truncation of a small snapshot is refused") {
    const std::vector<uint8_t> bytes = small_snapshot();
    INFO("snapshot of " << bytes.size() << " bytes");
    for (size_t length = 0; length < bytes.size(); ++length) {
        CAPTURE(length);
        refused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + int64_t(length)));
    }
    steel_batch whole{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &whole));
    REQUIRE_OK(steel_batch_destroy(whole));
}

TEST_CASE("every single-bit flip of a small snapshot is refused") {
    const std::vector<uint8_t> bytes = small_snapshot();
    bool checksum_caught = false, verifier_caught = false;
    for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
        std::vector<uint8_t> flipped = bytes;
        flipped[bit / 8] = uint8_t(flipped[bit / 8] ^ (1u << (bit % 8)));
        CAPTURE(bit);
        refused(flipped);
        checksum_caught |= message_has("CRC-32");
        verifier_caught |= message_has("verifier");
    }
    CHECK(checksum_caught);
    CHECK(verifier_caught);
}

TEST_CASE(
    "a foreign file identifier, a capture stream and a newer format version are refused by name") {
    std::vector<uint8_t> bytes = small_snapshot();
    std::vector<uint8_t> foreign = bytes;
    std::memcpy(foreign.data() + 4, "ABCD", 4);
    refused(foreign);
    CHECK(message_has("not a Steel snapshot"));
    CHECK(message_has("'ABCD'"));

    const std::vector<uint8_t> record = encode(small_content(), /*size_prefixed=*/true);
    refused(record);
    CHECK(message_has("capture stream"));

    refused_after([](Snapshot& s) { s.format_version = steel::snapshot::kFormatVersion + 1; },
                  "newer");
    refused_after([](Snapshot& s) { s.format_version = 0; }, "no format_version");
}

TEST_CASE("absurd counts are refused before anything is allocated for them") {
    refused_after([](Snapshot& s) { s.desc.world_count = 1000000000u; }, "desc.world_count");
    refused_after([](Snapshot& s) { s.rows.world_dof_counts[0] = 4000000000u; },
                  "unconstrained_velocity");
    refused_after([](Snapshot& s) { s.rows.world_row_counts[1] = 0xffffffffu; },
                  "world_row_counts");
    refused_after([](Snapshot& s) { s.rows.block_length[0] = 1000000; },
                  "world 0, row 0 (batch row 0)");
    refused_after([](Snapshot& s) { s.rows.block_offset[2] = 0xfffffff0u; }, "covers DOFs");
    refused_after([](Snapshot& s) { s.rows.jacobian.pop_back(); }, "rows.response");
    refused_after(
        [](Snapshot& s) {
            s.rows.jacobian.pop_back();
            s.rows.response.pop_back();
        },
        "(the block lengths must add up to its length)");
    refused_after([](Snapshot& s) { s.rows.bias.push_back(0); }, "rows.bias");
    refused_after([](Snapshot& s) { s.rows.friction.resize(1); }, "rows.friction");
    refused_after([](Snapshot& s) { s.rows.kind[0] = 99; }, "kind = 99");
    refused_after(
        [](Snapshot& s) {
            s.rows.kind[1] = STEEL_ROW_FRICTION_BOX;
            s.rows.normal_row[1] = 7;
            s.rows.friction[1] = 0.5;
        },
        "normal_row = 7");
    refused_after([](Snapshot& s) { s.results.impulses.pop_back(); }, "results.impulses");
    refused_after([](Snapshot& s) { s.results.stats.pop_back(); }, "results.world_stats");
    refused_after([](Snapshot& s) { s.results.stats[0].path = 5; }, "stats.path");
    refused_after([](Snapshot& s) { s.results.history_stride = 1000000; }, "residual_history");
    refused_after(
        [](Snapshot& s) { // more sweeps than the history holds: its reader would read past it
            s.results.history_stride = 60;
            s.results.residual_history.assign(60 * s.results.stats.size(), 0.0);
            for (steel_world_stats& stats : s.results.stats)
                stats.sweeps = std::min(stats.sweeps, 60u);
            s.results.stats[1].sweeps = 61;
        },
        "world 1: the snapshot's stats.sweeps = 61 is more than the 60 entries");
    refused_after(
        [](Snapshot& s) {
            s.has_rows = false;
            s.rows = {};
        },
        "results but no rows");
    refused_after([](Snapshot& s) { s.desc.thread_count = 100000; }, "thread_count");
    refused_after([](Snapshot& s) { s.desc.precision = 3; }, "precision");
    // A CUDA snapshot loads only where a CUDA batch can be made: the backend built and a device.
    steel_batch_desc cuda;
    steel_batch_desc_default(&cuda);
    cuda.backend = STEEL_BACKEND_CUDA;
    steel_batch probe{};
    const steel_status cuda_status = steel_batch_create(STEEL_ABI_VERSION, &cuda, &probe);
    if (cuda_status == STEEL_OK)
        REQUIRE_OK(steel_batch_destroy(probe));
    else
        refused_after([](Snapshot& s) { s.desc.backend = STEEL_BACKEND_CUDA; }, "CUDA",
                      cuda_status);
    refused_after([](Snapshot& s) { s.options.iterations = 0; }, "iterations");
    refused_after([](Snapshot& s) { s.options.path = -4; }, "path = -4");
}

TEST_CASE("non-finite numbers are refused wherever the upload or a solve would never have them") {
    refused_after([](Snapshot& s) { s.rows.jacobian[0] = NAN; }, "jacobian[0] is NaN");
    refused_after([](Snapshot& s) { s.rows.response[1] = -INFINITY; }, "is infinite");
    refused_after([](Snapshot& s) { s.rows.bias[2] = INFINITY; }, "bias is infinite");
    refused_after([](Snapshot& s) { s.rows.unconstrained_velocity[0] = NAN; },
                  "unconstrained_velocity is NaN");
    refused_after([](Snapshot& s) { s.rows.initial_impulse[0] = NAN; }, "initial_impulse is NaN");
    refused_after([](Snapshot& s) { s.options.cfm = NAN; }, "cfm = nan");
    refused_after([](Snapshot& s) { s.options.tolerance = INFINITY; }, "tolerance = inf");
    refused_after([](Snapshot& s) { s.results.impulses[0] = NAN; }, "results.impulses[0]");
    refused_after([](Snapshot& s) { s.results.velocities[1] = INFINITY; }, "results.velocities[1]");
    refused_after([](Snapshot& s) { s.results.stats[1].residual = NAN; }, "residual");
    // A world flagged NONFINITE may carry a non-finite residual: that is what the flag reports.
    Snapshot flagged = small_content();
    flagged.results.stats[1].flags |= STEEL_WORLD_NONFINITE;
    flagged.results.stats[1].residual = NAN;
    const std::vector<uint8_t> bytes = encode(flagged);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &batch));
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a float32 snapshot whose values overflow float32 is refused") {
    Snapshot snapshot = small_content();
    snapshot.desc.precision = STEEL_PRECISION_FLOAT32;
    snapshot.rows.bias[0] = 1e300;
    CHECK(refused(encode(snapshot)) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("does not fit float32"));
    snapshot = small_content();
    snapshot.desc.precision = STEEL_PRECISION_FLOAT32;
    snapshot.results.impulses[0] = 1e300;
    CHECK(refused(encode(snapshot)) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("does not fit the batch's float32"));
}

TEST_CASE("a truncated or impossible capture stream is refused with the record's position") {
    std::vector<uint8_t> stream;
    for (int k = 0; k < 3; ++k) {
        const std::vector<uint8_t> record = encode(small_content(), true);
        stream.insert(stream.end(), record.begin(), record.end());
    }
    CHECK(steel::snapshot::split_capture(stream.data(), stream.size(), "test").size() == 3);
    for (size_t cut : {stream.size() - 1, stream.size() - 40, size_t(2)}) {
        CAPTURE(cut);
        bool threw = false;
        try {
            steel::snapshot::split_capture(stream.data(), cut, "test");
        } catch (const steel::Error& error) {
            threw = true;
            CHECK(error.message.find("truncated capture") != std::string::npos);
        }
        CHECK(threw);
        // Asked for them, the complete records before the bad tail, and the tail's message.
        std::string bad_tail;
        const auto records = steel::snapshot::split_capture(stream.data(), cut, "test", &bad_tail);
        CHECK(records.size() == (cut == 2 ? 0u : 2u));
        CHECK(bad_tail.find("test: capture record") == 0);
        CHECK(bad_tail.find("truncated capture") != std::string::npos);
    }
    std::string bad_tail;
    CHECK(steel::snapshot::split_capture(stream.data(), stream.size(), "test", &bad_tail).size() ==
          3);
    CHECK(bad_tail.empty());
}

TEST_CASE("block lengths that do not add up to the Jacobian's length are refused by decode, naming "
          "the world and row") {
    // decode() alone runs before steel-replay cuts a world out of a snapshot (--world, --extract)
    // or sums its blocks (--info), so it must refuse what would make them read past J.
    Snapshot snapshot = small_content();
    const uint64_t row = snapshot.rows.world_row_counts[0]; // world 1's first row
    snapshot.rows.block_length[2 * row] += 100000000u;
    const std::vector<uint8_t> bytes = encode(snapshot);
    const std::string expected = "world 1, row 0 (batch row " + std::to_string(row) + ")";
    std::string message;
    try {
        decode(bytes.data(), bytes.size(), "test");
    } catch (const steel::Error& error) {
        message = error.message;
    }
    INFO("message: " << message);
    CHECK(message.find(expected) != std::string::npos);
    CHECK(message.find("rows.jacobian") != std::string::npos);

    const std::string path = snaptest::temporary_path("block_lengths.steel");
    const std::string extracted = snaptest::temporary_path("extracted.steel");
    snaptest::write_bytes(path, bytes);
    for (const std::string& arguments : std::vector<std::string>{
             "--world 1 ", "--extract 1 --output " + extracted + " ", "--info ", ""}) {
        CAPTURE(arguments);
        std::string output;
        CHECK(snaptest::run_replay(arguments + path, &output) == 2); // an invalid file, not a crash
        INFO("output: " << output);
        CHECK(output.find(expected) != std::string::npos);
    }
    CHECK(::access(extracted.c_str(), F_OK) != 0);
    std::remove(path.c_str());

    // Fewer values in the blocks than in J.
    refused_after(
        [](Snapshot& s) {
            s.rows.jacobian.push_back(0.5);
            s.rows.response.push_back(0.5);
        },
        "but the sum of rows.block_length gives");
}
