// One articulation (a joint tree) and its dynamics in world coordinates: forward kinematics, the
// joints' motion subspaces, the joint-space mass matrix H by the composite rigid body algorithm,
// the bias forces C(q, qd) + gravity by recursive Newton-Euler, point Jacobians, and the
// integration of q. A free body is an articulation with one free joint.
//
// Velocity coordinates (qd) per joint type, all in world axes:
//   revolute   1: rate about the axis          prismatic 1: rate along the axis
//   ball       3: angular velocity of the child relative to the parent
//   free       6: (velocity of the child's joint-frame origin, angular velocity), relative
//   fixed      0
// Position coordinates (q): revolute/prismatic 1 (angle, distance); ball 4 (unit quaternion
// (w,x,y,z), child joint frame relative to the parent joint frame); free 7 (position of the
// child joint frame in the parent joint frame, then its quaternion).
#pragma once

#include "spatial.hpp"

#include <cstdint>
#include <vector>

namespace steel::scene {

enum class JointType : int32_t { fixed = 0, revolute = 1, prismatic = 2, ball = 3, free = 4 };

uint32_t joint_dof_count(JointType type);
uint32_t joint_position_count(JointType type);

struct BodyModel {
    double mass = 1;
    Vec3 com;     // body frame
    Mat3 inertia; // about the com, body axes
};

// Joint i moves body i relative to body parent[i] (-1: the world, fixed). Parents come first.
struct JointModel {
    JointType type = JointType::fixed;
    int32_t parent = -1;
    Vec3 axis{0, 0, 1}; // revolute / prismatic, in the joint frame
    Pose parent_frame;  // the joint frame in the parent body's frame (world frame for -1)
    Pose child_frame;   // the joint frame in the child body's frame
};

struct ArticulationModel {
    std::vector<BodyModel> bodies;
    std::vector<JointModel> joints;        // joints[i] moves bodies[i]
    std::vector<uint32_t> dof_offset;      // [joints + 1]
    std::vector<uint32_t> position_offset; // [joints + 1]

    uint32_t dof_count() const { return dof_offset.empty() ? 0 : dof_offset.back(); }
    uint32_t position_count() const { return position_offset.empty() ? 0 : position_offset.back(); }
    // Fills the offsets from the joint types.
    void finalize();
};

// Everything that depends on q: world poses, motion subspace columns, world inertias.
struct Kinematics {
    std::vector<Pose> body_pose;       // body frame in world
    std::vector<Vec3> joint_origin;    // joint frame origin in world (child side)
    std::vector<Spatial> subspace;     // [dof_count] motion subspace column of each DOF
    std::vector<Inertia> body_inertia; // world
};

Kinematics forward_kinematics(const ArticulationModel& model, const std::vector<double>& q);
// The same into `out`, keeping its arrays' memory: a scene upload rebuilds every articulation's
// kinematics each step.
void forward_kinematics(const ArticulationModel& model, const std::vector<double>& q,
                        Kinematics& out);

// Spatial velocity of every body for generalized velocities qd.
std::vector<Spatial> body_velocities(const ArticulationModel& model, const Kinematics& kin,
                                     const std::vector<double>& qd);

// The per-body arrays the dynamics below work in, kept by a caller that runs them again and
// again so that each run allocates nothing.
struct DynamicsScratch {
    std::vector<Inertia> composite;
    std::vector<Spatial> velocity, acceleration, force;
};

// Joint-space mass matrix (row-major n x n) by the composite rigid body algorithm.
std::vector<double> mass_matrix(const ArticulationModel& model, const Kinematics& kin);
void mass_matrix(const ArticulationModel& model, const Kinematics& kin, std::vector<double>& h,
                 DynamicsScratch& scratch);

// Inverse dynamics (recursive Newton-Euler): the generalized forces that produce accelerations
// qdd at velocities qd under gravity, minus the given external body forces (world spatial forces
// about the origin; may be empty). With qdd = 0 this is the bias C(q, qd) + gravity.
std::vector<double> inverse_dynamics(const ArticulationModel& model, const Kinematics& kin,
                                     const std::vector<double>& qd, const std::vector<double>& qdd,
                                     Vec3 gravity, const std::vector<Spatial>& external_force);
// The same into `tau` [dof_count]; qd and qdd hold dof_count values, and a null qdd is zero.
void inverse_dynamics(const ArticulationModel& model, const Kinematics& kin, const double* qd,
                      const double* qdd, Vec3 gravity, const std::vector<Spatial>& external_force,
                      double* tau, DynamicsScratch& scratch);

// Row of d(n . velocity of world point p on body b)/d(qd): entry k is n . (S_k at p) for the
// DOFs that move body b (its joint and its ancestors'), 0 elsewhere.
void point_jacobian(const ArticulationModel& model, const Kinematics& kin, int32_t body, Vec3 point,
                    Vec3 direction, double* row);
// Same for an angular direction: n . w_b.
void angular_jacobian(const ArticulationModel& model, const Kinematics& kin, int32_t body,
                      Vec3 direction, double* row);

// q advanced by qd over dt (quaternions stay on the unit sphere).
void integrate_positions(const ArticulationModel& model, const Kinematics& kin,
                         std::vector<double>& q, const std::vector<double>& qd, double dt);

} // namespace steel::scene
