// The general (matrix-free) sweep, SPEC section 2: J and Y stored per row, v kept live, A never
// assembled. A row costs work proportional to the DOFs it touches.
//
// Two copies of the loop: the portable one here (the GPU's, with world_rows.hpp's row_dot and
// row_axpy), and the CPU's SIMD one in impl/simd/row_kernels.inc, chosen at run time from the
// processor and bit-identical on every width. general_sweep() and velocity_from_impulses() take
// the SIMD copy in host code and the portable one in device code. Their dot products sum in
// different orders, and the SIMD copy takes each row's rate one row behind on v (row_kernels.inc),
// so the two agree to rounding.
#pragma once

#include "row_update.hpp"
#include "simd/row_kernels.hpp"
#include "sweep_result.hpp"
#include "world_rows.hpp"

namespace steel {

// One Gauss-Seidel sweep over the world's rows in upload order. Invariant on entry and exit:
// velocity = v-hat + sum_j Y_j impulse_j.
template <class Real>
STEEL_HOST_DEVICE inline SweepResult<Real> portable_general_sweep(const WorldRows<Real>& rows,
                                                                  const SolveParams<Real>& params,
                                                                  Real* impulse, Real* velocity) {
    SweepResult<Real> result;
    for (uint32_t i = 0; i < rows.row_count;) {
        const bool pair = rows.kind[i] == STEEL_ROW_FRICTION_CONE;
        const RowError<Real> error0{row_dot(rows, i, rows.jacobian, velocity), rows.bias[i]};
        const RowError<Real> error1 =
            pair ? RowError<Real>{row_dot(rows, i + 1, rows.jacobian, velocity), rows.bias[i + 1]}
                 : RowError<Real>{0, 0};
        Real step[2];
        const uint32_t used = update_rows(rows, i, params, error0, error1, impulse, step, result);
        for (uint32_t k = 0; k < used; ++k)
            row_axpy(rows, i + k, rows.response, step[k], velocity);
        i += used;
    }
    return result;
}

// velocity = v-hat + sum_j Y_j impulse_j, computed from scratch.
template <class Real>
STEEL_HOST_DEVICE inline void portable_velocity_from_impulses(const WorldRows<Real>& rows,
                                                              const Real* impulse, Real* velocity) {
    for (uint32_t k = 0; k < rows.dof_count; ++k)
        velocity[k] = rows.unconstrained_velocity[k];
    for (uint32_t j = 0; j < rows.row_count; ++j)
        row_axpy(rows, j, rows.response, impulse[j], velocity);
}

template <class Real>
STEEL_HOST_DEVICE inline SweepResult<Real> general_sweep(const WorldRows<Real>& rows,
                                                         const SolveParams<Real>& params,
                                                         Real* impulse, Real* velocity) {
#if defined(__CUDA_ARCH__)
    return portable_general_sweep(rows, params, impulse, velocity);
#else
    return simd::general_sweep(rows, params, impulse, velocity);
#endif
}

template <class Real>
STEEL_HOST_DEVICE inline void velocity_from_impulses(const WorldRows<Real>& rows,
                                                     const Real* impulse, Real* velocity) {
#if defined(__CUDA_ARCH__)
    portable_velocity_from_impulses(rows, impulse, velocity);
#else
    simd::velocity_from_impulses(rows, impulse, velocity);
#endif
}

} // namespace steel
