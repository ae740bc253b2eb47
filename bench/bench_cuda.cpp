// bench_cuda: the CUDA backend beside the CPU backend on batches of small worlds, through the
// public C API only.
//
//   bench_cuda [--quick] [--iterations N]
//
// Worlds: "stack8" (a resting stack of 8 boxes, n = m = 8, 1 value a row) and "random12" (4
// bodies of up to 6 DOFs, 12 mixed rows: bilateral, bounded, contact and friction), copied 1,
// 1,024 and 16,384 times. Each batch is solved with a fixed iteration count (tolerance 0),
// path AUTO, on the CPU (every core) and on the GPU in float32 and float64.
//
// Two GPU timings: "sync" is steel_batch_solve (launch, wait, copy the results to the host);
// "async" is steel_batch_solve_async repeated back to back on one stream, then one wait, which
// is the device's own throughput (results stay on the device). Row updates = the sum over worlds
// of rows * sweeps; ns/row = wall time / row updates. Without a device the GPU rows say why.
#include "rows_scenes.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void check(steel_status status, const char* what) {
    if (status == STEEL_OK) return;
    std::fprintf(stderr, "bench_cuda: %s failed: %s (%s)\n", what, steel_status_string(status),
                 steel_last_error_message());
    std::exit(1);
}

scenes::RowsBuilder copies_of(const char* world, uint32_t copies) {
    scenes::RowsBuilder builder;
    std::mt19937_64 rng(7);
    for (uint32_t c = 0; c < copies; ++c) {
        if (std::strcmp(world, "stack8") == 0) {
            scenes::StackSpec stack;
            stack.height = 8;
            scenes::add_stack_world(builder, stack);
        } else {
            rng.seed(7); // every copy the same world
            scenes::RandomWorldSpec spec;
            spec.body_count = 4;
            spec.max_body_dofs = 6;
            spec.row_count = 12;
            scenes::add_random_world(builder, rng, spec);
        }
    }
    return builder;
}

struct Timing {
    double seconds = 0; // per solve
    double row_updates = 0;
};

// Creates the batch (or says why not) and uploads; returns the null handle if it cannot.
steel_batch make(const scenes::RowsBuilder& builder, int32_t backend, int32_t precision,
                 uint32_t iterations, std::string& why) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.backend = backend;
    desc.precision = precision;
    desc.world_count = builder.world_count();
    desc.thread_count = 0; // every core for the CPU
    steel_batch batch{};
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &batch) != STEEL_OK) {
        why = steel_last_error_message();
        return steel_batch{};
    }
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = iterations;
    check(steel_batch_set_options(batch, &options), "set_options");
    const steel_rows_desc rows = builder.desc();
    check(steel_batch_upload_rows(batch, &rows), "upload_rows");
    return batch;
}

double row_updates_of(steel_batch batch, const scenes::RowsBuilder& builder) {
    std::vector<steel_world_stats> stats(builder.world_count());
    uint32_t count = 0;
    check(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(),
                                       uint32_t(stats.size()), &count),
          "read_world_stats");
    double updates = 0;
    for (uint32_t w = 0; w < count; ++w)
        updates += double(builder.row_counts[w]) * stats[w].sweeps;
    return updates;
}

// Best of 3 loops of at least min_seconds each.
template <class Solve> double time_solves(Solve&& solve, double min_seconds) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        int runs = 0;
        const Clock::time_point start = Clock::now();
        do {
            solve();
            ++runs;
        } while (seconds_since(start) < min_seconds);
        best = std::min(best, seconds_since(start) / runs);
    }
    return best;
}

void print_row(const char* world, uint32_t copies, const char* backend, const char* precision,
               const char* mode, const Timing& t) {
    std::printf(
        "%-9s %6u  %-5s %-7s %-5s  %10.3f ms  %12.0f worlds/s  %14.0f rows/s  %8.2f ns/row\n",
        world, copies, backend, precision, mode, 1e3 * t.seconds, copies / t.seconds,
        t.row_updates / t.seconds, 1e9 * t.seconds / t.row_updates);
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false;
    uint32_t iterations = 20;
    for (int k = 1; k < argc; ++k) {
        if (std::strcmp(argv[k], "--quick") == 0) quick = true;
        if (std::strcmp(argv[k], "--iterations") == 0 && k + 1 < argc)
            iterations = uint32_t(std::atoi(argv[++k]));
    }
    const double min_seconds = quick ? 0.05 : 0.3;
    std::printf(
        "bench_cuda: %u sweeps per solve, path AUTO, tolerance 0; best of 3 loops of >= %.2f s\n",
        iterations, min_seconds);
    std::printf("%-9s %6s  %-5s %-7s %-5s  %13s  %19s  %21s  %15s\n", "world", "copies", "where",
                "real", "mode", "per solve", "", "", "");
    std::string no_device;
    for (const char* world : {"stack8", "random12"})
        for (uint32_t copies : {1u, 1024u, 16384u}) {
            const scenes::RowsBuilder builder = copies_of(world, copies);
            std::string why;
            const steel_batch cpu =
                make(builder, STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT32, iterations, why);
            Timing t;
            t.seconds = time_solves([&] { check(steel_batch_solve(cpu), "solve"); }, min_seconds);
            t.row_updates = row_updates_of(cpu, builder);
            print_row(world, copies, "cpu", "float32", "sync", t);
            steel_batch_destroy(cpu);
            for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64}) {
                const char* name = precision == STEEL_PRECISION_FLOAT32 ? "float32" : "float64";
                const steel_batch gpu =
                    make(builder, STEEL_BACKEND_CUDA, precision, iterations, why);
                if (gpu.id == 0) {
                    no_device = why;
                    continue;
                }
                t.seconds =
                    time_solves([&] { check(steel_batch_solve(gpu), "solve"); }, min_seconds);
                t.row_updates = row_updates_of(gpu, builder);
                print_row(world, copies, "gpu", name, "sync", t);
                // Back-to-back async solves; reading the stats waits for the last one.
                const int burst = 20;
                t.seconds = time_solves(
                                [&] {
                                    for (int k = 0; k < burst; ++k)
                                        check(steel_batch_solve_async(gpu, nullptr), "solve_async");
                                    row_updates_of(gpu, builder);
                                },
                                min_seconds) /
                            burst;
                print_row(world, copies, "gpu", name, "async", t);
                steel_batch_destroy(gpu);
            }
        }
    if (!no_device.empty()) std::printf("GPU: not measured: %s\n", no_device.c_str());
    return 0;
}
