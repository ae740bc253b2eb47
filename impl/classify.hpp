// Classification (SPEC section 3): before each solve every world is assigned, from its live
// row and DOF counts, to the small-world dense path or the general sweep.
#pragma once

#include <steel/steel.h>

#include <cstdint>

namespace steel {

// The dense path pays off while building A (about m^2 * L work, L the values per row) is won back
// by sweeps that cost m instead of about 4L per row. bench/RESULTS.md measured where that stops
// (bench/bench_sweep): these thresholds come from there.
constexpr uint32_t kDenseAutoMaxRows = 16;

inline int32_t classify_world(int32_t requested_path, uint32_t row_count, uint64_t value_count) {
    if (row_count == 0) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_GENERAL) return STEEL_PATH_GENERAL;
    if (requested_path == STEEL_PATH_DENSE)
        return row_count <= STEEL_DENSE_MAX_ROWS ? STEEL_PATH_DENSE : STEEL_PATH_GENERAL;
    // AUTO: small worlds whose rows are not much shorter than the world itself.
    const uint64_t values_per_row = value_count / row_count;
    return row_count <= kDenseAutoMaxRows && values_per_row * 2 >= row_count ? STEEL_PATH_DENSE
                                                                             : STEEL_PATH_GENERAL;
}

} // namespace steel
