// What a scene upload leaves behind besides the rows: the articulations and their kinematics
// at the step's state, and where each contact's and limit's rows are, so a solve's impulses
// and velocities can be read back per contact, per joint and per body.
#pragma once

#include "articulation.hpp"

#include <steel/steel.h>

#include <array>
#include <cstdint>
#include <vector>

namespace steel::scene {

struct ArticulationRecord {
    uint32_t first_body;     // world-local
    uint32_t first_dof;      // world-local
    uint32_t first_position; // world-local, into the scene's joint_position
    ArticulationModel model;
    Kinematics kinematics;
    std::vector<double> q; // the model's position coordinates at the step
    // A standalone body (joint type NONE): it has no scene position coordinates (a dynamic one
    // is modelled as a FREE joint whose parent frame is its pose, q the identity), and a
    // kinematic one moves at `kinematic_velocity` (world Plucker) whatever touches it.
    bool standalone = false;
    int32_t flags = STEEL_BODY_DYNAMIC;
    Spatial kinematic_velocity;
    // Per DOF, what H~ adds to H's diagonal: armature + dt damping (+ dt kd + dt^2 kp for
    // augmented drives). The propagation response factors the same H~ (SPEC 7).
    std::vector<double> augmentation;

    // Empties the record for a new build, keeping the memory of its arrays. The build sets the
    // first_* indices and rewrites the model's offsets, the kinematics and the augmentation.
    void reset() {
        model.bodies.clear();
        model.joints.clear();
        q.clear();
        standalone = false;
        flags = STEEL_BODY_DYNAMIC;
        kinematic_velocity = {};
        augmentation.clear();
    }
};

// One term of a row's J as the propagation response sees it (SPEC 7): a spatial force at a
// body (J_side = force^T J_body, the body's 6 x n Jacobian), or one joint-space entry.
struct PropagationTerm {
    int32_t articulation; // world-local
    int32_t body;         // articulation-local body of a body term; -1 for a joint-space entry
    int32_t dof;          // articulation-local DOF of a joint-space entry; -1 for a body term
    double value[6];      // the force (moment about the world origin, force) or value[0]
};

struct ContactRecord {
    int64_t rows[3] = {-1, -1, -1}; // batch rows of the normal and the two friction directions; -1:
                                    // none (a direction no joint of either body can move)
    Vec3 normal, tangent1, tangent2;
};

struct WorldRecord {
    std::vector<ArticulationRecord> articulations;
    std::vector<ContactRecord> contacts;
    std::vector<int64_t> lower_limit_row; // per DOF: batch row index, -1 if none
    std::vector<int64_t> upper_limit_row;
    std::vector<int64_t> drive_row; // per DOF, drive_mode ROWS only
    std::vector<std::array<int64_t, 3>>
        connect_rows;                // per connect: its x, y, z rows (-1: left out)
    std::vector<int64_t> mimic_rows; // per mimic
    // Every row's J as propagation terms: row r (world-local) has terms [term_offset[r],
    // term_offset[r + 1]).
    std::vector<PropagationTerm> terms;
    std::vector<uint32_t> term_offset{0};

    // Empties the record for a new build, keeping the memory of its arrays. The articulations
    // are kept whole, for their arrays' memory too: the build resizes the list to the world's
    // articulations and resets each (ArticulationRecord::reset).
    void clear() {
        contacts.clear();
        lower_limit_row.clear();
        upper_limit_row.clear();
        drive_row.clear();
        connect_rows.clear();
        mimic_rows.clear();
        terms.clear();
        term_offset.assign(1, 0);
    }
};

struct SceneRecord {
    double dt = 0;
    std::vector<WorldRecord> worlds;
    std::vector<double> joint_position; // q of the step, scene order
    std::vector<uint32_t> world_body_offset, world_dof_offset, world_position_offset,
        world_contact_offset;
};

// Builds a world's rows into a steel_rows_desc-shaped set of arrays (declared in scene_rows.hpp).
} // namespace steel::scene
