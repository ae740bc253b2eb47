// The CUDA backend as the rest of the library sees it: plain C++, no CUDA types, so capi/ and
// impl/ compile the same with or without nvcc. impl/cuda/device_batch.cu implements it when the
// backend is built; impl/cuda/no_cuda.cpp answers UNSUPPORTED when it is not.
//
// The host side of a CUDA batch stays the reference copy: uploads are validated and built on
// the host exactly as for the CPU backend, then mirrored to the device. Two things can make the
// host copy stale, and both are settled lazily by settle_host_mirror():
//   - steel_batch_solve_async leaves the results on the device;
//   - steel_batch_update_values_device writes new numbers straight into the device rows.
// The batch remembers that work with an event on the caller's stream. Once such a call was
// captured in a CUDA graph, replays change the device unseen: the batch then waits for the
// whole device and copies back on every host read.
#pragma once

#include "../row_set.hpp"

#include <steel/steel.h>

#include <cstdint>
#include <memory>

namespace steel {

struct Batch;

namespace cuda {

struct DeviceBatch; // impl/cuda/device_batch.cu

struct DeviceBatchDeleter {
    void operator()(DeviceBatch* device) const noexcept;
};
using DeviceBatchPtr = std::unique_ptr<DeviceBatch, DeviceBatchDeleter>;

// True when this library was built with the CUDA backend (STEEL_FEATURE_CUDA).
bool compiled_in();

// For a STEEL_BACKEND_CUDA batch: finds the device, creates the batch's stream and mirrors the
// batch's rows (if any) to it. Throws Error NO_DEVICE (with the CUDA runtime's own words) when
// there is no usable device, UNSUPPORTED when the backend is not built. A CPU batch: no-op.
// where names the public call in messages.
void attach_backend(Batch& batch, const char* where);

// Before an upload's validated rows replace the batch's (replace_rows, batch.cpp): mirrors
// them to the device and sizes the per-solve buffers for the current options. Throws (out of
// device memory, say) with `where` first, and the host rows are then not replaced. No-op for a
// CPU batch.
template <class Real>
void mirror_incoming_rows(Batch& batch, const RowSet<Real>& incoming, const char* where);

// After they replaced them: nothing derived from the old rows is current any more.
void rows_changed(Batch& batch);

// Before steel_batch_set_options commits `incoming`: sizes the per-solve buffers (residual
// history, momentum, pre-elimination) for it, so that solve_async never allocates. Throws
// (out of device memory), and the options are then not changed. No-op for a CPU batch.
void options_changing(Batch& batch, const steel_solve_options& incoming, const char* where);

// Solves on the device. synchronous: on the batch's own stream, then the results are copied
// back to the host (what steel_batch_solve does). Otherwise on `stream` (a cudaStream_t, NULL
// = the legacy default stream), with no host synchronization and no allocation, and the host
// results are marked stale.
void solve(Batch& batch, void* stream, bool synchronous);

// Brings the host copy up to date (results after solve_async, rows after a device values
// update), waiting for the device work it depends on. No-op for a CPU batch or when current.
// `where` (the public call) starts the message of a failure.
void settle_host_mirror(Batch& batch, const char* where);

// The same for the results alone (results, statistics, residual history): what the result
// readers need, without copying back rows a values update changed.
void settle_host_results(Batch& batch, const char* where);

// Replaces the rows from a steel_rows_desc whose arrays are device pointers (see steel.h).
void upload_rows_from_device(Batch& batch, const steel_rows_desc& rows, void* stream);

// New numbers for the current rows, from device pointers, written on `stream` without any
// host synchronization (see steel_batch_update_values_device).
void update_values_from_device(Batch& batch, const steel_row_values_desc& values, void* stream);

enum class DeviceOutput { impulse, velocity };

// Copies the last solve's impulses or velocities, widened to double, into the device array out
// on `stream`. Throws like the host readers (NO_DATA, BUFFER_TOO_SMALL).
void read_to_device(Batch& batch, DeviceOutput which, double* out, uint64_t capacity,
                    uint64_t* out_count, void* stream, const char* where);

} // namespace cuda
} // namespace steel
