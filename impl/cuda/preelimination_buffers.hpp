// Room on the device for bilateral pre-elimination (preelimination_world.hpp): one
// PreeliminationSpace per world, carved out of batch-wide arrays. Row arrays sit at the world's
// row offset, DOF arrays at its DOF offset, and the c x n (J', Y') and b x m (S) arrays at prefix
// sums of those sizes (preelimination_room: none for a world without bilateral rows). The arrays
// are any container with resize() and data() (DeviceBuffer on the device, std::vector in the host
// emulation), so both sides lay them out by this code.
#pragma once

#include "../preelimination_world.hpp"
#include "../row_set.hpp"
#include "rows_view.cuh"

#include <cstdint>
#include <vector>

namespace steel::cuda {

// The batch's arrays as kernels see them.
template <class Real> struct PreeliminationBuffers {
    PreeliminationSpace<Real> base;   // every array at its start
    const uint64_t* world_value_base; // [world_count + 1]: prefix sums of c n
    const uint64_t* world_schur_base; // [world_count + 1]: prefix sums of b m
};

// World w's space.
template <class Real>
STEEL_HOST_DEVICE inline PreeliminationSpace<Real>
world_space(const PreeliminationBuffers<Real>& buffers, const RowsView<Real>& set, uint32_t w) {
    const size_t r = set.world_row_offset[w], d = set.world_dof_offset[w];
    const uint64_t values = buffers.world_value_base[w], schur = buffers.world_schur_base[w];
    PreeliminationSpace<Real> s = buffers.base;
    s.block_offset += 2 * r;
    s.block_length += 2 * r;
    s.value_offset += r + w; // m + 1 each
    s.jacobian += values;
    s.response += values;
    s.unconstrained_velocity += d;
    s.bias += r;
    s.lower += r;
    s.upper += r;
    s.friction += r;
    s.regularization += r;
    s.initial_impulse += r;
    s.jy += r;
    s.cross_01 += r;
    s.cross_10 += r;
    s.solved += r;
    s.kept_impulse += r;
    s.kind += r;
    s.normal_row += r;
    s.kept_rows += r;
    s.bilateral_rows += r;
    s.kept_index += r;
    s.schur += schur;
    return s;
}

// The prefix sums of a batch's world sizes.
struct PreeliminationLayout {
    std::vector<uint64_t> world_value_base, world_schur_base;
    uint64_t total_rows = 0, total_dofs = 0, world_count = 0;
};

template <class Real> PreeliminationLayout preelimination_layout(const RowSet<Real>& rows) {
    PreeliminationLayout layout;
    layout.world_count = rows.world_count;
    layout.total_rows = rows.total_rows();
    layout.total_dofs = rows.total_dofs();
    layout.world_value_base.assign(1, 0);
    layout.world_schur_base.assign(1, 0);
    for (uint32_t w = 0; w < rows.world_count; ++w) {
        const uint32_t b = bilateral_row_count(world_rows(rows, w));
        const PreeliminationRoom room =
            preelimination_room(rows.row_count(w), b, rows.dof_count(w));
        layout.world_value_base.push_back(layout.world_value_base.back() + room.kept_values);
        layout.world_schur_base.push_back(layout.world_schur_base.back() + room.schur);
    }
    return layout;
}

// The batch's arrays, in containers of type Array<T>.
template <class Real, template <class> class Array> struct PreeliminationArrays {
    Array<uint32_t> block_offset, block_length, kept_rows, bilateral_rows, kept_index;
    Array<uint64_t> value_offset;
    Array<Real> jacobian, response, unconstrained_velocity, bias, lower, upper, friction,
        regularization, initial_impulse, jy, cross_01, cross_10, solved, kept_impulse, schur;
    Array<int32_t> kind, normal_row;

    // Sizes every array for the layout (the world bases are the caller's to place).
    void resize(const PreeliminationLayout& layout) {
        size_each(layout, [](auto& array, uint64_t count) { array.resize(count); });
    }

    // Calls size(array, count) with every array's size for the layout.
    template <class Size> void size_each(const PreeliminationLayout& layout, Size&& size) {
        const uint64_t rows = layout.total_rows, dofs = layout.total_dofs;
        for (Array<uint32_t>* a : {&kept_rows, &bilateral_rows, &kept_index})
            size(*a, rows);
        size(block_offset, 2 * rows);
        size(block_length, 2 * rows);
        size(value_offset, rows + layout.world_count);
        size(jacobian, layout.world_value_base.back());
        size(response, layout.world_value_base.back());
        size(unconstrained_velocity, dofs);
        for (Array<Real>* a : {&bias, &lower, &upper, &friction, &regularization, &initial_impulse,
                               &jy, &cross_01, &cross_10, &solved, &kept_impulse})
            size(*a, rows);
        size(schur, layout.world_schur_base.back());
        size(kind, rows);
        size(normal_row, rows);
    }

    PreeliminationBuffers<Real> view(const uint64_t* world_value_base,
                                     const uint64_t* world_schur_base) {
        const auto at = [](auto& array) { return array.data(); };
        return {{at(block_offset),
                 at(block_length),
                 at(value_offset),
                 at(jacobian),
                 at(response),
                 at(unconstrained_velocity),
                 at(bias),
                 at(lower),
                 at(upper),
                 at(friction),
                 at(regularization),
                 at(initial_impulse),
                 at(jy),
                 at(cross_01),
                 at(cross_10),
                 at(kind),
                 at(normal_row),
                 at(kept_rows),
                 at(bilateral_rows),
                 at(kept_index),
                 at(schur),
                 at(solved),
                 at(kept_impulse)},
                world_value_base,
                world_schur_base};
    }
};

} // namespace steel::cuda
