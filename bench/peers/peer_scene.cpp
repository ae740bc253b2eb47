#include "peer_scene.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace peers {

namespace {

uint32_t joint_dofs(const Body& b) {
    return b.joint == Joint::Free ? 6u : b.joint == Joint::Fixed ? 0u : 1u;
}

int32_t root_of(const Scene& scene, int32_t body) {
    while (scene.bodies[size_t(body)].parent >= 0)
        body = scene.bodies[size_t(body)].parent;
    return body;
}

} // namespace

Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 sub(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
double dot(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

namespace {

Vec3 add(const Vec3& a, const Vec3& b) {
    return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
Vec3 at(const std::vector<double>& v, size_t i) {
    return {v[i], v[i + 1], v[i + 2]};
}

// The translation below only handles axis-aligned frames (see peer_scene.hpp).
void require_identity(const std::vector<double>& frames, size_t body) {
    const double* q = &frames[7 * body + 3];
    if (q[0] != 1 || q[1] != 0 || q[2] != 0 || q[3] != 0)
        throw std::logic_error("peer scenes need identity joint frames");
}

} // namespace

Scene scene_from_builder(const std::string& name,
                         std::function<void(scenes::SceneBuilder&)> add_world) {
    scenes::SceneBuilder b;
    b.begin_world();
    add_world(b);
    Scene s;
    s.name = name;
    s.dt = b.dt;
    s.gravity = at(b.gravity, 0);
    s.add_to_steel = add_world;
    std::vector<Vec3> frame; // world position of each body frame
    size_t q_at = 0, dof_at = 0;
    for (size_t i = 0; i < b.body_counts[0]; ++i) {
        require_identity(b.parent_frame, i);
        require_identity(b.child_frame, i);
        Body body;
        body.parent = b.joint_parent[i];
        body.mass = b.mass[i];
        body.inertia = at(b.inertia, 6 * i);
        body.axis = at(b.axis, 3 * i);
        body.force = at(b.external, 6 * i);
        const Vec3 parent_frame = at(b.parent_frame, 7 * i), child_frame = at(b.child_frame, 7 * i);
        const Vec3 parent_origin = body.parent < 0 ? Vec3{0, 0, 0} : frame[size_t(body.parent)];
        Vec3 origin;
        switch (b.joint_type[i]) {
        case STEEL_JOINT_FREE:
            body.joint = Joint::Free;
            if (body.parent >= 0 || b.position[q_at + 3] != 1)
                throw std::logic_error("free joints: world, identity");
            origin = add(add(parent_origin, parent_frame), sub(at(b.position, q_at), child_frame));
            q_at += 7;
            dof_at += 6;
            break;
        case STEEL_JOINT_REVOLUTE:
        case STEEL_JOINT_PRISMATIC:
            body.joint =
                b.joint_type[i] == STEEL_JOINT_REVOLUTE ? Joint::Revolute : Joint::Prismatic;
            if (b.position[q_at] != 0) throw std::logic_error("peer scenes need joint positions 0");
            body.lower = std::max(b.lower[dof_at], -1e300);
            body.upper = std::min(b.upper[dof_at], 1e300);
            origin = sub(add(parent_origin, parent_frame), child_frame);
            q_at += 1;
            dof_at += 1;
            break;
        case STEEL_JOINT_FIXED:
            body.joint = Joint::Fixed;
            origin = sub(add(parent_origin, parent_frame), child_frame);
            break;
        default:
            throw std::logic_error("peer scenes: unsupported joint type");
        }
        if (body.joint != Joint::Free) s.articulated = true;
        frame.push_back(origin);
        body.anchor = add(origin, child_frame);
        body.com = add(origin, at(b.com, 3 * i));
        s.bodies.push_back(body);
    }
    for (size_t c = 0; c < b.contact_counts[0]; ++c) {
        Contact contact;
        contact.body_a = b.contact_a[c];
        contact.body_b = b.contact_b[c];
        contact.point = at(b.contact_point, 3 * c);
        contact.normal = at(b.contact_normal, 3 * c);
        contact.gap = b.contact_distance[c];
        contact.friction = b.contact_friction[c];
        s.contacts.push_back(contact);
    }
    return s;
}

std::vector<SceneEntry> benchmark_scenes() {
    using scenes::SceneBuilder;
    std::vector<SceneEntry> list;
    for (uint32_t height : {5u, 10u, 20u})
        list.push_back(
            {scene_from_builder("stack " + std::to_string(height),
                                [height](SceneBuilder& b) { scenes::add_box_stack(b, height); }),
             true});
    for (uint32_t count : {100u, 1000u})
        list.push_back(
            {scene_from_builder("pile " + std::to_string(count),
                                [count](SceneBuilder& b) { scenes::add_box_pile(b, count); }),
             false});
    list.push_back({scene_from_builder("chain 10",
                                       [](SceneBuilder& b) { scenes::add_chain_on_ground(b, 10); }),
                    true});
    list.push_back({scene_from_builder(
                        "arm+box", [](SceneBuilder& b) { scenes::add_arm_with_box(b, 0.8, 20); }),
                    true});
    return list;
}

double contact_normal_residual(const Scene& scene, const BodyVelocities& v) {
    const auto point_velocity = [&](int32_t body, const Vec3& p) {
        if (body < 0) return Vec3{0, 0, 0};
        const size_t o = 6 * size_t(body);
        const Vec3 linear{v[o], v[o + 1], v[o + 2]}, angular{v[o + 3], v[o + 4], v[o + 5]};
        return add(linear, cross(angular, sub(p, scene.bodies[size_t(body)].com)));
    };
    double worst = 0;
    for (const Contact& c : scene.contacts) {
        const double normal_velocity = dot(
            c.normal, sub(point_velocity(c.body_a, c.point), point_velocity(c.body_b, c.point)));
        worst = std::max(worst, std::fabs(normal_velocity));
    }
    return worst;
}

uint32_t degrees_of_freedom(const Scene& scene) {
    uint32_t dofs = 0;
    for (const Body& b : scene.bodies)
        dofs += joint_dofs(b);
    return dofs;
}

uint32_t tree_dofs(const Scene& scene, int32_t body) {
    if (body < 0) return 0;
    const int32_t root = root_of(scene, body);
    uint32_t dofs = 0;
    for (size_t i = 0; i < scene.bodies.size(); ++i)
        if (root_of(scene, int32_t(i)) == root) dofs += joint_dofs(scene.bodies[i]);
    return dofs;
}

uint32_t chain_dofs(const Scene& scene, int32_t body) {
    uint32_t dofs = 0;
    for (; body >= 0; body = scene.bodies[size_t(body)].parent)
        dofs += joint_dofs(scene.bodies[size_t(body)]);
    return dofs;
}

} // namespace peers
