#include "peer_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

namespace peers {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

namespace {

std::vector<uint32_t> parse_list(const char* text) {
    std::vector<uint32_t> values;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        values.push_back(uint32_t(std::strtoul(item.c_str(), nullptr, 10)));
    return values;
}

} // namespace

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--quick")
            o.quick = true;
        else if (arg == "--scene" && has_value)
            o.only_scene = argv[++i];
        else if (arg == "--sweeps" && has_value)
            o.sweeps = parse_list(argv[++i]);
        else if (arg == "--threads" && has_value)
            o.threads = parse_list(argv[++i]);
        else if (arg == "--variant" && has_value)
            o.variant = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: %s [--quick] [--scene NAME] [--sweeps 10,20,50] [--threads 1,2] "
                         "[--variant NAME]\n",
                         argv[0]);
            std::exit(2);
        }
    }
    return o;
}

std::vector<uint32_t> copy_counts(const Options& options, bool small_scene) {
    if (!small_scene) return {1};
    if (options.quick) return {1, 64};
    return {1, 64, 1024};
}

StepTimes time_batch(uint32_t copies, uint32_t threads, bool quick,
                     const std::function<StepTimes(uint32_t)>& step,
                     const std::function<void()>& thread_init) {
    threads = std::max(1u, std::min(threads, copies));
    const int min_repeats = quick ? 2 : 5, max_repeats = quick ? 5 : 40;
    const double budget = quick ? 0.05 : 0.4;
    StepTimes best{1e300, 1e300};
    const double start = now_seconds();
    for (int repeat = 0; repeat < max_repeats; ++repeat) {
        std::vector<StepTimes> sums(threads);
        const auto work = [&](uint32_t t) {
            if (thread_init) thread_init();
            for (uint32_t c = t; c < copies; c += threads) {
                const StepTimes s = step(c);
                sums[t].setup += s.setup;
                sums[t].solve += s.solve;
            }
        };
        if (threads == 1) {
            work(0);
        } else {
            std::vector<std::thread> pool;
            for (uint32_t t = 0; t < threads; ++t)
                pool.emplace_back(work, t);
            for (std::thread& th : pool)
                th.join();
        }
        StepTimes batch;
        for (const StepTimes& s : sums) {
            batch.setup = std::max(batch.setup, s.setup);
            batch.solve = std::max(batch.solve, s.solve);
        }
        best.setup = std::min(best.setup, batch.setup);
        best.solve = std::min(best.solve, batch.solve);
        if (repeat + 1 >= min_repeats && now_seconds() - start > budget) break;
    }
    return best;
}

void print_header() {
    std::printf("peer,engine,variant,scene,copies,sweeps,threads,rows_per_world,row_dofs_per_world,"
                "setup_us_per_batch,solve_us_per_batch,solve_us_per_world,ns_per_row_update,"
                "residual,note\n");
}

void print_result(const Result& r) {
    const double updates = double(r.copies) * r.rows * r.sweeps;
    std::printf("peer,%s,%s,%s,%u,%u,%u,%u,%.0f,%.2f,%.2f,%.3f,%.3f,%.3e,%s\n", r.engine.c_str(),
                r.variant.c_str(), r.scene.c_str(), r.copies, r.sweeps, r.threads, r.rows,
                r.row_dofs, r.batch.setup * 1e6, r.batch.solve * 1e6,
                r.batch.solve * 1e6 / r.copies, updates > 0 ? r.batch.solve * 1e9 / updates : 0.0,
                r.residual, r.note.c_str());
    std::fflush(stdout);
}

void print_skip(const std::string& engine, const std::string& variant, const std::string& scene,
                const std::string& why) {
    std::printf("skip,%s,%s,%s,%s\n", engine.c_str(), variant.c_str(), scene.c_str(), why.c_str());
    std::fflush(stdout);
}

} // namespace peers
