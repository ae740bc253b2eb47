// The gyroscopic torque w x Ic w in scene mode's unconstrained velocity (docs/scene-mode.md,
// impl/scene/implicit_velocity.hpp): taken one implicit Newton step for a free body, a spinning
// body's energy and angular momentum stay bounded, where the explicit torque made a box tumbling
// at 10 rad/s gain energy without bound and go non-finite; kept explicit on jointed bodies, a
// heavy top on a ball joint precesses at the closed-form rate and a turntable pushing its slider
// onto a limit keeps its spin.
#include "robot_scenes.hpp"
#include "scene_support.hpp"

#include <array>
#include <cmath>

using scenes::BodySpec;
using scenes::SceneBuilder;

namespace {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>; // rows

constexpr double kDt = 1.0 / 60.0;
const Vec3 kPrincipal{0.1, 0.2, 0.3}; // body-axes inertia about the com

Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
Vec3 times(const Mat3& m, const Vec3& v) {
    return {dot(m[0], v), dot(m[1], v), dot(m[2], v)};
}

// R diag(kPrincipal) R^T for the body orientation q (w, x, y, z).
Mat3 world_inertia(const scenes::Quat& q) {
    Vec3 axis[3];
    for (int k = 0; k < 3; ++k) {
        Vec3 e{0, 0, 0};
        e[size_t(k)] = 1;
        axis[k] = scenes::rotate(q, e);
    }
    Mat3 inertia{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k)
                inertia[size_t(i)][size_t(j)] +=
                    kPrincipal[size_t(k)] * axis[k][size_t(i)] * axis[k][size_t(j)];
    return inertia;
}

// x with m x = b, by Cramer's rule.
Vec3 solve3(const Mat3& m, const Vec3& b) {
    const auto det = [](const Mat3& a) { return dot(a[0], cross(a[1], a[2])); };
    const double d = det(m);
    Vec3 x{};
    for (size_t c = 0; c < 3; ++c) {
        Mat3 replaced = m;
        for (size_t r = 0; r < 3; ++r)
            replaced[r][c] = b[r];
        x[c] = det(replaced) / d;
    }
    return x;
}

// One free body with its com at its frame origin, no gravity, spinning at w.
SceneBuilder spinning_body(const scenes::Quat& orientation, const Vec3& w,
                           const Vec3& torque = {0, 0, 0}) {
    SceneBuilder builder;
    builder.begin_world({0, 0, 0});
    BodySpec body = scenes::free_box(1.0, {0.5, 0.4, 0.3}, {0, 0, 0});
    body.inertia_diagonal = kPrincipal;
    body.q = {0, 0, 0, orientation[0], orientation[1], orientation[2], orientation[3]};
    body.qd = {0, 0, 0, w[0], w[1], w[2]};
    body.external_force = {0, 0, 0, torque[0], torque[1], torque[2]};
    builder.add_body(body);
    return builder;
}

struct Spin {
    double energy, momentum; // kinetic energy, |L|
};

Spin spin_of(const std::vector<double>& q, const std::vector<double>& qd) {
    const Mat3 inertia = world_inertia({q[3], q[4], q[5], q[6]});
    const Vec3 w{qd[3], qd[4], qd[5]};
    const Vec3 l = times(inertia, w);
    return {0.5 * dot(w, l), std::sqrt(dot(l, l))};
}

// Steps a torque-free spinning body and checks that neither its energy nor its angular momentum
// ever grows; returns the fraction of the energy left after `steps`.
double energy_kept(const Vec3& w, uint32_t steps) {
    SceneBuilder builder = spinning_body({1, 0, 0, 0}, w);
    std::vector<double> q = builder.position, qd = builder.velocity;
    const Spin start = spin_of(q, qd);
    Spin worst = start;
    for (uint32_t step = 0; step < steps; ++step) {
        builder.set_state(q, qd);
        const test::SceneStep result = test::solve_scene(builder, 1);
        q = result.q_next;
        qd = result.qd;
        const Spin now = spin_of(q, qd);
        REQUIRE(std::isfinite(now.energy));
        worst.energy = std::max(worst.energy, now.energy);
        worst.momentum = std::max(worst.momentum, now.momentum);
    }
    const double kept = spin_of(q, qd).energy / start.energy;
    MESSAGE("w0 = (" << w[0] << ", " << w[1] << ", " << w[2] << "), " << steps
                     << " steps: energy at most " << worst.energy / start.energy
                     << " of its start, |L| at most " << worst.momentum / start.momentum
                     << ", energy kept " << kept);
    // The step is implicit Euler's first Newton iterate: it may lose a little, never gain
    // beyond rounding.
    CHECK(worst.energy <= start.energy * (1 + 1e-12));
    CHECK(worst.momentum <= start.momentum * (1 + 1e-12));
    return kept;
}

} // namespace

TEST_CASE("a body tumbling near its major axis keeps its energy and angular momentum") {
    // Explicit in w x Ic w this grew to 11x its energy by step 400 and was non-finite at 466.
    CHECK(energy_kept({0.1, 0.1, 10.0}, 600) > 0.95);
    // Near the minor axis (also stable) and the intermediate one (which tumbles).
    CHECK(energy_kept({10.0, 0.1, 0.1}, 600) > 0.95);
    CHECK(energy_kept({0.1, 5.0, 0.1}, 600) > 0.5);
}

TEST_CASE("one step of a spinning body equals the closed-form implicit gyroscopic step") {
    // w' solves the linearized backward Euler step of Ic w' - Ic w = dt (tau - w' x Ic w'):
    // (Ic + dt ([w]x Ic - [Ic w]x)) (w' - w) = dt (tau - w x Ic w), in world axes.
    const double norm = std::sqrt(0.9 * 0.9 + 0.3 * 0.3 + 0.2 * 0.2 + 0.25 * 0.25);
    const scenes::Quat orientation{0.9 / norm, 0.3 / norm, -0.2 / norm, 0.25 / norm};
    const Vec3 w{1.5, -4.0, 6.0}, torque{0.5, 0.1, -0.2};
    const Mat3 inertia = world_inertia(orientation);
    const Vec3 momentum = times(inertia, w);
    Mat3 system{};
    for (size_t c = 0; c < 3; ++c) {
        Vec3 column{};
        for (size_t r = 0; r < 3; ++r)
            column[r] = inertia[r][c];
        Vec3 e{0, 0, 0};
        e[c] = 1;
        const Vec3 rate = cross(w, column);   // [w]x Ic e_c
        const Vec3 turn = cross(momentum, e); // [Ic w]x e_c
        for (size_t r = 0; r < 3; ++r)
            system[r][c] = inertia[r][c] + kDt * (rate[r] - turn[r]);
    }
    const Vec3 gyroscopic = cross(w, momentum);
    const Vec3 change =
        solve3(system, {kDt * (torque[0] - gyroscopic[0]), kDt * (torque[1] - gyroscopic[1]),
                        kDt * (torque[2] - gyroscopic[2])});

    const test::SceneStep step = test::solve_scene(spinning_body(orientation, w, torque), 1);
    for (size_t k = 0; k < 3; ++k) {
        CHECK(step.qd[k] == 0.0); // no force, no gravity: the com stays put
        CHECK(std::fabs(step.qd[3 + k] - (w[k] + change[k])) < 1e-12);
    }
    // The explicit step would differ by dt^2-order terms: far above the tolerance here.
    const Vec3 explicit_change =
        solve3(inertia, {kDt * (torque[0] - gyroscopic[0]), kDt * (torque[1] - gyroscopic[1]),
                         kDt * (torque[2] - gyroscopic[2])});
    CHECK(std::fabs(explicit_change[0] - change[0]) > 1e-4);
}

TEST_CASE("a heavy top on a ball joint precesses at the closed-form rate (the implicit step is for "
          "free bodies only)") {
    // m = 1, com r = 0.1 up the body z axis from the pivot at the world origin, I1 = I2 = 0.012,
    // I3 = 0.02 about the com, tilted 30 degrees, spinning at 50 rad/s and started in steady
    // precession: m g r = W (I3 w3 - I1' W cos th), I1' = I1 + m r^2 (the inertia about the pivot).
    // With the com torque w x Ic w implicit and the pivot's parallel-axis part explicit the top
    // precessed at 37.5 rad/s here (8.5 at dt = 1/60) and gained hundreds of joules.
    const double m = 1, r = 0.1, i1 = 0.012, i3 = 0.02, g = 9.81, tilt = M_PI / 6, spin = 50,
                 dt = 1.0 / 240;
    const double i1_pivot = i1 + m * r * r, a = i1_pivot * std::cos(tilt);
    const double rate =
        (i3 * spin - std::sqrt(i3 * spin * i3 * spin - 4 * a * m * g * r)) / (2 * a);
    const Vec3 axis{0, -std::sin(tilt), std::cos(tilt)};
    const double along = spin - rate * std::cos(tilt); // the spin's part beyond the precession
    SceneBuilder builder;
    builder.dt = dt;
    builder.begin_world({0, 0, -g});
    BodySpec top;
    top.mass = m;
    top.com = {0, 0, r};
    top.inertia_diagonal = {i1, i1, i3};
    top.joint = STEEL_JOINT_BALL;
    top.q = {std::cos(tilt / 2), std::sin(tilt / 2), 0, 0};
    top.qd = {axis[0] * along, axis[1] * along, axis[2] * along + rate};
    builder.add_body(top);

    std::vector<double> q = builder.position, qd = builder.velocity;
    double turned = 0, previous = -M_PI / 2, lowest = tilt,
           highest = tilt; // the axis starts at azimuth -90 degrees
    const int steps = 480;
    for (int step = 0; step < steps; ++step) {
        builder.set_state(q, qd);
        const test::SceneStep result = test::solve_scene(builder, 1);
        q = result.q_next;
        qd = result.qd;
        const Vec3 now = scenes::rotate({q[0], q[1], q[2], q[3]}, {0, 0, 1});
        const double azimuth = std::atan2(now[1], now[0]);
        double change = azimuth - previous;
        change -= 2 * M_PI * std::round(change / (2 * M_PI));
        turned += change;
        previous = azimuth;
        lowest = std::min(lowest, std::acos(now[2]));
        highest = std::max(highest, std::acos(now[2]));
    }
    const double measured = turned / (steps * dt);
    MESSAGE("precession " << measured << " rad/s against " << rate << "; tilt in ["
                          << lowest * 180 / M_PI << ", " << highest * 180 / M_PI << "] degrees");
    CHECK(std::fabs(measured - rate) < 0.01 * rate);
    CHECK(lowest > tilt - 2 * M_PI / 180); // nutation of a degree or so, no tipping
    CHECK(highest < tilt + 1 * M_PI / 180);
}

TEST_CASE("a turntable whose slider is pushed onto its limit keeps its spin (articulations step "
          "explicitly)") {
    // A hub turning freely about z carries a slider along its radius, pushed outward onto its
    // upper limit by a force that turns with it. The force is radial and the slider does not
    // move, so nothing can change the spin: angular momentum about z is conserved, and the
    // kinetic energy with it. Taking the tree's velocity products implicitly (D = dc/dqd) sent
    // the blocked force through (H~ + dt D)^-1, whose hub-slider term 2 m r w turned it into
    // torque on the hub step after step (implicit_velocity.hpp): here it stopped the hub within
    // the 600 steps (spin off by 3.0 rad/s), and a gripper squeezing a box this way gained energy
    // until it threw the box.
    const double spin = 3, radius = 0.5, push = 20, mass = 1;
    SceneBuilder builder;
    builder.begin_world({0, 0, 0});
    BodySpec hub;
    hub.joint = STEEL_JOINT_REVOLUTE;
    hub.axis = {0, 0, 1};
    hub.inertia_diagonal = {0.1, 0.1, 0.1};
    hub.q = {0};
    hub.qd = {spin};
    builder.add_body(hub);
    BodySpec slider;
    slider.mass = mass;
    slider.joint = STEEL_JOINT_PRISMATIC;
    slider.parent = 0;
    slider.axis = {1, 0, 0};
    slider.inertia_diagonal = {0.01, 0.01, 0.01};
    slider.upper = radius;
    slider.lower = 0;
    slider.q = {radius};
    slider.qd = {0};
    builder.add_body(slider);
    std::vector<double> q = builder.position, qd = builder.velocity;
    double worst_spin = 0, worst_radius = 0;
    for (int step = 0; step < 600; ++step) {
        builder.set_state(q, qd);
        builder.external[6] = push * std::cos(q[0]); // body 1's force, along its slide
        builder.external[7] = push * std::sin(q[0]);
        const test::SceneStep result = test::solve_scene(builder, 20);
        q = result.q_next;
        qd = result.qd;
        worst_spin = std::max(worst_spin, std::fabs(qd[0] - spin));
        worst_radius = std::max(worst_radius, std::fabs(q[1] - radius));
    }
    MESSAGE("turntable over 600 steps: spin off by at most " << worst_spin << " rad/s, slider off "
                                                             << "its limit by " << worst_radius
                                                             << " m");
    CHECK(worst_spin < 1e-9 * spin);
    CHECK(worst_radius < 1e-6);
}
