// Routes each call to the copy for the instruction set in use (simd_isa.hpp): one switch per
// sweep, nothing per row.
#include "row_kernels.hpp"
#include "simd_isa.hpp"

namespace steel::simd {

#define STEEL_ON_ISA(call)                                                                         \
    switch (simd_isa()) {                                                                          \
    case SimdIsa::avx512:                                                                          \
        return avx512::call;                                                                       \
    case SimdIsa::avx2:                                                                            \
        return avx2::call;                                                                         \
    default:                                                                                       \
        return scalar::call;                                                                       \
    }

template <class Real>
SweepResult<Real> general_sweep(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                                Real* impulse, Real* velocity) {
    STEEL_ON_ISA(general_sweep(rows, params, impulse, velocity))
}

template <class Real>
SweepResult<Real>
general_sweep_prepared(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                       const SweepRow<Real>* prepared, Real* impulse, Real* velocity) {
    STEEL_ON_ISA(general_sweep_prepared(rows, params, prepared, impulse, velocity))
}

template <class Real>
void velocity_from_impulses(const WorldRows<Real>& rows, const Real* impulse, Real* velocity) {
    STEEL_ON_ISA(velocity_from_impulses(rows, impulse, velocity))
}

template <class Real>
Real row_dot(const WorldRows<Real>& rows, uint32_t row, const Real* values, const Real* x) {
    STEEL_ON_ISA(row_dot(rows, row, values, x))
}

template <class Real>
void row_axpy(const WorldRows<Real>& rows, uint32_t row, const Real* values, Real scale, Real* x) {
    STEEL_ON_ISA(row_axpy(rows, row, values, scale, x))
}

template <class Real>
void dense_rows_from_table(const WorldRows<Real>& rows, Real* a,
                           Real* table){STEEL_ON_ISA(dense_rows_from_table(rows, a, table))}

#undef STEEL_ON_ISA

#define STEEL_INSTANTIATE(Real)                                                                    \
    template SweepResult<Real> general_sweep(const WorldRows<Real>&, const SolveParams<Real>&,     \
                                             Real*, Real*);                                        \
    template SweepResult<Real> general_sweep_prepared(                                             \
        const WorldRows<Real>&, const SolveParams<Real>&, const SweepRow<Real>*, Real*, Real*);    \
    template void velocity_from_impulses(const WorldRows<Real>&, const Real*, Real*);              \
    template Real row_dot(const WorldRows<Real>&, uint32_t, const Real*, const Real*);             \
    template void row_axpy(const WorldRows<Real>&, uint32_t, const Real*, Real, Real*);            \
    template void dense_rows_from_table(const WorldRows<Real>&, Real*, Real*);
STEEL_INSTANTIATE(float) STEEL_INSTANTIATE(double)
#undef STEEL_INSTANTIATE

} // namespace steel::simd
