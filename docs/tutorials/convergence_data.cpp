// Writes the CSV data behind the convergence tutorials (docs/tutorials/*.md), straight from the
// library: make_figures.sh builds this, runs it, and turns the CSVs into PNGs with gnuplot.
//
//   convergence_data OUTPUT_DIR
#include "rows_scenes.hpp"

#include <steel/steel.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(steel_status status, const char* what) {
    if (status != STEEL_OK) {
        std::fprintf(stderr, "%s failed: %s\n", what, steel_last_error_message());
        std::exit(1);
    }
}

struct Run {
    std::vector<double> impulses;
    std::vector<double> history;
    steel_world_stats stats;
};

// Solves a one-world batch and returns its impulses, residual history and statistics.
Run solve(const scenes::RowsBuilder& builder, steel_solve_options options) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    check(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch), "create");
    const steel_rows_desc rows = builder.desc();
    check(steel_batch_upload_rows(batch, &rows), "upload");
    options.record_residual_history = 1;
    check(steel_batch_set_options(batch, &options), "options");
    check(steel_batch_solve(batch), "solve");
    Run run;
    run.impulses.resize(builder.total_rows());
    check(steel_batch_read_impulses(batch, run.impulses.data(), run.impulses.size(), nullptr),
          "impulses");
    check(steel_batch_read_world_stats(batch, sizeof(run.stats), &run.stats, 1, nullptr), "stats");
    run.history.resize(run.stats.sweeps);
    check(
        steel_batch_read_residual_history(batch, 0, run.history.data(), run.stats.sweeps, nullptr),
        "history");
    check(steel_batch_destroy(batch), "destroy");
    return run;
}

FILE* open_csv(const std::string& dir, const char* name, const char* header) {
    FILE* file = std::fopen((dir + "/" + name).c_str(), "w");
    if (!file) {
        std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name);
        std::exit(1);
    }
    std::fprintf(file, "%s\n", header);
    return file;
}

steel_solve_options options_with(uint32_t iterations, double cfm, uint32_t momentum) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = iterations;
    options.cfm = cfm;
    options.nesterov_momentum = momentum;
    return options;
}

// Relaxation and CFM: residual curves of a 10-box stack for several cfm, and what each does to
// the converged answer, next to a regularized row's.
void write_cfm(const std::string& dir) {
    scenes::StackSpec spec;
    spec.height = 10;
    scenes::RowsBuilder stack;
    scenes::add_stack_world(stack, spec);
    const double jy = 2.0; // J.Y of a contact between two unit boxes: 1/m + 1/m
    const double cfms[] = {0.0, 0.25 * jy, 1.0 * jy, 4.0 * jy};
    std::vector<Run> runs;
    for (double cfm : cfms)
        runs.push_back(solve(stack, options_with(3000, cfm, 0)));
    FILE* curves = open_csv(dir, "cfm_residuals.csv", "sweep,cfm0,cfm025,cfm1,cfm4");
    for (size_t k = 0; k < 3000; ++k) {
        std::fprintf(curves, "%zu", k + 1);
        for (const Run& run : runs)
            std::fprintf(curves, ",%.6e", k < run.history.size() ? run.history[k] : NAN);
        std::fprintf(curves, "\n");
    }
    std::fclose(curves);
    const std::vector<double> exact = scenes::stack_exact_impulses(spec);
    FILE* answers = open_csv(dir, "cfm_answers.csv", "cfm_over_jy,bottom_impulse_error");
    for (size_t r = 0; r < runs.size(); ++r)
        std::fprintf(answers, "%g,%.3e\n", cfms[r] / jy, std::fabs(runs[r].impulses[0] - exact[0]));
    std::fclose(answers);

    // One bilateral row alone: lambda against cfm (flat) and against c (follows -e/(J.Y + c)).
    FILE* single = open_csv(dir, "single_row.csv", "x,lambda_cfm,lambda_c,closed_form_c");
    for (double x = 0; x <= 4.0001; x += 0.125) {
        scenes::RowsBuilder plain, soft;
        scenes::Row row;
        row.blocks[0] = {0, {1.0}, {1.0}}; // J.Y = 1
        row.bias = -1.0;                   // e = J.v-hat + b = -1: lambda* = 1
        plain.begin_world({0.0});
        plain.add_row(row);
        row.regularization = x;
        soft.begin_world({0.0});
        soft.add_row(row);
        const double with_cfm = solve(plain, options_with(2000, x, 0)).impulses[0];
        const double with_c = solve(soft, options_with(2000, 0.0, 0)).impulses[0];
        std::fprintf(single, "%g,%.9f,%.9f,%.9f\n", x, with_cfm, with_c, 1.0 / (1.0 + x));
    }
    std::fclose(single);
}

// Settling depth of a resting box under a Baumgarte bias, stepped, for several c.
void write_settling(const std::string& dir) {
    const double mass = 1.0, gravity = 9.81, dt = 1.0 / 60.0, beta = 0.2;
    const double cs[] = {0.0, 0.05, 0.2, 0.5};
    FILE* file =
        open_csv(dir, "settling.csv", "step,c0,c005,c02,c05,predicted005,predicted02,predicted05");
    std::vector<double> height(4, 0.0), velocity(4, 0.0);
    for (uint32_t step = 1; step <= 600; ++step) {
        std::fprintf(file, "%u", step);
        for (size_t k = 0; k < 4; ++k) {
            scenes::RowsBuilder builder;
            builder.begin_world({velocity[k] - gravity * dt});
            scenes::Row row;
            row.kind = STEEL_ROW_CONTACT_NORMAL;
            row.blocks[0] = {0, {1.0}, {1.0 / mass}};
            row.bias = -beta * (-height[k]) / dt;
            row.regularization = cs[k];
            builder.add_row(row);
            const Run run = solve(builder, options_with(10, 0.0, 0));
            velocity[k] = velocity[k] - gravity * dt + run.impulses[0] / mass;
            height[k] += velocity[k] * dt;
            std::fprintf(file, ",%.6e", -height[k]);
        }
        for (size_t k = 1; k < 4; ++k)
            std::fprintf(file, ",%.6e", cs[k] * mass * gravity * dt * dt / beta);
        std::fprintf(file, "\n");
    }
    std::fclose(file);
}

// Iterations and momentum: residual per sweep of plain and accelerated sweeps on tall stacks,
// where restarts fired, and how the bottom contact's impulse creeps up under plain sweeps.
void write_momentum(const std::string& dir) {
    struct Case {
        uint32_t height;
        double ratio;
        const char* name;
    } cases[] = {{20, 1.0, "h20_r1"}, {20, 100.0, "h20_r100"}, {50, 10.0, "h50_r10"}};
    for (const Case& c : cases) {
        scenes::StackSpec spec;
        spec.height = c.height;
        spec.top_mass = c.ratio;
        scenes::RowsBuilder builder;
        scenes::add_stack_world(builder, spec);
        const uint32_t sweeps = 3000;
        const Run plain = solve(builder, options_with(sweeps, 0.0, 0));
        const Run accelerated = solve(builder, options_with(sweeps, 0.0, 1));
        FILE* file = open_csv(dir, (std::string("momentum_") + c.name + ".csv").c_str(),
                              "sweep,plain,momentum");
        const double first = plain.history[0];
        for (uint32_t k = 0; k < sweeps; ++k)
            std::fprintf(file, "%u,%.6e,%.6e\n", k + 1, plain.history[k] / first,
                         accelerated.history[k] / first);
        std::fclose(file);
    }
    // Restarts of the first case, sweep by sweep: the restart count after k + 1 sweeps.
    scenes::StackSpec spec;
    spec.height = 20;
    scenes::RowsBuilder builder;
    scenes::add_stack_world(builder, spec);
    FILE* restarts = open_csv(dir, "momentum_restarts_h20_r1.csv", "sweep,relative_residual");
    uint32_t seen = 0;
    const Run full = solve(builder, options_with(400, 0.0, 1));
    for (uint32_t k = 2; k <= 400; ++k) {
        const Run run = solve(builder, options_with(k, 0.0, 1));
        if (run.stats.momentum_restarts > seen) {
            seen = run.stats.momentum_restarts;
            std::fprintf(restarts, "%u,%.6e\n", k - 1, full.history[k - 2] / full.history[0]);
        }
    }
    std::fclose(restarts);
    // Load reaching the ground: the bottom and top contacts' impulses over plain sweeps.
    const std::vector<double> exact = scenes::stack_exact_impulses(spec);
    FILE* load =
        open_csv(dir, "load_h20.csv", "sweep,bottom_fraction,middle_fraction,top_fraction");
    for (uint32_t k = 1; k <= 2000; k += (k < 100 ? 1 : 10)) {
        const Run run = solve(builder, options_with(k, 0.0, 0));
        std::fprintf(load, "%u,%.6f,%.6f,%.6f\n", k, run.impulses[0] / exact[0],
                     run.impulses[10] / exact[10], run.impulses[19] / exact[19]);
    }
    std::fclose(load);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    write_cfm(dir);
    write_settling(dir);
    write_momentum(dir);
    std::printf("wrote the tutorial CSVs to %s\n", dir.c_str());
    return 0;
}
