// Nesterov momentum (momentum.hpp) for a warp: the lanes copy and extrapolate every 32nd value
// each, and the alignment is a warp sum, so no lane waits while lane 0 walks m rows alone.
// Every lane keeps its own copy of the MomentumState scalars (t, the last residual) and
// updates it with the same momentum_decide on the same broadcast values, so the copies stay
// equal. Only the alignment's summation order differs from the CPU's, and it only enters the
// sign test that restarts the momentum.
#pragma once

#include "../momentum.hpp"
#include "warp_rows.cuh"

namespace steel::cuda {

template <class Real>
__device__ inline void warp_momentum_begin_sweep(MomentumState<Real>& state, const Real* impulse,
                                                 uint32_t m, uint32_t lane) {
    warp_copy(state.start, impulse, m, lane);
}

template <class Real>
__device__ inline void warp_momentum_restart(MomentumState<Real>& state, const Real* impulse,
                                             uint32_t m, const Real* velocity, uint32_t n,
                                             uint32_t lane) {
    state.t = 1;
    warp_copy(state.previous, impulse, m, lane);
    if (state.previous_velocity) warp_copy(state.previous_velocity, velocity, n, lane);
}

template <class Real>
__device__ inline void warp_momentum_reset(MomentumState<Real>& state, const Real* impulse,
                                           uint32_t m, const Real* velocity, uint32_t n,
                                           uint32_t lane) {
    state.last_residual = INFINITY;
    warp_momentum_restart(state, impulse, m, velocity, n, lane);
}

// momentum_extrapolate for a warp; every lane returns the same. The caller syncs the warp
// before the values are read across lanes.
template <class Real>
__device__ inline bool warp_momentum_extrapolate(MomentumState<Real>& state, double residual,
                                                 Real* impulse, uint32_t m, Real* velocity,
                                                 uint32_t n, uint32_t lane) {
    Real alignment = 0;
    for (uint32_t i = lane; i < m; i += kWarpSize)
        alignment += (impulse[i] - state.start[i]) * (impulse[i] - state.previous[i]);
    alignment = warp_sum(alignment);
    const MomentumDecision<Real> decision = momentum_decide(state, residual, alignment);
    if (decision.move != MomentumMove::extrapolate) {
        warp_momentum_restart(state, impulse, m, velocity, n, lane);
        return decision.move == MomentumMove::restart;
    }
    momentum_extrapolate_values(impulse, state.previous, decision.beta, lane, m, kWarpSize);
    if (state.previous_velocity)
        momentum_extrapolate_values(velocity, state.previous_velocity, decision.beta, lane, n,
                                    kWarpSize);
    return false;
}

} // namespace steel::cuda
