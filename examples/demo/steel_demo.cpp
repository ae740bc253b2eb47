// steel_demo: builds worlds in rows mode, solves them with libsteel, and prints what each world
// did: the path it was classified to, the sweeps it ran, its final residual and the solve time.
//
//  - Resting 1D stacks (examples/scenes): box k rests on box k-1, the bottom box on the ground.
//    Their exact impulses are closed-form, so the table also shows how far the solve is from them.
//    Shown twice: plain Gauss-Seidel, then with nesterov_momentum.
//  - A batch of random worlds of mixed sizes (random SPD mass matrices, mixed row kinds), fixed
//    seed, summarised per size class.
//  - Two checks the design promises: results are bit-identical for any thread count, and the
//    dense path and the general sweep agree to rounding.
//
// Everything goes through the public C API (steel.h); the scene builders only fill arrays.
#include "robot_scenes.hpp"
#include "rows_scenes.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---- command line --------------------------------------------------------------------------

struct Settings {
    uint32_t threads = 0; // 0 = one per hardware thread, at most 256
    uint32_t iterations = 20000;
    double tolerance = 1e-6;
    double cfm = 0;
    int32_t path = STEEL_PATH_AUTO;
    int32_t precision = STEEL_PRECISION_FLOAT64;
    int32_t backend = STEEL_BACKEND_CPU;
    uint32_t momentum = 0; // nesterov_momentum for the random worlds
    uint32_t random_worlds = 1000;
    uint64_t seed = 1;
};

void print_usage(const char* program) {
    std::printf(
        "usage: %s [options]\n"
        "  --threads N       worker threads per batch (0 = one per hardware thread, at most 256;\n"
        "                    default 0)\n"
        "  --iterations N    most sweeps per solve (default 20000)\n"
        "  --tolerance X     stop a world once its sweep residual <= X (0 = never; default 1e-6)\n"
        "  --cfm X           constraint force mixing added to every row's J.Y (default 0)\n"
        "  --path P          auto | general | dense (default auto: classify each world)\n"
        "  --float32         solve in float32 instead of float64\n"
        "  --backend B       cpu | cuda (default cpu; cuda needs a GPU: without one the demo\n"
        "                    says why and exits 77)\n"
        "  --momentum        use nesterov_momentum for the random worlds too (the stacks are\n"
        "                    always shown both without and with it)\n"
        "  --worlds N        number of random worlds (default 1000)\n"
        "  --seed N          seed of the random worlds (default 1)\n"
        "  --help            this text\n",
        program);
}

[[noreturn]] void usage_error(const char* program, const std::string& message) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s (see --help)\n", program, message.c_str());
    std::exit(2);
}

unsigned long long parse_unsigned(const char* program, const char* flag, const char* text) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0' || text[0] == '-')
        usage_error(program,
                    std::string(flag) + " needs a non-negative integer, not '" + text + "'");
    return value;
}

double parse_double(const char* program, const char* flag, const char* text) {
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(value) || value < 0)
        usage_error(program, std::string(flag) + " needs a finite number >= 0, not '" + text + "'");
    return value;
}

uint32_t parse_u32(const char* program, const char* flag, const char* text) {
    const unsigned long long value = parse_unsigned(program, flag, text);
    if (value > UINT32_MAX) usage_error(program, std::string(flag) + " is too large");
    return uint32_t(value);
}

// The value named `text` among `names`; anything else ends the demo, listing the names
// ("--path is auto, general or dense, not 'x'").
struct Named {
    const char* name;
    int32_t value;
};
template <size_t N>
int32_t parse_named(const char* program, const char* flag, const std::string& text,
                    const Named (&names)[N]) {
    std::string listed;
    for (size_t k = 0; k < N; ++k) {
        if (text == names[k].name) return names[k].value;
        listed += (k == 0 ? "" : k + 1 == N ? " or " : ", ") + std::string(names[k].name);
    }
    usage_error(program, std::string(flag) + " is " + listed + ", not '" + text + "'");
}

Settings parse_settings(int argc, char** argv) {
    Settings settings;
    const char* program = argv[0];
    for (int k = 1; k < argc; ++k) {
        const std::string flag = argv[k];
        if (flag == "--help" || flag == "-h") {
            print_usage(program);
            std::exit(0);
        }
        if (flag == "--float32") {
            settings.precision = STEEL_PRECISION_FLOAT32;
            continue;
        }
        if (flag == "--momentum") {
            settings.momentum = 1;
            continue;
        }
        static const char* const kValued[] = {"--threads", "--iterations", "--tolerance",
                                              "--cfm",     "--path",       "--worlds",
                                              "--seed",    "--backend"};
        if (std::find(std::begin(kValued), std::end(kValued), flag) == std::end(kValued))
            usage_error(program, "unknown option " + flag);
        if (k + 1 >= argc) usage_error(program, flag + " needs a value");
        const char* value = argv[++k];
        if (flag == "--threads") {
            settings.threads = parse_u32(program, argv[k - 1], value);
        } else if (flag == "--iterations") {
            settings.iterations = parse_u32(program, argv[k - 1], value);
            if (settings.iterations == 0) usage_error(program, "--iterations must be at least 1");
        } else if (flag == "--tolerance") {
            settings.tolerance = parse_double(program, argv[k - 1], value);
        } else if (flag == "--cfm") {
            settings.cfm = parse_double(program, argv[k - 1], value);
        } else if (flag == "--path") {
            static const Named kPaths[] = {{"auto", STEEL_PATH_AUTO},
                                           {"general", STEEL_PATH_GENERAL},
                                           {"dense", STEEL_PATH_DENSE}};
            settings.path = parse_named(program, "--path", value, kPaths);
        } else if (flag == "--backend") {
            static const Named kBackends[] = {{"cpu", STEEL_BACKEND_CPU},
                                              {"cuda", STEEL_BACKEND_CUDA}};
            settings.backend = parse_named(program, "--backend", value, kBackends);
        } else if (flag == "--worlds") {
            settings.random_worlds = parse_u32(program, argv[k - 1], value);
            if (settings.random_worlds == 0) usage_error(program, "--worlds must be at least 1");
        } else { // --seed
            settings.seed = parse_unsigned(program, argv[k - 1], value);
        }
    }
    return settings;
}

// ---- the C API, with every status checked ----------------------------------------------------

// Any failed call ends the demo with the library's own message (which names what and where).
void check(steel_status status, const char* call) {
    if (status == STEEL_OK) return;
    std::fflush(stdout);
    std::fprintf(stderr, "steel_demo: %s failed: %s (%d)\n  %s\n", call,
                 steel_status_string(status), int(status), steel_last_error_message());
    std::exit(1);
}

steel_batch_desc batch_desc(uint32_t world_count, const Settings& settings, uint32_t threads) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = world_count;
    desc.thread_count = threads;
    desc.precision = settings.precision;
    desc.backend = settings.backend;
    return desc;
}

// Owns one batch handle (of the settings' backend and precision) for the scope of a solve.
class ScopedBatch {
  public:
    ScopedBatch(uint32_t world_count, const Settings& settings, uint32_t threads) {
        const steel_batch_desc desc = batch_desc(world_count, settings, threads);
        check(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch_), "steel_batch_create");
    }
    ~ScopedBatch() { steel_batch_destroy(batch_); }
    ScopedBatch(const ScopedBatch&) = delete;
    ScopedBatch& operator=(const ScopedBatch&) = delete;
    steel_batch handle() const { return batch_; }

  private:
    steel_batch batch_{0};
};

struct SolveOutcome {
    std::vector<steel_world_stats> stats; // per world
    std::vector<double> impulses;         // per row, concatenated over worlds
    double solve_seconds = 0;             // steel_batch_solve alone
    uint32_t threads = 0;                 // as the batch resolved them
};

SolveOutcome solve(const scenes::RowsBuilder& builder, const steel_solve_options& options,
                   const Settings& settings, uint32_t threads) {
    ScopedBatch batch(builder.world_count(), settings, threads);
    const steel_rows_desc rows = builder.desc();
    check(steel_batch_upload_rows(batch.handle(), &rows), "steel_batch_upload_rows");
    check(steel_batch_set_options(batch.handle(), &options), "steel_batch_set_options");

    const auto start = std::chrono::steady_clock::now();
    check(steel_batch_solve(batch.handle()), "steel_batch_solve");
    const auto stop = std::chrono::steady_clock::now();

    SolveOutcome outcome;
    outcome.solve_seconds = std::chrono::duration<double>(stop - start).count();

    uint64_t row_count = 0;
    check(steel_batch_read_impulses(batch.handle(), nullptr, 0, &row_count),
          "steel_batch_read_impulses");
    outcome.impulses.resize(row_count);
    check(steel_batch_read_impulses(batch.handle(), outcome.impulses.data(), row_count, nullptr),
          "steel_batch_read_impulses");

    outcome.stats.resize(builder.world_count());
    check(steel_batch_read_world_stats(batch.handle(), sizeof(steel_world_stats),
                                       outcome.stats.data(), uint32_t(outcome.stats.size()),
                                       nullptr),
          "steel_batch_read_world_stats");

    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    check(steel_batch_get_desc(batch.handle(), &desc), "steel_batch_get_desc");
    outcome.threads = desc.thread_count;
    return outcome;
}

// Whether the settings' backend can make a batch here. --backend cuda on a machine without a
// GPU (or a libsteel without the CUDA backend) is not a failure of the demo: it says why and
// the caller exits 77, which ctest reports as skipped.
bool backend_available(const Settings& settings) {
    if (settings.backend == STEEL_BACKEND_CPU) return true;
    const steel_batch_desc desc = batch_desc(1, settings, settings.threads);
    steel_batch probe{0};
    const steel_status status = steel_batch_create(STEEL_ABI_VERSION, &desc, &probe);
    if (status == STEEL_ERROR_NO_DEVICE || status == STEEL_ERROR_UNSUPPORTED) {
        std::printf("SKIP: --backend cuda: %s\n", steel_last_error_message());
        return false;
    }
    check(status, "steel_batch_create");
    steel_batch_destroy(probe);
    return true;
}

// ---- formatting ------------------------------------------------------------------------------

const char* path_name(int32_t path) {
    switch (path) {
    case STEEL_PATH_GENERAL:
        return "general";
    case STEEL_PATH_DENSE:
        return "dense";
    default:
        return "auto";
    }
}

std::string format_time(double seconds) {
    char text[32];
    if (seconds < 1e-3)
        std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
    else if (seconds < 1)
        std::snprintf(text, sizeof text, "%.2f ms", seconds * 1e3);
    else
        std::snprintf(text, sizeof text, "%.2f s", seconds);
    return text;
}

bool converged(const steel_world_stats& stats) {
    return (stats.flags & STEEL_WORLD_CONVERGED) != 0;
}
bool nonfinite(const steel_world_stats& stats) {
    return (stats.flags & STEEL_WORLD_NONFINITE) != 0;
}

const char* outcome_word(const steel_world_stats& stats, double tolerance) {
    if (nonfinite(stats)) return "NONFINITE";
    if (tolerance <= 0) return "-";
    return converged(stats) ? "yes" : "no";
}

// ---- stacks ----------------------------------------------------------------------------------

struct StackCase {
    const char* label;
    scenes::StackSpec spec;
};

// How far a converged stack's impulses may be from the closed form, relative to each: the
// residual bounds every contact's velocity error by the tolerance r (guide.md, "The residual"),
// and the impulse error is A^-1 times the velocity error, A = J M^-1 J^T the stack's tridiagonal
// (contact k between boxes k-1 and k). A^-1 has no negative entry, so |error_k| <= r (A^-1 1)_k:
// one tridiagonal solve. Twice that, for the last sweep's updates standing in for the errors.
double stack_error_bound(const scenes::StackSpec& spec, double tolerance) {
    const std::vector<double> mass = scenes::stack_masses(spec);
    const std::vector<double> exact = scenes::stack_exact_impulses(spec);
    const size_t h = mass.size();
    std::vector<double> diagonal(h), below(h, 0.0), rhs(h, 1.0); // A, and A x = 1 solved in place
    for (size_t k = 0; k < h; ++k) {
        diagonal[k] = 1 / mass[k] + (k > 0 ? 1 / mass[k - 1] : 0);
        if (k > 0) below[k] = -1 / mass[k - 1];
    }
    for (size_t k = 1; k < h; ++k) { // forward elimination (A is symmetric: above = below)
        const double factor = below[k] / diagonal[k - 1];
        diagonal[k] -= factor * below[k];
        rhs[k] -= factor * rhs[k - 1];
    }
    double bound = 0;
    double next = 0;
    for (size_t k = h; k-- > 0;) { // back substitution, each x_k against its exact impulse
        const double x = (rhs[k] - (k + 1 < h ? below[k + 1] * next : 0)) / diagonal[k];
        bound = std::max(bound, 2 * tolerance * x / exact[k]);
        next = x;
    }
    return bound;
}

// Solves every stack with `options` and prints one table row per stack; a stack whose impulses
// miss the closed form by more than its convergence allows (stack_error_bound; exactly for one
// box, which one update solves without cfm) is a failure.
int print_stack_table(const Settings& settings, const std::vector<StackCase>& cases,
                      const steel_solve_options& options) {
    std::printf("  %-28s %4s  %-7s %6s %8s  %-9s  %-9s  %-10s %10s\n", "world", "n=m", "path",
                "sweeps", "restarts", "residual", "converged", "max relerr", "solve");
    int failures = 0;
    for (const StackCase& stack : cases) {
        scenes::RowsBuilder builder;
        scenes::add_stack_world(builder, stack.spec);
        const SolveOutcome outcome = solve(builder, options, settings, settings.threads);
        const steel_world_stats& stats = outcome.stats[0];

        // Largest relative error of a contact impulse against the closed form.
        const std::vector<double> exact = scenes::stack_exact_impulses(stack.spec);
        double error = 0;
        for (size_t k = 0; k < exact.size(); ++k)
            error = std::max(error, std::fabs(outcome.impulses[k] - exact[k]) / exact[k]);

        char label[64];
        std::snprintf(label, sizeof label, "stack h=%u%s%s", stack.spec.height,
                      stack.label[0] ? ", " : "", stack.label);
        const std::string restarts =
            options.nesterov_momentum ? std::to_string(stats.momentum_restarts) : "-";
        std::printf("  %-28s %4u  %-7s %6u %8s  %9.2e  %-9s  %10.2e %10s\n", label,
                    stack.spec.height, path_name(stats.path), stats.sweeps, restarts.c_str(),
                    stats.residual, outcome_word(stats, settings.tolerance), error,
                    format_time(outcome.solve_seconds).c_str());
        const double rounding = settings.precision == STEEL_PRECISION_FLOAT32 ? 1e-6 : 1e-12;
        const double allowed = stack.spec.height == 1 && options.cfm == 0 ? rounding
                               : converged(stats)
                                   ? stack_error_bound(stack.spec, settings.tolerance) + rounding
                                   : INFINITY;
        if (nonfinite(stats) || !(error <= allowed)) {
            std::printf("  FAILED: max relerr %.3g above the %.3g its convergence allows\n", error,
                        allowed);
            ++failures;
        }
    }
    std::printf("\n");
    return failures;
}

int run_stacks(const Settings& settings, const steel_solve_options& options) {
    std::vector<StackCase> cases;
    for (uint32_t height : {1u, 5u, 10u, 20u, 50u}) {
        scenes::StackSpec spec;
        spec.height = height;
        cases.push_back({"", spec});
    }
    scenes::StackSpec heavy;
    heavy.height = 10;
    heavy.top_mass = 100.0;
    cases.push_back({"top 100x heavier", heavy});

    std::printf(
        "Resting stacks: box k rests on box k-1, box 0 on the ground; one DOF per box, one\n"
        "contact row per box. Exact impulses: contact k carries g*dt*(mass of boxes k..top).\n\n");
    steel_solve_options plain = options;
    plain.nesterov_momentum = 0;
    std::printf("Plain projected Gauss-Seidel. Sweeps grow about as h^2: the load reaches the "
                "ground slowly.\n");
    int failures = print_stack_table(settings, cases, plain);

    steel_solve_options momentum = options;
    momentum.nesterov_momentum = 1;
    std::printf("The same stacks with nesterov_momentum = 1 (extrapolation between sweeps, "
                "gradient restart):\n");
    failures += print_stack_table(settings, cases, momentum);
    return failures;
}

// ---- random worlds ---------------------------------------------------------------------------

// Three size classes. A world has at most as many rows as DOFs in all, but rows may still pile up
// on one body (see the note run_random prints).
enum SizeClass : uint32_t { kSmall = 0, kMedium = 1, kLarge = 2, kClassCount = 3 };
const char* const kClassLabel[kClassCount] = {"small: 2 bodies", "medium: 3-6 bodies",
                                              "large: 8-16 bodies"};

uint32_t draw(std::mt19937_64& rng, uint32_t lo, uint32_t hi) {
    return lo + uint32_t(rng() % (hi - lo + 1));
}

scenes::RandomWorldSpec random_spec(std::mt19937_64& rng, SizeClass size) {
    scenes::RandomWorldSpec spec;
    switch (size) {
    case kSmall: // "one arm and one object"
        spec.body_count = 2;
        spec.min_body_dofs = 3;
        spec.max_body_dofs = 7;
        spec.row_count = draw(rng, 2, 6);
        break;
    case kMedium:
        spec.body_count = draw(rng, 3, 6);
        spec.min_body_dofs = 2;
        spec.max_body_dofs = 6;
        spec.row_count = draw(rng, spec.body_count, 2 * spec.body_count);
        break;
    default:
        spec.body_count = draw(rng, 8, 16);
        spec.min_body_dofs = 3;
        spec.max_body_dofs = 6;
        spec.row_count = draw(rng, 2 * spec.body_count, 3 * spec.body_count);
        break;
    }
    spec.two_body_fraction = 0.25 + 0.5 * scenes::uniform01(rng);
    spec.mixed_kinds = true;
    return spec;
}

struct ClassSummary {
    uint32_t worlds = 0, dense = 0, general = 0, converged = 0, nonfinite = 0;
    uint32_t n_min = UINT32_MAX, n_max = 0, m_min = UINT32_MAX, m_max = 0;
    std::vector<uint32_t> sweeps;
    double residual_max = 0;
};

std::string range(uint32_t lo, uint32_t hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

void print_summary_row(const char* label, ClassSummary& summary, double tolerance,
                       const std::string& time) {
    std::sort(summary.sweeps.begin(), summary.sweeps.end());
    const uint32_t sweeps_min = summary.sweeps.empty() ? 0 : summary.sweeps.front();
    const uint32_t sweeps_med =
        summary.sweeps.empty() ? 0 : summary.sweeps[summary.sweeps.size() / 2];
    const uint32_t sweeps_max = summary.sweeps.empty() ? 0 : summary.sweeps.back();
    char sweeps[48];
    std::snprintf(sweeps, sizeof sweeps, "%u/%u/%u", sweeps_min, sweeps_med, sweeps_max);
    char conv[32];
    if (tolerance > 0)
        std::snprintf(conv, sizeof conv, "%u", summary.converged);
    else
        std::snprintf(conv, sizeof conv, "-");
    std::printf("  %-20s %6u %7s %7s %6u %7u  %-18s %9.2e %9s %9u %10s\n", label, summary.worlds,
                range(summary.n_min, summary.n_max).c_str(),
                range(summary.m_min, summary.m_max).c_str(), summary.dense, summary.general, sweeps,
                summary.residual_max, conv, summary.nonfinite, time.c_str());
}

void add_to(ClassSummary& summary, const steel_world_stats& stats, uint32_t n, uint32_t m) {
    ++summary.worlds;
    if (stats.path == STEEL_PATH_DENSE)
        ++summary.dense;
    else
        ++summary.general;
    if (converged(stats)) ++summary.converged;
    if (nonfinite(stats)) ++summary.nonfinite;
    summary.n_min = std::min(summary.n_min, n);
    summary.n_max = std::max(summary.n_max, n);
    summary.m_min = std::min(summary.m_min, m);
    summary.m_max = std::max(summary.m_max, m);
    summary.sweeps.push_back(stats.sweeps);
    summary.residual_max = std::max(summary.residual_max, stats.residual);
}

// Largest |a - b| / max(1, |b|) over two impulse vectors.
double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double difference = 0;
    for (size_t k = 0; k < a.size(); ++k)
        difference = std::max(difference, std::fabs(a[k] - b[k]) / std::max(1.0, std::fabs(b[k])));
    return difference;
}

int run_random(const Settings& settings, const steel_solve_options& options) {
    std::mt19937_64 rng(settings.seed);
    scenes::RowsBuilder builder;
    std::vector<SizeClass> world_class(settings.random_worlds);
    for (uint32_t w = 0; w < settings.random_worlds; ++w) {
        // About 60% small, 30% medium, 10% large.
        const uint32_t pick = uint32_t(rng() % 10);
        world_class[w] = pick < 6 ? kSmall : pick < 9 ? kMedium : kLarge;
        scenes::add_random_world(builder, rng, random_spec(rng, world_class[w]));
    }

    const SolveOutcome outcome = solve(builder, options, settings, settings.threads);

    std::printf(
        "%u random worlds (seed %llu): random SPD mass matrices, rows over one or two bodies,\n"
        "mixed kinds (bilateral, bounded, contact normal, box friction). One batch, %llu rows.\n\n",
        settings.random_worlds, (unsigned long long)settings.seed,
        (unsigned long long)builder.total_rows());
    std::printf("  %-20s %6s %7s %7s %6s %7s  %-18s %9s %9s %9s %10s\n", "worlds", "count", "n",
                "m", "dense", "general", "sweeps min/med/max", "residual", "converged", "nonfinite",
                "solve");
    ClassSummary summaries[kClassCount];
    ClassSummary all;
    for (uint32_t w = 0; w < settings.random_worlds; ++w) {
        const steel_world_stats& stats = outcome.stats[w];
        add_to(summaries[world_class[w]], stats, builder.dof_counts[w], builder.row_counts[w]);
        add_to(all, stats, builder.dof_counts[w], builder.row_counts[w]);
    }
    for (uint32_t c = 0; c < kClassCount; ++c)
        if (summaries[c].worlds > 0)
            print_summary_row(kClassLabel[c], summaries[c], settings.tolerance, "");
    print_summary_row("all (one batch)", all, settings.tolerance,
                      format_time(outcome.solve_seconds));
    std::printf("  (residual: the largest over the worlds of each world's last sweep residual)\n");
    if (settings.tolerance > 0 && all.converged + all.nonfinite < all.worlds)
        std::printf(
            "  Worlds that ran to the iteration cap have rows no impulses can satisfy together "
            "(more\n"
            "  rows on a body than it has DOFs) or friction rows tied to a normal row along "
            "unrelated\n"
            "  directions, which random rows allow and real contacts do not. Gauss-Seidel has no\n"
            "  convergence guarantee there, and the residual reports it.\n");
    std::printf("\n");

    // The design's promises, checked on this batch.
    std::printf("Checks on the random batch:\n");
    int failures = int(all.nonfinite);

    // 1. Bit-identical results for any thread count.
    const uint32_t other_threads = outcome.threads > 1 ? outcome.threads : 4;
    const SolveOutcome single = solve(builder, options, settings, 1);
    const SolveOutcome multi = solve(builder, options, settings, other_threads);
    const bool identical = std::memcmp(single.impulses.data(), multi.impulses.data(),
                                       single.impulses.size() * sizeof(double)) == 0;
    std::printf("  1 thread vs %u threads: impulses bit-identical: %s (solve %s vs %s)\n",
                other_threads, identical ? "yes" : "NO", format_time(single.solve_seconds).c_str(),
                format_time(multi.solve_seconds).c_str());
    if (!identical) ++failures;

    // 2. The dense path and the general sweep run the same iteration (SPEC section 3). With no
    //    tolerance both run the same number of sweeps, so they must agree to rounding. Plain
    //    sweeps: momentum's restart test is a sign, which rounding may flip in the worlds above
    //    that never converge, and the two runs then part ways legitimately.
    steel_solve_options fixed = options;
    fixed.tolerance = 0;
    fixed.iterations = 50;
    fixed.nesterov_momentum = 0;
    fixed.path = STEEL_PATH_DENSE;
    const SolveOutcome dense = solve(builder, fixed, settings, settings.threads);
    fixed.path = STEEL_PATH_GENERAL;
    const SolveOutcome general = solve(builder, fixed, settings, settings.threads);
    const double difference = max_relative_difference(dense.impulses, general.impulses);
    const double allowed = settings.precision == STEEL_PRECISION_FLOAT32 ? 1e-2 : 1e-9;
    std::printf(
        "  forced dense vs forced general path, 50 plain sweeps each: max impulse difference %.1e "
        "(relative): %s\n",
        difference, difference <= allowed ? "agree to rounding" : "DISAGREE");
    if (!(difference <= allowed)) ++failures;
    std::printf("\n");
    return failures;
}

} // namespace

// ---- scene mode: the example scenes, one world each, built and solved in one batch
// ---------------

struct Scene {
    const char* name;
    void (*add)(scenes::SceneBuilder&);
};
const Scene scene_list[] = {
    {"box stack of 5", [](scenes::SceneBuilder& b) { scenes::add_box_stack(b, 5); }},
    {"box pile of 20", [](scenes::SceneBuilder& b) { scenes::add_box_pile(b, 20); }},
    {"7-DOF arm, box in grasp",
     [](scenes::SceneBuilder& b) { scenes::add_arm_with_box(b, 0.8, 20); }},
    {"legged robot", [](scenes::SceneBuilder& b) { scenes::add_legged_robot(b); }},
    {"four-bar linkage", [](scenes::SceneBuilder& b) { scenes::add_four_bar(b); }},
};

scenes::SceneBuilder example_scenes() {
    scenes::SceneBuilder builder;
    for (const Scene& scene : scene_list) {
        builder.begin_world();
        scene.add(builder);
    }
    return builder;
}

int run_scenes(const Settings& settings, const steel_solve_options& options) {
    const auto& list = scene_list;
    const scenes::SceneBuilder builder = example_scenes();
    ScopedBatch batch(builder.world_count(), settings, settings.threads);
    check(steel_batch_set_options(batch.handle(), &options), "steel_batch_set_options");
    const steel_scene_desc desc = builder.desc();
    auto start = std::chrono::steady_clock::now();
    check(steel_batch_upload_scene(batch.handle(), &desc), "steel_batch_upload_scene");
    const double build =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    start = std::chrono::steady_clock::now();
    check(steel_batch_solve(batch.handle()), "steel_batch_solve");
    const double solve_time =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<steel_world_stats> stats(builder.world_count());
    check(steel_batch_read_world_stats(batch.handle(), sizeof(steel_world_stats), stats.data(),
                                       uint32_t(stats.size()), nullptr),
          "steel_batch_read_world_stats");
    uint64_t count = 0;
    check(steel_batch_read_body_velocities(batch.handle(), nullptr, 0, &count),
          "steel_batch_read_body_velocities");
    std::vector<double> body_velocity(count);
    check(steel_batch_read_body_velocities(batch.handle(), body_velocity.data(), count, nullptr),
          "steel_batch_read_body_velocities");

    std::printf(
        "Scene mode: the example scenes as one batch of %u worlds (rows built from bodies, joints "
        "and contacts)\n",
        builder.world_count());
    std::printf("%-26s %6s %8s %7s %12s  %s\n", "scene", "bodies", "contacts", "sweeps", "residual",
                "fastest body after one step");
    int failures = 0;
    size_t body0 = 0;
    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        double fastest = 0;
        for (size_t b = body0; b < body0 + builder.body_counts[w]; ++b)
            for (int k = 0; k < 3; ++k)
                fastest = std::max(fastest, std::fabs(body_velocity[6 * b + size_t(k)]));
        body0 += builder.body_counts[w];
        std::printf("%-26s %6u %8u %7u %12.3e  %.3g m/s\n", list[w].name, builder.body_counts[w],
                    builder.contact_counts[w], stats[w].sweeps, stats[w].residual, fastest);
        if (stats[w].flags & STEEL_WORLD_NONFINITE) ++failures;
    }
    std::printf("row building (steel_batch_upload_scene) %s, solve %s\n\n",
                format_time(build).c_str(), format_time(solve_time).c_str());
    return failures;
}

// The same scenes solved the three ways SPEC 7 describes. The propagation response swept serially
// is the immediate response's iteration, so their velocities must agree to rounding; colored
// sweeps visit contacts in another order and meet them at convergence.
int run_scene_modes(const Settings& settings, const steel_solve_options& options) {
    if (options.nesterov_momentum) return 0; // momentum needs the immediate response
    struct Mode {
        const char* name;
        int32_t response, solve_mode;
    } const modes[] = {{"immediate, serial", STEEL_RESPONSE_IMMEDIATE, STEEL_SOLVE_SERIAL},
                       {"propagation, serial", STEEL_RESPONSE_PROPAGATION, STEEL_SOLVE_SERIAL},
                       {"propagation, colored", STEEL_RESPONSE_PROPAGATION, STEEL_SOLVE_COLORED}};
    const scenes::SceneBuilder builder = example_scenes();
    const steel_scene_desc desc = builder.desc();
    std::printf("The same scenes with the propagation response and colored sweeps "
                "(docs/propagation-and-colored.md; %u sweeps)\n",
                options.iterations);
    std::printf("  %-22s %10s %28s\n", "mode", "solve", "largest |v - v_immediate|");
    std::vector<double> reference;
    int failures = 0;
    for (const Mode& mode : modes) {
        steel_solve_options mode_options = options;
        mode_options.articulated_contact_response = mode.response;
        mode_options.solve_mode = mode.solve_mode;
        ScopedBatch batch(builder.world_count(), settings, settings.threads);
        check(steel_batch_set_options(batch.handle(), &mode_options), "steel_batch_set_options");
        check(steel_batch_upload_scene(batch.handle(), &desc), "steel_batch_upload_scene");
        check(steel_batch_solve(batch.handle()), "steel_batch_solve"); // builds the propagation set
        const auto start = std::chrono::steady_clock::now();
        check(steel_batch_solve(batch.handle()), "steel_batch_solve");
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        uint64_t count = 0;
        check(steel_batch_read_velocities(batch.handle(), nullptr, 0, &count),
              "steel_batch_read_velocities");
        std::vector<double> velocity(count);
        check(steel_batch_read_velocities(batch.handle(), velocity.data(), count, nullptr),
              "steel_batch_read_velocities");
        if (reference.empty()) reference = velocity;
        double difference = 0, largest = 0;
        for (size_t k = 0; k < velocity.size(); ++k) {
            difference = std::max(difference, std::fabs(velocity[k] - reference[k]));
            largest = std::max(largest, std::fabs(reference[k]));
        }
        // Serial propagation is the same iteration: only rounding may differ.
        const double rounding = settings.precision == STEEL_PRECISION_FLOAT32 ? 1e-3 : 1e-9;
        const bool same_iteration = mode.solve_mode == STEEL_SOLVE_SERIAL;
        const bool ok = !same_iteration || difference <= rounding * (1 + largest);
        std::printf("  %-22s %10s %28.3e%s\n", mode.name, format_time(seconds).c_str(), difference,
                    same_iteration ? (ok ? "  (same iteration: ok)" : "  (same iteration: FAILED)")
                                   : "");
        if (!ok) ++failures;
    }
    std::printf("\n");
    return failures;
}

int main(int argc, char** argv) {
    const Settings settings = parse_settings(argc, argv);

    if (steel_abi_version() != STEEL_ABI_VERSION) {
        std::fprintf(stderr, "steel_demo: libsteel has ABI version %u but steel.h says %u\n",
                     steel_abi_version(), STEEL_ABI_VERSION);
        return 1;
    }
    if (!backend_available(settings)) return 77;

    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = settings.iterations;
    options.tolerance = settings.tolerance;
    options.cfm = settings.cfm;
    options.path = settings.path;
    options.nesterov_momentum = settings.momentum;

    const uint32_t features = steel_build_features();
    const uint32_t threads =
        settings.threads ? settings.threads : std::max(1u, std::thread::hardware_concurrency());
    std::printf("Steel %s (ABI %u; built with%s%s%s) - solving on the %s\n", steel_version(),
                steel_abi_version(), features & STEEL_FEATURE_FLOAT32 ? " float32" : "",
                features & STEEL_FEATURE_FLOAT64 ? " float64" : "",
                features & STEEL_FEATURE_CUDA ? " cuda" : "",
                settings.backend == STEEL_BACKEND_CUDA ? "GPU (CUDA backend)" : "CPU");
    std::printf(
        "options: %s, %u thread%s, iterations %u, tolerance %g, cfm %g, path %s, momentum %s\n\n",
        settings.precision == STEEL_PRECISION_FLOAT32 ? "float32" : "float64", threads,
        threads == 1 ? "" : "s", options.iterations, options.tolerance, options.cfm,
        path_name(options.path), options.nesterov_momentum ? "on" : "off");

    const auto start = std::chrono::steady_clock::now();
    int failures = run_stacks(settings, options);
    failures += run_random(settings, options);
    failures += run_scenes(settings, options);
    failures += run_scene_modes(settings, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::printf("Columns: path = the solver path the world was classified to (dense: small "
                "worlds, up to\n"
                "more rows the more sweeps, see docs/guide.md); sweeps = Gauss-Seidel sweeps run; "
                "residual =\n"
                "the last sweep's largest |d_i * (lambda_i' - lambda_i)| (units of J.v); converged "
                "= residual\n"
                "reached the tolerance; restarts = momentum restarts; solve = steel_batch_solve "
                "wall time.\n");
    std::printf("demo finished in %s%s\n", format_time(seconds).c_str(),
                failures ? " with failures (see above)" : "");
    return failures ? 1 : 0;
}
