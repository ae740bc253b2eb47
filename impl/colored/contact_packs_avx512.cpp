// The contact pack kernel on 512-bit vectors (compiled with -mavx512f, run only where the
// processor has AVX-512F: contact_packs.cpp checks).
#define STEEL_PACK_ISA avx512
#define STEEL_PACK_VECTOR_BYTES 64
#include "contact_pack_kernel.inc"
