// The colored solve mode's packed contacts (SPEC 7) on the device: within a color no two
// contacts share a body, so the 32 lanes of a world's warp each solve a contact of a pack at
// once (propagation_kernel.cuh runs the sweeps around them).
//
// Same bits as the CPU's colored solve: a lane runs the CPU pack kernel's per-lane arithmetic
// (contact_pack_kernel.inc: IEEE +, -, *, / and comparisons, in its order) on the same packs.
// The merges across lanes are a max and a sum of zeros, which do not depend on order.
#pragma once

#include "../colored/colored_plan.hpp"
#include "../row_update.hpp"
#include "../sum6.hpp"
#include "warp_rows.cuh"

namespace steel::cuda {

// A ColoredPlan's arrays (colored_plan.hpp) on the device. Pack arrays are lane-minor with kLanes
// lanes a pack.
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
    const uint32_t* color_contact_offset; // contacts touching a tree, solved one by one
    const uint32_t* contact_rows;
};

// The view of a ColoredPlan, or of its device mirror (same member names, each with data()).
template <class Real, class Plan> ColoredView<Real> colored_view_of(const Plan& plan) {
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
            plan.color_contact_offset.data(),
            plan.contact_rows.data()};
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
        // Each side's six products in sum6's order, as the CPU's packs and row_rate sum them.
        Real rate = -zero; // row_rate's sum starts at -0
        for (uint32_t side = 0; side < 2; ++side) {
            Real t[6];
            for (uint32_t k = 0; k < 6; ++k)
                t[k] = plan.jacobian[values + (side * 6 + k) * L] * v[side][k];
            rate += sum6(t);
        }
        const Real c = r == 0 ? (own_c == zero ? params.contact_regularization : own_c) : own_c;
        const Real d = c > zero ? jy + c : jy + params.cfm;
        // updated_impulse's order: the bias off the chain, then the rate.
        const Real inverse = Real(1) / d;
        Real x = (lambda[r] - (bias + c * lambda[r]) * inverse) - rate * inverse;
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
        result.nonfinite_probe += zero * (rate + bias) + zero * x;
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

template <class Real> __device__ inline Real warp_max(Real value) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        const Real other = __shfl_xor_sync(kFullMask, value, offset);
        value = other > value ? other : value;
    }
    return value;
}

} // namespace steel::cuda
