// A row under the propagation response: its velocity error and its impulse, over the blocks it
// keeps from the upload (one-body articulations: J and Y over the body's own DOFs) and over its
// terms at tree bodies and joints (walked through the tree, tree_walk.hpp).
#pragma once

#include "../world_rows.hpp"
#include "tree_walk.hpp"

namespace steel::propagation {

template <class Real> struct PropagationWorld {
    WorldRows<Real> rows; // the uploaded rows, with jy pointing at the propagation denominators
    uint32_t row0;        // the world's first global row
    TreeWalk<Real> walk;
};

// J_i . v of the row now.
template <class Real> STEEL_HOST_DEVICE Real row_rate(PropagationWorld<Real>& world, uint32_t i) {
    const PropagationView<Real>& set = world.walk.set;
    const WorldRows<Real>& rows = world.rows;
    const uint32_t global = world.row0 + i;
    const uint8_t immediate = set.immediate_blocks[global];
    const Real* value = rows.jacobian + rows.value_offset[i];
    Real sum = kSumStart<Real>;
    for (uint32_t block = 0; block < 2; ++block) {
        const uint32_t length = rows.block_length[2 * i + block];
        if (immediate & (1u << block)) {
            const Real* x = world.walk.velocity + rows.block_offset[2 * i + block];
            if (length == 6) { // a free body: summed as the colored packs sum it (sum6.hpp)
                sum += dot6(value, x);
            } else {
                for (uint32_t k = 0; k < length; ++k)
                    sum += value[k] * x[k];
            }
        }
        value += length;
    }
    for (uint32_t t = set.row_term_offset[global]; t < set.row_term_offset[global + 1]; ++t) {
        const Real* term = set.term_value + 6 * size_t(t);
        if (set.term_body[t] >= 0) {
            Real velocity[6];
            world.walk.body_velocity(set.term_body[t], velocity);
            sum += dot6(term, velocity);
        } else {
            sum += term[0] * world.walk.joint_rate(set.term_dof[t]);
        }
    }
    return sum;
}

// Applies the impulse change `step` of row i: v += Y step over its kept blocks, and the row's
// forces and joint impulses times step into the trees.
template <class Real>
STEEL_HOST_DEVICE void row_apply(PropagationWorld<Real>& world, uint32_t i, Real step) {
    const PropagationView<Real>& set = world.walk.set;
    const WorldRows<Real>& rows = world.rows;
    const uint32_t global = world.row0 + i;
    const uint8_t immediate = set.immediate_blocks[global];
    const Real* value = rows.response + rows.value_offset[i];
    for (uint32_t block = 0; block < 2; ++block) {
        const uint32_t length = rows.block_length[2 * i + block];
        if (immediate & (1u << block)) {
            Real* x = world.walk.velocity + rows.block_offset[2 * i + block];
            for (uint32_t k = 0; k < length; ++k)
                x[k] += step * value[k];
        }
        value += length;
    }
    for (uint32_t t = set.row_term_offset[global]; t < set.row_term_offset[global + 1]; ++t) {
        const Real* term = set.term_value + 6 * size_t(t);
        if (set.term_body[t] >= 0)
            world.walk.apply_body_impulse(set.term_body[t], term, step);
        else
            world.walk.apply_joint_impulse(set.term_dof[t], term[0] * step);
    }
}

} // namespace steel::propagation
