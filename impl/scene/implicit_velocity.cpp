#include "implicit_velocity.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace steel::scene {

namespace {

// A pivot below this fraction of the system's largest entry is treated as zero.
constexpr double kPivotFloor = 1e-13;

// LU factorization with partial pivoting of the row-major n x n `a` in place; pivot[k] is the
// row swapped into row k. False when a pivot is not finite or falls below the floor.
bool lu_factor(double* a, uint32_t n, uint32_t* pivot) {
    double largest = 0;
    for (size_t k = 0; k < size_t(n) * n; ++k)
        largest = std::max(largest, std::fabs(a[k]));
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
        for (uint32_t i = j + 1; i < n; ++i) {
            const double factor = a[size_t(i) * n + j] / diagonal;
            a[size_t(i) * n + j] = factor;
            for (uint32_t k = j + 1; k < n; ++k)
                a[size_t(i) * n + k] -= factor * a[size_t(j) * n + k];
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

void gyroscopic_derivative(const ArticulationModel& model, const Kinematics& kin, const double* qd,
                           double* derivative, ImplicitVelocityScratch& scratch) {
    const uint32_t n = model.dof_count();
    std::fill(derivative, derivative + size_t(n) * n, 0.0);
    std::vector<uint32_t>& path = scratch.path;
    for (uint32_t body = 0; body < model.joints.size(); ++body) {
        // The DOFs that turn this body, and its angular velocity.
        path.clear();
        Vec3 w;
        for (int32_t j = int32_t(body); j >= 0; j = model.joints[size_t(j)].parent)
            for (uint32_t k = model.dof_offset[size_t(j)]; k < model.dof_offset[size_t(j) + 1];
                 ++k) {
                path.push_back(k);
                w = w + qd[k] * kin.subspace[k].angular;
            }
        // d(w x Ic w)/dw = [w]x Ic - [Ic w]x, applied to each DOF's angular column.
        const Mat3& inertia = kin.body_inertia[body].inertia;
        const Vec3 momentum = inertia * w;
        for (const uint32_t b : path) {
            const Vec3 column = kin.subspace[b].angular;
            const Vec3 torque_rate = cross(w, inertia * column) - cross(momentum, column);
            for (const uint32_t a : path)
                derivative[size_t(a) * n + b] += dot(kin.subspace[a].angular, torque_rate);
        }
    }
}

bool solve_implicit_velocity(const ArticulationModel& model, const Kinematics& kin,
                             const double* qd, const std::vector<double>& augmented_mass, double dt,
                             double* force, ImplicitVelocityScratch& scratch) {
    const uint32_t n = model.dof_count();
    scratch.system.resize(size_t(n) * n);
    gyroscopic_derivative(model, kin, qd, scratch.system.data(), scratch);
    for (size_t k = 0; k < size_t(n) * n; ++k)
        scratch.system[k] = augmented_mass[k] + dt * scratch.system[k];
    scratch.pivot.resize(n);
    if (!lu_factor(scratch.system.data(), n, scratch.pivot.data())) return false;
    lu_solve(scratch.system.data(), n, scratch.pivot.data(), force);
    return true;
}

} // namespace steel::scene
