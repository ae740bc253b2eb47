// A read-only view of one world's rows: plain pointers into a RowSet, with row indices local
// to the world. Kernels (CPU or GPU) take this view, never the RowSet itself.
#pragma once

#include "host_device.hpp"
#include "row_set.hpp"

#include <cstddef>
#include <cstdint>

namespace steel {

template <class Real> struct WorldRows {
    uint32_t dof_count;
    uint32_t row_count;
    const Real* unconstrained_velocity; // [dof_count]
    const uint32_t* block_offset;       // [2 * row_count]
    const uint32_t* block_length;       // [2 * row_count]
    const uint64_t* value_offset;       // [row_count + 1], absolute into jacobian / response
    const Real* jacobian;
    const Real* response;
    const Real* bias;
    const int32_t* kind;
    const Real* lower;
    const Real* upper;
    const int32_t* normal_row;
    const Real* friction;
    const Real* regularization;
    const Real* initial_impulse;
    const Real* jy;
    const Real* cone_cross_01;
    const Real* cone_cross_10;
};

template <class Real> WorldRows<Real> world_rows(const RowSet<Real>& set, uint32_t world) {
    const uint32_t dof0 = set.world_dof_offset[world];
    const uint32_t row0 = set.world_row_offset[world];
    WorldRows<Real> rows;
    rows.dof_count = set.dof_count(world);
    rows.row_count = set.row_count(world);
    rows.unconstrained_velocity = set.unconstrained_velocity.data() + dof0;
    rows.block_offset = set.block_offset.data() + 2 * size_t(row0);
    rows.block_length = set.block_length.data() + 2 * size_t(row0);
    rows.value_offset = set.value_offset.data() + row0;
    rows.jacobian = set.jacobian.data();
    rows.response = set.response.data();
    rows.bias = set.bias.data() + row0;
    rows.kind = set.kind.data() + row0;
    rows.lower = set.lower.data() + row0;
    rows.upper = set.upper.data() + row0;
    rows.normal_row = set.normal_row.data() + row0;
    rows.friction = set.friction.data() + row0;
    rows.regularization = set.regularization.data() + row0;
    rows.initial_impulse = set.initial_impulse.data() + row0;
    rows.jy = set.jy.data() + row0;
    rows.cone_cross_01 = set.cone_cross_01.data() + row0;
    rows.cone_cross_10 = set.cone_cross_10.data() + row0;
    return rows;
}

// J_i . x over the row's (at most two) blocks; x is a world-local DOF vector.
template <class Real>
STEEL_HOST_DEVICE inline Real row_dot(const WorldRows<Real>& rows, uint32_t row, const Real* values,
                                      const Real* x) {
    const Real* value = values + rows.value_offset[row];
    Real sum = 0;
    for (int block = 0; block < 2; ++block) {
        const Real* xs = x + rows.block_offset[2 * row + block];
        const uint32_t length = rows.block_length[2 * row + block];
        for (uint32_t k = 0; k < length; ++k)
            sum += value[k] * xs[k];
        value += length;
    }
    return sum;
}

// x += scale * (row's values), scattered over its blocks.
template <class Real>
STEEL_HOST_DEVICE inline void row_axpy(const WorldRows<Real>& rows, uint32_t row,
                                       const Real* values, Real scale, Real* x) {
    const Real* value = values + rows.value_offset[row];
    for (int block = 0; block < 2; ++block) {
        Real* xs = x + rows.block_offset[2 * row + block];
        const uint32_t length = rows.block_length[2 * row + block];
        for (uint32_t k = 0; k < length; ++k)
            xs[k] += scale * value[k];
        value += length;
    }
}

} // namespace steel
