// What one sweep over a world's rows reports, and the loop over sweeps that every path shares.
#pragma once

#include "host_device.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel {

template <class Real> struct SweepResult {
    Real residual = 0; // max over rows of |d_i * (lambda_i' - lambda_i)|
    // Sum of 0 * (every error and impulse seen). Stays exactly 0 unless something was NaN or
    // infinite, which a max() alone would silently drop.
    Real nonfinite_probe = 0;
};

template <class Real>
STEEL_HOST_DEVICE inline void record_step(SweepResult<Real>& result, Real denominator, Real step,
                                          Real error, Real impulse) {
    Real scaled = denominator * step;
    if (scaled < 0) scaled = -scaled;
    if (scaled > result.residual) result.residual = scaled;
    result.nonfinite_probe += Real(0) * error + Real(0) * impulse;
}

struct SweepSettings {
    uint32_t iterations;
    double tolerance; // 0 = run every sweep
};

struct WorldOutcome {
    int32_t path = STEEL_PATH_GENERAL;
    uint32_t sweeps = 0;
    uint32_t flags = 0;
    uint32_t restarts = 0;
    double residual = 0;
    double first_residual = 0;
};

// The world's steel_world_stats, as both backends report it.
STEEL_HOST_DEVICE inline void write_world_stats(steel_world_stats& stats,
                                                const WorldOutcome& outcome) {
    stats = steel_world_stats{};
    stats.struct_size = sizeof(steel_world_stats);
    stats.path = outcome.path;
    stats.sweeps = outcome.sweeps;
    stats.flags = outcome.flags;
    stats.residual = outcome.residual;
    stats.first_residual = outcome.first_residual;
    stats.momentum_restarts = outcome.restarts;
}

// Runs sweep() up to settings.iterations times, stopping early at the tolerance or at the first
// non-finite number. sweep() returns a SweepResult<Real>; between(residual) runs after a sweep when
// another sweep follows (momentum lives there), given that sweep's residual, and returns true if
// it restarted. history, when
// not null, receives every sweep's residual.
template <class Real, class Sweep, class Between>
STEEL_HOST_DEVICE inline WorldOutcome run_sweeps(const SweepSettings& settings, double* history,
                                                 Sweep&& sweep, Between&& between) {
    WorldOutcome outcome;
    for (uint32_t k = 0; k < settings.iterations; ++k) {
        const SweepResult<Real> result = sweep();
        outcome.sweeps = k + 1;
        outcome.residual = double(result.residual);
        if (history) history[k] = outcome.residual;
        if (k == 0) outcome.first_residual = outcome.residual;
        if (result.nonfinite_probe != Real(0)) {
            outcome.flags |= STEEL_WORLD_NONFINITE;
            break;
        }
        if (settings.tolerance > 0 && outcome.residual <= settings.tolerance) {
            outcome.flags |= STEEL_WORLD_CONVERGED;
            break;
        }
        if (k + 1 < settings.iterations && between(outcome.residual)) ++outcome.restarts;
    }
    return outcome;
}

} // namespace steel
