// Articulation dynamics (impl/scene/articulation.*) against independent truths: the mass matrix
// from CRBA equals the one from unit-acceleration inverse dynamics, kinetic energy computed body
// by body, point Jacobians against finite differences of forward kinematics, and energy
// conservation of the bias forces.
#include "scene/articulation.hpp"
#include "scene/implicit_velocity.hpp"

#include "rows_scenes.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace steel::scene;

namespace {

double uniform(std::mt19937_64& rng, double lo, double hi) {
    return lo + (hi - lo) * scenes::uniform01(rng);
}
Vec3 random_vec(std::mt19937_64& rng, double scale) {
    return {uniform(rng, -scale, scale), uniform(rng, -scale, scale), uniform(rng, -scale, scale)};
}
Quat random_quat(std::mt19937_64& rng) {
    return normalized({scenes::normal01(rng), scenes::normal01(rng), scenes::normal01(rng),
                       scenes::normal01(rng)});
}

// A random tree: a free root, then revolute, prismatic and ball joints on random parents.
ArticulationModel random_tree(std::mt19937_64& rng, uint32_t count) {
    ArticulationModel model;
    for (uint32_t i = 0; i < count; ++i) {
        BodyModel body;
        body.mass = uniform(rng, 0.5, 3.0);
        body.com = random_vec(rng, 0.2);
        const Vec3 d{uniform(rng, 0.05, 0.4), uniform(rng, 0.05, 0.4), uniform(rng, 0.05, 0.4)};
        const Mat3 r = rotation(random_quat(rng));
        Mat3 diagonal;
        diagonal(0, 0) = d.x;
        diagonal(1, 1) = d.y;
        diagonal(2, 2) = d.z;
        body.inertia = r * diagonal * transpose(r);
        model.bodies.push_back(body);
        JointModel joint;
        if (i == 0) {
            joint.type = JointType::free;
        } else {
            const JointType kinds[] = {JointType::revolute, JointType::prismatic, JointType::ball,
                                       JointType::revolute};
            joint.type = kinds[rng() % 4];
            joint.parent = int32_t(rng() % i);
        }
        const Vec3 axis = random_vec(rng, 1.0);
        joint.axis = (1.0 / norm(axis)) * axis;
        joint.parent_frame = {random_vec(rng, 0.5), random_quat(rng)};
        joint.child_frame = {random_vec(rng, 0.3), random_quat(rng)};
        model.joints.push_back(joint);
    }
    model.finalize();
    return model;
}

std::vector<double> random_q(const ArticulationModel& model, std::mt19937_64& rng) {
    std::vector<double> q(model.position_count());
    for (uint32_t i = 0; i < model.joints.size(); ++i) {
        double* p = q.data() + model.position_offset[i];
        switch (model.joints[i].type) {
        case JointType::revolute:
        case JointType::prismatic:
            p[0] = uniform(rng, -1, 1);
            break;
        case JointType::free: {
            const Vec3 x = random_vec(rng, 1.0);
            p[0] = x.x, p[1] = x.y, p[2] = x.z;
            p += 3;
        }
            [[fallthrough]];
        case JointType::ball: {
            const Quat r = random_quat(rng);
            p[0] = r.w, p[1] = r.x, p[2] = r.y, p[3] = r.z;
            break;
        }
        default:
            break;
        }
    }
    return q;
}

std::vector<double> random_qd(const ArticulationModel& model, std::mt19937_64& rng) {
    std::vector<double> qd(model.dof_count());
    for (double& value : qd)
        value = uniform(rng, -1, 1);
    return qd;
}

double kinetic_energy_from_bodies(const ArticulationModel& model, const Kinematics& kin,
                                  const std::vector<double>& qd) {
    const std::vector<Spatial> velocity = body_velocities(model, kin, qd);
    double energy = 0;
    for (size_t i = 0; i < model.joints.size(); ++i) {
        const Inertia& body = kin.body_inertia[i];
        const Vec3 vc = point_velocity(velocity[i], body.com);
        energy += 0.5 * body.mass * dot(vc, vc) +
                  0.5 * dot(velocity[i].angular, body.inertia * velocity[i].angular);
    }
    return energy;
}

double quadratic(const std::vector<double>& h, const std::vector<double>& x) {
    const size_t n = x.size();
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
            sum += x[i] * h[i * n + j] * x[j];
    return sum;
}

} // namespace

TEST_CASE("the CRBA mass matrix equals unit-acceleration inverse dynamics, column by column") {
    std::mt19937_64 rng(1);
    for (uint32_t trial = 0; trial < 20; ++trial) {
        const ArticulationModel model = random_tree(rng, 1 + trial % 7);
        const std::vector<double> q = random_q(model, rng);
        const Kinematics kin = forward_kinematics(model, q);
        const std::vector<double> h = mass_matrix(model, kin);
        const uint32_t n = model.dof_count();
        const std::vector<double> zero(n, 0.0);
        for (uint32_t k = 0; k < n; ++k) {
            std::vector<double> unit(n, 0.0);
            unit[k] = 1;
            const std::vector<double> column = inverse_dynamics(model, kin, zero, unit, {}, {});
            for (uint32_t i = 0; i < n; ++i)
                CHECK(h[size_t(i) * n + k] == doctest::Approx(column[i]).epsilon(1e-10));
        }
    }
}

TEST_CASE("qd' H qd / 2 is the kinetic energy summed body by body") {
    std::mt19937_64 rng(2);
    for (uint32_t trial = 0; trial < 20; ++trial) {
        const ArticulationModel model = random_tree(rng, 1 + trial % 6);
        const std::vector<double> q = random_q(model, rng);
        const std::vector<double> qd = random_qd(model, rng);
        const Kinematics kin = forward_kinematics(model, q);
        const std::vector<double> h = mass_matrix(model, kin);
        CHECK(0.5 * quadratic(h, qd) ==
              doctest::Approx(kinetic_energy_from_bodies(model, kin, qd)).epsilon(1e-12));
    }
}

TEST_CASE("point Jacobians match finite differences of forward kinematics") {
    std::mt19937_64 rng(3);
    for (uint32_t trial = 0; trial < 20; ++trial) {
        const ArticulationModel model = random_tree(rng, 1 + trial % 6);
        const std::vector<double> q = random_q(model, rng);
        const std::vector<double> qd = random_qd(model, rng);
        const Kinematics kin = forward_kinematics(model, q);
        const int32_t body = int32_t(rng() % model.joints.size());
        const Vec3 local = random_vec(rng, 0.5);
        const Vec3 point = apply(kin.body_pose[body], local);
        const Vec3 direction = {0.3, -0.5, 0.8};
        std::vector<double> row(model.dof_count(), 0.0);
        point_jacobian(model, kin, body, point, direction, row.data());
        double predicted = 0;
        for (size_t k = 0; k < row.size(); ++k)
            predicted += row[k] * qd[k];
        // Central difference of the point's position along qd.
        const double h = 1e-6;
        std::vector<double> ahead = q, behind = q;
        integrate_positions(model, kin, ahead, qd, h);
        integrate_positions(model, kin, behind, qd, -h);
        const Vec3 moved = apply(forward_kinematics(model, ahead).body_pose[body], local);
        const Vec3 back = apply(forward_kinematics(model, behind).body_pose[body], local);
        CHECK(dot(direction, (1.0 / (2 * h)) * (moved - back)) ==
              doctest::Approx(predicted).epsilon(1e-6));
    }
}

TEST_CASE("the bias forces conserve energy: d/dt (qd' H qd / 2) = 0 with qdd = -H^-1 C") {
    std::mt19937_64 rng(4);
    for (uint32_t trial = 0; trial < 10; ++trial) {
        const ArticulationModel model = random_tree(rng, 2 + trial % 5);
        const uint32_t n = model.dof_count();
        const std::vector<double> q = random_q(model, rng);
        const std::vector<double> qd = random_qd(model, rng);
        const auto acceleration = [&](const std::vector<double>& at_q,
                                      const std::vector<double>& at_qd) {
            const Kinematics kin = forward_kinematics(model, at_q);
            std::vector<double> h = mass_matrix(model, kin);
            std::vector<double> qdd =
                inverse_dynamics(model, kin, at_qd, std::vector<double>(n, 0.0), {}, {});
            for (double& value : qdd)
                value = -value;
            REQUIRE(scenes::cholesky_factor(h, n));
            scenes::cholesky_solve(h, n, qdd);
            return qdd;
        };
        const auto energy = [&](const std::vector<double>& at_q, const std::vector<double>& at_qd) {
            return 0.5 * quadratic(mass_matrix(model, forward_kinematics(model, at_q)), at_qd);
        };
        const std::vector<double> qdd = acceleration(q, qd);
        const double h = 1e-5;
        const Kinematics kin = forward_kinematics(model, q);
        std::vector<double> q_ahead = q, q_behind = q, qd_ahead = qd, qd_behind = qd;
        integrate_positions(model, kin, q_ahead, qd, h);
        integrate_positions(model, kin, q_behind, qd, -h);
        for (uint32_t k = 0; k < n; ++k) {
            qd_ahead[k] += h * qdd[k];
            qd_behind[k] -= h * qdd[k];
        }
        const double rate = (energy(q_ahead, qd_ahead) - energy(q_behind, qd_behind)) / (2 * h);
        CHECK(std::fabs(rate) < 1e-5 * (1.0 + energy(q, qd)));
    }
}

TEST_CASE("a free body held against gravity needs exactly its weight, through its centre of mass") {
    ArticulationModel model;
    BodyModel body;
    body.mass = 2.5;
    body.com = {0.1, -0.2, 0.05};
    body.inertia = identity3();
    model.bodies.push_back(body);
    JointModel joint;
    joint.type = JointType::free;
    model.joints.push_back(joint);
    model.finalize();
    std::vector<double> q = {0.3, 0.4, 1.0, 1, 0, 0, 0};
    const Kinematics kin = forward_kinematics(model, q);
    const std::vector<double> tau = inverse_dynamics(
        model, kin, std::vector<double>(6, 0.0), std::vector<double>(6, 0.0), {0, 0, -9.81}, {});
    // Linear DOFs: the force m g upward. Angular DOFs (about the joint origin o): (c - o) x F.
    CHECK(tau[0] == doctest::Approx(0.0));
    CHECK(tau[1] == doctest::Approx(0.0));
    CHECK(tau[2] == doctest::Approx(2.5 * 9.81));
    const Vec3 moment = cross(Vec3{0.1, -0.2, 0.05}, Vec3{0, 0, 2.5 * 9.81});
    CHECK(tau[3] == doctest::Approx(moment.x));
    CHECK(tau[4] == doctest::Approx(moment.y));
    CHECK(tau[5] == doctest::Approx(moment.z));
}

TEST_CASE("the gyroscopic derivative G of a random tree equals central differences of sum Jw^T (w "
          "x Ic w)") {
    // The generalized gyroscopic force g(qd) = sum over bodies of Jw^T (w x Ic w), with each body's
    // angular velocity and angular Jacobian from body_velocities and angular_jacobian; g is
    // quadratic in qd, so central differences give its derivative up to rounding.
    std::mt19937_64 rng(41);
    for (int trial = 0; trial < 20; ++trial) {
        const ArticulationModel model = random_tree(rng, 2 + uint32_t(trial % 6));
        const Kinematics kin = forward_kinematics(model, random_q(model, rng));
        const uint32_t n = model.dof_count();
        std::vector<double> qd(n);
        for (double& v : qd)
            v = uniform(rng, -3, 3);
        const auto gyroscopic_force = [&](const std::vector<double>& at) {
            std::vector<double> force(n, 0.0), row(n);
            const std::vector<Spatial> velocity = body_velocities(model, kin, at);
            for (uint32_t b = 0; b < model.joints.size(); ++b) {
                const Vec3 w = velocity[b].angular;
                const Vec3 torque = cross(w, kin.body_inertia[b].inertia * w);
                const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
                const double parts[3] = {torque.x, torque.y, torque.z};
                for (int k = 0; k < 3; ++k) {
                    std::fill(row.begin(), row.end(), 0.0);
                    angular_jacobian(model, kin, int32_t(b), axes[k], row.data());
                    for (uint32_t i = 0; i < n; ++i)
                        force[i] += row[i] * parts[k];
                }
            }
            return force;
        };
        std::vector<double> derivative(size_t(n) * n, 0.0);
        ImplicitVelocityScratch scratch;
        add_gyroscopic_derivative(model, kin, qd.data(), 1.0, derivative.data(), scratch);
        double worst = 0, largest = 0;
        for (uint32_t k = 0; k < n; ++k) {
            std::vector<double> plus = qd, minus = qd;
            plus[k] += 1.0;
            minus[k] -= 1.0;
            const std::vector<double> up = gyroscopic_force(plus), down = gyroscopic_force(minus);
            for (uint32_t i = 0; i < n; ++i) {
                const double expected = (up[i] - down[i]) / 2.0;
                worst = std::max(worst, std::fabs(derivative[size_t(i) * n + k] - expected));
                largest = std::max(largest, std::fabs(expected));
            }
        }
        CHECK(largest > 0.1);
        CHECK(worst < 1e-12 * largest * n);
    }
}

TEST_CASE("the implicit velocity step leaves the force alone and reports it when H~ + dt G cannot "
          "be factored") {
    std::mt19937_64 rng(43);
    const ArticulationModel model = random_tree(rng, 3);
    const Kinematics kin = forward_kinematics(model, random_q(model, rng));
    const uint32_t n = model.dof_count();
    const std::vector<double> qd(n, 0.5), zero_mass(size_t(n) * n, 0.0);
    std::vector<double> force(n, 1.25);
    ImplicitVelocityScratch scratch;
    CHECK_FALSE(
        solve_implicit_velocity(model, kin, qd.data(), zero_mass, 1.0 / 60, force.data(), scratch));
    CHECK(force == std::vector<double>(n, 1.25));
    // A proper H~ factors, and the solve satisfies (H~ + dt G) x = force.
    const std::vector<double> mass = mass_matrix(model, kin);
    CHECK(solve_implicit_velocity(model, kin, qd.data(), mass, 1.0 / 60, force.data(), scratch));
    std::vector<double> system = mass;
    add_gyroscopic_derivative(model, kin, qd.data(), 1.0 / 60, system.data(), scratch);
    for (uint32_t i = 0; i < n; ++i) {
        double sum = 0;
        for (uint32_t k = 0; k < n; ++k)
            sum += system[size_t(i) * n + k] * force[k];
        CHECK(std::fabs(sum - 1.25) < 1e-10);
    }
}
