// The host emulation of warps (tests/simt/host_simt.hpp) against what a GPU does, and its
// checks against the mistakes it is there to catch: a test of the test tool, so that a clean
// emulated run of the CUDA kernels means something.
#include "simt/host_simt.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>

TEST_CASE("simt: shuffles, votes and thread indices behave as on a GPU") {
    std::atomic<int> wrong{0};
    simt::launch({3, 1, 1}, {64, 1, 1}, 0, [&] {
        const uint32_t lane = threadIdx.x % 32;
        const double mine = double(blockIdx.x * 100 + threadIdx.x);
        // A butterfly sum gives every lane the warp's total.
        double sum = mine;
        for (int offset = 16; offset > 0; offset >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        const double first = double(blockIdx.x * 100 + (threadIdx.x / 32) * 32);
        if (sum != 32 * first + 496) ++wrong;
        if (__shfl_sync(0xffffffffu, mine, 5) != first + 5) ++wrong;
        if (__all_sync(0xffffffffu, lane < 32) != 1 || __all_sync(0xffffffffu, lane != 7) != 0)
            ++wrong;
        if (blockDim.x != 64 || gridDim.x != 3) ++wrong;
    });
    CHECK(wrong == 0);
    CHECK(simt::take_problems().empty());
}

TEST_CASE("simt: catches a divergent shuffle, a partial mask and a shared-memory overrun") {
    simt::launch({1, 1, 1}, {32, 1, 1}, 0, [] {
        if (threadIdx.x == 0)
            (void)__shfl_sync(0xffffffffu, 1.0, 0);
        else
            __syncwarp();
    });
    CHECK(simt::take_problems().size() == 1);

    simt::launch({1, 1, 1}, {32, 1, 1}, 0, [] { (void)__shfl_sync(0xffffu, 1, 0); });
    CHECK(simt::take_problems().size() == 1);

#if !defined(__SANITIZE_ADDRESS__) // under ASan the overrun is ASan's to report
    simt::launch({2, 1, 1}, {32, 1, 1}, 64, [] {
        if (threadIdx.x == 0) simt::shared_memory()[64] = 0;
    });
    CHECK(simt::take_problems().size() == 2); // once a block
#endif
    simt::launch({1, 1, 1}, {32, 1, 1}, 64 * 1024, [] {});
    CHECK(simt::take_problems().size() == 1); // more than 48 KB without opting in
}

TEST_CASE("simt: shared memory starts as NaNs, one region per block") {
    std::atomic<int> nan_reads{0};
    simt::launch({2, 1, 1}, {32, 1, 1}, 32 * sizeof(double), [&] {
        double* values = reinterpret_cast<double*>(simt::shared_memory());
        if (std::isnan(values[threadIdx.x])) ++nan_reads;
        values[threadIdx.x] = 1.0;
    });
    CHECK(nan_reads == 64);
    CHECK(simt::take_problems().empty());
}
