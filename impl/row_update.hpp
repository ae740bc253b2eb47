// The row update, shared by every path (general sweep, dense path, and later the GPU).
//
// SPEC section 2. With the world's velocity kept live, v = v-hat + sum_j Y_j lambda_j holds
// after every update, so J_i.v + b_i is exactly the dense residual (J v-hat + b)_i +
// sum_j A_ij lambda_j. The update is Gauss-Seidel on row i:
//
//     w      = J_i.v + b_i (+ c_i lambda_i)          the row's (soft) velocity error
//     d      = J_i.Y_i + c_i   if regularized (c_i > 0; cfm is left out, SPEC 5)
//              J_i.Y_i + cfm   otherwise
//     lambda' = Pi_K(lambda_i - w / d)
//
// and the caller applies v += Y_i (lambda' - lambda_i). A plain row with cfm moves only
// (d - cfm)/d of the way to its target, a relaxation that leaves the fixed point unchanged. A
// regularized row's fixed point is J.v + b + c lambda = 0: it is soft and settles elsewhere.
#pragma once

#include "host_device.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel {

// Projection onto the row's set K_i (SPEC section 4). normal_impulse is the live lambda of a
// friction row's normal row. Written so a NaN input stays NaN (comparisons with NaN are false,
// so neither clamp fires) and the non-finite check can see it.
template <class Real>
STEEL_HOST_DEVICE inline Real project_impulse(int32_t kind, Real x, Real lower, Real upper,
                                              Real friction, Real normal_impulse) {
    switch (kind) {
    case STEEL_ROW_BOUNDED:
        break;
    case STEEL_ROW_CONTACT_NORMAL:
        lower = 0;
        return x < lower ? lower : x;
    case STEEL_ROW_FRICTION_BOX:
        upper = friction * normal_impulse;
        lower = -upper;
        break;
    default: // STEEL_ROW_BILATERAL
        return x;
    }
    if (x < lower) return lower;
    if (x > upper) return upper;
    return x;
}

// The denominator d of row i (see above).
template <class Real>
STEEL_HOST_DEVICE inline Real row_denominator(Real jy, Real regularization, Real cfm) {
    return regularization > 0 ? jy + regularization : jy + cfm;
}

// One update of row i given its velocity error J_i.v + b_i (without the c lambda term, which is
// added here). Returns the new impulse; the caller applies the change to v.
template <class Real>
STEEL_HOST_DEVICE inline Real updated_impulse(Real constraint_error, Real impulse, Real denominator,
                                              Real regularization, int32_t kind, Real lower,
                                              Real upper, Real friction, Real normal_impulse) {
    const Real error = constraint_error + regularization * impulse;
    return project_impulse(kind, impulse - error / denominator, lower, upper, friction,
                           normal_impulse);
}

} // namespace steel
