#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace test {

steel_solve_options options_for(const SolveSetup& setup) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = setup.iterations;
    options.tolerance = setup.tolerance;
    options.cfm = setup.cfm;
    options.path = setup.path;
    options.warm_start = setup.warm_start;
    return options;
}

steel_batch make_batch(const scenes::RowsBuilder& builder, const SolveSetup& setup) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.precision = setup.precision;
    desc.world_count = builder.world_count();
    desc.thread_count = setup.threads;
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    return batch;
}

Solved read_all(steel_batch batch) {
    Solved solved;
    uint64_t count = 0;
    REQUIRE_OK(steel_batch_read_impulses(batch, nullptr, 0, &count));
    solved.impulses.resize(count);
    REQUIRE_OK(steel_batch_read_impulses(batch, solved.impulses.data(), count, &count));
    REQUIRE_OK(steel_batch_read_velocities(batch, nullptr, 0, &count));
    solved.velocities.resize(count);
    REQUIRE_OK(steel_batch_read_velocities(batch, solved.velocities.data(), count, &count));
    uint32_t worlds = 0;
    REQUIRE_OK(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), nullptr, 0, &worlds));
    solved.stats.resize(worlds);
    REQUIRE_OK(steel_batch_read_world_stats(batch, sizeof(steel_world_stats), solved.stats.data(),
                                            worlds, &worlds));
    return solved;
}

steel_batch solved_batch(const scenes::RowsBuilder& builder, const SolveSetup& setup,
                         const steel_solve_options& options) {
    const steel_batch batch = make_batch(builder, setup);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    return batch;
}

Solved solve(const scenes::RowsBuilder& builder, const SolveSetup& setup,
             const steel_solve_options& options) {
    const steel_batch batch = solved_batch(builder, setup, options);
    Solved solved = read_all(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    return solved;
}

Solved solve(const scenes::RowsBuilder& builder, const SolveSetup& setup) {
    return solve(builder, setup, options_for(setup));
}

std::vector<double> velocity_from(const scenes::RowsBuilder& builder,
                                  const std::vector<double>& impulses) {
    std::vector<double> velocity = builder.unconstrained_velocity;
    uint64_t dof0 = 0, row = 0, value = 0;
    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        for (uint32_t i = 0; i < builder.row_counts[w]; ++i, ++row)
            for (int k = 0; k < 2; ++k)
                for (uint32_t j = 0; j < builder.block_length[2 * row + k]; ++j, ++value)
                    velocity[dof0 + builder.block_offset[2 * row + k] + j] +=
                        builder.response[value] * impulses[row];
        dof0 += builder.dof_counts[w];
    }
    return velocity;
}

double max_abs(const std::vector<double>& values) {
    double most = 0;
    for (double value : values)
        most = std::max(most, std::fabs(value));
    return most;
}

void make_cone_pairs(scenes::RowsBuilder& builder, uint64_t row0, uint32_t row_count,
                     std::mt19937_64& rng, uint32_t regularize_one_in) {
    int32_t normal = -1;
    for (uint32_t i = 0; i < row_count; ++i) {
        const uint64_t r = row0 + i;
        if (builder.kind[r] == STEEL_ROW_CONTACT_NORMAL) {
            normal = int32_t(i);
            continue;
        }
        // Two tangent rows of one value each could be parallel: a singular pair.
        const auto values = [&](uint64_t k) {
            return builder.block_length[2 * k] + builder.block_length[2 * k + 1];
        };
        const bool pair_fits = i + 1 < row_count &&
                               builder.kind[r + 1] != STEEL_ROW_CONTACT_NORMAL && values(r) >= 2 &&
                               values(r + 1) >= 2;
        if (normal >= 0 && pair_fits && rng() % 3 == 0) {
            for (uint64_t k : {r, r + 1}) {
                builder.kind[k] = STEEL_ROW_FRICTION_CONE;
                builder.normal_row[k] = normal;
                builder.friction[k] = 0.6;
            }
            ++i;
        } else if (regularize_one_in > 0 && rng() % regularize_one_in == 0) {
            builder.regularization[r] = 0.05;
        }
    }
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
    REQUIRE(a.size() == b.size());
    double most = 0;
    for (size_t k = 0; k < a.size(); ++k)
        most = std::max(most, std::fabs(a[k] - b[k]));
    return most;
}

void report_undetected_isa(const char* name) {
    const char* list = std::getenv("STEEL_TEST_REQUIRE_ISAS");
    const std::string wanted = std::string(",") + (list ? list : "") + ",";
    if (wanted.find(std::string(",") + name + ",") != std::string::npos)
        FAIL_CHECK((std::string(name) + ": in /proc/cpuinfo, but the library does not detect it"));
    else
        MESSAGE((std::string("this processor has no ") + name + ": not compared"));
}

void check_path_taken(const Solved& solved, int32_t path) {
    REQUIRE(!solved.stats.empty());
    for (size_t w = 0; w < solved.stats.size(); ++w) {
        CAPTURE(w);
        CHECK(solved.stats[w].path == path);
    }
}

} // namespace test
