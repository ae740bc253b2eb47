// Writes a peer scene as MJCF for MuJoCo 2.2.2 and loads it: bodies nested by their joints
// (hinge, slide, free, or none for a fixed joint), explicit inertials, one non-colliding marker
// geom per body (contacts need geoms to name their bodies) and a ground plane. Body `k` of the
// scene is named "b<k>" and its geom "g<k>".
#pragma once

#include "peer_scene.hpp"

#include <mujoco/mujoco.h>

namespace peers {

// Returns nullptr (and prints MuJoCo's message) when the model does not load.
mjModel* load_mujoco_model(const Scene& scene, int sweeps);

} // namespace peers
