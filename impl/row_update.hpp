// The row update, shared by every path (general sweep, dense path, and later the GPU).
//
// SPEC section 2. With the world's velocity kept live, v = v-hat + sum_j Y_j lambda_j holds
// after every update, so J_i.v + b_i is exactly the dense residual (J v-hat + b)_i +
// sum_j A_ij lambda_j. The update is Gauss-Seidel on row i:
//
//     w      = J_i.v + b_i (+ c_i lambda_i)          the row's (soft) velocity error
//     d      = J_i.Y_i + c_i   if regularized (c_i > 0; cfm is left out, SPEC 5)
//              J_i.Y_i + cfm   otherwise
//     lambda' = Pi_K(lambda_i - w * (1 / d))
//
// and the caller applies v += Y_i (lambda' - lambda_i). A plain row with cfm moves only
// (d - cfm)/d of the way to its target, a relaxation that leaves the fixed point unchanged. A
// regularized row's fixed point is J.v + b + c lambda = 0: it is soft and settles elsewhere.
#pragma once

#include "cone_friction.hpp"
#include "host_device.hpp"
#include "solve_params.hpp"
#include "sweep_result.hpp"
#include "world_rows.hpp"

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
        // A negative live normal impulse (a warm start, or momentum's extrapolation, reaching a
        // friction row before its normal row) gives no friction, as the cone's radius does: the
        // box must not turn inside out and push along the slip.
        upper = friction * (normal_impulse < 0 ? Real(0) : normal_impulse);
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

// A row's velocity error J_i.v + b_i, kept as its two parts. In a serial sweep the rate J_i.v
// waits for the rows before (they share DOFs) and the bias does not, so the update folds the
// bias in off that chain (bench/RESULTS.md, "The bias off the serial chain").
template <class Real> struct RowError {
    Real rate;
    Real bias;
    STEEL_HOST_DEVICE Real total() const { return rate + bias; }
};

// One update of a row given its velocity error (the c lambda term is added here). Returns the
// new impulse; the caller applies the change to v. In the order of the sums:
//     lambda' = Pi_K((lambda - (b + c lambda) * (1/d)) - (J.v) * (1/d))
// where only the last multiply and subtract wait for v.
// The same given inverse = 1 / d (the CPU's serial sweep works it out once per solve,
// sweep_row.hpp).
template <class Real>
STEEL_HOST_DEVICE inline Real
updated_impulse_times(RowError<Real> error, Real impulse, Real inverse, Real regularization,
                      int32_t kind, Real lower, Real upper, Real friction, Real normal_impulse) {
    const Real start = impulse - (error.bias + regularization * impulse) * inverse;
    return project_impulse(kind, start - error.rate * inverse, lower, upper, friction,
                           normal_impulse);
}

template <class Real>
STEEL_HOST_DEVICE inline Real updated_impulse(RowError<Real> error, Real impulse, Real denominator,
                                              Real regularization, int32_t kind, Real lower,
                                              Real upper, Real friction, Real normal_impulse) {
    // Times the reciprocal, not divided: 1/d needs nothing from v, so it is computed while the
    // dot product waits for the previous row's update, and only a multiply (not a division, 13
    // cycles or more) stays on the chain of rows that share DOFs (bench/RESULTS.md, "The serial
    // sweep's chain"). Every copy of the update does the same (the colored pack kernels too).
    return updated_impulse_times(error, impulse, Real(1) / denominator, regularization, kind, lower,
                                 upper, friction, normal_impulse);
}

// The update of single row i (not a cone pair) given its c, d and 1/d: writes the new impulse,
// records the step in result and returns it for the caller to apply to v. update_rows forms c,
// d and 1/d each time; the CPU's serial sweep reads them from its SweepRow (sweep_row.hpp). Both
// call this, so they share every rounding.
template <class Real>
STEEL_HOST_DEVICE STEEL_HOST_FORCE_INLINE inline Real
update_single_row(RowError<Real> error, Real* impulse, uint32_t i, Real regularization,
                  Real denominator, Real inverse, int32_t kind, Real lower, Real upper,
                  Real friction, Real normal_impulse, SweepResult<Real>& result) {
    const Real old_impulse = impulse[i];
    const Real new_impulse = updated_impulse_times(error, old_impulse, inverse, regularization,
                                                   kind, lower, upper, friction, normal_impulse);
    const Real step = new_impulse - old_impulse;
    impulse[i] = new_impulse;
    record_step(result, denominator, step, error.total(), new_impulse);
    return step;
}

// The live impulse of a row's normal row (normal_row, -1 if it has none: then 0), what its
// friction bound scales.
template <class Real>
STEEL_HOST_DEVICE inline Real impulse_of_normal_row(int32_t normal_row, const Real* impulse) {
    return normal_row >= 0 ? impulse[normal_row] : Real(0);
}

// The same for row i of rows.
template <class Real>
STEEL_HOST_DEVICE inline Real live_normal_impulse(const WorldRows<Real>& rows, uint32_t i,
                                                  const Real* impulse) {
    return impulse_of_normal_row(rows.normal_row[i], impulse);
}

// The update of single row i (not a cone pair) with its c, d and 1/d formed from the row and the
// options. Returns the step.
template <class Real>
STEEL_HOST_DEVICE STEEL_HOST_FORCE_INLINE inline Real
update_plain_row(const WorldRows<Real>& rows, uint32_t i, const SolveParams<Real>& params,
                 RowError<Real> error, Real* impulse, SweepResult<Real>& result) {
    const Real normal_impulse = live_normal_impulse(rows, i, impulse);
    const Real c = row_regularization(rows, i, params);
    const Real d = row_denominator(rows.jy[i], c, params.cfm);
    return update_single_row(error, impulse, i, c, d, Real(1) / d, rows.kind[i], rows.lower[i],
                             rows.upper[i], rows.friction[i], normal_impulse, result);
}

// Updates the row at i, or the FRICTION_CONE pair starting at i, from the velocity errors
// J.v + b of those rows (error1 is read for a pair only). Writes the impulse changes to
// step[0] (and step[1]) for the caller to apply to v, records them in result, and returns the
// number of rows consumed (1 or 2). Both paths call this, so they share every rounding.
template <class Real>
STEEL_HOST_DEVICE STEEL_HOST_FORCE_INLINE inline uint32_t
update_rows(const WorldRows<Real>& rows, uint32_t i, const SolveParams<Real>& params,
            RowError<Real> error0, RowError<Real> error1, Real* impulse, Real step[2],
            SweepResult<Real>& result) {
    if (rows.kind[i] == STEEL_ROW_FRICTION_CONE) {
        const Real normal_impulse = live_normal_impulse(rows, i, impulse);
        const uint32_t k = i + 1;
        const Real c0 = rows.regularization[i], c1 = rows.regularization[k];
        const Real soft0 = error0.total() + c0 * impulse[i],
                   soft1 = error1.total() + c1 * impulse[k];
        const Real a00 = rows.jy[i] + c0, a11 = rows.jy[k] + c1;
        const ConeStep<Real> next =
            cone_block_update(soft0, soft1, impulse[i], impulse[k], a00, rows.cone_cross_01[i],
                              rows.cone_cross_10[i], a11, rows.friction[i], normal_impulse);
        step[0] = next.impulse0 - impulse[i];
        step[1] = next.impulse1 - impulse[k];
        impulse[i] = next.impulse0;
        impulse[k] = next.impulse1;
        // The pair's residual is |A_tt step| per row: its velocity errors -w where the disk does
        // not clamp, zero exactly at a fixed point, as a scalar row's d * step is.
        record_step(result, Real(1), a00 * step[0] + rows.cone_cross_01[i] * step[1], soft0,
                    next.impulse0);
        record_step(result, Real(1), rows.cone_cross_10[i] * step[0] + a11 * step[1], soft1,
                    next.impulse1);
        return 2;
    }
    step[0] = update_plain_row(rows, i, params, error0, impulse, result);
    return 1;
}

} // namespace steel
