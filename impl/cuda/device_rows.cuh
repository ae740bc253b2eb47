// A RowSet mirrored on the device (same arrays, same layout: row_set.hpp was made flat for
// this). Kernels see it through a RowsView (rows_view.cuh).
#pragma once

#include "device_buffer.cuh"
#include "rows_view.cuh"

#include <cstdint>

namespace steel::cuda {

template <class Real> struct DeviceRows {
    uint32_t world_count = 0, total_dofs = 0, total_rows = 0;
    RowsShape shape;
    DeviceBuffer<uint32_t> world_dof_offset, world_row_offset, block_offset, block_length;
    DeviceBuffer<uint64_t> value_offset;
    DeviceBuffer<Real> unconstrained_velocity, jacobian, response, bias, lower, upper, friction,
        regularization, initial_impulse, jy, cone_cross_01, cone_cross_10;
    DeviceBuffer<int32_t> kind, normal_row;

    // Names every array with the host array it mirrors, for upload_all_or_nothing.
    template <class Pass> void fill(const RowSet<Real>& set, Pass& pass) {
        pass(world_dof_offset, set.world_dof_offset);
        pass(world_row_offset, set.world_row_offset);
        pass(block_offset, set.block_offset);
        pass(block_length, set.block_length);
        pass(value_offset, set.value_offset);
        pass(kind, set.kind);
        pass(normal_row, set.normal_row);
        for_each_value_array(set, [&](DeviceBuffer<Real>& device, const std::vector<Real>& host) {
            pass(device, host);
        });
    }

    // The counts and shape that go with the arrays fill copies.
    void take_shape(const RowSet<Real>& set) {
        world_count = set.world_count;
        total_dofs = set.total_dofs();
        total_rows = set.total_rows();
        shape = rows_shape(set);
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

    RowsView<Real> view() const { return rows_view_of<Real>(*this, world_count); }

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

} // namespace steel::cuda
