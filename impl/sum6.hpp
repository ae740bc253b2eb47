// The order in which Steel sums six terms: a spatial 6-vector's products (a body's velocity
// against a row's force, a joint's motion subspace against an impulse). A tree of adds,
// ((0 + 1) + (2 + 3)) + (4 + 5), rather than left to right: the tree walks and a serial sweep's
// rows each wait for the one before, and six dependent adds would sit on that chain. Every copy
// that must give the same bits sums this way: the propagation response's walks and rows, and the
// colored packs on the GPU and on the CPU (contact_pack_kernel.inc writes it out for its vectors).
#pragma once

#include "host_device.hpp"

namespace steel {

// Where a running sum starts: -0, not +0. Adding a value to -0 gives exactly that value (+0
// would turn a -0 into +0), so the compiler can drop a sum's first add, one add fewer on a chain
// that waits for it. Only the sign of a sum that is exactly zero depends on the choice.
template <class Real> constexpr Real kSumStart = -Real(0);

template <class T> STEEL_HOST_DEVICE inline T sum6(const T* t) {
    return ((t[0] + t[1]) + (t[2] + t[3])) + (t[4] + t[5]);
}

template <class Real> STEEL_HOST_DEVICE inline Real dot6(const Real* a, const Real* b) {
    const Real t[6] = {a[0] * b[0], a[1] * b[1], a[2] * b[2],
                       a[3] * b[3], a[4] * b[4], a[5] * b[5]};
    return sum6(t);
}

} // namespace steel
