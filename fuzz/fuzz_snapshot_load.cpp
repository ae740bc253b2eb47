// Fuzz target: loading snapshots from arbitrary bytes (steel_batch_load_memory).
//
// Every input is loaded twice: as it is (so the size checks, the verifier and the checksum meet
// every kind of damage), and with its checksum recomputed when the bytes still verify (so
// mutated content reaches the format and meaning checks behind the checksum instead of
// stopping at it). Properties:
//  - a refusal is an error status with a message naming steel_batch_load_memory, and no batch;
//  - a loaded batch saves to a snapshot that loads again to the same decoded content (a scene
//    exactly, the rows it builds to the recorded counts), its results read back (every world's
//    residual history too) into buffers of the sizes it reports, and it solves (with at most a
//    few sweeps) without failing, but for a refusal of the propagation response;
//  - each of its first worlds, extracted alone, solves to the impulses it got in the whole batch.
#include "fuzz_input.hpp"

#include "snapshot/snapshot.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// Whether b holds a's numbers as the batch's precision holds them (a float32 batch rounds on load).
bool same_numbers(const std::vector<double>& a, const std::vector<double>& b, bool float32) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) {
        const double expected = float32 ? double(float(a[k])) : a[k];
        if (std::memcmp(&expected, &b[k], sizeof(double)) != 0) return false;
    }
    return true;
}

// Saves a loaded batch and checks that the saved snapshot decodes to what the input decoded to.
void check_round_trip(steel_batch batch, const uint8_t* data, size_t size) {
    uint64_t saved_size = 0;
    if (steel_batch_save_memory(batch, nullptr, 0, &saved_size) != STEEL_OK)
        fuzz::die("save size query failed");
    std::vector<uint8_t> saved(saved_size);
    if (steel_batch_save_memory(batch, saved.data(), saved.size(), &saved_size) != STEEL_OK)
        fuzz::die("save failed");
    const steel::snapshot::Snapshot in = steel::snapshot::decode(data, size, "fuzz");
    const steel::snapshot::Snapshot out =
        steel::snapshot::decode(saved.data(), saved.size(), "fuzz");
    // The loaded batch normalizes what an upload normalizes (unused bounds, absent arrays), so
    // compare what must survive exactly: counts, the values every row has, and the outputs.
    if (in.has_rows != out.has_rows || in.solved != out.solved ||
        in.desc.world_count != out.desc.world_count ||
        std::memcmp(&in.options, &out.options, sizeof(in.options)) != 0)
        fuzz::die("a saved loaded batch decodes to a different desc, options or state");
    const bool f32 = in.desc.precision == STEEL_PRECISION_FLOAT32;
    // A scene survives exactly (it is stored as given); the rows beside it are the ones it
    // builds, which need not be the input's (only their counts are checked on load).
    if (in.has_scene != out.has_scene || (in.has_scene && !in.scene.same_bits(out.scene)))
        fuzz::die("a saved loaded batch decodes to a different scene");
    if (in.has_scene && (in.rows.world_dof_counts != out.rows.world_dof_counts ||
                         in.rows.world_row_counts != out.rows.world_row_counts))
        fuzz::die("a loaded scene builds rows of other counts than recorded");
    if (in.has_rows && !in.has_scene &&
        (in.rows.world_dof_counts != out.rows.world_dof_counts ||
         in.rows.world_row_counts != out.rows.world_row_counts || in.rows.kind != out.rows.kind ||
         !same_numbers(in.rows.unconstrained_velocity, out.rows.unconstrained_velocity, f32) ||
         !same_numbers(in.rows.jacobian, out.rows.jacobian, f32) ||
         !same_numbers(in.rows.bias, out.rows.bias, f32)))
        fuzz::die("a saved loaded batch decodes to different rows");
    if (in.solved &&
        (!same_numbers(in.results.impulses, out.results.impulses, f32) ||
         !same_numbers(in.results.velocities, out.results.velocities, f32) ||
         !same_numbers(in.results.residual_history, out.results.residual_history, false)))
        fuzz::die("a saved loaded batch decodes to different results");
}

// Reads what a loaded batch reports, each into a buffer of exactly the size it asks for, so
// that a reader trusting a count the loader let through reads past its data (ASan).
void read_loaded_outputs(steel_batch batch, uint32_t world_count) {
    uint64_t count = 0;
    if (steel_batch_read_impulses(batch, nullptr, 0, &count) != STEEL_OK) return; // not solved
    std::vector<double> values(count);
    if (steel_batch_read_impulses(batch, values.data(), count, &count) != STEEL_OK)
        fuzz::die("impulses unreadable");
    if (steel_batch_read_velocities(batch, nullptr, 0, &count) != STEEL_OK)
        fuzz::die("velocities unreadable");
    values.resize(count);
    if (steel_batch_read_velocities(batch, values.data(), count, &count) != STEEL_OK)
        fuzz::die("velocities unreadable");
    std::vector<steel_world_stats> stats(world_count);
    uint32_t stats_count = 0;
    if (steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(), world_count,
                                     &stats_count) != STEEL_OK ||
        stats_count != world_count)
        fuzz::die("world stats unreadable");
    for (uint32_t w = 0; w < world_count; ++w) {
        uint32_t sweeps = 0;
        const steel_status status =
            steel_batch_read_residual_history(batch, w, nullptr, 0, &sweeps);
        if (status == STEEL_ERROR_NO_DATA) return; // solved without history
        if (status != STEEL_OK || sweeps != stats[w].sweeps)
            fuzz::die("history count unreadable or not sweeps");
        std::vector<double> history(sweeps);
        if (steel_batch_read_residual_history(batch, w, history.data(), sweeps, &sweeps) !=
            STEEL_OK)
            fuzz::die("history unreadable");
    }
}

// Worlds are independent, so one world cut out of a snapshot (what `steel-replay --extract`
// writes for a bug report) must load and solve to bit-for-bit the impulses that world got in the
// whole batch. Checks the first few worlds of a batch just solved with `options`.
void check_extracted_worlds(const steel::snapshot::Snapshot& whole,
                            const std::vector<double>& whole_impulses,
                            const steel_solve_options& options) {
    const uint32_t checked = std::min(whole.desc.world_count, 3u);
    uint64_t row0 = 0;
    for (uint32_t w = 0; w < checked; ++w) {
        const std::vector<uint8_t> bytes =
            steel::snapshot::encode(steel::snapshot::extract_world(whole, w));
        steel_batch one{0};
        if (steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &one) !=
            STEEL_OK)
            fuzz::die("an extracted world of a loadable snapshot does not load");
        if (steel_batch_set_options(one, &options) != STEEL_OK)
            fuzz::die("an extracted world refuses the options");
        if (steel_batch_solve(one) != STEEL_OK) fuzz::die("an extracted world failed to solve");
        const std::vector<double> impulses = fuzz::read_impulses(one);
        const uint32_t m = whole.rows.world_row_counts[w];
        if (impulses.size() != m || row0 + m > whole_impulses.size() ||
            std::memcmp(impulses.data(), whole_impulses.data() + row0, m * sizeof(double)) != 0)
            fuzz::die("an extracted world solves to other impulses than it got in the whole batch");
        if (steel_batch_destroy(one) != STEEL_OK) fuzz::die("destroy failed");
        row0 += m;
    }
}

void load_and_check(const uint8_t* data, size_t size) {
    steel_batch batch{12345};
    const steel_status status = steel_batch_load_memory(STEEL_ABI_VERSION, data, size, &batch);
    if (status != STEEL_OK) {
        if (batch.id != 0) fuzz::die("a refused load left a handle");
        if (std::strncmp(steel_last_error_message(), "steel_batch_load_memory", 23) != 0)
            fuzz::die("a refused load has no message naming steel_batch_load_memory");
        return;
    }
    if (batch.id == 0 || steel_last_error_message()[0] != '\0')
        fuzz::die("a load succeeded without a batch");
    check_round_trip(batch, data, size);
    const steel::snapshot::Snapshot decoded = steel::snapshot::decode(data, size, "fuzz");
    read_loaded_outputs(batch, decoded.desc.world_count);

    // Solve, with the sweeps capped so that a recorded iterations = 4e9 cannot hang the fuzzer.
    steel_solve_options options;
    steel_solve_options_default(&options);
    if (steel_batch_get_options(batch, &options) != STEEL_OK)
        fuzz::die("get_options failed on a loaded batch");
    options.iterations = std::min(options.iterations, 8u);
    if (steel_batch_set_options(batch, &options) != STEEL_OK)
        fuzz::die("a loaded batch refuses its own options");
    const steel_status solved = steel_batch_solve(batch);
    // The propagation response may refuse what it cannot walk (rows without a scene, cone
    // friction, an articulated inertia that is not positive definite), with a message.
    const bool refused_propagation =
        solved == STEEL_ERROR_INVALID_ARGUMENT &&
        options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION &&
        std::strncmp(steel_last_error_message(), "steel_batch_solve", 17) == 0;
    if (solved != STEEL_OK && solved != STEEL_ERROR_NO_DATA && !refused_propagation) {
        std::fprintf(stderr, "status %d: %s\n", int(solved), steel_last_error_message());
        fuzz::die("a loaded batch failed to solve");
    }
    if (solved == STEEL_OK) check_extracted_worlds(decoded, fuzz::read_impulses(batch), options);
    if (steel_batch_destroy(batch) != STEEL_OK) fuzz::die("destroy failed");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    load_and_check(data, size);
    std::vector<uint8_t> resealed(data, data + size);
    if (steel::snapshot::reseal(resealed)) load_and_check(resealed.data(), resealed.size());
    return 0;
}
