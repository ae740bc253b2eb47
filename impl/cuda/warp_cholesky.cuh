// cholesky_factor_in_place (dense_cholesky.hpp) for a warp: column after column, every lane
// works out the pivot (the same bits on each), and the lanes share the entries below it, each
// computed with the CPU's operations in the CPU's order. So the factor is the CPU's bit for bit,
// and a column costs about one entry's chain instead of all of them one after another.
#pragma once

#include "../dense_cholesky.hpp"
#include "warp_rows.cuh"

namespace steel::cuda {

// Returns the same on every lane: false where the CPU's factorization fails (a partly
// overwritten, as there).
template <class Real>
__device__ inline bool warp_cholesky_factor_in_place(Real* a, uint32_t n, uint32_t lane) {
    for (uint32_t j = 0; j < n; ++j) {
        const Real diagonal = cholesky_pivot(a, n, j);
        if (cholesky_pivot_fails(diagonal)) return false; // every lane, at the same column
        const Real root = std::sqrt(diagonal);
        for (uint32_t i = j + 1 + lane; i < n; i += kWarpSize)
            cholesky_below(a, n, i, j, root);
        __syncwarp(); // every pivot read a[j][j] before lane 0 writes it; column j is done
        if (lane == 0) a[size_t(j) * n + j] = root;
        __syncwarp();
    }
    return true;
}

} // namespace steel::cuda
