// One row as the CPU's serial general sweep reads it (impl/simd/row_kernels.inc): the fields that
// update_rows (row_update.hpp) reads of a single row, side by side, with the regularization c, the
// denominator d and 1/d, which depend only on the row and the solve options, worked out once per
// solve instead of in every sweep. The sweep then loads one record per row from one pointer
// rather than a dozen arrays (whose pointers it had to keep or reload), and no longer divides.
// Same values, so the same bits: update_rows forms c and d the same way (row_regularization,
// row_denominator) and takes 1/d the same way (updated_impulse).
#pragma once

#include "dense_entry.hpp"
#include "row_update.hpp"
#include "solve_params.hpp"
#include "world_rows.hpp"

#include <cstdint>

namespace steel {

template <class Real> struct SweepRow {
    uint64_t value_offset;    // into jacobian and response, as WorldRows::value_offset
    uint32_t block_offset[2]; // world-local DOFs
    uint32_t block_length[2];
    int32_t kind; // STEEL_ROW_*; a FRICTION_CONE row's other fields are not read
    int32_t normal_row;
    Real bias;
    Real regularization; // c, as row_regularization picks it
    Real denominator;    // d, as row_denominator forms it
    Real inverse;        // 1 / d
    Real lower, upper, friction;
    // J_i . Y_(i-1) where this row and the one before are single rows (not cone pairs), else 0:
    // the change the previous row's step makes to this row's rate, which lets the sweep start
    // this row's dot product before that step reaches v (row_kernels.inc, "one row behind").
    Real coupling;
};

// SweepRow::coupling of row i: the dense path's A_i,i-1 (dense_entry, the same bits).
template <class Real> inline Real previous_row_coupling(const WorldRows<Real>& rows, uint32_t i) {
    const bool single = rows.kind[i] != STEEL_ROW_FRICTION_CONE;
    const bool previous_single = i > 0 && rows.kind[i - 1] != STEEL_ROW_FRICTION_CONE;
    return single && previous_single ? dense_entry(rows, i, i - 1) : Real(0);
}

template <class Real>
inline SweepRow<Real> sweep_row(const WorldRows<Real>& rows, uint32_t i,
                                const SolveParams<Real>& params) {
    SweepRow<Real> row;
    row.value_offset = rows.value_offset[i];
    row.block_offset[0] = rows.block_offset[2 * i];
    row.block_offset[1] = rows.block_offset[2 * i + 1];
    row.block_length[0] = rows.block_length[2 * i];
    row.block_length[1] = rows.block_length[2 * i + 1];
    row.kind = rows.kind[i];
    row.normal_row = rows.normal_row[i];
    row.bias = rows.bias[i];
    row.regularization = row_regularization(rows, i, params);
    row.denominator = row_denominator(rows.jy[i], row.regularization, params.cfm);
    row.inverse = Real(1) / row.denominator;
    row.lower = rows.lower[i];
    row.upper = rows.upper[i];
    row.friction = rows.friction[i];
    row.coupling = 0; // general_sweep_row sets it
    return row;
}

// The same with its coupling, which the general sweep reads and the dense sweep does not.
template <class Real>
inline SweepRow<Real> general_sweep_row(const WorldRows<Real>& rows, uint32_t i,
                                        const SolveParams<Real>& params) {
    SweepRow<Real> row = sweep_row(rows, i, params);
    row.coupling = previous_row_coupling(rows, i);
    return row;
}

// out[i] = sweep_row(rows, i, params) for every row of the world, for the dense sweep.
template <class Real>
inline void prepare_sweep_rows(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                               SweepRow<Real>* out) {
    for (uint32_t i = 0; i < rows.row_count; ++i)
        out[i] = sweep_row(rows, i, params);
}

// out[i] = general_sweep_row(rows, i, params) for every row of the world.
template <class Real>
inline void prepare_general_sweep_rows(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                                       SweepRow<Real>* out) {
    for (uint32_t i = 0; i < rows.row_count; ++i)
        out[i] = general_sweep_row(rows, i, params);
}

} // namespace steel
