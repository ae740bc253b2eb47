// Structure-of-arrays storage of a batch's constraint rows, one template per precision.
//
// Everything is flat: per-world prefix offsets into per-DOF and per-row arrays, and per-row
// offsets into the packed J and Y values. No per-row objects, no pointers between rows, so
// the same arrays can be copied to a GPU as they are and a world is a contiguous slice.
#pragma once

#include <cstdint>
#include <vector>

namespace steel {

template <class Real> struct RowSet {
    uint32_t world_count = 0;
    std::vector<uint32_t> world_dof_offset; // [world_count + 1], prefix sums of n
    std::vector<uint32_t> world_row_offset; // [world_count + 1], prefix sums of m

    std::vector<Real> unconstrained_velocity; // [total_dofs] v-hat

    // Row r's block k covers world-local DOFs [block_offset[2r+k], +block_length[2r+k]).
    std::vector<uint32_t> block_offset; // [2 * total_rows]
    std::vector<uint32_t> block_length; // [2 * total_rows]
    std::vector<uint64_t> value_offset; // [total_rows + 1] into jacobian / response
    std::vector<Real> jacobian;         // J values, block 0 then block 1, row after row
    std::vector<Real> response;         // Y = H^-1 J^T values, same layout

    std::vector<Real> bias;            // b
    std::vector<int32_t> kind;         // STEEL_ROW_*
    std::vector<Real> lower;           // BOUNDED rows
    std::vector<Real> upper;           // BOUNDED rows
    std::vector<int32_t> normal_row;   // FRICTION_BOX rows: world-local index of the normal row
    std::vector<Real> friction;        // FRICTION_BOX rows: mu
    std::vector<Real> regularization;  // c (0 = unregularized)
    std::vector<Real> initial_impulse; // warm start
    std::vector<Real> jy;              // J.Y per row, computed once per upload
    // For the first row i of a FRICTION_CONE pair: the off-diagonal entries of the pair's 2x2
    // block of A, J_i.Y_{i+1} and J_{i+1}.Y_i (0 elsewhere). Computed once per upload.
    std::vector<Real> cone_cross_01;
    std::vector<Real> cone_cross_10;

    uint32_t total_dofs() const { return world_dof_offset.empty() ? 0 : world_dof_offset.back(); }
    uint32_t total_rows() const { return world_row_offset.empty() ? 0 : world_row_offset.back(); }
    uint32_t dof_count(uint32_t world) const {
        return world_dof_offset[world + 1] - world_dof_offset[world];
    }
    uint32_t row_count(uint32_t world) const {
        return world_row_offset[world + 1] - world_row_offset[world];
    }
};

// Results of the last solve, same precision and layout as the rows.
template <class Real> struct SolveResults {
    std::vector<Real> impulse;  // [total_rows]
    std::vector<Real> velocity; // [total_dofs]
};

} // namespace steel
