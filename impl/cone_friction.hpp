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

// The step is on the sweep's chain (the next row waits for it), so it divides as little as it
// can. The unconstrained step multiplies by 1/det(A_tt), which depends on the block alone and is
// worked out beside the rates. On the edge, Newton runs on v = adj(B) p / det(A_tt), with
// B = A_tt + nu I and p = A_tt lambda - w: v = x ratio, where ratio = det(B) / det(A_tt), so v
// needs no division and keeps the size of an impulse (float32's range is not strained); each
// step divides once, and the result, v scaled onto the disk's edge, once more. Before, each
// Newton step divided seven times ("The cone's step" in bench/RESULTS.md).
template <class Real>
STEEL_HOST_DEVICE inline ConeStep<Real>
cone_block_update(Real error0, Real error1, Real impulse0, Real impulse1, Real a00, Real a01,
                  Real a10, Real a11, Real friction, Real normal_impulse) {
    const Real det = a00 * a11 - a01 * a10; // > 0: the upload refuses a block that is not
    const Real inverse_det = Real(1) / det;
    const Real x0 = impulse0 - (a11 * error0 - a01 * error1) * inverse_det;
    const Real x1 = impulse1 - (a00 * error1 - a10 * error0) * inverse_det;
    Real radius = friction * normal_impulse;
    if (radius < 0) radius = 0;
    const Real norm = std::sqrt(x0 * x0 + x1 * x1);
    if (!(norm > radius)) return {x0, x1}; // inside the disk, or NaN (which stays visible)
    if (!(radius > 0)) return {Real(0), Real(0)};

    const Real p0 = a00 * impulse0 + a01 * impulse1 - error0; // A_tt lambda - w
    const Real p1 = a10 * impulse0 + a11 * impulse1 - error1;
    const Real inverse_radius = Real(1) / radius;
    Real nu = 0, ratio = 1, v0 = x0, v1 = x1, v_norm = norm; // at nu = 0, v = x
    for (int k = 0; k < kConeNewtonSteps; ++k) {
        // With x = v / ratio: phi'(nu) = x^T B^-1 x / |x|^3, and the Newton step
        // (1/r - 1/|x|) / phi'(nu) = |v|^2 / (v^T adj(B) v) (|v| / r - ratio) det(A_tt).
        const Real b00 = a00 + nu, b11 = a11 + nu;
        const Real quadratic = v0 * (b11 * v0 - a01 * v1) + v1 * (b00 * v1 - a10 * v0);
        const Real next =
            nu + v_norm * v_norm / quadratic * (v_norm * inverse_radius - ratio) * det;
        if (!(next > nu)) break; // converged to rounding (or a NaN, which the caller will see)
        nu = next;
        const Real c00 = a00 + nu, c11 = a11 + nu;
        ratio = (c00 * c11 - a01 * a10) * inverse_det;
        v0 = (c11 * p0 - a01 * p1) * inverse_det;
        v1 = (c00 * p1 - a10 * p0) * inverse_det;
        v_norm = std::sqrt(v0 * v0 + v1 * v1);
        if (!(v_norm > radius * ratio)) break; // |x| <= r
    }
    // Onto the edge exactly: Newton leaves |x| a few roundings from r, on either side.
    const Real scale = v_norm > 0 ? radius / v_norm : Real(0);
    return {v0 * scale, v1 * scale};
}

} // namespace steel
