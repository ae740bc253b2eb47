// The articulated-body factorization of an articulation's H~ (SPEC 7, Featherstone's
// articulated-body algorithm for impulses), in world Plucker coordinates like scene/spatial.hpp.
//
// Backward over the bodies (children before parents) it forms each body's articulated inertia
// I^A_i = I_i + sum over children c of (I^A_c - U_c D_c^-1 U_c^T), with U_i = I^A_i S_i and
// D_i = S_i^T I^A_i S_i + diag(augmentation of i's DOFs): the armature, damping and augmented
// drive terms of H~ are joint-space inertias, so they enter D exactly. With these, applying
// spatial impulses at bodies and reading velocity changes is linear in the tree (the walks in
// tree_walk.hpp), which is what the propagation response is built on.
#pragma once

#include "../scene/articulation.hpp"

#include <cstdint>
#include <vector>

namespace steel::propagation {

// Per body and DOF in the model's order (its joints' parents and dof_offset give the shape).
struct ArticulatedBodyFactor {
    std::vector<double> subspace;           // [6 * n] S columns (angular, linear)
    std::vector<double> transmitted;        // [6 * n] U = I^A S columns
    std::vector<double> d_inverse;          // per body, D_i^-1 (dof_i x dof_i, row-major)
    std::vector<uint32_t> d_inverse_offset; // [bodies + 1]
};

// Throws nothing; returns false if some D_i is not positive definite (H~ would not be either).
bool factor_articulated_body(const scene::ArticulationModel& model,
                             const scene::Kinematics& kinematics,
                             const std::vector<double>& augmentation, ArticulatedBodyFactor& out);

} // namespace steel::propagation
