// The checks of every reader that takes (out, capacity, out_count), so that they all answer in
// the same words: the count goes to *out_count when asked for; out NULL asks for the count only,
// which needs out_count; a buffer shorter than the count is refused before anything is written.
#pragma once

#include "error.hpp"

#include <cstdint>

namespace steel {

// Returns whether the reader should write `count` values to out (false: a count-only call).
// `what` names the values in the refusal: "values to write", "worlds", "sweeps of world 3".
template <class Count>
bool output_wanted(const char* where, const void* out, Count capacity, Count count,
                   Count* out_count, const char* what) {
    if (out_count) *out_count = count;
    if (out == nullptr) {
        if (!out_count)
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("%s: out and out_count are both NULL", where));
        return false;
    }
    if (capacity < count)
        fail(STEEL_ERROR_BUFFER_TOO_SMALL,
             format("%s: capacity %llu is smaller than the %llu %s", where,
                    (unsigned long long)capacity, (unsigned long long)count, what));
    return true;
}

} // namespace steel
