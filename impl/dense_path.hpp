// The small-world dense path, SPEC section 3: assemble A = J Y (m x m) and rhs = J v-hat + b
// once, sweep on A with the whole problem in cache, then set v = v-hat + Y lambda.
//
// The sweep is the same Gauss-Seidel iteration as the general sweep: J_i.v + b_i there equals
// rhs_i + A_i.lambda here, so the two paths agree to rounding, sweep by sweep.
#pragma once

#include "general_sweep.hpp"

namespace steel {

// Scratch the dense path needs for a world: A, rhs, and one dense DOF vector.
inline uint64_t dense_scratch_size(uint32_t row_count, uint32_t dof_count) {
    return uint64_t(row_count) * row_count + row_count + dof_count;
}

// Fills a (row-major m x m) and rhs. column is a zeroed scratch vector of dof_count values and is
// left zeroed. A's diagonal is taken from the stored J.Y so both paths share the denominator.
template <class Real>
STEEL_HOST_DEVICE inline void build_dense_problem(const WorldRows<Real>& rows, Real* a, Real* rhs,
                                                  Real* column) {
    const uint32_t m = rows.row_count;
    for (uint32_t j = 0; j < m; ++j) {
        row_axpy(rows, j, rows.response, Real(1), column); // column = Y_j
        for (uint32_t i = 0; i < m; ++i)
            a[size_t(i) * m + j] = i == j ? rows.jy[i] : row_dot(rows, i, rows.jacobian, column);
        row_axpy(rows, j, rows.response, Real(-1), column); // back to exact zeros: x + y - y
    }
    for (uint32_t i = 0; i < m; ++i)
        rhs[i] = row_dot(rows, i, rows.jacobian, rows.unconstrained_velocity) + rows.bias[i];
}

template <class Real>
STEEL_HOST_DEVICE inline SweepResult<Real> dense_sweep(const WorldRows<Real>& rows, const Real* a,
                                                      const Real* rhs, Real cfm, Real* impulse) {
    SweepResult<Real> result;
    const uint32_t m = rows.row_count;
    for (uint32_t i = 0; i < m; ++i) {
        const Real* a_row = a + size_t(i) * m;
        Real error = rhs[i];
        for (uint32_t j = 0; j < m; ++j) error += a_row[j] * impulse[j];
        const Real c = rows.regularization[i];
        const Real d = row_denominator(rows.jy[i], c, cfm);
        const int32_t normal = rows.normal_row[i];
        const Real normal_impulse = normal >= 0 ? impulse[normal] : Real(0);
        const Real old_impulse = impulse[i];
        const Real new_impulse = updated_impulse(error, old_impulse, d, c, rows.kind[i], rows.lower[i],
                                                 rows.upper[i], rows.friction[i], normal_impulse);
        impulse[i] = new_impulse;
        record_step(result, d, new_impulse - old_impulse, error, new_impulse);
    }
    return result;
}

} // namespace steel
