// The snapshot functions of steel.h: save, load, capture. Check, convert, forward, catch; the
// format lives in impl/snapshot/, and every rule a loaded batch must meet is the rule of the
// call it stands for (batch_checks.hpp, impl/rows_upload.hpp).
#include "batch_checks.hpp"
#include "boundary.hpp"

#include "../impl/cuda/device_backend.hpp"
#include "../impl/handle_registry.hpp"
#include "../impl/rows_upload.hpp"
#include "../impl/scene/scene_rows.hpp"
#include "../impl/snapshot/capture.hpp"
#include "../impl/snapshot/snapshot.hpp"

#include <cstring>
#include <memory>
#include <string>

using namespace steel;

namespace {

// Uploads the snapshot's scene again, as steel_batch_upload_scene would: the record it leaves
// (for the propagation response and the scene readers) and its rows, which must have the counts
// of the rows the snapshot recorded, since its results are sized by them.
template <class Real>
std::unique_ptr<scene::SceneRecord> build_scene(const snapshot::Snapshot& in, uint32_t world_count,
                                                RowSet<Real>& rows, const char* where) {
    auto record = std::make_unique<scene::SceneRecord>();
    scene::BuiltRows built;
    try {
        const std::vector<steel_rows_desc> parts =
            scene::build_scene_rows_into(in.scene.desc(), world_count, *record, built);
        rows = build_row_set<Real>(parts.at(0), world_count, in.options.cfm,
                                   in.options.contact_regularization);
    } catch (const Error& error) {
        fail(error.status, format("%s: the snapshot's scene fails the upload checks: %s", where,
                                  error.message.c_str()));
    }
    for (uint32_t w = 0; w < world_count; ++w)
        if (rows.dof_count(w) != in.rows.world_dof_counts[w] ||
            rows.row_count(w) != in.rows.world_row_counts[w])
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("%s: world %u: the snapshot's scene builds %u DOFs and %u rows, but the "
                        "snapshot recorded %u DOFs and %u rows (written by a Steel whose scene "
                        "mode builds other rows?)",
                        where, w, rows.dof_count(w), rows.row_count(w), in.rows.world_dof_counts[w],
                        in.rows.world_row_counts[w]));
    return record;
}

// Builds the batch a decoded snapshot describes. The rows are validated (and built, from the scene
// when there is one) before the batch and its threads exist, so a bad file costs no more than
// its own checks.
template <class Real>
std::unique_ptr<Batch> build_batch(const snapshot::Snapshot& in, const steel_batch_desc& desc,
                                   const char* where) {
    const std::string options_where = std::string(where) + ": the snapshot's options";
    RowSet<Real> rows;
    std::unique_ptr<scene::SceneRecord> scene;
    if (in.has_scene) {
        scene = build_scene<Real>(in, desc.world_count, rows, where);
    } else if (in.has_rows) {
        try {
            rows = build_row_set<Real>(in.rows.desc(), desc.world_count, in.options.cfm,
                                       in.options.contact_regularization);
        } catch (const Error& error) {
            fail(error.status, format("%s: the snapshot's rows fail the upload checks: %s", where,
                                      error.message.c_str()));
        }
    }
    steel_solve_options defaults;
    steel_solve_options_default(&defaults);
    auto batch = std::make_unique<Batch>(desc, defaults);
    BatchState<Real>& state = std::get<BatchState<Real>>(batch->state);
    if (in.has_rows) {
        state.rows = std::move(rows);
        state.has_rows = true;
    }
    batch->scene = std::move(scene);
    if (batch->scene) batch->scene_inputs = in.scene;
    // Exactly steel_batch_set_options on a batch holding these rows.
    set_batch_options(*batch, in.options, options_where.c_str());
    if (in.solved) snapshot::restore_results(*batch, in.results);
    cuda::attach_backend(*batch, where); // a CUDA snapshot: finds the device and mirrors the rows
    return batch;
}

void check_load_arguments(uint32_t abi_version, const steel_batch* out, const char* where) {
    if (out == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: out is NULL", where));
    if (abi_version != STEEL_ABI_VERSION)
        fail(STEEL_ERROR_ABI_MISMATCH,
             format("%s: the caller's header has ABI version %u but this library (Steel %s) has %u",
                    where, abi_version, steel_version(), STEEL_ABI_VERSION));
}

// Form first (size, verifier, lengths, recorded outputs), then meaning, then the batch.
void load(const void* data, uint64_t size, steel_batch* out, const char* where) {
    const snapshot::Snapshot decoded = snapshot::decode(data, size, where);
    const std::string desc_where = std::string(where) + ": the snapshot's desc";
    const steel_batch_desc desc = checked_batch_desc(decoded.desc, desc_where.c_str());
    check_options(decoded.options, (std::string(where) + ": the snapshot's options").c_str());
    std::unique_ptr<Batch> batch = desc.precision == STEEL_PRECISION_FLOAT32
                                       ? build_batch<float>(decoded, desc, where)
                                       : build_batch<double>(decoded, desc, where);
    out->id = register_batch(std::move(batch));
}

} // namespace

extern "C" {

steel_status steel_batch_save_memory(steel_batch batch, void* out, uint64_t capacity,
                                     uint64_t* out_size) {
    constexpr const char* where = "steel_batch_save_memory";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        cuda::settle_host_mirror(b, where);
        if (out == nullptr && out_size == nullptr)
            fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: out and out_size are both NULL", where));
        snapshot::check_snapshot_fits(b, where);
        const std::vector<uint8_t> bytes = snapshot::encode(snapshot::export_batch(b));
        if (out_size) *out_size = bytes.size();
        if (out == nullptr) return;
        if (capacity < bytes.size())
            fail(STEEL_ERROR_BUFFER_TOO_SMALL,
                 format("%s: capacity %llu is smaller than the snapshot's %llu bytes", where,
                        (unsigned long long)capacity, (unsigned long long)bytes.size()));
        std::memcpy(out, bytes.data(), bytes.size());
    });
}

steel_status steel_batch_save_file(steel_batch batch, const char* path) {
    constexpr const char* where = "steel_batch_save_file";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        cuda::settle_host_mirror(b, where);
        if (path == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: path is NULL", where));
        snapshot::check_snapshot_fits(b, where);
        snapshot::write_file_atomically(path, snapshot::encode(snapshot::export_batch(b)), where);
    });
}

steel_status steel_batch_load_memory(uint32_t abi_version, const void* data, uint64_t size,
                                     steel_batch* out) {
    constexpr const char* where = "steel_batch_load_memory";
    if (out) out->id = 0;
    return call_guarded(where, [&] {
        check_load_arguments(abi_version, out, where);
        load(data, size, out, where);
    });
}

steel_status steel_batch_load_file(uint32_t abi_version, const char* path, steel_batch* out) {
    constexpr const char* where = "steel_batch_load_file";
    if (out) out->id = 0;
    return call_guarded(where, [&] {
        check_load_arguments(abi_version, out, where);
        const std::vector<uint8_t> bytes =
            snapshot::read_file(path, snapshot::kMaxSnapshotBytes, where);
        load(bytes.data(), bytes.size(), out, (std::string(where) + ": '" + path + "'").c_str());
    });
}

steel_status steel_batch_set_capture(steel_batch batch, const char* path) {
    constexpr const char* where = "steel_batch_set_capture";
    return call_guarded(where,
                        [&] { snapshot::set_capture(lookup_batch(batch.id, where), path, where); });
}

} // extern "C"
