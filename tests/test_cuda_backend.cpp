// The CUDA backend against the CPU backend (the reference), on a device. Built when the backend
// is; skipped as a whole (exit 77) where steel_batch_create answers STEEL_ERROR_NO_DEVICE, failed
// where it refuses a CUDA batch for another reason (tests/cuda_main.cpp).
#include "cuda_support.hpp"
#include "robot_scenes.hpp"
#include "scene_builder.hpp"
#include "scene_support.hpp"
#include "test_snapshot_support.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace steel::testing {
// impl/cuda/device_batch.cu: the solves that launched each build of the twice-built kernels.
extern std::atomic<uint32_t> cuda_solves_general[2];          // plain, bounded
extern std::atomic<uint32_t> cuda_solves_propagation_thread;  // a thread per world
extern std::atomic<uint32_t> cuda_solves_propagation_warp[2]; // a warp per world: plain, bounded
extern std::atomic<uint32_t> cuda_serial_wave_worlds; // one wave of the warp kernel, in worlds
} // namespace steel::testing

using cuda_test::check_close;
using cuda_test::options_with;
using cuda_test::random_batch;

TEST_CASE(
    "GPU general sweep and dense path match the CPU after every sweep count, float64 and float32") {
    const scenes::RowsBuilder builder = random_batch(42, 256);
    const uint64_t longest = cuda_test::longest_sum(builder);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE, STEEL_PATH_AUTO})
            for (uint32_t sweeps : {1u, 2u, 5u, 10u, 20u, 40u}) {
                CAPTURE(precision);
                CAPTURE(path);
                CAPTURE(sweeps);
                const steel_solve_options options = options_with(sweeps, path);
                const test::Solved cpu = cuda_test::solve(
                    builder, cuda_test::run(STEEL_BACKEND_CPU, precision, options));
                const test::Solved gpu = cuda_test::solve(
                    builder, cuda_test::run(STEEL_BACKEND_CUDA, precision, options));
                check_close(gpu, cpu, sweeps, longest, precision);
                for (const steel_world_stats& stats : gpu.stats)
                    CHECK(stats.sweeps == sweeps);
            }
}

TEST_CASE("GPU float32 is as close to the float64 answer as the CPU's float32") {
    const scenes::RowsBuilder builder = random_batch(5, 128);
    const uint64_t longest = cuda_test::longest_sum(builder);
    for (uint32_t sweeps : {1u, 10u, 40u}) {
        const steel_solve_options options = options_with(sweeps, STEEL_PATH_AUTO);
        const test::Solved cpu64 = cuda_test::solve(
            builder, cuda_test::run(STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64, options));
        const test::Solved cpu32 = cuda_test::solve(
            builder, cuda_test::run(STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT32, options));
        const test::Solved gpu32 = cuda_test::solve(
            builder, cuda_test::run(STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT32, options));
        const double scale = test::max_abs(cpu64.impulses);
        CAPTURE(sweeps);
        CHECK(test::max_abs_diff(gpu32.impulses, cpu64.impulses) <=
              test::max_abs_diff(cpu32.impulses, cpu64.impulses) +
                  cuda_test::tolerance(sweeps, longest, STEEL_PRECISION_FLOAT32, scale));
    }
}

namespace {

// Solves with the residual history recorded; history gets every world's, world after world.
test::Solved solve_with_history(const scenes::RowsBuilder& builder, int32_t backend,
                                const steel_solve_options& options, std::vector<double>& history) {
    const steel_batch batch =
        cuda_test::solved_batch(builder, cuda_test::run(backend, STEEL_PRECISION_FLOAT64, options));
    test::Solved solved = test::read_all(batch);
    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        std::vector<double> sweeps(options.iterations);
        uint32_t count = 0;
        REQUIRE_OK(
            steel_batch_read_residual_history(batch, w, sweeps.data(), options.iterations, &count));
        history.insert(history.end(), sweeps.begin(), sweeps.begin() + count);
    }
    REQUIRE_OK(steel_batch_destroy(batch));
    return solved;
}

} // namespace

TEST_CASE("GPU cfm, contact regularization and residual history match the CPU") {
    const scenes::RowsBuilder builder = cuda_test::heavy_stacks(2);
    const uint64_t longest = cuda_test::longest_sum(builder);
    steel_solve_options options = options_with(60, STEEL_PATH_GENERAL);
    options.cfm = 1e-6;
    options.contact_regularization = 1e-4;
    options.record_residual_history = 1;
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        options.path = path;
        CAPTURE(path);
        std::vector<double> cpu_history, gpu_history;
        const test::Solved cpu =
            solve_with_history(builder, STEEL_BACKEND_CPU, options, cpu_history);
        const test::Solved gpu =
            solve_with_history(builder, STEEL_BACKEND_CUDA, options, gpu_history);
        check_close(gpu, cpu, 60, longest, STEEL_PRECISION_FLOAT64);
        REQUIRE(gpu_history.size() == cpu_history.size());
        const double bound =
            cuda_test::tolerance(60, longest, STEEL_PRECISION_FLOAT64, test::max_abs(cpu.impulses));
        for (size_t k = 0; k < cpu_history.size(); ++k)
            CHECK(std::fabs(gpu_history[k] - cpu_history[k]) <= bound);
    }
}

TEST_CASE("a GPU snapshot's residual history holds zeros after each world's last sweep, as the "
          "CPU's, and loads") {
    // Worlds that converge early leave the rest of their stretch of the history unwritten by the
    // kernels; device memory holds whatever it held before (the emulated device: NaN bytes).
    const scenes::RowsBuilder builder = random_batch(7, 64);
    steel_solve_options options = options_with(400, STEEL_PATH_AUTO);
    options.tolerance = 1e-6;
    options.record_residual_history = 1;
    std::vector<steel::snapshot::Snapshot> saved;
    for (int32_t backend : {STEEL_BACKEND_CPU, STEEL_BACKEND_CUDA}) {
        const steel_batch batch = cuda_test::solved_batch(
            builder, cuda_test::run(backend, STEEL_PRECISION_FLOAT64, options));
        const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
        REQUIRE_OK(steel_batch_destroy(batch));
        steel_batch loaded{};
        REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &loaded));
        REQUIRE_OK(steel_batch_destroy(loaded));
        saved.push_back(steel::snapshot::decode(bytes.data(), bytes.size(), "test"));
    }
    const steel::snapshot::Results& cpu = saved[0].results;
    const steel::snapshot::Results& gpu = saved[1].results;
    REQUIRE(gpu.history_stride == options.iterations);
    uint32_t stopped_early = 0;
    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        CAPTURE(w);
        const uint32_t sweeps = gpu.stats[w].sweeps;
        stopped_early += sweeps < options.iterations;
        for (uint32_t k = sweeps; k < options.iterations; ++k) {
            CHECK(gpu.residual_history[size_t(w) * options.iterations + k] == 0.0);
            if (cpu.stats[w].sweeps <= k)
                CHECK(cpu.residual_history[size_t(w) * options.iterations + k] == 0.0);
        }
    }
    CHECK(stopped_early > 0);
}

TEST_CASE("GPU Nesterov momentum matches the CPU") {
    // Extrapolation by beta -> 1 is not non-expansive, and a restart decision at a tie could go
    // either way, so the derived bound does not apply: held to 1e-9 of the largest impulse.
    const scenes::RowsBuilder builder = cuda_test::heavy_stacks(2);
    steel_solve_options options = options_with(60, STEEL_PATH_GENERAL);
    options.nesterov_momentum = 1;
    options.record_residual_history = 1;
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        options.path = path;
        CAPTURE(path);
        std::vector<double> cpu_history, gpu_history;
        const test::Solved cpu =
            solve_with_history(builder, STEEL_BACKEND_CPU, options, cpu_history);
        const test::Solved gpu =
            solve_with_history(builder, STEEL_BACKEND_CUDA, options, gpu_history);
        const double scale = std::max(1.0, test::max_abs(cpu.impulses));
        CHECK(test::max_abs_diff(gpu.impulses, cpu.impulses) <= 1e-9 * scale);
        const double speed = std::max(1.0, test::max_abs(cpu.velocities));
        CHECK(test::max_abs_diff(gpu.velocities, cpu.velocities) <= 1e-9 * speed);
        REQUIRE(gpu_history.size() == cpu_history.size());
        for (size_t k = 0; k < cpu_history.size(); ++k)
            CHECK(std::fabs(gpu_history[k] - cpu_history[k]) <= 1e-9 * scale);
        for (size_t w = 0; w < cpu.stats.size(); ++w)
            CHECK(gpu.stats[w].momentum_restarts == cpu.stats[w].momentum_restarts);
        CHECK(cpu.stats.back().momentum_restarts > 0); // else the restarts above compare 0 == 0
    }
}

TEST_CASE(
    "GPU scenes (arm with box, legged robot, box pile; box and cone friction) match the CPU") {
    for (int32_t model : {STEEL_FRICTION_MODEL_BOX, STEEL_FRICTION_MODEL_CONE})
        for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
            const scenes::SceneBuilder builder = cuda_test::robot_worlds(model, 8);
            const steel_scene_desc desc = builder.desc();
            const auto solve_scene = [&](int32_t backend) {
                const steel_batch batch = cuda_test::create(desc.world_count, backend, precision);
                const steel_solve_options options = options_with(50, STEEL_PATH_AUTO);
                REQUIRE_OK(steel_batch_set_options(batch, &options));
                REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
                REQUIRE_OK(steel_batch_solve(batch));
                std::vector<double> contacts =
                    test::read_doubles(batch, steel_batch_read_contact_impulses);
                std::vector<double> qd =
                    test::read_doubles(batch, steel_batch_read_joint_velocities);
                contacts.insert(contacts.end(), qd.begin(), qd.end());
                REQUIRE_OK(steel_batch_destroy(batch));
                return contacts;
            };
            const std::vector<double> cpu = solve_scene(STEEL_BACKEND_CPU),
                                      gpu = solve_scene(STEEL_BACKEND_CUDA);
            CAPTURE(model);
            CAPTURE(precision);
            // Scene rows are at most a whole articulation long: 64 values bounds them here.
            CHECK(test::max_abs_diff(gpu, cpu) <=
                  cuda_test::tolerance(50, 64, precision, test::max_abs(cpu)));
        }
}

TEST_CASE("GPU isolates a world that overflows and leaves its neighbours alone") {
    const scenes::RowsBuilder builder = cuda_test::overflowing_middle_world();
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        const steel_solve_options options = options_with(20, path);
        const test::Solved gpu = cuda_test::solve(
            builder, cuda_test::run(STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64, options));
        const test::Solved cpu = cuda_test::solve(
            builder, cuda_test::run(STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64, options));
        CHECK((gpu.stats[1].flags & STEEL_WORLD_NONFINITE) != 0);
        CHECK(gpu.stats[0].flags == 0);
        CHECK(gpu.stats[2].flags == 0);
        for (double value : gpu.impulses)
            CHECK(std::isfinite(value));
        check_close(gpu, cpu, 20, 2, STEEL_PRECISION_FLOAT64);
    }
}

TEST_CASE("GPU results are bit-identical run to run") {
    const scenes::RowsBuilder builder = random_batch(11, 1024);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        steel_solve_options options = options_with(30, STEEL_PATH_AUTO);
        options.nesterov_momentum = 1;
        const cuda_test::Run r = cuda_test::run(STEEL_BACKEND_CUDA, precision, options);
        const test::Solved first = cuda_test::solve(builder, r);
        for (int repeat = 0; repeat < 3; ++repeat) {
            const test::Solved again = cuda_test::solve(builder, r);
            REQUIRE(again.impulses.size() == first.impulses.size());
            CHECK(std::memcmp(again.impulses.data(), first.impulses.data(),
                              first.impulses.size() * sizeof(double)) == 0);
            CHECK(std::memcmp(again.velocities.data(), first.velocities.data(),
                              first.velocities.size() * sizeof(double)) == 0);
        }
    }
}

TEST_CASE("the general sweep built under launch bounds gives the plain build's bits") {
    // STEEL_CUDA_GENERAL_KERNEL=bounded (read when a CUDA batch is made) launches the same code
    // compiled for four blocks per multiprocessor: other registers, the same arithmetic. Random
    // rows, cone pairs included, with momentum and the residual history, and the robot scenes.
    const scenes::RowsBuilder rows = random_batch(29, 512);
    const steel_rows_desc rows_desc = rows.desc();
    const scenes::SceneBuilder robots = cuda_test::robot_worlds(STEEL_FRICTION_MODEL_CONE, 8);
    const steel_scene_desc scene_desc = robots.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (const bool scene : {false, true}) {
            const auto solve_with = [&](const char* build) {
                const uint32_t worlds = scene ? scene_desc.world_count : rows.world_count();
                setenv("STEEL_CUDA_GENERAL_KERNEL", build, 1);
                const steel_batch batch = cuda_test::create(worlds, STEEL_BACKEND_CUDA, precision);
                unsetenv("STEEL_CUDA_GENERAL_KERNEL");
                steel_solve_options options = options_with(30, STEEL_PATH_GENERAL);
                options.nesterov_momentum = 1;
                options.record_residual_history = 1;
                REQUIRE_OK(steel_batch_set_options(batch, &options));
                if (scene)
                    REQUIRE_OK(steel_batch_upload_scene(batch, &scene_desc));
                else
                    REQUIRE_OK(steel_batch_upload_rows(batch, &rows_desc));
                // The build asked for is the one launched, or this compares a kernel with itself.
                std::atomic<uint32_t>& launched =
                    steel::testing::cuda_solves_general[std::strcmp(build, "bounded") == 0];
                const uint32_t launched_before = launched.load();
                REQUIRE_OK(steel_batch_solve(batch));
                CHECK(launched.load() == launched_before + 1);
                test::Solved solved = test::read_all(batch);
                for (uint32_t w = 0; w < worlds; ++w) {
                    std::vector<double> history(options.iterations);
                    uint32_t count = 0;
                    REQUIRE_OK(steel_batch_read_residual_history(batch, w, history.data(),
                                                                 options.iterations, &count));
                    solved.impulses.insert(solved.impulses.end(), history.begin(),
                                           history.begin() + count);
                }
                REQUIRE_OK(steel_batch_destroy(batch));
                return solved;
            };
            const test::Solved plain = solve_with("plain"), bounded = solve_with("bounded");
            CAPTURE(precision);
            CAPTURE(scene);
            CHECK(test::max_abs(plain.impulses) > 0);
            REQUIRE(bounded.impulses.size() == plain.impulses.size());
            CHECK(std::memcmp(bounded.impulses.data(), plain.impulses.data(),
                              plain.impulses.size() * sizeof(double)) == 0);
            CHECK(std::memcmp(bounded.velocities.data(), plain.velocities.data(),
                              plain.velocities.size() * sizeof(double)) == 0);
            for (size_t w = 0; w < plain.stats.size(); ++w)
                CHECK(std::memcmp(&bounded.stats[w], &plain.stats[w], sizeof(steel_world_stats)) ==
                      0);
        }
}

TEST_CASE("GPU bilateral pre-elimination matches the CPU backend") {
    // Random worlds with bilateral rows, then loops closed by bilateral rows (cuda_support.hpp's
    // check_preeliminated says why the bilateral impulses are held to the bound in the loops
    // only). Many copies, so that the worlds fill several blocks.
    scenes::RowsBuilder builder = random_batch(17, 96);
    const uint32_t loops_from = builder.world_count();
    std::mt19937_64 rng(5);
    for (uint32_t copy = 0; copy < 32; ++copy)
        scenes::add_loop_world(builder, rng, 3 + copy % 10);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32})
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE, STEEL_PATH_AUTO}) {
            CAPTURE(precision);
            CAPTURE(path);
            steel_solve_options options = options_with(12, path);
            options.enable_bilateral_preelimination = 1;
            options.cfm = 1e-9;
            const test::Solved cpu =
                cuda_test::solve(builder, cuda_test::run(STEEL_BACKEND_CPU, precision, options));
            const test::Solved gpu =
                cuda_test::solve(builder, cuda_test::run(STEEL_BACKEND_CUDA, precision, options));
            cuda_test::check_preeliminated(gpu, cpu, builder, 12, precision, loops_from);
        }
}

namespace {

steel_solve_options propagation_options(uint32_t iterations, int32_t solve_mode) {
    steel_solve_options options = options_with(iterations, STEEL_PATH_AUTO);
    options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
    options.solve_mode = solve_mode;
    options.record_residual_history = 1;
    return options;
}

} // namespace

namespace {

// Solves the scene on the CPU and on the GPU under the propagation response and holds the two to
// the same bits: the kernel runs the CPU's own walks, packs and row code in the CPU's order. The
// serial mode runs in both of its layouts (STEEL_CUDA_SERIAL_LAYOUT: a thread or a warp per
// world), and the warp-per-world kernel (the colored mode's) in both of its builds
// (STEEL_CUDA_PROPAGATION_KERNEL: plain or under launch bounds).
void check_propagation_on_gpu(const steel_scene_desc& desc, int32_t solve_mode) {
    const bool serial = solve_mode == STEEL_SOLVE_SERIAL;
    for (const char* layout : {"thread", "warp", "warp, bounded"})
        for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
            const bool warp = std::strcmp(layout, "thread") != 0,
                       bounded = std::strcmp(layout, "warp, bounded") == 0;
            if (!serial && warp && !bounded) continue; // the colored mode's plain warp is "thread"
            const auto solve_on = [&](int32_t backend) {
                // Read when a CUDA batch is made.
                setenv("STEEL_CUDA_SERIAL_LAYOUT", warp ? "warp" : "thread", 1);
                setenv("STEEL_CUDA_PROPAGATION_KERNEL", bounded ? "bounded" : "plain", 1);
                const steel_batch batch = cuda_test::create(desc.world_count, backend, precision);
                unsetenv("STEEL_CUDA_SERIAL_LAYOUT");
                unsetenv("STEEL_CUDA_PROPAGATION_KERNEL");
                const steel_solve_options options = propagation_options(25, solve_mode);
                REQUIRE_OK(steel_batch_set_options(batch, &options));
                REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
                // The layout and build asked for are the ones launched (a CUDA batch's solve).
                std::atomic<uint32_t>& launched =
                    serial && !warp ? steel::testing::cuda_solves_propagation_thread
                                    : steel::testing::cuda_solves_propagation_warp[bounded];
                const uint32_t launched_before = launched.load();
                REQUIRE_OK(steel_batch_solve(batch));
                CHECK(launched.load() == launched_before + (backend == STEEL_BACKEND_CUDA));
                test::Solved solved = test::read_all(batch);
                REQUIRE_OK(steel_batch_destroy(batch));
                return solved;
            };
            const test::Solved cpu = solve_on(STEEL_BACKEND_CPU),
                               gpu = solve_on(STEEL_BACKEND_CUDA);
            CAPTURE(layout);
            CAPTURE(precision);
            CAPTURE(solve_mode);
            INFO("largest impulse gap " << test::max_abs_diff(gpu.impulses, cpu.impulses));
            REQUIRE(gpu.impulses.size() == cpu.impulses.size());
            CHECK(test::max_abs(cpu.impulses) > 0);
            CHECK(std::memcmp(gpu.impulses.data(), cpu.impulses.data(),
                              cpu.impulses.size() * sizeof(double)) == 0);
            CHECK(std::memcmp(gpu.velocities.data(), cpu.velocities.data(),
                              cpu.velocities.size() * sizeof(double)) == 0);
            for (size_t w = 0; w < cpu.stats.size(); ++w)
                CHECK(std::memcmp(&gpu.stats[w], &cpu.stats[w], sizeof(steel_world_stats)) == 0);
        }
}

} // namespace

TEST_CASE("GPU propagation solve equals the CPU's bit for bit on free bodies, serial and colored") {
    scenes::SceneBuilder builder;
    for (uint32_t copy = 0; copy < 64; ++copy) { // a few blocks' worth of warps
        builder.begin_world();
        scenes::add_box_pile(builder, 10 + copy % 7);
    }
    builder.begin_world();
    scenes::add_box_pile(builder, 120); // colors wider than a warp
    builder.begin_world();
    scenes::add_box_stack(builder, 6);
    const steel_scene_desc desc = builder.desc();
    for (int32_t mode : {STEEL_SOLVE_SERIAL, STEEL_SOLVE_COLORED})
        check_propagation_on_gpu(desc, mode);
}

TEST_CASE("GPU propagation solve equals the CPU's bit for bit through trees, serial and colored") {
    // Tree walks, tree-to-free-body contacts, packs, drive rows (joint-space terms) and a loop
    // closure, over a few blocks' worth of warps.
    scenes::SceneBuilder builder;
    builder.drive_mode = STEEL_DRIVE_MODE_ROWS;
    scenes::add_articulated_mix(builder, 12);
    for (uint32_t boxes : {4u, 8u, 12u}) { // tree contacts and packs alternating through colors
        builder.begin_world();
        scenes::add_boxes_leaning_on_tree(builder, boxes);
    }
    // Worlds of several robots: a color's tree contacts (one foot of each) on several lanes at
    // once, more than 32 of them in the last world.
    for (uint32_t robots : {3u, 40u}) {
        builder.begin_world();
        for (uint32_t robot = 0; robot < robots; ++robot)
            scenes::add_legged_robot(builder);
    }
    const steel_scene_desc desc = builder.desc();
    for (int32_t mode : {STEEL_SOLVE_SERIAL, STEEL_SOLVE_COLORED})
        check_propagation_on_gpu(desc, mode);
}

namespace {

void unset_kernel_variables() {
    for (const char* variable :
         {"STEEL_CUDA_SERIAL_LAYOUT", "STEEL_CUDA_GENERAL_KERNEL", "STEEL_CUDA_PROPAGATION_KERNEL"})
        unsetenv(variable);
}

// Solves `worlds` legged robots with the propagation response's serial sweeps, no STEEL_CUDA_*
// variable set, on the GPU and the CPU; holds the two to the same bits and returns whether the
// GPU's solve ran a warp per world (else a thread per world; exactly one of the two ran).
bool default_layout_is_warp(uint32_t worlds, int32_t precision) {
    scenes::SceneBuilder builder;
    for (uint32_t world = 0; world < worlds; ++world) {
        builder.begin_world();
        scenes::add_legged_robot(builder);
    }
    const steel_scene_desc desc = builder.desc();
    const steel_solve_options options = propagation_options(10, STEEL_SOLVE_SERIAL);
    const auto solve_on = [&](int32_t backend) {
        const steel_batch batch = cuda_test::create(worlds, backend, precision);
        REQUIRE_OK(steel_batch_set_options(batch, &options));
        REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
        REQUIRE_OK(steel_batch_solve(batch));
        test::Solved solved = test::read_all(batch);
        REQUIRE_OK(steel_batch_destroy(batch));
        return solved;
    };
    const uint32_t threads_before = steel::testing::cuda_solves_propagation_thread.load(),
                   warps_before = steel::testing::cuda_solves_propagation_warp[0].load();
    const test::Solved gpu = solve_on(STEEL_BACKEND_CUDA), cpu = solve_on(STEEL_BACKEND_CPU);
    const bool thread = steel::testing::cuda_solves_propagation_thread.load() != threads_before,
               warp = steel::testing::cuda_solves_propagation_warp[0].load() != warps_before;
    CAPTURE(worlds);
    CHECK(thread != warp);
    REQUIRE(gpu.impulses.size() == cpu.impulses.size());
    CHECK(test::max_abs(cpu.impulses) > 0);
    CHECK(std::memcmp(gpu.impulses.data(), cpu.impulses.data(),
                      cpu.impulses.size() * sizeof(double)) == 0);
    return warp;
}

} // namespace

TEST_CASE("by default the serial propagation sweeps run a warp per world while the batch fits in "
          "one wave of the warp kernel, and a thread per world beyond") {
    unset_kernel_variables();
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        CAPTURE(precision);
        // The first solve asks the occupancy API for the wave (the kernel's registers differ
        // between the precisions).
        steel::testing::cuda_serial_wave_worlds.store(0);
        CHECK(default_layout_is_warp(2, precision));
        const uint32_t wave = steel::testing::cuda_serial_wave_worlds.load();
        CAPTURE(wave);
#if defined(STEEL_EMULATED_CUDA)
        // Two resident blocks of four warps on the emulated device's one multiprocessor.
        CHECK(wave == 8);
#else
        CHECK(wave >= 4); // at least one block of four warps
#endif
        CHECK(default_layout_is_warp(wave, precision));
        CHECK_FALSE(default_layout_is_warp(wave + 1, precision));
    }
#if defined(STEEL_EMULATED_CUDA)
    // The wave follows the occupancy API's answer, not a constant.
    fake_cuda::set_resident_blocks(3);
    CHECK(default_layout_is_warp(12, STEEL_PRECISION_FLOAT64));
    CHECK(steel::testing::cuda_serial_wave_worlds.load() == 12);
    CHECK_FALSE(default_layout_is_warp(13, STEEL_PRECISION_FLOAT64));
    fake_cuda::set_resident_blocks(2);
#endif
}

TEST_CASE("by default the general sweep runs its bounded build in float64 and its plain one in "
          "float32") {
    unset_kernel_variables();
    const scenes::RowsBuilder rows = random_batch(31, 64);
    const steel_rows_desc rows_desc = rows.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        CAPTURE(precision);
        const steel_batch batch =
            cuda_test::create(rows.world_count(), STEEL_BACKEND_CUDA, precision);
        const steel_solve_options options = options_with(20, STEEL_PATH_GENERAL);
        REQUIRE_OK(steel_batch_set_options(batch, &options));
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows_desc));
        const uint32_t plain_before = steel::testing::cuda_solves_general[0].load(),
                       bounded_before = steel::testing::cuda_solves_general[1].load();
        REQUIRE_OK(steel_batch_solve(batch));
        const bool float64 = precision == STEEL_PRECISION_FLOAT64;
        CHECK(steel::testing::cuda_solves_general[1].load() == bounded_before + (float64 ? 1 : 0));
        CHECK(steel::testing::cuda_solves_general[0].load() == plain_before + (float64 ? 0 : 1));
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}

#if defined(STEEL_EMULATED_CUDA)
// What only the emulated device can stage (tests/fake_cuda/): a device whose CUDA context an
// earlier kernel fault left in a sticky error state, and a device this build has no code for.
// Only the second is "no device": the first is a device that was seen and cannot be used again
// in this process, which the caller must not take for a machine without a GPU.
namespace {

steel_status create_cuda(steel_batch& batch) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.backend = STEEL_BACKEND_CUDA;
    batch = steel_batch{12345};
    return steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
}

} // namespace

TEST_CASE("a CUDA batch made in a context left in a sticky error state is refused as INTERNAL, "
          "not NO_DEVICE") {
    for (const cudaError_t sticky : {cudaErrorIllegalAddress, cudaErrorLaunchFailure}) {
        const std::string name = cudaGetErrorName(sticky);
        CAPTURE(name);
        fake_cuda::set_sticky_error(sticky);
        steel_batch batch{};
        const steel_status status = create_cuda(batch);
        const std::string message = steel_last_error_message();
        fake_cuda::set_sticky_error(cudaSuccess);
        CAPTURE(message);
        CHECK(status == STEEL_ERROR_INTERNAL);
        CHECK(batch.id == 0);
        CHECK(message.find("steel_batch_create: ") == 0);
        CHECK(message.find("CUDA context is in an error state") != std::string::npos);
        CHECK(message.find("restart the process") != std::string::npos);
        CHECK(message.find(name) != std::string::npos); // the runtime's words
        CHECK(message.find(cudaGetErrorString(sticky)) != std::string::npos);
        CHECK(message.find("no CUDA device") == std::string::npos);
    }

    // A device without this build's code is NO_DEVICE, naming it.
    fake_cuda::set_compute_capability(8, 6);
    steel_batch batch{};
    const steel_status status = create_cuda(batch);
    const std::string message = steel_last_error_message();
    fake_cuda::set_compute_capability(9, 0);
    CAPTURE(message);
    CHECK(status == STEEL_ERROR_NO_DEVICE);
    CHECK(batch.id == 0);
    CHECK(message.find("compute capability 8.6") != std::string::npos);
    CHECK(message.find("cudaErrorNoKernelImageForDevice") != std::string::npos);

    // Nothing was left behind: with the device well again, a batch is made and solves.
    REQUIRE(create_cuda(batch) == STEEL_OK);
    const scenes::RowsBuilder builder = random_batch(3, 16);
    REQUIRE_OK(steel_batch_destroy(batch));
    const steel_solve_options options = options_with(10, STEEL_PATH_AUTO);
    const test::Solved cpu = cuda_test::solve(
        builder, cuda_test::run(STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64, options));
    const test::Solved gpu = cuda_test::solve(
        builder, cuda_test::run(STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64, options));
    check_close(gpu, cpu, 10, cuda_test::longest_sum(builder), STEEL_PRECISION_FLOAT64);
}
#endif
