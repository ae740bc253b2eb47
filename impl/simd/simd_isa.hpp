// Which instruction set the CPU's general sweep runs on (row_kernels.hpp): baseline x86-64
// ("scalar"), AVX2 or AVX-512F, chosen once, at first use, from what the processor has. Every
// choice gives bit-identical results (row_kernels.hpp says why), so the choice is about speed only.
//
// The default is AVX2 wherever the processor has it, even where it also has AVX-512: on the one
// machine measured (Zen 5, bench/RESULTS.md) the AVX-512 copy was up to 10% slower on rows of 6 to
// 32 values and only matched AVX2 on rows of 48 and 64 (the sum of a row is a chain of dependent
// adds, which wider registers do not shorten). It stays available for other processors.
//
// The environment variable STEEL_SIMD=scalar|avx2|avx512, read at first use, picks another width
// the processor has (an unsupported one is ignored): for comparisons and for reproducing a report.
// The colored contact packs (impl/colored/contact_packs.hpp) read it too, for their own setting.
// Tests call set_simd_isa instead.
#pragma once

#include <cstdint>

namespace steel::simd {

enum class SimdIsa : int32_t { scalar = 0, avx2 = 1, avx512 = 2 };

bool simd_isa_supported(SimdIsa isa); // by this processor (and this build)
SimdIsa simd_isa();                   // the one in use
const char* simd_isa_name(SimdIsa isa);
// Tests: run with `isa` from now on (it must be supported); returns the previous one. Not for use
// while another thread solves.
SimdIsa set_simd_isa(SimdIsa isa);

} // namespace steel::simd
