// make_reference.cpp: solves a set of problems through the C API and writes them, inputs and
// results, as a Lua file that returns one table per rows case, and under `scenes` one table per
// scene case. test_steel.lua uploads the same inputs through the Lua module, solves with the same
// options, and checks every number against these C results bit for bit (same library, same
// inputs, same thread count: the same bits).
//
//   steel_lua_reference OUTPUT.lua
//
// Numbers are written as hexadecimal floats ("%a", which Lua 5.4 reads exactly); infinities as
// math.huge.
#include "rows_scenes.hpp"
#include "scene_builder.hpp"

#include <steel/steel.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

void check(steel_status status, const char* what) {
    if (status != STEEL_OK) {
        std::fprintf(stderr, "steel_lua_reference: %s failed: %s\n", what,
                     steel_last_error_message());
        std::exit(1);
    }
}

std::string number(double value) {
    if (std::isinf(value)) return value > 0 ? "math.huge" : "-math.huge";
    char text[64];
    std::snprintf(text, sizeof text, "%a", value);
    return text;
}

template <class T> std::string sequence(const std::vector<T>& values) {
    std::string text = "{";
    for (size_t k = 0; k < values.size(); ++k) {
        if (k) text += ", ";
        if constexpr (std::is_floating_point_v<T>)
            text += number(values[k]);
        else
            text += std::to_string(values[k]);
    }
    return text + "}";
}

const char* path_name(int32_t path) {
    switch (path) {
    case STEEL_PATH_GENERAL:
        return "general";
    case STEEL_PATH_DENSE:
        return "dense";
    default:
        return "auto";
    }
}

const char* flag(uint32_t value) {
    return value ? "true" : "false";
}

struct Case {
    std::string name;
    scenes::RowsBuilder rows;
    int32_t precision = STEEL_PRECISION_FLOAT64;
    steel_solve_options options;
    Case() { steel_solve_options_default(&options); }
};

void write_desc_and_options(FILE* out, const steel_batch_desc& desc, const steel_solve_options& o) {
    std::fprintf(out, "    desc = { world_count = %u, precision = \"%s\" },\n", desc.world_count,
                 desc.precision == STEEL_PRECISION_FLOAT32 ? "float32" : "float64");
    std::fprintf(
        out,
        "    options = { iterations = %u, tolerance = %s, cfm = %s, path = \"%s\", warm_start = "
        "%s,\n"
        "                contact_regularization = %s, nesterov_momentum = %s,\n"
        "                enable_bilateral_preelimination = %s, record_residual_history = %s },\n",
        o.iterations, number(o.tolerance).c_str(), number(o.cfm).c_str(), path_name(o.path),
        flag(o.warm_start), number(o.contact_regularization).c_str(), flag(o.nesterov_momentum),
        flag(o.enable_bilateral_preelimination), flag(o.record_residual_history));
}

void write_stats(FILE* out, const std::vector<steel_world_stats>& stats) {
    std::fprintf(out, "    stats = {\n");
    for (const steel_world_stats& s : stats)
        std::fprintf(
            out,
            "      { path = \"%s\", sweeps = %u, flags = %u, residual = %s, first_residual = %s, "
            "momentum_restarts = %u },\n",
            path_name(s.path), s.sweeps, s.flags, number(s.residual).c_str(),
            number(s.first_residual).c_str(), s.momentum_restarts);
    std::fprintf(out, "    },\n");
}

void write_case(FILE* out, const Case& c) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = c.rows.world_count();
    desc.precision = c.precision;
    steel_batch batch{};
    check(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch), "create");
    const steel_rows_desc rows = c.rows.desc();
    check(steel_batch_upload_rows(batch, &rows), "upload");
    check(steel_batch_set_options(batch, &c.options), "set_options");
    check(steel_batch_solve(batch), "solve");
    std::vector<double> impulses(c.rows.total_rows()), velocities(c.rows.total_dofs());
    check(steel_batch_read_impulses(batch, impulses.data(), impulses.size(), nullptr), "impulses");
    check(steel_batch_read_velocities(batch, velocities.data(), velocities.size(), nullptr),
          "velocities");
    std::vector<steel_world_stats> stats(desc.world_count);
    check(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(),
                                       desc.world_count, nullptr),
          "stats");

    const steel_solve_options& o = c.options;
    std::fprintf(out, "  {\n    name = \"%s\",\n", c.name.c_str());
    write_desc_and_options(out, desc, o);
    const scenes::RowsBuilder& r = c.rows;
    std::fprintf(out, "    rows = {\n");
    std::fprintf(out, "      world_dof_counts = %s,\n", sequence(r.dof_counts).c_str());
    std::fprintf(out, "      world_row_counts = %s,\n", sequence(r.row_counts).c_str());
    std::fprintf(out, "      unconstrained_velocity = %s,\n",
                 sequence(r.unconstrained_velocity).c_str());
    std::fprintf(out, "      block_offset = %s,\n", sequence(r.block_offset).c_str());
    std::fprintf(out, "      block_length = %s,\n", sequence(r.block_length).c_str());
    std::fprintf(out, "      jacobian = %s,\n", sequence(r.jacobian).c_str());
    std::fprintf(out, "      response = %s,\n", sequence(r.response).c_str());
    std::fprintf(out, "      bias = %s,\n", sequence(r.bias).c_str());
    std::fprintf(out, "      kind = %s,\n", sequence(r.kind).c_str());
    std::fprintf(out, "      lower = %s,\n", sequence(r.lower).c_str());
    std::fprintf(out, "      upper = %s,\n", sequence(r.upper).c_str());
    std::fprintf(out, "      normal_row = %s,\n", sequence(r.normal_row).c_str());
    std::fprintf(out, "      friction = %s,\n", sequence(r.friction).c_str());
    std::fprintf(out, "      regularization = %s,\n", sequence(r.regularization).c_str());
    std::fprintf(out, "      initial_impulse = %s,\n", sequence(r.initial_impulse).c_str());
    std::fprintf(out, "    },\n");
    std::fprintf(out, "    impulses = %s,\n", sequence(impulses).c_str());
    std::fprintf(out, "    velocities = %s,\n", sequence(velocities).c_str());
    write_stats(out, stats);
    if (o.record_residual_history) {
        std::fprintf(out, "    history = {\n");
        for (uint32_t w = 0; w < desc.world_count; ++w) {
            std::vector<double> history(stats[w].sweeps);
            check(steel_batch_read_residual_history(batch, w, history.data(), stats[w].sweeps,
                                                    nullptr),
                  "history");
            std::fprintf(out, "      %s,\n", sequence(history).c_str());
        }
        std::fprintf(out, "    },\n");
    }
    std::fprintf(out, "  },\n");
    check(steel_batch_destroy(batch), "destroy");
}

// docs/guide.md's quickstart: a resting box, and a sliding box with box friction.
Case quickstart() {
    Case c;
    c.name = "quickstart";
    const double g_dt = 9.81 / 60.0;
    c.rows.begin_world({-g_dt});
    scenes::Row contact;
    contact.kind = STEEL_ROW_CONTACT_NORMAL;
    contact.blocks[0] = {0, {1.0}, {0.5}};
    c.rows.add_row(contact);
    c.rows.begin_world({3.0, -g_dt});
    contact.blocks[0] = {1, {1.0}, {0.2}};
    const uint32_t normal = c.rows.add_row(contact);
    scenes::Row friction;
    friction.kind = STEEL_ROW_FRICTION_BOX;
    friction.blocks[0] = {0, {1.0}, {0.2}};
    friction.normal_row = int32_t(normal);
    friction.friction = 0.5;
    c.rows.add_row(friction);
    c.options.iterations = 100;
    c.options.tolerance = 1e-9;
    return c;
}

// A tall stack with a mass ratio, with momentum and a residual history.
Case stack_momentum() {
    Case c;
    c.name = "stack_momentum";
    scenes::StackSpec spec;
    spec.height = 12;
    spec.top_mass = 10.0;
    scenes::add_stack_world(c.rows, spec);
    spec.height = 3;
    spec.top_mass = 1.0;
    scenes::add_stack_world(c.rows, spec);
    c.options.iterations = 300;
    c.options.nesterov_momentum = 1;
    c.options.record_residual_history = 1;
    c.options.path = STEEL_PATH_GENERAL;
    return c;
}

// Random worlds of every scalar kind, two bodies a row, under cfm and contact regularization.
Case random_worlds(bool preelimination) {
    Case c;
    c.name = preelimination ? "random_preelimination" : "random_cfm_regularization";
    std::mt19937_64 rng(preelimination ? 7 : 3);
    scenes::RandomWorldSpec spec;
    spec.row_count = 10;
    for (int w = 0; w < 4; ++w)
        scenes::add_random_world(c.rows, rng, spec);
    c.options.iterations = 40;
    c.options.cfm = 0.05;
    c.options.contact_regularization = preelimination ? 0.0 : 0.1;
    c.options.enable_bilateral_preelimination = preelimination ? 1 : 0;
    c.options.record_residual_history = 1;
    c.options.tolerance = preelimination ? 1e-7 : 0.0;
    return c;
}

// One box on the ground, sliding diagonally: a normal row and a cone pair; unbounded and
// one-sided bounded rows too; float32 storage; warm start from given impulses.
Case cone_and_bounds() {
    Case c;
    c.name = "cone_and_bounds_float32";
    c.precision = STEEL_PRECISION_FLOAT32;
    const double g_dt = 9.81 / 60.0;
    c.rows.begin_world({1.0, 2.0, -g_dt, 0.5});
    scenes::Row normal;
    normal.kind = STEEL_ROW_CONTACT_NORMAL;
    normal.blocks[0] = {2, {1.0}, {0.5}};
    normal.initial_impulse = 0.3;
    const uint32_t normal_index = c.rows.add_row(normal);
    for (uint32_t axis = 0; axis < 2; ++axis) {
        scenes::Row tangent;
        tangent.kind = STEEL_ROW_FRICTION_CONE;
        tangent.blocks[0] = {axis, {1.0}, {0.5}};
        tangent.normal_row = int32_t(normal_index);
        tangent.friction = 0.4;
        c.rows.add_row(tangent);
    }
    scenes::Row limit;
    limit.kind = STEEL_ROW_BOUNDED;
    limit.blocks[0] = {3, {1.0}, {0.25}};
    limit.bias = 0.1;
    limit.lower = -INFINITY;
    limit.upper = 0.05;
    c.rows.add_row(limit);
    scenes::Row soft;
    soft.kind = STEEL_ROW_BILATERAL;
    soft.blocks[0] = {0, {0.5}, {0.25}};
    soft.blocks[1] = {3, {-1.0}, {-0.25}};
    soft.regularization = 0.2;
    c.rows.add_row(soft);
    c.options.iterations = 60;
    c.options.path = STEEL_PATH_DENSE;
    c.options.record_residual_history = 1;
    return c;
}

// ---- scene mode ---------------------------------------------------------------------------------

constexpr double kG = 9.81, kDt = 1.0 / 60.0;

// A scene: the builder's arrays plus the fields it does not hold (standalone bodies, the per-DOF
// limits), and what the test checks against closed forms.
struct SceneCase {
    std::string name;
    scenes::SceneBuilder scene;
    double restitution_threshold = 0.5;
    std::vector<double> body_pose, body_velocity, drive_effort_limit, joint_velocity_limit;
    std::vector<int32_t> body_flags;
    steel_solve_options options;
    SceneCase() { steel_solve_options_default(&options); }

    steel_scene_desc desc() const {
        steel_scene_desc d = scene.desc();
        d.restitution_threshold = restitution_threshold;
        const auto or_null = [](const auto& v) { return v.empty() ? nullptr : v.data(); };
        d.body_pose = or_null(body_pose);
        d.body_velocity = or_null(body_velocity);
        d.body_flags = or_null(body_flags);
        d.drive_effort_limit = or_null(drive_effort_limit);
        d.joint_velocity_limit = or_null(joint_velocity_limit);
        return d;
    }
};

std::vector<double> read_all(steel_batch batch,
                             steel_status (*read)(steel_batch, double*, uint64_t, uint64_t*),
                             const char* what) {
    uint64_t count = 0;
    check(read(batch, nullptr, 0, &count), what);
    std::vector<double> values(count);
    check(read(batch, values.data(), count, &count), what);
    return values;
}

void write_scene_case(FILE* out, const SceneCase& c) {
    const scenes::SceneBuilder& b = c.scene;
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = b.world_count();
    steel_batch batch{};
    check(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch), "create");
    check(steel_batch_set_options(batch, &c.options), "set_options");
    const steel_scene_desc scene = c.desc();
    check(steel_batch_upload_scene(batch, &scene), "upload_scene");
    check(steel_batch_solve(batch), "solve");
    std::vector<steel_world_stats> stats(desc.world_count);
    check(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(),
                                       desc.world_count, nullptr),
          "stats");

    std::fprintf(out, "  {\n    name = \"%s\",\n", c.name.c_str());
    write_desc_and_options(out, desc, c.options);
    std::fprintf(out, "    scene = {\n");
    std::fprintf(out, "      dt = %s, baumgarte = %s, restitution_threshold = %s,\n",
                 number(b.dt).c_str(), number(b.baumgarte).c_str(),
                 number(c.restitution_threshold).c_str());
    std::fprintf(out, "      friction_model = \"%s\", drive_mode = \"%s\",\n",
                 b.friction_model == STEEL_FRICTION_MODEL_CONE ? "cone" : "box",
                 b.drive_mode == STEEL_DRIVE_MODE_ROWS ? "rows" : "augmented");
    const auto field = [&](const char* name, const auto& values) {
        if (!values.empty() || std::string(name).rfind("world_", 0) == 0)
            std::fprintf(out, "      %s = %s,\n", name, sequence(values).c_str());
    };
    field("gravity", b.gravity);
    field("world_body_count", b.body_counts);
    field("world_contact_count", b.contact_counts);
    field("world_connect_count", b.connect_counts);
    field("world_mimic_count", b.mimic_counts);
    field("body_mass", b.mass);
    field("body_com", b.com);
    field("body_inertia", b.inertia);
    field("joint_type", b.joint_type);
    field("joint_parent", b.joint_parent);
    field("joint_axis", b.axis);
    field("joint_parent_frame", b.parent_frame);
    field("joint_child_frame", b.child_frame);
    field("joint_position", b.position);
    field("joint_velocity", b.velocity);
    field("joint_armature", b.armature);
    field("joint_damping", b.damping);
    field("joint_lower", b.lower);
    field("joint_upper", b.upper);
    field("drive_stiffness", b.kp);
    field("drive_damping", b.kd);
    field("drive_target_position", b.target_q);
    field("drive_target_velocity", b.target_qd);
    field("drive_effort_limit", c.drive_effort_limit);
    field("joint_velocity_limit", c.joint_velocity_limit);
    field("external_force", b.external);
    field("body_pose", c.body_pose);
    field("body_velocity", c.body_velocity);
    field("body_flags", c.body_flags);
    field("contact_body_a", b.contact_a);
    field("contact_body_b", b.contact_b);
    field("contact_point", b.contact_point);
    field("contact_normal", b.contact_normal);
    field("contact_distance", b.contact_distance);
    field("contact_friction", b.contact_friction);
    field("contact_restitution", b.contact_restitution);
    field("connect_body_a", b.connect_a);
    field("connect_body_b", b.connect_b);
    field("connect_point_a", b.connect_point_a);
    field("connect_point_b", b.connect_point_b);
    field("mimic_joint_a", b.mimic_a);
    field("mimic_joint_b", b.mimic_b);
    field("mimic_ratio", b.mimic_ratio);
    field("mimic_offset", b.mimic_offset);
    std::fprintf(out, "    },\n");
    const std::pair<const char*, steel_status (*)(steel_batch, double*, uint64_t, uint64_t*)>
        readers[] = {{"impulses", steel_batch_read_impulses},
                     {"velocities", steel_batch_read_velocities},
                     {"contact_impulses", steel_batch_read_contact_impulses},
                     {"joint_velocities", steel_batch_read_joint_velocities},
                     {"limit_impulses", steel_batch_read_limit_impulses},
                     {"drive_impulses", steel_batch_read_drive_impulses},
                     {"body_velocities", steel_batch_read_body_velocities},
                     {"body_poses", steel_batch_read_body_poses},
                     {"integrated_positions", steel_batch_read_integrated_positions}};
    std::fprintf(out, "    results = {\n");
    for (const auto& [name, read] : readers)
        std::fprintf(out, "      %s = %s,\n", name, sequence(read_all(batch, read, name)).c_str());
    std::fprintf(out, "    },\n");
    write_stats(out, stats);
    std::fprintf(out, "  },\n");
    check(steel_batch_destroy(batch), "destroy");
}

// A revolute pendulum (tests/test_scene.cpp's): a 1 kg point-like rod end at `length` below the
// joint, swinging about y; the com is at (-L sin q, 0, -L cos q).
scenes::BodySpec pendulum(double angle) {
    scenes::BodySpec link;
    link.mass = 1.0;
    link.com = {0, 0, -1.0};
    link.inertia_diagonal = {1e-3, 1e-3, 1e-3};
    link.joint = STEEL_JOINT_REVOLUTE;
    link.axis = {0, 1, 0};
    link.q = {angle};
    link.qd = {0.0};
    return link;
}

// A 3 kg unit box resting on the ground on its 4 bottom corners, cone friction: the normal
// impulses sum to m g dt, and it does not move.
SceneCase box_on_ground() {
    SceneCase c;
    c.name = "box_on_ground";
    c.scene.friction_model = STEEL_FRICTION_MODEL_CONE;
    c.scene.begin_world();
    c.scene.add_body(scenes::free_box(3.0, {0.5, 0.5, 0.5}, {0, 0, 0.5}));
    scenes::box_plane_contacts(c.scene, 0, scenes::free_body_frame(c.scene.position.data()),
                               {0.5, 0.5, 0.5}, -1, 0.0, 0.6);
    c.options.iterations = 500;
    return c;
}

// Three worlds, drive_mode ROWS: (0) a pendulum released from horizontal: qd' = -dt g / (1 + I)
// with L = m = 1; (1) a pendulum at rest on its lower limit q = 0.5: the limit takes
// dt g sin(0.5) and it stays; (2) a 2 kg slider on a prismatic joint along x, driven by a damper
// kd = 10 towards 1 m/s: the drive row's impulse is dt kd / (1 + dt kd / m).
SceneCase pendulum_limit_drive() {
    SceneCase c;
    c.name = "pendulum_limit_drive";
    c.scene.drive_mode = STEEL_DRIVE_MODE_ROWS;
    c.scene.begin_world();
    c.scene.add_body(pendulum(M_PI / 2));
    c.scene.begin_world();
    scenes::BodySpec resting = pendulum(0.5);
    resting.lower = 0.5;
    resting.upper = 2.0;
    c.scene.add_body(resting);
    c.scene.begin_world();
    scenes::BodySpec slider;
    slider.mass = 2.0;
    slider.joint = STEEL_JOINT_PRISMATIC;
    slider.axis = {1, 0, 0};
    slider.q = {0.25};
    slider.qd = {0.0};
    slider.drive_damping = 10.0;
    slider.drive_target_velocity = 1.0;
    c.scene.add_body(slider);
    c.drive_effort_limit = {INFINITY, INFINITY, 100.0};
    c.joint_velocity_limit = {INFINITY, INFINITY, 50.0};
    c.options.iterations = 100;
    return c;
}

// The rest of the desc. World 0: a standalone 1 kg box (joint NONE, DYNAMIC)
// on a KINEMATIC standalone platform moving at 2 m/s along x, mu = 0.3: the box gains mu g dt.
// World 1: a pendulum held at its tip by a connect to the world point where the tip is, and two
// pendulums tied by a mimic constraint q1 = 0.5 q2 + 0.1.
SceneCase standalone_connect_mimic() {
    SceneCase c;
    c.name = "standalone_connect_mimic";
    c.scene.begin_world();
    c.scene.add_body(scenes::free_box(1.0, {0.2, 0.2, 0.2}, {0, 0, 0.2}));
    c.scene.add_body(scenes::free_box(1.0, {2, 2, 0.1}, {0, 0, -0.1}));
    scenes::box_plane_contacts(c.scene, 0, {{0, 0, 0.2}, {1, 0, 0, 0}}, {0.2, 0.2, 0.2}, 1, 0.0,
                               0.3);
    // Both bodies become standalone: no position coordinates; the box keeps its 6 DOFs, the
    // kinematic platform has none.
    scenes::SceneBuilder& s = c.scene;
    s.joint_type = {STEEL_JOINT_NONE, STEEL_JOINT_NONE};
    s.position.clear();
    for (std::vector<double>* per_dof : {&s.velocity, &s.armature, &s.damping, &s.lower, &s.upper,
                                         &s.kp, &s.kd, &s.target_q, &s.target_qd})
        per_dof->resize(6);
    c.body_pose = {0, 0, 0.2, 1, 0, 0, 0, 0, 0, -0.1, 1, 0, 0, 0};
    c.body_velocity = {0, 0, 0, 0, 0, 0, 2.0, 0, 0, 0, 0, 0};
    c.body_flags = {STEEL_BODY_DYNAMIC, STEEL_BODY_KINEMATIC};

    s.begin_world();
    const double angle = 0.2;
    s.add_body(pendulum(angle));
    s.add_connect(0, {0, 0, -1}, -1, {-std::sin(angle), 0, -std::cos(angle)});
    s.add_body(pendulum(0.3));
    s.add_body(pendulum(0.4));
    s.add_mimic(1, 2, 0.5, 0.1);
    for (int k = 0; k < 3; ++k) {
        c.body_pose.insert(c.body_pose.end(), {0, 0, 0, 1, 0, 0, 0});
        c.body_velocity.insert(c.body_velocity.end(), {0, 0, 0, 0, 0, 0});
        c.body_flags.push_back(STEEL_BODY_DYNAMIC);
    }
    c.options.iterations = 300;
    return c;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT.lua\n", argv[0]);
        return 2;
    }
    FILE* out = std::fopen(argv[1], "w");
    if (!out) {
        std::fprintf(stderr, "steel_lua_reference: cannot write %s\n", argv[1]);
        return 1;
    }
    std::fprintf(
        out,
        "-- Written by steel_lua_reference (bindings/lua/tests/make_reference.cpp): inputs and C "
        "results.\nreturn {\n");
    write_case(out, quickstart());
    write_case(out, stack_momentum());
    write_case(out, random_worlds(false));
    write_case(out, random_worlds(true));
    write_case(out, cone_and_bounds());
    std::fprintf(out, "  scenes = {\n");
    write_scene_case(out, box_on_ground());
    write_scene_case(out, pendulum_limit_drive());
    write_scene_case(out, standalone_connect_mimic());
    std::fprintf(out, "  },\n}\n");
    return std::fclose(out) == 0 ? 0 : 1;
}
