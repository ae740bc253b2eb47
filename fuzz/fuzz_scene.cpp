// Fuzz target: scene uploads (steel_batch_upload_scene), solved on the CPU backend and by the
// CUDA kernels emulated on the host (tests/simt/). The input builds one to three worlds, each
// either one of the example scenes (stack, pile, legged robot, arm with box, four-bar, chain,
// boxes leaning on a tree) or a random tree: every joint type, random parents, frames, states,
// limits, drives, armature, damping, external forces, contacts (on the ground or between
// bodies), connects and mimics; sometimes drive effort and joint velocity limits on every DOF.
// Now and then one value or index of the scene is replaced by anything (NaN, 1e300, an index
// out of range, a joint type that is none), and the scene's and the solve's settings are drawn
// too. Properties:
//  - a refused option, upload or solve is a status with a message (the propagation response,
//    for example, refuses cone friction at the solve);
//  - an accepted scene solves within the sweeps asked, and every world is finite, or flagged
//    STEEL_WORLD_NONFINITE with zero impulses and velocity v-hat (SPEC 9);
//  - the emulated kernels catch nothing, and give the same: under the propagation response
//    (serial, both layouts, or colored) the CPU's results bit for bit, as the kernels promise;
//    under the immediate response every world finite or flagged and reset (their sums run in
//    other orders, so not the same bits); and either way the CPU's paths (check_paths says
//    where the device differs by design);
//  - the solved batch's snapshot loads, reads the recorded impulses and solves again to the
//    original's next solve, bit for bit.
// Array lengths the scene implies (bodies, coordinates, contacts) are never changed: the C API
// cannot see the length of a caller's array, so reading past one is the caller's error.
#include "emulated.hpp"
#include "fuzz_input.hpp"
#include "robot_scenes.hpp"
#include "scene_builder.hpp"

#include "preelimination_world.hpp"
#include "world_rows.hpp"

#include <steel/steel.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

namespace {

using scenes::Quat;
using scenes::Vec3;

double magnitude(fuzz::Input& in, double scale) {
    return std::fabs(in.unit()) * scale;
}

Vec3 small_vector(fuzz::Input& in, double scale) {
    const double x = in.unit(), y = in.unit(), z = in.unit();
    return {x * scale, y * scale, z * scale};
}

Vec3 unit_vector(fuzz::Input& in) {
    Vec3 v = small_vector(in, 1.0);
    const double length = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(length > 1e-3)) return {0, 0, 1};
    for (double& x : v)
        x /= length;
    return v;
}

Quat unit_quaternion(fuzz::Input& in) {
    Quat q{1 + in.unit(), in.unit(), in.unit(), in.unit()};
    const double length = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(length > 1e-3)) return {1, 0, 0, 0};
    for (double& x : q)
        x /= length;
    return q;
}

// A tree of one to six bodies on random joints (parents before children, or not), with
// contacts, a connect and a mimic now and then.
void add_random_tree(scenes::SceneBuilder& builder, fuzz::Input& in) {
    const uint32_t body_count = 1 + in.below(6);
    std::vector<int32_t> one_dof;
    for (uint32_t k = 0; k < body_count; ++k) {
        scenes::BodySpec body;
        body.mass = 0.1 + magnitude(in, 2.0);
        body.inertia_diagonal = {0.01 + magnitude(in, 1.0), 0.01 + magnitude(in, 1.0),
                                 0.01 + magnitude(in, 1.0)};
        body.com = small_vector(in, 0.2);
        body.joint = int32_t(in.below(5)); // FIXED, REVOLUTE, PRISMATIC, BALL, FREE
        body.parent = int32_t(in.below(k + 1)) - 1;
        body.axis = unit_vector(in);
        body.parent_frame = {small_vector(in, 0.5), unit_quaternion(in)};
        body.child_frame = {small_vector(in, 0.5), unit_quaternion(in)};
        switch (body.joint) {
        case STEEL_JOINT_REVOLUTE:
        case STEEL_JOINT_PRISMATIC: {
            body.q = {in.unit()};
            body.qd = {2 * in.unit()};
            if (in.below(3) == 0) {
                body.lower = -magnitude(in, 1.0);
                body.upper = magnitude(in, 1.0);
            }
            if (in.below(3) == 0) {
                body.drive_stiffness = magnitude(in, 100.0);
                body.drive_damping = magnitude(in, 10.0);
                body.drive_target_position = in.unit();
                body.drive_target_velocity = in.unit();
            }
            one_dof.push_back(int32_t(k));
            break;
        }
        case STEEL_JOINT_BALL: {
            const Quat q = unit_quaternion(in);
            body.q.assign(q.begin(), q.end());
            const Vec3 w = small_vector(in, 2.0);
            body.qd.assign(w.begin(), w.end());
            break;
        }
        case STEEL_JOINT_FREE: {
            const Vec3 p = small_vector(in, 2.0);
            const Quat q = unit_quaternion(in);
            body.q = {p[0], p[1], p[2], q[0], q[1], q[2], q[3]};
            const Vec3 v = small_vector(in, 2.0), w = small_vector(in, 2.0);
            body.qd = {v[0], v[1], v[2], w[0], w[1], w[2]};
            break;
        }
        default: // FIXED: no coordinates
            break;
        }
        if (in.below(4) == 0) {
            body.armature = magnitude(in, 0.1);
            body.damping = magnitude(in, 1.0);
        }
        if (in.below(4) == 0)
            for (double& f : body.external_force)
                f = 10 * in.unit();
        builder.add_body(body);
    }
    const uint32_t contacts = in.below(7);
    for (uint32_t c = 0; c < contacts; ++c) {
        scenes::ContactSpec contact;
        contact.body_a = int32_t(in.below(body_count));
        contact.body_b = in.below(3) == 0 ? int32_t(in.below(body_count)) : -1;
        contact.point = small_vector(in, 1.0);
        contact.normal = in.below(2) ? Vec3{0, 0, 1} : unit_vector(in);
        contact.distance = 0.01 * in.unit();
        contact.friction = magnitude(in, 1.0);
        contact.restitution = in.below(4) == 0 ? magnitude(in, 1.0) : 0.0;
        builder.add_contact(contact);
    }
    if (in.below(4) == 0)
        builder.add_connect(int32_t(in.below(body_count)), small_vector(in, 0.5),
                            int32_t(in.below(body_count + 1)) - 1, small_vector(in, 0.5));
    if (one_dof.size() >= 2 && in.below(4) == 0)
        builder.add_mimic(one_dof[in.below(uint32_t(one_dof.size()))],
                          one_dof[in.below(uint32_t(one_dof.size()))], 2 * in.unit(), in.unit());
}

void add_world(scenes::SceneBuilder& builder, fuzz::Input& in) {
    builder.begin_world(in.below(8) ? Vec3{0, 0, -9.81} : small_vector(in, 20.0));
    switch (in.below(9)) {
    case 0:
        scenes::add_box_stack(builder, 1 + in.below(3));
        break;
    case 1:
        scenes::add_box_pile(builder, 1 + in.below(6));
        break;
    case 2:
        scenes::add_legged_robot(builder);
        break;
    case 3:
        scenes::add_arm_with_box(builder, magnitude(in, 1.0), magnitude(in, 5.0));
        break;
    case 4:
        scenes::add_four_bar(builder);
        break;
    case 5:
        scenes::add_chain_on_ground(builder, 2 + in.below(4));
        break;
    case 6:
        scenes::add_boxes_leaning_on_tree(builder, 1 + in.below(3));
        break;
    default:
        add_random_tree(builder, in);
        break;
    }
}

// Replaces one value or index of the scene by anything. Lengths stay as the scene implies them:
// a joint type is only changed to one with the same coordinates (revolute, prismatic) or to no
// type at all (which the upload must refuse before reading coordinates for it).
void corrupt_one(scenes::SceneBuilder& b, fuzz::Input& in) {
    const auto any_of = [&](std::vector<double>& values) {
        if (!values.empty()) values[in.below(uint32_t(values.size()))] = in.number();
    };
    const auto index_of = [&](std::vector<int32_t>& values) {
        if (values.empty()) return;
        values[in.below(uint32_t(values.size()))] =
            in.flag() ? int32_t(in.u32()) : int32_t(in.below(16)) - 2;
    };
    switch (in.below(16)) {
    case 0:
        any_of(b.mass);
        break;
    case 1:
        any_of(b.inertia);
        break;
    case 2:
        any_of(b.com);
        break;
    case 3:
        any_of(b.axis);
        break;
    case 4:
        any_of(in.flag() ? b.parent_frame : b.child_frame);
        break;
    case 5:
        any_of(in.flag() ? b.position : b.velocity);
        break;
    case 6:
        any_of(in.flag() ? b.lower : b.upper);
        break;
    case 7:
        any_of(in.flag() ? b.kp : b.kd);
        break;
    case 8:
        any_of(in.flag() ? b.armature : b.damping);
        break;
    case 9:
        any_of(b.external);
        break;
    case 10:
        any_of(in.flag() ? b.contact_point : b.contact_normal);
        break;
    case 11:
        any_of(in.flag() ? b.contact_distance : b.contact_friction);
        break;
    case 12:
        index_of(b.joint_parent);
        break;
    case 13:
        index_of(in.flag() ? b.contact_a : b.contact_b);
        break;
    case 14:
        index_of(in.flag() ? b.connect_a : b.mimic_a);
        break;
    default:
        if (!b.joint_type.empty()) {
            int32_t& type = b.joint_type[in.below(uint32_t(b.joint_type.size()))];
            if (type == STEEL_JOINT_REVOLUTE || type == STEEL_JOINT_PRISMATIC)
                type = in.flag() ? STEEL_JOINT_REVOLUTE + STEEL_JOINT_PRISMATIC - type : 17;
            else
                type = in.flag() ? -1 : 99;
        }
        break;
    }
}

void refusal_has_message(const char* what) {
    if (steel_last_error_message()[0] == '\0') fuzz::die(what);
}

// Every world finite, or flagged with zero impulses and velocity v-hat, within `iterations`.
template <class Real>
void check_worlds(const steel::RowSet<Real>& rows, const std::vector<Real>& impulse,
                  const std::vector<Real>& velocity, const std::vector<steel_world_stats>& stats,
                  uint32_t iterations, const char* who) {
    for (uint32_t w = 0; w < rows.world_count; ++w) {
        const uint32_t row0 = rows.world_row_offset[w], row1 = rows.world_row_offset[w + 1];
        const uint32_t dof0 = rows.world_dof_offset[w], dof1 = rows.world_dof_offset[w + 1];
        if (stats[w].sweeps > iterations) {
            std::fprintf(stderr, "%s, world %u: %u sweeps of at most %u\n", who, w, stats[w].sweeps,
                         iterations);
            fuzz::die("a world ran more sweeps than asked");
        }
        const bool flagged = (stats[w].flags & STEEL_WORLD_NONFINITE) != 0;
        for (uint32_t i = row0; i < row1; ++i)
            if (flagged ? impulse[i] != Real(0) : !std::isfinite(impulse[i])) {
                std::fprintf(stderr, "%s, world %u, row %u: impulse %g (flagged %d)\n", who, w,
                             i - row0, double(impulse[i]), int(flagged));
                fuzz::die("a world is neither finite nor flagged and reset");
            }
        for (uint32_t k = dof0; k < dof1; ++k)
            if (flagged
                    ? std::memcmp(&velocity[k], &rows.unconstrained_velocity[k], sizeof(Real)) != 0
                    : !std::isfinite(velocity[k])) {
                std::fprintf(stderr, "%s, world %u, DOF %u: velocity %g (flagged %d)\n", who, w,
                             k - dof0, double(velocity[k]), int(flagged));
                fuzz::die("a world is neither finite nor flagged and reset");
            }
    }
}

// The kernels report the CPU's path for every world (each world's steel_world_stats::path), but
// for one documented case (docs/cuda.md, "Classification"): the device's dense kernel takes up to
// 32 rows, so a world forced onto the dense path with more rows left to solve (after
// pre-elimination, if it applies: the kept rows decide the path then) runs the general sweep there
// and says so. The backends' internal classification arrays (BatchState::world_path) are not
// compared: for a pre-eliminated world the CPU's holds its whole row count's path, the device's
// that path as the dense kernel could take it, and neither is what the world reports.
template <class Real>
void check_paths(const steel::RowSet<Real>& rows, const std::vector<steel_world_stats>& cpu,
                 const std::vector<steel_world_stats>& kernels,
                 const steel_solve_options& options) {
    for (uint32_t w = 0; w < rows.world_count; ++w) {
        if (kernels[w].path == cpu[w].path) continue;
        const steel::WorldRows<Real> world = steel::world_rows(rows, w);
        const uint32_t live =
            world.row_count -
            (options.enable_bilateral_preelimination ? steel::bilateral_row_count(world) : 0);
        const bool too_big_for_the_dense_kernel =
            options.path == STEEL_PATH_DENSE && cpu[w].path == STEEL_PATH_DENSE &&
            kernels[w].path == STEEL_PATH_GENERAL && live > 32;
        if (!too_big_for_the_dense_kernel) {
            std::fprintf(stderr,
                         "world %u (%u rows, %u live): the kernels report path %d, the CPU %d\n", w,
                         world.row_count, live, kernels[w].path, cpu[w].path);
            fuzz::die("the kernels and the CPU backend disagree on a world's path");
        }
    }
}

template <class Real>
void check_emulated(steel::BatchState<Real>& host, const steel_solve_options& options) {
    check_worlds(host.rows, host.results.impulse, host.results.velocity, host.stats,
                 options.iterations, "cpu");
    if (options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION) {
        const bool colored = options.solve_mode == STEEL_SOLVE_COLORED;
        for (bool thread_per_world : {false, true}) {
            if (colored && thread_per_world) continue; // the colored mode has one layout
            const auto emulated = test::emulate_propagation_solve(
                host.rows, *host.propagation, colored ? host.colored.get() : nullptr, options,
                thread_per_world);
            fuzz::require_no_problems(emulated.problems);
            check_paths(host.rows, host.stats, emulated.stats, options);
            bool same = fuzz::same_bits(emulated.impulse, host.results.impulse) &&
                        fuzz::same_bits(emulated.velocity, host.results.velocity) &&
                        fuzz::same_bits(emulated.stats, host.stats);
            for (size_t w = 0; same && w < host.stats.size() && host.history_stride; ++w)
                same = std::memcmp(emulated.history.data() + w * emulated.history_stride,
                                   host.history.data() + w * host.history_stride,
                                   host.stats[w].sweeps * sizeof(double)) == 0;
            if (!same) {
                std::fprintf(stderr, "propagation kernel, %s layout, %s sweeps\n",
                             thread_per_world ? "thread" : "warp", colored ? "colored" : "serial");
                fuzz::die("the propagation kernels' solve is not the CPU's bit for bit");
            }
        }
        return;
    }
    const auto emulated = test::emulate_solve(host.rows, options);
    fuzz::require_no_problems(emulated.problems);
    check_worlds(host.rows, emulated.impulse, emulated.velocity, emulated.stats, options.iterations,
                 "kernels");
    check_paths(host.rows, host.stats, emulated.stats, options);
}

// A solved scene batch's snapshot holds the scene and loads as the same batch (docs/snapshots.md,
// "Scene batches"): it reads the recorded impulses, and its next solve gives the original's next
// solve bit for bit.
void check_snapshot_replays(steel_batch batch) {
    uint64_t size = 0;
    if (steel_batch_save_memory(batch, nullptr, 0, &size) != STEEL_OK)
        fuzz::die("a solved scene batch's snapshot size unknown");
    std::vector<uint8_t> bytes(size);
    if (steel_batch_save_memory(batch, bytes.data(), size, &size) != STEEL_OK)
        fuzz::die("a solved scene batch cannot be saved");
    steel_batch loaded{};
    if (steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), size, &loaded) != STEEL_OK) {
        std::fprintf(stderr, "%s\n", steel_last_error_message());
        fuzz::die("a solved scene batch's snapshot does not load");
    }
    if (!fuzz::same_bits(fuzz::read_impulses(loaded), fuzz::read_impulses(batch)))
        fuzz::die("a loaded scene snapshot reads other impulses than it recorded");
    if (steel_batch_solve(loaded) != STEEL_OK || steel_batch_solve(batch) != STEEL_OK)
        fuzz::die("a loaded scene snapshot, or the batch it came from, failed to solve again");
    if (!fuzz::same_bits(fuzz::read_impulses(loaded), fuzz::read_impulses(batch)))
        fuzz::die("a loaded scene snapshot solves to other impulses than the original");
    steel_batch_destroy(loaded);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Input in(data, size);
    scenes::SceneBuilder builder;
    const uint32_t worlds = 1 + in.below(3);
    for (uint32_t w = 0; w < worlds; ++w)
        add_world(builder, in);
    if (in.below(8) == 0) builder.dt = in.number();
    if (in.below(8) == 0) builder.baumgarte = in.number();
    builder.friction_model = in.below(3) ? STEEL_FRICTION_MODEL_BOX : STEEL_FRICTION_MODEL_CONE;
    builder.drive_mode = in.below(2) ? STEEL_DRIVE_MODE_AUGMENTED : STEEL_DRIVE_MODE_ROWS;
    if (in.below(16) == 0) builder.friction_model = int32_t(in.u32());
    if (in.below(16) == 0) builder.drive_mode = int32_t(in.u32());
    if (in.below(4) == 0) corrupt_one(builder, in);

    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = worlds;
    desc.precision = in.flag() ? STEEL_PRECISION_FLOAT32 : STEEL_PRECISION_FLOAT64;
    steel_batch batch{};
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &batch) != STEEL_OK)
        fuzz::die("create failed");

    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 1 + in.below(30);
    options.tolerance = in.flag() ? 0.0 : 1e-6 * magnitude(in, 1.0);
    options.cfm = in.flag() ? 0.0 : 1e-4 * magnitude(in, 1.0);
    options.contact_regularization = in.flag() ? 0.0 : 1e-4 * magnitude(in, 1.0);
    options.path = int32_t(in.below(3));
    options.warm_start = in.below(2);
    options.articulated_contact_response =
        in.flag() ? STEEL_RESPONSE_PROPAGATION : STEEL_RESPONSE_IMMEDIATE;
    options.solve_mode = in.flag() ? STEEL_SOLVE_COLORED : STEEL_SOLVE_SERIAL;
    options.nesterov_momentum = in.below(4) == 0;
    options.enable_bilateral_preelimination = in.below(4) == 0;
    options.record_residual_history = in.below(2);
    if (steel_batch_set_options(batch, &options) != STEEL_OK)
        refusal_has_message("a refused option without a message");
    steel_solve_options used;
    steel_solve_options_default(&used);
    steel_batch_get_options(batch, &used);

    steel_scene_desc scene = builder.desc();
    // Per-DOF limits the builder does not hold: drive effort limits (finite ones need drive rows)
    // and joint velocity limits, +inf (none) or positive, now and then anything. Drawn last and
    // taken on a 1, so that an input that has run out (zeros) sets none.
    const size_t dofs = builder.velocity.size();
    std::vector<double> effort_limit, velocity_limit;
    const auto limits = [&](std::vector<double>& values, double scale) {
        values.resize(dofs);
        for (double& value : values)
            value = in.below(16) == 0 ? in.number()
                    : in.flag()       ? INFINITY
                                      : 0.01 + magnitude(in, scale);
        return values.data();
    };
    if (in.below(4) == 1) scene.drive_effort_limit = limits(effort_limit, 50.0);
    if (in.below(4) == 1) scene.joint_velocity_limit = limits(velocity_limit, 5.0);
    if (steel_batch_upload_scene(batch, &scene) != STEEL_OK) {
        refusal_has_message("a refused scene without a message");
    } else if (steel_batch_solve(batch) != STEEL_OK) {
        refusal_has_message("a refused solve without a message");
    } else {
        std::visit([&](auto& host) { check_emulated(host, used); },
                   steel::lookup_batch(batch.id, "fuzz_scene").state);
        check_snapshot_replays(batch);
    }
    steel_batch_destroy(batch);
    return 0;
}
