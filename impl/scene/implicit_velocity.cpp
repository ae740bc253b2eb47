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

void add_velocity_product_derivative(const ArticulationModel& model, const Kinematics& kin,
                                     const double* qd, double scale, double* out,
                                     ImplicitVelocityScratch& scratch) {
    // c is inverse dynamics at qdd = 0 without gravity or external forces: per body
    //     v_i = v_p + S_i qd_i,   a_i = a_p + b_i,   f_i = I_i a_i + v_i x* (I_i v_i),
    //     tau_l = S_l . (sum of f over the subtree of l's body),
    // with the bias b_i = v_i x (S_i qd_i) (revolute, prismatic) or (0, o_dot_i x w_i) (ball,
    // free; o_dot_i the velocity of the joint origin, w_i the joint's angular rate). Column k of
    // D is the derivative of tau along e_k. With k a DOF of body j, dv_i = S_k for every body i
    // of j's subtree and 0 elsewhere, so the tangents db, da, df vanish outside that subtree, and
    // the ancestors of j only pass j's summed df up.
    const uint32_t n = model.dof_count();
    const uint32_t count = uint32_t(model.joints.size());
    std::vector<Spatial>& velocity = scratch.velocity;
    std::vector<Spatial>& joint_rate = scratch.joint_rate;
    std::vector<Spatial>& momentum = scratch.momentum;
    std::vector<Vec3>& origin_velocity = scratch.origin_velocity;
    std::vector<Spatial>& acceleration = scratch.tangent_acceleration;
    std::vector<Spatial>& force = scratch.tangent_force;
    std::vector<uint32_t>& subtree = scratch.subtree;
    std::vector<uint8_t>& inside = scratch.inside;
    velocity.resize(count);
    joint_rate.resize(count);
    momentum.resize(count);
    origin_velocity.resize(count);
    acceleration.resize(count);
    force.resize(count);
    inside.resize(count);
    // The base point's velocities, shared by all columns.
    for (uint32_t i = 0; i < count; ++i) {
        Spatial rate;
        for (uint32_t k = model.dof_offset[i]; k < model.dof_offset[i + 1]; ++k)
            rate = rate + qd[k] * kin.subspace[k];
        const int32_t parent = model.joints[i].parent;
        joint_rate[i] = rate;
        velocity[i] = (parent < 0 ? Spatial{} : velocity[size_t(parent)]) + rate;
        momentum[i] = kin.body_inertia[i] * velocity[i];
        origin_velocity[i] = point_velocity(velocity[i], kin.joint_origin[i]);
    }
    for (uint32_t j = 0; j < count; ++j) {
        if (model.dof_offset[j] == model.dof_offset[j + 1]) continue;
        // j's subtree in increasing order (parents before children); the model need not list
        // bodies depth-first, so it is marked rather than taken as a range.
        subtree.clear();
        subtree.push_back(j);
        inside[j] = 1;
        for (uint32_t i = j + 1; i < count; ++i) {
            const int32_t parent = model.joints[i].parent;
            inside[i] = parent >= int32_t(j) && inside[size_t(parent)];
            if (inside[i]) subtree.push_back(i);
        }
        for (uint32_t k = model.dof_offset[j]; k < model.dof_offset[j + 1]; ++k) {
            const Spatial& column = kin.subspace[k]; // dv_i of every body of the subtree
            for (const uint32_t i : subtree) {
                const JointType type = model.joints[i].type;
                Spatial bias; // d b_i
                if (type == JointType::revolute || type == JointType::prismatic) {
                    bias = cross_motion(column, joint_rate[i]);
                    if (i == j) bias = bias + cross_motion(velocity[i], column);
                } else if (type == JointType::ball || type == JointType::free) {
                    Vec3 linear =
                        cross(point_velocity(column, kin.joint_origin[i]), joint_rate[i].angular);
                    if (i == j) linear = linear + cross(origin_velocity[i], column.angular);
                    bias = {{}, linear};
                }
                const Inertia& inertia = kin.body_inertia[i];
                acceleration[i] =
                    i == j ? bias : acceleration[size_t(model.joints[i].parent)] + bias;
                force[i] = inertia * acceleration[i] + cross_force(column, momentum[i]) +
                           cross_force(velocity[i], inertia * column);
            }
            for (size_t s = subtree.size(); s-- > 0;) {
                const uint32_t i = subtree[s];
                for (uint32_t l = model.dof_offset[i]; l < model.dof_offset[i + 1]; ++l)
                    out[size_t(l) * n + k] += scale * dot(kin.subspace[l], force[i]);
                if (i != j) {
                    Spatial& parent_force = force[size_t(model.joints[i].parent)];
                    parent_force = parent_force + force[i];
                }
            }
            for (int32_t a = model.joints[j].parent; a >= 0; a = model.joints[size_t(a)].parent)
                for (uint32_t l = model.dof_offset[size_t(a)]; l < model.dof_offset[size_t(a) + 1];
                     ++l)
                    out[size_t(l) * n + k] += scale * dot(kin.subspace[l], force[j]);
        }
    }
}

bool free_body_at_com(const ArticulationModel& model) {
    if (model.joints.size() != 1 || model.joints[0].type != JointType::free) return false;
    const Vec3 origin = model.joints[0].child_frame.position, com = model.bodies[0].com;
    return origin.x == com.x && origin.y == com.y && origin.z == com.z;
}

bool solve_implicit_velocity(const ArticulationModel& model, const Kinematics& kin,
                             const double* qd, const std::vector<double>& augmented_mass, double dt,
                             double* force, ImplicitVelocityScratch& scratch) {
    const uint32_t n = model.dof_count();
    scratch.system.assign(augmented_mass.begin(), augmented_mass.begin() + long(n) * n);
    // A free body jointed at its com has no velocity products but its gyroscopic torque: D is
    // G, exactly and in closed form.
    if (free_body_at_com(model))
        add_gyroscopic_derivative(model, kin, qd, dt, scratch.system.data(), scratch);
    else
        add_velocity_product_derivative(model, kin, qd, dt, scratch.system.data(), scratch);
    scratch.pivot.resize(n);
    if (!lu_factor(scratch.system.data(), n, scratch.pivot.data())) return false;
    lu_solve(scratch.system.data(), n, scratch.pivot.data(), force);
    return true;
}

} // namespace steel::scene
