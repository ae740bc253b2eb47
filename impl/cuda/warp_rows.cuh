// One warp works on one world. Lane l takes every 32nd value of a row (l, l+32, ...), so a row's
// values are read coalesced, and the partial sums are combined by a butterfly of shuffles.
//
// Determinism: the butterfly's shape is fixed, and at every level a lane adds x + y while its
// partner adds y + x, which IEEE addition makes equal. So every lane ends with the same bits,
// run after run: no atomics, no order that depends on timing. It is not the CPU's sequential
// order, which is why GPU and CPU agree to a tolerance (docs/cuda.md), not bit for bit.
#pragma once

#include "../general_sweep.hpp"
#include "../sweep_result.hpp"
#include "../world_rows.hpp"
#include "device_solve.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel::cuda {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr uint32_t kWarpSize = 32;

template <class Real> __device__ inline Real warp_sum(Real value) {
    for (int offset = 16; offset > 0; offset >>= 1)
        value += __shfl_xor_sync(kFullMask, value, offset);
    return value;
}

// One lane's share of a row, loaded ahead of use: the row's DOF blocks, and the lane's first
// J and Y value of each block in registers (lane k holds value k). The general kernel loads the
// next row's slice before it reduces and updates the current one, so those loads are in flight
// while lane 0 works. Values past the first 32 of a block are read when used. The sums below
// add the same terms in the same order as row_dot / warp_row_axpy with lane k taking values
// k, k + 32, ...: the bits do not depend on the prefetch.
template <class Real> struct RowSlice {
    uint32_t offset[2] = {0, 0}, length[2] = {0, 0};
    const Real* jacobian = nullptr; // the row's first value
    const Real* response = nullptr;
    Real j[2] = {Real(0), Real(0)}, y[2] = {Real(0), Real(0)};
};

template <class Real>
__device__ inline RowSlice<Real> load_row_slice(const WorldRows<Real>& rows, uint32_t row,
                                                uint32_t lane) {
    RowSlice<Real> slice;
    const uint64_t first = rows.value_offset[row];
    slice.jacobian = rows.jacobian + first;
    slice.response = rows.response + first;
    uint32_t start = 0;
    for (int block = 0; block < 2; ++block) {
        slice.offset[block] = rows.block_offset[2 * row + block];
        slice.length[block] = rows.block_length[2 * row + block];
        if (lane < slice.length[block]) {
            slice.j[block] = slice.jacobian[start + lane];
            slice.y[block] = slice.response[start + lane];
        }
        start += slice.length[block];
    }
    return slice;
}

// J_i . x with the lanes splitting the row's values; every lane gets the sum.
template <class Real>
__device__ inline Real warp_slice_dot(const RowSlice<Real>& slice, const Real* x, uint32_t lane) {
    Real sum = 0;
    uint32_t start = 0;
    for (int block = 0; block < 2; ++block) {
        const Real* xs = x + slice.offset[block];
        const uint32_t length = slice.length[block];
        if (lane < length) sum += slice.j[block] * xs[lane];
        for (uint32_t k = lane + kWarpSize; k < length; k += kWarpSize)
            sum += slice.jacobian[start + k] * xs[k];
        start += length;
    }
    return warp_sum(sum);
}

// warp_row_axpy(rows, row, rows.response, scale, x, lane) from a slice.
template <class Real>
__device__ inline void warp_slice_axpy(const RowSlice<Real>& slice, Real scale, Real* x,
                                       uint32_t lane) {
    uint32_t start = 0;
    for (int block = 0; block < 2; ++block) {
        Real* xs = x + slice.offset[block];
        const uint32_t length = slice.length[block];
        if (lane < length) xs[lane] += scale * slice.y[block];
        for (uint32_t k = lane + kWarpSize; k < length; k += kWarpSize)
            xs[k] += scale * slice.response[start + k];
        start += length;
    }
}

// x += scale * (row's values). Each lane writes its own DOFs; the two blocks never overlap
// (checked at upload), so no two lanes write one element. The caller syncs the warp after.
template <class Real>
__device__ inline void warp_row_axpy(const WorldRows<Real>& rows, uint32_t row, const Real* values,
                                     Real scale, Real* x, uint32_t lane) {
    const Real* value = values + rows.value_offset[row];
    for (int block = 0; block < 2; ++block) {
        Real* xs = x + rows.block_offset[2 * row + block];
        const uint32_t length = rows.block_length[2 * row + block];
        for (uint32_t k = lane; k < length; k += kWarpSize)
            xs[k] += scale * value[k];
        value += length;
    }
}

// to[0, count) = from[0, count), each lane every 32nd value. The caller syncs the warp after.
template <class Real>
__device__ inline void warp_copy(Real* to, const Real* from, uint32_t count, uint32_t lane) {
    for (uint32_t i = lane; i < count; i += kWarpSize)
        to[i] = from[i];
}

// velocity = v-hat + sum_j Y_j impulse_j. Every DOF accumulates its terms in row order, as
// velocity_from_impulses does on the CPU. skip_zero: rows with a zero impulse add nothing, as in
// the propagation response's velocity_from_impulses (propagation_sweep.hpp).
template <class Real>
__device__ inline void warp_velocity_from_impulses(const WorldRows<Real>& rows, const Real* impulse,
                                                   Real* velocity, uint32_t lane,
                                                   bool skip_zero = false) {
    warp_copy(velocity, rows.unconstrained_velocity, rows.dof_count, lane);
    __syncwarp();
    for (uint32_t j = 0; j < rows.row_count; ++j) {
        if (skip_zero && impulse[j] == Real(0)) continue; // the same for every lane
        warp_row_axpy(rows, j, rows.response, impulse[j], velocity, lane);
        __syncwarp(); // the next row may give these DOFs to other lanes
    }
}

template <class Real>
__device__ inline bool warp_all_finite(const Real* values, uint32_t count, uint32_t lane) {
    bool finite = true;
    for (uint32_t k = lane; k < count; k += kWarpSize)
        finite = finite && isfinite(values[k]);
    return __all_sync(kFullMask, finite);
}

// isolate_if_nonfinite (nonfinite.hpp) for a warp: a world that went non-finite hands back
// zero impulses and v-hat, and only it is flagged.
template <class Real>
__device__ inline void warp_isolate_if_nonfinite(const WorldRows<Real>& rows, WorldOutcome& outcome,
                                                 Real* impulse, Real* velocity, uint32_t lane) {
    const uint32_t m = rows.row_count, n = rows.dof_count;
    const bool finite = warp_all_finite(impulse, m, lane) && warp_all_finite(velocity, n, lane);
    if (!finite || !isfinite(outcome.residual)) outcome.flags |= STEEL_WORLD_NONFINITE;
    if (outcome.flags & STEEL_WORLD_NONFINITE) {
        outcome.flags &= ~uint32_t(STEEL_WORLD_CONVERGED);
        for (uint32_t k = lane; k < m; k += kWarpSize)
            impulse[k] = Real(0);
        for (uint32_t k = lane; k < n; k += kWarpSize)
            velocity[k] = rows.unconstrained_velocity[k];
    }
    __syncwarp();
}

// Where a warp keeps its world's v while it sweeps: its slice of the block's shared memory when
// the launch gave v room there (solve.velocity_in_shared), else the world's output `result`.
template <class Real>
__device__ inline Real* warp_sweep_velocity(const DeviceSolve<Real>& solve,
                                            unsigned char* shared_bytes, uint32_t warp,
                                            Real* result) {
    return solve.velocity_in_shared
               ? reinterpret_cast<Real*>(shared_bytes) + size_t(warp) * solve.shared_per_warp
               : result;
}

// Hands the sweeps' v to the world's output, unless they are the same memory.
template <class Real>
__device__ inline void warp_copy_velocity_out(const Real* velocity, Real* result, uint32_t n,
                                              uint32_t lane) {
    if (velocity == result) return; // the same for every lane
    warp_copy(result, velocity, n, lane);
    __syncwarp();
}

} // namespace steel::cuda
