// The CUDA device-pointer functions of steel.h: check, forward to impl/cuda, catch. They need a
// CUDA batch; a CPU batch gets INVALID_ARGUMENT, a build without CUDA UNSUPPORTED.
#include "boundary.hpp"

#include "../impl/batch.hpp"
#include "../impl/cuda/device_backend.hpp"
#include "../impl/handle_registry.hpp"

using namespace steel;

namespace {

steel_row_values_desc default_values() {
    steel_row_values_desc values{};
    values.struct_size = sizeof(values);
    return values;
}

// The batch behind a device-pointer call, which must be a CUDA batch.
Batch& lookup_device_batch(steel_batch batch, const char* where) {
    Batch& b = lookup_batch(batch.id, where);
    if (!cuda::compiled_in())
        fail(STEEL_ERROR_UNSUPPORTED, format("%s: this build of Steel has no CUDA backend (built "
                                             "without nvcc or with STEEL_CUDA=OFF)",
                                             where));
    if (!b.device)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: the batch was created with backend = %d (CPU); device pointers need a "
                    "STEEL_BACKEND_CUDA "
                    "batch",
                    where, b.desc.backend));
    return b;
}

steel_status read_device(steel_batch batch, cuda::DeviceOutput which, double* out,
                         uint64_t capacity, uint64_t* out_count, void* stream, const char* where) {
    return call_guarded(where, [&] {
        Batch& b = lookup_device_batch(batch, where);
        cuda::read_to_device(b, which, out, capacity, out_count, stream, where);
    });
}

} // namespace

extern "C" {

steel_status steel_row_values_desc_init(steel_row_values_desc* out, uint32_t struct_size) {
    constexpr const char* where = "steel_row_values_desc_init";
    return call_guarded(where, [&] {
        write_versioned(out, struct_size, default_values(), where, "steel_row_values_desc");
    });
}

steel_status steel_batch_upload_rows_device(steel_batch batch, const steel_rows_desc* rows_in,
                                            void* stream) {
    constexpr const char* where = "steel_batch_upload_rows_device";
    return call_guarded(where, [&] {
        Batch& b = lookup_device_batch(batch, where);
        steel_rows_desc rows{};
        rows.struct_size = sizeof(rows);
        rows = read_versioned(rows_in, rows, where, "steel_rows_desc");
        cuda::upload_rows_from_device(b, rows, stream);
    });
}

steel_status steel_batch_update_values_device(steel_batch batch,
                                              const steel_row_values_desc* values_in,
                                              void* stream) {
    constexpr const char* where = "steel_batch_update_values_device";
    return call_guarded(where, [&] {
        Batch& b = lookup_device_batch(batch, where);
        const steel_row_values_desc values =
            read_versioned(values_in, default_values(), where, "steel_row_values_desc");
        if (values.reserved0 != 0)
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("%s: reserved0 = %u must be 0", where, values.reserved0));
        cuda::update_values_from_device(b, values, stream);
    });
}

steel_status steel_batch_solve_async(steel_batch batch, void* stream) {
    constexpr const char* where = "steel_batch_solve_async";
    return call_guarded(where, [&] {
        Batch& b = lookup_device_batch(batch, where);
        const bool has_rows = std::visit([](auto& state) { return state.has_rows; }, b.state);
        if (!has_rows) fail(STEEL_ERROR_NO_DATA, format("%s: no rows have been uploaded", where));
        cuda::solve(b, stream, false);
        b.results_options = b.options; // what a snapshot pairs with these results
        b.rows_updated_since_solve = false;
    });
}

steel_status steel_batch_read_impulses_device(steel_batch batch, double* out, uint64_t capacity,
                                              uint64_t* out_count, void* stream) {
    return read_device(batch, cuda::DeviceOutput::impulse, out, capacity, out_count, stream,
                       "steel_batch_read_impulses_device");
}

steel_status steel_batch_read_velocities_device(steel_batch batch, double* out, uint64_t capacity,
                                                uint64_t* out_count, void* stream) {
    return read_device(batch, cuda::DeviceOutput::velocity, out, capacity, out_count, stream,
                       "steel_batch_read_velocities_device");
}

} // extern "C"
