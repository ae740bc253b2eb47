// Helpers of the GPU tests: solve one rows upload on a chosen backend and precision, and the
// tolerance GPU and CPU results are held to (docs/cuda.md derives it).
#pragma once

#include "robot_scenes.hpp"
#include "rows_scenes.hpp"
#include "scene_builder.hpp"
#include "support.hpp"

#include <algorithm>
#include <random>

namespace cuda_test {

struct Run {
    int32_t backend = STEEL_BACKEND_CPU;
    int32_t precision = STEEL_PRECISION_FLOAT64;
    steel_solve_options options{};
};

inline Run run(int32_t backend, int32_t precision, const steel_solve_options& options) {
    Run r;
    r.backend = backend;
    r.precision = precision;
    r.options = options;
    return r;
}

inline steel_batch create(uint32_t worlds, int32_t backend, int32_t precision) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.backend = backend;
    desc.precision = precision;
    desc.world_count = worlds;
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    return batch;
}

// A batch of `r` holding the builder's rows, solved once with r.options (set before the upload);
// the caller reads and destroys it.
inline steel_batch solved_batch(const scenes::RowsBuilder& builder, const Run& r) {
    const steel_batch batch = create(builder.world_count(), r.backend, r.precision);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_set_options(batch, &r.options));
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));
    return batch;
}

inline test::Solved solve(const scenes::RowsBuilder& builder, const Run& r) {
    const steel_batch batch = solved_batch(builder, r);
    test::Solved solved = test::read_all(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    return solved;
}

inline steel_solve_options options_with(uint32_t iterations, int32_t path) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = iterations;
    options.path = path;
    return options;
}

// Stacks of height 2, 2 + step, ... up to 12 under a heavy top box: a large mass ratio, where
// momentum matters.
inline scenes::RowsBuilder heavy_stacks(uint32_t step) {
    scenes::RowsBuilder builder;
    for (uint32_t h = 2; h <= 12; h += step) {
        scenes::StackSpec stack;
        stack.height = h;
        stack.top_mass = 100.0;
        scenes::add_stack_world(builder, stack);
    }
    return builder;
}

// Three worlds: the arm with a box, the legged robot, a pile of pile_boxes boxes.
inline scenes::SceneBuilder robot_worlds(int32_t friction_model, uint32_t pile_boxes) {
    scenes::SceneBuilder builder;
    builder.friction_model = friction_model;
    builder.begin_world();
    scenes::add_arm_with_box(builder, 0.8, 2.0);
    builder.begin_world();
    scenes::add_legged_robot(builder);
    builder.begin_world();
    scenes::add_box_pile(builder, pile_boxes);
    return builder;
}

// Three worlds: a stack, a one-row world whose impulse overflows to infinity, another stack.
inline scenes::RowsBuilder overflowing_middle_world() {
    scenes::RowsBuilder builder;
    scenes::add_stack_world(builder, scenes::StackSpec{});
    builder.begin_world({0.0, 0.0});
    scenes::Row row;
    row.blocks[0] = scenes::Block{0, {1e-10}, {1e10}};
    row.bias = 1e300;
    builder.add_row(row);
    scenes::add_stack_world(builder, scenes::StackSpec{});
    return builder;
}

// How many of `worlds` a GPU test makes. On the emulated device (tests/fake_cuda/), where each
// warp operation is 32 fiber switches, a sixteenth (at least 8): the same paths, in seconds.
inline uint32_t device_worlds(uint32_t worlds) {
#if defined(STEEL_EMULATED_CUDA)
    return std::max<uint32_t>(8, worlds / 16);
#else
    return worlds;
#endif
}

// Random worlds of 1 to 24 rows over 1 to 5 bodies of 1 to 7 DOFs (rows up to 14 values); on the
// emulated device, fewer (device_worlds).
inline scenes::RowsBuilder random_batch(uint64_t seed, uint32_t worlds) {
    worlds = device_worlds(worlds);
    std::mt19937_64 rng(seed);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < worlds; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1 + uint32_t(rng() % 5);
        spec.max_body_dofs = 7;
        spec.row_count = 1 + uint32_t(rng() % 24);
        scenes::add_random_world(builder, rng, spec);
    }
    return builder;
}

// L of the tolerance below: the most terms a dot product the GPU sums differently from the CPU
// can have. That is a row's values (J_i . v, general path) or, in a world the dense path can
// take (at most 32 rows on the device), its row count (A_i . lambda).
inline uint64_t longest_sum(const scenes::RowsBuilder& builder) {
    uint64_t longest = 1;
    for (size_t r = 0; r < builder.bias.size(); ++r)
        longest = std::max<uint64_t>(longest, uint64_t(builder.block_length[2 * r]) +
                                                  builder.block_length[2 * r + 1]);
    for (uint32_t m : builder.row_counts)
        if (m <= 32) longest = std::max<uint64_t>(longest, m);
    return longest;
}

// docs/cuda.md, "Same answers": after k sweeps the GPU and the CPU in the same precision differ
// by at most 32 k L u max(1, |lambda|_inf) (u the unit roundoff, L from longest_sum).
inline double tolerance(uint32_t sweeps, uint64_t longest, int32_t precision, double scale) {
    const double u = precision == STEEL_PRECISION_FLOAT32 ? 0x1p-24 : 0x1p-53;
    return 32.0 * sweeps * double(longest) * u * std::max(1.0, scale);
}

// A CUDA solve (on a device or emulated) against the CPU's in the same precision after `sweeps`
// sweeps: impulses and velocities within the bound above, paths and flags equal.
inline void check_close(const test::Solved& gpu, const test::Solved& cpu, uint32_t sweeps,
                        uint64_t longest, int32_t precision) {
    const double scale = test::max_abs(cpu.impulses);
    CHECK(test::max_abs_diff(gpu.impulses, cpu.impulses) <=
          tolerance(sweeps, longest, precision, scale));
    const double vscale = test::max_abs(cpu.velocities);
    CHECK(test::max_abs_diff(gpu.velocities, cpu.velocities) <=
          tolerance(sweeps, longest, precision, std::max(scale, vscale)));
    REQUIRE(gpu.stats.size() == cpu.stats.size());
    for (size_t w = 0; w < gpu.stats.size(); ++w) {
        CAPTURE(w);
        CHECK(gpu.stats[w].path == cpu.stats[w].path);
        CHECK(gpu.stats[w].flags == cpu.stats[w].flags);
    }
}

// Pre-elimination on the CPU against a CUDA solve (emulated or on a device), world by world with
// the world's own scale. The derived world is built by the same code on both sides, so its sweeps
// differ only in their summation order: the kept rows' impulses are held to the bound of
// check_close (L the derived rows' length, the world's DOF count) in every world. The bilateral
// impulses come from S^-1, and v from them, which amplifies those differences by S's condition
// number: both are held to the bound in the worlds from `conditioned_from` on (well-posed loops)
// only. The random worlds before them include more bilateral rows than DOFs, a redundant set that
// the regularization floor alone settles (impulses up to 1e9, v agreeing to 1e-8 only).
inline void check_preeliminated(const test::Solved& gpu, const test::Solved& cpu,
                                const scenes::RowsBuilder& builder, uint32_t sweeps,
                                int32_t precision, uint32_t conditioned_from) {
    uint32_t row0 = 0, dof0 = 0;
    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        CAPTURE(w);
        const uint32_t m = builder.row_counts[w], n = builder.dof_counts[w];
        double scale = 0, kept_gap = 0, bilateral_gap = 0, velocity_gap = 0;
        for (uint32_t i = row0; i < row0 + m; ++i) {
            const double gap = std::fabs(gpu.impulses[i] - cpu.impulses[i]);
            if (builder.kind[i] == STEEL_ROW_BILATERAL) {
                bilateral_gap = std::max(bilateral_gap, gap);
                if (w >= conditioned_from) scale = std::max(scale, std::fabs(cpu.impulses[i]));
            } else {
                kept_gap = std::max(kept_gap, gap);
                scale = std::max(scale, std::fabs(cpu.impulses[i]));
            }
        }
        for (uint32_t k = dof0; k < dof0 + n; ++k) {
            velocity_gap = std::max(velocity_gap, std::fabs(gpu.velocities[k] - cpu.velocities[k]));
            scale = std::max(scale, std::fabs(cpu.velocities[k]));
        }
        uint64_t longest = n;
        for (uint32_t i = row0; i < row0 + m; ++i)
            longest = std::max<uint64_t>(longest, uint64_t(builder.block_length[2 * i]) +
                                                      builder.block_length[2 * i + 1]);
        const double bound = tolerance(sweeps, longest, precision, scale);
        CHECK(kept_gap <= bound);
        if (w >= conditioned_from) {
            CHECK(velocity_gap <= bound);
            CHECK(bilateral_gap <= bound);
        }
        CHECK(gpu.stats[w].path == cpu.stats[w].path);
        CHECK(gpu.stats[w].flags == cpu.stats[w].flags);
        CHECK(gpu.stats[w].sweeps == cpu.stats[w].sweeps);
        row0 += m;
        dof0 += n;
    }
}

} // namespace cuda_test
