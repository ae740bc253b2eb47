// cholesky_factor_in_place and cholesky_solve_in_place (dense_cholesky.hpp) for a warp, column
// after column, each value computed with the CPU's operations in the CPU's order: so the factor
// and the solution are the CPU's bit for bit, and a column costs about one value's steps instead
// of all of its values' one after another.
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

// The first i > k that `lane` owns (i % 32 == lane).
__device__ inline uint32_t first_owned_after(uint32_t k, uint32_t lane) {
    return k + 1 + (lane + kWarpSize - (k + 1) % kWarpSize) % kWarpSize;
}

// x_k /= L_kk on the lane that owns x_k, and the result handed to every lane.
template <class Real>
__device__ inline Real warp_owner_divides(const Real* l, uint32_t n, Real* x, uint32_t k,
                                          uint32_t lane) {
    Real xk = 0;
    if (k % kWarpSize == lane) xk = x[k] /= l[size_t(k) * n + k];
    return __shfl_sync(kFullMask, xk, int(k % kWarpSize));
}

// x := (L L^T)^-1 x. Lane l owns the x_i with i % 32 == l and is the only one to touch them, so
// no lane waits on memory: when x_k is known, its owner divides it and hands it to the others by
// a shuffle, and every lane subtracts its term from the x_i it owns (those after k forward, those
// before k back): each x_i's subtractions in the CPU's order. x is whole on return.
template <class Real>
__device__ inline void warp_cholesky_solve_in_place(const Real* l, uint32_t n, Real* x,
                                                    uint32_t lane) {
    for (uint32_t k = 0; k < n; ++k) {
        const Real xk = warp_owner_divides(l, n, x, k, lane);
        for (uint32_t i = first_owned_after(k, lane); i < n; i += kWarpSize)
            x[i] -= l[size_t(i) * n + k] * xk;
    }
    for (uint32_t k = n; k-- > 0;) {
        const Real xk = warp_owner_divides(l, n, x, k, lane);
        for (uint32_t i = lane; i < k; i += kWarpSize)
            x[i] -= l[size_t(k) * n + i] * xk;
    }
    __syncwarp(); // each lane wrote its own x_i; the caller reads them all
}

} // namespace steel::cuda
