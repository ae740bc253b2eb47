// Scene mode, SPEC section 8: validates a scene upload and builds its rows (forward kinematics,
// CRBA mass matrices, augmented drives, v-hat, contact / friction / limit / connect / mimic
// rows and Y = H~^-1 J^T), all in float64. The result goes through the ordinary rows upload,
// so the solver never knows where its rows came from.
#pragma once

#include "implicit_velocity.hpp"
#include "scene_record.hpp"

#include <steel/steel.h>

#include <cstdint>
#include <vector>

namespace steel {
class ThreadPool;
}

namespace steel::scene {

// The arrays a world's build works in besides its rows and record, kept by whoever builds world
// after world (a run of worlds, upload after upload) so that a build allocates nothing once
// they have grown: with fresh arrays per articulation, a hundred-box world spent a third of its
// build in malloc and free.
struct WorldScratch {
    std::vector<std::vector<double>> factor; // per articulation: the Cholesky factor of H~
    std::vector<int32_t> body_articulation;  // per body of the world
    std::vector<double> world_qd;            // the step's velocity of every DOF of the world
    std::vector<double> bias, force;
    std::vector<Spatial> external;
    std::vector<PropagationTerm> terms;
    DynamicsScratch dynamics;
    ImplicitVelocityScratch implicit_velocity;
    // The J blocks a world's rows added, waiting for their Y = H~^-1 J^T: per block its
    // articulation and where its values start in the rows' response array; then the same
    // starts grouped by articulation, and where each articulation's group ends.
    std::vector<int32_t> pending_articulation;
    std::vector<size_t> pending_start, grouped_start;
    std::vector<uint32_t> group_end;
    // A contact's cone pair, checked once its Y is known: its first row (the second follows)
    // and where each row's J and Y values start (the first row's end where the second's start:
    // the two span the same blocks).
    struct ConePair {
        uint64_t first_row;
        size_t first_values, second_values;
    };
    std::vector<ConePair> cone_pairs;
};

// The rows of a scene, shaped like a steel_rows_desc (which points into these arrays).
struct BuiltRows {
    std::vector<uint32_t> dof_counts, row_counts;
    std::vector<double> unconstrained_velocity;
    std::vector<uint32_t> block_offset, block_length;
    std::vector<double> jacobian, response, bias, lower, upper, friction, regularization,
        initial_impulse;
    std::vector<int32_t> kind, normal_row;

    WorldScratch scratch; // not rows: what building them reuses

    steel_rows_desc desc() const;
    void clear(); // empties every row array, keeping its memory
};

// Throws steel::Error (INVALID_ARGUMENT) naming the world, item and field of the first problem.
BuiltRows build_scene_rows(const steel_scene_desc& scene, uint32_t batch_world_count,
                           SceneRecord& record);

// The same into `out`, keeping its memory: a batch uploaded every step builds into the arrays
// of its previous upload instead of faulting in fresh pages each time. Returns the rows as the
// parts of an upload (rows_upload.hpp), in world order: `out` alone; or, given a pool of several
// threads and `runs` (kept for their memory too), the runs of worlds the threads built, with the
// one-thread rows bit for bit.
std::vector<steel_rows_desc> build_scene_rows_into(const steel_scene_desc& scene,
                                                   uint32_t batch_world_count, SceneRecord& record,
                                                   BuiltRows& out, ThreadPool* pool = nullptr,
                                                   std::vector<BuiltRows>* runs = nullptr);

} // namespace steel::scene
