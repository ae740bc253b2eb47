// The contact pack kernel on 512-bit vectors, run only where the processor has AVX-512F
// (contact_packs.cpp checks). Off x86-64 this copy is plain code that is never chosen.
#define STEEL_PACK_ISA avx512
#if defined(__x86_64__) && defined(__GNUC__)
#define STEEL_PACK_TARGET __attribute__((target("avx512f")))
#define STEEL_PACK_VECTOR_BYTES 64
#else
#define STEEL_PACK_TARGET
#define STEEL_PACK_VECTOR_BYTES 0
#endif
#include "contact_pack_kernel.inc"
