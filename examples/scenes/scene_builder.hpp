// Builds a scene upload (steel_scene_desc) world by world from plain C++ values, plus the small
// box/plane contact generator the examples, tests and benchmarks share. Steel itself does no
// collision detection: this is the caller's side, kept out of the library.
#pragma once

#include <steel/steel.h>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace scenes {

using Vec3 = std::array<double, 3>;
using Quat = std::array<double, 4>; // w, x, y, z

struct Frame {
    Vec3 position{0, 0, 0};
    Quat orientation{1, 0, 0, 0};
};

struct BodySpec {
    double mass = 1;
    Vec3 com{0, 0, 0};
    Vec3 inertia_diagonal{1, 1, 1}; // body axes, about the com
    int32_t joint = STEEL_JOINT_FREE;
    int32_t parent = -1;
    Vec3 axis{0, 0, 1};
    Frame parent_frame;     // joint frame in the parent body (world for -1)
    Frame child_frame;      // joint frame in this body
    std::vector<double> q;  // joint position coordinates
    std::vector<double> qd; // joint velocities
    double lower = -std::numeric_limits<double>::infinity(); // 1-DOF joints
    double upper = std::numeric_limits<double>::infinity();
    double drive_stiffness = 0, drive_damping = 0, drive_target_position = 0,
           drive_target_velocity = 0;
    double armature = 0, damping = 0;
    std::array<double, 6> external_force{0, 0, 0, 0, 0, 0};
};

struct ContactSpec {
    int32_t body_a = 0, body_b = -1;
    Vec3 point{0, 0, 0}, normal{0, 0, 1};
    double distance = 0, friction = 0.5, restitution = 0;
};

class SceneBuilder {
  public:
    double dt = 1.0 / 60.0;
    double baumgarte = 0.2;
    int32_t friction_model = STEEL_FRICTION_MODEL_BOX;
    int32_t drive_mode = STEEL_DRIVE_MODE_AUGMENTED;

    void begin_world(Vec3 gravity = {0, 0, -9.81});
    int32_t add_body(const BodySpec& body); // returns the world-local body index
    void add_contact(const ContactSpec& contact);
    void add_connect(int32_t body_a, Vec3 point_a, int32_t body_b, Vec3 point_b);
    void add_mimic(int32_t joint_a, int32_t joint_b, double ratio, double offset);

    uint32_t world_count() const { return uint32_t(body_counts.size()); }
    steel_scene_desc desc() const;

    // Replaces every joint position and velocity (scene order), e.g. with the last step's
    // integrated positions and new velocities.
    void set_state(const std::vector<double>& q, const std::vector<double>& qd);
    // Removes all contacts (to generate the next step's).
    void clear_contacts();

    std::vector<double> gravity;
    std::vector<uint32_t> body_counts, contact_counts, connect_counts, mimic_counts;
    std::vector<double> mass, com, inertia, axis, parent_frame, child_frame, position, velocity;
    std::vector<int32_t> joint_type, joint_parent;
    std::vector<double> armature, damping, lower, upper, kp, kd, target_q, target_qd, external;
    std::vector<int32_t> contact_a, contact_b;
    std::vector<double> contact_point, contact_normal, contact_distance, contact_friction,
        contact_restitution;
    std::vector<int32_t> connect_a, connect_b, mimic_a, mimic_b;
    std::vector<double> connect_point_a, connect_point_b, mimic_ratio, mimic_offset;
};

// World pose of a free body's frame from its 7 position coordinates (joint frames = body frame).
Frame free_body_frame(const double* q);
Vec3 rotate(const Quat& q, const Vec3& v);

// Contacts of a box (half extents h, pose) with the plane z = height: one contact per corner
// within `margin` of the plane, normal +z, signed distance, on body `box` against `other`.
void box_plane_contacts(SceneBuilder& builder, int32_t box, const Frame& pose,
                        const Vec3& half_extents, int32_t other, double height, double friction,
                        double margin = 0.05);

// A free box body at rest at `position` (inertia of a solid box).
BodySpec free_box(double mass, const Vec3& half_extents, const Vec3& position);

} // namespace scenes
