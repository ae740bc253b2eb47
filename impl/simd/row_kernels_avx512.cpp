// The row kernels on 64-byte registers, run only where the processor has AVX-512F (simd_isa.cpp
// checks). Off x86-64 this copy is plain code that is never chosen.
#define STEEL_SIMD_ISA avx512
#if defined(__x86_64__) && defined(__GNUC__)
#define STEEL_SIMD_TARGET __attribute__((target("avx512f")))
#define STEEL_SIMD_REGISTER_BYTES 64
#else
#define STEEL_SIMD_TARGET
#define STEEL_SIMD_REGISTER_BYTES 16
#endif
#include "row_kernels.inc"
