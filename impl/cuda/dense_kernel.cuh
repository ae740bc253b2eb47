// The small-world dense path (SPEC 3) as one kernel: one warp per world, with A (m x m), rhs and
// lambda in shared memory for the whole solve. The lanes build A entry by entry (dense_entry,
// the CPU's sums), then sweep it: each row's A_i . lambda split over the lanes, the row update
// itself on lane 0 with the CPU's update_rows. v = v-hat + Y lambda is formed once at the end.
#pragma once

#include "../row_update.hpp"
#include "../dense_entry.hpp"
#include "general_kernel.cuh"

namespace steel::cuda {

// dense_sweep (dense_path.hpp) for a warp; the result is lane 0's, broadcast.
template <class Real>
__device__ inline SweepResult<Real>
warp_dense_sweep(const WorldRows<Real>& rows, const Real* a, const Real* rhs,
                 const SolveParams<Real>& params, Real* impulse, uint32_t lane) {
    SweepResult<Real> result;
    const uint32_t m = rows.row_count;
    const auto row_error = [&](uint32_t i) {
        Real sum = 0;
        for (uint32_t j = lane; j < m; j += kWarpSize)
            sum += a[size_t(i) * m + j] * impulse[j];
        return RowError<Real>{warp_sum(sum), rhs[i]};
    };
    for (uint32_t i = 0; i < m;) {
        const bool pair = rows.kind[i] == STEEL_ROW_FRICTION_CONE;
        const RowError<Real> error0 = row_error(i);
        const RowError<Real> error1 = pair ? row_error(i + 1) : RowError<Real>{0, 0};
        Real step[2];
        uint32_t used = 0;
        __syncwarp(); // every lane read its lambdas for the errors before lane 0 writes one
        if (lane == 0) used = update_rows(rows, i, params, error0, error1, impulse, step, result);
        __syncwarp(); // lane 0 wrote lambda in shared memory
        i += __shfl_sync(kFullMask, used, 0);
    }
    result.residual = __shfl_sync(kFullMask, result.residual, 0);
    result.nonfinite_probe = __shfl_sync(kFullMask, result.nonfinite_probe, 0);
    return result;
}

// A world's whole dense-path solve for a warp, with A, rhs and lambda in `shared` ((m + 2) m
// Reals); the impulses and v = v-hat + Y lambda are written to impulse and velocity at the end.
// Used for the uploaded worlds and for the derived worlds of pre-elimination
// (preelimination_kernel.cuh).
template <class Real>
__device__ inline WorldOutcome warp_dense_solve(const WorldRows<Real>& rows,
                                                const DeviceSolve<Real>& solve, uint32_t world,
                                                MomentumState<Real>& state, Real* shared,
                                                Real* impulse, Real* velocity, uint32_t lane) {
    const uint32_t m = rows.row_count, n = rows.dof_count;
    Real* a = shared;
    Real* rhs = a + size_t(m) * m;
    Real* lambda = rhs + m;

    // A, with the stored J.Y on the diagonal and the stored cone cross terms, as on the CPU.
    for (uint32_t entry = lane; entry < m * m; entry += kWarpSize) {
        const uint32_t i = entry / m, j = entry % m;
        a[entry] = i == j ? rows.jy[i] : dense_entry(rows, i, j);
    }
    for (uint32_t i = lane; i < m; i += kWarpSize) {
        rhs[i] = row_dot(rows, i, rows.jacobian, rows.unconstrained_velocity) + rows.bias[i];
        lambda[i] = solve.warm_start ? rows.initial_impulse[i] : Real(0);
    }
    __syncwarp();
    if (lane == 0)
        for (uint32_t i = 0; i + 1 < m; ++i)
            if (rows.kind[i] == STEEL_ROW_FRICTION_CONE) {
                a[size_t(i) * m + i + 1] = rows.cone_cross_01[i];
                a[size_t(i + 1) * m + i] = rows.cone_cross_10[i];
                ++i;
            }
    if (solve.momentum) warp_momentum_reset(state, lambda, m, static_cast<Real*>(nullptr), n, lane);
    __syncwarp();

    WorldOutcome outcome =
        warp_run_sweeps(solve, world, lane, state, lambda, m, static_cast<Real*>(nullptr), n,
                        [&] { return warp_dense_sweep(rows, a, rhs, solve.params, lambda, lane); });
    outcome.path = STEEL_PATH_DENSE;

    warp_copy(impulse, lambda, m, lane);
    __syncwarp();
    warp_velocity_from_impulses(rows, impulse, velocity, lane);
    return outcome;
}

template <class Real>
__global__ void dense_path_kernel(RowsView<Real> set, DeviceSolve<Real> solve) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const uint32_t warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const uint32_t world = blockIdx.x * (blockDim.x / kWarpSize) + warp;
    if (world >= set.world_count || solve.world_path[world] != STEEL_PATH_DENSE) return;

    const WorldRows<Real> rows = device_world_rows(set, world);
    const uint32_t row0 = set.world_row_offset[world], dof0 = set.world_dof_offset[world];
    Real* shared = reinterpret_cast<Real*>(shared_bytes) + size_t(warp) * solve.shared_per_warp;
    Real* impulse = solve.impulse + row0;
    Real* velocity = solve.velocity + dof0;
    MomentumState<Real> state = world_momentum(solve, row0, dof0, rows.row_count, false);
    WorldOutcome outcome =
        warp_dense_solve(rows, solve, world, state, shared, impulse, velocity, lane);
    warp_isolate_if_nonfinite(rows, outcome, impulse, velocity, lane);
    if (lane == 0) write_world_stats(solve.stats[world], outcome);
}

} // namespace steel::cuda
