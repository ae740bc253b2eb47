// Device memory for GrowableBuffer (growable_buffer.hpp): DeviceBuffer<T>, a typed device
// allocation that only grows, so uploads of the same size reuse it, pointers captured in a CUDA
// graph stay valid until the buffer must grow, and a solve never allocates. DeviceGrowth sizes
// many of them at once, all or nothing.
#pragma once

#include "cuda_check.cuh"
#include "growable_buffer.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace steel::cuda {

struct CudaMemory {
    using Stream = cudaStream_t;

    static void* allocate(size_t bytes) {
        void* fresh = nullptr;
        check_cuda(cudaMalloc(&fresh, bytes), "cudaMalloc");
        return fresh;
    }

    // A failed free has nobody to tell; its error must not be blamed on a later launch check.
    static void release(void* data) {
        if (data && cudaFree(data) != cudaSuccess) (void)cudaGetLastError();
    }

    // Host -> device on stream (pageable memory: the call returns once the copy is staged).
    static void copy_in(void* to, const void* from, size_t bytes, cudaStream_t stream) {
        check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream),
                   "cudaMemcpyAsync (upload)");
    }

    // Device -> host on stream; the caller synchronizes the stream before reading the host.
    static void copy_out(void* to, const void* from, size_t bytes, cudaStream_t stream) {
        check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync (download)");
    }
};

template <class T> using DeviceBuffer = GrowableBuffer<T, CudaMemory>;
using DeviceGrowth = BufferGrowth<CudaMemory>;

} // namespace steel::cuda
