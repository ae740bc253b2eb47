#include "preelimination.hpp"

#include "dense_cholesky.hpp"
#include "row_update.hpp"

#include <algorithm>
#include <cmath>

namespace steel {

namespace {

template <class Real> Real dense_dot(const Real* a, const Real* b, uint32_t n) {
    Real sum = 0;
    for (uint32_t k = 0; k < n; ++k) sum += a[k] * b[k];
    return sum;
}

template <class Real> constexpr Real elimination_floor() { return sizeof(Real) == 4 ? Real(1e-5) : Real(1e-10); }

} // namespace

template <class Real> void PreeliminationWorkspace<Real>::reserve(uint32_t rows, uint32_t dofs) {
    const size_t m = rows, n = dofs;
    auto grow = [](auto& vector, size_t size) {
        if (vector.size() < size) vector.resize(size);
    };
    grow(block_offset, 2 * m);
    grow(block_length, 2 * m);
    grow(value_offset, m + 1);
    grow(jacobian, m * n);
    grow(response, m * n);
    grow(unconstrained_velocity, n);
    for (auto* vector : {&bias, &lower, &upper, &friction, &regularization, &initial_impulse, &jy, &cross_01, &cross_10,
                         &kept_impulse, &solved})
        grow(*vector, m);
    grow(kind, m);
    grow(normal_row, m);
    grow(kept_rows, m);
    grow(bilateral_rows, m);
    grow(kept_index, m);
    grow(schur, m * m);
    grow(column, n);
}

template <class Real> uint32_t bilateral_row_count(const WorldRows<Real>& rows) {
    uint32_t count = 0;
    for (uint32_t i = 0; i < rows.row_count; ++i) count += rows.kind[i] == STEEL_ROW_BILATERAL;
    return count;
}

template <class Real>
bool build_preeliminated_world(const WorldRows<Real>& rows, Real cfm, PreeliminationWorkspace<Real>& ws,
                               WorldRows<Real>& out) {
    const uint32_t m = rows.row_count, n = rows.dof_count;
    uint32_t b = 0, c = 0;
    for (uint32_t i = 0; i < m; ++i) {
        if (rows.kind[i] == STEEL_ROW_BILATERAL) {
            ws.bilateral_rows[b++] = i;
        } else {
            ws.kept_index[i] = c;
            ws.kept_rows[c++] = i;
        }
    }
    Real* column = ws.column.data();
    Real* s = ws.schur.data();
    std::fill(column, column + n, Real(0));

    // S = A_BB + r I, factored.
    Real largest_diagonal = 0;
    for (uint32_t q = 0; q < b; ++q) {
        row_axpy(rows, ws.bilateral_rows[q], rows.response, Real(1), column);
        for (uint32_t p = 0; p < b; ++p) s[size_t(p) * b + q] = row_dot(rows, ws.bilateral_rows[p], rows.jacobian, column);
        row_axpy(rows, ws.bilateral_rows[q], rows.response, Real(-1), column);
        largest_diagonal = std::max(largest_diagonal, s[size_t(q) * b + q]);
    }
    const Real r = std::max(cfm, elimination_floor<Real>() * largest_diagonal);
    for (uint32_t q = 0; q < b; ++q) s[size_t(q) * b + q] += r;
    if (!cholesky_factor_in_place(s, b)) return false;

    // v-hat' = v-hat - Y_B S^-1 (J_B v-hat + b_B).
    Real* z = ws.solved.data();
    for (uint32_t p = 0; p < b; ++p)
        z[p] = row_dot(rows, ws.bilateral_rows[p], rows.jacobian, rows.unconstrained_velocity) +
               rows.bias[ws.bilateral_rows[p]];
    cholesky_solve_in_place(s, b, z);
    Real* v_hat = ws.unconstrained_velocity.data();
    std::copy(rows.unconstrained_velocity, rows.unconstrained_velocity + n, v_hat);
    for (uint32_t p = 0; p < b; ++p) row_axpy(rows, ws.bilateral_rows[p], rows.response, -z[p], v_hat);

    // Each kept row: dense J, projected Y' = Y_j - Y_B S^-1 (J_B . Y_j), and its scalars.
    for (uint32_t k = 0; k < c; ++k) {
        const uint32_t j = ws.kept_rows[k];
        Real* jacobian = ws.jacobian.data() + size_t(k) * n;
        Real* response = ws.response.data() + size_t(k) * n;
        std::fill(jacobian, jacobian + n, Real(0));
        row_axpy(rows, j, rows.jacobian, Real(1), jacobian);
        row_axpy(rows, j, rows.response, Real(1), column);
        for (uint32_t p = 0; p < b; ++p) z[p] = row_dot(rows, ws.bilateral_rows[p], rows.jacobian, column);
        cholesky_solve_in_place(s, b, z);
        std::copy(column, column + n, response);
        for (uint32_t p = 0; p < b; ++p) row_axpy(rows, ws.bilateral_rows[p], rows.response, -z[p], response);
        row_axpy(rows, j, rows.response, Real(-1), column);

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
    ws.value_offset[c] = uint64_t(c) * n;
    for (uint32_t k = 0; k < c; ++k) {
        ws.cross_01[k] = ws.cross_10[k] = 0;
        if (ws.kind[k] == STEEL_ROW_FRICTION_CONE && k + 1 < c) {
            const Real* j0 = ws.jacobian.data() + size_t(k) * n;
            const Real* j1 = j0 + n;
            const Real* y0 = ws.response.data() + size_t(k) * n;
            const Real* y1 = y0 + n;
            ws.cross_01[k] = dense_dot(j0, y1, n);
            ws.cross_10[k] = dense_dot(j1, y0, n);
            ++k;
        }
    }

    out = WorldRows<Real>{};
    out.dof_count = n;
    out.row_count = c;
    out.unconstrained_velocity = v_hat;
    out.block_offset = ws.block_offset.data();
    out.block_length = ws.block_length.data();
    out.value_offset = ws.value_offset.data();
    out.jacobian = ws.jacobian.data();
    out.response = ws.response.data();
    out.bias = ws.bias.data();
    out.kind = ws.kind.data();
    out.lower = ws.lower.data();
    out.upper = ws.upper.data();
    out.normal_row = ws.normal_row.data();
    out.friction = ws.friction.data();
    out.regularization = ws.regularization.data();
    out.initial_impulse = ws.initial_impulse.data();
    out.jy = ws.jy.data();
    out.cone_cross_01 = ws.cross_01.data();
    out.cone_cross_10 = ws.cross_10.data();
    return true;
}

template <class Real>
void recover_bilateral_impulses(const WorldRows<Real>& rows, PreeliminationWorkspace<Real>& ws,
                                const Real* kept_impulse, Real* impulse, Real* velocity) {
    const uint32_t m = rows.row_count, n = rows.dof_count;
    uint32_t b = 0, c = 0;
    std::copy(rows.unconstrained_velocity, rows.unconstrained_velocity + n, velocity);
    for (uint32_t i = 0; i < m; ++i) {
        if (rows.kind[i] == STEEL_ROW_BILATERAL) {
            ++b;
        } else {
            impulse[i] = kept_impulse[c++];
            row_axpy(rows, i, rows.response, impulse[i], velocity); // v-hat + Y_C lambda_C
        }
    }
    // lambda_B = -S^-1 (J_B (v-hat + Y_C lambda_C) + b_B), then v += Y_B lambda_B.
    Real* z = ws.solved.data();
    for (uint32_t p = 0; p < b; ++p)
        z[p] = -(row_dot(rows, ws.bilateral_rows[p], rows.jacobian, velocity) + rows.bias[ws.bilateral_rows[p]]);
    cholesky_solve_in_place(ws.schur.data(), b, z);
    for (uint32_t p = 0; p < b; ++p) {
        impulse[ws.bilateral_rows[p]] = z[p];
        row_axpy(rows, ws.bilateral_rows[p], rows.response, z[p], velocity);
    }
}

template struct PreeliminationWorkspace<float>;
template struct PreeliminationWorkspace<double>;
template uint32_t bilateral_row_count<float>(const WorldRows<float>&);
template uint32_t bilateral_row_count<double>(const WorldRows<double>&);
template bool build_preeliminated_world<float>(const WorldRows<float>&, float, PreeliminationWorkspace<float>&,
                                               WorldRows<float>&);
template bool build_preeliminated_world<double>(const WorldRows<double>&, double, PreeliminationWorkspace<double>&,
                                                WorldRows<double>&);
template void recover_bilateral_impulses<float>(const WorldRows<float>&, PreeliminationWorkspace<float>&,
                                                const float*, float*, float*);
template void recover_bilateral_impulses<double>(const WorldRows<double>&, PreeliminationWorkspace<double>&,
                                                 const double*, double*, double*);

} // namespace steel
