// Classification (SPEC section 3): before each solve every world is assigned, from its live
// row and DOF counts, to the small-world dense path or the general sweep.
#pragma once

#include "host_device.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel {

// When AUTO takes the dense path. Building A costs about 2 m^2 L flops (m rows of L values each,
// every A_ij a dot product of L terms summed in order); after that a dense row update costs about
// 2m flops instead of the general sweep's 4L + 8. So the dense path wins while m is small next to
// L, and by less the fewer sweeps a solve runs.
//
// bench/bench_sweep measured where it stops paying off (bench/RESULTS.md: 20 sweeps per solve,
// one thread, CPU time, float32 and float64, L = 6 to 64, on a 2-core AMD EPYC (Zen 5) VM). The
// largest m at which dense still won, over two runs, was 5 or less for L <= 16, 7-11 at L = 24,
// 14-17 at L = 32, 17-32 at L = 48 and 21-32 at L = 64 (float32 lower, float64 higher). The rule
// m <= 0.4 L (5m <= 2L) follows that. For L >= 24 it stays within 3 rows of the float32
// crossovers and below the float64 ones. For L <= 16 it allows up to 3 rows more than measured,
// where the two paths were within about 10% of each other. The cap of 24 rows is the float32
// crossover at L = 64. Longer rows were not measured, and the crossover should flatten out there
// (A's cost grows as m^2 L, the saving per sweep only as m L). More sweeps move the crossover up
// (50 sweeps: 41 to 59 rows at L = 64). Classification does not see the sweep count; this rule
// comes from the 20-sweep measurement.
constexpr uint32_t kDenseAutoMaxRows = 24;

STEEL_HOST_DEVICE inline int32_t classify_world(int32_t requested_path, uint32_t row_count, uint64_t value_count) {
    if (row_count == 0) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_GENERAL) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_DENSE)
        return row_count <= STEEL_DENSE_MAX_ROWS ? STEEL_PATH_DENSE : STEEL_PATH_GENERAL;
    // AUTO: dense when m <= 0.4 L (5m <= 2L) and m <= kDenseAutoMaxRows.
    const uint64_t values_per_row = value_count / row_count;
    return row_count <= kDenseAutoMaxRows && 5 * uint64_t(row_count) <= 2 * values_per_row
               ? STEEL_PATH_DENSE
               : STEEL_PATH_GENERAL;
}

} // namespace steel
