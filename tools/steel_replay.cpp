// steel-replay: replays a Steel snapshot or capture stream and compares every solve with the
// outputs it recorded; prints a readable summary; extracts one world into its own snapshot.
// `steel-replay --help` says everything; docs/snapshots.md has worked examples.
//
// Loading and solving go through the public C API (steel_batch_load_memory, set_options, solve,
// read), so a replay exercises exactly what a user's program does. The snapshot codec of
// impl/snapshot/ is used only to read a file's content for --info, to cut out a world, and to
// rewrite the desc (backend, precision, threads) before loading.
#include "snapshot/compare.hpp"
#include "snapshot/snapshot.hpp"

#include "error.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace steel::snapshot;

constexpr int kExitAgree = 0;
constexpr int kExitDiffer = 1;
constexpr int kExitError = 2;

const char* const kHelp = R"(Usage: steel-replay [OPTIONS] FILE

Replays a Steel snapshot or capture stream and compares every solve with the outputs it
recorded. FILE is either
  - a snapshot: one batch saved by steel_batch_save_file / steel_batch_save_memory, or
  - a capture stream: one record per solve, appended by steel_batch_set_capture or by
    running a program with the environment variable STEEL_CAPTURE=FILE.
Each record is loaded into a new batch (steel_batch_load_memory), solved again with the
recorded options unless overridden, and compared world by world with what it recorded. A record
of a scene batch holds its scene and replays through it (the propagation response included); a
record without one that was solved with the propagation response is replayed with the immediate
response and serial sweeps, which the tool says on stderr.

Modes (default: replay and compare):
  --info                 Print a readable summary of every record and solve nothing: the
                         producer, batch desc, sizes and row kinds, the scene's counts (for a
                         scene batch), every option, and per world: DOFs, rows, J values,
                         path, sweeps, flags, residuals.
  --extract W            Write world W (0-based) of the chosen record as its own snapshot
                         (rows, scene, options and recorded outputs of that world) to the file
                         given by --output, and solve nothing.
  --output PATH          Where --extract writes (required with --extract).

Choosing what to replay:
  --record K             Only record K (0-based) of a capture stream (default: every record).
                         A snapshot file is record 0.
  --world W              Replay world W alone (cut out of the batch as --extract would).

Replay settings (default: as recorded):
  --option KEY=VALUE     Override one solve option for the replay; repeat for several. KEYs
                         are the fields of steel_solve_options:
                           iterations=N                       sweeps per solve, >= 1
                           tolerance=X                        residual to stop at, 0 = never
                           cfm=X                              >= 0
                           path=auto|general|dense            or 0, 1, 2
                           warm_start=0|1
                           contact_regularization=X           >= 0
                           nesterov_momentum=0|1
                           enable_bilateral_preelimination=0|1
                           record_residual_history=0|1
                           solve_mode=serial|colored          or 0, 1
                           articulated_contact_response=immediate|propagation   or 0, 1
                         Outputs then differ from the recording as much as the change makes
                         them; the comparison shows by how much.
  --backend cpu|cuda     Backend to replay on (STEEL_BACKEND_*).
  --precision float32|float64
                         Precision to replay in (STEEL_PRECISION_*).
  --threads N            Worker threads, at most 256; 0 = one per hardware thread, capped at 256.
                         Results do not depend on it.
  --tolerance X          Largest relative difference accepted per world (default: 1e-9 for a
                         float64 replay, 1e-4 for a float32 one). The tolerance used is printed.
  --verbose              Print every world's line, not only those beyond the tolerance.

Output and comparison:
  For each record and each world: the largest absolute difference of the impulses and of the
  velocities, and each relative to the larger of the recorded and replayed largest magnitude
  in that world (0 when both are all zero). A world passes when both relative differences
  are <= the tolerance and its STEEL_WORLD_NONFINITE flag is as recorded.

Exit status:
  0  every replayed world is within the tolerance (or --info / --extract succeeded)
  1  some world differs beyond the tolerance
  2  a usage error, an unreadable or invalid file, or a failed Steel call (its message is
     printed). A capture stream whose end is damaged or cut short (a process killed while
     appending) has its complete records replayed first; the bad tail is then reported and
     the status is 2.

Other:
  --help                 This text.
  --version              The versions of this tool's Steel and of its snapshot format.

Examples:
  steel-replay capture.steel
  steel-replay --info scene.steel
  steel-replay --option iterations=200 --option path=general scene.steel
  steel-replay --record 3 --extract 17 --output world17.steel capture.steel
)";

struct Arguments {
    std::string file;
    bool info = false;
    std::optional<uint32_t> extract;
    std::string output;
    std::optional<uint32_t> record;
    std::optional<uint32_t> world;
    std::vector<std::pair<std::string, std::string>> options;
    std::optional<int32_t> backend;
    std::optional<int32_t> precision;
    std::optional<uint32_t> threads;
    std::optional<double> tolerance;
    bool verbose = false;
};

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "steel-replay: %s\nRun 'steel-replay --help' for the options.\n",
                 message.c_str());
    std::exit(kExitError);
}

uint32_t parse_count(const std::string& text, const char* what) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || value > UINT32_MAX || text[0] == '-')
        usage_error(std::string(what) + " needs a whole number >= 0, not '" + text + "'");
    return uint32_t(value);
}

double parse_number(const std::string& text, const char* what) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0')
        usage_error(std::string(what) + " needs a number, not '" + text + "'");
    return value;
}

Arguments parse(int argc, char** argv) {
    Arguments args;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        auto value = [&]() -> std::string {
            if (k + 1 >= argc) usage_error(arg + " needs a value");
            return argv[++k];
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(kHelp, stdout);
            std::exit(kExitAgree);
        } else if (arg == "--version") {
            std::printf("steel-replay: Steel %s (ABI %u), snapshot format version %u\n",
                        steel_version(), steel_abi_version(), kFormatVersion);
            std::exit(kExitAgree);
        } else if (arg == "--info") {
            args.info = true;
        } else if (arg == "--extract") {
            args.extract = parse_count(value(), "--extract");
        } else if (arg == "--output" || arg == "-o") {
            args.output = value();
        } else if (arg == "--record") {
            args.record = parse_count(value(), "--record");
        } else if (arg == "--world") {
            args.world = parse_count(value(), "--world");
        } else if (arg == "--option") {
            const std::string pair = value();
            const size_t equals = pair.find('=');
            if (equals == std::string::npos || equals == 0)
                usage_error("--option needs KEY=VALUE, not '" + pair + "'");
            args.options.emplace_back(pair.substr(0, equals), pair.substr(equals + 1));
        } else if (arg == "--backend") {
            const std::string name = value();
            if (name == "cpu")
                args.backend = STEEL_BACKEND_CPU;
            else if (name == "cuda")
                args.backend = STEEL_BACKEND_CUDA;
            else
                usage_error("--backend is cpu or cuda, not '" + name + "'");
        } else if (arg == "--precision") {
            const std::string name = value();
            if (name == "float32")
                args.precision = STEEL_PRECISION_FLOAT32;
            else if (name == "float64")
                args.precision = STEEL_PRECISION_FLOAT64;
            else
                usage_error("--precision is float32 or float64, not '" + name + "'");
        } else if (arg == "--threads") {
            args.threads = parse_count(value(), "--threads");
        } else if (arg == "--tolerance") {
            args.tolerance = parse_number(value(), "--tolerance");
            if (!(*args.tolerance >= 0)) usage_error("--tolerance must be >= 0");
        } else if (arg == "--verbose" || arg == "-v") {
            args.verbose = true;
        } else if (!arg.empty() && arg[0] == '-') {
            usage_error("unknown option '" + arg + "'");
        } else if (args.file.empty()) {
            args.file = arg;
        } else {
            usage_error("one FILE only ('" + args.file + "' and '" + arg + "')");
        }
    }
    if (args.file.empty()) usage_error("no FILE given");
    if (args.extract && args.output.empty()) usage_error("--extract needs --output PATH");
    if (!args.extract && !args.output.empty()) usage_error("--output goes with --extract");
    if (args.info && args.extract) usage_error("--info and --extract are separate modes");
    return args;
}

void apply_option(steel_solve_options& options, const std::string& key, const std::string& text) {
    auto flag = [&]() -> uint32_t {
        if (text != "0" && text != "1")
            usage_error("--option " + key + " is 0 or 1, not '" + text + "'");
        return text == "1" ? 1u : 0u;
    };
    const std::string what = "--option " + key;
    if (key == "iterations")
        options.iterations = parse_count(text, what.c_str());
    else if (key == "tolerance")
        options.tolerance = parse_number(text, what.c_str());
    else if (key == "cfm")
        options.cfm = parse_number(text, what.c_str());
    else if (key == "path") {
        if (text == "auto" || text == "0")
            options.path = STEEL_PATH_AUTO;
        else if (text == "general" || text == "1")
            options.path = STEEL_PATH_GENERAL;
        else if (text == "dense" || text == "2")
            options.path = STEEL_PATH_DENSE;
        else
            usage_error("--option path is auto, general or dense, not '" + text + "'");
    } else if (key == "warm_start")
        options.warm_start = flag();
    else if (key == "contact_regularization")
        options.contact_regularization = parse_number(text, what.c_str());
    else if (key == "nesterov_momentum")
        options.nesterov_momentum = flag();
    else if (key == "enable_bilateral_preelimination")
        options.enable_bilateral_preelimination = flag();
    else if (key == "record_residual_history")
        options.record_residual_history = flag();
    else if (key == "solve_mode") {
        if (text == "serial" || text == "0")
            options.solve_mode = STEEL_SOLVE_SERIAL;
        else if (text == "colored" || text == "1")
            options.solve_mode = STEEL_SOLVE_COLORED;
        else
            usage_error("--option solve_mode is serial or colored, not '" + text + "'");
    } else if (key == "articulated_contact_response") {
        if (text == "immediate" || text == "0")
            options.articulated_contact_response = STEEL_RESPONSE_IMMEDIATE;
        else if (text == "propagation" || text == "1")
            options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
        else
            usage_error("--option articulated_contact_response is immediate or propagation, not '" +
                        text + "'");
    } else
        usage_error("unknown option key '" + key + "' (see --help)");
}

const char* path_name(int32_t path) {
    switch (path) {
    case STEEL_PATH_AUTO:
        return "auto";
    case STEEL_PATH_GENERAL:
        return "general";
    case STEEL_PATH_DENSE:
        return "dense";
    default:
        return "?";
    }
}

const char* backend_name(int32_t backend) {
    return backend == STEEL_BACKEND_CPU ? "cpu" : backend == STEEL_BACKEND_CUDA ? "cuda" : "?";
}

const char* precision_name(int32_t precision) {
    return precision == STEEL_PRECISION_FLOAT32   ? "float32"
           : precision == STEEL_PRECISION_FLOAT64 ? "float64"
                                                  : "?";
}

std::string flags_text(uint32_t flags) {
    std::string text;
    if (flags & STEEL_WORLD_NONFINITE) text += "nonfinite ";
    if (flags & STEEL_WORLD_CONVERGED) text += "converged ";
    if (flags & ~uint32_t(STEEL_WORLD_NONFINITE | STEEL_WORLD_CONVERGED))
        text += steel::format("0x%x ",
                              flags & ~uint32_t(STEEL_WORLD_NONFINITE | STEEL_WORLD_CONVERGED));
    if (text.empty()) return "-";
    text.pop_back();
    return text;
}

std::string features_text(uint32_t features) {
    std::string text;
    if (features & STEEL_FEATURE_FLOAT32) text += "float32 ";
    if (features & STEEL_FEATURE_FLOAT64) text += "float64 ";
    if (features & STEEL_FEATURE_CUDA) text += "cuda ";
    if (text.empty()) return "none";
    text.pop_back();
    return text;
}

std::string options_text(const steel_solve_options& o) {
    return steel::format(
        "iterations %u, tolerance %g, cfm %g, path %s, warm_start %u, contact_regularization %g, "
        "nesterov_momentum %u, enable_bilateral_preelimination %u, record_residual_history %u, "
        "solve_mode %s, articulated_contact_response %s",
        o.iterations, o.tolerance, o.cfm, path_name(o.path), o.warm_start, o.contact_regularization,
        o.nesterov_momentum, o.enable_bilateral_preelimination, o.record_residual_history,
        o.solve_mode == STEEL_SOLVE_COLORED ? "colored" : "serial",
        o.articulated_contact_response == STEEL_RESPONSE_PROPAGATION ? "propagation" : "immediate");
}

void print_info(const Snapshot& s, size_t record, uint64_t bytes) {
    std::printf("record %zu (%" PRIu64
                " bytes): format version %u, written by Steel %s (ABI %u, features %s)\n",
                record, bytes, s.format_version,
                s.producer_version.empty() ? "?" : s.producer_version.c_str(),
                s.producer_abi_version, features_text(s.producer_features).c_str());
    std::printf("  batch: %u worlds, backend %s, precision %s, %u threads\n", s.desc.world_count,
                backend_name(s.desc.backend), precision_name(s.desc.precision),
                s.desc.thread_count);
    std::printf("  options: %s\n", options_text(s.options).c_str());
    if (!s.has_rows) {
        std::printf("  rows: none uploaded\n");
        return;
    }
    const Rows& rows = s.rows;
    uint64_t kinds[5] = {0, 0, 0, 0, 0}, other = 0;
    for (int32_t kind : rows.kind)
        if (kind >= 0 && kind < 5)
            ++kinds[kind];
        else
            ++other;
    std::printf("  rows: %" PRIu64 " rows over %" PRIu64 " DOFs, %zu J values; bilateral %" PRIu64
                ", bounded %" PRIu64 ", contact normal %" PRIu64 ", friction box %" PRIu64
                ", friction cone %" PRIu64 "%s\n",
                rows.total_rows(), rows.total_dofs(), rows.jacobian.size(), kinds[0], kinds[1],
                kinds[2], kinds[3], kinds[4],
                other ? steel::format(", other %" PRIu64, other).c_str() : "");
    if (s.has_scene) {
        const steel::scene::SceneTotals t = s.scene.totals("steel-replay");
        using steel::scene::SceneUnit;
        std::printf("  scene: %" PRIu64 " bodies, %" PRIu64 " DOFs, %" PRIu64 " contacts, %" PRIu64
                    " connect and %" PRIu64
                    " mimic constraints; dt %g, baumgarte %g, %s friction, %s drives\n",
                    t.of(SceneUnit::body), t.of(SceneUnit::dof), t.of(SceneUnit::contact),
                    t.of(SceneUnit::connect), t.of(SceneUnit::mimic), s.scene.dt, s.scene.baumgarte,
                    s.scene.friction_model == STEEL_FRICTION_MODEL_CONE ? "cone" : "box",
                    s.scene.drive_mode == STEEL_DRIVE_MODE_ROWS ? "row" : "augmented");
    } else {
        std::printf("  scene: none (rows uploaded as rows)\n");
    }
    if (!s.solved) {
        std::printf("  results: none (not solved since the last upload)\n");
    } else {
        std::printf(
            "  results: recorded%s\n",
            s.results.history_stride
                ? steel::format(", with residual history (%u per world)", s.results.history_stride)
                      .c_str()
                : "");
    }
    std::printf("  %6s %6s %6s %8s %8s %7s %-10s %12s %14s %9s\n", "world", "dofs", "rows",
                "values", "path", "sweeps", "flags", "residual", "first_residual", "restarts");
    uint64_t row = 0;
    for (uint32_t w = 0; w < rows.world_row_counts.size(); ++w) {
        const uint32_t m = rows.world_row_counts[w];
        uint64_t values = 0;
        for (uint64_t k = 2 * row; k < 2 * (row + m); ++k)
            values += rows.block_length[k];
        row += m;
        if (s.solved) {
            const steel_world_stats& st = s.results.stats[w];
            std::printf("  %6u %6u %6u %8" PRIu64 " %8s %7u %-10s %12.4g %14.4g %9u\n", w,
                        rows.world_dof_counts[w], m, values, path_name(st.path), st.sweeps,
                        flags_text(st.flags).c_str(), st.residual, st.first_residual,
                        st.momentum_restarts);
        } else {
            std::printf("  %6u %6u %6u %8" PRIu64 "\n", w, rows.world_dof_counts[w], m, values);
        }
    }
}

// Reads the replay's outputs through the public API.
bool read_outputs(steel_batch batch, std::vector<double>& impulses, std::vector<double>& velocities,
                  std::vector<steel_world_stats>& stats) {
    uint64_t count = 0;
    if (steel_batch_read_impulses(batch, nullptr, 0, &count) != STEEL_OK) return false;
    impulses.resize(count);
    if (steel_batch_read_impulses(batch, impulses.data(), count, &count) != STEEL_OK) return false;
    if (steel_batch_read_velocities(batch, nullptr, 0, &count) != STEEL_OK) return false;
    velocities.resize(count);
    if (steel_batch_read_velocities(batch, velocities.data(), count, &count) != STEEL_OK)
        return false;
    uint32_t worlds = 0;
    if (steel_batch_read_world_stats(batch, sizeof(steel_world_stats), nullptr, 0, &worlds) !=
        STEEL_OK)
        return false;
    stats.resize(worlds);
    return steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(), worlds,
                                        &worlds) == STEEL_OK;
}

// Replays one record. Returns an exit status.
int replay(const Arguments& args, const std::vector<uint8_t>& bytes, const Snapshot& recorded,
           size_t record) {
    // The bytes to load: as recorded, unless the desc or the world set changes.
    std::vector<uint8_t> to_load;
    const bool rewrite = args.backend || args.precision || args.threads;
    if (rewrite) {
        Snapshot changed = recorded;
        if (args.backend) changed.desc.backend = *args.backend;
        if (args.precision) changed.desc.precision = *args.precision;
        if (args.threads) changed.desc.thread_count = *args.threads;
        // Recorded outputs are compared from `recorded`; the batch need not hold them (and a
        // float64 recording may not fit a float32 batch).
        changed.solved = false;
        changed.results = {};
        to_load = encode(changed);
    }
    const std::vector<uint8_t>& load_bytes = rewrite ? to_load : bytes;

    steel_batch batch{};
    if (steel_batch_load_memory(STEEL_ABI_VERSION, load_bytes.data(), load_bytes.size(), &batch) !=
        STEEL_OK) {
        std::fprintf(stderr, "steel-replay: record %zu: %s\n", record, steel_last_error_message());
        return kExitError;
    }
    steel_solve_options options;
    steel_solve_options_default(&options);
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    if (steel_batch_get_options(batch, &options) != STEEL_OK ||
        steel_batch_get_desc(batch, &desc) != STEEL_OK) {
        std::fprintf(stderr, "steel-replay: record %zu: %s\n", record, steel_last_error_message());
        steel_batch_destroy(batch);
        return kExitError;
    }
    if (options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION && !recorded.has_scene) {
        // A snapshot without its scene (rows uploaded as rows, or edited on the device since the
        // scene upload) has no trees to propagate through. The immediate response solves the
        // same problem: serial sweeps are the same iteration (equal to rounding), colored ones
        // meet it at convergence.
        std::fprintf(stderr,
                     "steel-replay: record %zu was solved with the propagation response (%s "
                     "sweeps); it holds "
                     "rows but no scene, so it is replayed with the immediate response and serial "
                     "sweeps%s\n",
                     record, options.solve_mode == STEEL_SOLVE_COLORED ? "colored" : "serial",
                     options.solve_mode == STEEL_SOLVE_COLORED
                         ? ", which meet the colored answer at convergence only"
                         : ", the same iteration");
        options.articulated_contact_response = STEEL_RESPONSE_IMMEDIATE;
        options.solve_mode = STEEL_SOLVE_SERIAL;
    }
    for (const auto& [key, value] : args.options)
        apply_option(options, key, value);
    std::vector<double> impulses, velocities;
    std::vector<steel_world_stats> stats;
    const bool ok = steel_batch_set_options(batch, &options) == STEEL_OK &&
                    steel_batch_solve(batch) == STEEL_OK &&
                    read_outputs(batch, impulses, velocities, stats);
    if (!ok) {
        std::fprintf(stderr, "steel-replay: record %zu: %s\n", record, steel_last_error_message());
        steel_batch_destroy(batch);
        return kExitError;
    }
    steel_batch_destroy(batch);

    std::printf("record %zu: %u worlds, %" PRIu64 " rows, %" PRIu64
                " DOFs; replayed on %s, %s, thread_count %u\n",
                record, desc.world_count, recorded.has_rows ? recorded.rows.total_rows() : 0,
                recorded.has_rows ? recorded.rows.total_dofs() : 0, backend_name(desc.backend),
                precision_name(desc.precision), desc.thread_count);
    std::printf("  options: %s%s\n", options_text(options).c_str(),
                args.options.empty() ? " (as recorded)" : " (overridden)");
    if (!recorded.solved) {
        std::printf("  nothing to compare: the record was saved before it was solved\n");
        return kExitAgree;
    }
    const double tolerance = args.tolerance ? *args.tolerance : default_tolerance(desc.precision);
    const std::vector<WorldDifference> worlds =
        compare_with_recorded(recorded, impulses, velocities);
    WorldDifference worst;
    size_t beyond = 0;
    bool header = false;
    for (size_t w = 0; w < worlds.size(); ++w) {
        const WorldDifference& d = worlds[w];
        const steel_world_stats& was = recorded.results.stats[w];
        const bool flag_changed =
            (was.flags & STEEL_WORLD_NONFINITE) != (stats[w].flags & STEEL_WORLD_NONFINITE);
        const bool fails = !(d.relative() <= tolerance) || flag_changed;
        beyond += fails;
        worst.impulses.absolute = std::fmax(worst.impulses.absolute, d.impulses.absolute);
        worst.impulses.relative = std::fmax(worst.impulses.relative, d.impulses.relative);
        worst.velocities.absolute = std::fmax(worst.velocities.absolute, d.velocities.absolute);
        worst.velocities.relative = std::fmax(worst.velocities.relative, d.velocities.relative);
        if (!fails && !args.verbose) continue;
        if (!header) {
            std::printf("  %6s %12s %12s %12s %12s  %-17s %-17s %-21s %s\n", "world", "impulse abs",
                        "impulse rel", "velocity abs", "velocity rel", "path (recorded)",
                        "sweeps (recorded)", "flags (recorded)", "");
            header = true;
        }
        std::printf("  %6zu %12.3g %12.3g %12.3g %12.3g  %-7s (%-7s) %7u (%7u) %-9s (%-9s) %s\n", w,
                    d.impulses.absolute, d.impulses.relative, d.velocities.absolute,
                    d.velocities.relative, path_name(stats[w].path), path_name(was.path),
                    stats[w].sweeps, was.sweeps, flags_text(stats[w].flags).c_str(),
                    flags_text(was.flags).c_str(), fails ? "BEYOND TOLERANCE" : "ok");
    }
    std::printf(
        "  largest difference: impulses %.3g (relative %.3g), velocities %.3g (relative %.3g)\n",
        worst.impulses.absolute, worst.impulses.relative, worst.velocities.absolute,
        worst.velocities.relative);
    std::printf("  tolerance %.3g (relative, per world): %s\n", tolerance,
                beyond ? steel::format("%zu of %zu worlds BEYOND", beyond, worlds.size()).c_str()
                       : "every world within");
    return beyond ? kExitDiffer : kExitAgree;
}

} // namespace

int main(int argc, char** argv) {
    const Arguments args = parse(argc, argv);
    try {
        const std::vector<uint8_t> file = read_file(args.file.c_str(), UINT64_MAX, "steel-replay");
        std::vector<Record> records;
        // A capture whose end is damaged or cut short (a process killed during an append): its
        // complete records are replayed all the same, and the tail is reported after them.
        std::string bad_tail;
        const char* kind = "snapshot";
        if (looks_like_snapshot(file.data(), file.size())) {
            records.push_back({0, file.size()});
        } else if (looks_like_capture(file.data(), file.size())) {
            kind = "capture stream";
            records = split_capture(file.data(), file.size(), "steel-replay", &bad_tail);
        } else {
            kind = "neither a snapshot nor a capture stream";
            records.push_back({0, file.size()}); // decode says what is wrong with it
        }
        const auto finish = [&](int result) {
            if (bad_tail.empty()) return result;
            std::fprintf(stderr, "%s; the file's %zu complete record%s before it %s\n",
                         bad_tail.c_str(), records.size(), records.size() == 1 ? "" : "s",
                         args.record || args.extract ? "can be chosen with --record"
                         : args.info                 ? "are summarized above"
                                                     : "were replayed above");
            return kExitError;
        };
        std::printf("%s: %s, %zu %srecord%s%s, %zu bytes\n", args.file.c_str(), kind,
                    records.size(), bad_tail.empty() ? "" : "complete ",
                    records.size() == 1 ? "" : "s",
                    bad_tail.empty() ? "" : " and a damaged or truncated tail", file.size());
        if (args.record && *args.record >= records.size()) {
            if (!bad_tail.empty()) return finish(kExitError);
            usage_error(steel::format("--record %u: the file has %zu record%s", *args.record,
                                      records.size(), records.size() == 1 ? "" : "s"));
        }

        int status = kExitAgree;
        for (size_t k = 0; k < records.size(); ++k) {
            if (args.record && k != *args.record) continue;
            const std::vector<uint8_t> bytes(file.begin() + int64_t(records[k].offset),
                                             file.begin() +
                                                 int64_t(records[k].offset + records[k].size));
            Snapshot snapshot =
                decode(bytes.data(), bytes.size(), steel::format("record %zu", k).c_str());
            if (args.info) {
                print_info(snapshot, k, bytes.size());
                continue;
            }
            if (args.extract) {
                const Snapshot one = extract_world(snapshot, *args.extract);
                write_file_atomically(args.output.c_str(), encode(one), "steel-replay");
                std::printf("record %zu: wrote world %u (%u DOFs, %u rows) to %s\n", k,
                            *args.extract, one.has_rows ? one.rows.world_dof_counts[0] : 0,
                            one.has_rows ? one.rows.world_row_counts[0] : 0, args.output.c_str());
                if (!args.record && records.size() > 1)
                    std::printf("(from record %zu; choose another with --record)\n", k);
                return finish(kExitAgree);
            }
            if (args.world) {
                snapshot = extract_world(snapshot, *args.world);
                std::printf("record %zu: world %u alone\n", k, *args.world);
                const int result = replay(args, encode(snapshot), snapshot, k);
                status = std::max(status, result);
            } else {
                status = std::max(status, replay(args, bytes, snapshot, k));
            }
            if (status == kExitError) return finish(status);
        }
        return finish(status);
    } catch (const steel::Error& error) {
        std::fprintf(stderr, "steel-replay: %s\n", error.message.c_str());
        return kExitError;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "steel-replay: %s\n", error.what());
        return kExitError;
    }
}
