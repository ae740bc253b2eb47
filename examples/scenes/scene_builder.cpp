#include "scene_builder.hpp"

#include <cmath>
#include <stdexcept>

namespace scenes {

void SceneBuilder::begin_world(Vec3 g) {
    gravity.insert(gravity.end(), g.begin(), g.end());
    body_counts.push_back(0);
    contact_counts.push_back(0);
    connect_counts.push_back(0);
    mimic_counts.push_back(0);
}

int32_t SceneBuilder::add_body(const BodySpec& b) {
    if (body_counts.empty()) throw std::logic_error("SceneBuilder::add_body before begin_world");
    // Indexed by STEEL_JOINT_* up to NONE (a standalone body: no position coordinates; its DOFs,
    // 6 when DYNAMIC, depend on body_flags, which the builder does not hold, so it adds none).
    static const uint32_t positions[] = {0, 1, 1, 4, 7, 0}, dofs[] = {0, 1, 1, 3, 6, 0};
    if (b.joint < STEEL_JOINT_FIXED || b.joint > STEEL_JOINT_NONE)
        throw std::logic_error("SceneBuilder::add_body: joint is not a STEEL_JOINT_* value");
    const uint32_t np = positions[b.joint], nd = dofs[b.joint];
    if (b.q.size() != np || b.qd.size() != nd)
        throw std::logic_error("SceneBuilder::add_body: q or qd size");
    mass.push_back(b.mass);
    com.insert(com.end(), b.com.begin(), b.com.end());
    inertia.insert(inertia.end(),
                   {b.inertia_diagonal[0], b.inertia_diagonal[1], b.inertia_diagonal[2], 0, 0, 0});
    joint_type.push_back(b.joint);
    joint_parent.push_back(b.parent);
    axis.insert(axis.end(), b.axis.begin(), b.axis.end());
    for (const Frame* f : {&b.parent_frame, &b.child_frame}) {
        std::vector<double>& target = f == &b.parent_frame ? parent_frame : child_frame;
        target.insert(target.end(), f->position.begin(), f->position.end());
        target.insert(target.end(), f->orientation.begin(), f->orientation.end());
    }
    position.insert(position.end(), b.q.begin(), b.q.end());
    velocity.insert(velocity.end(), b.qd.begin(), b.qd.end());
    for (uint32_t k = 0; k < nd; ++k) {
        armature.push_back(b.armature);
        damping.push_back(b.damping);
        lower.push_back(nd == 1 ? b.lower : -INFINITY);
        upper.push_back(nd == 1 ? b.upper : INFINITY);
        kp.push_back(b.drive_stiffness);
        kd.push_back(b.drive_damping);
        target_q.push_back(b.drive_target_position);
        target_qd.push_back(b.drive_target_velocity);
    }
    external.insert(external.end(), b.external_force.begin(), b.external_force.end());
    return int32_t(body_counts.back()++);
}

void SceneBuilder::add_contact(const ContactSpec& c) {
    contact_a.push_back(c.body_a);
    contact_b.push_back(c.body_b);
    contact_point.insert(contact_point.end(), c.point.begin(), c.point.end());
    contact_normal.insert(contact_normal.end(), c.normal.begin(), c.normal.end());
    contact_distance.push_back(c.distance);
    contact_friction.push_back(c.friction);
    contact_restitution.push_back(c.restitution);
    ++contact_counts.back();
}

void SceneBuilder::add_connect(int32_t a, Vec3 pa, int32_t b, Vec3 pb) {
    connect_a.push_back(a);
    connect_b.push_back(b);
    connect_point_a.insert(connect_point_a.end(), pa.begin(), pa.end());
    connect_point_b.insert(connect_point_b.end(), pb.begin(), pb.end());
    ++connect_counts.back();
}

void SceneBuilder::add_mimic(int32_t a, int32_t b, double ratio, double offset) {
    mimic_a.push_back(a);
    mimic_b.push_back(b);
    mimic_ratio.push_back(ratio);
    mimic_offset.push_back(offset);
    ++mimic_counts.back();
}

void SceneBuilder::set_state(const std::vector<double>& q, const std::vector<double>& qd) {
    if (q.size() != position.size() || qd.size() != velocity.size())
        throw std::logic_error("SceneBuilder::set_state: sizes differ");
    position = q;
    velocity = qd;
}

void SceneBuilder::clear_contacts() {
    for (uint32_t& count : contact_counts)
        count = 0;
    contact_a.clear();
    contact_b.clear();
    contact_point.clear();
    contact_normal.clear();
    contact_distance.clear();
    contact_friction.clear();
    contact_restitution.clear();
}

steel_scene_desc SceneBuilder::desc() const {
    steel_scene_desc d;
    steel_scene_desc_default(&d);
    d.world_count = world_count();
    d.dt = dt;
    d.baumgarte = baumgarte;
    d.friction_model = friction_model;
    d.drive_mode = drive_mode;
    d.gravity = gravity.data();
    d.world_body_count = body_counts.data();
    d.world_contact_count = contact_counts.data();
    d.world_connect_count = connect_counts.data();
    d.world_mimic_count = mimic_counts.data();
    d.body_mass = mass.data();
    d.body_com = com.data();
    d.body_inertia = inertia.data();
    d.joint_type = joint_type.data();
    d.joint_parent = joint_parent.data();
    d.joint_axis = axis.data();
    d.joint_parent_frame = parent_frame.data();
    d.joint_child_frame = child_frame.data();
    d.joint_position = position.data();
    d.joint_velocity = velocity.data();
    d.joint_armature = armature.data();
    d.joint_damping = damping.data();
    d.joint_lower = lower.data();
    d.joint_upper = upper.data();
    d.drive_stiffness = kp.data();
    d.drive_damping = kd.data();
    d.drive_target_position = target_q.data();
    d.drive_target_velocity = target_qd.data();
    d.external_force = external.data();
    d.contact_body_a = contact_a.data();
    d.contact_body_b = contact_b.data();
    d.contact_point = contact_point.data();
    d.contact_normal = contact_normal.data();
    d.contact_distance = contact_distance.data();
    d.contact_friction = contact_friction.data();
    d.contact_restitution = contact_restitution.data();
    d.connect_body_a = connect_a.data();
    d.connect_body_b = connect_b.data();
    d.connect_point_a = connect_point_a.data();
    d.connect_point_b = connect_point_b.data();
    d.mimic_joint_a = mimic_a.data();
    d.mimic_joint_b = mimic_b.data();
    d.mimic_ratio = mimic_ratio.data();
    d.mimic_offset = mimic_offset.data();
    return d;
}

Vec3 rotate(const Quat& q, const Vec3& v) {
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    return {
        (1 - 2 * (y * y + z * z)) * v[0] + 2 * (x * y - w * z) * v[1] + 2 * (x * z + w * y) * v[2],
        2 * (x * y + w * z) * v[0] + (1 - 2 * (x * x + z * z)) * v[1] + 2 * (y * z - w * x) * v[2],
        2 * (x * z - w * y) * v[0] + 2 * (y * z + w * x) * v[1] + (1 - 2 * (x * x + y * y)) * v[2]};
}

Frame free_body_frame(const double* q) {
    return {{q[0], q[1], q[2]}, {q[3], q[4], q[5], q[6]}};
}

void box_plane_contacts(SceneBuilder& builder, int32_t box, const Frame& pose, const Vec3& h,
                        int32_t other, double height, double friction, double margin) {
    for (int sx : {-1, 1})
        for (int sy : {-1, 1})
            for (int sz : {-1, 1}) {
                const Vec3 local{sx * h[0], sy * h[1], sz * h[2]};
                const Vec3 offset = rotate(pose.orientation, local);
                const Vec3 corner{pose.position[0] + offset[0], pose.position[1] + offset[1],
                                  pose.position[2] + offset[2]};
                const double distance = corner[2] - height;
                if (distance > margin) continue;
                ContactSpec contact;
                contact.body_a = box;
                contact.body_b = other;
                contact.point = corner;
                contact.normal = {0, 0, 1};
                contact.distance = distance;
                contact.friction = friction;
                builder.add_contact(contact);
            }
}

BodySpec free_box(double mass, const Vec3& h, const Vec3& position) {
    BodySpec body;
    body.mass = mass;
    const double x = 2 * h[0], y = 2 * h[1], z = 2 * h[2];
    body.inertia_diagonal = {mass * (y * y + z * z) / 12, mass * (x * x + z * z) / 12,
                             mass * (x * x + y * y) / 12};
    body.joint = STEEL_JOINT_FREE;
    body.q = {position[0], position[1], position[2], 1, 0, 0, 0};
    body.qd = {0, 0, 0, 0, 0, 0};
    return body;
}

} // namespace scenes
