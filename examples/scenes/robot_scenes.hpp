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
ArmWithBox add_arm_with_box(SceneBuilder& builder, double friction, double squeeze, double box_mass = 0.5);

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

} // namespace scenes
