// make_reference.cpp: solves a set of problems through the C API and writes them, inputs and
// results, as a Lua file that returns one table per case. test_steel.lua uploads the same inputs
// through the Lua module, solves with the same options, and checks every number against these C
// results bit for bit (same library, same inputs, same thread count: the same bits).
//
//   steel_lua_reference OUTPUT.lua
//
// Numbers are written as hexadecimal floats ("%a", which Lua 5.4 reads exactly); infinities as
// math.huge.
#include "rows_scenes.hpp"

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
        std::fprintf(stderr, "steel_lua_reference: %s failed: %s\n", what, steel_last_error_message());
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
    case STEEL_PATH_GENERAL: return "general";
    case STEEL_PATH_DENSE: return "dense";
    default: return "auto";
    }
}

const char* flag(uint32_t value) { return value ? "true" : "false"; }

struct Case {
    std::string name;
    scenes::RowsBuilder rows;
    int32_t precision = STEEL_PRECISION_FLOAT64;
    steel_solve_options options;
    Case() { steel_solve_options_default(&options); }
};

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
    check(steel_batch_read_velocities(batch, velocities.data(), velocities.size(), nullptr), "velocities");
    std::vector<steel_world_stats> stats(desc.world_count);
    check(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(), desc.world_count, nullptr),
          "stats");

    const steel_solve_options& o = c.options;
    std::fprintf(out, "  {\n    name = \"%s\",\n", c.name.c_str());
    std::fprintf(out, "    desc = { world_count = %u, precision = \"%s\" },\n", desc.world_count,
                 c.precision == STEEL_PRECISION_FLOAT32 ? "float32" : "float64");
    std::fprintf(out,
                 "    options = { iterations = %u, tolerance = %s, cfm = %s, path = \"%s\", warm_start = %s,\n"
                 "                contact_regularization = %s, nesterov_momentum = %s,\n"
                 "                enable_bilateral_preelimination = %s, record_residual_history = %s },\n",
                 o.iterations, number(o.tolerance).c_str(), number(o.cfm).c_str(), path_name(o.path),
                 flag(o.warm_start), number(o.contact_regularization).c_str(), flag(o.nesterov_momentum),
                 flag(o.enable_bilateral_preelimination), flag(o.record_residual_history));
    const scenes::RowsBuilder& r = c.rows;
    std::fprintf(out, "    rows = {\n");
    std::fprintf(out, "      world_dof_counts = %s,\n", sequence(r.dof_counts).c_str());
    std::fprintf(out, "      world_row_counts = %s,\n", sequence(r.row_counts).c_str());
    std::fprintf(out, "      unconstrained_velocity = %s,\n", sequence(r.unconstrained_velocity).c_str());
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
    std::fprintf(out, "    stats = {\n");
    for (const steel_world_stats& s : stats)
        std::fprintf(out,
                     "      { path = \"%s\", sweeps = %u, flags = %u, residual = %s, first_residual = %s, "
                     "momentum_restarts = %u },\n",
                     path_name(s.path), s.sweeps, s.flags, number(s.residual).c_str(),
                     number(s.first_residual).c_str(), s.momentum_restarts);
    std::fprintf(out, "    },\n");
    if (o.record_residual_history) {
        std::fprintf(out, "    history = {\n");
        for (uint32_t w = 0; w < desc.world_count; ++w) {
            std::vector<double> history(stats[w].sweeps);
            check(steel_batch_read_residual_history(batch, w, history.data(), stats[w].sweeps, nullptr), "history");
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
    for (int w = 0; w < 4; ++w) scenes::add_random_world(c.rows, rng, spec);
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
    std::fprintf(out, "-- Written by steel_lua_reference (bindings/lua/tests/make_reference.cpp): inputs and C "
                      "results.\nreturn {\n");
    write_case(out, quickstart());
    write_case(out, stack_momentum());
    write_case(out, random_worlds(false));
    write_case(out, random_worlds(true));
    write_case(out, cone_and_bounds());
    std::fprintf(out, "}\n");
    return std::fclose(out) == 0 ? 0 : 1;
}
