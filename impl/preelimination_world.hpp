// The arithmetic of bilateral pre-elimination (preelimination.hpp) on one world, written once for
// the CPU backend and the CUDA kernels (STEEL_HOST_DEVICE): the derived world is built into and
// recovered from a PreeliminationSpace, plain pointers to room for one world's rows and DOFs,
// which the CPU takes from a thread's workspace and the device from its per-world buffers.
#pragma once

#include "dense_cholesky.hpp"
#include "dense_entry.hpp"
#include "host_device.hpp"
#include "world_rows.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel {

// Room for a world of m rows (b bilateral, c = m - b kept) and n DOFs (sizes in brackets).
template <class Real> struct PreeliminationSpace {
    // The derived world: the kept rows (C), each one block [0, n).
    uint32_t* block_offset;       // [2m]
    uint32_t* block_length;       // [2m]
    uint64_t* value_offset;       // [m + 1]
    Real* jacobian;               // [c n]
    Real* response;               // [c n]
    Real* unconstrained_velocity; // [n]
    Real *bias, *lower, *upper, *friction, *regularization, *initial_impulse, *jy, *cross_01,
        *cross_10;              // [m] each
    int32_t *kind, *normal_row; // [m] each
    // Index maps and the elimination.
    uint32_t *kept_rows, *bilateral_rows, *kept_index; // [m] each; kept_index: world row -> C
    Real* schur;        // [b m]: S (b x b), factored, then S^-1 (J_B . Y_j) for each kept row
    Real* solved;       // [m]
    Real* kept_impulse; // [m]: the derived world's impulses
};

// The least regularization of an eliminated bilateral row, relative to its own S_qq (schur_shift).
template <class Real> STEEL_HOST_DEVICE constexpr Real elimination_floor() {
    return sizeof(Real) == 4 ? Real(1e-5) : Real(1e-10);
}

// The room a world of m rows, b of them bilateral, and n DOFs needs in the two arrays whose
// size is a product: none when b = 0, since such a world is not pre-eliminated.
struct PreeliminationRoom {
    uint64_t kept_values = 0; // J' and Y' each: c n
    uint64_t schur = 0;       // S and the kept rows' S^-1 (J_B . Y_j): b b + c b = b m
};

inline PreeliminationRoom preelimination_room(uint32_t m, uint32_t b, uint32_t n) {
    PreeliminationRoom room;
    if (b == 0) return room;
    room.kept_values = uint64_t(m - b) * n;
    room.schur = uint64_t(b) * m;
    return room;
}

// How many rows of the world are bilateral (pre-elimination applies when > 0).
template <class Real>
STEEL_HOST_DEVICE inline uint32_t bilateral_row_count(const WorldRows<Real>& rows) {
    uint32_t count = 0;
    for (uint32_t i = 0; i < rows.row_count; ++i)
        count += rows.kind[i] == STEEL_ROW_BILATERAL;
    return count;
}

// The derived world of c kept rows over n DOFs held in the space.
template <class Real>
STEEL_HOST_DEVICE inline WorldRows<Real> derived_world_rows(const PreeliminationSpace<Real>& ws,
                                                            uint32_t c, uint32_t n) {
    WorldRows<Real> out{};
    out.dof_count = n;
    out.row_count = c;
    out.unconstrained_velocity = ws.unconstrained_velocity;
    out.block_offset = ws.block_offset;
    out.block_length = ws.block_length;
    out.value_offset = ws.value_offset;
    out.jacobian = ws.jacobian;
    out.response = ws.response;
    out.bias = ws.bias;
    out.kind = ws.kind;
    out.lower = ws.lower;
    out.upper = ws.upper;
    out.normal_row = ws.normal_row;
    out.friction = ws.friction;
    out.regularization = ws.regularization;
    out.initial_impulse = ws.initial_impulse;
    out.jy = ws.jy;
    out.cone_cross_01 = ws.cross_01;
    out.cone_cross_10 = ws.cross_10;
    return out;
}

template <class Real>
STEEL_HOST_DEVICE inline Real dense_dot(const Real* a, const Real* b, uint32_t n) {
    Real sum = 0;
    for (uint32_t k = 0; k < n; ++k)
        sum += a[k] * b[k];
    return sum;
}

// The build of the derived world, in steps that the device spreads over a warp
// (preelimination_kernel.cuh) and the CPU runs in order (build_preeliminated_world). Every value
// is computed by one call from its inputs alone, so both give the same bits.

// Step 1: the index maps. Returns b, the number of bilateral rows (c = m - b are kept).
template <class Real>
STEEL_HOST_DEVICE inline uint32_t index_preeliminated_rows(const WorldRows<Real>& rows,
                                                           const PreeliminationSpace<Real>& ws) {
    uint32_t b = 0, c = 0;
    for (uint32_t i = 0; i < rows.row_count; ++i) {
        if (rows.kind[i] == STEEL_ROW_BILATERAL) {
            ws.bilateral_rows[b++] = i;
        } else {
            ws.kept_index[i] = c;
            ws.kept_rows[c++] = i;
        }
    }
    return b;
}

// Step 2, for each q < b: column q of S = A_BB = J_B Y_B^T.
template <class Real>
STEEL_HOST_DEVICE inline void build_schur_column(const WorldRows<Real>& rows,
                                                 const PreeliminationSpace<Real>& ws, uint32_t b,
                                                 uint32_t q) {
    const uint32_t row_q = ws.bilateral_rows[q];
    for (uint32_t p = 0; p < b; ++p)
        ws.schur[size_t(p) * b + q] = dense_entry(rows, ws.bilateral_rows[p], row_q);
}

// Step 3: S_qq += r_q, factored; then the eliminated v-hat' = v-hat - Y_B S^-1 (J_B v-hat + b_B),
// with S^-1 (J_B v-hat + b_B) left in ws.solved. Returns false if S cannot be factored, which
// only non-finite data can cause.
// The pieces of step 3 (and of the recovery) that the GPU's warp runs value by value
// (preelimination_kernel.cuh), so that both have the same bits. r_q, added to S's diagonal for
// bilateral row q: its regularization c_q when it has one, so that a soft row stays soft
// (J v + b + c lambda = 0, SPEC 5, as the sweep solves it, without cfm); else cfm. Either is
// floored by elimination_floor times the row's own S_qq, so that a redundant set still factors:
// relative to each row, so a row with a small J.Y beside one with a large J.Y (a light link
// beside a heavy base) is softened no more than any other.
template <class Real>
STEEL_HOST_DEVICE inline Real schur_shift(Real regularization, Real cfm, Real own_diagonal) {
    const Real floor = elimination_floor<Real>() * own_diagonal;
    const Real shift = regularization > Real(0) ? regularization : cfm;
    return shift < floor ? floor : shift;
}

// J_p x + b_p for bilateral row p (x: v-hat for the elimination, v for the recovery).
template <class Real>
STEEL_HOST_DEVICE inline Real bilateral_error(const WorldRows<Real>& rows,
                                              const PreeliminationSpace<Real>& ws, uint32_t p,
                                              const Real* x) {
    return row_dot(rows, ws.bilateral_rows[p], rows.jacobian, x) + rows.bias[ws.bilateral_rows[p]];
}

template <class Real>
STEEL_HOST_DEVICE inline bool factor_schur(const WorldRows<Real>& rows,
                                           const PreeliminationSpace<Real>& ws, uint32_t b,
                                           Real cfm) {
    for (uint32_t q = 0; q < b; ++q) {
        Real& diagonal = ws.schur[size_t(q) * b + q];
        diagonal += schur_shift(rows.regularization[ws.bilateral_rows[q]], cfm, diagonal);
    }
    if (!cholesky_factor_in_place(ws.schur, b)) return false;

    Real* z = ws.solved;
    for (uint32_t p = 0; p < b; ++p)
        z[p] = bilateral_error(rows, ws, p, rows.unconstrained_velocity);
    cholesky_solve_in_place(ws.schur, b, z);
    Real* v_hat = ws.unconstrained_velocity;
    for (uint32_t k = 0; k < rows.dof_count; ++k)
        v_hat[k] = rows.unconstrained_velocity[k];
    for (uint32_t p = 0; p < b; ++p)
        row_axpy(rows, ws.bilateral_rows[p], rows.response, -z[p], v_hat);
    return true;
}

// Step 4, for each kept row k < c: its dense J, its projected Y' = Y_j - Y_B S^-1 (J_B . Y_j)
// and its scalars. S^-1 (J_B . Y_j) goes to b values of the room after S in ws.schur (b m - b^2
// = c b), one stretch per kept row.
template <class Real>
STEEL_HOST_DEVICE inline void build_kept_row(const WorldRows<Real>& rows,
                                             const PreeliminationSpace<Real>& ws, uint32_t b,
                                             uint32_t k) {
    const uint32_t n = rows.dof_count, j = ws.kept_rows[k];
    Real* jacobian = ws.jacobian + size_t(k) * n;
    Real* response = ws.response + size_t(k) * n;
    for (uint32_t d = 0; d < n; ++d)
        jacobian[d] = response[d] = Real(0);
    row_axpy(rows, j, rows.jacobian, Real(1), jacobian);
    row_axpy(rows, j, rows.response, Real(1), response);
    Real* z = ws.schur + size_t(b) * b + size_t(k) * b;
    for (uint32_t p = 0; p < b; ++p)
        z[p] = dense_entry(rows, ws.bilateral_rows[p], j);
    cholesky_solve_in_place(ws.schur, b, z);
    for (uint32_t p = 0; p < b; ++p)
        row_axpy(rows, ws.bilateral_rows[p], rows.response, -z[p], response);

    ws.block_offset[2 * k] = 0;
    ws.block_offset[2 * k + 1] = 0;
    ws.block_length[2 * k] = n;
    ws.block_length[2 * k + 1] = 0;
    ws.value_offset[k] = uint64_t(k) * n;
    ws.bias[k] = rows.bias[j];
    ws.kind[k] = rows.kind[j];
    ws.lower[k] = rows.lower[j];
    ws.upper[k] = rows.upper[j];
    ws.friction[k] = rows.friction[j];
    ws.regularization[k] = rows.regularization[j];
    ws.initial_impulse[k] = rows.initial_impulse[j];
    // Normal rows are never bilateral, so they are kept.
    ws.normal_row[k] = rows.normal_row[j] >= 0 ? int32_t(ws.kept_index[rows.normal_row[j]]) : -1;
    ws.jy[k] = dense_dot(jacobian, response, n);
}

// Step 5, once every kept row is built: the cross terms of the cone pair that starts at kept row
// k (the rows of a pair are never bilateral, so they stay next to each other).
template <class Real>
STEEL_HOST_DEVICE inline void set_kept_cone_cross_terms(const PreeliminationSpace<Real>& ws,
                                                        uint32_t k, uint32_t n) {
    const Real* j0 = ws.jacobian + size_t(k) * n;
    const Real* j1 = j0 + n;
    const Real* y0 = ws.response + size_t(k) * n;
    const Real* y1 = y0 + n;
    ws.cross_01[k] = dense_dot(j0, y1, n);
    ws.cross_10[k] = dense_dot(j1, y0, n);
}

// The end of the value offsets, and the cross terms: 0 except at each cone pair's first row, as
// an upload leaves them (the workspace is reused, so every entry is written).
template <class Real>
STEEL_HOST_DEVICE inline void finish_kept_rows(const PreeliminationSpace<Real>& ws, uint32_t c,
                                               uint32_t n) {
    ws.value_offset[c] = uint64_t(c) * n;
    for (uint32_t k = 0; k < c; ++k)
        ws.cross_01[k] = ws.cross_10[k] = 0;
    for (uint32_t k = 0; k + 1 < c; ++k)
        if (ws.kind[k] == STEEL_ROW_FRICTION_CONE) {
            set_kept_cone_cross_terms(ws, k, n);
            ++k; // its partner
        }
}

// Builds the derived world of C rows in ws and returns a view of it in out. Returns false (and
// builds nothing usable) if S cannot be factored, which only non-finite data can cause.
template <class Real>
STEEL_HOST_DEVICE inline bool build_preeliminated_world(const WorldRows<Real>& rows, Real cfm,
                                                        const PreeliminationSpace<Real>& ws,
                                                        WorldRows<Real>& out) {
    const uint32_t b = index_preeliminated_rows(rows, ws), c = rows.row_count - b;
    for (uint32_t q = 0; q < b; ++q)
        build_schur_column(rows, ws, b, q);
    if (!factor_schur(rows, ws, b, cfm)) return false;
    for (uint32_t k = 0; k < c; ++k)
        build_kept_row(rows, ws, b, k);
    finish_kept_rows(ws, c, rows.dof_count);
    out = derived_world_rows(ws, c, rows.dof_count);
    return true;
}

// From the derived world's impulses (ws.kept_impulse), writes every row's impulse (C copied, B
// recovered) and the world's velocity v-hat + Y lambda with the original rows.
template <class Real>
STEEL_HOST_DEVICE inline void recover_bilateral_impulses(const WorldRows<Real>& rows,
                                                         const PreeliminationSpace<Real>& ws,
                                                         Real* impulse, Real* velocity) {
    const uint32_t m = rows.row_count, n = rows.dof_count;
    uint32_t b = 0, c = 0;
    for (uint32_t k = 0; k < n; ++k)
        velocity[k] = rows.unconstrained_velocity[k];
    for (uint32_t i = 0; i < m; ++i) {
        if (rows.kind[i] == STEEL_ROW_BILATERAL) {
            ++b;
        } else {
            impulse[i] = ws.kept_impulse[c++];
            row_axpy(rows, i, rows.response, impulse[i], velocity); // v-hat + Y_C lambda_C
        }
    }
    // lambda_B = -S^-1 (J_B (v-hat + Y_C lambda_C) + b_B), then v += Y_B lambda_B.
    Real* z = ws.solved;
    for (uint32_t p = 0; p < b; ++p)
        z[p] = -bilateral_error(rows, ws, p, velocity);
    cholesky_solve_in_place(ws.schur, b, z);
    for (uint32_t p = 0; p < b; ++p) {
        impulse[ws.bilateral_rows[p]] = z[p];
        row_axpy(rows, ws.bilateral_rows[p], rows.response, z[p], velocity);
    }
}

} // namespace steel
