// Scene mode: time per step of row building (steel_batch_upload_scene) and of solving
// (steel_batch_solve, 20 sweeps), separately, for each example scene at 1, 64 and 1,024
// worlds (--worlds N, repeatable, instead), on the batch's threads (--threads N, default 1:
// the upload builds and the solve solves runs of worlds on them), and of a whole step (an upload,
// then a solve). Two untimed uploads and a solve come first: the timing is the steady state of a
// batch uploaded every step, which reuses its arrays, not the first uploads' page faults. --colored
// solves under the propagation response with colored sweeps, whose solve after an upload first
// builds the tree data and the colors. Results: bench/RESULTS.md.
//
// --seconds S times each phase for at least S seconds (default 0.3; --quick: 0.02), for a
// profile of the steady state rather than of the setup. --moving gives every joint velocity a
// nonzero value (0.5 sin(k + 1) for DOF k) instead of the scenes' rest, so that the upload pays
// for what only moving bodies cost (the implicit gyroscopic step). --cone builds every contact's
// friction as a FRICTION_CONE pair (STEEL_FRICTION_MODEL_CONE) instead of two box rows.
//
//   bench_scene [--quick] [--colored] [--moving] [--cone] [--threads N] [--only "legged robot"]
//               [--worlds 16384] [--seconds 5]
#include "bench_support.hpp"
#include "robot_scenes.hpp"

#include <steel/steel.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using bench::check;
using bench::seconds_since;

int main(int argc, char** argv) {
    bool quick = false, colored = false, moving = false, cone = false;
    uint32_t threads = 1;
    std::string only;             // one scene's name, or all
    std::vector<uint32_t> counts; // world counts, or 1, 64 and 1,024
    double seconds = 0;           // 0: the default
    for (int k = 1; k < argc; ++k) {
        if (std::strcmp(argv[k], "--quick") == 0) {
            quick = true;
        } else if (std::strcmp(argv[k], "--moving") == 0) {
            moving = true;
        } else if (std::strcmp(argv[k], "--cone") == 0) {
            cone = true;
        } else if (std::strcmp(argv[k], "--colored") == 0) {
            colored = true;
        } else if (std::strcmp(argv[k], "--threads") == 0 && k + 1 < argc &&
                   std::atoi(argv[k + 1]) >= 1) {
            threads = uint32_t(std::atoi(argv[++k]));
        } else if (std::strcmp(argv[k], "--only") == 0 && k + 1 < argc) {
            only = argv[++k];
        } else if (std::strcmp(argv[k], "--worlds") == 0 && k + 1 < argc &&
                   std::atoi(argv[k + 1]) >= 1) {
            counts.push_back(uint32_t(std::atoi(argv[++k])));
        } else if (std::strcmp(argv[k], "--seconds") == 0 && k + 1 < argc &&
                   std::atof(argv[k + 1]) > 0) {
            seconds = std::atof(argv[++k]);
        } else {
            std::fprintf(stderr, "usage: bench_scene [--quick] [--colored] [--moving] [--cone] "
                                 "[--threads N >= 1] "
                                 "[--only \"SCENE NAME\"] [--worlds N]... [--seconds S > 0]\n");
            return 2;
        }
    }
    const double min_seconds = seconds > 0 ? seconds : quick ? 0.02 : 0.3;
    struct Scene {
        const char* name;
        std::function<void(scenes::SceneBuilder&)> add;
    } scene_list[] = {
        {"box stack 5", [](scenes::SceneBuilder& b) { scenes::add_box_stack(b, 5); }},
        {"box pile 100", [](scenes::SceneBuilder& b) { scenes::add_box_pile(b, 100); }},
        {"arm with box", [](scenes::SceneBuilder& b) { scenes::add_arm_with_box(b, 0.8, 20); }},
        {"legged robot", [](scenes::SceneBuilder& b) { scenes::add_legged_robot(b); }},
        {"four-bar", [](scenes::SceneBuilder& b) { scenes::add_four_bar(b); }},
    };
    std::printf("steel %s, float64, %u thread(s), 20 sweeps per solve, %s, %s, %s friction\n\n",
                steel_version(), threads,
                colored ? "propagation response, colored sweeps"
                        : "immediate response, serial sweeps",
                moving ? "bodies moving" : "bodies at rest", cone ? "cone" : "box");
    std::printf("| scene | worlds | DOFs/world | rows/world | build us/step | solve us/step | "
                "build us/world | solve us/world | upload+solve us/world |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    if (counts.empty()) counts = {1u, 64u, 1024u};
    for (const Scene& scene : scene_list)
        for (uint32_t worlds : counts) {
            if ((quick && worlds > 64) || (!only.empty() && only != scene.name)) continue;
            scenes::SceneBuilder builder;
            if (cone) builder.friction_model = STEEL_FRICTION_MODEL_CONE;
            for (uint32_t w = 0; w < worlds; ++w) {
                builder.begin_world();
                scene.add(builder);
            }
            if (moving)
                for (size_t k = 0; k < builder.velocity.size(); ++k)
                    builder.velocity[k] = 0.5 * std::sin(double(k + 1));
            steel_batch_desc desc;
            steel_batch_desc_default(&desc);
            desc.world_count = worlds;
            desc.thread_count = threads;
            steel_batch batch{};
            check(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch), "create");
            steel_solve_options options;
            steel_solve_options_default(&options);
            options.iterations = 20;
            if (colored) {
                options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
                options.solve_mode = STEEL_SOLVE_COLORED;
            }
            check(steel_batch_set_options(batch, &options), "options");
            const steel_scene_desc scene_desc = builder.desc();
            // Two warm-up uploads: a batch keeps two row sets (the current one and the spare the
            // next upload builds into), and only the second upload allocates the spare.
            for (int warm_up = 0; warm_up < 2; ++warm_up)
                check(steel_batch_upload_scene(batch, &scene_desc), "upload scene");
            check(steel_batch_solve(batch), "solve");
            uint32_t builds = 0, solves = 0;
            auto start = std::chrono::steady_clock::now();
            do {
                check(steel_batch_upload_scene(batch, &scene_desc), "upload scene");
                ++builds;
            } while (seconds_since(start) < min_seconds);
            const double build = seconds_since(start) / builds;
            check(steel_batch_solve(batch), "solve"); // the colors of the last upload, untimed
            start = std::chrono::steady_clock::now();
            do {
                check(steel_batch_solve(batch), "solve");
                ++solves;
            } while (seconds_since(start) < min_seconds);
            const double solve = seconds_since(start) / solves;
            // A step as a simulation takes it: a new upload, then a solve (which, under the
            // propagation response, first builds the tree data and the colors for it).
            uint32_t steps = 0;
            start = std::chrono::steady_clock::now();
            do {
                check(steel_batch_upload_scene(batch, &scene_desc), "upload scene");
                check(steel_batch_solve(batch), "solve");
                ++steps;
            } while (seconds_since(start) < min_seconds);
            const double step = seconds_since(start) / steps;
            uint64_t rows = 0, dofs = 0;
            check(steel_batch_read_impulses(batch, nullptr, 0, &rows), "rows");
            check(steel_batch_read_velocities(batch, nullptr, 0, &dofs), "dofs");
            std::printf("| %s | %u | %llu | %llu | %.1f | %.1f | %.2f | %.2f | %.2f |\n",
                        scene.name, worlds, (unsigned long long)(dofs / worlds),
                        (unsigned long long)(rows / worlds), build * 1e6, solve * 1e6,
                        build * 1e6 / worlds, solve * 1e6 / worlds, step * 1e6 / worlds);
            check(steel_batch_destroy(batch), "destroy");
        }
    return 0;
}
