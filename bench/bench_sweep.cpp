// bench_sweep: row updates per second of Steel's general (matrix-free) sweep, its small-world
// dense path, and AUTO classification, through the public C API only.
//
//   bench_sweep [--quick] [--iterations N] [--crossover-only] [--general-only]
//
// The general sweep runs on AVX2 where the processor has it (impl/simd/simd_isa.hpp); the
// environment variable STEEL_SIMD=scalar|avx2|avx512 picks another width, so one binary measures
// every width:
//   STEEL_SIMD=scalar bench_sweep --general-only
//
// Worlds come from scenes::add_random_world with every body L DOFs long and one-body rows, so
// each row holds exactly L values; a world has 4 bodies (n = 4L) and m rows. Each batch holds
// copies of 8 distinct worlds, enough to carry Config::target_values J values (and at least
// Config::min_worlds worlds); it is solved repeatedly with tolerance 0 and a fixed iteration
// count. The time per solve is the best of Config::reps timed loops of at least
// Config::min_seconds each (the paths measured at one point take turns loop by loop), in wall
// time and in process CPU time (the latter leaves out other programs' turns on a shared machine;
// 1-thread comparisons use it).
//
// Row updates = sum over worlds of rows * sweeps (sweeps read back from the world stats). The
// dense path's time includes building A and rhs and the final v = v-hat + Y lambda, because a
// solve includes them; its flops per row update are amortized the same way. Results and their
// discussion: bench/RESULTS.md.
#include "rows_scenes.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds this process has run (all its threads). Unlike wall time it leaves out the time
// other programs had the CPU, which on a shared 2-core machine is most of the noise.
double cpu_seconds() {
    return double(std::clock()) / CLOCKS_PER_SEC;
}

void check(steel_status status, const char* what) {
    if (status == STEEL_OK) return;
    std::fprintf(stderr, "bench_sweep: %s failed: %s (%s)\n", what, steel_status_string(status),
                 steel_last_error_message());
    std::exit(1);
}

struct Config {
    bool quick = false;
    bool crossover_only = false;
    bool general_only = false;
    uint32_t iterations = 20;
    double min_seconds = 0.05; // each timed loop runs at least this long
    int reps = 3;              // timed loops per measurement; the best counts
    uint64_t target_values = 256 * 1024;
    uint32_t min_worlds = 32;
    std::vector<uint32_t> lengths{6, 8, 12, 16, 24, 32, 48, 64};
    std::vector<uint32_t> row_counts{4, 8, 16, 24, 32, 64, 128, 256};
    std::vector<uint32_t> thread_counts{1, 2};
};

const char* path_name(int32_t path) {
    switch (path) {
    case STEEL_PATH_GENERAL:
        return "general";
    case STEEL_PATH_DENSE:
        return "dense";
    case STEEL_PATH_AUTO:
        return "auto";
    default:
        return "?";
    }
}

const char* precision_name(int32_t precision) {
    return precision == STEEL_PRECISION_FLOAT32 ? "f32" : "f64";
}

// ---- machine probes ----------------------------------------------------------------------

// The first line of /proc/loadavg: other work on the machine skews every number here.
std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string line;
    std::getline(in, line);
    return line.empty() ? "unknown" : line;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const size_t colon = line.find(':');
            if (colon != std::string::npos) return line.substr(colon + 2);
        }
    return "unknown";
}

// Core clock in GHz from a chain of dependent integer adds (one cycle each on any x86 core of the
// last 20 years); the loop's own increment and branch run beside the chain. Timed in CPU time,
// best of 3. 0 if not x86-64.
double measure_clock_ghz() {
#if defined(__x86_64__) && defined(__GNUC__)
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const uint64_t loops = 25'000'000;
        uint64_t x = 0;
        const double start = cpu_seconds();
        for (uint64_t i = 0; i < loops; ++i)
            __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                             "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                             : "+r"(x));
        const double seconds = cpu_seconds() - start;
        if (x != 8 * loops) return 0;
        best = std::max(best, double(8 * loops) / seconds * 1e-9);
    }
    return best;
#else
    return 0;
#endif
}

// Nanoseconds per dependent floating-point add: the latency that bounds a dot product summed in
// order (what the compiler must emit without -ffast-math).
template <class Real> double measure_add_latency_ns() {
    volatile Real seed = Real(1e-7);
    const Real y = seed;
    double best = std::numeric_limits<double>::infinity();
    for (int rep = 0; rep < 3; ++rep) {
        const uint64_t loops = 10'000'000;
        Real x = Real(1);
        const double start = cpu_seconds();
        for (uint64_t i = 0; i < loops; ++i) {
            x += y;
            x += y;
            x += y;
            x += y;
        }
        const double seconds = cpu_seconds() - start;
        volatile Real sink = x;
        (void)sink;
        best = std::min(best, seconds / double(4 * loops) * 1e9);
    }
    return best;
}

bool supports_avx2() {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

bool supports_avx512f() {
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

// ---- flop model (see bench/RESULTS.md for the derivation) --------------------------------------

// One general-sweep row update over L values, as impl/general_sweep.hpp and impl/row_update.hpp
// compute it: J.v (2L), + b (1), + c lambda (2), d = J.Y + cfm (1), w / d (1), lambda - w/d (1),
// step = lambda' - lambda (1), v += Y step (2L), |d step| for the residual (1). The non-finite
// probe (0*w + 0*lambda, 4 flops) is bookkeeping and not counted.
double general_row_flops(uint32_t length) {
    return 4.0 * length + 8.0;
}

// One dense-path row update in a world of m rows: rhs + A_i.lambda (2m), then the same scalar
// work as above less J.v and the axpy (7).
double dense_row_flops(uint32_t rows) {
    return 2.0 * rows + 7.0;
}

// Flops of one whole solve of one world (m rows of L values, S sweeps).
double solve_flops(int32_t path, uint32_t length, uint32_t rows, uint32_t sweeps) {
    const double l = length, m = rows, s = sweeps;
    const double velocity = 2.0 * l * m; // v = v-hat + Y lambda, once per solve on both paths
    if (path == STEEL_PATH_DENSE) {
        // A: per column j, column = Y_j (2L), J_i.column for i != j (2L each), column -= Y_j (2L);
        // rhs: J_i.v-hat + b_i (2L + 1) per row.
        const double build = m * (4.0 * l + 2.0 * l * (m - 1.0)) + m * (2.0 * l + 1.0);
        return build + s * m * dense_row_flops(rows) + velocity;
    }
    return velocity + s * m * general_row_flops(length);
}

// ---- worlds and batches ------------------------------------------------------------------

void append(scenes::RowsBuilder& dst, const scenes::RowsBuilder& src) {
    auto cat = [](auto& a, const auto& b) { a.insert(a.end(), b.begin(), b.end()); };
    cat(dst.dof_counts, src.dof_counts);
    cat(dst.row_counts, src.row_counts);
    cat(dst.unconstrained_velocity, src.unconstrained_velocity);
    cat(dst.block_offset, src.block_offset);
    cat(dst.block_length, src.block_length);
    cat(dst.jacobian, src.jacobian);
    cat(dst.response, src.response);
    cat(dst.bias, src.bias);
    cat(dst.lower, src.lower);
    cat(dst.upper, src.upper);
    cat(dst.friction, src.friction);
    cat(dst.regularization, src.regularization);
    cat(dst.initial_impulse, src.initial_impulse);
    cat(dst.kind, src.kind);
    cat(dst.normal_row, src.normal_row);
}

uint32_t worlds_for(const Config& config, uint32_t length, uint32_t rows) {
    const uint64_t per_world = uint64_t(length) * rows;
    const uint64_t worlds = (config.target_values + per_world - 1) / per_world;
    return uint32_t(std::max<uint64_t>(worlds, config.min_worlds));
}

// A batch's rows: `worlds` worlds cycling through 8 distinct random worlds of m rows, 4 bodies of
// L DOFs each, one-body rows (exactly L values per row), mixed row kinds.
scenes::RowsBuilder make_rows(uint32_t length, uint32_t rows, uint32_t worlds) {
    std::mt19937_64 rng(1000003u * length + rows);
    scenes::RandomWorldSpec spec;
    spec.body_count = 4;
    spec.min_body_dofs = length;
    spec.max_body_dofs = length;
    spec.row_count = rows;
    spec.two_body_fraction = 0;
    spec.mixed_kinds = true;
    std::vector<scenes::RowsBuilder> distinct(std::min<uint32_t>(worlds, 8));
    for (scenes::RowsBuilder& one : distinct)
        scenes::add_random_world(one, rng, spec);
    scenes::RowsBuilder all;
    for (uint32_t w = 0; w < worlds; ++w)
        append(all, distinct[w % distinct.size()]);
    return all;
}

class Batch {
  public:
    Batch(int32_t precision, uint32_t threads, const scenes::RowsBuilder& rows) {
        steel_batch_desc desc;
        steel_batch_desc_default(&desc);
        desc.precision = precision;
        desc.thread_count = threads;
        desc.world_count = rows.world_count();
        check(steel_batch_create(STEEL_ABI_VERSION, &desc, &handle_), "steel_batch_create");
        const steel_rows_desc rows_desc = rows.desc();
        check(steel_batch_upload_rows(handle_, &rows_desc), "steel_batch_upload_rows");
        world_count_ = rows.world_count();
    }
    ~Batch() { steel_batch_destroy(handle_); }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

    steel_batch handle() const { return handle_; }
    uint32_t world_count() const { return world_count_; }

  private:
    steel_batch handle_{0};
    uint32_t world_count_ = 0;
};

struct Measurement {
    double seconds_per_solve = 0;       // wall time, best loop
    double cpu_seconds_per_solve = 0;   // process CPU time (all threads), best loop
    double row_updates_per_solve = 0;   // sum over worlds of rows * sweeps
    double flops_per_solve = 0;         // from the model, with the path each world took
    int32_t taken = STEEL_PATH_GENERAL; // path of the worlds (they are all alike)
    uint32_t nonfinite_worlds = 0;
};

void set_path(const Config& config, const Batch& batch, int32_t path) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = config.iterations;
    options.tolerance = 0;
    options.cfm = 0;
    options.path = path;
    options.warm_start = 0;
    check(steel_batch_set_options(batch.handle(), &options), "steel_batch_set_options");
}

// One untimed solve on the path: warms caches and reads back what the timed solves will do.
Measurement prepare(const Config& config, const Batch& batch, int32_t path, uint32_t length,
                    uint32_t rows) {
    set_path(config, batch, path);
    check(steel_batch_solve(batch.handle()), "steel_batch_solve");
    std::vector<steel_world_stats> stats(batch.world_count());
    check(steel_batch_read_world_stats(batch.handle(), sizeof(steel_world_stats), stats.data(),
                                       uint32_t(stats.size()), nullptr),
          "steel_batch_read_world_stats");
    Measurement result;
    result.taken = stats[0].path;
    for (const steel_world_stats& world : stats) {
        result.row_updates_per_solve += double(rows) * world.sweeps;
        result.flops_per_solve += solve_flops(world.path, length, rows, world.sweeps);
        if (world.flags & STEEL_WORLD_NONFINITE) ++result.nonfinite_worlds;
        if (world.path != result.taken) result.taken = -1;
    }
    result.seconds_per_solve = std::numeric_limits<double>::infinity();
    result.cpu_seconds_per_solve = std::numeric_limits<double>::infinity();
    return result;
}

// One timed loop of solves (at least config.min_seconds); keeps the best time per solve.
void timed_loop(const Config& config, const Batch& batch, int32_t path, Measurement& result) {
    set_path(config, batch, path);
    uint64_t solves = 0;
    double elapsed = 0;
    const double cpu_start = cpu_seconds();
    const Clock::time_point start = Clock::now();
    do {
        check(steel_batch_solve(batch.handle()), "steel_batch_solve");
        ++solves;
        elapsed = seconds_since(start);
    } while (elapsed < config.min_seconds);
    const double cpu = cpu_seconds() - cpu_start;
    result.seconds_per_solve = std::min(result.seconds_per_solve, elapsed / double(solves));
    result.cpu_seconds_per_solve = std::min(result.cpu_seconds_per_solve, cpu / double(solves));
}

// ---- the table ---------------------------------------------------------------------------

// Peak flops per cycle per core, assumed from the core design (not measured): the machine's
// (AVX-512 with two 512-bit FMA pipes, as on Zen 5) and what this build's ISA allows. The ISA is
// read from this program's own compile flags, which are the library's (same CMake build).
struct Peaks {
    double clock_ghz = 0;
    double machine(int32_t precision) const {
        return precision == STEEL_PRECISION_FLOAT32 ? 64 : 32;
    }
    double build(int32_t precision) const {
#if defined(__AVX512F__) && defined(__FMA__)
        return machine(precision);
#elif defined(__AVX__) && defined(__FMA__)
        return precision == STEEL_PRECISION_FLOAT32 ? 32 : 16;
#else
        // SSE2, no FMA: two 128-bit multiplies and two 128-bit adds per cycle.
        return precision == STEEL_PRECISION_FLOAT32 ? 16 : 8;
#endif
    }
};

using Key =
    std::tuple<int32_t, uint32_t, uint32_t, uint32_t, int32_t>; // precision, threads, L, m, path

class Bench {
  public:
    Bench(const Config& config, const Peaks& peaks) : config_(config), peaks_(peaks) {}

    void print_header() const {
        std::printf(
            "row,precision,threads,L,m,worlds,path,taken,sweeps,ms_per_solve,Mrow_updates_per_s,"
            "ns_per_row_update,cpu_ns_per_row_update,flops_per_row_update,GFLOP_per_s,pct_build_"
            "peak,"
            "pct_machine_peak\n");
    }

    // Measures the given paths at one point (one batch per precision and thread count).
    void run_point(uint32_t length, uint32_t rows, const std::vector<int32_t>& precisions,
                   const std::vector<uint32_t>& threads, const std::vector<int32_t>& paths) {
        const uint32_t worlds = worlds_for(config_, length, rows);
        const scenes::RowsBuilder built = make_rows(length, rows, worlds);
        for (int32_t precision : precisions)
            for (uint32_t thread_count : threads) {
                const Batch batch(precision, thread_count, built);
                // The paths take turns, loop by loop, so a burst of other work on the machine
                // hits them alike; each keeps its best loop.
                std::vector<Measurement> measured;
                for (int32_t path : paths)
                    measured.push_back(prepare(config_, batch, path, length, rows));
                for (int rep = 0; rep < config_.reps; ++rep)
                    for (size_t p = 0; p < paths.size(); ++p)
                        timed_loop(config_, batch, paths[p], measured[p]);
                for (size_t p = 0; p < paths.size(); ++p) {
                    results_[Key{precision, thread_count, length, rows, paths[p]}] = measured[p];
                    print_row(precision, thread_count, length, rows, worlds, paths[p], measured[p]);
                }
            }
    }

    const Measurement* find(int32_t precision, uint32_t threads, uint32_t length, uint32_t rows,
                            int32_t path) const {
        const auto it = results_.find(Key{precision, threads, length, rows, path});
        return it == results_.end() ? nullptr : &it->second;
    }

    // t_general / t_dense at one point, measuring it if it is not in the table yet. With one
    // thread the times compared are CPU times (the solve runs on the calling thread alone, and CPU
    // time leaves out other programs' turns on the core); with more, wall times.
    double dense_speedup(int32_t precision, uint32_t threads, uint32_t length, uint32_t rows) {
        if (!find(precision, threads, length, rows, STEEL_PATH_GENERAL) ||
            !find(precision, threads, length, rows, STEEL_PATH_DENSE))
            run_point(length, rows, {precision}, {threads}, {STEEL_PATH_GENERAL, STEEL_PATH_DENSE});
        const Measurement* general = find(precision, threads, length, rows, STEEL_PATH_GENERAL);
        const Measurement* dense = find(precision, threads, length, rows, STEEL_PATH_DENSE);
        return threads == 1 ? general->cpu_seconds_per_solve / dense->cpu_seconds_per_solve
                            : general->seconds_per_solve / dense->seconds_per_solve;
    }

  private:
    void print_row(int32_t precision, uint32_t threads, uint32_t length, uint32_t rows,
                   uint32_t worlds, int32_t path, const Measurement& m) const {
        const double rate = m.row_updates_per_solve / m.seconds_per_solve;
        const double gflops = m.flops_per_solve / m.seconds_per_solve * 1e-9;
        const double build_peak = peaks_.clock_ghz * peaks_.build(precision) * threads;
        const double machine_peak = peaks_.clock_ghz * peaks_.machine(precision) * threads;
        std::printf("row,%s,%u,%u,%u,%u,%s,%s,%u,%.3f,%.2f,%.2f,%.2f,%.1f,%.3f,%.2f,%.2f\n",
                    precision_name(precision), threads, length, rows, worlds, path_name(path),
                    m.taken < 0 ? "mixed" : path_name(m.taken), config_.iterations,
                    m.seconds_per_solve * 1e3, rate * 1e-6, 1e9 / rate,
                    m.cpu_seconds_per_solve * 1e9 / m.row_updates_per_solve,
                    m.flops_per_solve / m.row_updates_per_solve, gflops,
                    build_peak > 0 ? 100 * gflops / build_peak : 0.0,
                    machine_peak > 0 ? 100 * gflops / machine_peak : 0.0);
        if (m.nonfinite_worlds)
            std::printf("# warning: %u worlds flagged non-finite at the point above\n",
                        m.nonfinite_worlds);
        std::fflush(stdout);
    }

    const Config& config_;
    const Peaks& peaks_;
    std::map<Key, Measurement> results_;
};

// For one precision, thread count and L: the smallest m at which the dense path (setup included)
// no longer beats the general sweep. Scans the grid upward, then bisects between the last grid
// m where dense won and the first where it lost. Returns 0 if dense never loses up to the grid's
// end; *last_win is the largest m measured where dense won (0 if none).
uint32_t find_crossover(Bench& bench, const Config& config, int32_t precision, uint32_t threads,
                        uint32_t length, bool bisect, uint32_t* last_win) {
    uint32_t lo = 0, hi = 0;
    for (uint32_t rows : config.row_counts) {
        if (bench.dense_speedup(precision, threads, length, rows) > 1.0) {
            lo = rows;
        } else {
            hi = rows;
            break;
        }
    }
    if (bisect && hi != 0) {
        uint32_t from = lo == 0 ? 1 : lo;
        while (hi - from > 1) {
            const uint32_t mid = from + (hi - from) / 2;
            if (bench.dense_speedup(precision, threads, length, mid) > 1.0) {
                from = lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    *last_win = lo;
    return hi;
}

// A comma-separated list of counts from 1 to 4096 ("8,9,10"), for --lengths and --rows.
bool parse_counts(const char* text, std::vector<uint32_t>* out) {
    out->clear();
    for (const char* at = text;;) {
        char* end = nullptr;
        const long value = std::strtol(at, &end, 10);
        if (end == at || value < 1 || value > 4096) return false;
        out->push_back(uint32_t(value));
        if (*end == '\0') return true;
        if (*end != ',') return false;
        at = end + 1;
    }
}

void usage() {
    std::fprintf(
        stderr,
        "usage: bench_sweep [--quick] [--iterations N] [--crossover-only] [--general-only]\n"
        "  (no option)       full grid, 1 and 2 threads, then the crossover (about 3 minutes on 2 "
        "cores)\n"
        "  --quick           small grid, one short timed loop per point (well under a minute)\n"
        "  --iterations N    sweeps per solve (tolerance 0), default 20\n"
        "  --crossover-only  only the dense/general crossover search (1 thread)\n"
        "  --general-only    only the general sweep, 1 thread, m = 16, 64, 256, best of 5 loops,\n"
        "                    and its median over m per L (about 20 s; compare SIMD widths with\n"
        "                    STEEL_SIMD=scalar|avx2|avx512)\n"
        "  --lengths LIST    values per row L, comma-separated (instead of the mode's grid)\n"
        "  --rows LIST       rows per world m, ascending, comma-separated (instead of the grid)\n");
}

} // namespace

int main(int argc, char** argv) {
    Config config;
    std::vector<uint32_t> lengths, row_counts; // from --lengths and --rows, if given
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            config.quick = true;
        } else if (std::strcmp(argv[i], "--crossover-only") == 0) {
            config.crossover_only = true;
        } else if (std::strcmp(argv[i], "--general-only") == 0) {
            config.general_only = true;
        } else if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            const long value = std::strtol(argv[++i], nullptr, 10);
            if (value < 1 || value > 100000) {
                usage();
                return 2;
            }
            config.iterations = uint32_t(value);
        } else if (std::strcmp(argv[i], "--lengths") == 0 && i + 1 < argc) {
            if (!parse_counts(argv[++i], &lengths)) {
                usage();
                return 2;
            }
        } else if (std::strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
            if (!parse_counts(argv[++i], &row_counts) ||
                !std::is_sorted(row_counts.begin(), row_counts.end())) {
                usage();
                return 2;
            }
        } else {
            usage();
            return 2;
        }
    }
    if (config.general_only) {
        config.reps = 5;
        config.row_counts = {16, 64, 256};
        config.thread_counts = {1};
    }
    if (config.quick) {
        config.min_seconds = 0.02;
        config.reps = 1;
        config.target_values = 64 * 1024;
        config.min_worlds = 16;
        config.lengths = {6, 16, 64};
        config.row_counts = {4, 16, 64, 256};
    }
    if (!lengths.empty()) config.lengths = lengths;
    if (!row_counts.empty()) config.row_counts = row_counts;

    const Clock::time_point start = Clock::now();
    Peaks peaks;
    peaks.clock_ghz = measure_clock_ghz();
    const double add_f64 = measure_add_latency_ns<double>();
    const double add_f32 = measure_add_latency_ns<float>();

    std::printf("# bench_sweep: Steel %s, mode %s%s, %u sweeps per solve (tolerance 0)\n",
                steel_version(), config.quick ? "quick" : "full",
                config.crossover_only ? " (crossover only)"
                : config.general_only ? " (general only)"
                                      : "",
                config.iterations);
    const char* simd = std::getenv("STEEL_SIMD");
    std::printf("# SIMD: STEEL_SIMD=%s; processor has avx2 %s, avx512f %s (the general sweep runs "
                "on AVX2 where the processor has it, unless STEEL_SIMD picks another width)\n",
                simd ? simd : "(unset)", supports_avx2() ? "yes" : "no",
                supports_avx512f() ? "yes" : "no");
    std::printf("# cpu: %s, %u hardware threads; /proc/loadavg at start: %s\n", cpu_model().c_str(),
                std::thread::hardware_concurrency(), load_average().c_str());
    std::printf("# compiler: %s%s%s\n",
#if defined(__clang__)
                "clang ",
#else
                "gcc ",
#endif
                __VERSION__,
#if defined(__AVX512F__)
                ", ISA AVX-512"
#elif defined(__AVX2__)
                ", ISA AVX2"
#elif defined(__AVX__)
                ", ISA AVX"
#else
                ", ISA baseline x86-64 (SSE2, no FMA)"
#endif
    );
    std::printf(
        "# measured clock: %.2f GHz (dependent integer adds); dependent add latency: f64 %.3f ns "
        "(%.2f cycles), f32 %.3f ns (%.2f cycles)\n",
        peaks.clock_ghz, add_f64, add_f64 * peaks.clock_ghz, add_f32, add_f32 * peaks.clock_ghz);
    std::printf("# peak per core at that clock: build ISA %.1f (f64) / %.1f (f32) GFLOP/s; machine "
                "(AVX-512, 2 FMA pipes, assumed) %.1f / %.1f GFLOP/s\n",
                peaks.clock_ghz * peaks.build(STEEL_PRECISION_FLOAT64),
                peaks.clock_ghz * peaks.build(STEEL_PRECISION_FLOAT32),
                peaks.clock_ghz * peaks.machine(STEEL_PRECISION_FLOAT64),
                peaks.clock_ghz * peaks.machine(STEEL_PRECISION_FLOAT32));
    std::printf("# batch: >= %llu J values and >= %u worlds; best of %d timed loops of >= %.0f ms; "
                "dense times include building A\n",
                static_cast<unsigned long long>(config.target_values), config.min_worlds,
                config.reps, config.min_seconds * 1e3);

    Bench bench(config, peaks);
    bench.print_header();
    const std::vector<int32_t> precisions{STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64};

    if (config.general_only) {
        for (uint32_t length : config.lengths)
            for (uint32_t rows : config.row_counts)
                bench.run_point(length, rows, precisions, {1}, {STEEL_PATH_GENERAL});
        // The headline figure of bench/RESULTS.md: CPU ns per row update, median over m.
        std::printf("\n# general sweep, 1 thread, CPU time: median over m of ns per row update\n"
                    "median,precision,L,cpu_ns_per_row_update,Mrow_updates_per_cpu_s\n");
        for (int32_t precision : precisions)
            for (uint32_t length : config.lengths) {
                std::vector<double> ns;
                for (uint32_t rows : config.row_counts) {
                    const Measurement* m =
                        bench.find(precision, 1, length, rows, STEEL_PATH_GENERAL);
                    ns.push_back(m->cpu_seconds_per_solve * 1e9 / m->row_updates_per_solve);
                }
                std::sort(ns.begin(), ns.end());
                const double median = ns[ns.size() / 2];
                std::printf("median,%s,%u,%.2f,%.1f\n", precision_name(precision), length, median,
                            1e3 / median);
            }
        std::printf("# total time %.1f s; /proc/loadavg at end: %s\n", seconds_since(start),
                    load_average().c_str());
        return 0;
    }

    if (!config.crossover_only) {
        for (uint32_t length : config.lengths)
            for (uint32_t rows : config.row_counts)
                bench.run_point(length, rows, precisions, config.thread_counts,
                                {STEEL_PATH_GENERAL, STEEL_PATH_DENSE, STEEL_PATH_AUTO});

        // Speedup of the dense path over the general sweep (t_general / t_dense; > 1: dense wins).
        for (int32_t precision : precisions)
            for (uint32_t threads : config.thread_counts) {
                std::printf(
                    "\n# dense speedup t_general/t_dense (%s time), %s, %u thread(s); columns m\n"
                    "speedup,L",
                    threads == 1 ? "CPU" : "wall", precision_name(precision), threads);
                for (uint32_t rows : config.row_counts)
                    std::printf(",%u", rows);
                std::printf("\n");
                for (uint32_t length : config.lengths) {
                    std::printf("speedup,%u", length);
                    for (uint32_t rows : config.row_counts)
                        std::printf(",%.2f", bench.dense_speedup(precision, threads, length, rows));
                    std::printf("\n");
                }
            }
    }

    // Crossover: 1 thread bisected to the exact m; 2 threads on the grid only (full table).
    std::printf("\n# crossover: dense (setup included) stops beating general at m = first_loss; "
                "last_win = largest m measured where dense still won\n");
    std::vector<std::tuple<int32_t, uint32_t, uint32_t, uint32_t, uint32_t>> crossovers;
    for (int32_t precision : precisions)
        for (uint32_t threads : config.thread_counts) {
            if (threads != 1 && config.crossover_only) continue;
            for (uint32_t length : config.lengths) {
                uint32_t last_win = 0;
                const uint32_t first_loss = find_crossover(bench, config, precision, threads,
                                                           length, threads == 1, &last_win);
                crossovers.emplace_back(precision, threads, length, last_win, first_loss);
            }
        }
    std::printf("crossover,precision,threads,L,search,last_win,first_loss\n");
    for (const auto& [precision, threads, length, last_win, first_loss] : crossovers) {
        std::printf("crossover,%s,%u,%u,%s,%u,", precision_name(precision), threads, length,
                    threads == 1 ? "bisected" : "grid", last_win);
        if (first_loss)
            std::printf("%u\n", first_loss);
        else
            std::printf(">%u\n", config.row_counts.back());
    }
    std::printf("# total time %.1f s; /proc/loadavg at end: %s\n", seconds_since(start),
                load_average().c_str());
    return 0;
}
