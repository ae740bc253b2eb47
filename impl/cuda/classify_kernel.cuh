// Classification on the device (SPEC 3): every solve, one thread per world applies the CPU's
// rule (classify.hpp) to the world's live row and value counts. The dense kernel keeps the
// whole problem in shared memory, so a world the rule sends there but that does not fit it
// (a forced DENSE path with many rows) runs the general sweep instead and reports so.
#pragma once

#include "../classify.hpp"
#include "rows_view.cuh"
#include "warp_rows.cuh"

namespace steel::cuda {

// Marks a world whose bilateral rows are eliminated first (preelimination_kernel.cuh); the
// general and dense kernels pass it by, and the pre-elimination kernel writes its real path.
constexpr int32_t kPathPreeliminated = -1;

// The path of world w by the CPU's rule, as the device can run it.
template <class Real>
STEEL_HOST_DEVICE inline int32_t device_world_path(const RowsView<Real>& set,
                                                   const DeviceSolve<Real>& solve, uint32_t w) {
    const uint32_t row0 = set.world_row_offset[w], row_end = set.world_row_offset[w + 1];
    const uint32_t m = row_end - row0;
    const uint64_t values = set.value_offset[row_end] - set.value_offset[row0];
    int32_t path =
        classify_world(solve.requested_path, m, values, precision_of<Real>,
                       classified_sweeps(solve.settings.iterations, solve.settings.tolerance));
    if (path == STEEL_PATH_DENSE && m > solve.dense_max_rows) path = STEEL_PATH_GENERAL;
    return path;
}

template <class Real>
__global__ void classify_worlds_kernel(RowsView<Real> set, DeviceSolve<Real> solve) {
    const uint32_t world = blockIdx.x * blockDim.x + threadIdx.x;
    if (world >= set.world_count) return;
    int32_t path = device_world_path(set, solve, world);
    if (solve.preeliminate) {
        const uint32_t row0 = set.world_row_offset[world],
                       row_end = set.world_row_offset[world + 1];
        for (uint32_t i = row0; i < row_end; ++i)
            if (set.kind[i] == STEEL_ROW_BILATERAL) path = kPathPreeliminated;
    }
    solve.world_path[world] = path;
}

} // namespace steel::cuda
