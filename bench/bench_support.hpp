// What the benchmark programs share: exit with Steel's message on a failed call, and a clock.
#pragma once

#include <steel/steel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace bench {

inline void check(steel_status status, const char* what) {
    if (status != STEEL_OK) {
        std::fprintf(stderr, "%s failed: %s\n", what, steel_last_error_message());
        std::exit(1);
    }
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace bench
