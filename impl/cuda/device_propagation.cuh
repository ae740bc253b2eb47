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
    DeviceBuffer<int32_t> parent, root, dof_body, term_body;
    DeviceBuffer<uint8_t> immediate_blocks;
    DeviceBuffer<Real> d_inverse, body_response, subspace, transmitted, denominator, term_value;
    uint32_t max_depth = 0;
    // The walks' scratch (WalkScratchView).
    DeviceBuffer<Real> bias, body_change, joint_impulse;
    DeviceBuffer<propagation::TreeCache<Real>> parked;
    DeviceBuffer<int32_t> path;

    // Names every array with what goes in it, for upload_all_or_nothing; max_depth is the
    // caller's to set once the arrays are sized.
    template <class Pass>
    void fill(const propagation::PropagationSet<Real>& set, uint32_t total_dofs, Pass& pass) {
        pass(world_body_offset, set.world_body_offset);
        pass(dof_first, set.dof_first);
        pass(dof_count, set.dof_count);
        pass(d_inverse_offset, set.d_inverse_offset);
        pass(row_term_offset, set.row_term_offset);
        pass(term_dof, set.term_dof);
        pass(parent, set.parent);
        pass(root, set.root);
        pass(dof_body, set.dof_body);
        pass(term_body, set.term_body);
        pass(immediate_blocks, set.immediate_blocks);
        pass(d_inverse, set.d_inverse);
        pass(body_response, set.body_response);
        pass(subspace, set.subspace);
        pass(transmitted, set.transmitted);
        pass(denominator, set.denominator);
        pass(term_value, set.term_value);
        const size_t bodies = set.parent.size();
        pass.size(bias, 6 * bodies);
        pass.size(body_change, 6 * bodies);
        pass.size(joint_impulse, total_dofs);
        pass.size(parked, bodies);
        // A path per lane.
        pass.size(path, size_t(set.world_count) * kWarpSize * std::max(set.max_depth, 1u));
    }

    uint32_t path_stride() const { return std::max(max_depth, 1u); }
    propagation::PropagationView<Real> view() const {
        return propagation::propagation_view_of<Real>(*this);
    }
    WalkScratchView<Real> scratch() const {
        return {bias.data(),   body_change.data(), joint_impulse.data(),
                parked.data(), path.data(),        path_stride()};
    }
};

} // namespace steel::cuda
