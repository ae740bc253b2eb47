// Dense Cholesky factorization and solve for small symmetric positive definite matrices (row-major
// n x n, the factor L stored in the lower triangle). Used where Steel factors a small dense
// matrix of its own: an articulation's H~ (scene mode) and the bilateral block of a world
// (pre-elimination).
#pragma once

#include "host_device.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace steel {

// Column j of the factorization, left-looking, in two steps that the GPU spreads over a warp
// (warp_cholesky.cuh) with each value's operations in this order, so its factor has these bits.
// The pivot: what is left of a_jj once columns 0..j-1 are factored.
template <class Real> STEEL_HOST_DEVICE Real cholesky_pivot(const Real* a, uint32_t n, uint32_t j) {
    Real diagonal = a[size_t(j) * n + j];
    for (uint32_t k = 0; k < j; ++k)
        diagonal -= a[size_t(j) * n + k] * a[size_t(j) * n + k];
    return diagonal;
}

// L_ij for i > j, given L_jj = root; reads only columns 0..j-1 of rows i and j.
template <class Real>
STEEL_HOST_DEVICE void cholesky_below(Real* a, uint32_t n, uint32_t i, uint32_t j, Real root) {
    Real sum = a[size_t(i) * n + j];
    for (uint32_t k = 0; k < j; ++k)
        sum -= a[size_t(i) * n + k] * a[size_t(j) * n + k];
    a[size_t(i) * n + j] = sum / root;
}

// A pivot that factoring cannot go on from: not positive, or not finite.
template <class Real> STEEL_HOST_DEVICE bool cholesky_pivot_fails(Real diagonal) {
    return !(diagonal > 0) || !std::isfinite(diagonal);
}

// Replaces a's lower triangle by L with a = L L^T. False (a partly overwritten) if a is not
// positive definite or a pivot is not finite.
template <class Real> STEEL_HOST_DEVICE bool cholesky_factor_in_place(Real* a, uint32_t n) {
    for (uint32_t j = 0; j < n; ++j) {
        const Real diagonal = cholesky_pivot(a, n, j);
        if (cholesky_pivot_fails(diagonal)) return false;
        const Real root = std::sqrt(diagonal);
        a[size_t(j) * n + j] = root;
        for (uint32_t i = j + 1; i < n; ++i)
            cholesky_below(a, n, i, j, root);
    }
    return true;
}

// x := (L L^T)^-1 x: forward then back substitution. Each x_i subtracts its terms in the order
// its x_k become known (ascending k forward, descending k back), then divides: the order in which
// a warp, one lane per x_i, does it column by column (warp_cholesky.cuh), so both give these bits.
// Back substitution runs by columns here too: row k of L is contiguous, and the x_i it updates
// are independent, so the compiler may vectorize it without changing a bit.
template <class Real>
STEEL_HOST_DEVICE void cholesky_solve_in_place(const Real* l, uint32_t n, Real* x) {
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t k = 0; k < i; ++k)
            x[i] -= l[size_t(i) * n + k] * x[k];
        x[i] /= l[size_t(i) * n + i];
    }
    for (uint32_t k = n; k-- > 0;) {
        const Real xk = x[k] /= l[size_t(k) * n + k];
        for (uint32_t i = 0; i < k; ++i)
            x[i] -= l[size_t(k) * n + i] * xk;
    }
}

// cholesky_solve_in_place on four right-hand sides at once, each with the same operations in the
// same order, so each gets the bits a solve of its own gives. One solve is a chain of dependent
// subtractions and divisions; four interleaved keep the arithmetic units busy while each waits
// (a scene upload's Y = H~^-1 J^T, block after block of one articulation).
template <class Real> void cholesky_solve_in_place_4(const Real* l, uint32_t n, Real* const x[4]) {
    for (uint32_t i = 0; i < n; ++i) {
        Real sum[4] = {x[0][i], x[1][i], x[2][i], x[3][i]};
        for (uint32_t k = 0; k < i; ++k) {
            const Real lik = l[size_t(i) * n + k];
            for (int r = 0; r < 4; ++r)
                sum[r] -= lik * x[r][k];
        }
        for (int r = 0; r < 4; ++r)
            x[r][i] = sum[r] / l[size_t(i) * n + i];
    }
    for (uint32_t k = n; k-- > 0;) {
        const Real* lk = l + size_t(k) * n;
        Real xk[4];
        for (int r = 0; r < 4; ++r)
            xk[r] = x[r][k] /= lk[k];
        for (uint32_t i = 0; i < k; ++i)
            for (int r = 0; r < 4; ++r)
                x[r][i] -= lk[i] * xk[r];
    }
}

} // namespace steel
