// What the fuzz targets that run the CUDA kernels on the host (tests/simt/) share: bit-for-bit
// equality of arrays, the check that the emulation caught nothing, and an emulated solve of an
// uploaded batch's rows read back like the C API reads a solve.
#pragma once

#include "fuzz_input.hpp"
#include "simt/emulated_kernels.hpp"

#include "batch.hpp"
#include "handle_registry.hpp"

#include <steel/steel.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

namespace fuzz {

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Dies, printing them, if the emulation caught a kernel misbehaving (host_simt.hpp).
inline void require_no_problems(const std::vector<std::string>& problems) {
    for (const std::string& problem : problems)
        std::fprintf(stderr, "emulation: %s\n", problem.c_str());
    if (!problems.empty()) die("the emulation caught a kernel misbehaving");
}

// The kernels' solve (emulate_solve) of the batch's rows with `options`, widened to double into
// an Out with the members impulses, velocities and stats.
template <class Out>
Out emulated_solve(steel_batch batch, const steel_solve_options& options, const char* where) {
    Out out;
    std::visit(
        [&](auto& host) {
            const auto solved = test::emulate_solve(host.rows, options);
            require_no_problems(solved.problems);
            out.impulses.assign(solved.impulse.begin(), solved.impulse.end());
            out.velocities.assign(solved.velocity.begin(), solved.velocity.end());
            out.stats = solved.stats;
        },
        steel::lookup_batch(batch.id, where).state);
    return out;
}

} // namespace fuzz
