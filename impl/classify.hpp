// Classification (SPEC section 3): before each solve every world is assigned, from its live
// row and DOF counts, to the small-world dense path or the general sweep.
#pragma once

#include "host_device.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel {

// When AUTO takes the dense path. Building A costs about 2 m^2 L flops (m rows of L values each,
// every A_ij a dot product of L terms summed in order); after that a dense row update costs about
// 2m flops instead of the general sweep's 4L + 8. So the dense path can only win while m is
// small next to L.
//
// bench/bench_sweep measured where it stops paying off (bench/RESULTS.md, "The threshold again, for
// the SIMD sweep": one thread, CPU time, float32 and float64, L = 6 to 64, m = 4 to 256, 2-core AMD
// EPYC VM). Since the general sweep runs on SIMD registers and the dense path's A is still built
// from scalar dot products, dense wins only at the smallest worlds, at 20 sweeps per solve and at
// the default 50 alike. Its speed over the general sweep's at m = 4 was 0.77 to 1.39 (dense faster
// in 15 of the 32 cells of L, precision and sweep count), at m = 8 0.65 to 1.20 (4 of 32), at
// m = 16 0.47 to 0.96 (none), and at m = 24, L = 64, the old rule's largest dense world, 0.52 to
// 0.72. Hence at most 4 rows, and m <= 0.4 L (5m <= 2L) as before, which keeps m = 4 worlds of
// short rows (dense 0.77 to 1.39 there too) on the general sweep. The same rule classifies on the
// GPU, where it has not been measured.
constexpr uint32_t kDenseAutoMaxRows = 4;

STEEL_HOST_DEVICE inline int32_t classify_world(int32_t requested_path, uint32_t row_count,
                                                uint64_t value_count) {
    if (row_count == 0) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_GENERAL) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_DENSE)
        return row_count <= STEEL_DENSE_MAX_ROWS ? STEEL_PATH_DENSE : STEEL_PATH_GENERAL;
    // AUTO: dense when m <= kDenseAutoMaxRows and m <= 0.4 L (5m <= 2L).
    const uint64_t values_per_row = value_count / row_count;
    return row_count <= kDenseAutoMaxRows && 5 * uint64_t(row_count) <= 2 * values_per_row
               ? STEEL_PATH_DENSE
               : STEEL_PATH_GENERAL;
}

} // namespace steel
