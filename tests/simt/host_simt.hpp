// The CUDA built-ins that Steel's kernels use, on the host: include this first, then the kernel
// headers (impl/cuda/*.cuh), and g++ compiles the kernels as ordinary functions. simt::launch
// then runs a kernel the way a GPU would: each block with its own shared memory, each warp's 32
// lanes as fibers that meet at every shuffle, vote and __syncwarp. The CPU tests use it to run
// the very kernels the GPU runs (tests/test_cuda_emulated.cpp).
//
// What it checks on the way: that the 32 lanes of a warp reach the same warp operation each time
// (a divergent shuffle is a bug the GPU would not report), that every lane's mask is full and
// names 32 lanes that exist (a block of a multiple of 32 threads), that a launch
// stays inside the 48 KB of shared memory a kernel gets without opting in, and that a kernel
// stays inside the dynamic shared memory it was launched with (ASan poisons the rest; without
// ASan a guard pattern is checked after each block). Problems are collected, not thrown:
// simt::take_problems() hands them to the test. Under ThreadSanitizer, a lane touching memory
// that another lane of its warp touched, with no __syncwarp between, is reported as a data race
// (host_simt.cpp says how).
//
// Blocks run one after another on the calling thread (the kernels never synchronize across
// blocks), so one host buffer is every block's shared memory in turn. The order of blocks, warps
// and lanes is a choice (schedule.hpp): tests run a launch in two opposite orders to show races.
// Not thread-safe: one launch at a time. Meant for small batches: each warp operation is 32
// fiber switches.
#pragma once

#include "schedule.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define __host__
#define __device__
#define __global__
#define __shared__
#define __align__(n)
#define __launch_bounds__(...)

using std::isfinite;

namespace simt {

struct Dim3 {
    uint32_t x = 1, y = 1, z = 1;
};

enum class WarpOp : uint32_t { sync = 1, shuffle, vote };

// One meeting of the calling lane's warp: every lane hands in `bytes` bytes (at most 16) and gets
// back all 32 lanes' contributions in `all` (32 * bytes), in lane order.
void warp_meet(WarpOp op, unsigned mask, const void* mine, size_t bytes, void* all);

// The calling thread's lane within its warp.
uint32_t lane_id();

// Runs kernel() for every thread of a grid of grid.x blocks of block.x threads, with
// shared_bytes of dynamic shared memory per block (steel::cuda::shared_bytes). Returns when the
// whole grid has finished.
void launch(Dim3 grid, Dim3 block, size_t shared_bytes, const std::function<void()>& kernel);

// The running block's dynamic shared memory (what the kernels see as extern __shared__).
unsigned char* shared_memory();

// What went wrong in the launches since the last call (empty when nothing did).
std::vector<std::string> take_problems();

} // namespace simt

// Plain globals: the emulation runs every lane on the calling thread, one at a time.
extern simt::Dim3 threadIdx, blockIdx, blockDim, gridDim;

template <class T> T __shfl_sync(unsigned mask, T value, int source_lane) {
    T all[32];
    simt::warp_meet(simt::WarpOp::shuffle, mask, &value, sizeof(T), all);
    return all[source_lane & 31];
}

template <class T> T __shfl_xor_sync(unsigned mask, T value, int lane_mask) {
    T all[32];
    simt::warp_meet(simt::WarpOp::shuffle, mask, &value, sizeof(T), all);
    return all[(simt::lane_id() ^ uint32_t(lane_mask)) & 31];
}

inline int __all_sync(unsigned mask, int predicate) {
    int all[32];
    const int mine = predicate != 0;
    simt::warp_meet(simt::WarpOp::vote, mask, &mine, sizeof(int), all);
    for (int lane : all)
        if (!lane) return 0;
    return 1;
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
    int all[32];
    const int mine = predicate != 0;
    simt::warp_meet(simt::WarpOp::vote, mask, &mine, sizeof(int), all);
    unsigned lanes = 0;
    for (uint32_t lane = 0; lane < 32; ++lane)
        if (all[lane]) lanes |= 1u << lane;
    return lanes;
}

inline int __popc(unsigned x) {
    return __builtin_popcount(x);
}

inline void __syncwarp(unsigned mask = 0xffffffffu) {
    simt::warp_meet(simt::WarpOp::sync, mask, nullptr, 0, nullptr);
}
