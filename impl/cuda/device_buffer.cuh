// One typed device allocation that only grows: uploads of the same size reuse it, so pointers
// captured in a CUDA graph stay valid until the buffer must grow, and a solve never allocates.
#pragma once

#include "cuda_check.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace steel::cuda {

template <class T> class DeviceBuffer {
  public:
    using value_type = T;
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { release(data_); }

    T* data() const { return data_; }
    size_t size() const { return size_; }

    // Makes room for count elements; the old contents are lost if it had to grow.
    void resize(size_t count) {
        if (count > capacity_) {
            T* fresh = nullptr;
            check_cuda(cudaMalloc(&fresh, count * sizeof(T)), "cudaMalloc");
            release(data_);
            data_ = fresh;
            capacity_ = count;
        }
        size_ = count;
    }

    // Host -> device on stream (pageable memory: the call returns once the copy is staged).
    void upload(const std::vector<T>& host, cudaStream_t stream) {
        resize(host.size());
        if (!host.empty())
            check_cuda(cudaMemcpyAsync(data_, host.data(), host.size() * sizeof(T),
                                       cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync (upload)");
    }

    // Device -> host on stream; the caller synchronizes the stream before reading host.
    void download(std::vector<T>& host, cudaStream_t stream) const {
        host.resize(size_);
        if (size_ > 0)
            check_cuda(cudaMemcpyAsync(host.data(), data_, size_ * sizeof(T),
                                       cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync (download)");
    }

  private:
    // A failed free has nobody to tell; its error must not be blamed on a later launch check.
    static void release(T* data) {
        if (data && cudaFree(data) != cudaSuccess) (void)cudaGetLastError();
    }

    T* data_ = nullptr;
    size_t size_ = 0;
    size_t capacity_ = 0;
};

} // namespace steel::cuda
