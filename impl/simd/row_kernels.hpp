// The general sweep on the CPU with SIMD (SPEC section 2): the row dot product J_i.v and the
// update v += Y_i step, over a row's (at most two) DOF blocks, on the instruction set simd_isa()
// names. general_sweep.hpp routes the CPU's sweeps here; the GPU keeps the portable row_dot and
// row_axpy of world_rows.hpp.
//
// Bit-identical on every width. The dot product sums in one canonical order, whatever the
// register width:
//   - kDotLanes = 8 partial sums (a zmm register of doubles, a ymm of floats), all -0 at first
//     (adding a value to -0 gives exactly that value, so a sum's chain starts at its first
//     product and the compiler drops the add; +0 would turn a -0 product into +0);
//   - each block is cut into whole chunks of kDotLanes values from its own start; value k of a
//     chunk adds J*x to partial sum k; block 0's chunks, then block 1's;
//   - the values after a block's last whole chunk (fewer than kDotLanes) are its tail: value j
//     of a block's tail adds J*x to tail sum j mod kTailSums (4 tail sums, -0 at first, kept
//     apart from the partial sums), in order: block 0's tail, then block 1's;
//   - the tail is (tail0 + tail2) + (tail1 + tail3). With no whole chunk in the row, the result
//     is the tail. Otherwise the partial sums are added pairwise, lane l with lane
//     l + kDotLanes/2, then l with l + kDotLanes/4, down to one, and the tail is added last.
// Every step is one IEEE multiply or add (the kernels are compiled with -ffp-contract=off: no
// FMA), so one wide register, two or four narrower ones, or a scalar loop all get the same bits.
// Tails are not zero-padded and masked: no load may read values that the previous row's update
// stored in other pieces (such a load is not forwarded from the stores and waits for them). A
// tail is loaded in pairs (values 2p and 2p + 1, which go to tail sums 2p mod 4 and 2p + 1 mod
// 4, side by side in one pair of sums) and a last odd value, and the update v += Y step stores
// each block in the same pieces. Four tail sums rather than one keep a short row (6 values a free
// body) from being one chain of dependent adds.
//
// The update v += Y step rounds each element on its own, so it equals the portable row_axpy
// exactly. The sweep runs one group (a single row or a cone pair) behind on v (row_kernels.inc):
// a row's rate is its dot product on v before the previous group's steps are added, plus its
// couplings A_i,g times those steps. With the dot product's order (another than the portable
// row_dot's left to right),
// that makes the CPU's general sweep and the portable one agree to rounding, not bit for bit.
#pragma once

#include "../solve_params.hpp"
#include "../sweep_result.hpp"
#include "../sweep_row.hpp"
#include "../world_rows.hpp"

#include <cstdint>

namespace steel::simd {

// The same for both precisions: 16 float lanes would leave rows of 8 to 15 values all tail.
template <class Real> constexpr uint32_t kDotLanes = 8;
// The tail sums of the canonical order.
constexpr uint32_t kTailSums = 4;

// On the instruction set in use (simd_isa.hpp). The solver calls general_sweep_prepared and
// velocity_from_impulses; general_sweep (general_sweep.hpp's host sweep), row_dot and row_axpy
// are there for the tests and other callers.
template <class Real>
SweepResult<Real> general_sweep(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                                Real* impulse, Real* velocity);
// The same sweep from rows prepared for this solve (prepare_general_sweep_rows with the same
// params): the same bits, without forming each row's c, d, 1/d and couplings again.
template <class Real>
SweepResult<Real>
general_sweep_prepared(const WorldRows<Real>& rows, const SolveParams<Real>& params,
                       const SweepRow<Real>* prepared, Real* impulse, Real* velocity);
template <class Real>
void velocity_from_impulses(const WorldRows<Real>& rows, const Real* impulse, Real* velocity);
template <class Real>
Real row_dot(const WorldRows<Real>& rows, uint32_t row, const Real* values, const Real* x);
template <class Real>
void row_axpy(const WorldRows<Real>& rows, uint32_t row, const Real* values, Real scale, Real* x);
// The dense path's A from the table of responses by DOF (dense_table.hpp, fill_dense_by_rows):
// the same bits on every width.
template <class Real> void dense_rows_from_table(const WorldRows<Real>& rows, Real* a, Real* table);

// One copy of each per instruction set (row_kernels_*.cpp).
#define STEEL_DECLARE_ROW_KERNELS(isa, Real)                                                       \
    namespace isa {                                                                                \
    SweepResult<Real> general_sweep(const WorldRows<Real>&, const SolveParams<Real>&, Real*,       \
                                    Real*);                                                        \
    SweepResult<Real> general_sweep_prepared(const WorldRows<Real>&, const SolveParams<Real>&,     \
                                             const SweepRow<Real>*, Real*, Real*);                 \
    void velocity_from_impulses(const WorldRows<Real>&, const Real*, Real*);                       \
    Real row_dot(const WorldRows<Real>&, uint32_t, const Real*, const Real*);                      \
    void row_axpy(const WorldRows<Real>&, uint32_t, const Real*, Real, Real*);                     \
    void dense_rows_from_table(const WorldRows<Real>&, Real*, Real*);                              \
    }
STEEL_DECLARE_ROW_KERNELS(scalar, float)
STEEL_DECLARE_ROW_KERNELS(scalar, double)
STEEL_DECLARE_ROW_KERNELS(avx2, float)
STEEL_DECLARE_ROW_KERNELS(avx2, double)
STEEL_DECLARE_ROW_KERNELS(avx512, float)
STEEL_DECLARE_ROW_KERNELS(avx512, double)
#undef STEEL_DECLARE_ROW_KERNELS

} // namespace steel::simd
