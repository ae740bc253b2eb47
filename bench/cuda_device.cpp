// See cuda_device.hpp. Plain host code against the CUDA runtime API (no kernels), compiled by
// the C++ compiler.
#include "cuda_device.hpp"

#if STEEL_BENCH_WITH_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#endif

namespace bench {

#if STEEL_BENCH_WITH_CUDA

namespace {

std::string words(cudaError_t error) {
    return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

// Best (read + write) bandwidth of a device-to-device copy of `bytes`, timed with events.
double copy_bandwidth(size_t bytes, std::string& why) {
    void* from = nullptr;
    void* to = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    double best = 0;
    cudaError_t error = cudaMalloc(&from, bytes);
    if (error == cudaSuccess) error = cudaMalloc(&to, bytes);
    if (error == cudaSuccess) error = cudaMemset(from, 1, bytes);
    if (error == cudaSuccess) error = cudaEventCreate(&start);
    if (error == cudaSuccess) error = cudaEventCreate(&stop);
    if (error == cudaSuccess) error = cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToDevice);
    for (int rep = 0; rep < 10 && error == cudaSuccess; ++rep) {
        error = cudaEventRecord(start, nullptr);
        if (error == cudaSuccess)
            error = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, nullptr);
        if (error == cudaSuccess) error = cudaEventRecord(stop, nullptr);
        if (error == cudaSuccess) error = cudaEventSynchronize(stop);
        float ms = 0;
        if (error == cudaSuccess) error = cudaEventElapsedTime(&ms, start, stop);
        if (error == cudaSuccess && ms > 0) best = std::max(best, 2.0 * double(bytes) / (ms * 1e6));
    }
    if (error != cudaSuccess) {
        why = "copy: " + words(error);
        (void)cudaGetLastError();
        best = 0;
    }
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (from) cudaFree(from);
    if (to) cudaFree(to);
    return best;
}

} // namespace

CudaDevice query_cuda_device() {
    CudaDevice device;
    cudaRuntimeGetVersion(&device.runtime_version);
    cudaDriverGetVersion(&device.driver_version);
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess || count == 0) {
        device.why_not =
            "cudaGetDeviceCount: " + (error != cudaSuccess ? words(error) : "0 devices");
        (void)cudaGetLastError();
        return device;
    }
    cudaDeviceProp prop{};
    if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) {
        device.why_not = "cudaGetDeviceProperties: " + words(e);
        return device;
    }
    device.present = true;
    device.name = prop.name;
    device.major = prop.major;
    device.minor = prop.minor;
    device.multiprocessors = prop.multiProcessorCount;
    device.memory_gib = double(prop.totalGlobalMem) / double(1u << 30);
    int clock_khz = 0, bus_bits = 0, l2_bytes = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) == cudaSuccess)
        device.spec_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    if (cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0) == cudaSuccess)
        device.l2_mib = l2_bytes / double(1u << 20);
    (void)cudaGetLastError();
    // 1 GiB each way (far past any cache), or an eighth of the memory on a small device.
    const size_t bytes = std::min<size_t>(size_t(1) << 30, prop.totalGlobalMem / 8);
    device.copy_bytes = double(bytes);
    std::string why;
    device.copy_gbs = copy_bandwidth(bytes, why);
    if (device.copy_gbs == 0) device.why_not = why; // present, but no copy figure
    return device;
}

void cuda_device_synchronize() {
    (void)cudaDeviceSynchronize();
}

#else

CudaDevice query_cuda_device() {
    CudaDevice device;
    device.why_not = "this build has no CUDA backend (STEEL_CUDA=OFF or no nvcc)";
    return device;
}

void cuda_device_synchronize() {}

#endif

} // namespace bench
