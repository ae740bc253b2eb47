// The serial sweep under the propagation response (SPEC 7): the rows in upload order, each read
// and applied through propagation_rows.hpp, then one sync per sweep. It is the same
// Gauss-Seidel iteration as the immediate response's general sweep, so the two agree to
// rounding after every sweep, not only at convergence.
#pragma once

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
    const Real error = row_rate(world, i) + world.rows.bias[i];
    Real step[2];
    update_rows(world.rows, i, params, error, Real(0), impulse, step, result);
    if (step[0] != Real(0)) row_apply(world, i, step[0]);
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

} // namespace steel::propagation
