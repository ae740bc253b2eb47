// The contact pack kernel on 256-bit vectors, run only where the processor has AVX2
// (contact_packs.cpp checks). Off x86-64 this copy is plain code that is never chosen.
#define STEEL_PACK_ISA avx2
#if defined(__x86_64__) && defined(__GNUC__)
#define STEEL_PACK_TARGET __attribute__((target("avx2")))
#define STEEL_PACK_VECTOR_BYTES 32
#else
#define STEEL_PACK_TARGET
#define STEEL_PACK_VECTOR_BYTES 0
#endif
#include "contact_pack_kernel.inc"
