// Bilateral pre-elimination (SPEC 5, preelimination_world.hpp) on the device: one warp per world
// that has bilateral rows, launched after the general and dense kernels, which pass such worlds
// by (classify_kernel.cuh marks them). Lane 0 builds the derived world with the CPU's code into
// the world's space in global memory (the Cholesky factorization of S and the projections are a
// chain of small dependent steps); the warp then solves it on the path the CPU's rule gives it,
// with the same device functions as the uploaded worlds (dense A in shared memory, or the
// general sweep with v in global memory); lane 0 recovers the bilateral impulses and v with the
// CPU's code.
#pragma once

#include "../preelimination_world.hpp"
#include "classify_kernel.cuh"
#include "dense_kernel.cuh"
#include "general_kernel.cuh"
#include "preelimination_buffers.hpp"

namespace steel::cuda {

template <class Real>
__global__ void preelimination_kernel(RowsView<Real> set, PreeliminationBuffers<Real> buffers,
                                      DeviceSolve<Real> solve) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const uint32_t warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const uint32_t world = blockIdx.x * (blockDim.x / kWarpSize) + warp;
    if (world >= set.world_count || solve.world_path[world] != kPathPreeliminated) return;

    const WorldRows<Real> rows = device_world_rows(set, world);
    const uint32_t n = rows.dof_count, c = rows.row_count - bilateral_row_count(rows);
    const uint32_t row0 = set.world_row_offset[world], dof0 = set.world_dof_offset[world];
    Real* impulse = solve.impulse + row0;
    Real* velocity = solve.velocity + dof0;
    const PreeliminationSpace<Real> space = world_space(buffers, set, world);

    int built = 0;
    if (lane == 0) {
        WorldRows<Real> unused;
        built = build_preeliminated_world(rows, solve.params.cfm, space, unused) ? 1 : 0;
    }
    __syncwarp(); // lane 0 wrote the derived world
    built = __shfl_sync(kFullMask, built, 0);

    WorldOutcome outcome;
    if (built) {
        const WorldRows<Real> kept = derived_world_rows(space, c, n);
        int32_t path = classify_world(solve.requested_path, c, uint64_t(c) * n);
        if (path == STEEL_PATH_DENSE && c > solve.dense_max_rows) path = STEEL_PATH_GENERAL;
        MomentumState<Real> state =
            world_momentum(solve, row0, dof0, c, path == STEEL_PATH_GENERAL);
        Real* shared = reinterpret_cast<Real*>(shared_bytes) + size_t(warp) * solve.shared_per_warp;
        outcome = path == STEEL_PATH_DENSE
                      ? warp_dense_solve(kept, solve, world, state, shared, space.kept_impulse,
                                         velocity, lane)
                      : warp_general_solve(kept, solve, world, state, space.kept_impulse, velocity,
                                           velocity, lane);
        if (lane == 0) recover_bilateral_impulses(rows, space, impulse, velocity);
        __syncwarp();
    } else {
        outcome.flags |= STEEL_WORLD_NONFINITE; // S did not factor: only non-finite data does that
    }
    warp_isolate_if_nonfinite(rows, outcome, impulse, velocity, lane);
    if (lane == 0) {
        write_world_stats(solve.stats[world], outcome);
        solve.world_path[world] = device_world_path(set, solve, world); // as the CPU reports it
    }
}

} // namespace steel::cuda
