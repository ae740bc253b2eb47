// What every engine's runner shares: the sweep counts, copies and threads it runs, timing a batch
// of independent copies on one or two threads, and the result line it prints.
//
// A "batch" is `copies` independent instances of one scene (one world each, as Steel solves
// worlds). Each instance's step times its own setup and solve; a thread sums the times of the
// copies it owns, and the batch's figure is the larger sum over the threads (the critical path
// when the copies are split over two cores). The best of several repeats is kept.
#pragma once

#include "peer_scene.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace peers {

struct StepTimes {
    double setup = 0; // seconds: what the engine does before its sweeps that we can time apart
    double solve = 0; // seconds: the figure reported as the solve (each runner says what it holds)
};

struct Options {
    bool quick = false;     // 1 and 64 copies, fewer repeats
    std::string only_scene; // run just this scene (by name) if set
    std::vector<uint32_t> sweeps{10, 20, 50};
    std::vector<uint32_t> threads{1, 2};
    std::string variant; // engine-specific (e.g. Steel's response/solve mode)
};
Options parse_options(int argc, char** argv);

std::vector<uint32_t> copy_counts(const Options& options, bool small_scene);

// Runs `step(copy)` for every copy, split over `threads` threads (each calls `thread_init` once
// first), repeatedly; returns the best batch times.
StepTimes time_batch(uint32_t copies, uint32_t threads, bool quick,
                     const std::function<StepTimes(uint32_t copy)>& step,
                     const std::function<void()>& thread_init = {});

struct Result {
    std::string engine, variant, scene, note;
    uint32_t copies = 1, sweeps = 0, threads = 1;
    uint32_t rows = 0;    // constraint rows per world, as the engine counts them
    double row_dofs = 0;  // sum over one world's rows of the DOFs each row touches
    StepTimes batch;      // per batch of `copies` worlds
    double residual = -1; // contact_normal_residual of copy 0; < 0: not measured
};

void print_header();
void print_result(const Result& result);
// A line saying a configuration was not run, and why.
void print_skip(const std::string& engine, const std::string& variant, const std::string& scene,
                const std::string& why);

double now_seconds();

// The loop every peer runner shares: for each thread and sweep count of `options`,
// `prepare(sweeps)` sets the engine's sweep count, the copies (`worlds`, one per copy) are timed,
// `before_residual` runs, copy 0 steps once more for the residual, and one Result line is printed.
// A World has step() -> StepTimes, velocities() and count_rows(rows, row_dofs).
template <class World>
void run_copies(const Scene& scene, const std::vector<std::unique_ptr<World>>& worlds,
                const Options& options, const std::string& engine, const std::string& variant,
                const std::function<void(uint32_t sweeps)>& prepare,
                const std::function<void()>& thread_init = {},
                const std::function<void()>& before_residual = {}) {
    const uint32_t copies = uint32_t(worlds.size());
    for (uint32_t threads : options.threads)
        for (uint32_t sweeps : options.sweeps) {
            prepare(sweeps);
            Result r;
            r.engine = engine;
            r.variant = variant;
            r.scene = scene.name;
            r.copies = copies;
            r.sweeps = sweeps;
            r.threads = threads;
            r.note = threads > 1 ? "copies split over threads" : "";
            r.batch = time_batch(
                copies, threads, options.quick, [&](uint32_t c) { return worlds[c]->step(); },
                thread_init);
            if (before_residual) before_residual();
            worlds[0]->step();
            r.residual = contact_normal_residual(scene, worlds[0]->velocities());
            worlds[0]->count_rows(r.rows, r.row_dofs);
            print_result(r);
        }
}

} // namespace peers
