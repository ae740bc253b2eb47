// The per-solve numbers every row update reads besides the rows themselves.
#pragma once

#include "host_device.hpp"
#include "world_rows.hpp"

#include <steel/steel.h>

namespace steel {

template <class Real> struct SolveParams {
    Real cfm = 0;                    // added to unregularized scalar rows' J.Y (SPEC 5)
    Real contact_regularization = 0; // c of CONTACT_NORMAL rows that carry none of their own
};

// The regularization c a row is solved with: its own, or for a contact normal without one, the
// batch's contact_regularization option.
template <class Real>
STEEL_HOST_DEVICE inline Real row_regularization(const WorldRows<Real>& rows, uint32_t row,
                                                 const SolveParams<Real>& params) {
    const Real c = rows.regularization[row];
    return c == Real(0) && rows.kind[row] == STEEL_ROW_CONTACT_NORMAL
               ? params.contact_regularization
               : c;
}

} // namespace steel
