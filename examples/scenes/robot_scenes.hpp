// The example scenes shared by the tests, the demo and the benchmarks (scene mode): a box stack,
// a box pile, a 7-DOF arm whose two fingers hold a box, a branched legged robot standing on the
// ground, and a four-bar linkage. Each adds one world's bodies and contacts to a SceneBuilder.
#pragma once

#include "scene_builder.hpp"

#include <cstdint>

namespace scenes {

// `height` unit boxes (half extent 0.5) resting on each other and the ground, 4 corner contacts
// per support.
void add_box_stack(SceneBuilder& builder, uint32_t height);

// `count` unit boxes in columns of up to 4, columns 1.2 apart on a square grid.
void add_box_pile(SceneBuilder& builder, uint32_t count);

struct ArmWithBox {
    int32_t hand, left_finger, right_finger, box;
};

// A 7-DOF arm standing up from the world origin (revolute joints about z, y, z, y, z, y, z, links
// of 0.3, each held at its pose by a stiff augmented drive), a hand with two prismatic fingers
// along x, and a box of `box_mass` between them. Each finger is pushed onto the box by an
// external force `squeeze`; two contacts per finger with friction `friction`.
ArmWithBox add_arm_with_box(SceneBuilder& builder, double friction, double squeeze,
                            double box_mass = 0.5);

// A torso on a free joint with four straight legs (hip and knee revolute about y, held by
// drives), each foot touching the ground.
void add_legged_robot(SceneBuilder& builder);

// Crank 1, coupler 2, rocker 1.5 on ground pivots, revolute about y, closed by a connect (not a
// parallelogram: its loop equation is not linear in the angles). Bars at summed angle a point
// along (cos a, 0, -sin a). Returns the x of the rocker's ground pivot (the crank's is 0).
double add_four_bar(SceneBuilder& builder);

} // namespace scenes

namespace scenes {

// A chain of `links` thin boxes (0.3 x 0.04 x 0.04, 0.5 kg) lying straight along x on the ground
// z = 0: the first on a FREE joint, the others on revolute joints at the previous link's tip,
// alternately about z and y, limited to [-0.5, 0.5] rad (at rest at 0, inside both limits).
// Four corner contacts per link with the ground (friction 0.6).
void add_chain_on_ground(SceneBuilder& builder, uint32_t links = 10);

// `boxes` unit-mass boxes (half extent 0.1) on the ground, each leaning on a floating two-link
// tree (a 1.2 x 0.1 x 0.1 base on a FREE joint, a 0.6 long tip on a revolute joint about z), the
// even ones on the tip, the odd ones on the base. The box-to-tree contacts come first, so under
// colored sweeps box k's tree contact takes color k and its four ground contacts the colors
// around it: tree contacts and packs of free bodies alternate through the colors.
void add_boxes_leaning_on_tree(SceneBuilder& builder, uint32_t boxes = 8);

// `copies` of each of the articulated scenes in a world of its own, in turn: the arm with a
// box, the legged robot, a box pile of 2 + copy % 7 boxes, the four-bar and a chain on the
// ground of 3 + copy % 5 links. Between them they have every row kind a scene makes (with
// drive_mode = STEEL_DRIVE_MODE_ROWS, drive rows too) and worlds of different sizes.
void add_articulated_mix(SceneBuilder& builder, uint32_t copies);

} // namespace scenes
