// A world whose numbers turned non-finite is isolated: it hands back "no constraint applied"
// (zero impulses, v = v-hat) and the NONFINITE flag, and its neighbours are untouched. Shared by
// the CPU backend and the device's one-thread-per-world kernel (the warp kernels spread the same
// steps over their lanes: warp_isolate_if_nonfinite in cuda/warp_rows.cuh).
#pragma once

#include "host_device.hpp"
#include "sweep_result.hpp"
#include "world_rows.hpp"

#include <cmath>
#include <cstdint>

namespace steel {

template <class Real> STEEL_HOST_DEVICE bool all_finite(const Real* values, uint32_t count) {
    for (uint32_t k = 0; k < count; ++k)
        if (!std::isfinite(values[k])) return false;
    return true;
}

// The per-sweep probe sees every error and impulse; this also catches a velocity that the last
// row of the last sweep made non-finite.
template <class Real>
STEEL_HOST_DEVICE void isolate_if_nonfinite(const WorldRows<Real>& rows, WorldOutcome& outcome,
                                            Real* impulse, Real* velocity) {
    const uint32_t m = rows.row_count, n = rows.dof_count;
    if (!all_finite(impulse, m) || !all_finite(velocity, n) || !std::isfinite(outcome.residual))
        outcome.flags |= STEEL_WORLD_NONFINITE;
    if (outcome.flags & STEEL_WORLD_NONFINITE) {
        outcome.flags &= ~uint32_t(STEEL_WORLD_CONVERGED);
        for (uint32_t k = 0; k < m; ++k)
            impulse[k] = Real(0);
        for (uint32_t k = 0; k < n; ++k)
            velocity[k] = rows.unconstrained_velocity[k];
    }
}

} // namespace steel
