// The CUDA kernels run on the CPU (tests/simt/: every GPU thread a fiber, the lanes of a warp
// meeting at each shuffle) against the CPU backend. Same kernel code and launch geometry as
// on a device, so this checks the kernels' indexing, shared memory, warp collectives and
// numbers everywhere, GPU or not; tests/test_cuda_backend.cpp runs them on a real device.
// Without FMA on either side, the only difference from the CPU backend is the kernels'
// summation order, so the results are held to the bound docs/cuda.md derives.
#include "cuda_support.hpp"
#include "robot_scenes.hpp"
#include "scene_builder.hpp"
#include "simt/emulated_kernels.hpp"
#include "simt/schedule.hpp"

#include "batch.hpp"
#include "handle_registry.hpp"
#include "preelimination.hpp"
#include "world_rows.hpp"

#include <cmath>
#include <cstring>
#include <variant>

using cuda_test::options_with;
using cuda_test::random_batch;

namespace {

// One CPU solve and the emulated CUDA solve of the very same rows (the batch's RowSet).
struct Pair {
    test::Solved cpu, emulated;
    std::vector<int32_t> cpu_path, emulated_path;
    std::vector<double> cpu_history, emulated_history;
};

template <class Real> std::vector<double> widened(const std::vector<Real>& values) {
    return std::vector<double>(values.begin(), values.end());
}

// Bit-for-bit equality of `count` values, and of two arrays.
template <class T> bool same_span(const T* a, const T* b, size_t count) {
    return count == 0 || std::memcmp(a, b, count * sizeof(T)) == 0;
}

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && same_span(a.data(), b.data(), a.size());
}

// Solves the uploaded batch on the CPU, then runs the kernels on its rows.
Pair solve_both(steel_batch batch, const steel_solve_options& options) {
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    Pair pair;
    std::visit(
        [&](auto& host) {
            pair.cpu.impulses = widened(host.results.impulse);
            pair.cpu.velocities = widened(host.results.velocity);
            pair.cpu.stats = host.stats;
            pair.cpu_path = host.world_path;
            pair.cpu_history = host.history;
            const auto emulated = test::emulate_solve(host.rows, options);
            for (const std::string& problem : emulated.problems)
                FAIL_CHECK(problem);
            pair.emulated.impulses = widened(emulated.impulse);
            pair.emulated.velocities = widened(emulated.velocity);
            pair.emulated.stats = emulated.stats;
            pair.emulated_path = emulated.world_path;
            pair.emulated_history = emulated.history;
        },
        steel::lookup_batch(batch.id, "test").state);
    return pair;
}

Pair solve_rows(const scenes::RowsBuilder& builder, int32_t precision,
                const steel_solve_options& options) {
    const steel_batch batch =
        cuda_test::create(builder.world_count(), STEEL_BACKEND_CPU, precision);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    Pair pair = solve_both(batch, options);
    REQUIRE_OK(steel_batch_destroy(batch));
    return pair;
}

// cuda_test::check_close, and also sweep counts, struct sizes and classified paths equal.
void check_close(const Pair& pair, uint32_t sweeps, uint64_t longest, int32_t precision) {
    cuda_test::check_close(pair.emulated, pair.cpu, sweeps, longest, precision);
    for (size_t w = 0; w < pair.cpu.stats.size(); ++w) {
        CAPTURE(w);
        CHECK(pair.emulated.stats[w].struct_size == sizeof(steel_world_stats));
        CHECK(pair.emulated.stats[w].sweeps == pair.cpu.stats[w].sweeps);
        CHECK(pair.emulated_path[w] == pair.cpu_path[w]);
    }
}

} // namespace

TEST_CASE("Emulated CUDA kernels: general sweep, dense path and classification match the CPU "
          "backend in both precisions") {
    const scenes::RowsBuilder builder = random_batch(42, 12);
    const uint64_t longest = cuda_test::longest_sum(builder);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE, STEEL_PATH_AUTO})
            for (uint32_t sweeps : {1u, 7u}) {
                CAPTURE(precision);
                CAPTURE(path);
                CAPTURE(sweeps);
                const Pair pair = solve_rows(builder, precision, options_with(sweeps, path));
                check_close(pair, sweeps, longest, precision);
                // Summation order is the only difference: not zero, so this is no tautology.
                if (path == STEEL_PATH_GENERAL && sweeps == 7)
                    CHECK(test::max_abs_diff(pair.emulated.impulses, pair.cpu.impulses) > 0);
            }
}

TEST_CASE("Emulated CUDA kernels: cfm, contact regularization, residual history and momentum") {
    const scenes::RowsBuilder builder = cuda_test::heavy_stacks(5);
    const uint64_t longest = cuda_test::longest_sum(builder);
    steel_solve_options options = options_with(25, STEEL_PATH_GENERAL);
    options.cfm = 1e-6;
    options.contact_regularization = 1e-4;
    options.record_residual_history = 1;
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        options.path = path;
        options.nesterov_momentum = 0;
        CAPTURE(path);
        const Pair pair = solve_rows(builder, STEEL_PRECISION_FLOAT64, options);
        check_close(pair, 25, longest, STEEL_PRECISION_FLOAT64);
        REQUIRE(pair.emulated_history.size() == pair.cpu_history.size());
        const double bound = cuda_test::tolerance(25, longest, STEEL_PRECISION_FLOAT64,
                                                  test::max_abs(pair.cpu.impulses));
        for (size_t k = 0; k < pair.cpu_history.size(); ++k)
            CHECK(std::fabs(pair.emulated_history[k] - pair.cpu_history[k]) <= bound);

        // Momentum: extrapolation is not non-expansive, so 1e-9 of the largest impulse (as on
        // the device), and the restarts must be the same ones.
        options.nesterov_momentum = 1;
        const Pair fast = solve_rows(builder, STEEL_PRECISION_FLOAT64, options);
        const double scale = std::max(1.0, test::max_abs(fast.cpu.impulses));
        CHECK(test::max_abs_diff(fast.emulated.impulses, fast.cpu.impulses) <= 1e-9 * scale);
        for (size_t w = 0; w < fast.cpu.stats.size(); ++w)
            CHECK(fast.emulated.stats[w].momentum_restarts == fast.cpu.stats[w].momentum_restarts);
        CHECK(fast.cpu.stats.back().momentum_restarts > 0);
    }
}

TEST_CASE("Emulated CUDA kernels: momentum over worlds of hundreds of rows") {
    // The warp's momentum gives each lane every 32nd row and sums the alignment over the lanes
    // (warp_momentum.cuh): only worlds of more rows than lanes tell a lane's share from the
    // whole, so piles of boxes, on the general path, with extrapolations and restarts both.
    scenes::SceneBuilder scene;
    for (uint32_t boxes : {12u, 30u}) {
        scene.begin_world();
        scenes::add_box_pile(scene, boxes);
    }
    const steel_scene_desc desc = scene.desc();
    const steel_batch batch =
        cuda_test::create(desc.world_count, STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64);
    REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
    steel_solve_options options = options_with(40, STEEL_PATH_GENERAL);
    options.nesterov_momentum = 1;
    const Pair pair = solve_both(batch, options);
    REQUIRE_OK(steel_batch_destroy(batch));
    for (size_t w = 0; w < pair.cpu.stats.size(); ++w) {
        CAPTURE(w);
        const steel_world_stats& cpu = pair.cpu.stats[w];
        CHECK(pair.emulated.stats[w].momentum_restarts == cpu.momentum_restarts);
        CHECK(cpu.momentum_restarts > 0);              // restarted,
        CHECK(cpu.momentum_restarts + 2 < cpu.sweeps); // and extrapolated too
    }
    // A normal and two friction rows per contact: several rows a lane in the larger pile.
    CHECK(3 * desc.world_contact_count[1] > 3 * 32);
    const double scale = std::max(1.0, test::max_abs(pair.cpu.impulses));
    CHECK(test::max_abs_diff(pair.emulated.impulses, pair.cpu.impulses) <= 1e-9 * scale);
}

TEST_CASE("Emulated CUDA kernels: scenes with box and cone friction match the CPU backend") {
    for (int32_t model : {STEEL_FRICTION_MODEL_BOX, STEEL_FRICTION_MODEL_CONE}) {
        const scenes::SceneBuilder builder = cuda_test::robot_worlds(model, 6);
        const steel_scene_desc desc = builder.desc();
        const steel_batch batch =
            cuda_test::create(desc.world_count, STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64);
        REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
        const Pair pair = solve_both(batch, options_with(12, STEEL_PATH_AUTO));
        REQUIRE_OK(steel_batch_destroy(batch));
        CAPTURE(model);
        // Scene rows are at most a whole articulation long: 64 values bounds them here.
        check_close(pair, 12, 64, STEEL_PRECISION_FLOAT64);
    }
}

TEST_CASE("Emulated CUDA kernels: v in global memory when a world's DOFs overflow shared memory") {
    // 4 warps x 1,600 DOFs x 8 bytes passes 48 KB: the general kernel keeps v in the output.
    std::mt19937_64 rng(3);
    scenes::RowsBuilder builder;
    scenes::RandomWorldSpec big;
    big.body_count = 420;
    big.max_body_dofs = 7;
    big.row_count = 20;
    scenes::add_random_world(builder, rng, big);
    scenes::RandomWorldSpec small;
    small.row_count = 6;
    scenes::add_random_world(builder, rng, small);
    uint32_t most_dofs = 0;
    for (uint32_t dofs : builder.dof_counts)
        most_dofs = std::max(most_dofs, dofs);
    REQUIRE(4 * most_dofs * sizeof(double) > 48 * 1024);
    const Pair pair =
        solve_rows(builder, STEEL_PRECISION_FLOAT64, options_with(6, STEEL_PATH_GENERAL));
    check_close(pair, 6, cuda_test::longest_sum(builder), STEEL_PRECISION_FLOAT64);
}

TEST_CASE("Emulated CUDA kernels: a world that overflows is isolated, its neighbours kept") {
    const scenes::RowsBuilder builder = cuda_test::overflowing_middle_world();
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        CAPTURE(path);
        const Pair pair = solve_rows(builder, STEEL_PRECISION_FLOAT64, options_with(10, path));
        CHECK((pair.emulated.stats[1].flags & STEEL_WORLD_NONFINITE) != 0);
        CHECK(pair.emulated.stats[0].flags == 0);
        CHECK(pair.emulated.stats[2].flags == 0);
        for (double value : pair.emulated.impulses)
            CHECK(std::isfinite(value));
        check_close(pair, 10, 2, STEEL_PRECISION_FLOAT64);
    }
}

TEST_CASE("Emulated CUDA kernels: a values update recomputes J.Y and the cone cross terms with "
          "the upload's bits") {
    scenes::SceneBuilder scene;
    scene.friction_model = STEEL_FRICTION_MODEL_CONE;
    scene.begin_world();
    scenes::add_box_pile(scene, 5);
    scene.begin_world();
    scenes::add_arm_with_box(scene, 0.8, 2.0);
    const steel_scene_desc desc = scene.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (simt::Schedule schedule : {simt::Schedule::in_order, simt::Schedule::shuffled}) {
            CAPTURE(int(schedule));
            const simt::ScopedSchedule scoped(schedule);
            const steel_batch batch =
                cuda_test::create(desc.world_count, STEEL_BACKEND_CPU, precision);
            REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
            std::visit(
                [&](auto& host) {
                    auto rows = host.rows;
                    using Real = typename decltype(rows.jy)::value_type;
                    const Real poison = std::numeric_limits<Real>::quiet_NaN();
                    std::fill(rows.jy.begin(), rows.jy.end(), poison);
                    std::fill(rows.cone_cross_01.begin(), rows.cone_cross_01.end(), Real(0));
                    std::fill(rows.cone_cross_10.begin(), rows.cone_cross_10.end(), Real(0));
                    for (const std::string& problem : test::emulate_values_kernels(rows))
                        FAIL_CHECK(problem);
                    CHECK(same_bits(rows.jy, host.rows.jy));
                    CHECK(same_bits(rows.cone_cross_01, host.rows.cone_cross_01));
                    CHECK(same_bits(rows.cone_cross_10, host.rows.cone_cross_10));
                    CHECK(test::max_abs(widened(host.rows.cone_cross_01)) > 0);
                },
                steel::lookup_batch(batch.id, "test").state);
            REQUIRE_OK(steel_batch_destroy(batch));
        }
}

namespace {

// Solves the scene on the CPU under the propagation response, then runs the propagation kernel
// on the CPU's own rows, propagation set and colors, in both emulation orders (and the serial
// mode in both layouts: a thread or a warp per world), and holds each to the CPU's bits:
// impulses, velocities, paths, stats and every recorded sweep's residual.
void check_propagation_bits(const steel_scene_desc& desc, int32_t solve_mode, int32_t precision,
                            double tolerance) {
    CAPTURE(solve_mode);
    CAPTURE(precision);
    CAPTURE(tolerance);
    const uint32_t iterations = 30;
    const steel_batch batch = cuda_test::create(desc.world_count, STEEL_BACKEND_CPU, precision);
    REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
    steel_solve_options options = options_with(iterations, STEEL_PATH_AUTO);
    options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
    options.solve_mode = solve_mode;
    options.record_residual_history = 1;
    options.tolerance = tolerance;
    options.contact_regularization = 1e-6;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    // Both orders of the emulation (simt/schedule.hpp) must give the CPU's bits: a race between
    // lanes, warps or blocks would make one of them differ.
    const bool serial = solve_mode == STEEL_SOLVE_SERIAL;
    for (bool thread_per_world : {false, true})
        for (simt::Schedule schedule : {simt::Schedule::in_order, simt::Schedule::shuffled})
            std::visit(
                [&](auto& host) {
                    if (thread_per_world && !serial) return; // the colored mode has one layout
                    CAPTURE(thread_per_world);
                    CAPTURE(int(schedule));
                    const simt::ScopedSchedule scoped(schedule);
                    const auto emulated = test::emulate_propagation_solve(
                        host.rows, *host.propagation, host.colored.get(), options,
                        thread_per_world);
                    for (const std::string& problem : emulated.problems)
                        FAIL_CHECK(problem);
                    CHECK(same_bits(emulated.impulse, host.results.impulse));
                    CHECK(same_bits(emulated.velocity, host.results.velocity));
                    CHECK(same_bits(emulated.world_path, host.world_path));
                    // A world's history holds as many entries as it ran sweeps.
                    REQUIRE(emulated.history.size() == host.history.size());
                    for (size_t w = 0; w < host.stats.size(); ++w) {
                        CAPTURE(w);
                        CHECK(std::memcmp(emulated.history.data() + w * iterations,
                                          host.history.data() + w * iterations,
                                          host.stats[w].sweeps * sizeof(double)) == 0);
                        CHECK(std::memcmp(&emulated.stats[w], &host.stats[w],
                                          sizeof(steel_world_stats)) == 0);
                    }
                    CHECK(test::max_abs(widened(host.results.impulse)) > 0);
                    // With a tolerance the early exit really runs: some world stops before
                    // `iterations` sweeps, on the CPU and in the kernels alike.
                    if (tolerance > 0) {
                        uint32_t cpu_early = 0, emulated_early = 0;
                        for (size_t w = 0; w < host.stats.size(); ++w) {
                            cpu_early += host.stats[w].sweeps < iterations;
                            emulated_early += emulated.stats[w].sweeps < iterations;
                        }
                        CHECK(cpu_early > 0);
                        CHECK(emulated_early > 0);
                    }
                },
                steel::lookup_batch(batch.id, "test").state);
    REQUIRE_OK(steel_batch_destroy(batch));
}

// What the CPU's colors of a scene hold: the most contacts in packs of one color, the contacts
// solved one by one (they touch a tree), the most of those in one color, and the rows of the
// serial group.
struct PlanShape {
    uint32_t widest_color = 0, tree_contacts = 0, widest_tree_color = 0, serial_rows = 0;
};

PlanShape colored_plan_shape(const steel_scene_desc& desc) {
    const steel_batch batch =
        cuda_test::create(desc.world_count, STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64);
    REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
    steel_solve_options options = options_with(1, STEEL_PATH_AUTO);
    options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
    options.solve_mode = STEEL_SOLVE_COLORED;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    const auto& plan =
        *std::get<steel::BatchState<double>>(steel::lookup_batch(batch.id, "test").state).colored;
    PlanShape shape;
    for (size_t c = 0; c + 1 < plan.color_pack_offset.size(); ++c)
        shape.widest_color = std::max(shape.widest_color,
                                      (plan.color_pack_offset[c + 1] - plan.color_pack_offset[c]) *
                                          steel::colored::kPackLanes<double>);
    shape.tree_contacts = uint32_t(plan.contact_rows.size() / 2);
    for (size_t c = 0; c + 1 < plan.color_contact_offset.size(); ++c)
        shape.widest_tree_color =
            std::max(shape.widest_tree_color,
                     plan.color_contact_offset[c + 1] - plan.color_contact_offset[c]);
    shape.serial_rows = uint32_t(plan.serial_rows.size());
    REQUIRE_OK(steel_batch_destroy(batch));
    return shape;
}

// check_propagation_bits in both precisions, to a fixed sweep count (tolerance 0) and to
// `tolerance`.
void check_propagation_bits_each(const steel_scene_desc& desc, int32_t solve_mode,
                                 double tolerance) {
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (double stop_at : {0.0, tolerance})
            check_propagation_bits(desc, solve_mode, precision, stop_at);
}

} // namespace

TEST_CASE("Emulated CUDA propagation kernel, colored, free bodies: the CPU's colored solve bit "
          "for bit") {
    scenes::SceneBuilder builder;
    builder.begin_world();
    scenes::add_box_pile(builder, 120); // colors of more than 32 contacts: lanes loop
    builder.begin_world();
    scenes::add_box_stack(builder, 5);
    builder.begin_world(); // more contacts on one body than colors: a serial group
    builder.add_body(scenes::free_box(1, {0.5, 0.5, 0.5}, {0, 0, 0.5}));
    for (uint32_t c = 0; c < steel::colored::kMaxColors + 6; ++c)
        builder.add_contact(
            scenes::ContactSpec{0, -1, {0.01 * c, 0, 0}, {0, 0, 1}, -0.001, 0.5, 0});
    const steel_scene_desc desc = builder.desc();

    const PlanShape shape = colored_plan_shape(desc);
    CHECK(shape.widest_color > 32);
    CHECK(shape.serial_rows > 0);
    check_propagation_bits_each(desc, STEEL_SOLVE_COLORED, 1e-2);
}

TEST_CASE("Emulated CUDA propagation kernel: v in global memory when a world's DOFs overflow "
          "shared memory") {
    // 260 boxes: 1,560 DOFs, more than the 1,536 float64 values a warp gets of 48 KB.
    scenes::SceneBuilder builder;
    builder.begin_world();
    scenes::add_box_pile(builder, 260);
    builder.begin_world();
    scenes::add_box_stack(builder, 3);
    const steel_scene_desc desc = builder.desc();
    check_propagation_bits(desc, STEEL_SOLVE_COLORED, STEEL_PRECISION_FLOAT64, 0.0);
}

TEST_CASE("Emulated CUDA propagation kernel through trees, serial and colored: the CPU's solve "
          "bit for bit") {
    // Tree walks, contacts between trees and free bodies, packs, and a serial group with the
    // legged robot's drive rows (joint-space terms) and the four-bar's loop closure.
    scenes::SceneBuilder builder;
    builder.drive_mode = STEEL_DRIVE_MODE_ROWS;
    scenes::add_articulated_mix(builder, 2);
    // A missing __syncwarp between a color's tree contacts and the next color's packs would
    // show in the shuffled order here (docs/cuda.md).
    builder.begin_world();
    scenes::add_boxes_leaning_on_tree(builder);
    const steel_scene_desc desc = builder.desc();
    const PlanShape shape = colored_plan_shape(desc);
    CHECK(shape.tree_contacts > 0);
    CHECK(shape.serial_rows > 0);
    for (int32_t mode : {STEEL_SOLVE_SERIAL, STEEL_SOLVE_COLORED})
        check_propagation_bits_each(desc, mode, 1e-3);
}

TEST_CASE("Emulated CUDA propagation kernel, colored, several trees a world: a color's tree "
          "contacts on several lanes give the CPU's bits") {
    // 40 legged robots in one world: each color holds one foot of every robot, 40 contacts
    // through 40 different trees, which lanes 0 to 31 and then 0 to 7 take at once. Beside
    // them, chains and trees leaning on boxes in other worlds, and drive rows in the serial
    // group.
    scenes::SceneBuilder builder;
    builder.drive_mode = STEEL_DRIVE_MODE_ROWS;
    builder.begin_world();
    for (uint32_t robot = 0; robot < 40; ++robot)
        scenes::add_legged_robot(builder);
    builder.begin_world();
    for (uint32_t chain = 0; chain < 3; ++chain)
        scenes::add_chain_on_ground(builder, 3 + chain);
    scenes::add_legged_robot(builder);
    builder.begin_world();
    scenes::add_boxes_leaning_on_tree(builder, 6);
    scenes::add_legged_robot(builder);
    const steel_scene_desc desc = builder.desc();
    const PlanShape shape = colored_plan_shape(desc);
    CHECK(shape.widest_tree_color > 32);
    CHECK(shape.serial_rows > 0);
    // Every world's residual levels off near 1.6e-3 (a legged robot's feet): at 2e-3 all three
    // stop early, after 25 of the 30 sweeps; at 1e-3 none would.
    check_propagation_bits_each(desc, STEEL_SOLVE_COLORED, 2e-3);
}

TEST_CASE("Emulated CUDA kernels: bilateral pre-elimination matches the CPU backend") {
    // Random worlds with bilateral rows among the others, then loops of bodies closed by
    // bilateral rows (where pre-elimination matters).
    scenes::RowsBuilder builder = random_batch(7, 12);
    const uint32_t loops_from = builder.world_count();
    std::mt19937_64 rng(3);
    for (uint32_t links : {3u, 6u, 12u})
        scenes::add_loop_world(builder, rng, links);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE, STEEL_PATH_AUTO})
            for (uint32_t sweeps : {1u, 9u}) {
                CAPTURE(precision);
                CAPTURE(path);
                CAPTURE(sweeps);
                steel_solve_options options = options_with(sweeps, path);
                options.enable_bilateral_preelimination = 1;
                options.cfm = 1e-9;
                options.record_residual_history = 1;
                const Pair pair = solve_rows(builder, precision, options);
                cuda_test::check_preeliminated(pair.emulated, pair.cpu, builder, sweeps, precision,
                                               loops_from);
                CHECK(pair.emulated_path == pair.cpu_path);
                // Summation order is the only difference: not zero, so this is no tautology.
                if (path == STEEL_PATH_GENERAL && sweeps == 9)
                    CHECK(test::max_abs_diff(pair.emulated.velocities, pair.cpu.velocities) > 0);
            }
}

namespace {

// Runs the solve kernels on the uploaded batch's rows in both emulation orders
// (simt/schedule.hpp) and holds the two to the same bits in every output.
void check_orders_agree(steel_batch batch, const steel_solve_options& options) {
    std::visit(
        [&](auto& host) {
            const auto in_order = test::emulate_solve(host.rows, options);
            const auto shuffled = [&] {
                const simt::ScopedSchedule scoped(simt::Schedule::shuffled);
                return test::emulate_solve(host.rows, options);
            }();
            for (const auto* run : {&in_order, &shuffled})
                for (const std::string& problem : run->problems)
                    FAIL_CHECK(problem);
            CHECK(same_bits(in_order.impulse, shuffled.impulse));
            CHECK(same_bits(in_order.velocity, shuffled.velocity));
            CHECK(same_bits(in_order.stats, shuffled.stats));
            CHECK(same_bits(in_order.world_path, shuffled.world_path));
            CHECK(same_bits(in_order.history, shuffled.history));
            CHECK(test::max_abs(widened(in_order.impulse)) > 0);
        },
        steel::lookup_batch(batch.id, "test").state);
}

} // namespace

TEST_CASE("Emulated CUDA kernels give the same bits with blocks, warps and lanes run in opposite "
          "orders") {
    // Random worlds (general and dense paths), loops closed by bilateral rows (pre-elimination)
    // and a scene with cone friction; momentum, cfm and the residual history on.
    scenes::RowsBuilder rows = random_batch(11, 12);
    std::mt19937_64 rng(5);
    for (uint32_t links : {3u, 6u})
        scenes::add_loop_world(rows, rng, links);
    scenes::SceneBuilder scene;
    scene.friction_model = STEEL_FRICTION_MODEL_CONE;
    for (uint32_t w = 0; w < 5; ++w) {
        scene.begin_world();
        scenes::add_box_pile(scene, 3 + w);
    }
    scene.begin_world();
    scenes::add_arm_with_box(scene, 0.8, 2.0);
    const steel_rows_desc rows_desc = rows.desc();
    const steel_scene_desc scene_desc = scene.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE, STEEL_PATH_AUTO})
            for (int32_t preeliminate : {0, 1}) {
                CAPTURE(precision);
                CAPTURE(path);
                CAPTURE(preeliminate);
                steel_solve_options options = options_with(9, path);
                options.enable_bilateral_preelimination = preeliminate;
                options.nesterov_momentum = 1;
                options.cfm = 1e-9;
                options.record_residual_history = 1;
                const steel_batch from_rows =
                    cuda_test::create(rows.world_count(), STEEL_BACKEND_CPU, precision);
                REQUIRE_OK(steel_batch_upload_rows(from_rows, &rows_desc));
                check_orders_agree(from_rows, options);
                REQUIRE_OK(steel_batch_destroy(from_rows));
                const steel_batch from_scene =
                    cuda_test::create(scene_desc.world_count, STEEL_BACKEND_CPU, precision);
                REQUIRE_OK(steel_batch_upload_scene(from_scene, &scene_desc));
                check_orders_agree(from_scene, options);
                REQUIRE_OK(steel_batch_destroy(from_scene));
            }
}

namespace {

// Appends `count` contacts with cone friction (a normal and its tangent pair) to the world being
// built, on bodies of 3 DOFs each, with Y = J (unit mass): the cone pairs of a derived world.
void add_cone_contacts(scenes::RowsBuilder& builder, std::mt19937_64& rng, uint32_t bodies,
                       uint32_t count) {
    const auto block = [&](uint32_t body) {
        scenes::Block result;
        result.offset = 3 * body;
        for (int k = 0; k < 3; ++k)
            result.jacobian.push_back(scenes::normal01(rng));
        result.response = result.jacobian;
        return result;
    };
    for (uint32_t contact = 0; contact < count; ++contact) {
        const uint32_t body = (7 * contact) % bodies;
        scenes::Row normal;
        normal.kind = STEEL_ROW_CONTACT_NORMAL;
        normal.blocks[0] = block(body);
        normal.bias = -1.0;
        const int32_t normal_row = int32_t(builder.add_row(normal));
        for (int tangent = 0; tangent < 2; ++tangent) {
            scenes::Row row;
            row.kind = STEEL_ROW_FRICTION_CONE;
            row.blocks[0] = block(body);
            row.normal_row = normal_row;
            row.friction = 0.5;
            builder.add_row(row);
        }
    }
}

// The warp's build of every derived world against build_preeliminated_world on the CPU, every
// array bit for bit. Returns how many worlds were compared.
template <class Real> uint32_t check_derived_worlds(const steel::RowSet<Real>& rows, Real cfm) {
    uint32_t compared = 0;
    const auto problems = test::emulate_preelimination_build<Real>(
        rows, cfm, [&](uint32_t w, bool built, const steel::PreeliminationSpace<Real>& device) {
            CAPTURE(w);
            const steel::WorldRows<Real> world = steel::world_rows(rows, w);
            const uint32_t m = world.row_count, n = world.dof_count;
            const uint32_t b = steel::bilateral_row_count(world), c = m - b;
            steel::PreeliminationWorkspace<Real> workspace;
            workspace.reserve(m, n, steel::preelimination_room(m, b, n));
            const steel::PreeliminationSpace<Real> cpu = workspace.space();
            steel::WorldRows<Real> unused;
            REQUIRE(steel::build_preeliminated_world(world, cfm, cpu, unused) == built);
            if (!built) return;
            ++compared;
            const size_t cn = size_t(c) * n;
            CHECK(same_span(device.jacobian, cpu.jacobian, cn));
            CHECK(same_span(device.response, cpu.response, cn));
            CHECK(same_span(device.unconstrained_velocity, cpu.unconstrained_velocity, n));
            for (auto member :
                 {&steel::PreeliminationSpace<Real>::bias, &steel::PreeliminationSpace<Real>::lower,
                  &steel::PreeliminationSpace<Real>::upper,
                  &steel::PreeliminationSpace<Real>::friction,
                  &steel::PreeliminationSpace<Real>::regularization,
                  &steel::PreeliminationSpace<Real>::initial_impulse,
                  &steel::PreeliminationSpace<Real>::jy,
                  &steel::PreeliminationSpace<Real>::cross_01,
                  &steel::PreeliminationSpace<Real>::cross_10})
                CHECK(same_span(device.*member, cpu.*member, c));
            CHECK(same_span(device.kind, cpu.kind, c));
            CHECK(same_span(device.normal_row, cpu.normal_row, c));
            CHECK(same_span(device.block_offset, cpu.block_offset, 2 * size_t(c)));
            CHECK(same_span(device.block_length, cpu.block_length, 2 * size_t(c)));
            CHECK(same_span(device.value_offset, cpu.value_offset, size_t(c) + 1));
            CHECK(same_span(device.kept_rows, cpu.kept_rows, c));
            CHECK(same_span(device.bilateral_rows, cpu.bilateral_rows, b));
            // S's factor and each kept row's S^-1 (J_B . Y_j) after it.
            CHECK(same_span(device.schur, cpu.schur, size_t(b) * m));
            CHECK(same_span(device.solved, cpu.solved, b));
        });
    for (const std::string& problem : problems)
        FAIL_CHECK(problem);
    return compared;
}

} // namespace

TEST_CASE("Emulated CUDA pre-elimination: the warp builds the CPU's derived worlds bit for bit") {
    // Random worlds with bilateral rows among the others (some with more bilateral rows than
    // DOFs), loops of bodies closed by bilateral rows (the longest has more than 32 kept rows
    // and more than 32 bilateral ones, so lanes take several of each), in both emulation orders.
    // The 8- and 80-link loops also carry cone-friction contacts (40 pairs in the longest, so
    // lanes take several pairs each).
    scenes::RowsBuilder builder = random_batch(23, 16);
    std::mt19937_64 rng(9);
    for (uint32_t links : {3u, 8u, 80u}) {
        scenes::add_loop_world(builder, rng, links);
        if (links > 3) add_cone_contacts(builder, rng, links, links / 2);
    }
    const steel_rows_desc desc = builder.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (simt::Schedule schedule : {simt::Schedule::in_order, simt::Schedule::shuffled}) {
            CAPTURE(precision);
            CAPTURE(int(schedule));
            const simt::ScopedSchedule scoped(schedule);
            const steel_batch batch =
                cuda_test::create(builder.world_count(), STEEL_BACKEND_CPU, precision);
            REQUIRE_OK(steel_batch_upload_rows(batch, &desc));
            std::visit(
                [&](auto& host) {
                    using Real = typename decltype(host.rows.jy)::value_type;
                    CHECK(check_derived_worlds<Real>(host.rows, Real(1e-9)) >= 6);
                },
                steel::lookup_batch(batch.id, "test").state);
            REQUIRE_OK(steel_batch_destroy(batch));
        }
}

TEST_CASE("Emulated CUDA propagation kernel, a thread per world: worlds past the first block") {
    // The serial mode's thread-per-world kernel runs blocks of 32 worlds: 45 worlds of trees and
    // free bodies, mixed so that neighbouring threads take different branches, fill a block and
    // part of a second.
    scenes::SceneBuilder builder;
    builder.drive_mode = STEEL_DRIVE_MODE_ROWS;
    scenes::add_articulated_mix(builder, 9);
    const steel_scene_desc desc = builder.desc();
    REQUIRE(desc.world_count > 32);
    check_propagation_bits(desc, STEEL_SOLVE_SERIAL, STEEL_PRECISION_FLOAT64, 0.0);
}
