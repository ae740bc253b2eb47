// Helpers shared by the tests: solve a builder's worlds through the public API and read back
// everything, with failures reported through doctest with Steel's message.
#pragma once

#include "rows_builder.hpp"

#include <doctest/doctest.h>
#include <steel/steel.h>

#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#define REQUIRE_OK(call)                                                                           \
    do {                                                                                           \
        const steel_status status_ = (call);                                                       \
        const std::string message_ = steel_last_error_message();                                   \
        INFO("status " << status_ << ": " << message_);                                            \
        REQUIRE(status_ == STEEL_OK);                                                              \
    } while (0)

namespace test {

struct Solved {
    std::vector<double> impulses;
    std::vector<double> velocities;
    std::vector<steel_world_stats> stats;
};

struct SolveSetup {
    int32_t precision = STEEL_PRECISION_FLOAT64;
    uint32_t threads = 1;
    uint32_t iterations = 50;
    double tolerance = 0;
    double cfm = 0;
    int32_t path = STEEL_PATH_AUTO;
    uint32_t warm_start = 1;
};

steel_solve_options options_for(const SolveSetup& setup);

// Creates a batch sized for the builder (caller destroys it).
steel_batch make_batch(const scenes::RowsBuilder& builder, const SolveSetup& setup);

Solved read_all(steel_batch batch);

// Create (setup's precision and threads), upload, set `options`, solve; the caller reads and
// destroys it.
steel_batch solved_batch(const scenes::RowsBuilder& builder, const SolveSetup& setup,
                         const steel_solve_options& options);

// Create, upload, set options (setup's, or `options`), solve, read, destroy.
Solved solve(const scenes::RowsBuilder& builder, const SolveSetup& setup);
Solved solve(const scenes::RowsBuilder& builder, const SolveSetup& setup,
             const steel_solve_options& options);

// v-hat + Y lambda recomputed in double from the builder's own arrays.
std::vector<double> velocity_from(const scenes::RowsBuilder& builder,
                                  const std::vector<double>& impulses);

// Checks that every world of a solve forced onto `path` reports that path (its worlds must all
// have 1 to STEEL_DENSE_MAX_ROWS rows): a test comparing the paths would otherwise compare one
// path with itself if the forcing stopped reaching the solve.
void check_path_taken(const Solved& solved, int32_t path);

// Reports an instruction set ("avx2", "avx512") that the library does not detect, so that a test
// comparing the SIMD widths cannot compare it: a failure where the comma-separated
// STEEL_TEST_REQUIRE_ISAS (scripts/test.sh fills it from /proc/cpuinfo's flags) says this machine
// has it, a message otherwise.
void report_undetected_isa(const char* name);

// Turns some rows of the world whose rows start at row0 into FRICTION_CONE pairs: about one in
// three places where two consecutive rows follow a contact normal (each of at least 2 values, so
// the pair is not singular) become a pair on that normal, friction 0.6. With regularize_one_in
// = k > 0, about one in k of the other rows gets regularization 0.05.
void make_cone_pairs(scenes::RowsBuilder& builder, uint64_t row0, uint32_t row_count,
                     std::mt19937_64& rng, uint32_t regularize_one_in);

double max_abs(const std::vector<double>& values);
double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b);

} // namespace test
