// A stand-in for the CUDA runtime's header, so that the CPU tests can run the CUDA backend's host
// code (impl/cuda/device_batch.cu, compiled by g++) and the GPU tests on an emulated device:
// memory is host memory with a size limit, streams are queues that run as late as CUDA allows,
// kernels run in the SIMT emulation (tests/simt/host_simt.hpp), and graph capture records what
// a stream is given. Only what Steel and its GPU tests call is here; fake_cuda_runtime.cpp says
// what each call checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorUnsupportedPtxVersion = 222,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorIllegalState = 401,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotPermitted = 800,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureImplicit = 906,
    cudaErrorStreamCaptureWrongThread = 908,
};

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

enum cudaStreamCaptureStatus {
    cudaStreamCaptureStatusNone = 0,
    cudaStreamCaptureStatusActive = 1,
    cudaStreamCaptureStatusInvalidated = 2,
};

enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02

struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;
typedef CUgraph_st* cudaGraph_t;
typedef CUgraphExec_st* cudaGraphExec_t;
typedef void (*cudaHostFn_t)(void* user_data);

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    int major, minor;
    int multiProcessorCount;
    int memoryClockRate; // kHz
    int memoryBusWidth;  // bits
};

struct cudaFuncAttributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion;
};

const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);

cudaError_t cudaMalloc(void** pointer, size_t bytes);
template <class T> cudaError_t cudaMalloc(T** pointer, size_t bytes) {
    return cudaMalloc(reinterpret_cast<void**>(pointer), bytes);
}
cudaError_t cudaFree(void* pointer);
cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* pointer, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* pointer, int value, size_t bytes, cudaStream_t stream = nullptr);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long* id);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t function, void* user_data);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);

namespace fake_cuda {
cudaError_t function_attributes(cudaFuncAttributes* attributes);
cudaError_t resident_blocks(int* blocks, int block_threads, size_t shared_bytes);
} // namespace fake_cuda

// Every kernel of this build is "in the image" of a device of compute capability 9.0 or above
// (fake_cuda::set_compute_capability); a device in a sticky error state answers its error.
template <class Kernel> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, Kernel) {
    return fake_cuda::function_attributes(attributes);
}

// Every kernel gets the same answer: fake_cuda::set_resident_blocks's count (2 unless set), for
// blocks of at most 1,024 threads.
template <class Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel, int block_threads,
                                                          size_t shared_bytes) {
    return fake_cuda::resident_blocks(blocks, block_threads, shared_bytes);
}

namespace fake_cuda {

// What `kernel<<<blocks, threads, shared_bytes, stream>>>` becomes: `run` (the kernel called with
// its arguments, copied) is enqueued on stream and runs in the SIMT emulation when the stream
// gets to it. What the emulation catches makes the device fail, as a kernel fault would.
cudaError_t launch(cudaStream_t stream, uint32_t blocks, uint32_t threads, size_t shared_bytes,
                   std::function<void()> run);

// The device's memory in bytes (cudaMemGetInfo's total), for tests of running out of it.
void set_memory_limit(size_t bytes);

// Puts the devices in the sticky error state a kernel fault leaves (a fault the emulation catches
// does it with cudaErrorLaunchFailure): from then on every call that touches a device, and
// cudaGetLastError, answers `error`, as a CUDA context does until its process ends. cudaSuccess
// takes them out of it again, which only a test can do.
void set_sticky_error(cudaError_t error);

// The compute capability the devices report (cudaGetDeviceProperties; 9.0 unless set). Below 9.0
// this build has no code for them: cudaFuncGetAttributes answers
// cudaErrorNoKernelImageForDevice, as CUDA does for a device without the kernel's machine code or
// PTX that it can compile.
void set_compute_capability(int major, int minor);

// The blocks of any kernel resident on one multiprocessor at once
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor; 2 unless set). The device has one
// multiprocessor.
void set_resident_blocks(int blocks);

} // namespace fake_cuda
