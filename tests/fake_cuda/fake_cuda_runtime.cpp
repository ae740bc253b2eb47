// The emulated CUDA runtime behind tests/fake_cuda/cuda_runtime.h. It is as lazy as CUDA allows,
// so that a missing wait shows as a wrong number instead of passing by luck:
//
// - Work on a stream runs only when something waits for it: a stream, event or device
//   synchronization, a copy into pageable host memory (which returns only once done), or
//   cudaFree (which synchronizes the device). Work on the legacy default stream (NULL) runs
//   after all work enqueued before it on blocking streams, and theirs after its.
// - A copy from host memory reads it when called (CUDA stages pageable memory at once).
// - Memory is pages of the process under a device-sized limit, which the host cannot touch:
//   they are open only while device work runs (device_memory.hpp), so host code that reads or
//   writes device memory faults, as on a GPU. Copies are checked to stay inside one allocation
//   on the device side; a guard page (and, under AddressSanitizer, poisoned bytes) surrounds
//   each allocation, and a freed one stays closed for a while, so a kernel or copy that runs
//   past one or touches a freed one faults too.
// - Graph capture records what a capturing stream is given. A synchronizing or allocating call
//   made while a capture is open in this thread (ThreadLocal) or any thread (Global; a device
//   synchronization in any mode) invalidates the capture and fails, as CUDA does; so do a copy
//   from or to host memory in a capture, legacy-stream work while a blocking stream captures,
//   and ending a capture from another thread. Work on an invalidated capture is refused.
// - A stream used after cudaStreamDestroy answers cudaErrorInvalidResourceHandle (the real
//   runtime's behaviour is undefined); its pending work still runs when waited for. A host
//   function may not call CUDA. The last error is per thread.
// - Kernels run in the SIMT emulation; a problem it catches (a divergent warp operation, shared
//   memory overrun), or an exception from queued work, is printed and makes the device fail from
//   then on, like a kernel fault: a sticky cudaErrorLaunchFailure, which every call that touches
//   the device then answers, cudaFuncGetAttributes included. A test can set such a state with
//   another error (fake_cuda::set_sticky_error: cudaErrorIllegalAddress, say) and clear it.
//
// - Two devices, each with its own memory limit and legacy stream; a stream, an event and an
//   allocation belong to the device current when they were made. As CUDA's programming guide
//   states: a kernel launch into another device's stream fails, and so does an event record
//   across devices; copies, event waits and synchronization of another device's stream or event
//   succeed. A device synchronization runs only the current device's work.
// - A device synchronization (and cudaFree) drains the streams oldest first, the legacy stream
//   before them; STEEL_FAKE_CUDA_DRAIN=reverse drains the newest first and the legacy stream
//   last, another order CUDA allows, so that a wait missing between two streams shows in one
//   of the two runs (ctest runs the interop tests both ways).
//
// One global lock: the emulation runs one kernel at a time.
#include "cuda_runtime.h"

#include "../simt/host_simt.hpp"
#include "device_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

struct Operation {
    std::function<void()> run;
    // Work on another stream that must be done first (the legacy default stream's ordering).
    std::vector<std::pair<CUstream_st*, uint64_t>> after;
};

struct CUgraph_st {
    std::vector<std::function<void()>> operations;
};

struct CUgraphExec_st {
    std::vector<std::function<void()>> operations;
};

struct CUstream_st {
    int device = 0;       // current when it was made
    bool blocking = true; // not cudaStreamNonBlocking: ordered with the legacy stream
    bool destroyed = false;
    unsigned long long id = 0;
    std::deque<Operation> pending; // enqueued, not yet run
    uint64_t enqueued = 0;         // operations ever enqueued
    uint64_t done = 0;             // of those, run
    // An open capture.
    std::unique_ptr<CUgraph_st> capture;
    bool capture_invalidated = false;
    cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;
    std::thread::id capture_thread;
};

struct CUevent_st {
    int device = 0;                // current when it was made
    CUstream_st* stream = nullptr; // where it was last recorded; null: never (complete)
    uint64_t position = 0;         // done once that stream has run this many operations
};

namespace {

std::recursive_mutex lock;
using Guard = std::lock_guard<std::recursive_mutex>;

thread_local cudaError_t last_error = cudaSuccess; // per thread, as in CUDA
// Sticky, after a kernel fault: what every call that touches a device answers from then on.
cudaError_t sticky_error = cudaSuccess;
int compute_major = 9, compute_minor = 0; // what the devices report (set_compute_capability)
int resident_block_count = 2;             // any kernel's, per multiprocessor (set_resident_blocks)
thread_local int current_device = 0;
thread_local bool in_host_function = false; // CUDA calls are not permitted from one

constexpr int kDeviceCount = 2;
CUstream_st legacy_streams[kDeviceCount]; // each device's own NULL stream
const bool legacy_streams_placed = [] {
    for (int device = 0; device < kDeviceCount; ++device)
        legacy_streams[device].device = device;
    return true;
}();
std::vector<std::unique_ptr<CUstream_st>> streams; // made, and not yet forgotten (collect_streams)
unsigned long long next_stream_id = 1;
std::set<CUevent_st*> events;
std::set<CUgraph_st*> graphs;
std::set<CUgraphExec_st*> execs;

size_t memory_limit = size_t(1) << 30; // each device's
size_t memory_used[kDeviceCount] = {};
struct Allocation {
    size_t bytes = 0;
    int device = 0;
};
std::map<uintptr_t, Allocation> allocations; // by start

cudaError_t answer(cudaError_t error) {
    if (error != cudaSuccess) last_error = error;
    return error;
}

CUstream_st* stream_of(cudaStream_t stream) {
    return stream ? stream : &legacy_streams[current_device];
}

bool is_legacy(const CUstream_st* stream) {
    return stream >= legacy_streams && stream < legacy_streams + kDeviceCount;
}

bool known_stream(cudaStream_t stream) {
    if (!stream) return true;
    for (const auto& s : streams)
        if (s.get() == stream) return !s->destroyed;
    return false;
}

// The allocation that pointer points into (or just past): its start and size.
bool find_allocation(const void* pointer, uintptr_t& start, size_t& size) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(pointer);
    auto it = allocations.upper_bound(at);
    if (it == allocations.begin()) return false;
    --it;
    if (at - it->first > it->second.bytes) return false;
    start = it->first;
    size = it->second.bytes;
    return true;
}

// [pointer, pointer + bytes) lies inside one allocation.
bool on_device(const void* pointer, size_t bytes) {
    uintptr_t start = 0;
    size_t size = 0;
    if (!find_allocation(pointer, start, size)) return false;
    const size_t offset = reinterpret_cast<uintptr_t>(pointer) - start;
    return bytes <= size - offset;
}

bool is_device_pointer(const void* pointer) {
    uintptr_t start = 0;
    size_t size = 0;
    return find_allocation(pointer, start, size) &&
           (reinterpret_cast<uintptr_t>(pointer) - start < size || size == 0);
}

void run_until(CUstream_st* stream, uint64_t position);

void run_one(CUstream_st* stream) {
    Operation operation = std::move(stream->pending.front());
    stream->pending.pop_front();
    for (const auto& [other, position] : operation.after)
        run_until(other, position);
    ++stream->done;
    if (sticky_error != cudaSuccess) return;
    fake_cuda::memory::open();
    struct Closer {
        ~Closer() { fake_cuda::memory::close(); }
    } closer;
    try {
        operation.run();
    } catch (...) { // a kernel or host function that throws: a fault, as on a device
        std::fprintf(stderr, "fake_cuda: queued work threw an exception\n");
        sticky_error = cudaErrorLaunchFailure;
    }
}

// Runs stream's work until it has run `position` operations.
void run_until(CUstream_st* stream, uint64_t position) {
    while (stream->done < position && !stream->pending.empty())
        run_one(stream);
}

// STEEL_FAKE_CUDA_DRAIN: "forward" (or unset) or "reverse" (see the top of this file).
bool drain_reverse() {
    static const bool reverse = [] {
        const char* value = std::getenv("STEEL_FAKE_CUDA_DRAIN");
        if (!value || std::strcmp(value, "forward") == 0) return false;
        if (std::strcmp(value, "reverse") == 0) return true;
        std::fprintf(stderr, "fake_cuda: STEEL_FAKE_CUDA_DRAIN=%s: expected forward or reverse\n",
                     value);
        std::exit(2);
    }();
    return reverse;
}

// Runs all of one device's work, stream by stream in the drain order.
void run_all(int device) {
    CUstream_st& legacy = legacy_streams[device];
    const bool reverse = drain_reverse();
    for (bool ran = true; ran;) {
        ran = false;
        const auto drain = [&](CUstream_st* stream) {
            if (stream->device != device) return;
            ran = ran || !stream->pending.empty();
            run_until(stream, stream->enqueued);
        };
        if (!reverse) drain(&legacy);
        // By index: queued work cannot make streams (a host function may not call CUDA).
        for (size_t k = 0; k < streams.size(); ++k)
            drain(streams[reverse ? streams.size() - 1 - k : k].get());
        if (reverse) drain(&legacy);
    }
}

// A call that synchronizes or allocates, made while a capture is open where CUDA forbids it:
// the capture is invalidated and the call fails.
bool capture_forbids(bool even_relaxed = false) {
    bool forbidden = false;
    for (const auto& s : streams) {
        if (!s->capture || s->destroyed) continue;
        const bool applies = even_relaxed || s->capture_mode == cudaStreamCaptureModeGlobal ||
                             (s->capture_mode == cudaStreamCaptureModeThreadLocal &&
                              s->capture_thread == std::this_thread::get_id());
        if (applies) {
            s->capture_invalidated = true;
            forbidden = true;
        }
    }
    return forbidden;
}

// Work on the legacy stream while a blocking stream captures would join the capture: CUDA
// invalidates the capture and refuses it.
bool legacy_forbidden(const CUstream_st* stream) {
    if (!is_legacy(stream)) return false;
    bool forbidden = false;
    for (const auto& s : streams)
        if (s->capture && s->blocking && !s->destroyed && &legacy_streams[s->device] == stream) {
            s->capture_invalidated = true;
            forbidden = true;
        }
    return forbidden;
}

// Puts `run` on stream, or in the graph it is capturing.
cudaError_t enqueue(cudaStream_t handle, std::function<void()> run) {
    CUstream_st* stream = stream_of(handle);
    if (stream->capture) {
        if (stream->capture_invalidated) return answer(cudaErrorStreamCaptureInvalidated);
        stream->capture->operations.push_back(std::move(run));
        return cudaSuccess;
    }
    if (legacy_forbidden(stream)) return answer(cudaErrorStreamCaptureImplicit);
    Operation operation{std::move(run), {}};
    if (is_legacy(stream)) {
        for (const auto& s : streams)
            if (s->blocking && &legacy_streams[s->device] == stream &&
                (!s->destroyed || !s->pending.empty()))
                operation.after.push_back({s.get(), s->enqueued});
    } else if (stream->blocking) {
        CUstream_st& legacy = legacy_streams[stream->device];
        operation.after.push_back({&legacy, legacy.enqueued});
    }
    stream->pending.push_back(std::move(operation));
    ++stream->enqueued;
    return cudaSuccess;
}

cudaError_t check_stream(cudaStream_t stream) {
    if (in_host_function) return answer(cudaErrorNotPermitted);
    if (sticky_error != cudaSuccess) return answer(sticky_error);
    return known_stream(stream) ? cudaSuccess : answer(cudaErrorInvalidResourceHandle);
}

// Copies from host memory in a capture: CUDA cannot record pageable copies.
bool host_side(const void* to, const void* from, cudaMemcpyKind kind) {
    switch (kind) {
    case cudaMemcpyHostToDevice:
    case cudaMemcpyDeviceToHost:
    case cudaMemcpyHostToHost:
        return true;
    case cudaMemcpyDeviceToDevice:
        return false;
    default:
        return !is_device_pointer(to) || !is_device_pointer(from);
    }
}

cudaError_t copy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t handle,
                 bool synchronous) {
    if (const cudaError_t e = check_stream(handle)) return e;
    const bool to_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice ||
                           (kind == cudaMemcpyDefault && is_device_pointer(to));
    const bool from_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice ||
                             (kind == cudaMemcpyDefault && is_device_pointer(from));
    if ((to_device && !on_device(to, bytes)) || (from_device && !on_device(from, bytes)))
        return answer(cudaErrorInvalidValue);
    if (bytes == 0) return cudaSuccess;
    CUstream_st* stream = stream_of(handle);
    if (stream->capture && host_side(to, from, kind)) {
        stream->capture_invalidated = true;
        return answer(cudaErrorStreamCaptureUnsupported);
    }
    if (legacy_forbidden(stream)) return answer(cudaErrorStreamCaptureImplicit);
    // A synchronous copy from pageable memory first waits for the stream's earlier work.
    if (synchronous && !from_device && !stream->capture) run_until(stream, stream->enqueued);
    if (!from_device) { // staged now
        auto staged = std::make_shared<std::vector<unsigned char>>(
            static_cast<const unsigned char*>(from),
            static_cast<const unsigned char*>(from) + bytes);
        if (const cudaError_t e =
                enqueue(handle, [to, staged] { std::memcpy(to, staged->data(), staged->size()); }))
            return e;
    } else if (const cudaError_t e =
                   enqueue(handle, [to, from, bytes] { std::memmove(to, from, bytes); })) {
        return e;
    }
    // Into pageable host memory: returns once done (a fault in the work waited for shows here).
    if (!to_device && !stream->capture) {
        run_until(stream, stream->enqueued);
        if (sticky_error != cudaSuccess) return answer(sticky_error);
    }
    return cudaSuccess;
}

} // namespace

const char* cudaGetErrorName(cudaError_t error) {
    switch (error) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevicePointer:
        return "cudaErrorInvalidDevicePointer";
    case cudaErrorInsufficientDriver:
        return "cudaErrorInsufficientDriver";
    case cudaErrorNoDevice:
        return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice:
        return "cudaErrorInvalidDevice";
    case cudaErrorNoKernelImageForDevice:
        return "cudaErrorNoKernelImageForDevice";
    case cudaErrorUnsupportedPtxVersion:
        return "cudaErrorUnsupportedPtxVersion";
    case cudaErrorInvalidResourceHandle:
        return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalState:
        return "cudaErrorIllegalState";
    case cudaErrorIllegalAddress:
        return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure:
        return "cudaErrorLaunchFailure";
    case cudaErrorStreamCaptureUnsupported:
        return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
        return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureImplicit:
        return "cudaErrorStreamCaptureImplicit";
    case cudaErrorStreamCaptureWrongThread:
        return "cudaErrorStreamCaptureWrongThread";
    case cudaErrorNotPermitted:
        return "cudaErrorNotPermitted";
    }
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
    case cudaSuccess:
        return "no error";
    case cudaErrorMemoryAllocation:
        return "out of memory (emulated device)";
    case cudaErrorStreamCaptureUnsupported:
        return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
        return "operation failed due to a previous error during capture";
    case cudaErrorNoKernelImageForDevice: // the real runtime's words
        return "no kernel image is available for execution on the device";
    case cudaErrorIllegalAddress:
        return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure:
        return "unspecified launch failure";
    default:
        return "emulated CUDA error";
    }
}

cudaError_t cudaGetLastError() {
    const Guard guard(lock);
    const cudaError_t error = sticky_error != cudaSuccess ? sticky_error : last_error;
    last_error = cudaSuccess;
    return error;
}

cudaError_t cudaPeekAtLastError() {
    const Guard guard(lock);
    return sticky_error != cudaSuccess ? sticky_error : last_error;
}

cudaError_t cudaGetDeviceCount(int* count) {
    *count = kDeviceCount;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    *device = current_device;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    const Guard guard(lock);
    if (device < 0 || device >= kDeviceCount) return answer(cudaErrorInvalidDevice);
    current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    const Guard guard(lock);
    if (device < 0 || device >= kDeviceCount) return answer(cudaErrorInvalidDevice);
    *prop = cudaDeviceProp{};
    std::snprintf(prop->name, sizeof prop->name, "emulated CUDA device (tests/fake_cuda)");
    prop->totalGlobalMem = memory_limit;
    prop->major = compute_major;
    prop->minor = compute_minor;
    prop->multiProcessorCount = 1;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
    *version = 13000;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
    *version = 13000;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
    const Guard guard(lock);
    if (in_host_function) return answer(cudaErrorNotPermitted);
    if (capture_forbids(/*even_relaxed=*/true)) return answer(cudaErrorStreamCaptureUnsupported);
    run_all(current_device);
    return sticky_error != cudaSuccess ? answer(sticky_error) : cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
    const Guard guard(lock);
    const size_t used = memory_used[current_device];
    *free_bytes = memory_limit > used ? memory_limit - used : 0;
    *total_bytes = memory_limit;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void** pointer, size_t bytes) {
    const Guard guard(lock);
    if (in_host_function) return answer(cudaErrorNotPermitted);
    *pointer = nullptr;
    if (sticky_error != cudaSuccess) return answer(sticky_error);
    if (capture_forbids()) return answer(cudaErrorStreamCaptureUnsupported);
    size_t& used = memory_used[current_device];
    if (used > memory_limit || bytes > memory_limit - used)
        return answer(cudaErrorMemoryAllocation);
    void* fresh = fake_cuda::memory::allocate(bytes);
    if (!fresh) return answer(cudaErrorMemoryAllocation);
    allocations[reinterpret_cast<uintptr_t>(fresh)] = {bytes, current_device};
    used += bytes;
    *pointer = fresh;
    return cudaSuccess;
}

cudaError_t cudaFree(void* pointer) {
    const Guard guard(lock);
    if (in_host_function) return answer(cudaErrorNotPermitted);
    if (!pointer) return cudaSuccess;
    if (capture_forbids()) return answer(cudaErrorStreamCaptureUnsupported);
    const auto it = allocations.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == allocations.end()) return answer(cudaErrorInvalidValue);
    run_all(it->second.device); // cudaFree synchronizes the memory's device
    if (sticky_error != cudaSuccess) return answer(sticky_error);
    memory_used[it->second.device] -= it->second.bytes;
    allocations.erase(it);
    fake_cuda::memory::release(pointer);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind) {
    const Guard guard(lock);
    if (capture_forbids()) return answer(cudaErrorStreamCaptureUnsupported);
    return copy(to, from, bytes, kind, nullptr, /*synchronous=*/true);
}

cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
    const Guard guard(lock);
    const bool into_host = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost ||
                           (kind == cudaMemcpyDefault && !is_device_pointer(to));
    // Into pageable memory the call waits for the copy: a synchronizing call.
    if (into_host && !stream_of(stream)->capture && capture_forbids())
        return answer(cudaErrorStreamCaptureUnsupported);
    return copy(to, from, bytes, kind, stream, /*synchronous=*/false);
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t stream) {
    const Guard guard(lock);
    if (const cudaError_t e = check_stream(stream)) return e;
    if (!on_device(pointer, bytes)) return answer(cudaErrorInvalidValue);
    return enqueue(stream, [pointer, value, bytes] { std::memset(pointer, value, bytes); });
}

cudaError_t cudaMemset(void* pointer, int value, size_t bytes) {
    return cudaMemsetAsync(pointer, value, bytes, nullptr); // asynchronous for device memory
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
    const Guard guard(lock);
    auto fresh = std::make_unique<CUstream_st>();
    fresh->device = current_device;
    fresh->blocking = (flags & cudaStreamNonBlocking) == 0;
    fresh->id = next_stream_id++;
    *stream = fresh.get();
    streams.push_back(std::move(fresh));
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
    return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

namespace {

// Forgets destroyed streams whose work has all run (a long fuzzing run makes millions), after
// taking them out of the events and dependencies that still name them (all of it done).
void collect_streams() {
    std::set<const CUstream_st*> gone;
    for (const auto& s : streams)
        if (s->destroyed && s->pending.empty()) gone.insert(s.get());
    if (gone.empty()) return;
    for (CUevent_st* event : events)
        if (gone.count(event->stream)) event->stream = nullptr;
    const auto scrub = [&](CUstream_st& stream) {
        for (Operation& operation : stream.pending)
            operation.after.erase(
                std::remove_if(operation.after.begin(), operation.after.end(),
                               [&](const auto& d) { return gone.count(d.first); }),
                operation.after.end());
    };
    for (CUstream_st& legacy : legacy_streams)
        scrub(legacy);
    for (const auto& s : streams)
        scrub(*s);
    streams.erase(std::remove_if(streams.begin(), streams.end(),
                                 [&](const auto& s) { return gone.count(s.get()) > 0; }),
                  streams.end());
}

} // namespace

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    const Guard guard(lock);
    if (!stream || !known_stream(stream)) return answer(cudaErrorInvalidResourceHandle);
    stream->destroyed = true; // its pending work still runs when something waits for it
    stream->capture.reset();
    collect_streams();
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    const Guard guard(lock);
    if (const cudaError_t e = check_stream(stream)) return e;
    CUstream_st* s = stream_of(stream);
    if (s->capture) {
        s->capture_invalidated = true;
        return answer(cudaErrorStreamCaptureUnsupported);
    }
    if (capture_forbids()) return answer(cudaErrorStreamCaptureUnsupported);
    run_until(s, s->enqueued);
    return sticky_error != cudaSuccess ? answer(sticky_error) : cudaSuccess;
}

cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long* id) {
    const Guard guard(lock);
    if (const cudaError_t e = check_stream(stream)) return e;
    *id = stream_of(stream)->id;
    return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t function, void* user_data) {
    const Guard guard(lock);
    if (const cudaError_t e = check_stream(stream)) return e;
    return enqueue(stream, [function, user_data] {
        const fake_cuda::memory::HostSide host_code;
        in_host_function = true;
        function(user_data);
        in_host_function = false;
    });
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int /*flags*/) {
    const Guard guard(lock);
    *event = new CUevent_st;
    (*event)->device = current_device;
    events.insert(*event);
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    const Guard guard(lock);
    if (!events.erase(event)) return answer(cudaErrorInvalidResourceHandle);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    const Guard guard(lock);
    if (!events.count(event)) return answer(cudaErrorInvalidResourceHandle);
    if (const cudaError_t e = check_stream(stream)) return e;
    CUstream_st* s = stream_of(stream);
    if (s->device != event->device) return answer(cudaErrorInvalidResourceHandle);
    if (s->capture) return answer(cudaErrorStreamCaptureUnsupported); // Steel never does this
    // An operation of its own, so that it carries the legacy stream's ordering.
    if (const cudaError_t e = enqueue(stream, [] {})) return e;
    event->stream = s;
    event->position = s->enqueued;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    const Guard guard(lock);
    if (in_host_function) return answer(cudaErrorNotPermitted);
    if (!events.count(event)) return answer(cudaErrorInvalidResourceHandle);
    if (capture_forbids()) return answer(cudaErrorStreamCaptureUnsupported);
    if (event->stream) run_until(event->stream, event->position);
    return sticky_error != cudaSuccess ? answer(sticky_error) : cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
    const Guard guard(lock);
    if (const cudaError_t e = check_stream(stream)) return e;
    if (!stream) return answer(cudaErrorStreamCaptureImplicit);
    if (stream->capture) return answer(cudaErrorIllegalState);
    stream->capture = std::make_unique<CUgraph_st>();
    stream->capture_invalidated = false;
    stream->capture_mode = mode;
    stream->capture_thread = std::this_thread::get_id();
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
    const Guard guard(lock);
    *graph = nullptr;
    if (const cudaError_t e = check_stream(stream)) return e;
    if (!stream || !stream->capture) return answer(cudaErrorIllegalState);
    if (stream->capture_mode != cudaStreamCaptureModeRelaxed &&
        stream->capture_thread != std::this_thread::get_id())
        return answer(cudaErrorStreamCaptureWrongThread);
    std::unique_ptr<CUgraph_st> captured = std::move(stream->capture);
    if (stream->capture_invalidated) return answer(cudaErrorStreamCaptureInvalidated);
    *graph = captured.release();
    graphs.insert(*graph);
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
    const Guard guard(lock);
    *status = cudaStreamCaptureStatusNone;
    if (const cudaError_t e = check_stream(stream)) return e;
    const CUstream_st* s = stream_of(stream);
    if (legacy_forbidden(s)) return answer(cudaErrorStreamCaptureImplicit);
    if (s->capture)
        *status = s->capture_invalidated ? cudaStreamCaptureStatusInvalidated
                                         : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long /*flags*/) {
    const Guard guard(lock);
    if (!graphs.count(graph)) return answer(cudaErrorInvalidValue);
    *exec = new CUgraphExec_st{graph->operations};
    execs.insert(*exec);
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    const Guard guard(lock);
    if (!execs.count(exec)) return answer(cudaErrorInvalidValue);
    if (const cudaError_t e = check_stream(stream)) return e;
    for (const auto& operation : exec->operations)
        enqueue(stream, operation);
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    const Guard guard(lock);
    if (!execs.erase(exec)) return answer(cudaErrorInvalidValue);
    delete exec;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    const Guard guard(lock);
    if (!graphs.erase(graph)) return answer(cudaErrorInvalidValue);
    delete graph;
    return cudaSuccess;
}

namespace fake_cuda {

cudaError_t launch(cudaStream_t stream, uint32_t blocks, uint32_t threads, size_t shared_bytes,
                   std::function<void()> run) {
    const Guard guard(lock);
    if (const cudaError_t e = check_stream(stream)) return e;
    if (stream_of(stream)->device != current_device) return answer(cudaErrorInvalidResourceHandle);
    if (blocks == 0 || threads == 0 || threads > 1024) return answer(cudaErrorInvalidValue);
    return enqueue(stream, [blocks, threads, shared_bytes, run = std::move(run)] {
        simt::launch({blocks, 1, 1}, {threads, 1, 1}, shared_bytes, run);
        const std::vector<std::string> problems = simt::take_problems();
        if (problems.empty()) return;
        for (const std::string& problem : problems)
            std::fprintf(stderr, "fake_cuda: kernel fault: %s\n", problem.c_str());
        sticky_error = cudaErrorLaunchFailure;
    });
}

void set_memory_limit(size_t bytes) {
    const Guard guard(lock);
    memory_limit = bytes;
}

cudaError_t function_attributes(cudaFuncAttributes* attributes) {
    const Guard guard(lock);
    *attributes = cudaFuncAttributes{};
    if (sticky_error != cudaSuccess) return answer(sticky_error);
    if (compute_major < 9) return answer(cudaErrorNoKernelImageForDevice);
    return cudaSuccess;
}

void set_sticky_error(cudaError_t error) {
    const Guard guard(lock);
    sticky_error = error;
    last_error = cudaSuccess;
}

void set_compute_capability(int major, int minor) {
    const Guard guard(lock);
    compute_major = major;
    compute_minor = minor;
}

cudaError_t resident_blocks(int* blocks, int block_threads, size_t shared_bytes) {
    const Guard guard(lock);
    if (sticky_error != cudaSuccess) return answer(sticky_error);
    // A block past the device's limits (1,024 threads, the 48 KB of shared memory a kernel gets
    // without opting in) is refused, so that a launch geometry Steel should never ask about
    // shows as an error rather than as a count.
    if (block_threads <= 0 || block_threads > 1024 || shared_bytes > 48 * 1024)
        return answer(cudaErrorInvalidValue);
    *blocks = resident_block_count;
    return cudaSuccess;
}

void set_resident_blocks(int blocks) {
    const Guard guard(lock);
    resident_block_count = blocks;
}

} // namespace fake_cuda
