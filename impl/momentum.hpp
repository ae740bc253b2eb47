// Nesterov momentum between sweeps, with gradient restart (SPEC section 6).
//
// Let x_k be the impulses after sweep k and y_{k-1} those the sweep started from. After each
// sweep but the last we extrapolate
//
//     t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2,   beta = (t_k - 1) / t_{k+1}
//     y_k     = x_k + beta (x_k - x_{k-1})
//
// and, because v = v-hat + Y lambda is linear in lambda, the same combination of the stored
// velocities gives v(y_k) without touching a row: the matrix-free invariant stays exact (to
// rounding). Gradient restart (O'Donoghue and Candes, 2015): a Gauss-Seidel sweep is a
// projected descent step, so x_k - y_{k-1} points downhill from y_{k-1}. When it points against
// the momentum direction x_k - x_{k-1}, i.e. (x_k - y_{k-1}) . (x_k - x_{k-1}) < 0, the
// momentum is carrying us uphill: we drop it (t = 1) and continue from x_k unextrapolated. We
// chose this test over a residual-increase test because it costs one dot product of length m,
// needs no extra residual evaluation, and fires before the residual gets worse, not after.
#pragma once

#include "host_device.hpp"

#include <cmath>
#include <cstdint>

namespace steel {

// Momentum is only worth its overshoot while plain sweeps stall: a sweep that cut the residual
// below this fraction of the previous one is left unextrapolated.
constexpr double kMomentumSlowRatio = 0.9;

template <class Real> struct MomentumState {
    Real t = 1;
    double last_residual = 0; // residual of the previous sweep
    Real* start;              // [m] y_{k-1}: impulses at the start of the current sweep
    Real* previous;           // [m] x_{k-1}
    Real* previous_velocity;  // [n] v(x_{k-1}), or null when v is not kept live (dense path)
};

// Before a sweep: remember where it starts.
template <class Real>
STEEL_HOST_DEVICE inline void momentum_begin_sweep(MomentumState<Real>& state, const Real* impulse,
                                                   uint32_t m) {
    for (uint32_t i = 0; i < m; ++i)
        state.start[i] = impulse[i];
}

// Drops the momentum: the next extrapolation starts afresh from these impulses.
template <class Real>
STEEL_HOST_DEVICE inline void momentum_restart(MomentumState<Real>& state, const Real* impulse,
                                               uint32_t m, const Real* velocity, uint32_t n) {
    state.t = 1;
    for (uint32_t i = 0; i < m; ++i)
        state.previous[i] = impulse[i];
    if (state.previous_velocity)
        for (uint32_t k = 0; k < n; ++k)
            state.previous_velocity[k] = velocity[k];
}

// At the start of the solve: x_{-1} = x_0, the starting impulses.
template <class Real>
STEEL_HOST_DEVICE inline void momentum_reset(MomentumState<Real>& state, const Real* impulse,
                                             uint32_t m, const Real* velocity, uint32_t n) {
    state.last_residual = INFINITY;
    momentum_restart(state, impulse, m, velocity, n);
}

// What to do after a sweep, decided from its residual and the alignment (x_k - y_{k-1}) .
// (x_k - x_{k-1}); updates t and the last residual. The CPU and the GPU share it: only the
// alignment's summation order differs between them.
enum class MomentumMove { first, restart, extrapolate };

template <class Real> struct MomentumDecision {
    MomentumMove move;
    Real beta; // extrapolate only
};

template <class Real>
STEEL_HOST_DEVICE inline MomentumDecision<Real> momentum_decide(MomentumState<Real>& state,
                                                                double residual, Real alignment) {
    const double last = state.last_residual;
    state.last_residual = residual;
    if (last == INFINITY) // after the first sweep: no direction to extrapolate along yet
        return {MomentumMove::first, Real(0)};
    const bool got_worse = residual > last;                        // momentum pushed uphill
    const bool fast_anyway = residual < kMomentumSlowRatio * last; // plain sweeps are doing well
    if (alignment < 0 || got_worse || fast_anyway) return {MomentumMove::restart, Real(0)};
    const Real t_next = (Real(1) + std::sqrt(Real(1) + Real(4) * state.t * state.t)) / Real(2);
    const Real beta = (state.t - Real(1)) / t_next;
    state.t = t_next;
    return {MomentumMove::extrapolate, beta};
}

// y_k = x_k + beta (x_k - x_{k-1}) for the values [begin, end) by `step`, and x_{k-1} := x_k:
// one thread takes them all (step 1), or a warp's lane l every 32nd from l.
template <class Real>
STEEL_HOST_DEVICE inline void momentum_extrapolate_values(Real* values, Real* previous, Real beta,
                                                          uint32_t begin, uint32_t end,
                                                          uint32_t step) {
    for (uint32_t i = begin; i < end; i += step) {
        const Real x = values[i];
        values[i] = x + beta * (x - previous[i]);
        previous[i] = x;
    }
}

// After a sweep that another follows: extrapolate impulse (and velocity, if kept live) in
// place. Returns true if the momentum was restarted instead.
template <class Real>
STEEL_HOST_DEVICE inline bool momentum_extrapolate(MomentumState<Real>& state, double residual,
                                                   Real* impulse, uint32_t m, Real* velocity,
                                                   uint32_t n) {
    Real alignment = 0;
    for (uint32_t i = 0; i < m; ++i)
        alignment += (impulse[i] - state.start[i]) * (impulse[i] - state.previous[i]);
    const MomentumDecision<Real> decision = momentum_decide(state, residual, alignment);
    if (decision.move != MomentumMove::extrapolate) {
        momentum_restart(state, impulse, m, velocity, n);
        return decision.move == MomentumMove::restart;
    }
    momentum_extrapolate_values(impulse, state.previous, decision.beta, 0, m, 1);
    if (state.previous_velocity)
        momentum_extrapolate_values(velocity, state.previous_velocity, decision.beta, 0, n, 1);
    return false;
}

} // namespace steel
