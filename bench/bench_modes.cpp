// The solve modes side by side on the same scene uploads: the immediate response swept
// serially (the default), the propagation response swept serially, and the propagation
// response colored (SIMD packs of contacts). Times steel_batch_solve only (the scene upload,
// row building and the propagation/color setup of the first solve are outside the timing), and
// reports ns per row update (solve time / (rows x sweeps)), us per solve and per world, and the
// largest final sweep residual over the worlds. Results: bench/RESULTS.md.
//
//   bench_modes [--quick] [--threads N] [--float32]
#include "bench_support.hpp"
#include "robot_scenes.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

using bench::check;
using bench::seconds_since;

namespace {

struct Mode {
    const char* name;
    int32_t response, solve_mode;
};

} // namespace

int main(int argc, char** argv) {
    bool quick = false;
    uint32_t threads = 1;
    int32_t precision = STEEL_PRECISION_FLOAT64;
    for (int k = 1; k < argc; ++k) {
        if (std::strcmp(argv[k], "--quick") == 0) quick = true;
        if (std::strcmp(argv[k], "--float32") == 0) precision = STEEL_PRECISION_FLOAT32;
        if (std::strcmp(argv[k], "--threads") == 0 && k + 1 < argc)
            threads = uint32_t(std::atoi(argv[++k]));
    }
    const double min_seconds = quick ? 0.02 : 0.25;
    struct Scene {
        const char* name;
        std::function<void(scenes::SceneBuilder&)> add;
        std::vector<uint32_t> world_counts;
    } scene_list[] = {
        {"box stack 5",
         [](scenes::SceneBuilder& b) { scenes::add_box_stack(b, 5); },
         {1, 64, 1024}},
        {"box stack 20", [](scenes::SceneBuilder& b) { scenes::add_box_stack(b, 20); }, {1, 64}},
        {"box pile 100", [](scenes::SceneBuilder& b) { scenes::add_box_pile(b, 100); }, {1, 64}},
        {"box pile 1000", [](scenes::SceneBuilder& b) { scenes::add_box_pile(b, 1000); }, {1}},
        {"arm with box",
         [](scenes::SceneBuilder& b) { scenes::add_arm_with_box(b, 0.8, 20); },
         {1, 64, 1024}},
        {"legged robot", [](scenes::SceneBuilder& b) { scenes::add_legged_robot(b); }, {1, 64}},
    };
    const Mode modes[] = {{"immediate serial", STEEL_RESPONSE_IMMEDIATE, STEEL_SOLVE_SERIAL},
                          {"propagation serial", STEEL_RESPONSE_PROPAGATION, STEEL_SOLVE_SERIAL},
                          {"propagation colored", STEEL_RESPONSE_PROPAGATION, STEEL_SOLVE_COLORED}};
    std::printf("steel %s, %s, %u thread(s), box friction, steel_batch_solve only\n\n",
                steel_version(), precision == STEEL_PRECISION_FLOAT32 ? "float32" : "float64",
                threads);
    std::printf("| scene | worlds | rows/world | sweeps | mode | ns/row update | us/solve | "
                "us/world | residual |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (const Scene& scene : scene_list)
        for (uint32_t worlds : scene.world_counts) {
            if (quick && worlds > 64) continue;
            scenes::SceneBuilder builder;
            for (uint32_t w = 0; w < worlds; ++w) {
                builder.begin_world();
                scene.add(builder);
            }
            const steel_scene_desc scene_desc = builder.desc();
            for (uint32_t sweeps : {10u, 20u, 50u}) {
                if (quick && sweeps != 20) continue;
                for (const Mode& mode : modes) {
                    steel_batch_desc desc;
                    steel_batch_desc_default(&desc);
                    desc.world_count = worlds;
                    desc.precision = precision;
                    desc.thread_count = threads;
                    steel_batch batch{};
                    check(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch), "create");
                    steel_solve_options options;
                    steel_solve_options_default(&options);
                    options.iterations = sweeps;
                    options.articulated_contact_response = mode.response;
                    options.solve_mode = mode.solve_mode;
                    check(steel_batch_set_options(batch, &options), "options");
                    check(steel_batch_upload_scene(batch, &scene_desc), "upload scene");
                    check(steel_batch_solve(batch),
                          "first solve"); // builds the propagation set / colors
                    uint32_t solves = 0;
                    const auto start = std::chrono::steady_clock::now();
                    do {
                        check(steel_batch_solve(batch), "solve");
                        ++solves;
                    } while (seconds_since(start) < min_seconds);
                    const double solve = seconds_since(start) / solves;
                    uint64_t rows = 0;
                    check(steel_batch_read_impulses(batch, nullptr, 0, &rows), "rows");
                    std::vector<steel_world_stats> stats(worlds);
                    uint32_t count = 0;
                    check(steel_batch_read_world_stats(batch, sizeof(steel_world_stats),
                                                       stats.data(), worlds, &count),
                          "stats");
                    double residual = 0;
                    for (const steel_world_stats& s : stats)
                        residual = std::max(residual, s.residual);
                    std::printf("| %s | %u | %llu | %u | %s | %.2f | %.1f | %.2f | %.2e |\n",
                                scene.name, worlds, (unsigned long long)(rows / worlds), sweeps,
                                mode.name, solve * 1e9 / (double(rows) * sweeps), solve * 1e6,
                                solve * 1e6 / worlds, residual);
                    check(steel_batch_destroy(batch), "destroy");
                }
            }
        }
    return 0;
}
