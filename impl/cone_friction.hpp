// Coupled (cone) friction, SPEC section 4: a contact's two tangent rows t0, t1 are one block.
//
// With w the block's soft velocity error (J_t.v + b_t + c_t lambda_t, per row) and A_tt its 2x2
// part of A plus diag(c), the unprojected Gauss-Seidel block step solves A_tt delta = -w:
//
//     delta = -A_tt^-1 w,     A_tt^-1 = [a11 -a01; -a10 a00] / (a00 a11 - a01 a10)
//
// and the result is projected onto the disk |lambda_t| <= mu lambda_n (radial scaling, with the
// live normal impulse). cfm is left out of the block (SPEC 5): A_tt is what it is.
#pragma once

#include "host_device.hpp"

#include <cmath>

namespace steel {

template <class Real> struct ConeStep {
    Real impulse0;
    Real impulse1;
};

template <class Real>
STEEL_HOST_DEVICE inline ConeStep<Real> cone_block_update(Real error0, Real error1, Real impulse0, Real impulse1,
                                                          Real a00, Real a01, Real a10, Real a11, Real friction,
                                                          Real normal_impulse) {
    const Real det = a00 * a11 - a01 * a10;
    Real x0 = impulse0 - (a11 * error0 - a01 * error1) / det;
    Real x1 = impulse1 - (a00 * error1 - a10 * error0) / det;
    Real radius = friction * normal_impulse;
    if (radius < 0) radius = 0;
    const Real norm = std::sqrt(x0 * x0 + x1 * x1);
    if (norm > radius) { // NaN skips this and stays visible
        const Real scale = norm > 0 ? radius / norm : Real(0);
        x0 *= scale;
        x1 *= scale;
    }
    return {x0, x1};
}

} // namespace steel
