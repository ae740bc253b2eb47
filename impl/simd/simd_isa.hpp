// Which instruction set the CPU's general sweep runs on (row_kernels.hpp): the widest of
// AVX-512F, AVX2 and baseline x86-64 ("scalar") that the processor has, chosen once, at first
// use. Every choice gives bit-identical results (row_kernels.inc says why), so the choice is
// about speed only.
//
// The environment variable STEEL_SIMD=scalar|avx2|avx512, read at first use, narrows the choice
// (never beyond what the processor has): for comparisons and for reproducing a report. It also
// narrows the colored contact packs (impl/colored/contact_packs.hpp), which keep their own
// setting. Tests call set_simd_isa instead.
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
