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

// J_i . x with the lanes splitting the row's values; every lane gets the sum.
template <class Real>
__device__ inline Real warp_row_dot(const WorldRows<Real>& rows, uint32_t row, const Real* values,
                                    const Real* x, uint32_t lane) {
    const Real* value = values + rows.value_offset[row];
    Real sum = 0;
    for (int block = 0; block < 2; ++block) {
        const Real* xs = x + rows.block_offset[2 * row + block];
        const uint32_t length = rows.block_length[2 * row + block];
        for (uint32_t k = lane; k < length; k += kWarpSize)
            sum += value[k] * xs[k];
        value += length;
    }
    return warp_sum(sum);
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

// velocity = v-hat + sum_j Y_j impulse_j. Every DOF accumulates its terms in row order, as
// velocity_from_impulses does on the CPU.
template <class Real>
__device__ inline void warp_velocity_from_impulses(const WorldRows<Real>& rows, const Real* impulse,
                                                   Real* velocity, uint32_t lane) {
    for (uint32_t k = lane; k < rows.dof_count; k += kWarpSize)
        velocity[k] = rows.unconstrained_velocity[k];
    __syncwarp();
    for (uint32_t j = 0; j < rows.row_count; ++j) {
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

// isolate_if_nonfinite (cpu_solver.cpp) for a warp: a world that went non-finite hands back
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

__device__ inline void write_world_stats(steel_world_stats& stats, const WorldOutcome& outcome) {
    stats = steel_world_stats{};
    stats.struct_size = sizeof(steel_world_stats);
    stats.path = outcome.path;
    stats.sweeps = outcome.sweeps;
    stats.flags = outcome.flags;
    stats.residual = outcome.residual;
    stats.first_residual = outcome.first_residual;
    stats.momentum_restarts = outcome.restarts;
}

} // namespace steel::cuda
