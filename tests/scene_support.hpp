// Scene-mode test helpers: upload a SceneBuilder, solve, read every scene output.
#pragma once

#include "scene_builder.hpp"
#include "support.hpp"

namespace test {

struct SceneStep {
    std::vector<double> q_next;   // integrated positions
    std::vector<double> qd;       // new joint velocities
    std::vector<double> contacts; // 6 per contact
    std::vector<double> limits;   // per DOF
    std::vector<double> drives;   // per DOF
    std::vector<double> bodies;   // 6 per body
    std::vector<steel_world_stats> stats;
};

inline std::vector<double>
read_doubles(steel_batch batch, steel_status (*read)(steel_batch, double*, uint64_t, uint64_t*)) {
    uint64_t count = 0;
    REQUIRE_OK(read(batch, nullptr, 0, &count));
    std::vector<double> values(count);
    REQUIRE_OK(read(batch, values.data(), count, &count));
    return values;
}

// Creates a batch for `scene`, solves it once with `iterations` sweeps, reads every result.
inline SceneStep solve_scene(const steel_scene_desc& scene, uint32_t iterations = 200,
                             int32_t precision = STEEL_PRECISION_FLOAT64, uint32_t momentum = 0) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = scene.world_count;
    desc.precision = precision;
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = iterations;
    options.nesterov_momentum = momentum;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    REQUIRE_OK(steel_batch_solve(batch));
    SceneStep step;
    step.q_next = read_doubles(batch, steel_batch_read_integrated_positions);
    step.qd = read_doubles(batch, steel_batch_read_joint_velocities);
    step.contacts = read_doubles(batch, steel_batch_read_contact_impulses);
    step.limits = read_doubles(batch, steel_batch_read_limit_impulses);
    step.drives = read_doubles(batch, steel_batch_read_drive_impulses);
    step.bodies = read_doubles(batch, steel_batch_read_body_velocities);
    step.stats = read_all(batch).stats;
    REQUIRE_OK(steel_batch_destroy(batch));
    return step;
}

// How solve_with solves a scene: the response and solve mode, precision, sweeps, threads.
struct SceneMode {
    int32_t response = STEEL_RESPONSE_IMMEDIATE;
    int32_t solve_mode = STEEL_SOLVE_SERIAL;
    int32_t precision = STEEL_PRECISION_FLOAT64;
    uint32_t iterations = 50;
    uint32_t threads = 1;
};

// Creates a batch of `world_count` worlds with the precision, threads and options `mode` says
// (the caller destroys it).
inline steel_batch make_scene_batch(uint32_t world_count, const SceneMode& mode) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = world_count;
    desc.precision = mode.precision;
    desc.thread_count = mode.threads;
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = mode.iterations;
    options.articulated_contact_response = mode.response;
    options.solve_mode = mode.solve_mode;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    return batch;
}

// Creates a batch for `scene` as `mode` says, solves it once, reads impulses, velocities, stats.
inline Solved solve_with(const steel_scene_desc& scene, const SceneMode& mode) {
    const steel_batch batch = make_scene_batch(scene.world_count, mode);
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    REQUIRE_OK(steel_batch_solve(batch));
    Solved solved = read_all(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    return solved;
}

inline SceneStep solve_scene(const scenes::SceneBuilder& builder, uint32_t iterations = 200,
                             int32_t precision = STEEL_PRECISION_FLOAT64, uint32_t momentum = 0) {
    return solve_scene(builder.desc(), iterations, precision, momentum);
}

} // namespace test
