// The row kernels in baseline x86-64 (SSE2, or whatever the build targets): the fallback, and
// the reference the wider copies must match bit for bit.
#define STEEL_SIMD_ISA scalar
#define STEEL_SIMD_TARGET
#define STEEL_SIMD_REGISTER_BYTES 16
#include "row_kernels.inc"
