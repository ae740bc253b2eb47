// The small-world dense path, SPEC section 3: assemble A = J Y (m x m) and rhs = J v-hat + b
// once, sweep on A with the whole problem in cache, then set v = v-hat + Y lambda.
//
// The sweep is the same Gauss-Seidel iteration as the general sweep: J_i.v + b_i there equals
// rhs_i + A_i.lambda here, so the two paths agree to rounding, sweep by sweep.
#pragma once

#include "dense_table.hpp"
#include "general_sweep.hpp"
#include "register_sum.hpp"
#include "sweep_row.hpp"

#include <algorithm>

namespace steel {

// Whether build_dense_problem uses the table, or goes entry by entry (one Y_j at a time scattered
// into a DOF vector, J_i . that for each i: the same sums), which it does where the table would
// be both larger than kDenseTableMaxValues and more than 4 times A: a big world forced onto the
// dense path with many more DOFs than rows. (The bound was 4096 values, which sent AUTO's worlds
// of 17 or more rows over 192 DOFs the slow way: 0.5x the general sweep's speed where the table
// gave 1.1x, bench/RESULTS.md.)
constexpr uint64_t kDenseTableMaxValues = 65536; // 512 KiB of doubles per worker thread
inline bool dense_uses_table(uint32_t row_count, uint32_t dof_count) {
    const uint64_t table = uint64_t(dof_count) * dense_stride(row_count);
    return table <= kDenseTableMaxValues || dof_count <= 4 * uint64_t(row_count);
}

// Scratch the dense path needs for a world: A, rhs, the lagged impulses (dense_sweep), and the
// table or the DOF vector.
inline uint64_t dense_scratch_size(uint32_t row_count, uint32_t dof_count) {
    const uint64_t stride = dense_stride(row_count);
    const uint64_t table = dense_uses_table(row_count, dof_count) ? dof_count * stride : dof_count;
    return row_count * stride + 2 * uint64_t(row_count) + table;
}

// Fills a (m rows of dense_stride(m) values) and rhs. table is scratch of n x dense_stride(m)
// values where dense_uses_table says so, else of n. The entries the row update reads directly
// (J.Y on the diagonal, a cone pair's cross terms) are the stored ones, so both paths share them
// exactly.
//
// A_ij = J_i . Y_j, summed over J_i's values in order from +0, with Y_j's value at each DOF (0
// where Y_j has none): dense_entry's sum, which the GPU computes entry by entry, so both have the
// same A. Here eight entries of row i at once: the table holds every Y_j by DOF, row k being the
// values of the m responses at DOF k, so each J value adds its products to eight sums from one
// contiguous piece of a row, which the compiler vectorizes across j (each sum still adds its own
// terms in order, so the bits do not depend on it). It was one J_i . Y_j dot product per
// entry, m^2 of them (bench/RESULTS.md, "The dense path built by rows").
template <class Real>
inline void build_dense_problem(const WorldRows<Real>& rows, Real* a, Real* rhs, Real* table) {
    const uint32_t m = rows.row_count, n = rows.dof_count, stride = dense_stride(m);
    if (!dense_uses_table(m, n)) {
        Real* column = table;
        std::fill(column, column + n, Real(0));
        for (uint32_t j = 0; j < m; ++j) {
            row_axpy(rows, j, rows.response, Real(1), column); // column = Y_j
            for (uint32_t i = 0; i < m; ++i)
                a[size_t(i) * stride + j] =
                    i == j ? rows.jy[i] : row_dot(rows, i, rows.jacobian, column);
            row_axpy(rows, j, rows.response, Real(-1), column); // back to exact zeros: x + y - y
        }
    } else {
        simd::dense_rows_from_table(rows, a, table);
    }
    for (uint32_t i = 0; i + 1 < m; ++i)
        if (rows.kind[i] == STEEL_ROW_FRICTION_CONE) {
            a[size_t(i) * stride + i + 1] = rows.cone_cross_01[i];
            a[size_t(i + 1) * stride + i] = rows.cone_cross_10[i];
            ++i;
        }
    for (uint32_t i = 0; i < m; ++i)
        rhs[i] = row_dot(rows, i, rows.jacobian, rows.unconstrained_velocity) + rows.bias[i];
}

// The velocity error A_i . lambda + rhs_i of row i (rhs_i in the place of the general sweep's
// b_i). Term j goes to sum j mod 4, combined as (0 + 2) + (1 + 3): the serial sweep waits for each
// row's error, and four sums make it a chain of m / 4 dependent adds instead of m
// (bench/RESULTS.md, "The dense path built by rows"). Each sum is kept in a register
// (add_in_register): "The dense row error in registers" says why.
template <class Real>
inline RowError<Real> dense_row_error(const Real* a, const Real* rhs, uint32_t m, uint32_t i,
                                      const Real* impulse) {
    const Real* a_row = a + size_t(i) * dense_stride(m);
    Real sum0 = 0, sum1 = 0, sum2 = 0, sum3 = 0;
    uint32_t j = 0;
    for (; j + 4 <= m; j += 4) {
        add_in_register(sum0, a_row[j] * impulse[j]);
        add_in_register(sum1, a_row[j + 1] * impulse[j + 1]);
        add_in_register(sum2, a_row[j + 2] * impulse[j + 2]);
        add_in_register(sum3, a_row[j + 3] * impulse[j + 3]);
    }
    switch (m - j) { // the tail: each sum takes at most one more term, so their order is free
    case 3:
        add_in_register(sum2, a_row[j + 2] * impulse[j + 2]);
        [[fallthrough]];
    case 2:
        add_in_register(sum1, a_row[j + 1] * impulse[j + 1]);
        [[fallthrough]];
    case 1:
        add_in_register(sum0, a_row[j] * impulse[j]);
        break;
    default:
        break;
    }
    return {(sum0 + sum2) + (sum1 + sum3), rhs[i]};
}

// The update of single row i on the dense path, from its SweepRow (prepare_sweep_rows: the same
// c, d and 1/d update_rows would form). Returns the step.
template <class Real>
inline Real dense_single_row_update(const SweepRow<Real>& row, uint32_t i, RowError<Real> error,
                                    Real* impulse, SweepResult<Real>& result) {
    const Real normal_impulse = impulse_of_normal_row(row.normal_row, impulse);
    return update_single_row(error, impulse, i, row.regularization, row.denominator, row.inverse,
                             row.kind, row.lower, row.upper, row.friction, normal_impulse, result);
}

// One sweep on A. A single row reads its c, d and 1/d from its SweepRow rather than dividing
// again every sweep; a cone pair takes update_rows.
//
// Like the CPU's general sweep it runs one group behind (row_kernels.inc), a group being a single
// row or a cone pair: a row takes its error on `lagged`, the impulses with the previous group's
// still at their values before this sweep's update, and adds A_i,g times each of that group's
// steps, which is the same number in exact arithmetic. So the row's sums need not wait for the
// group just before, only a multiply and an add per step do. A pair's steps are held so only for
// a single row after it (as in the general sweep); before another pair they go into lagged at
// once. impulse itself is written at once (a friction row reads its normal row's live impulse);
// lagged catches up after the next group has read it. lagged is m values of scratch.
template <class Real>
inline SweepResult<Real> dense_sweep(const WorldRows<Real>& rows, const Real* a, const Real* rhs,
                                     const SolveParams<Real>& params,
                                     const SweepRow<Real>* prepared, Real* impulse, Real* lagged) {
    SweepResult<Real> result;
    const uint32_t m = rows.row_count, stride = dense_stride(m);
    std::copy(impulse, impulse + m, lagged); // momentum may have moved them since the last sweep
    bool held = false; // row i - 1's new impulse is not yet in lagged; its step is held_step
    Real held_step = 0;
    for (uint32_t i = 0; i < m;) {
        // A run of single rows, in a loop of its own (as in the general sweep).
        for (; i < m && rows.kind[i] != STEEL_ROW_FRICTION_CONE; ++i) {
            RowError<Real> error = dense_row_error(a, rhs, m, i, lagged);
            if (held) {
                error.rate += a[size_t(i) * stride + i - 1] * held_step;
                lagged[i - 1] = impulse[i - 1];
            }
            held_step = dense_single_row_update(prepared[i], i, error, impulse, result);
            held = true;
        }
        if (i == m) break;
        // The cone pair at i and i + 1, then the single row after it, if there is one.
        RowError<Real> error0 = dense_row_error(a, rhs, m, i, lagged);
        RowError<Real> error1 = dense_row_error(a, rhs, m, i + 1, lagged);
        if (held) {
            error0.rate += a[size_t(i) * stride + i - 1] * held_step;
            error1.rate += a[size_t(i + 1) * stride + i - 1] * held_step;
            lagged[i - 1] = impulse[i - 1];
            held = false;
        }
        Real step[2] = {0, 0}; // both written: a pair is two rows
        update_rows(rows, i, params, error0, error1, impulse, step, result);
        i += 2;
        if (i < m && rows.kind[i] != STEEL_ROW_FRICTION_CONE) {
            RowError<Real> error = dense_row_error(a, rhs, m, i, lagged);
            error.rate += a[size_t(i) * stride + i - 2] * step[0];
            error.rate += a[size_t(i) * stride + i - 1] * step[1];
            lagged[i - 2] = impulse[i - 2];
            lagged[i - 1] = impulse[i - 1];
            held_step = dense_single_row_update(prepared[i], i, error, impulse, result);
            held = true;
            ++i;
        } else {
            lagged[i - 2] = impulse[i - 2];
            lagged[i - 1] = impulse[i - 1];
        }
    }
    if (held) lagged[m - 1] = impulse[m - 1];
    return result;
}

} // namespace steel
