// The contact pack kernel one lane at a time: the fallback, and the reference the SIMD copies
// must match bit for bit.
#define STEEL_PACK_ISA scalar
#define STEEL_PACK_VECTOR_BYTES 0
#define STEEL_PACK_TARGET
#include "contact_pack_kernel.inc"
