// Scene mode (SPEC 8) against analytic truths: resting and sliding boxes, a resting stack, a
// pendulum against its limit, a closed four-bar loop, mimic joints, augmented drives, and Y
// against a dense inverse of H~.
#include "batch.hpp"
#include "handle_registry.hpp"
#include "scene/scene_rows.hpp"
#include "robot_scenes.hpp"
#include "scene_support.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <variant>

using scenes::BodySpec;
using scenes::SceneBuilder;

namespace {

constexpr double kG = 9.81, kDt = 1.0 / 60.0;

double sum_normal(const test::SceneStep& step, size_t first, size_t count) {
    double total = 0;
    for (size_t c = first; c < first + count; ++c)
        total += step.contacts[6 * c];
    return total;
}

// A revolute pendulum: a rod of `length` hanging from the world origin, swinging about y.
BodySpec pendulum_link(double length, double angle, double rate) {
    BodySpec link;
    link.mass = 1.0;
    link.com = {0, 0, -length};
    link.inertia_diagonal = {1e-3, 1e-3, 1e-3};
    link.joint = STEEL_JOINT_REVOLUTE;
    link.axis = {0, 1, 0};
    link.q = {angle};
    link.qd = {rate};
    return link;
}

// Gauss-Jordan inverse of a dense n x n matrix (independent of the library's Cholesky).
std::vector<double> inverse(std::vector<double> a, uint32_t n) {
    std::vector<double> inv(size_t(n) * n, 0.0);
    for (uint32_t i = 0; i < n; ++i)
        inv[size_t(i) * n + i] = 1;
    for (uint32_t c = 0; c < n; ++c) {
        uint32_t pivot = c;
        for (uint32_t r = c + 1; r < n; ++r)
            if (std::fabs(a[size_t(r) * n + c]) > std::fabs(a[size_t(pivot) * n + c])) pivot = r;
        for (uint32_t k = 0; k < n; ++k) {
            std::swap(a[size_t(c) * n + k], a[size_t(pivot) * n + k]);
            std::swap(inv[size_t(c) * n + k], inv[size_t(pivot) * n + k]);
        }
        const double scale = 1.0 / a[size_t(c) * n + c];
        for (uint32_t k = 0; k < n; ++k) {
            a[size_t(c) * n + k] *= scale;
            inv[size_t(c) * n + k] *= scale;
        }
        for (uint32_t r = 0; r < n; ++r) {
            if (r == c) continue;
            const double f = a[size_t(r) * n + c];
            for (uint32_t k = 0; k < n; ++k) {
                a[size_t(r) * n + k] -= f * a[size_t(c) * n + k];
                inv[size_t(r) * n + k] -= f * inv[size_t(c) * n + k];
            }
        }
    }
    return inv;
}

} // namespace

TEST_CASE("Y from the factorization equals a dense inverse of H~ times J^T") {
    SceneBuilder builder;
    builder.begin_world();
    // A three-link arm (revolute, revolute, ball) with armature, damping and a drive, and a box.
    BodySpec link = pendulum_link(0.5, 0.3, 0.2);
    link.armature = 0.05;
    link.damping = 0.3;
    link.drive_stiffness = 40;
    link.drive_damping = 2;
    builder.add_body(link);
    link.parent = 0;
    link.parent_frame.position = {0, 0, -0.5};
    link.axis = {1, 0, 0};
    link.q = {-0.4};
    builder.add_body(link);
    BodySpec ball = link;
    ball.joint = STEEL_JOINT_BALL;
    ball.parent = 1;
    ball.q = {0.9, 0.1, 0.3, std::sqrt(1 - 0.81 - 0.01 - 0.09)};
    ball.qd = {0.1, -0.2, 0.3};
    ball.drive_stiffness = ball.drive_damping = 0;
    builder.add_body(ball);
    builder.add_body(scenes::free_box(2.0, {0.1, 0.1, 0.1}, {0.3, 0.2, -1.2}));
    scenes::ContactSpec contact;
    contact.body_a = 3;
    contact.body_b = 2;
    contact.point = {0.25, 0.15, -1.1};
    contact.normal = {0, 0.6, 0.8};
    builder.add_contact(contact);
    builder.add_connect(2, {0.05, 0, -0.2}, -1, {0.1, 0.1, -1.3});

    steel::scene::SceneRecord record;
    const steel_scene_desc desc = builder.desc();
    const steel::scene::BuiltRows rows = steel::scene::build_scene_rows(desc, 1, record);
    REQUIRE(record.worlds[0].articulations.size() == 2);
    // H~ of each articulation, rebuilt from its mass matrix and the diagonal terms.
    std::vector<std::vector<double>> inverses;
    for (const auto& art : record.worlds[0].articulations) {
        const uint32_t n = art.model.dof_count();
        std::vector<double> h = steel::scene::mass_matrix(art.model, art.kinematics);
        for (uint32_t k = 0; k < n; ++k) {
            const size_t g = art.first_dof + k;
            h[size_t(k) * n + k] += builder.armature[g] + kDt * builder.damping[g] +
                                    kDt * builder.kd[g] + kDt * kDt * builder.kp[g];
        }
        inverses.push_back(inverse(h, n));
    }
    size_t value = 0;
    uint32_t checked = 0;
    for (size_t r = 0; r < rows.bias.size(); ++r)
        for (int k = 0; k < 2; ++k) {
            const uint32_t offset = rows.block_offset[2 * r + k],
                           length = rows.block_length[2 * r + k];
            if (length == 0) continue;
            const size_t art = offset == 0 ? 0 : 1;
            for (uint32_t i = 0; i < length; ++i) {
                double expected = 0;
                for (uint32_t j = 0; j < length; ++j)
                    expected += inverses[art][size_t(i) * length + j] * rows.jacobian[value + j];
                CHECK(rows.response[value + i] ==
                      doctest::Approx(expected).epsilon(1e-10).scale(1e-12));
                ++checked;
            }
            value += length;
        }
    CHECK(checked > 20);
}

TEST_CASE("a box resting on the ground carries m g dt and feels no friction") {
    SceneBuilder builder;
    builder.begin_world();
    const double mass = 3.0;
    builder.add_body(scenes::free_box(mass, {0.5, 0.5, 0.5}, {0, 0, 0.5}));
    scenes::box_plane_contacts(builder, 0, scenes::free_body_frame(builder.position.data()),
                               {0.5, 0.5, 0.5}, -1, 0.0, 0.6);
    REQUIRE(builder.contact_counts[0] == 4);
    const test::SceneStep step = test::solve_scene(builder, 500);
    CHECK(sum_normal(step, 0, 4) == doctest::Approx(mass * kG * kDt).epsilon(1e-9));
    // Four contacts are statically indeterminate: Gauss-Seidel may leave friction at single
    // corners, but it cancels: no net tangential impulse and no net moment.
    double fx = 0, fy = 0, moment_x = 0, moment_y = 0, moment_z = 0;
    for (size_t c = 0; c < 4; ++c) {
        const double* impulse = &step.contacts[6 * c + 3];
        const double* point = &builder.contact_point[3 * c];
        fx += impulse[0];
        fy += impulse[1];
        moment_x += point[1] * impulse[2] - (point[2] - 0.5) * impulse[1];
        moment_y += (point[2] - 0.5) * impulse[0] - point[0] * impulse[2];
        moment_z += point[0] * impulse[1] - point[1] * impulse[0];
    }
    CHECK(std::fabs(fx) < 1e-12);
    CHECK(std::fabs(fy) < 1e-12);
    CHECK(std::fabs(moment_x) < 1e-12);
    CHECK(std::fabs(moment_y) < 1e-12);
    CHECK(std::fabs(moment_z) < 1e-12);
    CHECK(test::max_abs(step.qd) < 1e-9);
    CHECK(test::max_abs(step.bodies) < 1e-9);
}

TEST_CASE("on an incline a box sticks below atan(mu) and slides at g (sin - mu cos) above it") {
    const double mu = 0.5;
    for (double degrees : {10.0, 20.0, 25.0, 30.0, 40.0}) {
        const double theta = degrees * M_PI / 180;
        SceneBuilder builder;
        builder.begin_world({kG * std::sin(theta), 0, -kG * std::cos(theta)}); // the plane is z = 0
        builder.add_body(scenes::free_box(1.0, {0.2, 0.2, 0.2}, {0, 0, 0.2}));
        scenes::box_plane_contacts(builder, 0, scenes::free_body_frame(builder.position.data()),
                                   {0.2, 0.2, 0.2}, -1, 0.0, mu);
        const test::SceneStep step = test::solve_scene(builder, 2000);
        const double slide = step.bodies[0]; // com velocity along x after one step from rest
        CAPTURE(degrees);
        if (std::tan(theta) < mu) {
            CHECK(std::fabs(slide) < 1e-9);
        } else {
            CHECK(
                slide ==
                doctest::Approx(kDt * kG * (std::sin(theta) - mu * std::cos(theta))).epsilon(1e-6));
        }
        CHECK(std::fabs(step.bodies[2]) < 1e-9); // no motion into or off the plane
    }
}

TEST_CASE("a stack of boxes stays at rest over 1,000 steps") {
    const uint32_t height = 4;
    const scenes::Vec3 half{0.5, 0.5, 0.5};
    SceneBuilder builder;
    builder.begin_world();
    for (uint32_t k = 0; k < height; ++k)
        builder.add_body(scenes::free_box(1.0, half, {0, 0, 0.5 + k}));
    std::vector<double> q = builder.position, qd = builder.velocity;
    double worst_drift = 0, worst_speed = 0;
    for (uint32_t step_index = 0; step_index < 1000; ++step_index) {
        builder.set_state(q, qd);
        builder.clear_contacts();
        for (uint32_t k = 0; k < height; ++k) {
            const scenes::Frame pose = scenes::free_body_frame(q.data() + 7 * k);
            const double support = k == 0 ? 0.0 : q[7 * (k - 1) + 2] + half[2];
            scenes::box_plane_contacts(builder, int32_t(k), pose, half, int32_t(k) - 1, support,
                                       0.6);
        }
        const test::SceneStep step = test::solve_scene(builder, 100, STEEL_PRECISION_FLOAT64, 1);
        q = step.q_next;
        qd = step.qd;
        for (uint32_t k = 0; k < height; ++k) {
            worst_drift = std::max(worst_drift, std::fabs(q[7 * k + 2] - (0.5 + k)));
            worst_drift = std::max(worst_drift, std::hypot(q[7 * k], q[7 * k + 1]));
        }
        worst_speed = std::max(worst_speed, test::max_abs(qd));
    }
    MESSAGE("4-box stack over 1000 steps: largest position drift "
            << worst_drift << " m, largest speed " << worst_speed << " m/s");
    CHECK(worst_drift < 2e-3);
    CHECK(worst_speed < 1e-2);
}

TEST_CASE("a pendulum stops at its joint limit without gaining energy") {
    // Energy with the com at (-L sin q, 0, -L cos q): potential m g z, kinetic (m L^2 + I) qd^2
    // / 2. The stepping (v then q) is symplectic Euler, whose energy wobbles by O(dt) even with no
    // limit; the limit must add nothing on top of that wobble.
    const auto energy = [](double angle, double rate) {
        return 0.5 * (1.0 + 1e-3) * rate * rate - kG * std::cos(angle);
    };
    const auto run = [&](double lower, bool* pushed, double* lowest_angle, double* final_energy) {
        SceneBuilder builder;
        builder.begin_world();
        BodySpec link = pendulum_link(1.0, M_PI / 2, 0.0); // horizontal, released from rest
        link.lower = lower;
        builder.add_body(link);
        std::vector<double> q = builder.position, qd = builder.velocity;
        double highest = energy(q[0], qd[0]);
        *lowest_angle = q[0];
        for (uint32_t step_index = 0; step_index < 600; ++step_index) {
            builder.set_state(q, qd);
            const test::SceneStep step = test::solve_scene(builder, 50);
            q = step.q_next;
            qd = step.qd;
            highest = std::max(highest, energy(q[0], qd[0]));
            *lowest_angle = std::min(*lowest_angle, q[0]);
            *pushed = *pushed || step.limits[0] > 0;
        }
        *final_energy = energy(q[0], qd[0]);
        return highest;
    };
    bool pushed_free = false, pushed = false;
    double lowest_free = 0, lowest = 0, final_free = 0, final_limited = 0;
    const double free_swing = run(-1e9, &pushed_free, &lowest_free, &final_free);
    const double limited = run(-0.3, &pushed, &lowest, &final_limited);
    MESSAGE("largest energy: free swing " << free_swing << ", against the limit " << limited
                                          << "; final " << final_free << " and " << final_limited);
    CHECK(!pushed_free);
    CHECK(pushed);
    CHECK(limited <= free_swing + 1e-9);
    CHECK(final_limited < final_free); // the inelastic limit took energy out
    CHECK(lowest > -0.3 - 0.02);       // stops at the limit, within Baumgarte slop
    CHECK(lowest_free < -1.0);         // without it the pendulum swings right through
}

TEST_CASE("a four-bar linkage keeps its loop closed") {
    // Ground - crank - coupler - rocker (examples/scenes/robot_scenes.cpp), the rocker's tip
    // connected back to its ground pivot.
    SceneBuilder builder;
    builder.begin_world();
    const double pivot = scenes::add_four_bar(builder);
    const double beta = builder.baumgarte, dt = builder.dt;
    const double lengths[3] = {1.0, 2.0, 1.5};
    // The rocker's tip in world, from the closed form rather than the library's kinematics: bar
    // k points along (cos a_k, 0, -sin a_k), a_k the summed angles, so at rates qd the tip moves
    // at the sum of L_k a_k' (-sin a_k, 0, -cos a_k).
    struct Tip {
        double x = 0, z = 0, vx = 0, vz = 0;
        double speed = 0;     // sum of L_k |a_k'|: the scale of the tip's velocity
        double curvature = 0; // sum of L_k a_k'^2: the scale of its acceleration at fixed rates
    };
    const auto tip = [&](const std::vector<double>& q, const std::vector<double>& qd) {
        Tip t;
        double angle = 0, rate = 0;
        for (size_t k = 0; k < 3; ++k) {
            angle += q[k];
            rate += qd[k];
            t.x += lengths[k] * std::cos(angle);
            t.z -= lengths[k] * std::sin(angle);
            t.vx -= lengths[k] * std::sin(angle) * rate;
            t.vz -= lengths[k] * std::cos(angle) * rate;
            t.speed += lengths[k] * std::fabs(rate);
            t.curvature += lengths[k] * rate * rate;
        }
        return t;
    };
    std::vector<double> q = builder.position, qd = builder.velocity;
    const Tip start = tip(q, qd);
    double bound = std::hypot(start.x - pivot, start.z); // the loop error bound C_n <= B_n
    double worst = 0, bound_at_worst = 0, worst_residual = 0, fastest = 0;
    for (uint32_t step_index = 0; step_index < 300; ++step_index) {
        builder.set_state(q, qd);
        const test::SceneStep step = test::solve_scene(builder, 200);
        // The connect's rows (x and z; y moves nothing and is left out) ask J v + b = 0 with
        // b = beta (tip - pivot) / dt at the pose the step starts from: the tip's velocity under
        // the solved rates must cancel the Baumgarte bias. Two bilateral rows, 200 sweeps: the
        // answer is exact up to rounding, and 1e-9 of the velocities involved is millions of ulps.
        const Tip now = tip(q, step.qd);
        const double bx = beta * (now.x - pivot) / dt, bz = beta * now.z / dt;
        const double residual = std::hypot(now.vx + bx, now.vz + bz);
        CAPTURE(step_index);
        CHECK(residual <= 1e-9 * (now.speed + std::hypot(bx, bz)));
        worst_residual = std::max(worst_residual, residual / (now.speed + std::hypot(bx, bz)));
        fastest = std::max(fastest, std::fabs(step.qd[0]));
        // Positions step as q' = q + dt qd, so the new loop error is
        // C' = C + dt v + e = (1 - beta) C + dt r + e, r the residual above and e the part of
        // the motion the velocity misses: in the x-z plane as complex numbers, e is the sum of
        // L_k e^{i a_k} (e^{ih} - 1 - ih) with h = dt a_k', and |e^{ih} - 1 - ih| <= h^2 / 2.
        // Hence |C'| <= B' with B' = (1 - beta) B + dt |r| + dt^2 / 2 sum L_k a_k'^2, summed
        // step by step: derived, not measured (rounding of the positions themselves: 1e-12).
        bound = (1 - beta) * bound + dt * residual + 0.5 * dt * dt * now.curvature;
        q = step.q_next;
        qd = step.qd;
        const Tip next = tip(q, qd);
        const double error = std::hypot(next.x - pivot, next.z);
        CHECK(error <= bound + 1e-12);
        if (error > worst) {
            worst = error;
            bound_at_worst = bound;
        }
    }
    MESSAGE("four-bar over 300 steps: loop velocity residual at most "
            << worst_residual << " of the tip speed plus bias, crank up to " << fastest
            << " rad/s, loop violation at most " << worst << " m (derived bound there "
            << bound_at_worst << " m)");
}

TEST_CASE("mimic joints keep their ratio") {
    SceneBuilder builder;
    builder.begin_world();
    builder.add_body(pendulum_link(1.0, 0.2, 0.0));
    BodySpec second = pendulum_link(1.0, 0.4 + 0.1, 0.0);
    second.parent_frame.position = {3, 0, 0};
    builder.add_body(second);
    builder.add_mimic(1, 0, 2.0, 0.1); // q1 = 2 q0 + 0.1
    std::vector<double> q = builder.position, qd = builder.velocity;
    double worst = 0;
    for (uint32_t step_index = 0; step_index < 300; ++step_index) {
        builder.set_state(q, qd);
        const test::SceneStep step = test::solve_scene(builder, 100);
        q = step.q_next;
        qd = step.qd;
        worst = std::max(worst, std::fabs(q[1] - (2.0 * q[0] + 0.1)));
    }
    MESSAGE("mimic ratio error over 300 steps: at most " << worst << " rad");
    CHECK(worst < 1e-3);
}

TEST_CASE("an augmented drive stays stable at gains where an explicit drive diverges") {
    // A prismatic slider of mass 1 driven to 0 from 0.1 with kp = 1e5, kd = 1e3 at dt = 1/60.
    const double kp = 1e5, kd = 1e3;
    const auto simulate = [&](bool augmented) {
        SceneBuilder builder;
        builder.begin_world({0, 0, 0});
        BodySpec slider;
        slider.joint = STEEL_JOINT_PRISMATIC;
        slider.axis = {1, 0, 0};
        slider.q = {0.1};
        slider.qd = {0.0};
        if (augmented) {
            slider.drive_stiffness = kp;
            slider.drive_damping = kd;
        }
        builder.add_body(slider);
        std::vector<double> q = builder.position, qd = builder.velocity;
        for (uint32_t step_index = 0; step_index < 120; ++step_index) {
            if (!augmented) builder.external[0] = -kp * q[0] - kd * qd[0]; // the explicit PD force
            builder.set_state(q, qd);
            const test::SceneStep step = test::solve_scene(builder, 10);
            q = step.q_next;
            qd = step.qd;
        }
        return q[0];
    };
    const double augmented = simulate(true);
    const double explicit_drive = simulate(false);
    MESSAGE("after 2 s: augmented drive at " << augmented << ", explicit drive at "
                                             << explicit_drive);
    CHECK(std::fabs(augmented) < 1e-6);
    CHECK(!(std::fabs(explicit_drive) < 1.0)); // diverged (or non-finite)
}

TEST_CASE("scene upload rejects bad input with the world, item and field, and changes nothing") {
    SceneBuilder builder;
    builder.begin_world();
    builder.add_body(scenes::free_box(1.0, {0.5, 0.5, 0.5}, {0, 0, 0.5}));
    builder.add_contact({0, -1, {0, 0, 0}, {0, 0, 1}, 0.0, 0.5, 0.0});
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_scene_desc good = builder.desc();
    REQUIRE_OK(steel_batch_upload_scene(batch, &good));
    REQUIRE_OK(steel_batch_solve(batch));
    const std::vector<double> before = test::read_doubles(batch, steel_batch_read_contact_impulses);
    const auto expect = [&](const std::function<void(SceneBuilder&)>& breakage,
                            const char* needle) {
        SceneBuilder broken = builder;
        breakage(broken);
        const steel_scene_desc scene = broken.desc();
        CHECK(steel_batch_upload_scene(batch, &scene) == STEEL_ERROR_INVALID_ARGUMENT);
        const std::string message = steel_last_error_message();
        INFO(message);
        CHECK(message.find(needle) != std::string::npos);
        CHECK(test::read_doubles(batch, steel_batch_read_contact_impulses) == before);
    };
    expect([](SceneBuilder& b) { b.mass[0] = -1; }, "world 0, body 0: body_mass = -1");
    expect([](SceneBuilder& b) { b.inertia[0] = -1; }, "body_inertia is not positive definite");
    // Positive definite but no rigid body's: Izz > Ixx + Iyy (and Izz 3 % over a flat plate's).
    expect([](SceneBuilder& b) { b.inertia[2] = 1.03 * (b.inertia[0] + b.inertia[1]); },
           "is no rigid body's: a principal moment exceeds the sum of the other two");
    // The box's diagonal (1/6 each) with off-diagonal entries 0.08: every diagonal entry is
    // below the sum of the other two, but the principal moments, 1/6 + 0.16 and twice
    // 1/6 - 0.08, are not (0.327 > 0.087 + 0.087), though they are positive.
    expect(
        [](SceneBuilder& b) {
            for (int k = 3; k < 6; ++k)
                b.inertia[k] = 0.08;
        },
        "no rigid body's");
    expect([](SceneBuilder& b) { b.joint_type[0] = 9; }, "joint_type = 9");
    expect([](SceneBuilder& b) { b.position[3] = 2; }, "unit quaternion");
    expect([](SceneBuilder& b) { b.velocity[1] = NAN; }, "world 0, body 0, DOF 1: joint_velocity");
    expect([](SceneBuilder& b) { b.contact_a[0] = 5; }, "world 0, contact 0: contact_body_a = 5");
    expect([](SceneBuilder& b) { b.contact_normal[2] = 2; }, "contact_normal has length 2");
    // Just outside the 1e-6 tolerance: the message shows the digits that put it there.
    expect([](SceneBuilder& b) { b.contact_normal[2] = 1 + 2e-6; },
           "contact_normal has length 1.000002;");
    expect([](SceneBuilder& b) { b.contact_friction[0] = -1; }, "contact_friction = -1");
    expect([](SceneBuilder& b) { b.dt = 0; }, "dt = 0");
    // Valid inputs whose rows are not: the message names the scene upload, not the rows upload
    // the rows go through, and says the rows are the scene's.
    expect(
        [](SceneBuilder& b) {
            b.dt = 1e-10;
            b.contact_distance[0] = -1e300; // a Baumgarte bias past the largest double
        },
        "steel_batch_upload_scene: in the rows built from the scene, world 0, row 0");
    steel_batch_destroy(batch);
}

TEST_CASE("augmented and row drives reach the same motion for a PD-driven joint") {
    // A two-link arm under gravity, both joints PD-driven toward targets, stepped 120 times.
    const auto simulate = [](int32_t mode, std::vector<double>* drive_impulse) {
        SceneBuilder builder;
        builder.drive_mode = mode;
        builder.begin_world();
        BodySpec link = pendulum_link(0.5, 0.2, 0.0);
        link.drive_stiffness = 200;
        link.drive_damping = 20;
        link.drive_target_position = 0.8;
        builder.add_body(link);
        link.parent = 0;
        link.parent_frame.position = {0, 0, -0.5};
        link.q = {-0.3};
        link.drive_target_position = -0.5;
        link.drive_target_velocity = 0.1;
        builder.add_body(link);
        std::vector<double> q = builder.position, qd = builder.velocity;
        for (uint32_t step_index = 0; step_index < 120; ++step_index) {
            builder.set_state(q, qd);
            steel_batch_desc desc;
            steel_batch_desc_default(&desc);
            steel_batch batch{};
            REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
            steel_solve_options options;
            steel_solve_options_default(&options);
            options.iterations = 400;
            options.enable_bilateral_preelimination = 0;
            REQUIRE_OK(steel_batch_set_options(batch, &options));
            const steel_scene_desc scene = builder.desc();
            REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
            REQUIRE_OK(steel_batch_solve(batch));
            q = test::read_doubles(batch, steel_batch_read_integrated_positions);
            qd = test::read_doubles(batch, steel_batch_read_joint_velocities);
            *drive_impulse = test::read_doubles(batch, steel_batch_read_drive_impulses);
            REQUIRE_OK(steel_batch_destroy(batch));
        }
        return q;
    };
    std::vector<double> augmented_impulse, row_impulse;
    const std::vector<double> augmented = simulate(STEEL_DRIVE_MODE_AUGMENTED, &augmented_impulse);
    const std::vector<double> rows = simulate(STEEL_DRIVE_MODE_ROWS, &row_impulse);
    CHECK(test::max_abs_diff(augmented, rows) < 1e-8);
    CHECK(test::max_abs(augmented_impulse) == 0.0); // no rows in augmented mode
    CHECK(test::max_abs(row_impulse) > 0.0);
    CHECK(augmented[0] == doctest::Approx(0.8).epsilon(0.05)); // near its target, against gravity
}

TEST_CASE("a drive row's effort limit caps its impulse at dt times the limit") {
    SceneBuilder builder;
    builder.drive_mode = STEEL_DRIVE_MODE_ROWS;
    builder.begin_world({0, 0, 0});
    BodySpec slider;
    slider.joint = STEEL_JOINT_PRISMATIC;
    slider.axis = {1, 0, 0};
    slider.q = {1.0};
    slider.qd = {0.0};
    slider.drive_stiffness = 1e4;
    slider.drive_damping = 10;
    builder.add_body(slider);
    std::vector<double> effort = {5.0};
    steel_scene_desc scene = builder.desc();
    scene.drive_effort_limit = effort.data();
    const test::SceneStep step = test::solve_scene(scene);
    CHECK(step.drives[0] == doctest::Approx(-5.0 * kDt));   // pulls toward 0 as hard as allowed
    CHECK(step.qd[0] == doctest::Approx(-5.0 * kDt / 1.0)); // mass 1: dv = impulse
    // The same limit with an augmented drive is refused.
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    scene.drive_mode = STEEL_DRIVE_MODE_AUGMENTED;
    CHECK(steel_batch_upload_scene(batch, &scene) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(
        std::string(steel_last_error_message()).find("needs drive_mode = STEEL_DRIVE_MODE_ROWS") !=
        std::string::npos);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a joint velocity limit caps the joint's speed") {
    SceneBuilder builder;
    builder.begin_world();
    builder.add_body(pendulum_link(1.0, M_PI / 2, 0.0));
    std::vector<double> limit = {0.5};
    std::vector<double> q = builder.position, qd = builder.velocity;
    double fastest = 0;
    for (uint32_t step_index = 0; step_index < 120; ++step_index) {
        builder.set_state(q, qd);
        steel_scene_desc scene = builder.desc();
        scene.joint_velocity_limit = limit.data();
        const test::SceneStep step = test::solve_scene(scene);
        q = step.q_next;
        qd = step.qd;
        fastest = std::max(fastest, std::fabs(qd[0]));
    }
    CHECK(fastest == doctest::Approx(0.5).epsilon(1e-9));
}

TEST_CASE("a two-finger grasp holds the box when friction allows and slips when it does not") {
    // Each finger is pressed on the box with F = 20 N, so each contact pair can carry mu F and
    // the grasp holds a box of mass m while 2 mu F >= m g: mu* = m g / (2 F).
    const double squeeze = 20, box_mass = 0.5;
    const double threshold = box_mass * kG / (2 * squeeze);
    for (double factor : {0.5, 0.8, 1.2, 2.0}) {
        const double mu = factor * threshold;
        SceneBuilder builder;
        builder.begin_world();
        const scenes::ArmWithBox arm = scenes::add_arm_with_box(builder, mu, squeeze, box_mass);
        const test::SceneStep step = test::solve_scene(builder, 500);
        const double* box = &step.bodies[6 * size_t(arm.box)];
        // Vertical velocity of the box relative to the hand after one step from rest.
        const double slip = box[2] - step.bodies[6 * size_t(arm.hand) + 2];
        CAPTURE(factor);
        // Momentum of the free box: it starts at rest, so its velocity is g dt plus the contact
        // impulses on it (on body a, world vectors) over its mass.
        const double gravity[3] = {0, 0, -kG};
        for (size_t k = 0; k < 3; ++k) {
            double impulse = 0;
            for (size_t c = 0; c < 4; ++c)
                impulse += step.contacts[6 * c + 3 + k];
            CHECK(std::fabs(box[k] - (gravity[k] * kDt + impulse / box_mass)) <= 1e-9 * kG * kDt);
        }
        for (int32_t finger : {arm.left_finger, arm.right_finger}) {
            // A prismatic finger takes no force along its axis from the hand, and it ends at rest
            // against the box: its two contacts carry its whole squeeze, F dt.
            const size_t first = finger == arm.left_finger ? 0 : 2; // its contacts: 2 from here
            CHECK(sum_normal(step, first, 2) == doctest::Approx(squeeze * kDt).epsilon(1e-9));
            // The symmetric squeeze turns nothing (the box and finger spin below 1e-12 rad/s, so
            // within 0.1 m of their com the contact points move as the com does): a contact
            // slips at the box's velocity relative to its finger, tangent to the faces (y, z).
            const double* finger_velocity = &step.bodies[6 * size_t(finger)];
            for (size_t k = 3; k < 6; ++k) {
                CHECK(std::fabs(box[k]) < 1e-12);
                CHECK(std::fabs(finger_velocity[k]) < 1e-12);
            }
            const double slide =
                std::hypot(box[1] - finger_velocity[1], box[2] - finger_velocity[2]);
            for (size_t c = first; c < first + 2; ++c) {
                const double normal = step.contacts[6 * c];
                const double friction =
                    std::hypot(step.contacts[6 * c + 1], step.contacts[6 * c + 2]);
                CAPTURE(c);
                // Coulomb: inside the cone while it sticks, on its edge, against the slip, while
                // it slides.
                CHECK(friction <= mu * normal * (1 + 1e-9));
                if (slide > 1e-6) {
                    CHECK(friction == doctest::Approx(mu * normal).epsilon(1e-9));
                    CHECK(step.contacts[6 * c + 5] * (box[2] - finger_velocity[2]) < 0);
                }
            }
            CHECK((slide > 1e-6) == (factor < 1));
        }
        if (factor > 1) {
            CHECK(std::fabs(slip) < 1e-6);
        } else {
            // Sliding: friction supplies only 2 mu (F dt) = factor m g dt, so the box falls
            // behind at (1 - factor) g dt (the hand, held by its stiff drives, stays put).
            CHECK(slip == doctest::Approx(-(1 - factor) * kG * kDt).epsilon(1e-9));
        }
    }
}

TEST_CASE("a cone pair whose tangents move a hinged link along one path becomes two box rows") {
    // A link on a single hinge touched at its tip along a tilted normal: both tangents move the
    // link (neither is a zero row), but only along its one DOF, so the pair's 2x2 block of A is
    // singular and a cone pair would be refused. The scene makes them box rows instead, and
    // solves exactly as under box friction; a free box's contact in the same batch keeps its
    // cone pair.
    const auto build = [](int32_t friction_model) {
        SceneBuilder builder;
        builder.friction_model = friction_model;
        builder.begin_world();
        builder.add_body(pendulum_link(1.0, 0.3, 2.0));
        scenes::ContactSpec tip;
        tip.body_a = 0;
        tip.point = {-std::sin(0.3), 0, -std::cos(0.3)};
        tip.normal = {1 / std::sqrt(3.0), 1 / std::sqrt(3.0), 1 / std::sqrt(3.0)};
        tip.friction = 0.4;
        builder.add_contact(tip);
        builder.begin_world();
        builder.add_body(scenes::free_box(1.0, {0.5, 0.5, 0.5}, {0, 0, 0.5}));
        scenes::ContactSpec corner;
        corner.point = {0.5, 0.5, 0};
        corner.normal = tip.normal;
        builder.add_contact(corner);
        return builder;
    };
    const SceneBuilder cone_scene = build(STEEL_FRICTION_MODEL_CONE);
    const SceneBuilder box_scene = build(STEEL_FRICTION_MODEL_BOX);
    const steel_scene_desc cone_desc = cone_scene.desc(), box_desc = box_scene.desc();

    const steel_batch batch = test::make_scene_batch(2, test::SceneMode{});
    REQUIRE_OK(steel_batch_upload_scene(batch, &cone_desc));
    std::visit(
        [](auto& host) {
            // Each world: the contact's normal row, then its two tangent rows.
            REQUIRE(host.rows.total_rows() == 6);
            CHECK(host.rows.kind[1] == STEEL_ROW_FRICTION_BOX);
            CHECK(host.rows.kind[2] == STEEL_ROW_FRICTION_BOX);
            CHECK(host.rows.kind[4] == STEEL_ROW_FRICTION_CONE);
            CHECK(host.rows.kind[5] == STEEL_ROW_FRICTION_CONE);
        },
        steel::lookup_batch(batch.id, "test").state);
    REQUIRE_OK(steel_batch_destroy(batch));

    const test::SceneStep cone = test::solve_scene(cone_desc, 50);
    const test::SceneStep box = test::solve_scene(box_desc, 50);
    CHECK(cone.contacts[0] > 0);                                          // the tip is pushed
    CHECK(std::fabs(cone.contacts[1]) + std::fabs(cone.contacts[2]) > 0); // and held by friction
    for (int k = 0; k < 6; ++k)
        CHECK(cone.contacts[k] == box.contacts[k]);
    CHECK(cone.qd[0] == box.qd[0]);
}

TEST_CASE("the example scenes build and solve") {
    SceneBuilder builder;
    builder.begin_world();
    scenes::add_box_stack(builder, 5);
    builder.begin_world();
    scenes::add_box_pile(builder, 20);
    builder.begin_world();
    scenes::add_arm_with_box(builder, 0.8, 20);
    builder.begin_world();
    scenes::add_legged_robot(builder);
    builder.begin_world({0, 0, -9.81});
    scenes::add_four_bar(builder);
    const test::SceneStep step = test::solve_scene(builder, 500, STEEL_PRECISION_FLOAT64, 1);
    REQUIRE(step.stats.size() == 5);
    for (const steel_world_stats& stats : step.stats)
        CHECK(stats.flags == 0);
    // Standing still: the stack, the pile and the legged robot barely move in one step (falling
    // freely they would reach g dt = 0.16 m/s; what is left is the unconverged part of the
    // statically indeterminate contact sets after 500 sweeps).
    size_t body0 = 0;
    for (uint32_t w = 0; w < 4; ++w) {
        if (w == 0 || w == 1 || w == 3)
            for (size_t b = body0; b < body0 + builder.body_counts[w]; ++b)
                for (int k = 0; k < 3; ++k)
                    CHECK(std::fabs(step.bodies[6 * b + size_t(k)]) < 1e-2);
        body0 += builder.body_counts[w];
    }
}

namespace {

// Contacts of a box under `pose` with the ground, on body 0.
void ground_contacts(SceneBuilder& builder, const scenes::Frame& pose, const scenes::Vec3& half) {
    scenes::box_plane_contacts(builder, 0, pose, half, -1, 0.0, 0.4, 0.2);
}

test::SceneStep solve_with_bodies(SceneBuilder& builder, const std::vector<double>& pose,
                                  const std::vector<double>& velocity,
                                  const std::vector<int32_t>& flags,
                                  std::vector<double>* poses_after = nullptr,
                                  const double* joint_velocity_limit = nullptr) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 300;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    steel_scene_desc scene = builder.desc();
    scene.body_pose = pose.empty() ? nullptr : pose.data();
    scene.body_velocity = velocity.empty() ? nullptr : velocity.data();
    scene.body_flags = flags.empty() ? nullptr : flags.data();
    scene.joint_velocity_limit = joint_velocity_limit;
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    REQUIRE_OK(steel_batch_solve(batch));
    test::SceneStep step;
    step.contacts = test::read_doubles(batch, steel_batch_read_contact_impulses);
    step.bodies = test::read_doubles(batch, steel_batch_read_body_velocities);
    if (poses_after) *poses_after = test::read_doubles(batch, steel_batch_read_body_poses);
    REQUIRE_OK(steel_batch_destroy(batch));
    return step;
}

// A unit box standalone in a world without gravity, its com 0.2 m along its x axis from its frame
// origin (the frame starts at the world origin, unturned): the tests below spin it.
SceneBuilder off_com_standalone_box() {
    SceneBuilder builder;
    builder.begin_world({0, 0, 0});
    BodySpec body = scenes::free_box(1.0, {0.3, 0.3, 0.3}, {0, 0, 0});
    body.com = {0.2, 0, 0};
    builder.add_body(body);
    builder.joint_type[0] = STEEL_JOINT_NONE;
    builder.position.clear();
    return builder;
}

// How far that box's com, at body pose `pose` (7 values), is from where it started, (0.2, 0, 0).
double com_distance_from_start(const std::vector<double>& pose) {
    const scenes::Vec3 arm = scenes::rotate({pose[3], pose[4], pose[5], pose[6]}, {0.2, 0, 0});
    return std::hypot(pose[0] + arm[0] - 0.2, pose[1] + arm[1], pose[2] + arm[2]);
}

} // namespace

TEST_CASE("a free body given as a standalone body and as a one-free-joint articulation gives "
          "identical results") {
    // A tilted, spinning box with its com off the body origin, touching the ground.
    const scenes::Vec3 half{0.3, 0.2, 0.1};
    const scenes::Quat tilt{0.98, 0.1, -0.15, 0.05};
    const double norm = std::sqrt(0.98 * 0.98 + 0.01 + 0.0225 + 0.0025);
    const scenes::Quat q{tilt[0] / norm, tilt[1] / norm, tilt[2] / norm, tilt[3] / norm};
    const scenes::Vec3 position{0.1, -0.2, 0.1};
    const scenes::Vec3 com{0.02, -0.01, 0.03}, v_com{0.5, -0.2, -0.8}, w{0.3, 1.1, -0.4};

    SceneBuilder as_joint;
    as_joint.begin_world();
    BodySpec body = scenes::free_box(2.0, half, position);
    body.com = com;
    // A standalone body is a FREE joint at its com (docs/scene-mode.md): the joint frame sits at
    // the com, and the joint's velocity is the com's.
    body.child_frame.position = com;
    const scenes::Vec3 arm = scenes::rotate(q, com);
    body.q = {
        position[0] + arm[0], position[1] + arm[1], position[2] + arm[2], q[0], q[1], q[2], q[3]};
    body.qd = {v_com[0], v_com[1], v_com[2], w[0], w[1], w[2]};
    as_joint.add_body(body);
    ground_contacts(as_joint, {position, q}, half);
    REQUIRE(as_joint.contact_counts[0] >= 1);

    SceneBuilder standalone = as_joint;
    standalone.joint_type[0] = STEEL_JOINT_NONE;
    standalone.position.clear();
    const std::vector<double> pose = {position[0], position[1], position[2], q[0],
                                      q[1],        q[2],        q[3]};
    const std::vector<double> velocity = {v_com[0], v_com[1], v_com[2], w[0], w[1], w[2]};

    std::vector<double> poses_joint, poses_body;
    const test::SceneStep a = solve_with_bodies(as_joint, {}, {}, {}, &poses_joint);
    const test::SceneStep b =
        solve_with_bodies(standalone, pose, velocity, {STEEL_BODY_DYNAMIC}, &poses_body);
    CHECK(test::max_abs(a.contacts) > 0.01);
    CHECK(test::max_abs_diff(a.contacts, b.contacts) < 1e-12);
    CHECK(test::max_abs_diff(a.bodies, b.bodies) < 1e-12);
    CHECK(test::max_abs_diff(poses_joint, poses_body) < 1e-12);

    // A standalone body's entries in the per-DOF arrays are not read (docs/scene-mode.md):
    // anything there, even values a joint's DOF would be refused for, changes nothing.
    SceneBuilder garbage = standalone;
    for (std::vector<double>* array :
         {&garbage.velocity, &garbage.kd, &garbage.target_q, &garbage.target_qd})
        std::fill(array->begin(), array->end(), NAN);
    std::fill(garbage.armature.begin(), garbage.armature.end(), -30.0);
    std::fill(garbage.damping.begin(), garbage.damping.end(), -1.0);
    std::fill(garbage.lower.begin(), garbage.lower.end(), 5.0);
    std::fill(garbage.upper.begin(), garbage.upper.end(), -5.0);
    std::fill(garbage.kp.begin(), garbage.kp.end(), 50.0);
    const std::vector<double> velocity_limit(6, -30.0);
    std::vector<double> poses_garbage;
    const test::SceneStep c = solve_with_bodies(garbage, pose, velocity, {STEEL_BODY_DYNAMIC},
                                                &poses_garbage, velocity_limit.data());
    CHECK(c.contacts == b.contacts);
    CHECK(c.bodies == b.bodies);
    CHECK(poses_garbage == poses_body);

    // Its external force is read, and checked as a jointed body's is.
    SceneBuilder pushed = standalone;
    pushed.external[2] = NAN;
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_scene_desc scene = pushed.desc();
    scene.body_pose = pose.data();
    scene.body_velocity = velocity.data();
    CHECK(steel_batch_upload_scene(batch, &scene) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_upload_scene: world 0, body 0: external_force = nan is not finite");
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a standalone body spinning torque-free keeps its com still when its poses and "
          "velocities are fed back") {
    // m = 1, com 0.2 m off the body origin, 10 rad/s about z, no gravity: the com must not move.
    // With the body's FREE joint at its origin (whose velocity turns with the body) and the readers
    // feeding that back, the com moved 3.8 m in 2 s.
    SceneBuilder builder = off_com_standalone_box();
    builder.velocity.assign(6, 0.0);
    std::vector<double> pose = {0, 0, 0, 1, 0, 0, 0}, velocity = {0, 0, 0, 0, 0, 10};
    double worst_com = 0, worst_speed = 0;
    for (int step = 0; step < 120; ++step) {
        std::vector<double> poses;
        const test::SceneStep result =
            solve_with_bodies(builder, pose, velocity, {STEEL_BODY_DYNAMIC}, &poses);
        pose = poses;
        velocity = result.bodies;
        worst_com = std::max(worst_com, com_distance_from_start(pose));
        worst_speed = std::max(worst_speed, std::hypot(velocity[0], velocity[1], velocity[2]));
    }
    MESSAGE("over 120 steps the com moved at most " << worst_com << " m, at most " << worst_speed
                                                    << " m/s");
    CHECK(worst_com < 1e-12);
    CHECK(worst_speed < 1e-12);
    CHECK(std::fabs(velocity[5] - 10.0) < 1e-12); // about a principal axis: no wobble to damp
}

TEST_CASE("a kinematic standalone body turning about its off-origin com keeps its com still") {
    // body_velocity is the com's velocity: at zero, spinning at 10 rad/s about z, the com stays put
    // while the body frame circles it. Stepping the frame origin instead moved the com by up to
    // w r dt = 0.033 m.
    SceneBuilder builder = off_com_standalone_box();
    builder.velocity.clear();
    std::vector<double> pose = {0, 0, 0, 1, 0, 0, 0};
    const std::vector<double> velocity = {0, 0, 0, 0, 0, 10};
    double worst = 0;
    for (int step = 0; step < 120; ++step) {
        std::vector<double> poses;
        const test::SceneStep result =
            solve_with_bodies(builder, pose, velocity, {STEEL_BODY_KINEMATIC}, &poses);
        CHECK(test::max_abs_diff(result.bodies, velocity) < 1e-12); // read back as given
        pose = poses;
        worst = std::max(worst, com_distance_from_start(pose));
    }
    MESSAGE("over 120 steps the kinematic body's com moved at most " << worst << " m");
    CHECK(worst < 1e-12);
    CHECK(std::fabs(pose[3] - std::cos(0.5 * 10 * 120 / 60.0)) < 1e-9); // turned 20 rad about z
}

TEST_CASE("a box resting on a static standalone body carries m g dt") {
    SceneBuilder builder;
    builder.begin_world();
    builder.add_body(scenes::free_box(2.5, {0.5, 0.5, 0.5}, {0, 0, 1.5}));
    BodySpec table = scenes::free_box(1.0, {1, 1, 0.5}, {0, 0, 0.5});
    table.joint = STEEL_JOINT_NONE;
    table.q = {};
    table.qd = {};
    builder.add_body(table);
    scenes::box_plane_contacts(builder, 0, {{0, 0, 1.5}, {1, 0, 0, 0}}, {0.5, 0.5, 0.5}, 1, 1.0,
                               0.6);
    const std::vector<double> pose = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0.5, 1, 0, 0, 0};
    const std::vector<double> velocity(12, 0.0);
    std::vector<double> after;
    const test::SceneStep step =
        solve_with_bodies(builder, pose, velocity, {STEEL_BODY_DYNAMIC, STEEL_BODY_STATIC}, &after);
    CHECK(sum_normal(step, 0, 4) == doctest::Approx(2.5 * kG * kDt).epsilon(1e-9));
    CHECK(after[7 + 2] == 0.5); // the static table stays put
}

TEST_CASE("a kinematic platform drags a box by friction: it gains mu g dt per step") {
    const double mu = 0.3, speed = 2.0;
    SceneBuilder builder;
    builder.begin_world();
    BodySpec platform = scenes::free_box(1.0, {2, 2, 0.1}, {0, 0, -0.1});
    platform.joint = STEEL_JOINT_NONE;
    platform.q = {};
    platform.qd = {};
    builder.add_body(platform);
    builder.add_body(scenes::free_box(1.0, {0.2, 0.2, 0.2}, {0, 0, 0.2}));
    // Body 1 is the box: move its contacts to (box, platform).
    SceneBuilder with_contacts = builder;
    scenes::box_plane_contacts(with_contacts, 1, {{0, 0, 0.2}, {1, 0, 0, 0}}, {0.2, 0.2, 0.2}, 0,
                               0.0, mu);
    std::vector<double> pose = {0, 0, -0.1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
    std::vector<double> velocity = {speed, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    // The box here is a FREE joint: pose and velocity entries for it are not read.
    std::vector<double> after;
    const test::SceneStep step = solve_with_bodies(
        with_contacts, pose, velocity, {STEEL_BODY_KINEMATIC, STEEL_BODY_DYNAMIC}, &after);
    CHECK(sum_normal(step, 0, 4) == doctest::Approx(kG * kDt).epsilon(1e-9));
    CHECK(step.bodies[6 * 1 + 0] ==
          doctest::Approx(mu * kG * kDt).epsilon(1e-9)); // box dragged along +x
    CHECK(step.bodies[0] == speed);                      // the platform's own velocity
    CHECK(after[0] == doctest::Approx(speed * kDt));     // and it moved
}

TEST_CASE("a connect constraint holding a pendulum bob carries its weight") {
    // A free box hung from a world point by a connect at its centre: at rest the constraint's
    // impulse is m g dt upward (on the box), and a mimic impulse reads back too.
    SceneBuilder builder;
    builder.begin_world();
    builder.add_body(scenes::free_box(3.0, {0.1, 0.1, 0.1}, {0, 0, -1}));
    builder.add_connect(0, {0, 0, 0}, -1, {0, 0, -1});
    builder.add_body(pendulum_link(1.0, 0.3, 0.0));
    BodySpec second = pendulum_link(1.0, 0.1, 0.0);
    second.parent_frame.position = {3, 0, 0};
    builder.add_body(second);
    builder.add_mimic(2, 1, 1.0,
                      0.0); // q2 = q1: the mimic must pull q2 from 0.1 up to 0.3 and hold it
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 200;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    const steel_scene_desc scene = builder.desc();
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    REQUIRE_OK(steel_batch_solve(batch));
    const std::vector<double> impulses =
        test::read_doubles(batch, steel_batch_read_constraint_impulses);
    REQUIRE(impulses.size() == 4);
    CHECK(std::fabs(impulses[0]) < 1e-12);
    CHECK(std::fabs(impulses[1]) < 1e-12);
    CHECK(impulses[2] == doctest::Approx(3.0 * kG * kDt).epsilon(1e-10));
    CHECK(std::fabs(impulses[3]) > 1e-3); // the mimic acted
    REQUIRE_OK(steel_batch_destroy(batch));
}

namespace {

// A box falling at 3 m/s, no gravity, its bottom `gap` above the ground, one contact below it.
test::SceneStep falling_box(double gap, double restitution) {
    SceneBuilder builder;
    builder.begin_world({0, 0, 0}); // no gravity: the approach speed is exactly the drop speed
    BodySpec ball = scenes::free_box(1.0, {0.1, 0.1, 0.1}, {0, 0, 0.1 + gap});
    ball.qd = {0, 0, -3.0, 0, 0, 0};
    builder.add_body(ball);
    scenes::ContactSpec contact;
    contact.body_a = 0;
    contact.point = {0, 0, gap};
    contact.normal = {0, 0, 1};
    contact.distance = gap;
    contact.friction = 0;
    contact.restitution = restitution;
    builder.add_contact(contact);
    return test::solve_scene(builder, 50);
}

} // namespace

TEST_CASE("restitution bounces an approaching contact back at e times its approach speed") {
    for (double e : {0.0, 0.5, 0.9}) {
        const test::SceneStep step = falling_box(0.0, e);
        CAPTURE(e);
        CHECK(step.bodies[2] == doctest::Approx(e * 3.0).epsilon(1e-12).scale(1e-12));
    }
}

TEST_CASE("restitution waits until the contact closes within the step") {
    // 1 m above the ground at 3 m/s: the contact must not act (no mid-air bounce).
    const test::SceneStep step = falling_box(1.0, 0.8);
    CHECK(step.contacts[0] == 0.0);
    CHECK(step.bodies[2] == -3.0);
}

TEST_CASE("a scene batch gives the same rows, records and results on 1, 2 and 8 threads, and an "
          "upload reports the first bad world, then every refused one") {
    // Every kind of row: contacts, limits, drive rows, a loop closure, a mimic pair; worlds of
    // different sizes, so that the threads' runs of worlds differ in rows.
    SceneBuilder builder;
    builder.drive_mode = STEEL_DRIVE_MODE_ROWS;
    scenes::add_articulated_mix(builder, 24);
    for (uint32_t copy = 0; copy < 24; ++copy) {
        builder.begin_world();
        builder.add_body(pendulum_link(1.0, 0.2, 0.0));
        BodySpec second = pendulum_link(1.0, 0.5, 0.0);
        second.parent_frame.position = {3, 0, 0};
        builder.add_body(second);
        builder.add_mimic(1, 0, 2.0, 0.1);
    }
    const steel_scene_desc scene = builder.desc();
    const auto batch_on = [](uint32_t worlds, uint32_t threads) {
        steel_batch_desc desc;
        steel_batch_desc_default(&desc);
        desc.world_count = worlds;
        desc.thread_count = threads;
        steel_batch batch{};
        REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
        return batch;
    };
    const auto upload_and_solve = [&](uint32_t threads) {
        const steel_batch batch = batch_on(scene.world_count, threads);
        REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
        REQUIRE_OK(steel_batch_solve(batch));
        std::vector<std::vector<double>> read;
        for (auto reader : {steel_batch_read_impulses, steel_batch_read_velocities,
                            steel_batch_read_contact_impulses, steel_batch_read_limit_impulses,
                            steel_batch_read_drive_impulses, steel_batch_read_constraint_impulses,
                            steel_batch_read_joint_velocities})
            read.push_back(test::read_doubles(batch, reader));
        REQUIRE_OK(steel_batch_destroy(batch));
        return read;
    };
    const auto one = upload_and_solve(1);
    for (const std::vector<double>& values : one)
        CHECK(!values.empty());
    for (uint32_t threads : {2u, 8u}) {
        CAPTURE(threads);
        const auto many = upload_and_solve(threads);
        REQUIRE(many.size() == one.size());
        for (size_t k = 0; k < one.size(); ++k) {
            CAPTURE(k);
            CHECK(many[k] == one[k]);
        }
    }

    // Two bad worlds: the earlier one's reason is reported, then every refused world, whatever
    // the thread count.
    SceneBuilder broken = builder;
    broken.mass[broken.body_counts[0] + broken.body_counts[1] + 1] = -1; // world 2
    broken.mass[broken.mass.size() - 1] = -2;                            // the last world
    const steel_scene_desc bad = broken.desc();
    REQUIRE(bad.world_count == 144);
    // Then a non-finite mass in every third world from world 4 on as well (diverged ones), and
    // a bad mass in every world: the list stops at 16 worlds.
    SceneBuilder diverged = broken;
    std::vector<uint32_t> first_body(bad.world_count + 1, 0);
    for (uint32_t w = 0; w < bad.world_count; ++w)
        first_body[w + 1] = first_body[w] + broken.body_counts[w];
    for (uint32_t w = 4; w < bad.world_count; w += 3)
        diverged.mass[first_body[w]] = NAN;
    SceneBuilder all_bad = builder;
    for (uint32_t w = 0; w < bad.world_count; ++w)
        all_bad.mass[first_body[w]] = 0;
    SceneBuilder one_bad = builder; // alone, it gets its reason only, as before
    one_bad.mass[first_body[143]] = -3;
    const steel_scene_desc bad_some = diverged.desc(), bad_all = all_bad.desc();
    const steel_scene_desc bad_one = one_bad.desc();
    for (uint32_t threads : {1u, 2u, 8u}) {
        CAPTURE(threads);
        const steel_batch batch = batch_on(bad.world_count, threads);
        CHECK(steel_batch_upload_scene(batch, &bad) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()) ==
              "steel_batch_upload_scene: world 2, body 1: body_mass = -1 must be finite and > 0; "
              "2 of the 144 worlds are refused: 2, 143");
        CHECK(steel_batch_upload_scene(batch, &bad_some) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()) ==
              "steel_batch_upload_scene: world 2, body 1: body_mass = -1 must be finite and > 0; "
              "49 of the 144 worlds are refused: 2, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 37, "
              "40, 43, 46 and 33 more");
        CHECK(steel_batch_upload_scene(batch, &bad_all) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()) ==
              "steel_batch_upload_scene: world 0, body 0: body_mass = 0 must be finite and > 0; "
              "144 of the 144 worlds are refused: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
              "14, 15 and 128 more");
        CHECK(steel_batch_upload_scene(batch, &bad_one) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()) ==
              "steel_batch_upload_scene: world 143, body 0: body_mass = -3 must be finite and > 0");
        REQUIRE_OK(steel_batch_destroy(batch));
    }

    // One batch uploaded again and again builds into the memory of its earlier uploads (its
    // spare rows and kept scene arrays, per run of worlds on several threads): a failed upload
    // in between changes nothing, and every good upload gives the same bits as a fresh batch.
    for (uint32_t threads : {1u, 3u}) {
        CAPTURE(threads);
        const steel_batch batch = batch_on(scene.world_count, threads);
        const auto solve_and_read = [&] {
            REQUIRE_OK(steel_batch_solve(batch));
            std::vector<std::vector<double>> read;
            for (auto reader :
                 {steel_batch_read_impulses, steel_batch_read_velocities,
                  steel_batch_read_contact_impulses, steel_batch_read_joint_velocities})
                read.push_back(test::read_doubles(batch, reader));
            return read;
        };
        REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
        const auto first = solve_and_read();
        CHECK(steel_batch_upload_scene(batch, &bad) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(solve_and_read() == first);
        for (int again = 0; again < 2; ++again) {
            REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
            const auto read = solve_and_read();
            CHECK(read == first);
            for (size_t k = 0; k < 2; ++k)
                CHECK(read[k] == one[k]); // the fresh batches' impulses and velocities
        }
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}

TEST_CASE("the scene readers report their counts and refuse a short buffer in the words of the "
          "rows readers, writing nothing") {
    SceneBuilder builder;
    builder.drive_mode = STEEL_DRIVE_MODE_ROWS;
    scenes::add_articulated_mix(builder, 6);
    const steel_scene_desc scene = builder.desc();
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = scene.world_count;
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    REQUIRE_OK(steel_batch_solve(batch));
    using Reader = steel_status (*)(steel_batch, double*, uint64_t, uint64_t*);
    const std::pair<Reader, const char*> readers[] = {
        {steel_batch_read_contact_impulses, "steel_batch_read_contact_impulses"},
        {steel_batch_read_limit_impulses, "steel_batch_read_limit_impulses"},
        {steel_batch_read_drive_impulses, "steel_batch_read_drive_impulses"},
        {steel_batch_read_constraint_impulses, "steel_batch_read_constraint_impulses"},
        {steel_batch_read_joint_velocities, "steel_batch_read_joint_velocities"},
        {steel_batch_read_integrated_positions, "steel_batch_read_integrated_positions"}};
    for (const auto& [read, name] : readers) {
        CAPTURE(name);
        uint64_t count = 0;
        REQUIRE_OK(read(batch, nullptr, 0, &count));
        REQUIRE(count > 1);
        std::vector<double> out(count, -7.0);
        uint64_t reported = 0;
        CHECK(read(batch, out.data(), count - 1, &reported) == STEEL_ERROR_BUFFER_TOO_SMALL);
        CHECK(reported == count);
        CHECK(std::string(steel_last_error_message()) ==
              std::string(name) + ": capacity " + std::to_string(count - 1) +
                  " is smaller than the " + std::to_string(count) + " values to write");
        CHECK(std::count(out.begin(), out.end(), -7.0) == ptrdiff_t(count));
        CHECK(read(batch, nullptr, 0, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()) ==
              std::string(name) + ": out and out_count are both NULL");
        REQUIRE_OK(read(batch, out.data(), count, nullptr));
        CHECK(std::count(out.begin(), out.end(), -7.0) == 0);
    }
    REQUIRE_OK(steel_batch_destroy(batch));
}
