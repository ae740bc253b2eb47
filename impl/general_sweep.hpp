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
STEEL_HOST_DEVICE inline SweepResult<Real> general_sweep(const WorldRows<Real>& rows, Real cfm,
                                                        Real* impulse, Real* velocity) {
    SweepResult<Real> result;
    for (uint32_t i = 0; i < rows.row_count; ++i) {
        const Real error = row_dot(rows, i, rows.jacobian, velocity) + rows.bias[i];
        const Real c = rows.regularization[i];
        const Real d = row_denominator(rows.jy[i], c, cfm);
        const int32_t normal = rows.normal_row[i];
        const Real normal_impulse = normal >= 0 ? impulse[normal] : Real(0);
        const Real old_impulse = impulse[i];
        const Real new_impulse = updated_impulse(error, old_impulse, d, c, rows.kind[i], rows.lower[i],
                                                 rows.upper[i], rows.friction[i], normal_impulse);
        const Real step = new_impulse - old_impulse;
        row_axpy(rows, i, rows.response, step, velocity);
        impulse[i] = new_impulse;
        record_step(result, d, step, error, new_impulse);
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
