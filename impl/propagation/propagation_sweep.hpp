// The serial sweep under the propagation response (SPEC 7): the rows in upload order, each read
// and applied through propagation_rows.hpp, then one sync per sweep. It is the same
// Gauss-Seidel iteration as the immediate response's general sweep, so the two agree to
// rounding after every sweep, not only at convergence.
#pragma once

#include "../nonfinite.hpp"
#include "../row_update.hpp"
#include "../sweep_result.hpp"
#include "propagation_rows.hpp"

namespace steel::propagation {

// velocity = v-hat + (every row's response to its impulse), pushed through the trees.
template <class Real>
STEEL_HOST_DEVICE void velocity_from_impulses(PropagationWorld<Real>& world, uint32_t w,
                                              const Real* impulse) {
    for (uint32_t k = 0; k < world.rows.dof_count; ++k)
        world.walk.velocity[k] = world.rows.unconstrained_velocity[k];
    for (uint32_t i = 0; i < world.rows.row_count; ++i)
        if (impulse[i] != Real(0)) row_apply(world, i, impulse[i]);
    sync_world(world.walk, w);
}

// One row update (no cone pairs under this response).
template <class Real>
STEEL_HOST_DEVICE void update_row(PropagationWorld<Real>& world, uint32_t i,
                                  const SolveParams<Real>& params, Real* impulse,
                                  SweepResult<Real>& result) {
    const RowError<Real> error{row_rate(world, i), world.rows.bias[i]};
    const Real step = update_plain_row(world.rows, i, params, error, impulse, result);
    if (step != Real(0)) row_apply(world, i, step);
}

template <class Real>
STEEL_HOST_DEVICE SweepResult<Real> propagation_sweep(PropagationWorld<Real>& world, uint32_t w,
                                                      const SolveParams<Real>& params,
                                                      Real* impulse) {
    SweepResult<Real> result;
    for (uint32_t i = 0; i < world.rows.row_count; ++i)
        update_row(world, i, params, impulse, result);
    sync_world(world.walk, w);
    return result;
}

// A world's whole solve on one thread, each sweep by sweep() (propagation_sweep, or the CPU's
// colored sweep): the walks' p and tau cleared, the impulses from the warm start or zero,
// v = v-hat + their responses, the sweeps, then the non-finite isolation. The CPU backend's, and
// the device's with one thread per world (propagation_thread_kernel), hence the same bits.
template <class Real, class Sweep>
STEEL_HOST_DEVICE WorldOutcome propagation_solve(PropagationWorld<Real>& world, uint32_t w,
                                                 const SweepSettings& settings, bool warm_start,
                                                 Real* impulse, double* history, Sweep&& sweep) {
    const WorldRows<Real>& rows = world.rows;
    const uint32_t bodies = world.walk.set.world_body_offset[w + 1] - world.walk.body0;
    for (uint32_t k = 0; k < 6 * bodies; ++k)
        world.walk.bias[k] = Real(0);
    for (uint32_t k = 0; k < rows.dof_count; ++k)
        world.walk.joint_impulse[k] = Real(0);
    world.walk.clear_caches(bodies);
    for (uint32_t i = 0; i < rows.row_count; ++i)
        impulse[i] = warm_start ? rows.initial_impulse[i] : Real(0);
    velocity_from_impulses(world, w, impulse);
    WorldOutcome outcome = run_sweeps<Real>(settings, history, sweep, [](double) { return false; });
    outcome.path = STEEL_PATH_GENERAL;
    isolate_if_nonfinite(rows, outcome, impulse, world.walk.velocity);
    return outcome;
}

} // namespace steel::propagation
