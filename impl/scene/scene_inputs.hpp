// A scene upload's inputs, owned: every number of a steel_scene_desc copied out of the caller's
// arrays, so that a snapshot of a scene batch can hold the scene itself and a loaded snapshot can
// upload it again (docs/snapshots.md). Without them a replay had only the built rows, and so no
// trees for the propagation response and no per-contact or per-joint readers.
//
// One list, STEEL_SCENE_ARRAYS, names every array with its element type and length, so the copy,
// the desc, the length checks, one world's slice and the snapshot schema's fields
// (impl/snapshot/snapshot_codec.cpp) cannot drift apart.
#pragma once

#include <steel/steel.h>

#include <cstdint>
#include <vector>

namespace steel {
class ThreadPool;
}

namespace steel::scene {

// What an array's length counts, per world of the scene: an array of unit U with `per` values
// per item has per * (items of U) values.
enum class SceneUnit : uint8_t { world, body, dof, position, contact, connect, mimic };
constexpr int kSceneUnitCount = 7;

// X(type, name, unit, per) for every array of steel_scene_desc, in the struct's order. The world
// counts come first: they give the sizes of everything else.
#define STEEL_SCENE_ARRAYS(X)                                                                      \
    X(uint32_t, world_body_count, world, 1)                                                        \
    X(uint32_t, world_contact_count, world, 1)                                                     \
    X(uint32_t, world_connect_count, world, 1)                                                     \
    X(uint32_t, world_mimic_count, world, 1)                                                       \
    X(double, gravity, world, 3)                                                                   \
    X(double, body_mass, body, 1)                                                                  \
    X(double, body_com, body, 3)                                                                   \
    X(double, body_inertia, body, 6)                                                               \
    X(int32_t, joint_type, body, 1)                                                                \
    X(int32_t, joint_parent, body, 1)                                                              \
    X(double, joint_axis, body, 3)                                                                 \
    X(double, joint_parent_frame, body, 7)                                                         \
    X(double, joint_child_frame, body, 7)                                                          \
    X(double, joint_position, position, 1)                                                         \
    X(double, joint_velocity, dof, 1)                                                              \
    X(double, joint_armature, dof, 1)                                                              \
    X(double, joint_damping, dof, 1)                                                               \
    X(double, joint_lower, dof, 1)                                                                 \
    X(double, joint_upper, dof, 1)                                                                 \
    X(double, drive_stiffness, dof, 1)                                                             \
    X(double, drive_damping, dof, 1)                                                               \
    X(double, drive_target_position, dof, 1)                                                       \
    X(double, drive_target_velocity, dof, 1)                                                       \
    X(double, drive_effort_limit, dof, 1)                                                          \
    X(double, joint_velocity_limit, dof, 1)                                                        \
    X(double, external_force, body, 6)                                                             \
    X(double, body_pose, body, 7)                                                                  \
    X(double, body_velocity, body, 6)                                                              \
    X(int32_t, body_flags, body, 1)                                                                \
    X(int32_t, contact_body_a, contact, 1)                                                         \
    X(int32_t, contact_body_b, contact, 1)                                                         \
    X(double, contact_point, contact, 3)                                                           \
    X(double, contact_normal, contact, 3)                                                          \
    X(double, contact_distance, contact, 1)                                                        \
    X(double, contact_friction, contact, 1)                                                        \
    X(double, contact_restitution, contact, 1)                                                     \
    X(int32_t, connect_body_a, connect, 1)                                                         \
    X(int32_t, connect_body_b, connect, 1)                                                         \
    X(double, connect_point_a, connect, 3)                                                         \
    X(double, connect_point_b, connect, 3)                                                         \
    X(int32_t, mimic_joint_a, mimic, 1)                                                            \
    X(int32_t, mimic_joint_b, mimic, 1)                                                            \
    X(double, mimic_ratio, mimic, 1)                                                               \
    X(double, mimic_offset, mimic, 1)

// An array of the desc: absent stands for a NULL pointer, which is not the same as present and
// empty (a NULL body_mass is refused when there are bodies; an empty one of zero bodies is not).
template <class T> struct SceneArray {
    bool present = false;
    std::vector<T> values;
};

// Items of each unit, over a whole scene or one world.
struct SceneTotals {
    uint64_t count[kSceneUnitCount] = {};
    uint64_t of(SceneUnit unit) const { return count[int(unit)]; }
};

struct SceneRecord;

// The DOFs and position coordinates of one body of a scene, as steel.h counts them: its joint's,
// or for a standalone body (joint NONE) the 6 DOFs of a free joint if it is dynamic, none
// otherwise, and no coordinates. joint_type and flags must be valid STEEL_JOINT_* and
// STEEL_BODY_* values. The upload and a snapshot's length checks both count with it.
struct BodyCoordinates {
    uint32_t dofs = 0, positions = 0;
};
BodyCoordinates body_coordinates(int32_t joint_type, int32_t flags);

// The totals of a scene upload's desc, from the record its build left (which counted the bodies,
// DOFs, coordinates and contacts) and its connect and mimic counts.
SceneTotals upload_totals(const SceneRecord& record, const steel_scene_desc& desc);

struct SceneInputs {
    uint32_t world_count = 0;
    double dt = 0, baumgarte = 0, restitution_threshold = 0;
    int32_t friction_model = 0, drive_mode = 0;
#define STEEL_SCENE_MEMBER(type, name, unit, per) SceneArray<type> name;
    STEEL_SCENE_ARRAYS(STEEL_SCENE_MEMBER)
#undef STEEL_SCENE_MEMBER

    // Makes room for a copy of `desc`, which passed steel_batch_upload_scene's checks and has
    // `totals` (upload_totals), keeping what this object holds: may throw (out of memory), and
    // then changes nothing a reader sees.
    void reserve_for(const steel_scene_desc& desc, const SceneTotals& totals);
    // Copies `desc` (as above), keeping this object's memory; the bulk of it on the pool's
    // threads when given one. After reserve_for it allocates nothing and cannot fail, so a batch
    // can replace its copy only once the upload can no longer fail, and hold one copy.
    void assign(const steel_scene_desc& desc, const SceneTotals& totals,
                ThreadPool* pool = nullptr);

    // A desc pointing into these arrays (valid while this object lives, unchanged).
    steel_scene_desc desc() const;

    // The items of every unit in the whole scene. Throws steel::Error (INVALID_ARGUMENT, message
    // starting with `where`) if the arrays that give the counts have the wrong length or a joint
    // type or body flag that is none (the DOFs and position coordinates follow from them).
    SceneTotals totals(const char* where) const;

    // Throws as above unless every present array has the length the counts give it. Meaning
    // (indices, finite numbers, required arrays) is the upload's to check.
    void check_lengths(const char* where) const;

    // The bytes of every present array's values, plus 12 per array for its length and padding
    // in a snapshot.
    uint64_t snapshot_bytes() const;

    // Whether `other` holds the same scene: every scalar and array, numbers by their bits (so a
    // NaN equals itself and -0 differs from +0), an absent array apart from an empty one.
    bool same_bits(const SceneInputs& other) const;

    // World `world` alone, as a scene of one world (its body and joint indices are world-local
    // already). Needs check_lengths to pass.
    SceneInputs world(uint32_t world, const char* where) const;

  private:
    // assign's pieces of work, kept for their memory. Not part of the scene.
    struct CopyChunk {
        void* to;
        const void* from;
        uint64_t bytes;
    };
    static constexpr uint64_t kCopyChunkBytes = 256 * 1024;
    std::vector<CopyChunk> copy_chunks_;
};

} // namespace steel::scene
