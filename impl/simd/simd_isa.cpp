#include "simd_isa.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace steel::simd {

namespace {

// AVX2 first, even beside AVX-512 (simd_isa.hpp says why).
SimdIsa default_isa() {
    if (simd_isa_supported(SimdIsa::avx2)) return SimdIsa::avx2;
    return SimdIsa::scalar;
}

SimdIsa initial_isa() {
    const char* asked = std::getenv("STEEL_SIMD");
    if (asked)
        for (SimdIsa isa : {SimdIsa::scalar, SimdIsa::avx2, SimdIsa::avx512})
            if (std::strcmp(asked, simd_isa_name(isa)) == 0 && simd_isa_supported(isa)) return isa;
    return default_isa();
}

std::atomic<int32_t>& current() {
    static std::atomic<int32_t> isa{int32_t(initial_isa())};
    return isa;
}

} // namespace

bool simd_isa_supported(SimdIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    switch (isa) {
    case SimdIsa::avx512:
        return __builtin_cpu_supports("avx512f");
    case SimdIsa::avx2:
        return __builtin_cpu_supports("avx2");
    default:
        return true;
    }
#else
    return isa == SimdIsa::scalar;
#endif
}

SimdIsa simd_isa() {
    return SimdIsa(current().load(std::memory_order_relaxed));
}

const char* simd_isa_name(SimdIsa isa) {
    switch (isa) {
    case SimdIsa::avx512:
        return "avx512";
    case SimdIsa::avx2:
        return "avx2";
    default:
        return "scalar";
    }
}

SimdIsa set_simd_isa(SimdIsa isa) {
    return SimdIsa(current().exchange(int32_t(isa)));
}

} // namespace steel::simd
