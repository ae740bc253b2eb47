#include "contact_packs.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace steel::colored {

namespace {

PackIsa widest_supported() {
    if (pack_isa_supported(PackIsa::avx512)) return PackIsa::avx512;
    if (pack_isa_supported(PackIsa::avx2)) return PackIsa::avx2;
    return PackIsa::scalar;
}

PackIsa initial_isa() {
    PackIsa isa = widest_supported();
    if (const char* asked = std::getenv("STEEL_SIMD")) {
        PackIsa narrower = isa;
        if (std::strcmp(asked, "scalar") == 0) narrower = PackIsa::scalar;
        if (std::strcmp(asked, "avx2") == 0) narrower = PackIsa::avx2;
        if (int32_t(narrower) < int32_t(isa) && pack_isa_supported(narrower)) isa = narrower;
    }
    return isa;
}

std::atomic<int32_t>& current() {
    static std::atomic<int32_t> isa{int32_t(initial_isa())};
    return isa;
}

} // namespace

bool pack_isa_supported(PackIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
    switch (isa) {
    case PackIsa::avx512:
        return __builtin_cpu_supports("avx512f");
    case PackIsa::avx2:
        return __builtin_cpu_supports("avx2");
    default:
        return true;
    }
#else
    return isa == PackIsa::scalar;
#endif
}

PackIsa pack_isa() {
    return PackIsa(current().load(std::memory_order_relaxed));
}

const char* pack_isa_name(PackIsa isa) {
    switch (isa) {
    case PackIsa::avx512:
        return "avx512";
    case PackIsa::avx2:
        return "avx2";
    default:
        return "scalar";
    }
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
