// Snapshots (DESIGN.md "Snapshots", docs/snapshots.md): a batch's desc, options, rows and last
// outputs as one FlatBuffers buffer (impl/snapshot/steel_snapshot.fbs), and captures, which are
// streams of size-prefixed snapshots.
//
// This header is plain C++ and knows nothing of FlatBuffers: the generated code stays inside
// snapshot_codec.cpp. A Snapshot holds every number as double, so the same decoded content
// serves a float32 and a float64 batch, and two snapshots compare by value, never by bytes
// (FlatBuffers output is not canonical).
//
// Decoding checks the *form* of a buffer (size, FlatBuffers verifier with limits, format
// version, every array's length against the counts that size it). The *meaning* of the rows
// and options (indices, kinds, finite numbers, denominators) is checked where an upload and
// steel_batch_set_options check it, so a snapshot is held to exactly the rules of the calls it
// stands for; capi/snapshot_api.cpp does that when it builds a batch.
#pragma once

#include "../scene/scene_inputs.hpp"

#include <steel/steel.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace steel {

struct Batch;

namespace snapshot {

// The format version this library writes and the newest it reads.
constexpr uint32_t kFormatVersion = 1;
// "STEL", at bytes 4..7 of a snapshot (8..11 of a size-prefixed one).
constexpr const char* kFileIdentifier = "STEL";
// Largest snapshot accepted (FlatBuffers' own limit is 2 GiB - 1).
constexpr uint64_t kMaxSnapshotBytes = (uint64_t(1) << 31) - 2;

// The arrays of steel_rows_desc, owned. An empty optional array (lower, upper, normal_row,
// friction, regularization, initial_impulse) stands for a NULL pointer.
struct Rows {
    std::vector<uint32_t> world_dof_counts, world_row_counts;
    std::vector<double> unconstrained_velocity;
    std::vector<uint32_t> block_offset, block_length;
    std::vector<double> jacobian, response, bias;
    std::vector<int32_t> kind;
    std::vector<double> lower, upper;
    std::vector<int32_t> normal_row;
    std::vector<double> friction, regularization, initial_impulse;

    uint64_t total_dofs() const;
    uint64_t total_rows() const;
    // A desc pointing into these arrays (valid while this object lives, unchanged).
    steel_rows_desc desc() const;
};

// The outputs of the last solve.
struct Results {
    std::vector<double> impulses;         // [total_rows]
    std::vector<double> velocities;       // [total_dofs]
    std::vector<steel_world_stats> stats; // [world_count]
    uint32_t history_stride = 0;          // 0: no residual history recorded
    std::vector<double> residual_history; // [world_count * history_stride]
};

struct Snapshot {
    uint32_t format_version = kFormatVersion;
    std::string producer_version; // steel_version() of the writer
    uint32_t producer_abi_version = 0;
    uint32_t producer_features = 0; // STEEL_FEATURE_* bits of the writer
    steel_batch_desc desc{};
    steel_solve_options options{};
    bool has_rows = false;
    Rows rows;
    // The scene the rows were built from (a scene upload); a snapshot with a scene has rows too.
    bool has_scene = false;
    scene::SceneInputs scene;
    bool solved = false; // results are present
    Results results;
};

// An upper bound of the size of the batch's snapshot, from its counts alone (tight to a few
// kilobytes and a few bytes a world), and the check every writer makes with it before anything
// is built: a batch whose snapshot could pass `limit` is refused (UNSUPPORTED, message starting
// with `where`), so FlatBuffers never builds a buffer past its 2 GiB limit.
uint64_t snapshot_size_bound(const Batch& batch);
void check_snapshot_fits(const Batch& batch, const char* where, uint64_t limit = kMaxSnapshotBytes);

// The batch as it is now, numbers widened to double. Producer fields are this library's. The
// results are included only when they came from the batch's current options and rows: after a
// steel_batch_set_options that changed the options, or a device values update, since the last
// solve, the snapshot holds no results (a replay would compare them with a solve of other inputs).
Snapshot export_batch(const Batch& batch);

// Puts decoded results back into a batch that holds the rows and options they belong to (the
// loader's last step): impulses, velocities, stats, residual history; the batch then reads as
// solved, and its current options count as the ones the results were solved with.
void restore_results(Batch& batch, const Results& results);

// Serializes. With size_prefixed the result is one record of a capture stream: the snapshot's
// length as a little-endian uint32, then the snapshot itself, which is aligned to its own start
// (not to the prefix), so the bytes after the prefix load as a snapshot on their own.
std::vector<uint8_t> encode(const Snapshot& snapshot, bool size_prefixed = false);

// Recomputes the checksum of a buffer that passes the verifier and has one; false otherwise.
// For tests and fuzz targets that change snapshot bytes on purpose and want the change to reach
// the checks behind the checksum.
bool reseal(std::vector<uint8_t>& bytes);

// Decodes one (not size-prefixed) snapshot. Checks, in order: the size, the file identifier,
// the FlatBuffers verifier (depth, table and size limits), the format version, the checksum
// (CRC-32 of the whole buffer), then that every array has the length its counts give it and
// that the recorded results are outputs a solve could give (finite, valid paths). Throws
// steel::Error (INVALID_ARGUMENT) whose message starts with `where`. Reads data only; data
// needs no alignment.
Snapshot decode(const void* data, uint64_t size, const char* where);

// Whether the bytes start like a snapshot / like a capture stream (identifier check only).
bool looks_like_snapshot(const void* data, uint64_t size);
bool looks_like_capture(const void* data, uint64_t size);

// One record of a capture stream: where its snapshot bytes are (after the length prefix).
struct Record {
    uint64_t offset;
    uint64_t size;
};

// Splits a capture stream into its records. Checks each length prefix against what is left; a
// truncated or impossible one ends the stream's good part (a capture cut short by a crash, or
// damaged). Without bad_tail that throws steel::Error (INVALID_ARGUMENT, message starting with
// `where`, naming the record and its byte offset); with it, the complete records before it are
// returned and *bad_tail gets that message (it is left as it was when the whole stream is good).
// Does not decode the records.
std::vector<Record> split_capture(const void* data, uint64_t size, const char* where,
                                  std::string* bad_tail = nullptr);

// A snapshot of world `world` alone (rows, scene, results and stats sliced; desc.world_count 1).
// Throws steel::Error (INVALID_ARGUMENT) if the world is out of range.
Snapshot extract_world(const Snapshot& snapshot, uint32_t world);

// Reads a whole file; throws steel::Error (INVALID_ARGUMENT naming the path and the system's
// reason) if it cannot be opened or read, or is larger than max_bytes (checked before reading).
std::vector<uint8_t> read_file(const char* path, uint64_t max_bytes, const char* where);

// Writes a whole file through a temporary file in the same folder and a rename, so a failed
// write leaves any previous file as it was. Throws steel::Error (INVALID_ARGUMENT) on failure.
void write_file_atomically(const char* path, const std::vector<uint8_t>& bytes, const char* where);

} // namespace snapshot
} // namespace steel
