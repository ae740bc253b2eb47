// The contact pack kernel on 256-bit vectors (compiled with -mavx2, run only where the processor
// has AVX2: contact_packs.cpp checks).
#define STEEL_PACK_ISA avx2
#define STEEL_PACK_VECTOR_BYTES 32
#include "contact_pack_kernel.inc"
