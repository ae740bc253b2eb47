#include "contact_packs.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace steel::colored {

namespace {

PackIsa initial_isa() {
    if (const char* asked = std::getenv("STEEL_SIMD"))
        for (PackIsa isa : {PackIsa::scalar, PackIsa::avx2, PackIsa::avx512})
            if (std::strcmp(asked, pack_isa_name(isa)) == 0 && pack_isa_supported(isa)) return isa;
    if (pack_isa_supported(PackIsa::avx512)) return PackIsa::avx512;
    if (pack_isa_supported(PackIsa::avx2)) return PackIsa::avx2;
    return PackIsa::scalar;
}

std::atomic<int32_t>& current() {
    static std::atomic<int32_t> isa{int32_t(initial_isa())};
    return isa;
}

} // namespace

PackIsa pack_isa() {
    return PackIsa(current().load(std::memory_order_relaxed));
}

PackIsa set_pack_isa(PackIsa isa) {
    return PackIsa(current().exchange(int32_t(isa)));
}

template <class Real>
SweepResult<Real> solve_packs(const ContactPacks<Real>& packs, uint32_t first, uint32_t last,
                              const SolveParams<Real>& params, Real* impulse, Real* velocity) {
    switch (pack_isa()) {
    case PackIsa::avx512:
        return avx512::solve_packs(packs, first, last, params, impulse, velocity);
    case PackIsa::avx2:
        return avx2::solve_packs(packs, first, last, params, impulse, velocity);
    default:
        return scalar::solve_packs(packs, first, last, params, impulse, velocity);
    }
}

template SweepResult<float> solve_packs(const ContactPacks<float>&, uint32_t, uint32_t,
                                        const SolveParams<float>&, float*, float*);
template SweepResult<double> solve_packs(const ContactPacks<double>&, uint32_t, uint32_t,
                                         const SolveParams<double>&, double*, double*);

} // namespace steel::colored
