// Bilateral pre-elimination (SPEC section 5, option enable_bilateral_preelimination).
//
// Split a world's rows into bilateral rows B and the rest C. With S = A_BB + R, the bilateral
// rows are solved exactly for any lambda_C:
//
//     lambda_B = -S^-1 (rhs_B + A_BC lambda_C),          rhs = J v-hat + b
//
// so the rows of C see the Schur complement A_CC - A_CB S^-1 A_BC and rhs_C - A_CB S^-1 rhs_B.
// Matrix-free, that is the same sweep over C with a projected response and start velocity:
//
//     Y'_j   = Y_j - Y_B S^-1 (J_B . Y_j)           (dense over the world: one block of n)
//     v-hat' = v-hat - Y_B S^-1 (J_B v-hat + b_B)
//
// because J_i . Y'_j = A_ij - A_iB S^-1 A_Bj. The sweep then runs unchanged on this derived world
// (general or dense path), and lambda_B is recovered afterwards. R is diagonal: a regularized
// (soft) bilateral row's own c_q, as the sweep solves it, and cfm for the others, each raised to
// a floor, a tiny multiple of A_BB's largest diagonal entry (1e-10 in float64, 1e-5 in float32),
// so a redundant (rank-deficient) bilateral set still factors. The bilateral rows are solved as
// J_B v + b_B + R lambda_B = 0: exactly for a soft row, and for a hard one cfm shows in its answer.
#pragma once

#include "preelimination_world.hpp"
#include "row_set.hpp"
#include "world_rows.hpp"

#include <cstdint>
#include <vector>

namespace steel {

// Per-thread buffers for one derived world; grown before the parallel part of a solve, so the
// solve itself allocates nothing. The arithmetic is in preelimination_world.hpp.
template <class Real> struct PreeliminationWorkspace {
    // The derived world (rows of C only, each one block [0, n)).
    std::vector<uint32_t> block_offset, block_length;
    std::vector<uint64_t> value_offset;
    std::vector<Real> jacobian, response, unconstrained_velocity;
    std::vector<Real> bias, lower, upper, friction, regularization, initial_impulse, jy, cross_01,
        cross_10;
    std::vector<int32_t> kind, normal_row;
    // Index maps and the elimination.
    std::vector<uint32_t> kept_rows, bilateral_rows, kept_index; // kept_index: world row -> C
    std::vector<Real> schur, solved; // b x m (preelimination_world.hpp), b
    std::vector<Real> kept_impulse;  // the derived world's impulses (c)

    // Room for any world of at most `rows` rows and `dofs` DOFs whose products fit `room`.
    void reserve(uint32_t rows, uint32_t dofs, const PreeliminationRoom& room);
    PreeliminationSpace<Real> space();
};

} // namespace steel
