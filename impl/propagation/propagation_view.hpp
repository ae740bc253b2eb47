// A PropagationSet (propagation_set.hpp) as plain pointers: what the walks and the row code read,
// on the host from the set's vectors and on the device from its mirror
// (cuda/device_propagation.cuh), so that both run the same walk code (tree_walk.hpp,
// propagation_rows.hpp).
#pragma once

#include "propagation_set.hpp"

#include <cstdint>

namespace steel::propagation {

template <class Real> struct PropagationView {
    const uint32_t* world_body_offset;
    uint32_t max_depth;
    const int32_t* parent;
    const int32_t* root;
    const uint32_t* dof_first;
    const uint32_t* dof_count;
    const uint32_t* d_inverse_offset;
    const Real* d_inverse;
    const Real* body_response;
    const Real* subspace;
    const Real* transmitted;
    const int32_t* dof_body;
    const uint32_t* row_term_offset;
    const uint8_t* immediate_blocks;
    const Real* denominator;
    const int32_t* term_body;
    const uint32_t* term_dof;
    const Real* term_value;
};

// The view of a PropagationSet, or of its device mirror (same member names, each with data()).
template <class Real, class Set> PropagationView<Real> propagation_view_of(const Set& set) {
    return {set.world_body_offset.data(),
            set.max_depth,
            set.parent.data(),
            set.root.data(),
            set.dof_first.data(),
            set.dof_count.data(),
            set.d_inverse_offset.data(),
            set.d_inverse.data(),
            set.body_response.data(),
            set.subspace.data(),
            set.transmitted.data(),
            set.dof_body.data(),
            set.row_term_offset.data(),
            set.immediate_blocks.data(),
            set.denominator.data(),
            set.term_body.data(),
            set.term_dof.data(),
            set.term_value.data()};
}

} // namespace steel::propagation
