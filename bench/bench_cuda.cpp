// bench_cuda: the CUDA backend beside the CPU backend on the same batches of many copies of one
// world (docs/cuda.md, bench/RESULTS.md "bench_cuda").
//
//   bench_cuda [--quick] [--iterations N] [--min-copies N] [--max-copies N] [--copies N,N,...]
//              [--pile N] [--only WORLD] [--gpu-only]
//
// Worlds (one template world, copied):
//   stack8  the 1D stack of rows_scenes.hpp (add_stack_world, height 8): n = m = 8, 1 value a row,
//           uploaded as rows;
//   arm     robot_scenes.hpp add_arm_with_box(friction 0.8, squeeze 20), a scene upload;
//   legged  add_legged_robot, a scene upload;
//   pileN   add_box_pile(N) (N = 8 unless --pile), a scene upload.
// Scene uploads build the rows on the host (box friction). These four solve SERIAL with the
// default immediate response, and again on the GPU alone as stack8/lb, arm/lb, legged/lb and
// pileN/lb with the general sweep built under __launch_bounds__(128, 4)
// (STEEL_CUDA_GENERAL_KERNEL=bounded). Three more solve under the propagation response (SPEC 7),
// the kernels of impl/cuda/propagation_kernel.cuh:
//   legged/p  the legged robot, serial sweeps through its tree, one thread per world (the
//             default layout of the serial sweeps, STEEL_CUDA_SERIAL_LAYOUT=thread);
//   legged/pw the same on the GPU alone, one warp per world (STEEL_CUDA_SERIAL_LAYOUT=warp);
//   pileN/c   the pile, colored sweeps (free bodies: the warp's lanes share each color);
// and legged/pw/lb and pileN/c/lb, those two on the GPU alone with the warp-per-world kernel
// built under __launch_bounds__(128, 4) (STEEL_CUDA_PROPAGATION_KERNEL=bounded).
// Every solve: path AUTO, warm start on (the default), tolerance 0, N sweeps (20).
// Copies: 1,024, 16,384 and 65,536 of each world (--max-copies leaves out the bigger ones,
// --min-copies the smaller; --quick stops /c at 16,384; --copies replaces the three counts, to
// find where two kernels cross over). --gpu-only leaves out the CPU backend
// (for a profiler run: scripts/gpu_check.sh).
//
// Per (world, copies, where, precision): ms per solve, worlds x sweeps per second, row updates
// per second (row updates = sum over worlds of rows x sweeps run) and ns per row update; the
// batch's upload time, and its first (untimed) solve's, which for the propagation response
// includes building the propagation set and colors on the host (and mirroring them). The CPU
// backend runs on every core in float32 only (its float64 costs about the same per row and the
// big batches are slow there). The GPU runs float32 and float64, timed two ways: "sync" is
// steel_batch_solve (launch, wait, copy the results back to the host); "async" is
// steel_batch_solve_async repeated back to back on one stream, then one wait: the device's own
// throughput, results left on the device.
//
// GPU rows of the immediate response also give an effective bandwidth: modeled bytes per solve /
// time, and its fraction of the bandwidth a large device-to-device cudaMemcpy reaches on the same
// GPU (printed at the top beside the peak the device reports, 2 x memory clock x bus width). The
// model (traffic() below) counts the global-memory bytes the kernels touch, each byte once per pass
// that needs it (a sweep, or a once-per-solve step): the traffic this kernel design issues, not a
// measurement and not the DRAM minimum. Caches serve part of it (a world's rows are read again
// every sweep, and a small batch fits in the L2), so a fraction above 1 is possible and means the
// caches did. The propagation kernel has no byte model: its bandwidth columns read "-".
//
// Without a device (or in a build without the backend) the GPU lines say "not yet measured" and
// why; nothing is estimated.
#include "bench_support.hpp"
#include "cuda_device.hpp"
#include "robot_scenes.hpp"
#include "rows_scenes.hpp"
#include "snapshot/snapshot.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

using bench::check;
using bench::seconds_since;

namespace {

using Clock = std::chrono::steady_clock;

// One world's upload: rows (the stack) or a scene.
struct World {
    std::string name;
    std::function<void(scenes::RowsBuilder&)> add_rows;   // set for a rows world
    std::function<void(scenes::SceneBuilder&)> add_scene; // set for a scene world
    int32_t response = STEEL_RESPONSE_IMMEDIATE;
    int32_t solve_mode = STEEL_SOLVE_SERIAL;
    // The kernel builds picked while its batches are made (docs/cuda.md): each a variable and
    // its value; none for the defaults.
    std::vector<std::pair<const char*, const char*>> kernels = {};
    bool on_cpu = true; // false: another GPU build of a world the CPU already ran
    bool modeled() const { return response == STEEL_RESPONSE_IMMEDIATE; } // traffic() applies
};

// A batch of `copies` of one world, ready to upload into any number of batches.
struct Upload {
    scenes::RowsBuilder rows;
    scenes::SceneBuilder scene;
    bool is_scene = false;
    uint32_t copies = 0;
    int32_t response = STEEL_RESPONSE_IMMEDIATE, solve_mode = STEEL_SOLVE_SERIAL;

    Upload(const World& world, uint32_t count)
        : is_scene(bool(world.add_scene)), copies(count), response(world.response),
          solve_mode(world.solve_mode) {
        for (uint32_t c = 0; c < count; ++c)
            if (is_scene) {
                scene.begin_world();
                world.add_scene(scene);
            } else {
                world.add_rows(rows);
            }
    }

    void into(steel_batch batch) const {
        if (is_scene) {
            const steel_scene_desc desc = scene.desc();
            check(steel_batch_upload_scene(batch, &desc), "upload_scene");
        } else {
            const steel_rows_desc desc = rows.desc();
            check(steel_batch_upload_rows(batch, &desc), "upload_rows");
        }
    }
};

// What the traffic model needs of one world's rows, read back from a snapshot of a one-copy
// batch (the rows a scene upload built are not visible through the C API otherwise).
struct Shape {
    uint32_t dofs = 0, rows = 0;
    uint64_t values = 0;     // J values (and as many Y values) over the world's rows
    uint32_t cone_pairs = 0; // FRICTION_CONE pairs (0 here: every scene uses box friction)
    int32_t path = 0;        // what AUTO chose for it
};

steel_solve_options solve_options(const Upload& upload, uint32_t iterations) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = iterations;
    options.tolerance = 0;
    options.articulated_contact_response = upload.response;
    options.solve_mode = upload.solve_mode;
    return options;
}

// Creates a batch and uploads into it; the null handle, the status and why if the backend
// refuses (NO_DEVICE, or UNSUPPORTED in a build without CUDA).
steel_batch make_batch(const Upload& upload, int32_t backend, int32_t precision,
                       uint32_t iterations, std::string& why, steel_status* refused = nullptr) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.backend = backend;
    desc.precision = precision;
    desc.world_count = upload.copies;
    desc.thread_count = 0; // every core for the CPU
    steel_batch batch{};
    if (const steel_status status = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
        status != STEEL_OK) {
        if (backend == STEEL_BACKEND_CPU) check(status, "create");
        why = steel_last_error_message();
        if (refused) *refused = status;
        return steel_batch{};
    }
    const steel_solve_options options = solve_options(upload, iterations);
    check(steel_batch_set_options(batch, &options), "set_options");
    upload.into(batch);
    return batch;
}

std::vector<steel_world_stats> world_stats(steel_batch batch, uint32_t worlds) {
    std::vector<steel_world_stats> stats(worlds);
    uint32_t count = 0;
    check(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(), worlds,
                                       &count),
          "read_world_stats");
    return stats;
}

Shape shape_of(const World& world, uint32_t iterations) {
    const Upload one(world, 1);
    std::string why;
    const steel_batch batch =
        make_batch(one, STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64, iterations, why);
    check(steel_batch_solve(batch), "solve");
    uint64_t size = 0;
    check(steel_batch_save_memory(batch, nullptr, 0, &size), "save_memory");
    std::vector<unsigned char> bytes(size);
    check(steel_batch_save_memory(batch, bytes.data(), size, &size), "save_memory");
    const steel::snapshot::Snapshot snapshot = steel::snapshot::decode(bytes.data(), size, "shape");
    Shape shape;
    shape.dofs = snapshot.rows.world_dof_counts.at(0);
    shape.rows = snapshot.rows.world_row_counts.at(0);
    shape.values = snapshot.rows.jacobian.size();
    for (uint32_t i = 0; i + 1 < shape.rows; ++i)
        if (snapshot.rows.kind[i] == STEEL_ROW_FRICTION_CONE) {
            ++shape.cone_pairs;
            ++i;
        }
    shape.path = world_stats(batch, 1)[0].path;
    check(steel_batch_destroy(batch), "destroy");
    return shape;
}

// The traffic model: global-memory bytes one world's solve touches, each byte once per pass that
// needs it (impl/cuda/general_kernel.cuh, dense_kernel.cuh, classify_kernel.cuh as written).
// R = sizeof(Real), L_i = values of row i, n = DOFs, m = rows.
//
// General path (one warp per world, v in shared memory), per sweep, per row:
//   J_i and Y_i                                              2 L_i R
//   kind, normal_row (int32), value_offset (uint64), block_offset[2], block_length[2] (uint32)
//                                                            32 B
//   bias, J.Y, lower, upper, friction, regularization       6 R
//   its impulse, read and written (impulses stay in global memory)   2 R
//   per FRICTION_CONE pair also its two cross terms          2 R
// Per solve: v = v-hat + Y lambda once at the start (Y again, L_i R a row, with its 24 B of block
// metadata); v-hat, the warm-start impulses, the first impulse write and the final v write
// (m + n reads, m + n writes); the non-finite check reads impulses and v again (m + n); per
// world 96 B of offsets, paths and statistics.
//
// Dense path (A in shared memory; for completeness, none of these worlds takes it under AUTO):
// per solve J and Y of every row once to build A (2 L_i R + 32 B), J again with v-hat for the
// right-hand side (L_i R + n R), then v = v-hat + Y lambda (L_i R + 24 B a row, n R + n R), the
// warm start and the impulses (2 m R) and the non-finite check ((m + n) R); per sweep per row the
// row constants update_rows reads from global memory: kind and normal_row (8 B), J.Y, lower,
// upper, friction, regularization (5 R), and 2 R per cone pair.
//
// Not counted: v when it does not fit in shared memory (not for these worlds: n <= 48 here), the
// momentum scratch (momentum off), launch overhead, and the copy back to the host (sync only).
double traffic(const Shape& s, uint32_t sweeps, double real) {
    const double m = s.rows, n = s.dofs, values = double(s.values), pairs = s.cone_pairs;
    if (s.path == STEEL_PATH_DENSE) {
        const double per_sweep = m * (8 + 5 * real) + pairs * 2 * real;
        const double per_solve =
            values * real * 4 + m * (32 + 24) + n * real * 3 + m * real * 2 + (m + n) * real + 96;
        return sweeps * per_sweep + per_solve;
    }
    const double per_sweep = values * 2 * real + m * (32 + 8 * real) + pairs * 2 * real;
    const double per_solve = values * real + m * 24 + 3 * (m + n) * real + 96;
    return sweeps * per_sweep + per_solve;
}

struct Timing {
    double seconds = 0;     // per solve
    double row_updates = 0; // per solve
    double sweeps = 0;      // per world per solve (every world runs them all: tolerance 0)
};

// Seconds per call of `solve`, best of `loops` loops of at least min_seconds each (a loop runs
// `solve` at least once).
template <class Solve> double time_loops(Solve&& solve, double min_seconds, int loops) {
    double best = 1e300;
    for (int loop = 0; loop < loops; ++loop) {
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

void fill_counts(Timing& t, steel_batch batch, const Upload& upload, const Shape& shape) {
    const std::vector<steel_world_stats> stats = world_stats(batch, upload.copies);
    double sweeps = 0;
    for (const steel_world_stats& s : stats)
        sweeps += s.sweeps;
    t.row_updates = sweeps * shape.rows;
    t.sweeps = sweeps / upload.copies;
}

void print_header_row() {
    std::printf("%-12s %6s  %-5s %-7s %-5s  %10s  %15s  %15s  %8s  %9s  %7s  %8s  %8s\n", "world",
                "copies", "where", "real", "mode", "ms/solve", "worlds*sweeps/s", "row updates/s",
                "ns/row", "GB/s", "of copy", "upload s", "first s");
}

void print_row(const std::string& world, uint32_t copies, const char* where, const char* real,
               const char* mode, const Timing& t, double bytes_per_solve, double copy_gbs,
               double upload_seconds, double first_seconds) {
    char bandwidth[64] = "        -         -";
    if (bytes_per_solve > 0) {
        const double gbs = bytes_per_solve / t.seconds / 1e9;
        if (copy_gbs > 0)
            std::snprintf(bandwidth, sizeof bandwidth, "%9.1f  %6.1f%%", gbs, 100 * gbs / copy_gbs);
        else
            std::snprintf(bandwidth, sizeof bandwidth, "%9.1f        -", gbs);
    }
    char upload[32] = "       -", first[32] = "       -";
    if (upload_seconds > 0) std::snprintf(upload, sizeof upload, "%8.2f", upload_seconds);
    if (first_seconds > 0) std::snprintf(first, sizeof first, "%8.2f", first_seconds);
    std::printf("%-12s %6u  %-5s %-7s %-5s  %10.3f  %15.4g  %15.4g  %8.3f  %s  %s  %s\n",
                world.c_str(), copies, where, real, mode, 1e3 * t.seconds,
                copies * t.sweeps / t.seconds, t.row_updates / t.seconds,
                1e9 * t.seconds / t.row_updates, bandwidth, upload, first);
}

std::string load_average() {
    std::ifstream file("/proc/loadavg");
    std::string line;
    std::getline(file, line);
    return line.empty() ? "unknown" : line;
}

std::string cuda_version(int version) {
    if (version <= 0) return "none";
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// "N,N,...": the batch sizes of --copies, each from 1 to 2^20.
bool parse_copies(const char* text, std::vector<uint32_t>& counts) {
    std::vector<uint32_t> parsed;
    for (const char* at = text;;) {
        char* end = nullptr;
        const unsigned long count = std::strtoul(at, &end, 10);
        if (end == at || count == 0 || count > (1u << 20)) return false;
        parsed.push_back(uint32_t(count));
        if (*end == '\0') break;
        if (*end != ',') return false;
        at = end + 1;
    }
    counts = parsed;
    return true;
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false, gpu_only = false;
    uint32_t iterations = 20, min_copies = 0, max_copies = 65536, pile = 8;
    std::string only; // one world's name, or all
    std::vector<uint32_t> counts{1024u, 16384u, 65536u};
    for (int k = 1; k < argc; ++k) {
        const bool has_value = k + 1 < argc;
        if (std::strcmp(argv[k], "--quick") == 0)
            quick = true;
        else if (std::strcmp(argv[k], "--iterations") == 0 && has_value)
            iterations = uint32_t(std::atoi(argv[++k]));
        else if (std::strcmp(argv[k], "--min-copies") == 0 && has_value)
            min_copies = uint32_t(std::atoi(argv[++k]));
        else if (std::strcmp(argv[k], "--max-copies") == 0 && has_value)
            max_copies = uint32_t(std::atoi(argv[++k]));
        else if (std::strcmp(argv[k], "--gpu-only") == 0)
            gpu_only = true;
        else if (std::strcmp(argv[k], "--pile") == 0 && has_value)
            pile = uint32_t(std::atoi(argv[++k]));
        else if (std::strcmp(argv[k], "--only") == 0 && has_value)
            only = argv[++k];
        else if (std::strcmp(argv[k], "--copies") == 0 && has_value) {
            if (!parse_copies(argv[++k], counts)) {
                std::fprintf(stderr,
                             "bench_cuda: --copies takes counts from 1 to 1048576 "
                             "separated by commas, not \"%s\"\n",
                             argv[k]);
                return 2;
            }
        } else {
            std::fprintf(stderr, "usage: bench_cuda [--quick] [--iterations N] [--min-copies N] "
                                 "[--max-copies N] [--copies N,N,...] [--pile N] [--only WORLD] "
                                 "[--gpu-only]\n");
            return 2;
        }
    }
    if (iterations == 0 || pile == 0) {
        std::fprintf(stderr, "bench_cuda: --iterations and --pile must be >= 1\n");
        return 2;
    }
    // A loop runs for at least min_seconds; best of 3 loops, or 1 loop when one solve takes
    // longer than min_seconds (the big CPU batches).
    const double min_seconds = quick ? 0.05 : 0.2;
    const Clock::time_point started = Clock::now();

    steel_batch_desc probe_desc;
    steel_batch_desc_default(&probe_desc);
    probe_desc.thread_count = 0;
    steel_batch probe{};
    check(steel_batch_create(STEEL_ABI_VERSION, &probe_desc, &probe), "create");
    check(steel_batch_get_desc(probe, &probe_desc), "get_desc");
    check(steel_batch_destroy(probe), "destroy");

    std::printf("bench_cuda: steel %s, %u sweeps per solve, path AUTO, tolerance 0, warm start; "
                "SERIAL with the immediate response, except /p (propagation, SERIAL) and /c "
                "(propagation, COLORED); %s\n",
                steel_version(), iterations, quick ? "--quick" : "full");
    std::printf("cpu: %u threads (thread_count 0), float32; /proc/loadavg at start: %s\n",
                probe_desc.thread_count, load_average().c_str());
    const bench::CudaDevice gpu = bench::query_cuda_device();
    if (gpu.present) {
        std::printf("gpu: %s (compute capability %d.%d, %d SMs, %.1f GiB, L2 %.0f MiB); driver %s, "
                    "runtime %s\n",
                    gpu.name.c_str(), gpu.major, gpu.minor, gpu.multiprocessors, gpu.memory_gib,
                    gpu.l2_mib, cuda_version(gpu.driver_version).c_str(),
                    cuda_version(gpu.runtime_version).c_str());
        std::printf("gpu memory bandwidth: %.0f GB/s reported peak (2 x memory clock x bus width); "
                    "%.0f GB/s measured (device-to-device cudaMemcpy of %.0f MiB, read + write, "
                    "best of 10)%s\n",
                    gpu.spec_gbs, gpu.copy_gbs, gpu.copy_bytes / double(1u << 20),
                    gpu.why_not.empty() ? "" : (" [" + gpu.why_not + "]").c_str());
        std::printf("\"of copy\" = modeled GB/s / the measured copy's GB/s\n");
    } else {
        std::printf("gpu: none: %s; driver %s, runtime %s\n", gpu.why_not.c_str(),
                    cuda_version(gpu.driver_version).c_str(),
                    cuda_version(gpu.runtime_version).c_str());
    }

    const std::string pile_name = "pile" + std::to_string(pile);
    const auto stack = [](scenes::RowsBuilder& b) {
        scenes::StackSpec spec;
        spec.height = 8;
        scenes::add_stack_world(b, spec);
    };
    const auto arm = [](scenes::SceneBuilder& b) { scenes::add_arm_with_box(b, 0.8, 20); };
    const auto legged = [](scenes::SceneBuilder& b) { scenes::add_legged_robot(b); };
    const auto box_pile = [pile](scenes::SceneBuilder& b) { scenes::add_box_pile(b, pile); };
    // Each line names its build: the default differs by precision (docs/cuda.md).
    const std::pair<const char*, const char*> plain_general{"STEEL_CUDA_GENERAL_KERNEL", "plain"},
        bounded_general{"STEEL_CUDA_GENERAL_KERNEL", "bounded"},
        bounded_propagation{"STEEL_CUDA_PROPAGATION_KERNEL", "bounded"},
        thread_layout{"STEEL_CUDA_SERIAL_LAYOUT", "thread"},
        warp_layout{"STEEL_CUDA_SERIAL_LAYOUT", "warp"};
    const int32_t immediate = STEEL_RESPONSE_IMMEDIATE, propagation = STEEL_RESPONSE_PROPAGATION;
    const int32_t serial = STEEL_SOLVE_SERIAL, colored = STEEL_SOLVE_COLORED;
    const decltype(World::kernels) warp_bounded{warp_layout, bounded_propagation},
        bounded{bounded_propagation};
    const World worlds[] = {
        {"stack8", stack, nullptr, immediate, serial, {plain_general}},
        {"stack8/lb", stack, nullptr, immediate, serial, {bounded_general}, false},
        {"arm", nullptr, arm, immediate, serial, {plain_general}},
        {"arm/lb", nullptr, arm, immediate, serial, {bounded_general}, false},
        {"legged", nullptr, legged, immediate, serial, {plain_general}},
        {"legged/lb", nullptr, legged, immediate, serial, {bounded_general}, false},
        {pile_name, nullptr, box_pile, immediate, serial, {plain_general}},
        {pile_name + "/lb", nullptr, box_pile, immediate, serial, {bounded_general}, false},
        {"legged/p", nullptr, legged, propagation, serial, {thread_layout}},
        {"legged/pw", nullptr, legged, propagation, serial, {warp_layout}, false},
        {"legged/pw/lb", nullptr, legged, propagation, serial, warp_bounded, false},
        {pile_name + "/c", nullptr, box_pile, propagation, colored},
        {pile_name + "/c/lb", nullptr, box_pile, propagation, colored, bounded, false},
    };

    std::printf(
        "\nper world: DOFs, rows, J values (as many Y values), the path AUTO takes, and the "
        "modeled bytes of one solve (%u sweeps) and of one pass over the world's data\n",
        iterations);
    std::printf("%-12s  %4s  %4s  %8s  %-7s  %11s  %11s  %11s  %11s\n", "world", "DOFs", "rows",
                "J values", "path", "solve f32", "solve f64", "1 pass f32", "1 pass f64");
    std::vector<Shape> shapes;
    for (const World& world : worlds) {
        shapes.push_back(shape_of(world, iterations));
        const Shape& s = shapes.back();
        std::printf("%-12s  %4u  %4u  %8llu  %-7s", world.name.c_str(), s.dofs, s.rows,
                    (unsigned long long)s.values, s.path == STEEL_PATH_DENSE ? "dense" : "general");
        if (world.modeled())
            std::printf("  %11.0f  %11.0f  %11.0f  %11.0f\n", traffic(s, iterations, 4),
                        traffic(s, iterations, 8), traffic(s, 1, 4), traffic(s, 1, 8));
        else
            std::printf("  %11s  %11s  %11s  %11s\n", "-", "-", "-", "-");
    }
    std::printf("\n");
    print_header_row();

    struct Target {
        const char* where;
        int32_t backend, precision;
    };
    const Target targets[] = {{"cpu", STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT32},
                              {"gpu", STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT32},
                              {"gpu", STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64}};
    std::string no_device;
    for (size_t w = 0; w < std::size(worlds); ++w)
        for (uint32_t copies : counts) {
            const World& world = worlds[w];
            if (copies < min_copies || copies > max_copies || (!only.empty() && world.name != only))
                continue;
            // --quick (the device check) stops the colored pile at 16,384 copies: at 65,536 its
            // uploads and first solves build on the host for tens of seconds. The legged robot's
            // serial propagation runs on (a few seconds of host time on 2 cores): 65,536 worlds
            // is where its two GPU layouts differ most.
            if (quick && world.solve_mode == STEEL_SOLVE_COLORED && copies > 16384) continue;
            const Shape& shape = shapes[w];
            Clock::time_point setup = Clock::now();
            const Upload upload(world, copies);
            const double build_seconds = seconds_since(setup);
            setup = Clock::now();

            // The three batches are uploaded one after the other, each on every core (a scene
            // upload builds its worlds on the batch's threads); then each is timed alone.
            struct Made {
                steel_batch batch{};
                std::string why;
                steel_status refused = STEEL_OK;
                double upload_seconds = 0;
            } made[std::size(targets)];
            for (const auto& [variable, value] : world.kernels)
                setenv(variable, value, 1);
            for (size_t k = 0; k < std::size(targets); ++k) {
                if (targets[k].backend == STEEL_BACKEND_CPU && !(world.on_cpu && !gpu_only))
                    continue;
                const Clock::time_point start = Clock::now();
                made[k].batch = make_batch(upload, targets[k].backend, targets[k].precision,
                                           iterations, made[k].why, &made[k].refused);
                made[k].upload_seconds = seconds_since(start);
            }
            for (const auto& [variable, value] : world.kernels)
                unsetenv(variable); // read when a batch is made
            std::printf("# %s x %u: upload arrays built in %.2f s; %zu batches created and "
                        "uploaded in %.2f s\n",
                        world.name.c_str(), copies, build_seconds,
                        std::size(targets) - (world.on_cpu && !gpu_only ? 0 : 1),
                        seconds_since(setup));

            for (size_t k = 0; k < std::size(targets); ++k) {
                const Target& target = targets[k];
                if (target.backend == STEEL_BACKEND_CPU && !(world.on_cpu && !gpu_only)) continue;
                const steel_batch batch = made[k].batch;
                const bool f32 = target.precision == STEEL_PRECISION_FLOAT32;
                const char* real_name = f32 ? "float32" : "float64";
                if (batch.id == 0) {
                    no_device = made[k].why;
                    std::printf("%-12s %6u  %-5s %-7s %-5s  not yet measured (%s)\n",
                                world.name.c_str(), copies, target.where, real_name, "both",
                                made[k].refused == STEEL_ERROR_NO_DEVICE ? "no device"
                                                                         : "no CUDA backend");
                    continue;
                }
                const bool gpu_side = target.backend == STEEL_BACKEND_CUDA;
                const double bytes = gpu_side && world.modeled()
                                         ? copies * traffic(shape, iterations, f32 ? 4 : 8)
                                         : 0;
                // A first solve, untimed; then loops of steel_batch_solve.
                Clock::time_point start = Clock::now();
                check(steel_batch_solve(batch), "solve");
                const double first = seconds_since(start);
                Timing t;
                t.seconds = time_loops([&] { check(steel_batch_solve(batch), "solve"); },
                                       min_seconds, first > min_seconds ? 1 : 3);
                fill_counts(t, batch, upload, shape);
                print_row(world.name, copies, target.where, real_name, "sync", t, bytes,
                          gpu.copy_gbs, made[k].upload_seconds, first);
                if (gpu_side) {
                    // Back-to-back async solves, then one wait: enough of them to fill
                    // min_seconds at the sync rate.
                    const int burst = int(
                        std::clamp(std::ceil(min_seconds / std::max(t.seconds, 1e-6)), 3.0, 2e3));
                    t.seconds =
                        time_loops(
                            [&] {
                                for (int r = 0; r < burst; ++r)
                                    check(steel_batch_solve_async(batch, nullptr), "solve_async");
                                bench::cuda_device_synchronize();
                            },
                            0, 3) /
                        burst;
                    fill_counts(t, batch, upload, shape);
                    print_row(world.name, copies, target.where, real_name, "async", t, bytes,
                              gpu.copy_gbs, 0, 0);
                }
                check(steel_batch_destroy(batch), "destroy");
                std::fflush(stdout);
            }
        }
    if (!no_device.empty()) std::printf("\nGPU: not yet measured: %s\n", no_device.c_str());
    std::printf("total %.1f s; /proc/loadavg at end: %s\n", seconds_since(started),
                load_average().c_str());
    return 0;
}
