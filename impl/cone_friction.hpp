// Coupled (cone) friction, SPEC section 4: a contact's two tangent rows t0, t1 are one block.
//
// With w the block's soft velocity error (J_t.v + b_t + c_t lambda_t, per row) and A_tt its 2x2
// part of A plus diag(c), the block step solves the block's own problem exactly: the x in the
// disk |x| <= r (r = mu lambda_n, the live normal impulse) that minimizes
//
//     1/2 (x - lambda)^T A_tt (x - lambda) + w^T (x - lambda).
//
// Inside the disk that is the unprojected step x = lambda - A_tt^-1 w. On its edge it is
// x = (A_tt + nu I)^-1 (A_tt lambda - w) with the nu > 0 that puts |x| on r. At a fixed point
// (x = lambda) the second form says w = -nu lambda: the slip is exactly opposite the friction
// impulse, the complementarity SPEC 1 asks of the disk. Scaling lambda - A_tt^-1 w radially onto
// the disk would be cheaper but stops where w is parallel to A_tt lambda instead, which is wrong
// (by up to tens of degrees) whenever A_tt is not a multiple of I: an anisotropic body, any
// articulation, any pair after pre-elimination. cfm is left out of the block (SPEC 5).
#pragma once

#include "host_device.hpp"

#include <cmath>

namespace steel {

template <class Real> struct ConeStep {
    Real impulse0;
    Real impulse1;
};

// Newton steps on the edge's secular equation. phi(nu) = 1/|x(nu)| - 1/r is increasing and
// concave, so Newton from nu = 0 climbs monotonically to the root and converges quadratically;
// it stops on its own when a step no longer moves nu. The cap only bounds a pathological input.
constexpr int kConeNewtonSteps = 32;

// (B)^-1 p for B = A_tt + nu I, by its 2x2 adjugate.
template <class Real> struct ConeSolve {
    Real x0;
    Real x1;
};

template <class Real>
STEEL_HOST_DEVICE inline ConeSolve<Real> cone_shifted_solve(Real a00, Real a01, Real a10, Real a11,
                                                            Real nu, Real p0, Real p1) {
    const Real b00 = a00 + nu, b11 = a11 + nu;
    const Real det = b00 * b11 - a01 * a10;
    return {(b11 * p0 - a01 * p1) / det, (b00 * p1 - a10 * p0) / det};
}

template <class Real>
STEEL_HOST_DEVICE inline ConeStep<Real>
cone_block_update(Real error0, Real error1, Real impulse0, Real impulse1, Real a00, Real a01,
                  Real a10, Real a11, Real friction, Real normal_impulse) {
    const Real det = a00 * a11 - a01 * a10;
    Real x0 = impulse0 - (a11 * error0 - a01 * error1) / det;
    Real x1 = impulse1 - (a00 * error1 - a10 * error0) / det;
    Real radius = friction * normal_impulse;
    if (radius < 0) radius = 0;
    Real norm = std::sqrt(x0 * x0 + x1 * x1);
    if (!(norm > radius)) return {x0, x1}; // inside the disk, or NaN (which stays visible)
    if (!(radius > 0)) return {Real(0), Real(0)};

    const Real p0 = a00 * impulse0 + a01 * impulse1 - error0; // A_tt lambda - w
    const Real p1 = a10 * impulse0 + a11 * impulse1 - error1;
    Real nu = 0;
    for (int k = 0; k < kConeNewtonSteps; ++k) {
        // phi'(nu) = x^T (A_tt + nu I)^-1 x / |x|^3
        const ConeSolve<Real> y = cone_shifted_solve(a00, a01, a10, a11, nu, x0, x1);
        const Real slope = (x0 * y.x0 + x1 * y.x1) / (norm * norm * norm);
        const Real next = nu + (Real(1) / radius - Real(1) / norm) / slope;
        if (!(next > nu)) break; // converged to rounding (or a NaN, which the caller will see)
        nu = next;
        const ConeSolve<Real> x = cone_shifted_solve(a00, a01, a10, a11, nu, p0, p1);
        x0 = x.x0;
        x1 = x.x1;
        norm = std::sqrt(x0 * x0 + x1 * x1);
        if (!(norm > radius)) break;
    }
    // Onto the edge exactly: Newton leaves |x| a few roundings from r, on either side.
    const Real scale = norm > 0 ? radius / norm : Real(0);
    return {x0 * scale, x1 * scale};
}

} // namespace steel
