// Solving contact packs (colored_plan.hpp) with the widest SIMD the processor has: AVX-512,
// AVX2 or plain scalar code, chosen once at run time. Every choice gives bit-identical results
// (contact_pack_kernel.inc says why), so the choice is about speed only. Unlike the general
// sweep (impl/simd/simd_isa.hpp, AVX2 by default) the packs take AVX-512 where it exists: a lane
// is a whole contact, and wider registers solve more of them at once (bench/RESULTS.md,
// bench_modes). The environment variable STEEL_SIMD=scalar|avx2|avx512 picks another width the
// processor has, for both.
#pragma once

#include "../simd/simd_isa.hpp"
#include "../solve_params.hpp"
#include "../sweep_result.hpp"
#include "colored_plan.hpp"

#include <cstdint>

namespace steel::colored {

using PackIsa = simd::SimdIsa;

inline bool pack_isa_supported(PackIsa isa) {
    return simd::simd_isa_supported(isa);
}
inline const char* pack_isa_name(PackIsa isa) {
    return simd::simd_isa_name(isa);
}
PackIsa pack_isa(); // the one in use
// Tests: run with `isa` from now on (must be supported); returns the previous one. Not for use
// while another thread solves.
PackIsa set_pack_isa(PackIsa isa);

// Solves packs [first, last) once each, in order, lane by lane; returns the sweep's residual
// and non-finite probe over them.
template <class Real>
SweepResult<Real> solve_packs(const ContactPacks<Real>& packs, uint32_t first, uint32_t last,
                              const SolveParams<Real>& params, Real* impulse, Real* velocity);

#define STEEL_DECLARE_PACK_ISA(isa)                                                                \
    namespace isa {                                                                                \
    SweepResult<float> solve_packs(const ContactPacks<float>&, uint32_t, uint32_t,                 \
                                   const SolveParams<float>&, float*, float*);                     \
    SweepResult<double> solve_packs(const ContactPacks<double>&, uint32_t, uint32_t,               \
                                    const SolveParams<double>&, double*, double*);                 \
    }
STEEL_DECLARE_PACK_ISA(scalar)
STEEL_DECLARE_PACK_ISA(avx2)
STEEL_DECLARE_PACK_ISA(avx512)
#undef STEEL_DECLARE_PACK_ISA

} // namespace steel::colored
