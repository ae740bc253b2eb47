#include "robot_scenes.hpp"

#include <cmath>
#include <vector>

namespace scenes {

namespace {

const Vec3 kUnitHalf{0.5, 0.5, 0.5};

BodySpec revolute(int32_t parent, Vec3 axis, Vec3 at, double length, double mass) {
    BodySpec link;
    link.mass = mass;
    link.com = {0, 0, length / 2};
    const double across = mass * (0.04 * 0.04 + length * length) / 12;
    link.inertia_diagonal = {across, across, mass * 0.04 * 0.04 / 6};
    link.joint = STEEL_JOINT_REVOLUTE;
    link.parent = parent;
    link.axis = axis;
    link.parent_frame.position = at;
    link.q = {0.0};
    link.qd = {0.0};
    return link;
}

} // namespace

void add_box_stack(SceneBuilder& builder, uint32_t height) {
    for (uint32_t k = 0; k < height; ++k) {
        const int32_t box = builder.add_body(free_box(1.0, kUnitHalf, {0, 0, 0.5 + k}));
        box_plane_contacts(builder, box, {{0, 0, 0.5 + k}, {1, 0, 0, 0}}, kUnitHalf,
                           k == 0 ? -1 : box - 1, double(k), 0.6);
    }
}

void add_box_pile(SceneBuilder& builder, uint32_t count) {
    const uint32_t columns = (count + 3) / 4;
    const uint32_t side = uint32_t(std::ceil(std::sqrt(double(columns))));
    for (uint32_t c = 0, placed = 0; c < columns; ++c) {
        const double x = 1.2 * (c % side), y = 1.2 * (c / side);
        for (uint32_t k = 0; k < 4 && placed < count; ++k, ++placed) {
            const int32_t box = builder.add_body(free_box(1.0, kUnitHalf, {x, y, 0.5 + k}));
            box_plane_contacts(builder, box, {{x, y, 0.5 + k}, {1, 0, 0, 0}}, kUnitHalf,
                               k == 0 ? -1 : box - 1, double(k), 0.6);
        }
    }
}

ArmWithBox add_arm_with_box(SceneBuilder& builder, double friction, double squeeze,
                            double box_mass) {
    const Vec3 axes[7] = {{0, 0, 1}, {0, 1, 0}, {0, 0, 1}, {0, 1, 0},
                          {0, 0, 1}, {0, 1, 0}, {0, 0, 1}};
    const double length = 0.3;
    int32_t parent = -1;
    for (int k = 0; k < 7; ++k) {
        BodySpec link = revolute(parent, axes[k], {0, 0, parent < 0 ? 0.0 : length}, length, 1.0);
        link.drive_stiffness = 1e4;
        link.drive_damping = 1e2;
        link.armature = 0.01;
        parent = builder.add_body(link);
    }
    // The hand: fixed on the last link's tip.
    BodySpec hand;
    hand.mass = 0.5;
    hand.inertia_diagonal = {1e-3, 1e-3, 1e-3};
    hand.joint = STEEL_JOINT_FIXED;
    hand.parent = parent;
    hand.parent_frame.position = {0, 0, length};
    hand.q = {};
    hand.qd = {};
    ArmWithBox arm;
    arm.hand = builder.add_body(hand);
    // Fingers slide along x; their faces touch the box's faces at x = -+0.05 at rest.
    const double box_half = 0.05, finger_half = 0.01, finger_height = 0.08;
    const double hand_height = 7 * length;
    for (int side : {-1, 1}) {
        BodySpec finger;
        finger.mass = 0.05;
        finger.inertia_diagonal = {1e-4, 1e-4, 1e-4};
        finger.joint = STEEL_JOINT_PRISMATIC;
        finger.parent = arm.hand;
        finger.axis = {1, 0, 0};
        finger.parent_frame.position = {side * (box_half + finger_half), 0, finger_height};
        finger.q = {0.0};
        finger.qd = {0.0};
        finger.external_force = {-side * squeeze, 0, 0, 0, 0, 0};
        (side < 0 ? arm.left_finger : arm.right_finger) = builder.add_body(finger);
    }
    BodySpec box =
        free_box(box_mass, {box_half, box_half, box_half}, {0, 0, hand_height + finger_height});
    arm.box = builder.add_body(box);
    for (int side : {-1, 1})
        for (double dz : {-0.03, 0.03}) {
            ContactSpec contact;
            contact.body_a = arm.box;
            contact.body_b = side < 0 ? arm.left_finger : arm.right_finger;
            contact.point = {side * box_half, 0, hand_height + finger_height + dz};
            contact.normal = {-double(side), 0, 0}; // from the finger into the box
            contact.distance = 0;
            contact.friction = friction;
            builder.add_contact(contact);
        }
    return arm;
}

void add_legged_robot(SceneBuilder& builder) {
    // Straight legs of thigh 0.3 + shin 0.3 under hips at height 0.6: the feet touch z = 0.
    const int32_t body = builder.add_body(free_box(8.0, {0.3, 0.2, 0.05}, {0, 0, 0.65}));
    for (int fx : {-1, 1})
        for (int fy : {-1, 1}) {
            BodySpec hip = revolute(body, {0, 1, 0}, {fx * 0.25, fy * 0.15, -0.05}, 0.3, 1.0);
            hip.com = {0, 0, -0.15};
            hip.drive_stiffness = 2000;
            hip.drive_damping = 50;
            const int32_t thigh = builder.add_body(hip);
            BodySpec knee = revolute(thigh, {0, 1, 0}, {0, 0, -0.3}, 0.3, 0.5);
            knee.com = {0, 0, -0.15};
            knee.drive_stiffness = 2000;
            knee.drive_damping = 50;
            const int32_t shin = builder.add_body(knee);
            ContactSpec foot;
            foot.body_a = shin;
            foot.body_b = -1;
            foot.point = {fx * 0.25, fy * 0.15, 0};
            foot.normal = {0, 0, 1};
            foot.distance = 0;
            foot.friction = 0.8;
            builder.add_contact(foot);
        }
}

double add_four_bar(SceneBuilder& builder) {
    const auto bar = [](int32_t parent, double length, Vec3 at, double angle) {
        BodySpec b;
        b.mass = 1.0;
        b.com = {length / 2, 0, 0};
        b.inertia_diagonal = {1e-3, length * length / 12, length * length / 12};
        b.joint = STEEL_JOINT_REVOLUTE;
        b.parent = parent;
        b.axis = {0, 1, 0};
        b.parent_frame.position = at;
        b.q = {angle};
        b.qd = {0};
        return b;
    };
    const double beta = std::asin(std::sin(M_PI / 3) / 1.5);
    const double pivot = 0.5 + 2.0 + 1.5 * std::cos(beta);
    const int32_t crank = builder.add_body(bar(-1, 1.0, {0, 0, 0}, -M_PI / 3));
    const int32_t coupler = builder.add_body(bar(crank, 2.0, {1.0, 0, 0}, M_PI / 3));
    const int32_t rocker = builder.add_body(bar(coupler, 1.5, {2.0, 0, 0}, beta));
    builder.add_connect(rocker, {1.5, 0, 0}, -1, {pivot, 0, 0});
    return pivot;
}

} // namespace scenes

namespace scenes {

void add_chain_on_ground(SceneBuilder& builder, uint32_t links) {
    const double length = 0.3, half_width = 0.02, mass = 0.5;
    const Vec3 half{length / 2, half_width, half_width};
    int32_t parent = -1;
    for (uint32_t k = 0; k < links; ++k) {
        BodySpec link = free_box(mass, half, {0, 0, 0}); // for its inertia
        link.com = {length / 2, 0, 0}; // body frame at the link's start, on its axis
        if (k == 0) {
            link.q = {0, 0, half_width, 1, 0, 0, 0};
        } else {
            link.joint = STEEL_JOINT_REVOLUTE;
            link.parent = parent;
            link.axis = k % 2 == 1 ? Vec3{0, 0, 1} : Vec3{0, 1, 0};
            link.parent_frame.position = {length, 0, 0};
            link.q = {0.0};
            link.qd = {0.0};
            link.lower = -0.5;
            link.upper = 0.5;
        }
        parent = builder.add_body(link);
        const Frame centre{{length * (k + 0.5), 0, half_width}, {1, 0, 0, 0}};
        box_plane_contacts(builder, parent, centre, half, -1, 0.0, 0.6, 0.0);
    }
}

void add_boxes_leaning_on_tree(SceneBuilder& builder, uint32_t boxes) {
    const Vec3 half{0.1, 0.1, 0.1};
    const int32_t base = builder.add_body(free_box(2, {0.6, 0.05, 0.05}, {0.6, 0, 0.5}));
    BodySpec tip_link = free_box(1, {0.3, 0.05, 0.05}, {0, 0, 0});
    tip_link.joint = STEEL_JOINT_REVOLUTE;
    tip_link.parent = base;
    tip_link.parent_frame.position = {0.6, 0, 0};
    tip_link.q = {0.0};
    tip_link.qd = {0.0};
    const int32_t tip = builder.add_body(tip_link);
    std::vector<Vec3> centres;
    for (uint32_t k = 0; k < boxes; ++k) {
        centres.push_back({0.25 * k, 0.2, 0.1});
        builder.add_body(free_box(1, half, centres.back()));
    }
    for (uint32_t k = 0; k < boxes; ++k)
        builder.add_contact(ContactSpec{int32_t(tip + 1 + k),
                                        k % 2 ? base : tip,
                                        {centres[k][0], 0.1, 0.15},
                                        {0, 1, 0},
                                        -0.002});
    for (uint32_t k = 0; k < boxes; ++k)
        box_plane_contacts(builder, int32_t(tip + 1 + k), Frame{centres[k], {1, 0, 0, 0}}, half, -1,
                           0.0, 0.6, 0.0);
}

void add_articulated_mix(SceneBuilder& builder, uint32_t copies) {
    for (uint32_t copy = 0; copy < copies; ++copy) {
        builder.begin_world();
        add_arm_with_box(builder, 0.8, 2.0);
        builder.begin_world();
        add_legged_robot(builder);
        builder.begin_world();
        add_box_pile(builder, 2 + copy % 7);
        builder.begin_world();
        add_four_bar(builder);
        builder.begin_world();
        add_chain_on_ground(builder, 3 + copy % 5);
    }
}

} // namespace scenes
