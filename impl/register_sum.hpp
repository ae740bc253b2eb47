// A running sum (a scalar, or a pair of sums) the compiler must keep in a register, for the serial
// sweeps' dot products.
#pragma once

#include <type_traits>

namespace steel {

// sum += term, then an empty asm that pins sum to a vector register. The compiler can then
// neither merge the loads of several terms' operands into one wide load nor keep the sum in
// memory. A wide load over values that the previous row's update stored in narrower pieces is not
// forwarded from those stores and waits for them: about 1 ns per row in the general sweep's tails
// (bench/RESULTS.md), 1.3x to 2x per row update in the dense path's row error ("The dense row
// error in registers").
template <class Real> inline void add_in_register(Real& sum, Real term) {
    sum += term;
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
    // Clang will not give an 8-byte vector (a pair of floats) an "x" register (it classes such
    // vectors with MMX): the pair's bits are pinned as one double instead, which GCC needs not.
    if constexpr (sizeof(Real) == sizeof(double) && !std::is_floating_point_v<Real>) {
        double bits;
        __builtin_memcpy(&bits, &sum, sizeof(bits));
        __asm__("" : "+x"(bits));
        __builtin_memcpy(&sum, &bits, sizeof(bits));
        return;
    }
#endif
    __asm__("" : "+x"(sum));
#endif
}

} // namespace steel
