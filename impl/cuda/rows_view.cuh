// The rows as kernels see them: a RowSet's arrays as plain pointers, passed by value. On the
// device they point into a DeviceRows mirror; the host emulation in tests/simt/ points them at a
// host RowSet. device_world_rows() is world_rows() for such a view, so the shared row-update
// code reads a world the same way on both sides. No CUDA runtime types here.
#pragma once

#include "../row_set.hpp"
#include "../world_rows.hpp"

#include <cstdint>

namespace steel::cuda {

template <class Real> struct RowsView {
    uint32_t world_count;
    const uint32_t* world_dof_offset;
    const uint32_t* world_row_offset;
    Real* unconstrained_velocity;
    const uint32_t* block_offset;
    const uint32_t* block_length;
    const uint64_t* value_offset;
    Real* jacobian;
    Real* response;
    Real* bias;
    const int32_t* kind;
    const Real* lower;
    const Real* upper;
    const int32_t* normal_row;
    const Real* friction;
    const Real* regularization;
    Real* initial_impulse;
    Real* jy;
    Real* cone_cross_01;
    Real* cone_cross_10;
};

// The sizes of the rows that a launch depends on: the largest world sizes the kernels' shared
// memory.
struct RowsShape {
    uint32_t world_count = 0, max_dofs = 0, max_rows = 0;
};

template <class Real> RowsShape rows_shape(const RowSet<Real>& set) {
    RowsShape shape;
    shape.world_count = set.world_count;
    for (uint32_t w = 0; w < set.world_count; ++w) {
        if (set.dof_count(w) > shape.max_dofs) shape.max_dofs = set.dof_count(w);
        if (set.row_count(w) > shape.max_rows) shape.max_rows = set.row_count(w);
    }
    return shape;
}

// The view of anything that holds the RowSet's arrays under the RowSet's names (a DeviceRows
// mirror, or a host RowSet for the emulation), each with a data() pointer.
template <class Real, class Arrays>
RowsView<Real> rows_view_of(Arrays& rows, uint32_t world_count) {
    return {world_count,
            rows.world_dof_offset.data(),
            rows.world_row_offset.data(),
            rows.unconstrained_velocity.data(),
            rows.block_offset.data(),
            rows.block_length.data(),
            rows.value_offset.data(),
            rows.jacobian.data(),
            rows.response.data(),
            rows.bias.data(),
            rows.kind.data(),
            rows.lower.data(),
            rows.upper.data(),
            rows.normal_row.data(),
            rows.friction.data(),
            rows.regularization.data(),
            rows.initial_impulse.data(),
            rows.jy.data(),
            rows.cone_cross_01.data(),
            rows.cone_cross_10.data()};
}

// world_rows() (world_rows.hpp) over a view.
template <class Real>
STEEL_HOST_DEVICE inline WorldRows<Real> device_world_rows(const RowsView<Real>& set,
                                                           uint32_t world) {
    const uint32_t dof0 = set.world_dof_offset[world];
    const uint32_t row0 = set.world_row_offset[world];
    WorldRows<Real> rows;
    rows.dof_count = set.world_dof_offset[world + 1] - dof0;
    rows.row_count = set.world_row_offset[world + 1] - row0;
    rows.unconstrained_velocity = set.unconstrained_velocity + dof0;
    rows.block_offset = set.block_offset + 2 * size_t(row0);
    rows.block_length = set.block_length + 2 * size_t(row0);
    rows.value_offset = set.value_offset + row0;
    rows.jacobian = set.jacobian;
    rows.response = set.response;
    rows.bias = set.bias + row0;
    rows.kind = set.kind + row0;
    rows.lower = set.lower + row0;
    rows.upper = set.upper + row0;
    rows.normal_row = set.normal_row + row0;
    rows.friction = set.friction + row0;
    rows.regularization = set.regularization + row0;
    rows.initial_impulse = set.initial_impulse + row0;
    rows.jy = set.jy + row0;
    rows.cone_cross_01 = set.cone_cross_01 + row0;
    rows.cone_cross_10 = set.cone_cross_10 + row0;
    return rows;
}

} // namespace steel::cuda
