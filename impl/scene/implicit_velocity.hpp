// The unconstrained velocity of an articulation with its velocity products c(q, qd) (the
// Coriolis, centrifugal and gyroscopic forces) taken one Newton step of backward Euler instead of
// explicitly:
//
//     (H~ + dt D) x = force,   v-hat = qd + dt x,   D = dc/dqd at the step's qd,
//
// Bullet's implicit-gyroscopic step carried over to the whole tree. For a free body jointed at
// its com (every standalone dynamic body) c is the gyroscopic torque w x Ic w alone and D is
// G = Jw^T ([w]x Ic - [Ic w]x) Jw in closed form, Jw the body's angular Jacobian; for any other
// articulation D is the exact derivative of inverse dynamics without gravity or external
// forces, by forward-mode differentiation that visits each column's subtree and ancestors only.
//
// Why: explicit in c, a body spinning near a principal axis gains energy every step (its wobble
// grows by about sqrt(1 + (w dt)^2) per step): a box tumbling at 10 rad/s with dt = 1/60 went
// non-finite within a few hundred steps, and a legged robot tumbling in free flight gained up
// to 75 % of its energy in 2,000 steps. All of c, not one part: taking only the com torque
// implicitly on a jointed body, the rest (the parallel-axis part about the joint, the joints'
// Coriolis terms) explicit, made a heavy top on a BALL joint precess at 8.5 rad/s instead of 1.0
// (dt = 1/60) and gain 3e17 J; with the whole D it precesses at 0.99968 rad/s against the
// closed-form 1.00005 (dt = 1/240, tests/test_gyroscopic.cpp).
//
// Not for an articulation a connect row touches (scene_rows.cpp): those keep the explicit step,
// but for a standalone dynamic body, which keeps G. A loop closed by connect rows has its own
// share of the velocity products, the rows' curvature, and that stays explicit (the rows' J is
// taken at the step's start pose): with the tree's part implicit and the loop's explicit the two
// no longer balance, energy pumps in, and a four-bar linkage tore its loop by 3.8 m in 300 steps
// where the explicit step holds it to 0.069 m (tests/test_scene.cpp). Such an articulation
// turning fast can still gain energy step by step; a smaller dt is the remedy.
//
// Only v-hat changes: the constraint response Y = H~^-1 J^T is kept (A stays symmetric). So a
// drive as a row (whose impulse goes through H~^-1) and the same drive inside H~ (whose force
// goes through (H~ + dt D)^-1) no longer give identical steps: they differ by about
// dt^2 H~^-1 D times the drives' acceleration a step (tests/test_scene.cpp). Stiff drive rows
// see the tree as if their joints were free in the Newton step: a driven legged tree tumbling
// in free flight keeps its energy with them too, but its angular momentum about the com drifted
// by up to 84 % in 2,000 steps at dt = 1/60, against 18 % with the same drives augmented.
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
    // The velocity-product derivative's base point per body (velocity, joint rate, I v, joint
    // origin velocity), its tangents per body, and one joint's subtree.
    std::vector<Spatial> velocity, joint_rate, momentum;
    std::vector<Vec3> origin_velocity;
    std::vector<Spatial> tangent_acceleration, tangent_force;
    std::vector<uint32_t> subtree;
    std::vector<uint8_t> inside;
    std::vector<uint8_t> connected; // per articulation of a world: a connect row touches it
};

// Adds scale * D (row-major n x n) at velocities qd to `out`: D is the derivative of the
// generalized gyroscopic forces.
void add_gyroscopic_derivative(const ArticulationModel& model, const Kinematics& kin,
                               const double* qd, double scale, double* out,
                               ImplicitVelocityScratch& scratch);

// Adds scale * D (row-major n x n) at velocities qd to `out`: D = dc/dqd is the derivative of
// the velocity-product forces c(q, qd) (inverse dynamics without gravity, external forces or
// accelerations), exactly, by one forward-mode (tangent) pass of that inverse dynamics per
// column: the column of a DOF of body j visits only j's subtree and its ancestors, where the
// central differences this replaced ran 2 whole passes per column (tests/test_articulation.cpp
// keeps them as the reference).
void add_velocity_product_derivative(const ArticulationModel& model, const Kinematics& kin,
                                     const double* qd, double scale, double* out,
                                     ImplicitVelocityScratch& scratch);

// Whether the articulation is one body on a FREE joint at its com (every standalone dynamic
// body): its velocity products are the gyroscopic torque alone and D = G.
bool free_body_at_com(const ArticulationModel& model);

// Overwrites `force` [n] by x with (H~ + dt D) x = force, H~ the augmented mass matrix (row-major
// n x n, as before its factorization). False, with `force` unchanged, when the system has a pivot
// too small to divide by or a non-finite one; the caller then takes the explicit step.
bool solve_implicit_velocity(const ArticulationModel& model, const Kinematics& kin,
                             const double* qd, const std::vector<double>& augmented_mass, double dt,
                             double* force, ImplicitVelocityScratch& scratch);

} // namespace steel::scene
