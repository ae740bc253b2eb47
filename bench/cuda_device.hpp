// bench_cuda's view of the GPU, through the CUDA runtime itself (not through Steel): the model,
// its memory, the driver and runtime versions, its peak memory bandwidth as the device reports
// it, and the bandwidth a large device-to-device cudaMemcpy reaches. Built with the CUDA runtime
// only where Steel's CUDA backend is built (STEEL_BENCH_WITH_CUDA); elsewhere query() says so.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

struct CudaDevice {
    bool present = false;
    std::string why_not; // when !present: the runtime's words, or "built without CUDA"
    std::string name;
    int major = 0, minor = 0;
    int multiprocessors = 0;
    double memory_gib = 0;
    int driver_version = 0, runtime_version = 0; // e.g. 13000 = 13.0
    // 2 x memory clock x bus width / 8 (cudaDevAttrMemoryClockRate,
    // cudaDevAttrGlobalMemoryBusWidth); 0 if the device does not report them.
    double spec_gbs = 0;
    double l2_mib = 0;
    // A device-to-device cudaMemcpy of copy_bytes: (bytes read + bytes written) / time, best of
    // several copies.
    double copy_gbs = 0;
    double copy_bytes = 0;
};

// Looks at device 0 and times the copy (about 0.1 s on a device).
CudaDevice query_cuda_device();

// Waits for all work on the device (after back-to-back steel_batch_solve_async calls); a no-op
// without CUDA.
void cuda_device_synchronize();

} // namespace bench
