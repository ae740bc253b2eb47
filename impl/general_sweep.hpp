// The general (matrix-free) sweep, SPEC section 2: J and Y stored per row, v kept live, A never
// assembled. A row costs work proportional to the DOFs it touches.
#pragma once

#include "row_update.hpp"
#include "sweep_result.hpp"
#include "world_rows.hpp"

namespace steel {

// One Gauss-Seidel sweep over the world's rows in upload order. Invariant on entry and exit:
// velocity = v-hat + sum_j Y_j impulse_j.
template <class Real>
STEEL_HOST_DEVICE inline SweepResult<Real> general_sweep(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                                                        Real* impulse, Real* velocity) {
    SweepResult<Real> result;
    for (uint32_t i = 0; i < rows.row_count;) {
        const bool pair = rows.kind[i] == STEEL_ROW_FRICTION_CONE;
        const Real error0 = row_dot(rows, i, rows.jacobian, velocity) + rows.bias[i];
        const Real error1 = pair ? row_dot(rows, i + 1, rows.jacobian, velocity) + rows.bias[i + 1] : Real(0);
        Real step[2];
        const uint32_t used = update_rows(rows, i, params, error0, error1, impulse, step, result);
        for (uint32_t k = 0; k < used; ++k) row_axpy(rows, i + k, rows.response, step[k], velocity);
        i += used;
    }
    return result;
}

// velocity = v-hat + sum_j Y_j impulse_j, computed from scratch.
template <class Real>
STEEL_HOST_DEVICE inline void velocity_from_impulses(const WorldRows<Real>& rows, const Real* impulse,
                                                     Real* velocity) {
    for (uint32_t k = 0; k < rows.dof_count; ++k) velocity[k] = rows.unconstrained_velocity[k];
    for (uint32_t j = 0; j < rows.row_count; ++j) row_axpy(rows, j, rows.response, impulse[j], velocity);
}

} // namespace steel
