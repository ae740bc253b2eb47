// The serial general sweep (SPEC 2, 7) as one fused kernel: one warp per world, every sweep of
// the solve in one launch. The world's v sits in shared memory; J and Y stream from global
// memory, each row's values read by the 32 lanes side by side, the next row's loaded while the
// current one is updated. Lane 0 alone runs the row
// update itself (update_rows, the CPU's own code) and broadcasts the impulse change; the
// lanes then apply it to v together. Momentum runs on all lanes (warp_momentum.cuh).
#pragma once

#include "../row_update.hpp"
#include "rows_view.cuh"
#include "warp_momentum.cuh"
#include "warp_rows.cuh"

namespace steel::cuda {

// general_sweep (general_sweep.hpp) for a warp. The result is lane 0's, broadcast. Each row's
// J and Y come from a slice loaded before the previous row's update (see RowSlice): a cone
// pair is updated together, so the row after the current one or two is always known ahead.
template <class Real>
__device__ inline SweepResult<Real>
warp_general_sweep(const WorldRows<Real>& rows, const SolveParams<Real>& params, Real* impulse,
                   Real* velocity, uint32_t lane) {
    SweepResult<Real> result;
    const uint32_t m = rows.row_count;
    RowSlice<Real> current = m > 0 ? load_row_slice(rows, 0, lane) : RowSlice<Real>{};
    for (uint32_t i = 0; i < m;) {
        const bool pair = rows.kind[i] == STEEL_ROW_FRICTION_CONE;
        const RowSlice<Real> partner = pair ? load_row_slice(rows, i + 1, lane) : RowSlice<Real>{};
        const uint32_t next = i + (pair ? 2 : 1); // what update_rows will report as used
        const RowSlice<Real> upcoming =
            next < m ? load_row_slice(rows, next, lane) : RowSlice<Real>{};
        const RowError<Real> error0{warp_slice_dot(current, velocity, lane), rows.bias[i]};
        const RowError<Real> error1 =
            pair ? RowError<Real>{warp_slice_dot(partner, velocity, lane), rows.bias[i + 1]}
                 : RowError<Real>{0, 0};
        Real step[2] = {Real(0), Real(0)};
        uint32_t used = 0;
        if (lane == 0) used = update_rows(rows, i, params, error0, error1, impulse, step, result);
        used = __shfl_sync(kFullMask, used, 0);
        step[0] = __shfl_sync(kFullMask, step[0], 0);
        step[1] = __shfl_sync(kFullMask, step[1], 0);
        // The partner's dot above read v where this row's axpy may write on another lane (its
        // blocks can list the DOFs otherwise): only shuffles lie between, so say it plainly.
        if (pair) __syncwarp();
        warp_slice_axpy(current, step[0], velocity, lane);
        if (used == 2) {
            __syncwarp(); // the partner's blocks may give a DOF to another lane
            warp_slice_axpy(partner, step[1], velocity, lane);
        }
        __syncwarp();
        i += used;
        current = upcoming;
    }
    result.residual = __shfl_sync(kFullMask, result.residual, 0);
    result.nonfinite_probe = __shfl_sync(kFullMask, result.nonfinite_probe, 0);
    return result;
}

// Momentum vectors of a world in solve.momentum_scratch: start [m], previous [m], velocity [n].
template <class Real>
__device__ inline MomentumState<Real> world_momentum(const DeviceSolve<Real>& solve, uint32_t row0,
                                                     uint32_t dof0, uint32_t m,
                                                     bool keep_velocity) {
    MomentumState<Real> state{};
    Real* base = solve.momentum_scratch + 2 * size_t(row0) + dof0;
    state.start = base;
    state.previous = base + m;
    state.previous_velocity = keep_velocity ? base + 2 * size_t(m) : nullptr;
    return state;
}

// run_sweeps (sweep_result.hpp) with the sweep and the momentum step done warp-wide; every
// lane sees the same residuals, so the warp leaves the loop together.
template <class Real, class Sweep>
__device__ inline WorldOutcome warp_run_sweeps(const DeviceSolve<Real>& solve, uint32_t world,
                                               uint32_t lane, MomentumState<Real>& state,
                                               Real* impulse, uint32_t m, Real* velocity,
                                               uint32_t n, Sweep&& sweep_body) {
    const bool momentum = solve.momentum != 0;
    double* history = solve.history_stride && lane == 0
                          ? solve.history + size_t(world) * solve.history_stride
                          : nullptr;
    const auto sweep = [&] {
        if (momentum) warp_momentum_begin_sweep(state, impulse, m, lane);
        __syncwarp();
        return sweep_body();
    };
    const auto between = [&](double residual) {
        if (!momentum) return false;
        const bool restarted =
            warp_momentum_extrapolate(state, residual, impulse, m, velocity, n, lane);
        __syncwarp(); // the lanes rewrote impulses (and v)
        return restarted;
    };
    return run_sweeps<Real>(solve.settings, history, sweep, between);
}

// A world's whole general-path solve for a warp: impulses from the warm start, v = v-hat + Y
// lambda in `velocity` (shared or global memory), every sweep, then v copied to result_velocity
// when that is elsewhere. Impulses stay where they are. Used for the uploaded worlds and for the
// derived worlds of pre-elimination (preelimination_kernel.cuh).
template <class Real>
__device__ inline WorldOutcome
warp_general_solve(const WorldRows<Real>& rows, const DeviceSolve<Real>& solve, uint32_t world,
                   MomentumState<Real>& state, Real* impulse, Real* velocity, Real* result_velocity,
                   uint32_t lane) {
    const uint32_t m = rows.row_count, n = rows.dof_count;
    for (uint32_t i = lane; i < m; i += kWarpSize)
        impulse[i] = solve.warm_start ? rows.initial_impulse[i] : Real(0);
    __syncwarp();
    warp_velocity_from_impulses(rows, impulse, velocity, lane);

    if (solve.momentum) warp_momentum_reset(state, impulse, m, velocity, n, lane);
    __syncwarp();

    WorldOutcome outcome = warp_run_sweeps(solve, world, lane, state, impulse, m, velocity, n, [&] {
        return warp_general_sweep(rows, solve.params, impulse, velocity, lane);
    });
    outcome.path = STEEL_PATH_GENERAL;

    warp_copy_velocity_out(velocity, result_velocity, n, lane);
    return outcome;
}

// A world's whole solve on the general path, for the two builds of the kernel below.
template <class Real>
__device__ inline void general_sweep_world(const RowsView<Real>& set,
                                           const DeviceSolve<Real>& solve,
                                           unsigned char* dynamic_shared) {
    const uint32_t warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const uint32_t world = blockIdx.x * (blockDim.x / kWarpSize) + warp;
    // Uniform across the warp: the whole warp leaves together.
    if (world >= set.world_count || solve.world_path[world] != STEEL_PATH_GENERAL) return;

    const WorldRows<Real> rows = device_world_rows(set, world);
    const uint32_t row0 = set.world_row_offset[world], dof0 = set.world_dof_offset[world];
    Real* impulse = solve.impulse + row0;
    Real* result_velocity = solve.velocity + dof0;
    Real* velocity = warp_sweep_velocity(solve, dynamic_shared, warp, result_velocity);
    MomentumState<Real> state = world_momentum(solve, row0, dof0, rows.row_count, true);
    WorldOutcome outcome =
        warp_general_solve(rows, solve, world, state, impulse, velocity, result_velocity, lane);
    warp_isolate_if_nonfinite(rows, outcome, impulse, result_velocity, lane);
    if (lane == 0) write_world_stats(solve.stats[world], outcome);
}

template <class Real>
__global__ void general_sweep_kernel(RowsView<Real> set, DeviceSolve<Real> solve) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    general_sweep_world(set, solve, shared_bytes);
}

// The same kernel built for at least four blocks of 128 threads per multiprocessor: ptxas then
// keeps it within 128 registers a thread. With nvcc 13.0 (2026-12-02) that is 128 in float64
// against the plain build's 149, so 16 warps fit an SM instead of 12, for 112 B of spill stores
// and 152 B of loads a thread; in float32 104 against 110, no spills, and 16 warps either way.
// On an H200 it was 8 to 18 % faster in float64 and level in float32, so float64 solves take it
// (device_batch.cu, kernels_for_solve; docs/cuda.md, "Registers and occupancy").
template <class Real>
__global__ void __launch_bounds__(128, 4)
    general_sweep_kernel_bounded(RowsView<Real> set, DeviceSolve<Real> solve) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    general_sweep_world(set, solve, shared_bytes);
}

} // namespace steel::cuda
