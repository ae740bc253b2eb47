// A RowSet mirrored on the device (same arrays, same layout: row_set.hpp was made flat for
// this), and the view kernels take by value. device_world_rows() is world_rows() for device
// pointers, so the shared row-update code reads a world the same way on both sides.
#pragma once

#include "../row_set.hpp"
#include "../world_rows.hpp"
#include "device_buffer.cuh"

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

template <class Real> struct DeviceRows {
    uint32_t world_count = 0, total_dofs = 0, total_rows = 0;
    uint32_t max_dofs = 0, max_rows = 0; // over worlds: sizes the kernels' shared memory
    DeviceBuffer<uint32_t> world_dof_offset, world_row_offset, block_offset, block_length;
    DeviceBuffer<uint64_t> value_offset;
    DeviceBuffer<Real> unconstrained_velocity, jacobian, response, bias, lower, upper, friction,
        regularization, initial_impulse, jy, cone_cross_01, cone_cross_10;
    DeviceBuffer<int32_t> kind, normal_row;

    void upload(const RowSet<Real>& set, cudaStream_t stream) {
        world_count = set.world_count;
        total_dofs = set.total_dofs();
        total_rows = set.total_rows();
        max_dofs = max_rows = 0;
        for (uint32_t w = 0; w < world_count; ++w) {
            if (set.dof_count(w) > max_dofs) max_dofs = set.dof_count(w);
            if (set.row_count(w) > max_rows) max_rows = set.row_count(w);
        }
        world_dof_offset.upload(set.world_dof_offset, stream);
        world_row_offset.upload(set.world_row_offset, stream);
        block_offset.upload(set.block_offset, stream);
        block_length.upload(set.block_length, stream);
        value_offset.upload(set.value_offset, stream);
        kind.upload(set.kind, stream);
        normal_row.upload(set.normal_row, stream);
        for_each_value_array(set, [&](DeviceBuffer<Real>& device, const std::vector<Real>& host) {
            device.upload(host, stream);
        });
    }

    // The arrays steel_batch_update_values_device may change (and what follows from them),
    // copied back into the host mirror.
    void download_values(RowSet<Real>& set, cudaStream_t stream) const {
        unconstrained_velocity.download(set.unconstrained_velocity, stream);
        jacobian.download(set.jacobian, stream);
        response.download(set.response, stream);
        bias.download(set.bias, stream);
        initial_impulse.download(set.initial_impulse, stream);
        jy.download(set.jy, stream);
        cone_cross_01.download(set.cone_cross_01, stream);
        cone_cross_10.download(set.cone_cross_10, stream);
    }

    RowsView<Real> view() const {
        return {world_count,
                world_dof_offset.data(),
                world_row_offset.data(),
                unconstrained_velocity.data(),
                block_offset.data(),
                block_length.data(),
                value_offset.data(),
                jacobian.data(),
                response.data(),
                bias.data(),
                kind.data(),
                lower.data(),
                upper.data(),
                normal_row.data(),
                friction.data(),
                regularization.data(),
                initial_impulse.data(),
                jy.data(),
                cone_cross_01.data(),
                cone_cross_10.data()};
    }

  private:
    template <class Set, class Visit> void for_each_value_array(Set& set, Visit&& visit) {
        visit(unconstrained_velocity, set.unconstrained_velocity);
        visit(jacobian, set.jacobian);
        visit(response, set.response);
        visit(bias, set.bias);
        visit(lower, set.lower);
        visit(upper, set.upper);
        visit(friction, set.friction);
        visit(regularization, set.regularization);
        visit(initial_impulse, set.initial_impulse);
        visit(jy, set.jy);
        visit(cone_cross_01, set.cone_cross_01);
        visit(cone_cross_10, set.cone_cross_10);
    }
};

// world_rows() (world_rows.hpp) over device pointers.
template <class Real>
__device__ inline WorldRows<Real> device_world_rows(const RowsView<Real>& set, uint32_t world) {
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
