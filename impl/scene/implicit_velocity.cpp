#include "implicit_velocity.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace steel::scene {

namespace {

// A pivot below this fraction of the system's largest diagonal entry is treated as zero.
constexpr double kPivotFloor = 1e-13;

// LU factorization with partial pivoting of the row-major n x n `a` in place; pivot[k] is the
// row swapped into row k. False when a pivot is not finite or falls below the floor.
bool lu_factor(double* a, uint32_t n, uint32_t* pivot) {
    // The scale pivots are measured against: H~'s diagonal dominates its rows (it is positive
    // definite) and dt D is a correction to it.
    double largest = 0;
    for (uint32_t k = 0; k < n; ++k)
        largest = std::max(largest, std::fabs(a[size_t(k) * n + k]));
    if (!std::isfinite(largest) || largest == 0) return false;
    for (uint32_t j = 0; j < n; ++j) {
        uint32_t best = j;
        for (uint32_t i = j + 1; i < n; ++i)
            if (std::fabs(a[size_t(i) * n + j]) > std::fabs(a[size_t(best) * n + j])) best = i;
        pivot[j] = best;
        if (best != j)
            for (uint32_t k = 0; k < n; ++k)
                std::swap(a[size_t(j) * n + k], a[size_t(best) * n + k]);
        const double diagonal = a[size_t(j) * n + j];
        if (!(std::fabs(diagonal) > kPivotFloor * largest) || !std::isfinite(diagonal))
            return false;
        const double* __restrict pivot_row = a + size_t(j) * n;
        for (uint32_t i = j + 1; i < n; ++i) {
            double* __restrict row = a + size_t(i) * n; // another row than pivot_row
            const double factor = row[j] / diagonal;
            row[j] = factor;
            for (uint32_t k = j + 1; k < n; ++k)
                row[k] -= factor * pivot_row[k];
        }
    }
    return true;
}

// Solves with the factors of lu_factor, x in place.
void lu_solve(const double* lu, uint32_t n, const uint32_t* pivot, double* x) {
    for (uint32_t j = 0; j < n; ++j)
        std::swap(x[j], x[pivot[j]]);
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t k = 0; k < i; ++k)
            x[i] -= lu[size_t(i) * n + k] * x[k];
    for (uint32_t i = n; i-- > 0;) {
        for (uint32_t k = i + 1; k < n; ++k)
            x[i] -= lu[size_t(i) * n + k] * x[k];
        x[i] /= lu[size_t(i) * n + i];
    }
}

} // namespace

void add_gyroscopic_derivative(const ArticulationModel& model, const Kinematics& kin,
                               const double* qd, double scale, double* out,
                               ImplicitVelocityScratch& scratch) {
    const uint32_t n = model.dof_count();
    std::vector<uint32_t>& path = scratch.path;
    std::vector<Vec3>& columns = scratch.columns;
    for (uint32_t body = 0; body < model.joints.size(); ++body) {
        // The DOFs that turn this body (sliding ones have no angular column), and its angular
        // velocity.
        path.clear();
        columns.clear();
        Vec3 w;
        for (int32_t j = int32_t(body); j >= 0; j = model.joints[size_t(j)].parent)
            for (uint32_t k = model.dof_offset[size_t(j)]; k < model.dof_offset[size_t(j) + 1];
                 ++k) {
                const Vec3 column = kin.subspace[k].angular;
                if (column.x == 0 && column.y == 0 && column.z == 0) continue;
                path.push_back(k);
                columns.push_back(column);
                w = w + qd[k] * column;
            }
        // d(w x Ic w)/dw = [w]x Ic - [Ic w]x, applied to each DOF's angular column.
        const Mat3& inertia = kin.body_inertia[body].inertia;
        const Vec3 momentum = inertia * w;
        for (size_t b = 0; b < path.size(); ++b) {
            const Vec3 torque_rate = cross(w, inertia * columns[b]) - cross(momentum, columns[b]);
            for (size_t a = 0; a < path.size(); ++a)
                out[size_t(path[a]) * n + path[b]] += scale * dot(columns[a], torque_rate);
        }
    }
}

bool solve_implicit_velocity(const ArticulationModel& model, const Kinematics& kin,
                             const double* qd, const std::vector<double>& augmented_mass, double dt,
                             double* force, ImplicitVelocityScratch& scratch) {
    const uint32_t n = model.dof_count();
    scratch.system.assign(augmented_mass.begin(), augmented_mass.begin() + long(n) * n);
    add_gyroscopic_derivative(model, kin, qd, dt, scratch.system.data(), scratch);
    scratch.pivot.resize(n);
    if (!lu_factor(scratch.system.data(), n, scratch.pivot.data())) return false;
    lu_solve(scratch.system.data(), n, scratch.pivot.data(), force);
    return true;
}

} // namespace steel::scene
