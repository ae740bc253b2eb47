// The propagation response (SPEC 7) on the device, serial or colored, each a fused kernel that
// runs every sweep of the solve in one launch.
//
// The walks through a tree (tree_walk.hpp) are a chain: every row reads what the row before it
// pushed into the tree, and the tree's cache makes even the rounding depend on the order. So one
// thread runs a world's walks with the CPU's own code (propagation_sweep.hpp) in the CPU's order.
// Two layouts:
// - propagation_kernel, one warp per world: lane 0 walks, and the rest of the warp helps where
//   the work is independent: initialization, and in the colored mode each color's contacts,
//   32 at a time: those through trees (each lane walking with a root path of its own, through
//   the caches of the trees its contact touches, which no other lane's contact touches)
//   and the packed free-body ones (colored_kernel.cuh). The colored mode always runs here.
// - propagation_thread_kernel, one thread per world, for the serial mode: the CPU's whole
//   propagation_solve on each thread, 32 worlds to a warp instead of 31 idle lanes. Copies of
//   one world take the same branches together; each thread reads its own world's arrays, so the
//   loads are not coalesced.
// Every result is the CPU backend's, bit for bit, in either layout.
#pragma once

#include "../propagation/propagation_sweep.hpp"
#include "colored_kernel.cuh"
#include "general_kernel.cuh"

namespace steel::cuda {

// The walks' scratch of every world at once (a WalkScratch per thread on the CPU): p, the sync's
// body changes and a parked tree cache (used at roots) per tree body, tau per DOF, and a root
// path per lane of each world's warp (the colored mode walks a color's contacts on several lanes
// at once).
template <class Real> struct WalkScratchView {
    Real* bias;                           // [6 * tree bodies]
    Real* body_change;                    // [6 * tree bodies]
    Real* joint_impulse;                  // [total DOFs]
    propagation::TreeCache<Real>* parked; // [tree bodies]
    int32_t* path;                        // [world_count * kWarpSize * path_stride]
    uint32_t path_stride;                 // max(max_depth, 1)
};

// The root path of lane `lane` of world w's warp (lane 0's for a world on one thread).
template <class Real>
__device__ inline int32_t* lane_path(const WalkScratchView<Real>& scratch, uint32_t w,
                                     uint32_t lane) {
    return scratch.path + (size_t(w) * kWarpSize + lane) * scratch.path_stride;
}

// World w's rows and walks, with its slice of the walks' scratch and v at `velocity`; the rows'
// J.Y replaced by the propagation denominators J H~^-1 J^T, as this response solves with.
template <class Real>
__device__ inline propagation::PropagationWorld<Real>
device_propagation_world(const RowsView<Real>& set, const propagation::PropagationView<Real>& trees,
                         const WalkScratchView<Real>& scratch, uint32_t w, Real* velocity) {
    const uint32_t row0 = set.world_row_offset[w], dof0 = set.world_dof_offset[w];
    const uint32_t body0 = trees.world_body_offset[w];
    propagation::PropagationWorld<Real> world{
        device_world_rows(set, w),
        row0,
        {trees, body0, dof0, velocity, scratch.bias + 6 * size_t(body0),
         scratch.joint_impulse + dof0, scratch.body_change + 6 * size_t(body0),
         lane_path(scratch, w, 0), scratch.parked + body0}};
    world.rows.jy = trees.denominator + row0;
    return world;
}

// colored_sweep (colored_sweep.hpp) for a warp: each color's packs on all lanes, then its
// contacts that touch a tree, one a lane at a time (they share no unit, so neither a tree nor
// its cache: the CPU's bits), each lane through its own `world` (its own root path); then the
// serial group and the sync on lane 0. Lane 0's result, broadcast.
template <class Real>
__device__ inline SweepResult<Real>
warp_colored_sweep(const ColoredView<Real>& plan, propagation::PropagationWorld<Real>& world,
                   uint32_t w, const SolveParams<Real>& params, Real* impulse, uint32_t lane) {
    SweepResult<Real> result;
    for (uint32_t c = plan.world_color_offset[w]; c < plan.world_color_offset[w + 1]; ++c) {
        const uint32_t first = plan.color_pack_offset[c];
        const uint32_t contacts = (plan.color_pack_offset[c + 1] - first) * plan.lanes;
        for (uint32_t q = lane; q < contacts; q += kWarpSize)
            solve_packed_contact(plan, first + q / plan.lanes, q % plan.lanes, params, impulse,
                                 world.walk.velocity, result);
        __syncwarp(); // the contacts below read what the packs wrote
        for (uint32_t k = plan.color_contact_offset[c] + lane; k < plan.color_contact_offset[c + 1];
             k += kWarpSize) {
            const uint32_t row = plan.contact_rows[2 * size_t(k)],
                           count = plan.contact_rows[2 * size_t(k) + 1];
            for (uint32_t i = row; i < row + count; ++i)
                propagation::update_row(world, i, params, impulse, result);
            world.walk.park(); // for the lane that takes the tree's next contact
        }
        __syncwarp(); // the next color and lane 0's serial rows read what this one wrote
    }
    result.residual = warp_max(result.residual);
    result.nonfinite_probe = warp_sum(result.nonfinite_probe);
    if (lane == 0) {
        for (uint32_t k = plan.world_serial_offset[w]; k < plan.world_serial_offset[w + 1]; ++k)
            propagation::update_row(world, plan.serial_rows[k], params, impulse, result);
        propagation::sync_world(world.walk, w);
    }
    __syncwarp();
    result.residual = __shfl_sync(kFullMask, result.residual, 0);
    result.nonfinite_probe = __shfl_sync(kFullMask, result.nonfinite_probe, 0);
    return result;
}

// propagation_sweep (propagation_sweep.hpp) on lane 0, its result broadcast.
template <class Real>
__device__ inline SweepResult<Real> warp_serial_sweep(propagation::PropagationWorld<Real>& world,
                                                      uint32_t w, const SolveParams<Real>& params,
                                                      Real* impulse, uint32_t lane) {
    SweepResult<Real> result;
    if (lane == 0) result = propagation::propagation_sweep(world, w, params, impulse);
    __syncwarp();
    result.residual = __shfl_sync(kFullMask, result.residual, 0);
    result.nonfinite_probe = __shfl_sync(kFullMask, result.nonfinite_probe, 0);
    return result;
}

// A world's whole solve, a warp per world, for the two builds of the kernel below.
// plan.world_color_offset null: serial sweeps; otherwise colored ones.
template <class Real>
__device__ inline void
propagation_world(const RowsView<Real>& set, const propagation::PropagationView<Real>& trees,
                  const WalkScratchView<Real>& scratch, const ColoredView<Real>& plan,
                  const DeviceSolve<Real>& solve, unsigned char* dynamic_shared) {
    const uint32_t warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const uint32_t w = blockIdx.x * (blockDim.x / kWarpSize) + warp;
    if (w >= set.world_count) return;

    const uint32_t row0 = set.world_row_offset[w], dof0 = set.world_dof_offset[w];
    const uint32_t bodies = trees.world_body_offset[w + 1] - trees.world_body_offset[w];
    Real* impulse = solve.impulse + row0;
    Real* result_velocity = solve.velocity + dof0;
    // The walks, the rows and the packs read and write v all the time: in shared memory when
    // the launch gave it room, copied out at the end.
    Real* velocity = warp_sweep_velocity(solve, dynamic_shared, warp, result_velocity);
    propagation::PropagationWorld<Real> world =
        device_propagation_world(set, trees, scratch, w, velocity);
    world.walk.path = lane_path(scratch, w, lane); // each lane walks a color's contacts of its own
    const WorldRows<Real>& rows = world.rows;

    for (uint32_t k = lane; k < 6 * bodies; k += kWarpSize)
        world.walk.bias[k] = Real(0);
    for (uint32_t k = lane; k < rows.dof_count; k += kWarpSize)
        world.walk.joint_impulse[k] = Real(0);
    for (uint32_t k = lane; k < bodies; k += kWarpSize)
        world.walk.parked[k] = propagation::TreeCache<Real>();
    for (uint32_t i = lane; i < rows.row_count; i += kWarpSize)
        impulse[i] = solve.warm_start ? rows.initial_impulse[i] : Real(0);
    __syncwarp();
    if (bodies == 0) { // free bodies only: J/Y rows, the same sums warp-wide
        warp_velocity_from_impulses(rows, impulse, velocity, lane, /*skip_zero=*/true);
    } else {
        if (lane == 0) propagation::velocity_from_impulses(world, w, impulse);
        __syncwarp();
    }

    const bool colored = plan.world_color_offset != nullptr;
    MomentumState<Real> state{}; // the propagation response takes no momentum (validated)
    WorldOutcome outcome = warp_run_sweeps(
        solve, w, lane, state, impulse, rows.row_count, velocity, rows.dof_count, [&] {
            return colored ? warp_colored_sweep(plan, world, w, solve.params, impulse, lane)
                           : warp_serial_sweep(world, w, solve.params, impulse, lane);
        });
    outcome.path = STEEL_PATH_GENERAL;
    warp_isolate_if_nonfinite(rows, outcome, impulse, velocity, lane);
    warp_copy_velocity_out(velocity, result_velocity, rows.dof_count, lane);
    if (lane == 0) write_world_stats(solve.stats[w], outcome);
}

template <class Real>
__global__ void propagation_kernel(RowsView<Real> set, propagation::PropagationView<Real> trees,
                                   WalkScratchView<Real> scratch, ColoredView<Real> plan,
                                   DeviceSolve<Real> solve) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    propagation_world(set, trees, scratch, plan, solve, shared_bytes);
}

// The same built for at least four blocks of 128 threads per multiprocessor: 128 registers a
// thread instead of 252 / 254 (float64 / float32), 16 warps an SM instead of 8, for 0.4 to 1.2 KB
// of stack (docs/cuda.md). Slower on an H200 (the colored pile 1.6x), so only
// STEEL_CUDA_PROPAGATION_KERNEL=bounded picks it.
template <class Real>
__global__ void __launch_bounds__(128, 4)
    propagation_kernel_bounded(RowsView<Real> set, propagation::PropagationView<Real> trees,
                               WalkScratchView<Real> scratch, ColoredView<Real> plan,
                               DeviceSolve<Real> solve) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    propagation_world(set, trees, scratch, plan, solve, shared_bytes);
}

// The serial mode with one thread per world: v, p and tau in global memory.
template <class Real>
__global__ void propagation_thread_kernel(RowsView<Real> set,
                                          propagation::PropagationView<Real> trees,
                                          WalkScratchView<Real> scratch, DeviceSolve<Real> solve) {
    const uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= set.world_count) return;

    Real* impulse = solve.impulse + set.world_row_offset[w];
    propagation::PropagationWorld<Real> world =
        device_propagation_world(set, trees, scratch, w, solve.velocity + set.world_dof_offset[w]);
    double* history =
        solve.history_stride ? solve.history + size_t(w) * solve.history_stride : nullptr;
    const WorldOutcome outcome = propagation::propagation_solve(
        world, w, solve.settings, solve.warm_start != 0, impulse, history,
        [&] { return propagation::propagation_sweep(world, w, solve.params, impulse); });
    write_world_stats(solve.stats[w], outcome);
}

} // namespace steel::cuda
