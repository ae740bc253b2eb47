// Encoding and decoding of snapshots with the FlatBuffers code flatc generates from
// steel_snapshot.fbs. The only file that sees FlatBuffers types.
//
// Decoding never trusts the buffer: the size is checked first, then the verifier runs with
// tight limits, then the format version and the checksum, and only then is anything read, with
// every array's length checked against the counts that size it. Arrays are copied out with
// memcpy, never read in place: the verifier checks a vector's length field but not that its
// doubles are 8-aligned, and a corrupt file may well misalign them.
#include "snapshot.hpp"

#include "../error.hpp"

#include "steel_snapshot_generated.h"

#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <initializer_list>

static_assert(FLATBUFFERS_LITTLEENDIAN, "snapshots are copied as little-endian arrays");
// A new field in one of these structs must be added to steel_snapshot.fbs and to this file
// (encode and decode) before the sizes below are updated.
static_assert(sizeof(steel_batch_desc) == 24,
              "steel_batch_desc changed: update the snapshot schema");
static_assert(sizeof(steel_solve_options) == 64,
              "steel_solve_options changed: update the snapshot schema");
static_assert(sizeof(steel_rows_desc) == 136,
              "steel_rows_desc changed: update the snapshot schema");
static_assert(sizeof(steel_world_stats) == 40,
              "steel_world_stats changed: update the snapshot schema");

namespace steel {
namespace snapshot {

namespace {

// Verifier limits: a snapshot has seven tables at depth three; anything beyond these is not one.
constexpr uint32_t kMaxDepth = 16;
constexpr uint32_t kMaxTables = 64;

[[noreturn]] void bad(const char* where, const std::string& what) {
    fail(STEEL_ERROR_INVALID_ARGUMENT, std::string(where) + ": " + what);
}

// ---- checksum: CRC-32 with the IEEE polynomial (reflected 0xEDB88320), as zlib and PNG ----

struct CrcTable {
    uint32_t entry[256];
    CrcTable() {
        for (uint32_t n = 0; n < 256; ++n) {
            uint32_t c = n;
            for (int k = 0; k < 8; ++k)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            entry[n] = c;
        }
    }
};

// Continues a CRC (start from 0) over bytes.
uint32_t crc32_update(uint32_t crc, const uint8_t* bytes, uint64_t size) {
    static const CrcTable table;
    crc = ~crc;
    for (uint64_t k = 0; k < size; ++k)
        crc = table.entry[(crc ^ bytes[k]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

// The CRC of a snapshot buffer with the 4 bytes of its crc32 field (at field_offset) taken as 0.
uint32_t snapshot_crc(const uint8_t* bytes, uint64_t size, uint64_t field_offset) {
    static const uint8_t zeros[4] = {0, 0, 0, 0};
    uint32_t crc = crc32_update(0, bytes, field_offset);
    crc = crc32_update(crc, zeros, 4);
    return crc32_update(crc, bytes + field_offset + 4, size - field_offset - 4);
}

// Stores the checksum of a finished, verified snapshot buffer in place.
void seal(uint8_t* bytes, uint64_t size) {
    fb::Checksum* checksum = fb::GetMutableSnapshot(bytes)->mutable_checksum();
    const uint64_t offset = uint64_t(reinterpret_cast<uint8_t*>(checksum) - bytes);
    checksum->mutate_crc32(snapshot_crc(bytes, size, offset));
}

// ---- encode ----

template <class T>
flatbuffers::Offset<flatbuffers::Vector<T>> vector_of(flatbuffers::FlatBufferBuilder& builder,
                                                      const std::vector<T>& values) {
    return builder.CreateVector(values);
}

// An optional array is written only when present, so "absent" survives a round trip.
template <class T>
flatbuffers::Offset<flatbuffers::Vector<T>>
optional_vector_of(flatbuffers::FlatBufferBuilder& builder, const std::vector<T>& values) {
    return values.empty() ? 0 : builder.CreateVector(values);
}

flatbuffers::Offset<fb::Rows> encode_rows(flatbuffers::FlatBufferBuilder& builder,
                                          const Rows& rows) {
    // Children first: FlatBuffers builds bottom-up.
    const auto dofs = vector_of(builder, rows.world_dof_counts);
    const auto counts = vector_of(builder, rows.world_row_counts);
    const auto v_hat = vector_of(builder, rows.unconstrained_velocity);
    const auto offsets = vector_of(builder, rows.block_offset);
    const auto lengths = vector_of(builder, rows.block_length);
    const auto jacobian = vector_of(builder, rows.jacobian);
    const auto response = vector_of(builder, rows.response);
    const auto bias = vector_of(builder, rows.bias);
    const auto kind = vector_of(builder, rows.kind);
    const auto lower = optional_vector_of(builder, rows.lower);
    const auto upper = optional_vector_of(builder, rows.upper);
    const auto normal = optional_vector_of(builder, rows.normal_row);
    const auto friction = optional_vector_of(builder, rows.friction);
    const auto regularization = optional_vector_of(builder, rows.regularization);
    const auto initial = optional_vector_of(builder, rows.initial_impulse);
    fb::RowsBuilder table(builder);
    table.add_world_dof_counts(dofs);
    table.add_world_row_counts(counts);
    table.add_unconstrained_velocity(v_hat);
    table.add_block_offset(offsets);
    table.add_block_length(lengths);
    table.add_jacobian(jacobian);
    table.add_response(response);
    table.add_bias(bias);
    table.add_kind(kind);
    table.add_lower(lower);
    table.add_upper(upper);
    table.add_normal_row(normal);
    table.add_friction(friction);
    table.add_regularization(regularization);
    table.add_initial_impulse(initial);
    return table.Finish();
}

flatbuffers::Offset<fb::Scene> encode_scene(flatbuffers::FlatBufferBuilder& builder,
                                            const scene::SceneInputs& scene) {
    // Every array first (FlatBuffers builds bottom-up); present ones only, empty or not.
#define STEEL_SCENE_VECTOR(type, name, unit, per)                                                  \
    const auto name = scene.name.present ? builder.CreateVector(scene.name.values) : 0;
    STEEL_SCENE_ARRAYS(STEEL_SCENE_VECTOR)
#undef STEEL_SCENE_VECTOR
    fb::SceneBuilder table(builder);
    table.add_dt(scene.dt);
    table.add_baumgarte(scene.baumgarte);
    table.add_restitution_threshold(scene.restitution_threshold);
    table.add_friction_model(scene.friction_model);
    table.add_drive_mode(scene.drive_mode);
#define STEEL_SCENE_ADD(type, name, unit, per) table.add_##name(name);
    STEEL_SCENE_ARRAYS(STEEL_SCENE_ADD)
#undef STEEL_SCENE_ADD
    return table.Finish();
}

flatbuffers::Offset<fb::Results> encode_results(flatbuffers::FlatBufferBuilder& builder,
                                                const Results& results) {
    std::vector<fb::WorldStats> stats;
    stats.reserve(results.stats.size());
    for (const steel_world_stats& s : results.stats)
        stats.emplace_back(s.path, s.sweeps, s.flags, s.momentum_restarts, s.residual,
                           s.first_residual);
    const auto impulses = vector_of(builder, results.impulses);
    const auto velocities = vector_of(builder, results.velocities);
    const auto world_stats = builder.CreateVectorOfStructs(stats);
    const auto history = optional_vector_of(builder, results.residual_history);
    fb::ResultsBuilder table(builder);
    table.add_impulses(impulses);
    table.add_velocities(velocities);
    table.add_world_stats(world_stats);
    table.add_history_stride(results.history_stride);
    table.add_residual_history(history);
    return table.Finish();
}

// ---- decode ----

// Copies a vector of scalars out of the (verified) buffer; an absent vector gives an empty one.
template <class T> std::vector<T> copy_out(const flatbuffers::Vector<T>* vector) {
    std::vector<T> out;
    if (vector == nullptr) return out;
    out.resize(vector->size());
    if (!out.empty()) std::memcpy(out.data(), vector->Data(), out.size() * sizeof(T));
    return out;
}

void require_length(const char* where, const char* field, uint64_t length, uint64_t expected,
                    const char* why) {
    if (length != expected)
        bad(where, format("the snapshot's %s has %" PRIu64 " entries but %s gives %" PRIu64, field,
                          length, why, expected));
}

void require_optional_length(const char* where, const char* field, uint64_t length,
                             uint64_t total_rows) {
    if (length != 0 && length != total_rows)
        bad(where, format("the snapshot's %s has %" PRIu64 " entries but there are %" PRIu64
                          " rows (it must have one per row, or be absent)",
                          field, length, total_rows));
}

Rows decode_rows(const fb::Rows& table, uint32_t world_count, const char* where) {
    Rows rows;
    rows.world_dof_counts = copy_out(table.world_dof_counts());
    rows.world_row_counts = copy_out(table.world_row_counts());
    require_length(where, "rows.world_dof_counts", rows.world_dof_counts.size(), world_count,
                   "desc.world_count");
    require_length(where, "rows.world_row_counts", rows.world_row_counts.size(), world_count,
                   "desc.world_count");
    const uint64_t total_dofs = rows.total_dofs(), total_rows = rows.total_rows();

    rows.unconstrained_velocity = copy_out(table.unconstrained_velocity());
    require_length(where, "rows.unconstrained_velocity", rows.unconstrained_velocity.size(),
                   total_dofs, "the sum of world_dof_counts");
    rows.block_offset = copy_out(table.block_offset());
    rows.block_length = copy_out(table.block_length());
    require_length(where, "rows.block_offset", rows.block_offset.size(), 2 * total_rows,
                   "twice the sum of world_row_counts");
    require_length(where, "rows.block_length", rows.block_length.size(), 2 * total_rows,
                   "twice the sum of world_row_counts");
    rows.jacobian = copy_out(table.jacobian());
    rows.response = copy_out(table.response());
    require_length(where, "rows.response", rows.response.size(), rows.jacobian.size(),
                   "rows.jacobian's length");
    // The blocks tile J exactly (the upload requires value_count to be their sum), so a reader
    // that slices J by the block lengths before the upload checks run, as extract_world and
    // steel-replay's --info do, stays inside it.
    uint64_t block_values = 0, row = 0;
    for (uint32_t w = 0; w < world_count; ++w)
        for (uint32_t r = 0; r < rows.world_row_counts[w]; ++r, ++row) {
            block_values += uint64_t(rows.block_length[2 * row]) + rows.block_length[2 * row + 1];
            if (block_values > rows.jacobian.size())
                bad(where, format("world %u, row %u (batch row %" PRIu64
                                  "): the snapshot's block_length puts "
                                  "its blocks' end at J value %" PRIu64
                                  ", past the %zu entries of rows.jacobian "
                                  "(the block lengths must add up to its length)",
                                  w, r, row, block_values, rows.jacobian.size()));
        }
    require_length(where, "rows.jacobian", rows.jacobian.size(), block_values,
                   "the sum of rows.block_length");
    rows.bias = copy_out(table.bias());
    rows.kind = copy_out(table.kind());
    require_length(where, "rows.bias", rows.bias.size(), total_rows, "the sum of world_row_counts");
    require_length(where, "rows.kind", rows.kind.size(), total_rows, "the sum of world_row_counts");
    rows.lower = copy_out(table.lower());
    rows.upper = copy_out(table.upper());
    rows.normal_row = copy_out(table.normal_row());
    rows.friction = copy_out(table.friction());
    rows.regularization = copy_out(table.regularization());
    rows.initial_impulse = copy_out(table.initial_impulse());
    require_optional_length(where, "rows.lower", rows.lower.size(), total_rows);
    require_optional_length(where, "rows.upper", rows.upper.size(), total_rows);
    require_optional_length(where, "rows.normal_row", rows.normal_row.size(), total_rows);
    require_optional_length(where, "rows.friction", rows.friction.size(), total_rows);
    require_optional_length(where, "rows.regularization", rows.regularization.size(), total_rows);
    require_optional_length(where, "rows.initial_impulse", rows.initial_impulse.size(), total_rows);
    return rows;
}

template <class T> void copy_out(const flatbuffers::Vector<T>* vector, scene::SceneArray<T>& out) {
    out.present = vector != nullptr;
    out.values = copy_out(vector);
}

// The scene's form: every array's length against the counts. Its meaning is the upload's.
scene::SceneInputs decode_scene(const fb::Scene& table, uint32_t world_count, const char* where) {
    scene::SceneInputs scene;
    scene.world_count = world_count;
    scene.dt = table.dt();
    scene.baumgarte = table.baumgarte();
    scene.restitution_threshold = table.restitution_threshold();
    scene.friction_model = table.friction_model();
    scene.drive_mode = table.drive_mode();
#define STEEL_SCENE_COPY(type, name, unit, per) copy_out(table.name(), scene.name);
    STEEL_SCENE_ARRAYS(STEEL_SCENE_COPY)
#undef STEEL_SCENE_COPY
    scene.check_lengths(where);
    return scene;
}

// Outputs of a solve are finite (a world that went non-finite was reset, SPEC 9) and, for a
// float32 batch, floats. Residuals may be non-finite only in a world flagged NONFINITE.
void check_output_value(const char* where, const char* field, uint64_t index, double value,
                        bool float32) {
    if (!std::isfinite(value))
        bad(where,
            format("the snapshot's %s[%" PRIu64 "] = %g is not finite (a solve never outputs that)",
                   field, index, value));
    if (float32 && std::fabs(value) > double(FLT_MAX))
        bad(where, format("the snapshot's %s[%" PRIu64 "] = %g does not fit the batch's float32",
                          field, index, value));
}

// A residual is >= 0; only a world flagged NONFINITE may report NaN or infinity.
bool residual_allowed(double residual, uint32_t flags) {
    if (flags & STEEL_WORLD_NONFINITE) return !(residual < 0);
    return std::isfinite(residual) && residual >= 0;
}

static_assert(sizeof(fb::WorldStats) <= 64,
              "snapshot_size_bound counts 64 bytes for a world's stats");

Results decode_results(const fb::Results& table, const Snapshot& snapshot, const char* where) {
    const Rows& rows = snapshot.rows;
    const uint32_t world_count = snapshot.desc.world_count;
    const bool float32 = snapshot.desc.precision == STEEL_PRECISION_FLOAT32;
    Results results;
    results.impulses = copy_out(table.impulses());
    results.velocities = copy_out(table.velocities());
    require_length(where, "results.impulses", results.impulses.size(), rows.total_rows(),
                   "the sum of world_row_counts");
    require_length(where, "results.velocities", results.velocities.size(), rows.total_dofs(),
                   "the sum of world_dof_counts");
    for (uint64_t k = 0; k < results.impulses.size(); ++k)
        check_output_value(where, "results.impulses", k, results.impulses[k], float32);
    for (uint64_t k = 0; k < results.velocities.size(); ++k)
        check_output_value(where, "results.velocities", k, results.velocities[k], float32);

    const auto* stats = table.world_stats();
    const uint64_t stats_count = stats ? stats->size() : 0;
    require_length(where, "results.world_stats", stats_count, world_count, "desc.world_count");
    results.stats.resize(world_count);
    for (uint32_t w = 0; w < world_count; ++w) {
        fb::WorldStats in; // copied out: the struct vector may sit misaligned in a corrupt file
        std::memcpy(static_cast<void*>(&in), stats->Data() + uint64_t(w) * sizeof(fb::WorldStats),
                    sizeof(in));
        steel_world_stats& out = results.stats[w];
        out.struct_size = sizeof(steel_world_stats);
        out.path = in.path();
        out.sweeps = in.sweeps();
        out.flags = in.flags();
        out.momentum_restarts = in.momentum_restarts();
        out.residual = in.residual();
        out.first_residual = in.first_residual();
        if (out.path != STEEL_PATH_GENERAL && out.path != STEEL_PATH_DENSE)
            bad(where,
                format("world %u: the snapshot's stats.path = %d is neither STEEL_PATH_GENERAL nor "
                       "STEEL_PATH_DENSE",
                       w, out.path));
        for (double residual : {out.residual, out.first_residual})
            if (!residual_allowed(residual, out.flags))
                bad(where, format("world %u: the snapshot's stats residual %g must be >= 0, and "
                                  "finite unless the "
                                  "world is flagged STEEL_WORLD_NONFINITE",
                                  w, residual));
    }

    results.history_stride = table.history_stride();
    results.residual_history = copy_out(table.residual_history());
    const uint64_t history_expected = uint64_t(world_count) * results.history_stride;
    require_length(where, "results.residual_history", results.residual_history.size(),
                   history_expected, "desc.world_count times results.history_stride");
    // The history reader copies a world's `sweeps` entries from its stretch of the history.
    if (results.history_stride != 0)
        for (uint32_t w = 0; w < world_count; ++w)
            if (results.stats[w].sweeps > results.history_stride)
                bad(where,
                    format("world %u: the snapshot's stats.sweeps = %u is more than the %u entries "
                           "a world has in results.residual_history (results.history_stride)",
                           w, results.stats[w].sweeps, results.history_stride));
    for (uint64_t k = 0; k < results.residual_history.size(); ++k) {
        const double value = results.residual_history[k];
        const uint32_t w = uint32_t(k / results.history_stride);
        if (!residual_allowed(value, results.stats[w].flags))
            bad(where, format("world %u: the snapshot's residual_history[%" PRIu64
                              "] = %g must be >= 0, and "
                              "finite unless the world is flagged STEEL_WORLD_NONFINITE",
                              w, k - uint64_t(w) * results.history_stride, value));
    }
    return results;
}

std::string printable_identifier(const uint8_t* bytes) {
    std::string text;
    for (int k = 0; k < 4; ++k) {
        const uint8_t c = bytes[k];
        text += c >= 0x20 && c < 0x7f ? std::string(1, char(c)) : format("\\x%02x", c);
    }
    return text;
}

bool identifier_at(const void* data, uint64_t size, uint64_t offset) {
    return size >= offset + 4 &&
           std::memcmp(static_cast<const uint8_t*>(data) + offset, kFileIdentifier, 4) == 0;
}

} // namespace

uint64_t Rows::total_dofs() const {
    uint64_t total = 0;
    for (uint32_t n : world_dof_counts)
        total += n;
    return total;
}

uint64_t Rows::total_rows() const {
    uint64_t total = 0;
    for (uint32_t m : world_row_counts)
        total += m;
    return total;
}

steel_rows_desc Rows::desc() const {
    steel_rows_desc desc;
    steel_rows_desc_default(&desc);
    auto pointer = [](const auto& values) { return values.empty() ? nullptr : values.data(); };
    desc.world_count = uint32_t(world_dof_counts.size());
    desc.world_dof_counts = pointer(world_dof_counts);
    desc.world_row_counts = pointer(world_row_counts);
    desc.unconstrained_velocity = pointer(unconstrained_velocity);
    desc.block_offset = pointer(block_offset);
    desc.block_length = pointer(block_length);
    desc.value_count = jacobian.size();
    desc.jacobian = pointer(jacobian);
    desc.response = pointer(response);
    desc.bias = pointer(bias);
    desc.kind = pointer(kind);
    desc.lower = pointer(lower);
    desc.upper = pointer(upper);
    desc.normal_row = pointer(normal_row);
    desc.friction = pointer(friction);
    desc.regularization = pointer(regularization);
    desc.initial_impulse = pointer(initial_impulse);
    return desc;
}

std::vector<uint8_t> encode(const Snapshot& snapshot, bool size_prefixed) {
    flatbuffers::FlatBufferBuilder builder(1024);
    // Write every scalar, defaults included: FlatBuffers would otherwise drop a field equal to its
    // default, and -0.0 == 0.0, so a cfm of -0.0 would come back as +0.0.
    builder.ForceDefaults(true);
    const auto version = builder.CreateString(snapshot.producer_version);
    const auto producer = fb::CreateProducer(builder, version, snapshot.producer_abi_version,
                                             snapshot.producer_features);
    const steel_batch_desc& d = snapshot.desc;
    const auto desc =
        fb::CreateBatchDesc(builder, d.backend, d.precision, d.world_count, d.thread_count);
    const steel_solve_options& o = snapshot.options;
    const auto options = fb::CreateSolveOptions(
        builder, o.iterations, o.tolerance, o.cfm, o.path, o.warm_start, o.contact_regularization,
        o.nesterov_momentum, o.enable_bilateral_preelimination, o.record_residual_history,
        o.solve_mode, o.articulated_contact_response);
    const auto rows = snapshot.has_rows ? encode_rows(builder, snapshot.rows) : 0;
    const auto results = snapshot.solved ? encode_results(builder, snapshot.results) : 0;
    const auto scene = snapshot.has_scene ? encode_scene(builder, snapshot.scene) : 0;
    fb::SnapshotBuilder root(builder);
    root.add_format_version(snapshot.format_version);
    root.add_producer(producer);
    root.add_desc(desc);
    root.add_options(options);
    root.add_rows(rows);
    root.add_results(results);
    const fb::Checksum placeholder(0);
    root.add_checksum(&placeholder);
    root.add_scene(scene);
    fb::FinishSnapshotBuffer(builder, root.Finish());
    // The length prefix is written here rather than by FlatBuffers' FinishSizePrefixed, which
    // aligns the buffer to the prefix: this way the bytes after the prefix are a snapshot aligned
    // to itself, and a record cut out of a capture stream loads on its own.
    const uint64_t prefix = size_prefixed ? 4 : 0;
    const uint32_t size = builder.GetSize();
    if (size > kMaxSnapshotBytes) // every writer's check_snapshot_fits refuses such a batch first
        fail(STEEL_ERROR_INTERNAL,
             format("encoding a snapshot: %u bytes pass the format's limit", size));
    std::vector<uint8_t> bytes(prefix + size);
    if (size_prefixed) std::memcpy(bytes.data(), &size, 4); // little-endian (static_assert above)
    std::memcpy(bytes.data() + prefix, builder.GetBufferPointer(), size);
    seal(bytes.data() + prefix, size);
    return bytes;
}

bool reseal(std::vector<uint8_t>& bytes) {
    if (bytes.size() < 8 || bytes.size() > kMaxSnapshotBytes) return false;
    flatbuffers::Verifier::Options limits;
    limits.max_depth = kMaxDepth;
    limits.max_tables = kMaxTables;
    flatbuffers::Verifier verifier(bytes.data(), bytes.size(), limits);
    if (!fb::VerifySnapshotBuffer(verifier) || fb::GetSnapshot(bytes.data())->checksum() == nullptr)
        return false;
    seal(bytes.data(), bytes.size());
    return true;
}

bool looks_like_snapshot(const void* data, uint64_t size) {
    return data && identifier_at(data, size, 4);
}

bool looks_like_capture(const void* data, uint64_t size) {
    return data && identifier_at(data, size, 8);
}

Snapshot decode(const void* data, uint64_t size, const char* where) {
    // 1. Size: the root offset and the identifier at least, and within FlatBuffers' limit.
    if (data == nullptr && size > 0) bad(where, "the snapshot data pointer is NULL");
    if (size < 8)
        bad(where, format("%" PRIu64 " bytes are too few for a snapshot (at least 8)", size));
    if (size > kMaxSnapshotBytes)
        bad(where, format("%" PRIu64 " bytes are more than a snapshot may have (%" PRIu64 ")", size,
                          kMaxSnapshotBytes));
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    if (!identifier_at(data, size, 4)) {
        if (identifier_at(data, size, 8))
            bad(where, "this is a capture stream (size-prefixed snapshots, STEEL_CAPTURE), not a "
                       "single snapshot; "
                       "split it into its records first (steel-replay does)");
        bad(where, format("not a Steel snapshot: the file identifier is '%s', expected '%s'",
                          printable_identifier(bytes + 4).c_str(), kFileIdentifier));
    }
    // FlatBuffers reads scalars in place, so the buffer itself must be 8-aligned.
    std::vector<uint64_t> aligned;
    if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
        aligned.resize((size + 7) / 8);
        std::memcpy(aligned.data(), data, size);
        bytes = reinterpret_cast<const uint8_t*>(aligned.data());
    }

    // 2. The verifier: every offset, vector and string inside the buffer, within the limits.
    flatbuffers::Verifier::Options limits;
    limits.max_depth = kMaxDepth;
    limits.max_tables = kMaxTables;
    limits.check_alignment = true;
    flatbuffers::Verifier verifier(bytes, size_t(size), limits);
    if (!fb::VerifySnapshotBuffer(verifier))
        bad(where, format("the snapshot (%" PRIu64
                          " bytes) is corrupt or truncated: the FlatBuffers verifier "
                          "rejects it",
                          size));
    const fb::Snapshot& root = *fb::GetSnapshot(bytes);

    // 3. Steel's own version, then every table and array against its counts.
    Snapshot snapshot;
    snapshot.format_version = root.format_version();
    if (snapshot.format_version == 0)
        bad(where, "the snapshot has no format_version (it was not written by Steel)");
    if (snapshot.format_version > kFormatVersion)
        bad(where, format("the snapshot has format version %u, newer than the %u this library "
                          "(Steel %s) reads; "
                          "replay it with a newer Steel",
                          snapshot.format_version, kFormatVersion, steel_version()));
    const fb::Checksum* checksum = root.checksum();
    if (checksum == nullptr)
        bad(where, "the snapshot has no checksum (it was not written by Steel)");
    const uint64_t checksum_offset = uint64_t(reinterpret_cast<const uint8_t*>(checksum) - bytes);
    const uint32_t computed = snapshot_crc(bytes, size, checksum_offset);
    if (computed != checksum->crc32())
        bad(where, format("the snapshot is damaged: its CRC-32 is %08x but it records %08x "
                          "(changed after it was "
                          "written?)",
                          computed, checksum->crc32()));
    if (const fb::Producer* producer = root.producer()) {
        if (producer->version()) snapshot.producer_version = producer->version()->str();
        snapshot.producer_abi_version = producer->abi_version();
        snapshot.producer_features = producer->build_features();
    }
    const fb::BatchDesc* desc = root.desc();
    if (desc == nullptr) bad(where, "the snapshot has no desc table");
    steel_batch_desc_default(&snapshot.desc);
    snapshot.desc.backend = desc->backend();
    snapshot.desc.precision = desc->precision();
    snapshot.desc.world_count = desc->world_count();
    snapshot.desc.thread_count = desc->thread_count();
    const fb::SolveOptions* options = root.options();
    if (options == nullptr) bad(where, "the snapshot has no options table");
    steel_solve_options_default(&snapshot.options);
    snapshot.options.iterations = options->iterations();
    snapshot.options.tolerance = options->tolerance();
    snapshot.options.cfm = options->cfm();
    snapshot.options.path = options->path();
    snapshot.options.warm_start = options->warm_start();
    snapshot.options.contact_regularization = options->contact_regularization();
    snapshot.options.nesterov_momentum = options->nesterov_momentum();
    snapshot.options.enable_bilateral_preelimination = options->enable_bilateral_preelimination();
    snapshot.options.record_residual_history = options->record_residual_history();
    snapshot.options.solve_mode = options->solve_mode();
    snapshot.options.articulated_contact_response = options->articulated_contact_response();

    if (const fb::Rows* rows = root.rows()) {
        snapshot.has_rows = true;
        snapshot.rows = decode_rows(*rows, snapshot.desc.world_count, where);
    }
    if (const fb::Results* results = root.results()) {
        if (!snapshot.has_rows) bad(where, "the snapshot has results but no rows");
        snapshot.solved = true;
        snapshot.results = decode_results(*results, snapshot, where);
    }
    if (const fb::Scene* scene = root.scene()) {
        if (!snapshot.has_rows) bad(where, "the snapshot has a scene but no rows");
        snapshot.has_scene = true;
        snapshot.scene = decode_scene(*scene, snapshot.desc.world_count, where);
    }
    return snapshot;
}

std::vector<Record> split_capture(const void* data, uint64_t size, const char* where,
                                  std::string* bad_tail) {
    if (data == nullptr && size > 0) bad(where, "the capture data pointer is NULL");
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    std::vector<Record> records;
    std::string tail;
    uint64_t at = 0;
    while (at < size && tail.empty()) {
        uint32_t length = 0;
        if (size - at >= 4)
            std::memcpy(&length, bytes + at, 4); // little-endian, like every FlatBuffers scalar
        if (size - at < 4)
            tail = format("capture record %zu at byte %" PRIu64 ": %" PRIu64
                          " bytes left are too few for a length prefix (truncated capture?)",
                          records.size(), at, size - at);
        else if (length > size - at - 4)
            tail = format("capture record %zu at byte %" PRIu64 " claims %u bytes but only %" PRIu64
                          " are left (truncated capture?)",
                          records.size(), at, length, size - at - 4);
        else {
            records.push_back({at + 4, length});
            at += 4 + uint64_t(length);
        }
    }
    if (tail.empty()) return records;
    if (bad_tail == nullptr) bad(where, tail);
    *bad_tail = std::string(where) + ": " + tail;
    return records;
}

} // namespace snapshot
} // namespace steel
