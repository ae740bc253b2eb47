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
    int32_t kind; // STEEL_ROW_*; of a FRICTION_CONE row the sweep reads only the fields above
                  // and the couplings
    int32_t normal_row;
    Real bias;
    Real regularization; // c, as row_regularization picks it
    Real denominator;    // d, as row_denominator forms it
    Real inverse;        // 1 / d
    Real lower, upper, friction;
    // J_i . Y_g for the rows g of the group whose steps the sweep holds for this row's group (a
    // group is a single row, or a cone pair updated together; held_group_before):
    // coupling[0] for its first row, coupling[1] for its second (0 after a single row), both 0
    // where no step is held. The change those steps make to this row's rate, which lets the
    // sweep start this row's dot product before they reach v (row_kernels.inc, "one group
    // behind"). Both rows of a pair take the couplings to the group held for the pair.
    Real coupling[2];
};

// Rows the sweep updates together: `count` rows from `first` (1: a single row, 2: a cone pair;
// 0: none).
struct RowGroup {
    uint32_t first = 0, count = 0;
};

// The group whose steps the serial sweep holds for the group that starts at row i
// (row_kernels.inc): the group just before, except that a cone pair's steps are held for a single
// row only (before another pair they go into v at once), and none before row 0. A CONE row just
// before a group is the second row of its pair: pairs are consecutive, and row i starts a group.
template <class Real> inline RowGroup held_group_before(const WorldRows<Real>& rows, uint32_t i) {
    if (i == 0) return RowGroup{};
    if (rows.kind[i - 1] != STEEL_ROW_FRICTION_CONE) return RowGroup{i - 1, 1};
    return rows.kind[i] == STEEL_ROW_FRICTION_CONE ? RowGroup{} : RowGroup{i - 2, 2};
}

// SweepRow::coupling of row i, whose group the sweep updates after `previous`'s steps are held:
// the dense path's A_i,g (dense_entry, the same bits).
template <class Real>
inline void held_group_coupling(const WorldRows<Real>& rows, uint32_t i, RowGroup previous,
                                Real coupling[2]) {
    for (uint32_t k = 0; k < 2; ++k)
        coupling[k] = k < previous.count ? dense_entry(rows, i, previous.first + k) : Real(0);
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
    row.coupling[0] = row.coupling[1] = 0; // general_sweep_row sets them
    return row;
}

// The same with its couplings to the group before, which the general sweep reads and the dense
// sweep does not.
template <class Real>
inline SweepRow<Real> general_sweep_row(const WorldRows<Real>& rows, uint32_t i,
                                        const SolveParams<Real>& params, RowGroup previous) {
    SweepRow<Real> row = sweep_row(rows, i, params);
    held_group_coupling(rows, i, previous, row.coupling);
    return row;
}

// out[i] = sweep_row(rows, i, params) for every row of the world, for the dense sweep.
template <class Real>
inline void prepare_sweep_rows(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                               SweepRow<Real>* out) {
    for (uint32_t i = 0; i < rows.row_count; ++i)
        out[i] = sweep_row(rows, i, params);
}

// out[i] = general_sweep_row(rows, i, params, held_group_before(the start of row i's group)) for
// every row of the world.
template <class Real>
inline void prepare_general_sweep_rows(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                                       SweepRow<Real>* out) {
    for (uint32_t i = 0; i < rows.row_count;) {
        const RowGroup held = held_group_before(rows, i);
        const uint32_t count = rows.kind[i] == STEEL_ROW_FRICTION_CONE ? 2 : 1;
        for (uint32_t k = 0; k < count; ++k)
            out[i + k] = general_sweep_row(rows, i + k, params, held);
        i += count;
    }
}

} // namespace steel
