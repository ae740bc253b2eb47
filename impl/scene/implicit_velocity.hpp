// The unconstrained velocity of a free body (an articulation of one body on a FREE joint, which
// every standalone dynamic body is) with its gyroscopic torque w x Ic w taken one Newton step of
// backward Euler instead of explicitly.
//
// Why: explicit in that torque, a body spinning near a principal axis gains energy every step
// (its wobble grows by about sqrt(1 + (w dt)^2) per step), so a box tumbling at 10 rad/s with
// dt = 1/60 goes non-finite within a few hundred steps. Linearizing the torque about the step's
// velocities is Bullet's implicit-gyroscopic step:
//
//     (H~ + dt D) x = force,   v-hat = qd + dt x,   D = Jw^T G Jw,
//
// with Jw the body's angular Jacobian and G = [w]x Ic - [Ic w]x the derivative of w x Ic w. Only
// for a free body: on a jointed body the com torque is one part of the velocity products, and
// taking it implicitly while the rest (the parallel-axis part about the joint, the joints'
// Coriolis terms) stays explicit unbalances them. A heavy top on a BALL joint (spinning at
// 50 rad/s, dt = 1/60) then precessed at 8.5 rad/s instead of 1.0 and gained 3e17 J.
//
// Taking all of a tree's velocity products implicitly (D = dc/dqd, tried and reverted on
// 2026-12-02) keeps a free-flying driven tree's energy (within 0.1 % over 2,000 steps, against
// up to 1.75x explicitly) and the heavy top's precession, but it pumps energy wherever a row
// holds back a steady force on a joint that moves across a turning one: the whole force goes
// through (H~ + dt D)^-1, as if the velocity the row cancels were real, and its Coriolis term
// speeds the turning joint up, step after step. A 7-DOF arm spinning at 0.1 to 3 rad/s while its
// fingers squeeze a box gained energy exponentially until it threw the box 90 m (explicitly:
// within 3e-4 J); fingers pushed onto their joint limits, or a boom whose tip is held up by the
// ground, did the same. And a loop closed by connect rows, whose curvature stays explicit, tore
// (a four-bar by 3.8 m against 0.069 m). So articulations keep the explicit step, and one turning
// fast out of its joints' plane can gain energy (docs/scene-mode.md). The constraint response
// Y = H~^-1 J^T is unchanged (A stays symmetric); only v-hat changes.
#pragma once

#include "articulation.hpp"

#include <cstdint>
#include <vector>

namespace steel::scene {

// Arrays the step reuses across articulations and uploads, so that it allocates nothing.
struct ImplicitVelocityScratch {
    std::vector<double> system;  // n x n: H~ + dt D, then its LU factors
    std::vector<uint32_t> pivot; // LU row swaps
    std::vector<uint32_t> path;  // the DOFs that turn one body
    std::vector<Vec3> columns;   // their angular columns
};

// Adds scale * D (row-major n x n) at velocities qd to `out`: D is the derivative of the
// generalized gyroscopic forces.
void add_gyroscopic_derivative(const ArticulationModel& model, const Kinematics& kin,
                               const double* qd, double scale, double* out,
                               ImplicitVelocityScratch& scratch);

// Overwrites `force` [n] by x with (H~ + dt D) x = force, H~ the augmented mass matrix (row-major
// n x n, as before its factorization). False, with `force` unchanged, when the system has a pivot
// too small to divide by or a non-finite one; the caller then takes the explicit step.
bool solve_implicit_velocity(const ArticulationModel& model, const Kinematics& kin,
                             const double* qd, const std::vector<double>& augmented_mass, double dt,
                             double* force, ImplicitVelocityScratch& scratch);

} // namespace steel::scene
