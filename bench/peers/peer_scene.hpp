// The benchmark scenes in a form every engine can be built from: bodies with their joint to a
// parent, world positions, and the contacts (point, normal, gap) that Steel's scene builders
// generate. Every engine is fed exactly these contacts, so no engine's collision detection runs.
//
// All scenes start at rest with every frame axis-aligned (identity orientations, joint angles 0),
// which keeps the translation to each engine to positions and offsets.
#pragma once

#include "robot_scenes.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace peers {

using Vec3 = std::array<double, 3>;

enum class Joint { Free, Revolute, Prismatic, Fixed };

struct Body {
    Joint joint = Joint::Free;
    int32_t parent = -1; // body index, -1 = the world
    double mass = 1;
    Vec3 inertia{1, 1, 1}; // diagonal, about the com, world axes
    Vec3 com{0, 0, 0};     // world
    Vec3 anchor{0, 0, 0};  // joint anchor (world); unused for Free
    Vec3 axis{0, 0, 1};    // joint axis (world)
    double lower = -1e300, upper = 1e300;
    Vec3 force{0, 0, 0}; // external force at the com, constant
};

struct Contact {
    int32_t body_a = 0, body_b = -1; // b = -1: the static ground
    Vec3 point{0, 0, 0};
    Vec3 normal{0, 0, 1}; // from b into a: a positive impulse pushes a along it
    double gap = 0;       // signed distance, negative = penetration
    double friction = 0.6;
};

struct Scene {
    std::string name;
    std::vector<Body> bodies;
    std::vector<Contact> contacts;
    double dt = 1.0 / 60.0;
    Vec3 gravity{0, 0, -9.81};
    bool articulated = false; // has joints (chains, arms): Bullet uses its multibody solver
    std::function<void(scenes::SceneBuilder&)> add_to_steel; // the same world for Steel
};

// The scene list of the benchmark (issue 7): stacks of 5, 10, 20, piles of 100 and 1,000, the
// chain on the ground and the arm holding a box. `small` scenes are also run as 64 and 1,024
// copies.
struct SceneEntry {
    Scene scene;
    bool small;
};
std::vector<SceneEntry> benchmark_scenes();

// Builds a Scene from the first world of a SceneBuilder (one of examples/scenes).
Scene scene_from_builder(const std::string& name, std::function<void(scenes::SceneBuilder&)> add);

// Linear and angular velocity of every body at its com, world axes (6 per body).
using BodyVelocities = std::vector<double>;

// The residual every engine is scored by: the largest |normal relative velocity| at a contact
// after the solve, from the engine's body velocities and the contact geometry. Every contact of
// these scenes is loaded at the exact solution (bodies at rest, touching at zero gap), so the
// exact answer has zero normal velocity at every contact and this is the distance from it.
double contact_normal_residual(const Scene& scene, const BodyVelocities& velocities);

// Sum over bodies and joint DOFs.
uint32_t degrees_of_freedom(const Scene& scene);
// DOFs of the whole articulation (tree) that `body` belongs to: 6 for a free box; 0 for the world.
uint32_t tree_dofs(const Scene& scene, int32_t body);
// DOFs on the path from the root of `body`'s tree to `body` (what a sparse Jacobian row touches).
uint32_t chain_dofs(const Scene& scene, int32_t body);

Vec3 cross(const Vec3& a, const Vec3& b);
Vec3 sub(const Vec3& a, const Vec3& b);
double dot(const Vec3& a, const Vec3& b);

} // namespace peers
