// Bilateral pre-elimination (SPEC 5, preelimination_world.hpp) on the device: one warp per world
// that has bilateral rows, launched after the general and dense kernels, which pass such worlds
// by (classify_kernel.cuh marks them). The warp builds the derived world with the CPU's code into
// the world's space in global memory: the lanes share S's columns, the entries of each column of
// its Cholesky factor and of the solves with it, the kept rows, the index maps (by ballot), the
// cone pairs' cross terms and the sums over DOFs. The warp then solves it on the path the CPU's
// rule gives it, with the same device functions as the uploaded worlds (dense A in shared
// memory, or the general sweep with v in shared memory when it fits the room A would take, in
// global memory otherwise), and recovers the bilateral impulses and v the same way. Every value
// has the CPU's operations in the CPU's order.
#pragma once

#include "../preelimination_world.hpp"
#include "classify_kernel.cuh"
#include "dense_kernel.cuh"
#include "general_kernel.cuh"
#include "preelimination_buffers.hpp"
#include "warp_cholesky.cuh"

namespace steel::cuda {

// factor_schur (preelimination_world.hpp) for a warp; returns the same on every lane.
template <class Real>
__device__ inline bool warp_factor_schur(const WorldRows<Real>& rows,
                                         const PreeliminationSpace<Real>& space, uint32_t b,
                                         Real cfm, uint32_t lane) {
    for (uint32_t q = lane; q < b; q += kWarpSize) {
        Real& diagonal = space.schur[size_t(q) * b + q];
        diagonal += schur_shift(rows.regularization[space.bilateral_rows[q]], cfm, diagonal);
    }
    __syncwarp();
    if (!warp_cholesky_factor_in_place(space.schur, b, lane)) return false;
    Real* z = space.solved;
    for (uint32_t p = lane; p < b; p += kWarpSize)
        z[p] = bilateral_error(rows, space, p, rows.unconstrained_velocity);
    __syncwarp();
    warp_cholesky_solve_in_place(space.schur, b, z, lane);
    Real* v_hat = space.unconstrained_velocity;
    warp_copy(v_hat, rows.unconstrained_velocity, rows.dof_count, lane);
    __syncwarp();
    for (uint32_t p = 0; p < b; ++p) { // each DOF's terms in row order, as row_axpy adds them
        warp_row_axpy(rows, space.bilateral_rows[p], rows.response, -z[p], v_hat, lane);
        __syncwarp();
    }
    return true;
}

// recover_bilateral_impulses (preelimination_world.hpp) for a warp.
template <class Real>
__device__ inline void
warp_recover_bilateral_impulses(const WorldRows<Real>& rows, const PreeliminationSpace<Real>& space,
                                uint32_t b, Real* impulse, Real* velocity, uint32_t lane) {
    const uint32_t m = rows.row_count;
    warp_copy(velocity, rows.unconstrained_velocity, rows.dof_count, lane);
    __syncwarp();
    for (uint32_t i = 0, c = 0; i < m; ++i) { // v-hat + Y_C lambda_C, row after row
        if (rows.kind[i] == STEEL_ROW_BILATERAL) continue;
        const Real kept = space.kept_impulse[c++];
        if (lane == 0) impulse[i] = kept;
        warp_row_axpy(rows, i, rows.response, kept, velocity, lane);
        __syncwarp();
    }
    Real* z = space.solved;
    for (uint32_t p = lane; p < b; p += kWarpSize)
        z[p] = -bilateral_error(rows, space, p, velocity);
    __syncwarp();
    warp_cholesky_solve_in_place(space.schur, b, z, lane);
    for (uint32_t p = 0; p < b; ++p) {
        if (lane == 0) impulse[space.bilateral_rows[p]] = z[p];
        warp_row_axpy(rows, space.bilateral_rows[p], rows.response, z[p], velocity, lane);
        __syncwarp();
    }
}

// index_preeliminated_rows (preelimination_world.hpp) for a warp, 32 rows at a time: a ballot
// of which rows are bilateral gives each lane its row's place in either list. Returns b on every
// lane.
template <class Real>
__device__ inline uint32_t warp_index_preeliminated_rows(const WorldRows<Real>& rows,
                                                         const PreeliminationSpace<Real>& space,
                                                         uint32_t lane) {
    const unsigned lanes_below = (1u << lane) - 1u;
    uint32_t b = 0, c = 0;
    for (uint32_t first = 0; first < rows.row_count; first += kWarpSize) {
        const uint32_t i = first + lane;
        const bool real = i < rows.row_count;
        const bool bilateral = real && rows.kind[i] == STEEL_ROW_BILATERAL;
        const unsigned bilateral_lanes = __ballot_sync(kFullMask, bilateral);
        const unsigned kept_lanes = __ballot_sync(kFullMask, real && !bilateral);
        if (bilateral) {
            space.bilateral_rows[b + uint32_t(__popc(bilateral_lanes & lanes_below))] = i;
        } else if (real) {
            const uint32_t k = c + uint32_t(__popc(kept_lanes & lanes_below));
            space.kept_index[i] = k;
            space.kept_rows[k] = i;
        }
        b += uint32_t(__popc(bilateral_lanes));
        c += uint32_t(__popc(kept_lanes));
    }
    return b;
}

// finish_kept_rows for a warp: the cone pairs in turn over the lanes. Finding where a pair
// starts is a chain (a pair's second row is skipped), so every lane walks the kinds and only
// the pair's lane computes its two sums, each with the CPU's code.
template <class Real>
__device__ inline void warp_finish_kept_rows(const PreeliminationSpace<Real>& space, uint32_t c,
                                             uint32_t n, uint32_t lane) {
    if (lane == 0) space.value_offset[c] = uint64_t(c) * n;
    for (uint32_t k = lane; k < c; k += kWarpSize)
        space.cross_01[k] = space.cross_10[k] = 0;
    __syncwarp(); // a pair's lane overwrites what another lane zeroed
    uint32_t pair = 0;
    for (uint32_t k = 0; k + 1 < c; ++k)
        if (space.kind[k] == STEEL_ROW_FRICTION_CONE) {
            if (pair++ % kWarpSize == lane) set_kept_cone_cross_terms(space, k, n);
            ++k; // its partner
        }
}

// build_preeliminated_world spread over a warp. Each value is computed by one lane with the
// CPU's code from its inputs alone, so the derived world has the CPU's bits. Returns the same on
// every lane.
template <class Real>
__device__ inline bool warp_build_preeliminated_world(const WorldRows<Real>& rows, Real cfm,
                                                      const PreeliminationSpace<Real>& space,
                                                      uint32_t lane) {
    const uint32_t b = warp_index_preeliminated_rows(rows, space, lane);
    __syncwarp();                                  // the lanes wrote the index maps
    for (uint32_t q = lane; q < b; q += kWarpSize) // a lane writes the diagonals of its own columns
        build_schur_column(rows, space, b, q);
    __syncwarp(); // S is whole before it is factored
    if (!warp_factor_schur(rows, space, b, cfm, lane)) return false;
    const uint32_t c = rows.row_count - b;
    for (uint32_t k = lane; k < c; k += kWarpSize)
        build_kept_row(rows, space, b, k);
    __syncwarp(); // every kept row is written
    warp_finish_kept_rows(space, c, rows.dof_count, lane);
    __syncwarp();
    return true;
}

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

    WorldOutcome outcome;
    if (warp_build_preeliminated_world(rows, solve.params.cfm, space, lane)) {
        const WorldRows<Real> kept = derived_world_rows(space, c, n);
        int32_t path =
            classify_world(solve.requested_path, c, uint64_t(c) * n, precision_of<Real>,
                           classified_sweeps(solve.settings.iterations, solve.settings.tolerance));
        if (path == STEEL_PATH_DENSE && c > solve.dense_max_rows) path = STEEL_PATH_GENERAL;
        MomentumState<Real> state =
            world_momentum(solve, row0, dof0, c, path == STEEL_PATH_GENERAL);
        Real* shared = reinterpret_cast<Real*>(shared_bytes) + size_t(warp) * solve.shared_per_warp;
        // On the general path the warp's shared room (sized for the dense path's A) is free: v
        // goes there when it fits, since the sweeps read and write it at every row.
        Real* sweep_velocity =
            path == STEEL_PATH_GENERAL && n <= solve.shared_per_warp ? shared : velocity;
        outcome = path == STEEL_PATH_DENSE
                      ? warp_dense_solve(kept, solve, world, state, shared, space.kept_impulse,
                                         velocity, lane)
                      : warp_general_solve(kept, solve, world, state, space.kept_impulse,
                                           sweep_velocity, velocity, lane);
        warp_recover_bilateral_impulses(rows, space, rows.row_count - c, impulse, velocity, lane);
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
