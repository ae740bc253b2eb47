// One entry A_ij = J_i . Y_j of a world's Delassus matrix, computed without a scratch vector.
//
// build_dense_problem (dense_path.hpp) scatters Y_j into a zeroed DOF vector and dots J_i with
// it: a sum over J_i's values in order, where every DOF that Y_j does not touch contributes
// J * 0 = 0. This does exactly that sum (same terms, same order, the zeros included), looking
// Y_j's value up by DOF instead, so a GPU lane can compute any entry on its own and still get
// the CPU's bits (the device build does not contract into FMA). tests/test_cuda_kernels.cpp holds
// it to that. The CPU uses it too where a lane must: the upload's cone cross terms
// (rows_upload.cpp) and the pre-elimination build's S and S^-1 J_B Y_j (preelimination_world.hpp).
#pragma once

#include "host_device.hpp"
#include "world_rows.hpp"

#include <cstdint>

namespace steel {

template <class Real>
STEEL_HOST_DEVICE inline Real dense_entry(const WorldRows<Real>& rows, uint32_t i, uint32_t j) {
    const Real* jacobian = rows.jacobian + rows.value_offset[i];
    const Real* response = rows.response + rows.value_offset[j];
    const uint32_t y_offset0 = rows.block_offset[2 * j], y_length0 = rows.block_length[2 * j];
    const uint32_t y_offset1 = rows.block_offset[2 * j + 1],
                   y_length1 = rows.block_length[2 * j + 1];
    Real sum = 0;
    for (int block = 0; block < 2; ++block) {
        const uint32_t offset = rows.block_offset[2 * i + block],
                       length = rows.block_length[2 * i + block];
        for (uint32_t k = 0; k < length; ++k) {
            const uint32_t dof = offset + k;
            Real y = 0;
            // Unsigned wrap-around makes each test one comparison: dof - start < length.
            if (dof - y_offset0 < y_length0)
                y = response[dof - y_offset0];
            else if (dof - y_offset1 < y_length1)
                y = response[y_length0 + (dof - y_offset1)];
            sum += jacobian[k] * y;
        }
        jacobian += length;
    }
    return sum;
}

} // namespace steel
