// Element-wise kernels for device-pointer interop: rounding a caller's float64 arrays into the
// batch's precision, widening results back to float64, and recomputing what a values update
// changes (J.Y per row, the cone pairs' cross terms) with the upload's own arithmetic.
#pragma once

#include "../dense_entry.hpp"
#include "rows_view.cuh"

#include <steel/steel.h>

#include <cstdint>

namespace steel::cuda {

template <class To, class From>
__global__ void convert_kernel(const From* in, To* out, uint64_t count) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t k = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride)
        out[k] = To(in[k]);
}

// J.Y of every row, summed in value order like build_row_set (rows_upload.cpp).
template <class Real> __global__ void row_jy_kernel(RowsView<Real> set, uint32_t total_rows) {
    const uint32_t row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= total_rows) return;
    Real sum = 0;
    for (uint64_t v = set.value_offset[row]; v < set.value_offset[row + 1]; ++v)
        sum += set.jacobian[v] * set.response[v];
    set.jy[row] = sum;
}

// The cone pairs' off-diagonal terms, one thread per world walking its rows in order (pairs
// are found by walking, as compute_cone_cross_terms does).
template <class Real> __global__ void cone_cross_kernel(RowsView<Real> set) {
    const uint32_t world = blockIdx.x * blockDim.x + threadIdx.x;
    if (world >= set.world_count) return;
    const WorldRows<Real> rows = device_world_rows(set, world);
    const uint32_t row0 = set.world_row_offset[world];
    for (uint32_t i = 0; i + 1 < rows.row_count; ++i)
        if (rows.kind[i] == STEEL_ROW_FRICTION_CONE) {
            set.cone_cross_01[row0 + i] = dense_entry(rows, i, i + 1);
            set.cone_cross_10[row0 + i] = dense_entry(rows, i + 1, i);
            ++i;
        }
}

} // namespace steel::cuda
