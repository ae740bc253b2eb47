// The propagation response (SPEC 7): the same problem as the immediate response, solved with
// rows at the touched bodies and impulses walked through each tree. Checked against the
// immediate response after every sweep (the two are the same Gauss-Seidel iteration), at
// convergence, and the per-body 6x6 responses against J_b H~^-1 J_b^T formed densely.
#include "dense_cholesky.hpp"
#include "propagation/propagation_build.hpp"
#include "robot_scenes.hpp"
#include "rows_builder.hpp"
#include "rows_upload.hpp"
#include "scene/scene_rows.hpp"
#include "scene_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

namespace {

using scenes::BodySpec;
using scenes::ContactSpec;
using scenes::SceneBuilder;

using Mode = test::SceneMode;
using test::solve_with;

// A chain of `links` bars of 0.3 m along x lying on the ground: a free root, revolute joints
// about y with limits of +-0.4 rad (the last one at its limit and turning into it), a contact
// under the middle of every bar. Optionally the last bar is folded back onto the first (a contact
// between two links of one articulation).
void add_chain(SceneBuilder& builder, uint32_t links, bool fold_back) {
    int32_t previous = -1;
    for (uint32_t i = 0; i < links; ++i) {
        BodySpec link;
        link.mass = 1.0 + 0.1 * i;
        link.com = {0.15, 0, 0};
        link.inertia_diagonal = {0.001, 0.008, 0.008};
        if (i == 0) {
            link.joint = STEEL_JOINT_FREE;
            link.q = {0, 0, 0.02, 1, 0, 0, 0};
            link.qd = {0.1, 0, -0.3, 0, 0.2, 0};
        } else {
            link.joint = STEEL_JOINT_REVOLUTE;
            link.parent = previous;
            link.axis = {0, 1, 0};
            link.parent_frame.position = {0.3, 0, 0};
            link.q = {i + 1 == links ? 0.399 : 0.0}; // the last joint at its upper limit
            link.qd = {i + 1 == links ? 0.5 : 0.05 * double(i % 3) - 0.05};
            link.lower = -0.4;
            link.upper = 0.4;
            link.armature = 0.01;
            link.damping = 0.1;
        }
        previous = builder.add_body(link);
        builder.add_contact(ContactSpec{
            previous, -1, {0.3 * i + 0.15, 0.02 * (i % 2), 0}, {0, 0, 1}, -0.002, 0.6, 0});
    }
    if (fold_back)
        builder.add_contact(ContactSpec{previous, 0, {0.1, 0, 0.03}, {0, 0, 1}, -0.004, 0.3, 0});
}

// A fixed-base three-link arm folded over so that its last link presses on its first.
void add_folded_arm(SceneBuilder& builder) {
    int32_t previous = -1;
    const double angles[3] = {0.1, 2.9, 0.3};
    for (int i = 0; i < 3; ++i) {
        BodySpec link;
        link.mass = 0.8;
        link.com = {0.2, 0, 0};
        link.inertia_diagonal = {0.002, 0.01, 0.01};
        link.joint = STEEL_JOINT_REVOLUTE;
        link.parent = previous;
        link.axis = {0, 1, 0};
        if (i > 0) link.parent_frame.position = {0.4, 0, 0};
        link.q = {angles[i]};
        link.qd = {0.2 - 0.1 * i};
        previous = builder.add_body(link);
    }
    builder.add_contact(ContactSpec{2, 0, {0.2, 0, 0.05}, {0, 0, 1}, -0.003, 0.5, 0});
    builder.add_contact(ContactSpec{1, -1, {0.3, 0, 0}, {0, 0, 1}, -0.001, 0.5, 0});
}

// Two chains of 4 and a legged robot in one world, with contacts that go back and forth between
// the chains (one between their links): rows on one tree follow rows on another, so each tree's
// walk cache (tree_walk.hpp) must hold its pending impulses while the walks work on the others.
void add_trees_taking_turns(SceneBuilder& builder) {
    add_chain(builder, 4, false); // bodies 0-3
    add_chain(builder, 4, false); // bodies 4-7
    scenes::add_legged_robot(builder);
    builder.add_contact(ContactSpec{2, 6, {0.75, 0.01, 0.02}, {0, 0.6, 0.8}, -0.003, 0.5, 0});
    builder.add_contact(ContactSpec{1, -1, {0.4, 0.03, 0}, {0, 0, 1}, -0.001, 0.4, 0});
    builder.add_contact(ContactSpec{5, -1, {0.5, -0.03, 0}, {0, 0, 1}, -0.002, 0.4, 0});
    builder.add_contact(ContactSpec{1, 5, {0.45, 0, 0.01}, {0, 0, 1}, -0.001, 0.3, 0});
}

struct NamedScene {
    const char* name;
    SceneBuilder builder;
};

std::vector<NamedScene> equivalence_scenes() {
    std::vector<NamedScene> out;
    const auto add = [&](const char* name, auto&& build) {
        NamedScene scene{name, {}};
        scene.builder.begin_world();
        build(scene.builder);
        out.push_back(std::move(scene));
    };
    add("chain of 10 with limits on the ground", [](SceneBuilder& b) { add_chain(b, 10, false); });
    add("chain folded onto itself", [](SceneBuilder& b) { add_chain(b, 6, true); });
    add("folded arm (link on link)", [](SceneBuilder& b) { add_folded_arm(b); });
    add("legged robot (branched tree)", [](SceneBuilder& b) { scenes::add_legged_robot(b); });
    add("arm with a two-finger grasp",
        [](SceneBuilder& b) { scenes::add_arm_with_box(b, 0.8, 40.0); });
    add("four-bar (loop closure)", [](SceneBuilder& b) { scenes::add_four_bar(b); });
    add("three trees taking turns", [](SceneBuilder& b) { add_trees_taking_turns(b); });
    add("stack of 4 boxes", [](SceneBuilder& b) { scenes::add_box_stack(b, 4); });
    return out;
}

} // namespace

TEST_CASE(
    "propagation: the same Gauss-Seidel iterate as the immediate response after every sweep") {
    for (NamedScene& scene : equivalence_scenes()) {
        CAPTURE(std::string(scene.name));
        const steel_scene_desc desc = scene.builder.desc();
        for (uint32_t sweeps : {1u, 2u, 5u, 20u}) {
            CAPTURE(sweeps);
            Mode immediate, propagation;
            immediate.iterations = propagation.iterations = sweeps;
            propagation.response = STEEL_RESPONSE_PROPAGATION;
            const test::Solved a = solve_with(desc, immediate), b = solve_with(desc, propagation);
            const double scale = test::max_abs(a.impulses);
            REQUIRE(scale > 0);
            CHECK(test::max_abs_diff(a.impulses, b.impulses) <= 1e-10 * scale);
            CHECK(test::max_abs_diff(a.velocities, b.velocities) <=
                  1e-10 * (1 + test::max_abs(a.velocities)));
        }
    }
}

TEST_CASE("propagation: converges to the immediate answer (1e-8 relative)") {
    for (NamedScene& scene : equivalence_scenes()) {
        CAPTURE(std::string(scene.name));
        const steel_scene_desc desc = scene.builder.desc();
        Mode immediate, propagation;
        immediate.iterations = propagation.iterations = 3000;
        propagation.response = STEEL_RESPONSE_PROPAGATION;
        const test::Solved a = solve_with(desc, immediate), b = solve_with(desc, propagation);
        CHECK(test::max_abs_diff(a.impulses, b.impulses) <= 1e-8 * test::max_abs(a.impulses));
        CHECK(test::max_abs_diff(a.velocities, b.velocities) <=
              1e-8 * (1 + test::max_abs(a.velocities)));
        // And both are converged, so this is the answer and not a shared stall.
        CHECK(a.stats[0].residual <= 1e-9 * (1 + test::max_abs(a.impulses)));
    }
}

TEST_CASE("propagation: float32 stays with the float64 immediate answer") {
    for (NamedScene& scene : equivalence_scenes()) {
        CAPTURE(std::string(scene.name));
        const steel_scene_desc desc = scene.builder.desc();
        Mode reference, single;
        reference.iterations = single.iterations = 30;
        single.response = STEEL_RESPONSE_PROPAGATION;
        single.precision = STEEL_PRECISION_FLOAT32;
        const test::Solved a = solve_with(desc, reference), b = solve_with(desc, single);
        // 30 sweeps of rounding at 6e-8 each, grown by the mass ratios of these scenes.
        CHECK(test::max_abs_diff(a.impulses, b.impulses) <= 2e-3 * test::max_abs(a.impulses));
    }
}

namespace {

// The scene moved by `offset` along x: root joints' frames, contact points and the world points of
// connects. Joint-space answers do not change.
SceneBuilder moved(SceneBuilder scene, double offset) {
    for (size_t b = 0; b < scene.joint_parent.size(); ++b)
        if (scene.joint_parent[b] < 0) scene.parent_frame[7 * b] += offset;
    for (size_t c = 0; c < scene.contact_a.size(); ++c)
        scene.contact_point[3 * c] += offset;
    for (size_t g = 0; g < scene.connect_b.size(); ++g)
        if (scene.connect_b[g] < 0) scene.connect_point_b[3 * g] += offset;
    return scene;
}

} // namespace

TEST_CASE("propagation: a scene 10 km from the origin solves as at the origin, float32 included") {
    // About the world origin a tree 10 km out has inertias of size m X^2 = 1e8 m: float32 walks
    // lost everything there (velocities off by 350%). Each tree is now taken about its own point.
    for (NamedScene& scene : equivalence_scenes()) {
        CAPTURE(std::string(scene.name));
        const SceneBuilder far = moved(scene.builder, 1e4);
        const steel_scene_desc near_desc = scene.builder.desc(), far_desc = far.desc();
        Mode reference, propagation64, propagation32;
        reference.iterations = propagation64.iterations = propagation32.iterations = 30;
        propagation64.response = propagation32.response = STEEL_RESPONSE_PROPAGATION;
        propagation32.precision = STEEL_PRECISION_FLOAT32;
        const test::Solved a = solve_with(near_desc, reference);
        const double scale = test::max_abs(a.impulses), vscale = 1 + test::max_abs(a.velocities);
        REQUIRE(scale > 0);
        const test::Solved b = solve_with(far_desc, propagation64);
        CHECK(test::max_abs_diff(a.impulses, b.impulses) <= 1e-9 * scale);
        CHECK(test::max_abs_diff(a.velocities, b.velocities) <= 1e-9 * vscale);
        // The float32 bound of "float32 stays with the float64 immediate answer", far away too.
        const test::Solved c = solve_with(far_desc, propagation32);
        CHECK(test::max_abs_diff(a.impulses, c.impulses) <= 2e-3 * scale);
        CHECK(test::max_abs_diff(a.velocities, c.velocities) <= 2e-3 * vscale);
    }
}

TEST_CASE("propagation: each touched body's 6x6 response equals J_b H~^-1 J_b^T formed densely") {
    for (NamedScene& scene : equivalence_scenes()) {
        CAPTURE(std::string(scene.name));
        const steel_scene_desc desc = scene.builder.desc();
        steel::scene::SceneRecord record;
        const steel::scene::BuiltRows built = steel::scene::build_scene_rows(desc, 1, record);
        const steel::RowSet<double> rows = steel::build_row_set<double>(built.desc(), 1, 0.0, 0.0);
        const auto set = steel::propagation::build_propagation_set(record, rows);
        uint32_t checked = 0;
        uint32_t body = 0;
        for (const auto& art : record.worlds[0].articulations) {
            if (art.model.joints.size() < 2) continue;
            const uint32_t n = art.model.dof_count();
            // H~ = H + diag(augmentation), inverted column by column.
            std::vector<double> h = steel::scene::mass_matrix(art.model, art.kinematics);
            for (uint32_t k = 0; k < n; ++k)
                h[size_t(k) * n + k] += art.augmentation[k];
            REQUIRE(steel::cholesky_factor_in_place(h.data(), n));
            for (uint32_t b = 0; b < art.model.joints.size(); ++b, ++body) {
                const double* response = set.body_response.data() + 36 * size_t(body);
                double largest = 0;
                for (int k = 0; k < 36; ++k)
                    largest = std::max(largest, std::fabs(response[k]));
                if (largest == 0) continue; // no term touches this body
                // J_b: column k is S_k for the DOFs of b and its ancestors, as motion vectors
                // about the tree's reference point, its root joint's origin (PropagationSet).
                const steel::scene::Vec3 reference = art.kinematics.joint_origin[0];
                std::vector<double> jb(6 * size_t(n), 0.0);
                for (int32_t j = int32_t(b); j >= 0; j = art.model.joints[size_t(j)].parent)
                    for (uint32_t k = art.model.dof_offset[size_t(j)];
                         k < art.model.dof_offset[size_t(j) + 1]; ++k) {
                        const steel::scene::Spatial& s = art.kinematics.subspace[k];
                        const steel::scene::Vec3 v = s.linear + cross(s.angular, reference);
                        const double column[6] = {s.angular.x, s.angular.y, s.angular.z,
                                                  v.x,         v.y,         v.z};
                        for (int r = 0; r < 6; ++r)
                            jb[size_t(r) * n + k] = column[r];
                    }
                for (int c = 0; c < 6; ++c) {
                    std::vector<double> x(jb.begin() + long(c) * n, jb.begin() + long(c + 1) * n);
                    steel::cholesky_solve_in_place(h.data(), n, x.data());
                    for (int r = 0; r < 6; ++r) {
                        double dense = 0;
                        for (uint32_t k = 0; k < n; ++k)
                            dense += jb[size_t(r) * n + k] * x[k];
                        CHECK(std::fabs(response[6 * r + c] - dense) <= 1e-10 * (1 + largest));
                    }
                }
                ++checked;
            }
        }
        const bool free_bodies_only = std::string(scene.name).find("boxes") != std::string::npos;
        CHECK((checked > 0) != free_bodies_only);
    }
}

TEST_CASE("propagation: what it cannot solve is refused with a message") {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_solve_options options;
    steel_solve_options_default(&options);

    SUBCASE("colored without propagation") {
        options.solve_mode = STEEL_SOLVE_COLORED;
        CHECK(steel_batch_set_options(batch, &options) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()).find("needs articulated_contact_response") !=
              std::string::npos);
    }
    SUBCASE("with momentum or pre-elimination") {
        options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
        options.nesterov_momentum = 1;
        CHECK(steel_batch_set_options(batch, &options) == STEEL_ERROR_INVALID_ARGUMENT);
        options.nesterov_momentum = 0;
        options.enable_bilateral_preelimination = 1;
        CHECK(steel_batch_set_options(batch, &options) == STEEL_ERROR_INVALID_ARGUMENT);
    }
    SUBCASE("on rows without a scene, and with cone friction") {
        options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
        REQUIRE_OK(steel_batch_set_options(batch, &options));
        SceneBuilder builder;
        builder.begin_world();
        scenes::add_box_stack(builder, 2);
        builder.friction_model = STEEL_FRICTION_MODEL_CONE;
        const steel_scene_desc scene = builder.desc();
        REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
        CHECK(steel_batch_solve(batch) == STEEL_ERROR_INVALID_ARGUMENT);
        // Named by the call, like every message (the propagation build did not, before).
        CHECK(std::string(steel_last_error_message())
                  .rfind("steel_batch_solve: world 0, row 1 is FRICTION_CONE: coupled friction "
                         "needs",
                         0) == 0);
        uint64_t count = 0;
        CHECK(steel_batch_read_impulses(batch, nullptr, 0, &count) ==
              STEEL_ERROR_NO_DATA); // nothing half-done

        scenes::RowsBuilder builder_rows; // one contact on one DOF
        builder_rows.begin_world({-1.0});
        scenes::Row row;
        row.blocks[0].jacobian = {1.0};
        row.blocks[0].response = {1.0};
        row.kind = STEEL_ROW_CONTACT_NORMAL;
        builder_rows.add_row(row);
        const steel_rows_desc rows = builder_rows.desc();
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
        CHECK(steel_batch_solve(batch) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()).find("needs a scene upload") !=
              std::string::npos);
    }
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("propagation: 1, 2 and 8 threads give the same bits, serial and colored") {
    // Every kind of tree world (arms, legged robots, four-bars, chains, piles) several times:
    // the set's walks, the colors and the sweeps are spread over the threads by world.
    SceneBuilder builder;
    scenes::add_articulated_mix(builder, 6);
    const steel_scene_desc desc = builder.desc();
    for (int32_t solve_mode : {STEEL_SOLVE_SERIAL, STEEL_SOLVE_COLORED}) {
        CAPTURE(solve_mode);
        Mode mode;
        mode.response = STEEL_RESPONSE_PROPAGATION;
        mode.solve_mode = solve_mode;
        mode.iterations = 15;
        mode.threads = 1;
        const test::Solved one = solve_with(desc, mode);
        REQUIRE(test::max_abs(one.impulses) > 0);
        for (uint32_t threads : {2u, 8u}) {
            CAPTURE(threads);
            mode.threads = threads;
            const test::Solved many = solve_with(desc, mode);
            CHECK(std::memcmp(many.impulses.data(), one.impulses.data(),
                              one.impulses.size() * sizeof(double)) == 0);
            CHECK(std::memcmp(many.velocities.data(), one.velocities.data(),
                              one.velocities.size() * sizeof(double)) == 0);
        }
    }
}

TEST_CASE("propagation: a batch uploaded again and again gives a fresh batch's bits") {
    // Each upload builds its propagation set and colors into the memory of the ones before
    // (spare_propagation, spare_colored), and its scene record, articulation records included,
    // into the record of the upload before last. Two scenes of the same world count but
    // different trees and contacts follow each other in an order that builds each into the
    // other's memory as well as its own, so stale arrays of the other would show.
    SceneBuilder mix, piles;
    scenes::add_articulated_mix(mix, 2);
    for (uint32_t w = 0; w < mix.world_count(); ++w) {
        piles.begin_world();
        if (w % 2 == 0)
            scenes::add_box_pile(piles, 3 + w % 5);
        else
            scenes::add_legged_robot(piles);
    }
    const steel_scene_desc a = mix.desc(), b = piles.desc();
    REQUIRE(a.world_count == b.world_count);
    for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64})
        for (int32_t solve_mode : {STEEL_SOLVE_SERIAL, STEEL_SOLVE_COLORED}) {
            CAPTURE(precision);
            CAPTURE(solve_mode);
            Mode mode;
            mode.response = STEEL_RESPONSE_PROPAGATION;
            mode.solve_mode = solve_mode;
            mode.precision = precision;
            mode.iterations = 12;
            const test::Solved fresh_a = solve_with(a, mode), fresh_b = solve_with(b, mode);

            const steel_batch batch = test::make_scene_batch(a.world_count, mode);
            for (const steel_scene_desc* scene : {&a, &b, &b, &a, &a, &b, &a}) {
                REQUIRE_OK(steel_batch_upload_scene(batch, scene));
                REQUIRE_OK(steel_batch_solve(batch));
                const test::Solved got = test::read_all(batch);
                const test::Solved& expected = scene == &a ? fresh_a : fresh_b;
                REQUIRE(got.impulses.size() == expected.impulses.size());
                CHECK(std::memcmp(got.impulses.data(), expected.impulses.data(),
                                  got.impulses.size() * sizeof(double)) == 0);
                CHECK(std::memcmp(got.velocities.data(), expected.velocities.data(),
                                  got.velocities.size() * sizeof(double)) == 0);
            }
            REQUIRE_OK(steel_batch_destroy(batch));
        }
}
