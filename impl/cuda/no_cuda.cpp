// The CUDA backend's entry points in a library built without it (no nvcc, or STEEL_CUDA=OFF):
// no CUDA batch can exist, so only attach_backend can be reached with one, and it refuses.
#include "device_backend.hpp"

#include "../batch.hpp"
#include "../error.hpp"

namespace steel::cuda {

namespace {
[[noreturn]] void not_built(const char* what) {
    fail(STEEL_ERROR_UNSUPPORTED,
         format("%s: this build of Steel has no CUDA backend (it was built without "
                "nvcc or with STEEL_CUDA=OFF; steel_build_features() lacks "
                "STEEL_FEATURE_CUDA)",
                what));
}
} // namespace

void DeviceBatchDeleter::operator()(DeviceBatch*) const noexcept {}

bool compiled_in() {
    return false;
}

void attach_backend(Batch& batch, const char* where) {
    if (batch.desc.backend == STEEL_BACKEND_CUDA) not_built(where);
}

template <class Real> void mirror_incoming_rows(Batch&, const RowSet<Real>&, const char*) {}
template void mirror_incoming_rows(Batch&, const RowSet<float>&, const char*);
template void mirror_incoming_rows(Batch&, const RowSet<double>&, const char*);
void rows_changed(Batch&) {}
void options_changing(Batch&, const steel_solve_options&, const char*) {}
void solve(Batch&, void*, bool) {
    not_built("steel_batch_solve");
}
void settle_host_mirror(Batch&, const char*) {}
void settle_host_results(Batch&, const char*) {}
void upload_rows_from_device(Batch&, const steel_rows_desc&, void*) {
    not_built("steel_batch_upload_rows_device");
}
void update_values_from_device(Batch&, const steel_row_values_desc&, void*) {
    not_built("steel_batch_update_values_device");
}
void read_to_device(Batch&, DeviceOutput, double*, uint64_t, uint64_t*, void*, const char* where) {
    not_built(where);
}

} // namespace steel::cuda
