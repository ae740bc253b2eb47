// The CUDA backend (device_backend.hpp): a batch's device mirror, its uploads, the solve's
// launches (kernel_launches.cuh: classify, general sweep, dense path, pre-elimination; or the
// propagation response's kernels) and the copies between host and device.
//
// The host copy of the rows is always built first, by the same validation as the CPU backend;
// the device holds a mirror. A solve touches only device memory that exists since the last
// upload or options change, so solve_async neither allocates nor synchronizes.
#include "device_backend.hpp"

#include "../batch.hpp"
#include "../output_checks.hpp"
#include "../response_data.hpp"
#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "device_colored.cuh"
#include "device_propagation.cuh"
#include "device_rows.cuh"
#include "kernel_launches.cuh"
#include "preelimination_buffers.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

namespace steel::testing {
// Test seam: the solves that launched each build of the twice-built kernels (KernelChoice), so
// that the tests which set STEEL_CUDA_* can see their choice reach the launch rather than compare
// one kernel with itself. Only counted, never read here.
std::atomic<uint32_t> cuda_solves_general[2]{};          // [KernelBuild]: plain, bounded
std::atomic<uint32_t> cuda_solves_propagation_thread{0}; // propagation_thread_kernel
std::atomic<uint32_t> cuda_solves_propagation_warp[2]{}; // [KernelBuild]: plain, bounded
// The worlds one wave of the warp-per-world propagation kernel holds, as the last serial
// propagation solve whose layout was not set by the environment found it.
std::atomic<uint32_t> cuda_serial_wave_worlds{0};
} // namespace steel::testing

namespace steel::cuda {

// Named, not in the anonymous namespace: DeviceBatch (device_backend.hpp's type) holds it.
template <class Real> struct DeviceState {
    DeviceRows<Real> rows;
    bool has_rows = false;
    DeviceBuffer<Real> impulse, velocity, momentum_scratch;
    DeviceBuffer<steel_world_stats> stats;
    DeviceBuffer<int32_t> world_path;
    DeviceBuffer<double> history;
    // The propagation response's trees and the colored solve's packs, once a solve asked.
    DevicePropagation<Real> propagation;
    DeviceColored<Real> colored;
    // One wave of the warp-per-world propagation kernel, in worlds, for the shared bytes it was
    // found with (the layout's default asks for it each serial propagation solve).
    size_t wave_shared_bytes = SIZE_MAX;
    uint32_t wave_worlds = 0;
    bool propagation_mirrored = false; // `propagation` holds the current rows' set
    bool colored_mirrored = false;     // `colored` holds the current rows' plan
    bool values_updated = false;       // a device values update since the last upload
    // Room for pre-elimination's derived worlds, sized while the option is on.
    PreeliminationArrays<Real, DeviceBuffer> preelimination;
    DeviceBuffer<uint64_t> world_value_base, world_schur_base;
    bool preelimination_sized = false;
    uint32_t history_stride = 0;    // of the last solve
    bool results_on_device = false; // the device buffers hold the last solve's results
};

namespace {

// launch(kernel, blocks, threads, shared_bytes, arguments...) for kernel_launches.cuh and
// every other launch here. The CPU tests compile this file with g++ against an emulated runtime
// (tests/fake_cuda/), where a launch is a call to enqueue.
struct StreamLaunch {
    cudaStream_t stream;
    template <class... Params, class... Args>
    void operator()(void (*kernel)(Params...), uint32_t blocks, uint32_t threads,
                    size_t shared_bytes, const Args&... args) const {
#if defined(STEEL_EMULATED_CUDA)
        (void)fake_cuda::launch(stream, blocks, threads, shared_bytes,
                                [kernel, args...] { kernel(args...); });
#else
        kernel<<<blocks, threads, shared_bytes, stream>>>(args...);
#endif
    }
};

cudaStream_t as_stream(void* stream) {
    return static_cast<cudaStream_t>(stream);
}

// Makes a batch's device current on the calling thread for one call, and gives the caller's
// current device back at its end: a program that drives several GPUs from one thread keeps the
// device it chose. A batch lives on the device that was current when it was created.
class ScopedDevice {
  public:
    explicit ScopedDevice(int device) {
        // An error left by earlier work (the caller's own, where a program shares Steel's
        // runtime) is not this call's: its launch checks see only its own launches.
        (void)cudaGetLastError();
        check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
        if (previous_ != device) {
            check_cuda(cudaSetDevice(device), "cudaSetDevice");
            switched_ = true;
        }
    }
    ~ScopedDevice() {
        if (switched_) (void)cudaSetDevice(previous_);
        (void)cudaGetLastError(); // an ignored failure must not be blamed on a later launch
    }
    ScopedDevice(const ScopedDevice&) = delete;
    ScopedDevice& operator=(const ScopedDevice&) = delete;

  private:
    int previous_ = 0;
    bool switched_ = false;
};

// Runs a public call's device work. The steps below name only themselves in a failure's
// message ("the device solve: CUDA error ..."); this puts the call's name first, as every
// message of Steel starts.
template <class Body> void as_call(const char* where, Body&& body) {
    try {
        body();
    } catch (Error& error) {
        const std::string prefix = std::string(where) + ": ";
        if (error.message.compare(0, prefix.size(), prefix) != 0)
            error.message = prefix + error.message;
        throw;
    }
}

} // namespace

// The batch's work on one of the callers' streams, and an event recorded after its last call
// there: the batch's later calls wait for the event, which outlives the stream (the caller may
// destroy it). Streams are told apart by cudaStreamGetId, which no later stream reuses.
struct EnqueuedWork {
    unsigned long long stream_id = 0;
    cudaEvent_t done = nullptr;
};

// The kernels asked for through the environment when the batch was made; unset, a solve takes
// the measured default (kernels_for_solve).
struct KernelRequest {
    std::optional<SerialLayout> serial_layout;
    std::optional<KernelBuild> general;
    KernelBuild propagation = KernelBuild::plain;
};

struct DeviceBatch {
    int device = 0;
    int multiprocessors = 1;       // the device's, for the size of a wave
    cudaStream_t stream = nullptr; // the batch's own, for synchronous calls
    std::variant<DeviceState<float>, DeviceState<double>> state;
    // Values updates, asynchronous solves and device reads not yet waited for, one entry a
    // stream; and events to reuse.
    std::vector<EnqueuedWork> enqueued;
    std::vector<cudaEvent_t> spare_events;
    // The host mirror lacks a device values update, or an asynchronous solve's results.
    bool host_rows_stale = false;
    bool host_results_stale = false;
    // Calls captured in a CUDA graph: its replays change the device buffers where the batch
    // cannot see them, so from then on the batch waits for the whole device, and the host
    // readers copy back, each time, what a replay may have changed.
    bool graph_captured = false;
    bool graph_updates_values = false;
    bool graph_solves = false;
    // Which kernels run, as the environment asked when the batch was created.
    KernelRequest kernels;

    ~DeviceBatch() {
        for (const EnqueuedWork& work : enqueued)
            cudaEventDestroy(work.done);
        for (cudaEvent_t event : spare_events)
            cudaEventDestroy(event);
        if (stream) cudaStreamDestroy(stream);
        (void)cudaGetLastError(); // nothing to report from here; keep later launch checks clean
    }
};

namespace {

// Waits for the batch's work enqueued on callers' streams (or, once a graph holds some of it,
// for the whole device), before the batch touches what that work reads or writes.
void wait_for_enqueued(DeviceBatch& device) {
    if (device.graph_captured) {
        check_cuda(cudaDeviceSynchronize(),
                   "waiting for the device (calls of this batch were captured in a CUDA graph)");
    } else {
        for (const EnqueuedWork& work : device.enqueued)
            check_cuda(cudaEventSynchronize(work.done),
                       "waiting for the batch's work on a caller's stream");
    }
    for (const EnqueuedWork& work : device.enqueued)
        device.spare_events.push_back(work.done);
    device.enqueued.clear();
}

// Whether `on` is capturing a CUDA graph (an invalidated capture counts: nothing runs until it
// ends). A stream that cannot be asked is refused with the runtime's words.
bool capturing(cudaStream_t on, const char* where) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaError_t error = cudaStreamIsCapturing(on, &status);
    if (error != cudaSuccess) {
        (void)cudaGetLastError();
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: stream: its capture status could not be read (%s)", where,
                    cuda_words(error).c_str()));
    }
    return status != cudaStreamCaptureStatusNone;
}

// After the batch enqueued work on a caller's stream: how its later calls wait for it. One
// event a stream is enough (a stream runs in order), so re-record the stream's own.
void note_enqueued(DeviceBatch& device, cudaStream_t on, bool captured, const char* where) {
    if (captured) {
        device.graph_captured = true;
        return;
    }
    unsigned long long id = 0;
    check_cuda(cudaStreamGetId(on, &id), where);
    auto work = std::find_if(device.enqueued.begin(), device.enqueued.end(),
                             [&](const EnqueuedWork& w) { return w.stream_id == id; });
    if (work == device.enqueued.end()) {
        cudaEvent_t event = nullptr;
        if (device.spare_events.empty()) {
            check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), where);
        } else {
            event = device.spare_events.back();
            device.spare_events.pop_back();
        }
        device.enqueued.push_back({id, event});
        work = device.enqueued.end() - 1;
    }
    check_cuda(cudaEventRecord(work->done, on), where);
}

} // namespace

void DeviceBatchDeleter::operator()(DeviceBatch* device) const noexcept {
    if (!device) return;
    // Its stream and memory belong to its device, which need not be the caller's current one.
    int previous = 0;
    const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device->device &&
                          cudaSetDevice(device->device) == cudaSuccess;
    try {
        wait_for_enqueued(*device); // its buffers may still be in use on a caller's stream
    } catch (...) {
        // A failed wait (a fault in the caller's own work, say) must not stop the release.
    }
    delete device;
    if (switched) (void)cudaSetDevice(previous);
    (void)cudaGetLastError();
}

bool compiled_in() {
    return true;
}

namespace {

template <class Real> DeviceState<Real>& device_state(DeviceBatch& device) {
    return std::get<DeviceState<Real>>(device.state);
}

// Which of two kernels the variable asks for: 0 for `first`, 1 for `second`, none when it is
// unset or empty; anything else refuses the batch, naming the variable.
std::optional<uint32_t> environment_choice(const char* variable, const char* first,
                                           const char* second, const char* where) {
    const char* asked = std::getenv(variable);
    if (!asked || !*asked) return std::nullopt;
    if (std::strcmp(asked, first) == 0) return 0;
    if (std::strcmp(asked, second) == 0) return 1;
    fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: %s is \"%s\"; it takes \"%s\" or \"%s\"", where,
                                              variable, asked, first, second));
}

// Kernels built twice, and two layouts, each pair giving the same bits; the variables override
// the defaults, which an H200 chose (docs/cuda.md, "Measured on an H200"):
// - STEEL_CUDA_SERIAL_LAYOUT=thread|warp: the propagation response's serial sweeps, a thread or
//   a warp per world (default: a warp while the batch fits in one wave of the warp kernel);
// - STEEL_CUDA_GENERAL_KERNEL=plain|bounded: the general sweep as built by default, or under
//   __launch_bounds__(128, 4) (default: bounded in float64, plain in float32);
// - STEEL_CUDA_PROPAGATION_KERNEL=plain|bounded: the same for the warp-per-world propagation
//   kernel (the colored mode, and the serial mode laid out a warp per world; default: plain).
KernelRequest kernels_from_environment(const char* where) {
    KernelRequest kernels;
    if (const auto layout = environment_choice("STEEL_CUDA_SERIAL_LAYOUT", "thread", "warp", where))
        kernels.serial_layout =
            *layout == 0 ? SerialLayout::thread_per_world : SerialLayout::warp_per_world;
    const auto build = [&](const char* variable) -> std::optional<KernelBuild> {
        const auto choice = environment_choice(variable, "plain", "bounded", where);
        if (!choice) return std::nullopt;
        return *choice == 0 ? KernelBuild::plain : KernelBuild::bounded;
    };
    kernels.general = build("STEEL_CUDA_GENERAL_KERNEL");
    kernels.propagation = build("STEEL_CUDA_PROPAGATION_KERNEL").value_or(KernelBuild::plain);
    return kernels;
}

// The runtime's errors that mean this machine has no device this build can use, so that the
// caller may fall back on the CPU backend: no device, no driver (or one older than the
// runtime), no code for the device (neither its machine code nor PTX, or PTX newer than the
// driver can compile).
bool means_no_device(cudaError_t error) {
    switch (error) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
        return true;
    default:
        return false;
    }
}

// Any other error from the calls that look for the device: a device that was seen and cannot be
// used, most often a CUDA context left in a sticky error state by an earlier kernel fault in
// this process (cudaErrorIllegalAddress, cudaErrorLaunchFailure, ...), which nothing but a new
// process clears. INTERNAL, never NO_DEVICE: a caller must not take it for a machine without a
// GPU.
[[noreturn]] void fail_unusable_device(const char* where, const char* call, cudaError_t error) {
    (void)cudaGetLastError();
    fail(STEEL_ERROR_INTERNAL,
         format("%s: STEEL_BACKEND_CUDA: %s: %s: the CUDA context is in an error state (a kernel "
                "fault earlier in this process leaves it so for good), or the driver is; no CUDA "
                "batch can be made in this process: restart the process",
                where, call, cuda_words(error).c_str()));
}

// A device this build can run on, NO_DEVICE with the runtime's words where there is none, or
// INTERNAL where one was seen and CUDA cannot use it.
int find_device(const char* where) {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess && !means_no_device(error))
        fail_unusable_device(where, "cudaGetDeviceCount", error);
    if (error != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        fail(
            STEEL_ERROR_NO_DEVICE,
            format("%s: STEEL_BACKEND_CUDA: no CUDA device was found (cudaGetDeviceCount: %s); use "
                   "STEEL_BACKEND_CPU on this machine",
                   where, error != cudaSuccess ? cuda_words(error).c_str() : "0 devices"));
    }
    int device = 0;
    check_cuda(cudaGetDevice(&device), where);
    // Is there code for this device in the library (sm_90 and PTX for later)? The first call that
    // needs the device's context, so also the first to answer a sticky error.
    cudaFuncAttributes attributes{};
    const cudaError_t image = cudaFuncGetAttributes(&attributes, general_sweep_kernel<double>);
    if (image != cudaSuccess && !means_no_device(image))
        fail_unusable_device(where, "cudaFuncGetAttributes", image);
    if (image != cudaSuccess) {
        (void)cudaGetLastError();
        cudaDeviceProp prop{};
        (void)cudaGetDeviceProperties(&prop, device);
        fail(STEEL_ERROR_NO_DEVICE,
             format("%s: STEEL_BACKEND_CUDA: device %d (%s, compute capability %d.%d) cannot run "
                    "this build's "
                    "kernels (%s); rebuild with its architecture in CMAKE_CUDA_ARCHITECTURES",
                    where, device, prop.name, prop.major, prop.minor, cuda_words(image).c_str()));
    }
    return device;
}

// Names, for upload_all_or_nothing, every buffer a solve with these options writes (room only,
// so that the solve allocates nothing) and, where `layout` is given, pre-elimination's room and
// world bases.
template <class Real, class Pass>
void fill_solve_buffers(DeviceState<Real>& state, const RowSet<Real>& rows,
                        const steel_solve_options& options, const PreeliminationLayout* layout,
                        Pass& pass) {
    pass.size(state.impulse, rows.total_rows());
    pass.size(state.velocity, rows.total_dofs());
    pass.size(state.momentum_scratch, 2 * size_t(rows.total_rows()) + rows.total_dofs());
    pass.size(state.stats, rows.world_count);
    pass.size(state.world_path, rows.world_count);
    if (options.record_residual_history)
        pass.size(state.history, size_t(rows.world_count) * options.iterations);
    if (layout) {
        state.preelimination.size_each(
            *layout, [&](auto& array, uint64_t count) { pass.size(array, count); });
        pass(state.world_value_base, layout->world_value_base);
        pass(state.world_schur_base, layout->world_schur_base);
    }
}

// Pre-elimination's layout for these rows when the options want its room and it is not there.
template <class Real>
std::optional<PreeliminationLayout>
missing_preelimination(const DeviceState<Real>& state, const RowSet<Real>& rows,
                       const steel_solve_options& options, bool rows_replaced) {
    if (!options.enable_bilateral_preelimination) return std::nullopt;
    if (state.preelimination_sized && !rows_replaced) return std::nullopt;
    return preelimination_layout(rows);
}

template <class Real> void pull_results(DeviceBatch& device, BatchState<Real>& host) {
    DeviceState<Real>& state = device_state<Real>(device);
    state.impulse.download(host.results.impulse, device.stream);
    state.velocity.download(host.results.velocity, device.stream);
    state.stats.download(host.stats, device.stream);
    state.world_path.download(host.world_path, device.stream);
    host.history_stride = state.history_stride;
    host.history.clear();
    if (state.history_stride) {
        host.history.resize(size_t(state.rows.world_count) * state.history_stride);
        check_cuda(cudaMemcpyAsync(host.history.data(), state.history.data(),
                                   host.history.size() * sizeof(double), cudaMemcpyDeviceToHost,
                                   device.stream),
                   "cudaMemcpyAsync (history)");
    }
    check_cuda(cudaStreamSynchronize(device.stream), "the device solve");
    host.solved = true;
    device.host_results_stale = false;
}

template <class Real> void pull_rows(DeviceBatch& device, BatchState<Real>& host) {
    device_state<Real>(device).rows.download_values(host.rows, device.stream);
    check_cuda(cudaStreamSynchronize(device.stream), "the device values update");
    device.host_rows_stale = false;
}

// Copies back to the host what device work changed since the host last looked: the last
// solve's results and, if asked, the updated rows. Once a graph holds such calls, every time
// (after waiting for the whole device), since its replays are not seen.
template <class Real> void settle(DeviceBatch& device, BatchState<Real>& host, bool rows_too) {
    const DeviceState<Real>& state = device_state<Real>(device);
    const bool rows =
        rows_too && (device.host_rows_stale || (device.graph_updates_values && state.has_rows));
    const bool results = device.host_results_stale ||
                         (device.graph_solves && state.results_on_device && host.solved);
    if (!rows && !results) return;
    wait_for_enqueued(device);
    if (rows) pull_rows(device, host);
    if (results) pull_results(device, host);
}

// Mirrors `rows` (the batch's own, or an upload's about to replace them) and sizes the solve's
// buffers for them. Room for all of it is made first, all or nothing: out of device memory, the
// device is left exactly as it was (its rows, its results, the pointers a captured graph holds).
// Once the copies start, the device's rows count as absent until they are done, so a failure
// there leaves a batch that mirrors its host rows again when next needed. The device's results
// are given up: the host has them (settled first), and read_to_device sends them back if asked.
template <class Real>
void mirror_rows(DeviceBatch& device, BatchState<Real>& host, const RowSet<Real>& rows,
                 const steel_solve_options& options) {
    DeviceState<Real>& state = device_state<Real>(device);
    settle(device, host, /*rows_too=*/true); // the host keeps these if the mirror fails
    wait_for_enqueued(device);               // a device read may still be reading the results
    const std::optional<PreeliminationLayout> layout =
        missing_preelimination(state, rows, options, /*rows_replaced=*/true);
    upload_all_or_nothing<CudaMemory>(
        [&](auto& pass) {
            state.rows.fill(rows, pass);
            fill_solve_buffers(state, rows, options, layout ? &*layout : nullptr, pass);
        },
        [&] {
            state.has_rows = false;
            state.results_on_device = false;
            state.propagation_mirrored = state.colored_mirrored = false;
            state.preelimination_sized = false;
            state.rows.take_shape(rows);
        },
        device.stream);
    check_cuda(cudaStreamSynchronize(device.stream), "mirroring the rows to the device");
    state.preelimination_sized = layout.has_value();
    state.has_rows = true;
}

// Before a solve, a values update or a device read: the device holds the host's rows. Only an
// upload whose mirror failed (mirror_rows) leaves them absent; that costs a new mirror, which a
// captured call cannot make.
template <class Real>
void ensure_rows_mirrored(DeviceBatch& device, BatchState<Real>& host, const Batch& batch,
                          bool captured, const char* where) {
    if (!host.has_rows || device_state<Real>(device).has_rows) return;
    if (captured)
        fail(STEEL_ERROR_UNSUPPORTED,
             format("%s: the batch's rows are not on the device (an earlier upload could not be "
                    "mirrored), and mirroring them cannot be captured in a CUDA graph; call "
                    "steel_batch_solve once first",
                    where));
    mirror_rows(device, host, host.rows, batch.options);
}

template <class Real>
void launch_solve(DeviceState<Real>& state, const steel_solve_options& options,
                  const KernelChoice& kernels, cudaStream_t stream) {
    const DeviceRows<Real>& rows = state.rows;
    // Sized by options_changing for these options; a smaller buffer would be a bug here. (Its
    // size may be a refused set_options' when a copy failed after the room was made.)
    if (options.record_residual_history &&
        state.history.capacity() < size_t(rows.world_count) * options.iterations)
        fail(STEEL_ERROR_INTERNAL, "launching the solve: the residual history buffer is too small");
    // The kernels write a world's history only for the sweeps it ran; the rest of its stretch
    // is zeros, as on the CPU, and not what the device memory held before (a snapshot keeps it).
    if (options.record_residual_history)
        check_cuda(cudaMemsetAsync(state.history.data(), 0,
                                   size_t(rows.world_count) * options.iterations * sizeof(double),
                                   stream),
                   "cudaMemsetAsync (history)");
    const SolveOutputs<Real> out{
        state.impulse.data(),    state.velocity.data(), state.momentum_scratch.data(),
        state.world_path.data(), state.stats.data(),    state.history.data()};
    if (options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION) {
        if (options.solve_mode == STEEL_SOLVE_SERIAL &&
            kernels.serial_layout == SerialLayout::thread_per_world)
            testing::cuda_solves_propagation_thread.fetch_add(1, std::memory_order_relaxed);
        else
            testing::cuda_solves_propagation_warp[size_t(kernels.propagation)].fetch_add(
                1, std::memory_order_relaxed);
        state.history_stride = launch_propagation_kernels(
            rows.view(), state.propagation.view(), state.propagation.scratch(),
            options.solve_mode == STEEL_SOLVE_COLORED ? state.colored.view() : ColoredView<Real>{},
            rows.shape, options, out, kernels, StreamLaunch{stream});
    } else {
        testing::cuda_solves_general[size_t(kernels.general)].fetch_add(1,
                                                                        std::memory_order_relaxed);
        const PreeliminationBuffers<Real> spaces =
            state.preelimination.view(state.world_value_base.data(), state.world_schur_base.data());
        state.history_stride = launch_solve_kernels(rows.view(), rows.shape, options, out,
                                                    state.preelimination_sized ? &spaces : nullptr,
                                                    StreamLaunch{stream}, kernels.general);
    }
    state.results_on_device = true; // the caller checks the launches
}

// One wave of the warp-per-world propagation kernel, in worlds: its blocks resident on a
// multiprocessor at once (the occupancy API, for this shape's shared bytes), times the device's
// multiprocessors, times a block's warps. Asked again only when the shared bytes change.
template <class Real>
uint32_t warp_kernel_wave(const DeviceBatch& device, DeviceState<Real>& state) {
    const size_t shared_bytes = velocity_shared_bytes<Real>(state.rows.shape);
    if (shared_bytes == state.wave_shared_bytes) return state.wave_worlds;
    const int threads = int(kWarpsPerBlock * kWarpSize);
    int blocks = 0;
    check_cuda(device.kernels.propagation == KernelBuild::bounded
                   ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                         &blocks, propagation_kernel_bounded<Real>, threads, shared_bytes)
                   : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                         &blocks, propagation_kernel<Real>, threads, shared_bytes),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor (choosing the serial layout)");
    state.wave_shared_bytes = shared_bytes;
    state.wave_worlds =
        uint32_t(std::max(blocks, 0)) * uint32_t(device.multiprocessors) * kWarpsPerBlock;
    return state.wave_worlds;
}

// The kernels a solve launches: what the environment asked for, else the defaults an H200
// measured (bench/RESULTS.md, "The first device run"). The general sweep's bounded build was
// 8 to 18 % faster in float64 on general worlds and level in float32. The serial propagation
// sweeps: a warp per world runs a batch that fits in one wave in the time of one world's walks
// (1.2 to 1.4 ms for 128 to 1,024 legged robots), twice that past it; a thread per world takes
// about 1.9 ms for anything up to 4,096 worlds, and grows slowly after.
template <class Real>
KernelChoice kernels_for_solve(const DeviceBatch& device, DeviceState<Real>& state,
                               const steel_solve_options& options) {
    KernelChoice kernels;
    kernels.propagation = device.kernels.propagation;
    kernels.general = device.kernels.general.value_or(
        std::is_same_v<Real, double> ? KernelBuild::bounded : KernelBuild::plain);
    if (device.kernels.serial_layout) {
        kernels.serial_layout = *device.kernels.serial_layout;
    } else if (options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION &&
               options.solve_mode == STEEL_SOLVE_SERIAL) {
        const uint32_t wave = warp_kernel_wave(device, state);
        testing::cuda_serial_wave_worlds.store(wave, std::memory_order_relaxed);
        kernels.serial_layout = state.rows.world_count <= wave ? SerialLayout::warp_per_world
                                                               : SerialLayout::thread_per_world;
    }
    return kernels;
}

// Runs body(device state, host state) with the batch's precision.
template <class Body> void with_states(Batch& batch, Body&& body) {
    std::visit(
        [&](auto& host) {
            using Real = typename std::decay_t<decltype(host.rows.jy)>::value_type;
            body(device_state<Real>(*batch.device), host);
        },
        batch.state);
}

// A device array of the caller's, read to the host (any pointer CUDA knows: cudaMemcpyDefault).
template <class T>
std::vector<T> stage(const T* device_pointer, uint64_t count, cudaStream_t stream,
                     const char* field) {
    std::vector<T> host;
    if (device_pointer == nullptr || count == 0) return host;
    host.resize(count);
    const cudaError_t error =
        cudaMemcpyAsync(host.data(), device_pointer, count * sizeof(T), cudaMemcpyDefault, stream);
    if (error != cudaSuccess) {
        (void)cudaGetLastError();
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("steel_batch_upload_rows_device: rows.%s could not be read as %llu values of "
                    "device memory (%s)",
                    field, (unsigned long long)count, cuda_words(error).c_str()));
    }
    return host;
}

void sync_staging(cudaStream_t stream) {
    const cudaError_t error = cudaStreamSynchronize(stream);
    if (error != cudaSuccess)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("steel_batch_upload_rows_device: reading the rows from the device failed (%s)",
                    cuda_words(error).c_str()));
}

template <class T> const T* or_null(const std::vector<T>& staged) {
    return staged.empty() ? nullptr : staged.data();
}

// What the propagation response (and the colored solve) solves with, built on the host by the
// CPU backend's own code the first time (with its errors: no scene, cone friction) and mirrored
// once.
template <class Real>
void prepare_propagation(DeviceBatch& device, DeviceState<Real>& state, BatchState<Real>& host,
                         Batch& batch, bool captured, const char* where) {
    const bool colored = batch.options.solve_mode == STEEL_SOLVE_COLORED;
    if (state.propagation_mirrored && (!colored || state.colored_mirrored)) return;
    if (state.values_updated)
        fail(STEEL_ERROR_UNSUPPORTED,
             format("%s: articulated_contact_response = STEEL_RESPONSE_PROPAGATION after "
                    "steel_batch_update_values_device: the response data is built from the "
                    "uploaded scene's values, which the update replaced; upload the scene again",
                    where));
    if (captured)
        fail(STEEL_ERROR_UNSUPPORTED,
             format("%s: articulated_contact_response = STEEL_RESPONSE_PROPAGATION: the first "
                    "solve after an upload (or a switch to colored sweeps) builds the response "
                    "data and "
                    "mirrors it, which allocates and synchronizes and so cannot be captured in a "
                    "CUDA graph; call steel_batch_solve (or steel_batch_solve_async outside the "
                    "capture) once first",
                    where));
    prepare_response_data(host, batch.options, batch.scene.get(), batch.pool, where);
    wait_for_enqueued(device); // a grown buffer's old memory is freed
    const bool trees = !state.propagation_mirrored, colors = colored && !state.colored_mirrored;
    try {
        upload_all_or_nothing<CudaMemory>(
            [&](auto& pass) {
                if (trees) state.propagation.fill(*host.propagation, host.rows.total_dofs(), pass);
                if (colors) state.colored.fill(*host.colored, pass);
            },
            [&] {
                if (trees) state.propagation.max_depth = host.propagation->max_depth;
            },
            device.stream);
        check_cuda(cudaStreamSynchronize(device.stream), "the copies");
    } catch (Error& error) {
        // Nothing was launched: the last results stand, and every buffer is as it was (or, after
        // a failed copy, marked not mirrored), so the next solve simply tries again.
        error.message = format("%s: mirroring the propagation response's data to the device: "
                               "%s; nothing was solved, the batch keeps its last results",
                               where, error.message.c_str());
        throw;
    }
    state.propagation_mirrored = true;
    state.colored_mirrored = state.colored_mirrored || colored;
}

void solve_on_device(Batch& batch, void* stream, bool synchronous, const char* where) {
    DeviceBatch& device = *batch.device;
    const ScopedDevice current(device.device);
    const cudaStream_t on = synchronous ? device.stream : as_stream(stream);
    const bool captured = !synchronous && capturing(on, where);
    if (synchronous) wait_for_enqueued(device);
    with_states(batch, [&](auto& state, auto& host) {
        // A capture file (STEEL_CAPTURE) records the rows this solve reads.
        if (synchronous && !batch.capture_path.empty()) settle(device, host, /*rows_too=*/true);
        ensure_rows_mirrored(device, host, batch, captured, where);
        if (batch.options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION)
            prepare_propagation(device, state, host, batch, captured, where);
        launch_solve(state, batch.options, kernels_for_solve(device, state, batch.options), on);
        if (synchronous) {
            check_cuda(cudaGetLastError(), "launching the solve kernels");
            pull_results(device, host);
        } else {
            // Noted before the launch check: what was enqueued is waited for either way.
            note_enqueued(device, on, captured, where);
            device.host_results_stale = true;
            device.graph_solves = device.graph_solves || captured;
            host.solved = true; // the host readers settle first (settle_host_mirror)
            check_cuda(cudaGetLastError(), "launching the solve kernels");
        }
    });
}

} // namespace

void attach_backend(Batch& batch, const char* where) {
    if (batch.desc.backend != STEEL_BACKEND_CUDA) return;
    DeviceBatchPtr device(new DeviceBatch);
    device->kernels = kernels_from_environment(where);
    device->device = find_device(where);
    cudaDeviceProp properties{};
    check_cuda(cudaGetDeviceProperties(&properties, device->device), where);
    device->multiprocessors = std::max(properties.multiProcessorCount, 1);
    check_cuda(cudaStreamCreateWithFlags(&device->stream, cudaStreamNonBlocking), where);
    if (batch.desc.precision == STEEL_PRECISION_FLOAT32)
        device->state.emplace<DeviceState<float>>();
    else
        device->state.emplace<DeviceState<double>>();
    batch.device = std::move(device);
    with_states(batch, [&](auto&, auto& host) { // a loaded snapshot's rows
        if (!host.has_rows) return;
        try {
            mirror_rows(*batch.device, host, host.rows, batch.options);
        } catch (Error& error) {
            error.message = format("%s: mirroring the snapshot's rows to the device: %s; nothing "
                                   "was loaded",
                                   where, error.message.c_str());
            throw;
        }
    });
}

template <class Real>
void mirror_incoming_rows(Batch& batch, const RowSet<Real>& incoming, const char* where) {
    if (!batch.device) return;
    const ScopedDevice current(batch.device->device);
    try {
        mirror_rows(*batch.device, std::get<BatchState<Real>>(batch.state), incoming,
                    batch.options);
    } catch (Error& error) {
        error.message = std::string(where) +
                        ": mirroring the rows to the device: " + error.message +
                        "; the batch keeps its previous rows";
        throw;
    }
}
template void mirror_incoming_rows(Batch&, const RowSet<float>&, const char*);
template void mirror_incoming_rows(Batch&, const RowSet<double>&, const char*);

void rows_changed(Batch& batch) {
    if (!batch.device) return;
    DeviceBatch& device = *batch.device;
    with_states(batch, [&](auto& state, auto&) {
        // mirror_incoming_rows put these rows on the device; nothing is derived from them yet.
        state.values_updated = false;
        state.results_on_device = false;
        state.propagation_mirrored = state.colored_mirrored = false;
    });
    device.host_rows_stale = device.host_results_stale = false;
}

void options_changing(Batch& batch, const steel_solve_options& incoming, const char* where) {
    if (!batch.device) return;
    const ScopedDevice current(batch.device->device);
    try {
        with_states(batch, [&](auto& state, auto& host) { // the host's rows, mirrored or not yet
            if (!host.has_rows) return;
            wait_for_enqueued(*batch.device); // a grown buffer's old memory is freed
            const std::optional<PreeliminationLayout> layout =
                missing_preelimination(state, host.rows, incoming, /*rows_replaced=*/false);
            const cudaStream_t stream = batch.device->stream;
            upload_all_or_nothing<CudaMemory>(
                [&](auto& pass) {
                    fill_solve_buffers(state, host.rows, incoming, layout ? &*layout : nullptr,
                                       pass);
                },
                [] {}, stream);
            check_cuda(cudaStreamSynchronize(stream), "sizing the device buffers");
            state.preelimination_sized = state.preelimination_sized || layout.has_value();
        });
    } catch (Error& error) {
        error.message = std::string(where) +
                        ": sizing the device buffers for these options: " + error.message +
                        "; the options are unchanged";
        throw;
    }
}

void solve(Batch& batch, void* stream, bool synchronous) {
    const char* where = synchronous ? "steel_batch_solve" : "steel_batch_solve_async";
    as_call(where, [&] { solve_on_device(batch, stream, synchronous, where); });
}

void settle_host_mirror(Batch& batch, const char* where) {
    if (!batch.device) return;
    as_call(where, [&] {
        const ScopedDevice current(batch.device->device);
        with_states(batch,
                    [&](auto&, auto& host) { settle(*batch.device, host, /*rows_too=*/true); });
    });
}

void settle_host_results(Batch& batch, const char* where) {
    if (!batch.device) return;
    as_call(where, [&] {
        const ScopedDevice current(batch.device->device);
        with_states(batch,
                    [&](auto&, auto& host) { settle(*batch.device, host, /*rows_too=*/false); });
    });
}

namespace {

void upload_rows_on_device(Batch& batch, const steel_rows_desc& rows, void* stream) {
    DeviceBatch& device = *batch.device;
    const ScopedDevice current(device.device);
    const cudaStream_t on = as_stream(stream);
    if (capturing(on, "steel_batch_upload_rows_device"))
        fail(STEEL_ERROR_UNSUPPORTED,
             "steel_batch_upload_rows_device: stream is capturing a CUDA graph, and the upload "
             "reads the rows to the host to check them; upload outside the capture (the "
             "per-step numbers go through steel_batch_update_values_device, which can be "
             "captured)");
    // Counts first: they size everything else.
    const uint32_t worlds = rows.world_count;
    if (worlds != batch.desc.world_count)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("steel_batch_upload_rows_device: world_count is %u but the batch "
                    "has %u worlds",
                    worlds, batch.desc.world_count));
    const std::vector<uint32_t> dofs = stage(rows.world_dof_counts, worlds, on, "world_dof_counts");
    const std::vector<uint32_t> row_counts =
        stage(rows.world_row_counts, worlds, on, "world_row_counts");
    sync_staging(on);
    uint64_t total_dofs = 0, total_rows = 0;
    for (uint32_t w = 0; w < worlds && !dofs.empty() && !row_counts.empty(); ++w) {
        total_dofs += dofs[w];
        total_rows += row_counts[w];
        // Before the totals size the staging below (the host check says the same, later).
        if (total_dofs > UINT32_MAX || total_rows > UINT32_MAX)
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("steel_batch_upload_rows_device: world %u: the batch's total DOF or row "
                        "count passes 2^32 - 1",
                        w));
    }
    const uint64_t values = rows.value_count;
    const auto v_hat = stage(rows.unconstrained_velocity, total_dofs, on, "unconstrained_velocity");
    const auto block_offset = stage(rows.block_offset, 2 * total_rows, on, "block_offset");
    const auto block_length = stage(rows.block_length, 2 * total_rows, on, "block_length");
    sync_staging(on);
    // value_count says how much of the caller's J and Y to read: the blocks must hold exactly
    // that many (the host check's rule), or the copy would run past the caller's arrays.
    // Without the counts or the block lengths J and Y are not read: the host check refuses
    // those, naming the missing array.
    uint64_t held = 0;
    for (const uint32_t length : block_length)
        held += length;
    const bool blocks_given =
        !dofs.empty() && !row_counts.empty() && (!block_length.empty() || total_rows == 0);
    if (blocks_given && held != values)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("steel_batch_upload_rows_device: value_count = %llu but the rows' blocks "
                    "hold %llu values",
                    (unsigned long long)values, (unsigned long long)held));
    const auto jacobian = stage(rows.jacobian, blocks_given ? values : 0, on, "jacobian");
    const auto response = stage(rows.response, blocks_given ? values : 0, on, "response");
    const auto bias = stage(rows.bias, total_rows, on, "bias");
    const auto kind = stage(rows.kind, total_rows, on, "kind");
    const auto lower = stage(rows.lower, total_rows, on, "lower");
    const auto upper = stage(rows.upper, total_rows, on, "upper");
    const auto normal_row = stage(rows.normal_row, total_rows, on, "normal_row");
    const auto friction = stage(rows.friction, total_rows, on, "friction");
    const auto regularization = stage(rows.regularization, total_rows, on, "regularization");
    const auto initial_impulse = stage(rows.initial_impulse, total_rows, on, "initial_impulse");
    sync_staging(on);

    steel_rows_desc host = rows;
    host.world_dof_counts = or_null(dofs);
    host.world_row_counts = or_null(row_counts);
    host.unconstrained_velocity = or_null(v_hat);
    host.block_offset = or_null(block_offset);
    host.block_length = or_null(block_length);
    host.jacobian = or_null(jacobian);
    host.response = or_null(response);
    host.bias = or_null(bias);
    host.kind = or_null(kind);
    host.lower = or_null(lower);
    host.upper = or_null(upper);
    host.normal_row = or_null(normal_row);
    host.friction = or_null(friction);
    host.regularization = or_null(regularization);
    host.initial_impulse = or_null(initial_impulse);
    // The CPU backend's validation; throws before changing anything.
    replace_rows(batch, host, "steel_batch_upload_rows_device");
    batch.scene.reset();
}

void update_values_on_device(Batch& batch, const steel_row_values_desc& values, void* stream,
                             const char* where) {
    DeviceBatch& device = *batch.device;
    const ScopedDevice current(device.device);
    const cudaStream_t on = as_stream(stream);
    const bool captured = capturing(on, where);
    with_states(batch, [&](auto& state, auto& host) {
        using Real = typename std::decay_t<decltype(state.rows.jy)>::value_type;
        if (!host.has_rows)
            fail(STEEL_ERROR_NO_DATA, format("%s: no rows have been uploaded to update", where));
        ensure_rows_mirrored(device, host, batch, captured, where);
        // From the first copy on, the rows may change even if a launch fails after it: the
        // results no longer go with them (snapshots leave them out until the next solve).
        batch.rows_updated_since_solve = true;
        batch.rows_edited_since_upload = true; // a scene batch's rows leave its scene
        DeviceRows<Real>& rows = state.rows;
        const uint64_t value_count = rows.jacobian.size();
        const auto copy = [&](const double* in, DeviceBuffer<Real>& out, uint64_t count) {
            if (in == nullptr || count == 0) return;
            StreamLaunch{on}(convert_kernel<Real, double>, grid_stride_blocks(count),
                             kGridStrideThreads, 0, in, out.data(), count);
        };
        copy(values.unconstrained_velocity, rows.unconstrained_velocity, rows.total_dofs);
        copy(values.jacobian, rows.jacobian, value_count);
        copy(values.response, rows.response, value_count);
        copy(values.bias, rows.bias, rows.total_rows);
        copy(values.initial_impulse, rows.initial_impulse, rows.total_rows);
        if (values.jacobian || values.response)
            launch_values_kernels(rows.view(), rows.total_rows, StreamLaunch{on});
        // What was enqueued changes the rows whatever the launch check below says.
        state.values_updated = true;
        state.propagation_mirrored = state.colored_mirrored = false;
    });
    note_enqueued(device, on, captured, where);
    device.host_rows_stale = true;
    device.graph_updates_values = device.graph_updates_values || captured;
    check_cuda(cudaGetLastError(), where);
}

void read_on_device(Batch& batch, DeviceOutput which, double* out, uint64_t capacity,
                    uint64_t* out_count, void* stream, const char* where) {
    DeviceBatch& device = *batch.device;
    const ScopedDevice current(device.device);
    const cudaStream_t on = as_stream(stream);
    const bool captured = capturing(on, where);
    with_states(batch, [&](auto& state, auto& host) {
        if (!host.solved)
            fail(STEEL_ERROR_NO_DATA,
                 format("%s: the batch has not been solved since its last upload", where));
        const bool impulses = which == DeviceOutput::impulse;
        const uint64_t count = impulses ? host.rows.total_rows() : host.rows.total_dofs();
        if (!output_wanted<uint64_t>(where, out, capacity, count, out_count, "values to write") ||
            count == 0)
            return;
        if (!state.results_on_device) {
            // Restored from a snapshot, or kept through an upload that failed: the host has them.
            if (captured)
                fail(STEEL_ERROR_UNSUPPORTED,
                     format("%s: the last solve's results are on the host only (loaded from a "
                            "snapshot, or kept through a failed upload); copying them to the "
                            "device cannot be captured in a CUDA graph; read them once outside "
                            "the capture first",
                            where));
            wait_for_enqueued(device);
            state.impulse.upload(host.results.impulse, device.stream);
            state.velocity.upload(host.results.velocity, device.stream);
            check_cuda(cudaStreamSynchronize(device.stream), where);
            state.results_on_device = true;
        }
        const auto* in = impulses ? state.impulse.data() : state.velocity.data();
        using Real = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
        StreamLaunch{on}(convert_kernel<double, Real>, grid_stride_blocks(count),
                         kGridStrideThreads, 0, in, out, count);
        note_enqueued(device, on, captured, where); // before the check: waited for either way
        check_cuda(cudaGetLastError(), where);
    });
}

} // namespace

// The public calls' device work, each under as_call.
void upload_rows_from_device(Batch& batch, const steel_rows_desc& rows, void* stream) {
    as_call("steel_batch_upload_rows_device", [&] { upload_rows_on_device(batch, rows, stream); });
}

void update_values_from_device(Batch& batch, const steel_row_values_desc& values, void* stream) {
    constexpr const char* where = "steel_batch_update_values_device";
    as_call(where, [&] { update_values_on_device(batch, values, stream, where); });
}

void read_to_device(Batch& batch, DeviceOutput which, double* out, uint64_t capacity,
                    uint64_t* out_count, void* stream, const char* where) {
    as_call(where, [&] { read_on_device(batch, which, out, capacity, out_count, stream, where); });
}

} // namespace steel::cuda
