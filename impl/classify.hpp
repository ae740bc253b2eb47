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

// When AUTO takes the dense path. Building A costs about 2 m^2 L flops (m rows of L values each);
// after that a dense row update costs about 2m flops instead of the general sweep's 4L + 8, and
// waits on a shorter chain (its four partial sums against the general sweep's dot product and
// axpy). So the dense path can only win while m is small.
//
// bench/bench_sweep measured where it stops paying off (bench/RESULTS.md, "The dense path built
// by rows": one thread, CPU time, 20 sweeps, L = 6 to 64, 2-vCPU AMD EPYC VM) once A was built
// eight entries at a time and the dense row error summed in four sums. float64: dense faster up
// to m = 8 at L = 6, 12 at L = 8 to 32 and 16 at L = 48 and 64 (1.21 to 1.49x at m = 4 and 8).
// float32, whose general sweep does 8 values per AVX2 operation to float64's 4: up to m = 4 at
// L = 6 and 5 from L = 8 (1.05 to 1.28x at m = 4), 0.51 to 0.79x at m = 8. Rows shorter than 6
// values were not measured and stay on the general sweep. The same rule classifies on the GPU,
// where it has not been measured.
STEEL_HOST_DEVICE inline uint32_t dense_auto_max_rows(int32_t precision, uint64_t values_per_row) {
    if (values_per_row < 6) return 0;
    if (precision == STEEL_PRECISION_FLOAT32) return values_per_row < 8 ? 4 : 5;
    return values_per_row < 8 ? 8 : values_per_row < 48 ? 12 : 16;
}

STEEL_HOST_DEVICE inline int32_t classify_world(int32_t requested_path, uint32_t row_count,
                                                uint64_t value_count, int32_t precision) {
    if (row_count == 0) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_GENERAL) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_DENSE)
        return row_count <= STEEL_DENSE_MAX_ROWS ? STEEL_PATH_DENSE : STEEL_PATH_GENERAL;
    const uint64_t values_per_row = value_count / row_count;
    return row_count <= dense_auto_max_rows(precision, values_per_row) ? STEEL_PATH_DENSE
                                                                       : STEEL_PATH_GENERAL;
}

} // namespace steel
