// What the propagation response (SPEC 7) solves with, built from a scene upload: every
// articulation of two or more bodies (a "tree") as its articulated-body factorization, and every
// row as terms at the bodies it touches (a spatial force, 6 values) or at joint coordinates,
// plus the uploaded J/Y blocks for the trivial case, articulations of one body (free bodies),
// where the block over the body's own DOFs already is its 6x6 response applied to J.
//
// Flat arrays with per-world offsets like RowSet: body indices are batch-global, DOFs are
// batch-global in the per-DOF arrays (world_dof_offset of the RowSet) and world-local in terms.
#pragma once

#include <cstdint>
#include <vector>

namespace steel::propagation {

// Every spatial quantity of a tree (its S and U, its bodies' responses, the forces of its body
// terms) is taken about that tree's own reference point (its root joint's origin,
// propagation_build.cpp), not the world origin, so that it stays of the size of the tree.
template <class Real> struct PropagationSet {
    uint32_t world_count = 0;
    std::vector<uint32_t>
        world_body_offset;  // [world_count + 1] into the per-body arrays (trees only)
    uint32_t max_depth = 0; // longest root-to-body path of any tree

    // Per tree body, parents before children, each tree contiguous.
    std::vector<int32_t> parent;            // global tree body, -1: the world
    std::vector<int32_t> root;              // global tree body: the root of the body's tree
    std::vector<uint32_t> dof_first;        // world-local first DOF of the body's joint
    std::vector<uint32_t> dof_count;        // DOFs of the body's joint (0 for fixed)
    std::vector<uint32_t> d_inverse_offset; // [bodies + 1] into d_inverse
    std::vector<Real> d_inverse;            // D_i^-1 per body (articulated_body.hpp)
    // The 6x6 response of each body that a body term touches: the inverse of its apparent
    // (operational-space) inertia, J_b H~^-1 J_b^T; zero for bodies no term touches.
    std::vector<Real> body_response; // [36 * bodies], row-major

    // Per batch DOF (RowSet indexing); zeros for DOFs of one-body articulations.
    std::vector<Real> subspace;    // [6 * total_dofs] S
    std::vector<Real> transmitted; // [6 * total_dofs] U = I^A S
    std::vector<int32_t> dof_body; // [total_dofs] global tree body owning the DOF, -1 if none

    // Per batch row.
    std::vector<uint32_t> row_term_offset; // [total_rows + 1] into the term arrays
    std::vector<uint8_t> immediate_blocks; // bit k: solve the row's block k with its uploaded J/Y
    std::vector<Real> denominator;         // J H~^-1 J^T from the structures above (replaces J.Y)

    // Per term: a force at a tree body (term_body >= 0) or one joint-space entry (term_body -1).
    std::vector<int32_t> term_body;
    std::vector<uint32_t> term_dof; // world-local DOF of a joint-space entry
    std::vector<Real> term_value;   // [6 * terms]: the force, or the entry in value 0

    // Empties every array, keeping its memory.
    void clear() {
        world_count = 0;
        max_depth = 0;
        for (auto* array : {&world_body_offset, &dof_first, &dof_count, &d_inverse_offset,
                            &row_term_offset, &term_dof})
            array->clear();
        for (auto* array :
             {&d_inverse, &body_response, &subspace, &transmitted, &denominator, &term_value})
            array->clear();
        for (auto* array : {&parent, &root, &dof_body, &term_body})
            array->clear();
        immediate_blocks.clear();
    }
};

} // namespace steel::propagation
