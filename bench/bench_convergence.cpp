// Sweeps to tolerance and wall time per solve: plain Gauss-Seidel vs Nesterov momentum vs
// bilateral pre-elimination (where the world has bilateral rows). Results: bench/RESULTS.md.
//
//   bench_convergence [--quick]
#include "rows_scenes.hpp"

#include <steel/steel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void check(steel_status status, const char* what) {
    if (status != STEEL_OK) {
        std::fprintf(stderr, "%s failed: %s\n", what, steel_last_error_message());
        std::exit(1);
    }
}

struct Variant {
    const char* name;
    uint32_t momentum;
    uint32_t preelimination;
};

struct Outcome {
    uint32_t sweeps;
    bool converged;
    double microseconds; // per solve
};

// Solves the one-world builder to a residual of `relative` times its first sweep's residual,
// timing repeated solves until at least `min_seconds` have passed.
Outcome measure(const scenes::RowsBuilder& builder, const Variant& variant, double relative,
                uint32_t max_sweeps, double min_seconds) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    check(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch), "create");
    const steel_rows_desc rows = builder.desc();
    check(steel_batch_upload_rows(batch, &rows), "upload");
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 1;
    check(steel_batch_set_options(batch, &options), "options");
    check(steel_batch_solve(batch), "solve");
    steel_world_stats stats;
    check(steel_batch_read_world_stats(batch, sizeof(stats), &stats, 1, nullptr), "stats");
    options.iterations = max_sweeps;
    options.tolerance = relative * stats.first_residual;
    options.nesterov_momentum = variant.momentum;
    options.enable_bilateral_preelimination = variant.preelimination;
    check(steel_batch_set_options(batch, &options), "options");

    uint32_t solves = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
        check(steel_batch_solve(batch), "solve");
        ++solves;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < min_seconds);
    check(steel_batch_read_world_stats(batch, sizeof(stats), &stats, 1, nullptr), "stats");
    check(steel_batch_destroy(batch), "destroy");
    return {stats.sweeps, (stats.flags & STEEL_WORLD_CONVERGED) != 0, elapsed / solves * 1e6};
}

void print_row(const std::string& name, const std::vector<Outcome>& outcomes) {
    std::printf("| %s |", name.c_str());
    for (const Outcome& o : outcomes) {
        if (o.converged)
            std::printf(" %u | %.1f |", o.sweeps, o.microseconds);
        else
            std::printf(" > %u | %.1f |", o.sweeps, o.microseconds);
    }
    std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const double relative = 1e-6;
    const uint32_t max_sweeps = quick ? 20000 : 400000;
    const double min_seconds = quick ? 0.01 : 0.2;
    std::printf("steel %s, relative tolerance %g, at most %u sweeps, float64, 1 thread\n\n",
                steel_version(), relative, max_sweeps);

    const Variant stack_variants[] = {{"plain", 0, 0}, {"momentum", 1, 0}};
    std::printf("1D stacks (no bilateral rows): sweeps to tolerance | us per solve\n\n");
    std::printf("| case | plain sweeps | plain us | momentum sweeps | momentum us "
                "|\n|---|---|---|---|---|\n");
    const uint32_t heights[] = {5, 10, 20, 50, 100};
    const double ratios[] = {1, 10, 100, 1000};
    for (uint32_t height : heights)
        for (double ratio : ratios) {
            if (quick && height > 20) continue;
            scenes::StackSpec spec;
            spec.height = height;
            spec.top_mass = ratio;
            scenes::RowsBuilder builder;
            scenes::add_stack_world(builder, spec);
            std::vector<Outcome> outcomes;
            for (const Variant& variant : stack_variants)
                outcomes.push_back(measure(builder, variant, relative, max_sweeps, min_seconds));
            print_row("stack h=" + std::to_string(height) + " ratio=" + std::to_string(int(ratio)),
                      outcomes);
        }

    const Variant loop_variants[] = {{"plain", 0, 0},
                                     {"momentum", 1, 0},
                                     {"pre-elimination", 0, 1},
                                     {"pre-elimination + momentum", 1, 1}};
    std::printf("\nClosed loops of 3-DOF bodies (bilateral ring + contacts + limits): sweeps | us "
                "per solve\n\n");
    std::printf("| case | plain sweeps | plain us | momentum sweeps | momentum us | pre-elim "
                "sweeps | pre-elim us "
                "| pre-elim+momentum sweeps | pre-elim+momentum us "
                "|\n|---|---|---|---|---|---|---|---|---|\n");
    std::mt19937_64 rng(8);
    for (uint32_t links : {3u, 4u, 6u, 8u, 12u, 24u}) {
        scenes::RowsBuilder builder;
        scenes::add_loop_world(builder, rng, links);
        std::vector<Outcome> outcomes;
        for (const Variant& variant : loop_variants)
            outcomes.push_back(measure(builder, variant, relative, max_sweeps, min_seconds));
        print_row("loop of " + std::to_string(links), outcomes);
    }
    return 0;
}
