// Classification (SPEC section 3): before each solve every world is assigned, from its live
// row and DOF counts, to the small-world dense path or the general sweep.
#pragma once

#include "host_device.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel {

// The STEEL_PRECISION_* of a Real.
template <class Real>
constexpr int32_t precision_of = sizeof(Real) == 4 ? STEEL_PRECISION_FLOAT32
                                                   : STEEL_PRECISION_FLOAT64;

// When AUTO takes the dense path. Building A costs about 2 m^2 L flops (m rows of L values each)
// once per solve; after that a dense row update costs about 2m flops instead of the general
// sweep's 4L + 8, and waits on a shorter chain (its four partial sums against the general sweep's
// dot product and axpy). So the dense path wins while m is small, and the more sweeps share the
// cost of A, the larger m may be.
//
// The sweeps a solve is sure to run: its iterations, or at most 20 when a tolerance may stop it
// early (the figure the rule used before it counted sweeps).
STEEL_HOST_DEVICE inline uint32_t classified_sweeps(uint32_t iterations, double tolerance) {
    return tolerance > 0 && iterations > 20 ? 20u : iterations;
}

// The largest m that AUTO sends to the dense path, for rows of values_per_row (L) values and a
// solve of `sweeps` sweeps. bench/bench_sweep measured where the dense path (building A included)
// stops beating the general sweep at 10, 20 and 50 sweeps (bench/RESULTS.md, "One row behind on
// v": one thread, CPU time, L = 1 to 64, 2-vCPU AMD EPYC VM, both paths running one row behind).
// Each table below stays at or below the measured crossover over its range of L, and a solve uses
// the table of the largest measured sweep count it reaches. Rows of exactly 6 values (a free
// body's, which the general sweep has its own code for) never win on the dense path, nor rows of
// 1 value in float64. At 5 sweeps dense was at most 1.14x faster (an earlier measurement), so
// fewer than 10 sweeps keep the general sweep. The same rule classifies on the GPU (whose dense
// kernel takes at most 32 rows), where it has not been measured.
STEEL_HOST_DEVICE inline uint32_t dense_auto_max_rows(int32_t precision, uint64_t values_per_row,
                                                      uint32_t sweeps) {
    const uint64_t L = values_per_row;
    if (L == 0 || L == 6 || sweeps < 10) return 0;
    const bool f32 = precision == STEEL_PRECISION_FLOAT32;
    if (!f32 && L == 1) return 0;
    if (sweeps < 20) { // measured at 10 sweeps
        if (f32) return L < 6 ? 12 : 8;
        return L < 6 ? 10 : 8;
    }
    if (sweeps < 50) { // measured at 20 sweeps
        if (f32) return L < 32 ? 12 : 16;
        return L < 16 ? 12 : L < 32 ? 14 : L < 64 ? 18 : 20;
    }
    // measured at 50 sweeps
    if (f32) return L < 6 ? 14 : L < 16 ? 12 : L < 32 ? 14 : L < 64 ? 18 : 24;
    return L < 16 ? 14 : L < 32 ? 16 : L < 64 ? 22 : 30;
}

// The path of a world of row_count rows holding value_count J values, for a solve of `sweeps`
// sweeps (classified_sweeps).
STEEL_HOST_DEVICE inline int32_t classify_world(int32_t requested_path, uint32_t row_count,
                                                uint64_t value_count, int32_t precision,
                                                uint32_t sweeps) {
    if (row_count == 0) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_GENERAL) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_DENSE)
        return row_count <= STEEL_DENSE_MAX_ROWS ? STEEL_PATH_DENSE : STEEL_PATH_GENERAL;
    const uint64_t values_per_row = value_count / row_count;
    return row_count <= dense_auto_max_rows(precision, values_per_row, sweeps) ? STEEL_PATH_DENSE
                                                                               : STEEL_PATH_GENERAL;
}

} // namespace steel
