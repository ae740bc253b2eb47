// The propagation set (propagation_set.hpp) mirrored on the device for the propagation kernel
// (propagation_kernel.cuh), with the walks' scratch of every world. Built on the host by the
// first propagation solve after an upload, like the CPU's, then uploaded once.
#pragma once

#include "../propagation/propagation_view.hpp"
#include "device_buffer.cuh"
#include "propagation_kernel.cuh"

#include <algorithm>

namespace steel::cuda {

template <class Real> struct DevicePropagation {
    DeviceBuffer<uint32_t> world_body_offset, dof_first, dof_count, d_inverse_offset,
        row_term_offset, term_dof;
    DeviceBuffer<int32_t> parent, dof_body, term_body;
    DeviceBuffer<uint8_t> immediate_blocks;
    DeviceBuffer<Real> d_inverse, body_response, subspace, transmitted, denominator, term_value;
    uint32_t max_depth = 0;
    // The walks' scratch (WalkScratchView).
    DeviceBuffer<Real> bias, body_change, joint_impulse;
    DeviceBuffer<int32_t> path;

    void upload(const propagation::PropagationSet<Real>& set, uint32_t total_dofs,
                cudaStream_t stream) {
        world_body_offset.upload(set.world_body_offset, stream);
        dof_first.upload(set.dof_first, stream);
        dof_count.upload(set.dof_count, stream);
        d_inverse_offset.upload(set.d_inverse_offset, stream);
        row_term_offset.upload(set.row_term_offset, stream);
        term_dof.upload(set.term_dof, stream);
        parent.upload(set.parent, stream);
        dof_body.upload(set.dof_body, stream);
        term_body.upload(set.term_body, stream);
        immediate_blocks.upload(set.immediate_blocks, stream);
        d_inverse.upload(set.d_inverse, stream);
        body_response.upload(set.body_response, stream);
        subspace.upload(set.subspace, stream);
        transmitted.upload(set.transmitted, stream);
        denominator.upload(set.denominator, stream);
        term_value.upload(set.term_value, stream);
        max_depth = set.max_depth;
        const size_t bodies = set.parent.size();
        bias.resize(6 * bodies);
        body_change.resize(6 * bodies);
        joint_impulse.resize(total_dofs);
        path.resize(size_t(set.world_count) * kWarpSize * path_stride()); // a path per lane
    }

    uint32_t path_stride() const { return std::max(max_depth, 1u); }
    propagation::PropagationView<Real> view() const {
        return propagation::propagation_view_of<Real>(*this);
    }
    WalkScratchView<Real> scratch() const {
        return {bias.data(), body_change.data(), joint_impulse.data(), path.data(), path_stride()};
    }
};

} // namespace steel::cuda
