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
// left zeroed. The entries the row update reads directly (J.Y on the diagonal, a cone pair's
// cross terms) are the stored ones, so both paths share them exactly.
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
    for (uint32_t i = 0; i + 1 < m; ++i)
        if (rows.kind[i] == STEEL_ROW_FRICTION_CONE) {
            a[size_t(i) * m + i + 1] = rows.cone_cross_01[i];
            a[size_t(i + 1) * m + i] = rows.cone_cross_10[i];
            ++i;
        }
    for (uint32_t i = 0; i < m; ++i)
        rhs[i] = row_dot(rows, i, rows.jacobian, rows.unconstrained_velocity) + rows.bias[i];
}

// The velocity error A_i . lambda + rhs_i of row i (rhs_i in the place of the general sweep's b_i).
template <class Real>
STEEL_HOST_DEVICE inline RowError<Real> dense_row_error(const Real* a, const Real* rhs, uint32_t m,
                                                        uint32_t i, const Real* impulse) {
    const Real* a_row = a + size_t(i) * m;
    Real rate = 0;
    for (uint32_t j = 0; j < m; ++j)
        rate += a_row[j] * impulse[j];
    return {rate, rhs[i]};
}

template <class Real>
STEEL_HOST_DEVICE inline SweepResult<Real>
dense_sweep(const WorldRows<Real>& rows, const Real* a, const Real* rhs,
            const SolveParams<Real>& params, Real* impulse) {
    SweepResult<Real> result;
    const uint32_t m = rows.row_count;
    for (uint32_t i = 0; i < m;) {
        const bool pair = rows.kind[i] == STEEL_ROW_FRICTION_CONE;
        const RowError<Real> error0 = dense_row_error(a, rhs, m, i, impulse);
        const RowError<Real> error1 =
            pair ? dense_row_error(a, rhs, m, i + 1, impulse) : RowError<Real>{0, 0};
        Real step[2];
        i += update_rows(rows, i, params, error0, error1, impulse, step, result);
    }
    return result;
}

} // namespace steel
