// The colored solve mode (SPEC 7) under the propagation response as one fused kernel, for
// batches whose articulations are all single bodies (free bodies: box piles, stacks). One warp
// per world runs every sweep in one launch; within a color no two contacts share a body, so the
// 32 lanes each solve a contact of the color at once, then the serial group follows on lane 0.
//
// Same bits as the CPU's colored solve: a lane runs the CPU pack kernel's per-lane arithmetic
// (contact_pack_kernel.inc: IEEE +, -, *, / and comparisons, in its order) on the same packs,
// and the serial rows use the CPU's own row code (row_dot, update_rows, row_axpy) with the
// propagation set's denominators. The merges across lanes are a max and a sum of zeros, which
// do not depend on order. Trees (walks through articulations) are not done here yet: the
// backend refuses such batches before launching.
#pragma once

#include "../colored/colored_plan.hpp"
#include "../row_update.hpp"
#include "general_kernel.cuh"

namespace steel::cuda {

// A ColoredPlan's arrays (colored_plan.hpp) on the device, and the propagation set's row
// denominators. Pack arrays are lane-minor with kLanes lanes a pack.
template <class Real> struct ColoredView {
    uint32_t lanes; // kPackLanes<Real>
    const Real* jacobian;
    const Real* response;
    const Real* bias;
    const Real* jy;
    const Real* regularization;
    const Real* friction;
    const int32_t* velocity_offset;
    const int32_t* impulse_index;
    const uint32_t* world_color_offset;
    const uint32_t* color_pack_offset;
    const uint32_t* world_serial_offset;
    const uint32_t* serial_rows;
    const Real* denominator; // per batch row: J H~^-1 J^T, replaces J.Y under this response
};

// The view of a ColoredPlan, or of its device mirror (same member names, each with data()).
template <class Real, class Plan>
ColoredView<Real> colored_view_of(const Plan& plan, const Real* denominator) {
    return {colored::kPackLanes<Real>,
            plan.packs.jacobian.data(),
            plan.packs.response.data(),
            plan.packs.bias.data(),
            plan.packs.jy.data(),
            plan.packs.regularization.data(),
            plan.packs.friction.data(),
            plan.packs.velocity_offset.data(),
            plan.packs.impulse_index.data(),
            plan.world_color_offset.data(),
            plan.color_pack_offset.data(),
            plan.world_serial_offset.data(),
            plan.serial_rows.data(),
            denominator};
}

// One contact (a lane of a pack): its normal and two box friction rows, as the pack kernel does
// it for one lane. velocity and impulse are the world's.
template <class Real>
__device__ inline void solve_packed_contact(const ColoredView<Real>& plan, uint32_t pack,
                                            uint32_t l, const SolveParams<Real>& params,
                                            Real* impulse, Real* velocity,
                                            SweepResult<Real>& result) {
    const uint32_t L = plan.lanes;
    const Real zero = Real(0);
    const int32_t* offsets = plan.velocity_offset + size_t(pack) * 2 * L + l;
    const int32_t* rows = plan.impulse_index + size_t(pack) * 3 * L + l;
    Real v[2][6], lambda[3];
    for (uint32_t side = 0; side < 2; ++side)
        for (uint32_t k = 0; k < 6; ++k) {
            const int32_t offset = offsets[side * L];
            v[side][k] = offset >= 0 ? velocity[size_t(offset) + k] : zero;
        }
    for (uint32_t r = 0; r < 3; ++r)
        lambda[r] = rows[r * L] >= 0 ? impulse[rows[r * L]] : zero;
    const Real mu = plan.friction[size_t(pack) * L + l];
    for (uint32_t r = 0; r < 3; ++r) {
        const size_t row_at = (size_t(pack) * 3 + r) * L + l;
        const Real bias = plan.bias[row_at], jy = plan.jy[row_at],
                   own_c = plan.regularization[row_at];
        const size_t values = (size_t(pack) * 3 + r) * 2 * 6 * L + l;
        Real error = zero;
        for (uint32_t side = 0; side < 2; ++side)
            for (uint32_t k = 0; k < 6; ++k)
                error += plan.jacobian[values + (side * 6 + k) * L] * v[side][k];
        error = error + bias;
        const Real c = r == 0 ? (own_c == zero ? params.contact_regularization : own_c) : own_c;
        const Real d = c > zero ? jy + c : jy + params.cfm;
        const Real soft = error + c * lambda[r];
        Real x = lambda[r] - soft / d;
        if (r == 0) {
            x = x < zero ? zero : x;
        } else {
            const Real upper = mu * lambda[0];
            const Real lower = -upper;
            x = x < lower ? lower : x;
            x = x > upper ? upper : x;
        }
        const Real step = x - lambda[r];
        lambda[r] = x;
        for (uint32_t side = 0; side < 2; ++side)
            for (uint32_t k = 0; k < 6; ++k)
                v[side][k] += step * plan.response[values + (side * 6 + k) * L];
        Real scaled = d * step;
        scaled = scaled < zero ? -scaled : scaled;
        if (scaled > result.residual) result.residual = scaled;
        result.nonfinite_probe += zero * error + zero * x;
    }
    for (uint32_t side = 0; side < 2; ++side) {
        const int32_t offset = offsets[side * L];
        if (offset < 0) continue;
        for (uint32_t k = 0; k < 6; ++k)
            velocity[size_t(offset) + k] = v[side][k];
    }
    for (uint32_t r = 0; r < 3; ++r)
        if (rows[r * L] >= 0) impulse[rows[r * L]] = lambda[r];
}

// update_row (propagation_sweep.hpp) for a row of free-body blocks, on one lane.
template <class Real>
__device__ inline void update_serial_row(const WorldRows<Real>& rows, uint32_t i,
                                         const SolveParams<Real>& params, Real* impulse,
                                         Real* velocity, SweepResult<Real>& result) {
    const Real error = row_dot(rows, i, rows.jacobian, velocity) + rows.bias[i];
    Real step[2];
    update_rows(rows, i, params, error, Real(0), impulse, step, result);
    if (step[0] != Real(0)) row_axpy(rows, i, rows.response, step[0], velocity);
}

template <class Real> __device__ inline Real warp_max(Real value) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        const Real other = __shfl_xor_sync(kFullMask, value, offset);
        value = other > value ? other : value;
    }
    return value;
}

// colored_sweep (colored_sweep.hpp) for a warp of a tree-free world; the result is broadcast.
template <class Real>
__device__ inline SweepResult<Real>
warp_colored_sweep(const ColoredView<Real>& plan, const WorldRows<Real>& rows, uint32_t world,
                   const SolveParams<Real>& params, Real* impulse, Real* velocity, uint32_t lane) {
    SweepResult<Real> result;
    for (uint32_t c = plan.world_color_offset[world]; c < plan.world_color_offset[world + 1]; ++c) {
        const uint32_t first = plan.color_pack_offset[c];
        const uint32_t contacts = (plan.color_pack_offset[c + 1] - first) * plan.lanes;
        for (uint32_t q = lane; q < contacts; q += kWarpSize)
            solve_packed_contact(plan, first + q / plan.lanes, q % plan.lanes, params, impulse,
                                 velocity, result);
        __syncwarp(); // the next color reads what this one wrote
    }
    result.residual = warp_max(result.residual);
    result.nonfinite_probe = warp_sum(result.nonfinite_probe);
    if (lane == 0)
        for (uint32_t k = plan.world_serial_offset[world]; k < plan.world_serial_offset[world + 1];
             ++k)
            update_serial_row(rows, plan.serial_rows[k], params, impulse, velocity, result);
    __syncwarp();
    result.residual = __shfl_sync(kFullMask, result.residual, 0);
    result.nonfinite_probe = __shfl_sync(kFullMask, result.nonfinite_probe, 0);
    return result;
}

template <class Real>
__global__ void colored_sweep_kernel(RowsView<Real> set, ColoredView<Real> plan,
                                     DeviceSolve<Real> solve) {
    const uint32_t warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const uint32_t world = blockIdx.x * (blockDim.x / kWarpSize) + warp;
    if (world >= set.world_count) return;

    WorldRows<Real> rows = device_world_rows(set, world);
    const uint32_t row0 = set.world_row_offset[world], dof0 = set.world_dof_offset[world];
    rows.jy = plan.denominator + row0;
    Real* impulse = solve.impulse + row0;
    Real* velocity = solve.velocity + dof0;
    for (uint32_t i = lane; i < rows.row_count; i += kWarpSize)
        impulse[i] = solve.warm_start ? rows.initial_impulse[i] : Real(0);
    __syncwarp();
    warp_velocity_from_impulses(rows, impulse, velocity, lane, /*skip_zero=*/true);

    MomentumState<Real> state{}; // the propagation response takes no momentum (validated)
    WorldOutcome outcome = warp_run_sweeps(
        solve, world, lane, state, impulse, rows.row_count, velocity, rows.dof_count, [&] {
            return warp_colored_sweep(plan, rows, world, solve.params, impulse, velocity, lane);
        });
    outcome.path = STEEL_PATH_GENERAL;
    warp_isolate_if_nonfinite(rows, outcome, impulse, velocity, lane);
    if (lane == 0) write_world_stats(solve.stats[world], outcome);
}

} // namespace steel::cuda
