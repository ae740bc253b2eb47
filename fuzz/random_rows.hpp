// Arbitrary rows for the fuzz targets that solve them (fuzz_solve_rows.cpp on the CPU backend,
// fuzz_cuda_emulated.cpp on the emulated CUDA kernels): every count, index, kind and number from
// the input, numbers including zeros, denormals, 1e300, NaN and infinities; and the check every
// solved world must pass.
#pragma once

#include "fuzz_input.hpp"

#include <steel/steel.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace fuzz {

struct Rows {
    std::vector<uint32_t> dofs, rows, block_offset, block_length;
    std::vector<double> v_hat, jacobian, response, bias, lower, upper, friction, regularization,
        initial;
    std::vector<int32_t> kind, normal_row;
};

inline Rows random_rows(Input& in, uint32_t world_count) {
    Rows r;
    for (uint32_t w = 0; w < world_count; ++w) {
        const uint32_t n = in.below(9), m = in.below(11);
        r.dofs.push_back(n);
        r.rows.push_back(m);
        for (uint32_t k = 0; k < n; ++k)
            r.v_hat.push_back(in.number());
        for (uint32_t i = 0; i < m; ++i) {
            for (int b = 0; b < 2; ++b) {
                // Mostly blocks inside the world; sometimes anything.
                const bool wild = in.below(16) == 0;
                const uint32_t offset = wild ? in.u32() : (n ? in.below(n) : 0);
                const uint32_t length =
                    wild ? in.u32() % 12 : (n > offset ? in.below(n - offset + 1) : 0);
                r.block_offset.push_back(offset);
                r.block_length.push_back(length);
                for (uint32_t k = 0; k < length; ++k) {
                    r.jacobian.push_back(in.number());
                    // Often Y = J / mass, the response of a diagonal mass matrix, so J.Y > 0.
                    r.response.push_back(in.flag() ? r.jacobian.back() * (0.5 + in.unit() * 0.4)
                                                   : in.number());
                }
            }
            r.bias.push_back(in.number());
            const int32_t kind = int32_t(in.below(6));
            r.kind.push_back(in.below(32) == 0 ? kind - 3 : kind); // now and then not a kind at all
            r.lower.push_back(in.number());
            r.upper.push_back(in.number());
            r.normal_row.push_back(int32_t(in.below(m + 2)) - 1);
            r.friction.push_back(in.flag() ? std::fabs(in.unit()) : in.number());
            r.regularization.push_back(in.flag() ? 0.0 : in.number());
            r.initial.push_back(in.flag() ? 0.0 : in.number());
        }
    }
    return r;
}

inline steel_rows_desc desc_of(Rows& r, Input& in) {
    steel_rows_desc desc;
    steel_rows_desc_default(&desc);
    desc.world_count = uint32_t(r.dofs.size());
    desc.world_dof_counts = r.dofs.data();
    desc.world_row_counts = r.rows.data();
    desc.unconstrained_velocity = r.v_hat.data();
    desc.block_offset = r.block_offset.data();
    desc.block_length = r.block_length.data();
    // value_count is what the blocks hold, or (rarely) a wrong count no larger than the arrays.
    desc.value_count = r.jacobian.size();
    if (in.below(16) == 0 && desc.value_count > 0)
        desc.value_count -= 1 + in.below(uint32_t(desc.value_count));
    desc.jacobian = r.jacobian.data();
    desc.response = r.response.data();
    desc.bias = r.bias.data();
    desc.kind = r.kind.data();
    // Optional arrays are sometimes absent.
    desc.lower = in.below(8) ? r.lower.data() : nullptr;
    desc.upper = in.below(8) ? r.upper.data() : nullptr;
    desc.normal_row = in.below(8) ? r.normal_row.data() : nullptr;
    desc.friction = in.below(8) ? r.friction.data() : nullptr;
    desc.regularization = in.below(4) ? r.regularization.data() : nullptr;
    desc.initial_impulse = in.below(4) ? r.initial.data() : nullptr;
    return desc;
}

// A solved world: within the sweeps asked, a path, and either finite or flagged
// STEEL_WORLD_NONFINITE with zero impulses and velocity v-hat (SPEC 9).
inline void check_world(const Rows& r, const std::vector<double>& impulses,
                        const std::vector<double>& velocities, const steel_world_stats& stats,
                        uint32_t world, uint64_t row0, uint64_t dof0, uint32_t iterations,
                        bool float32) {
    const uint32_t m = r.rows[world], n = r.dofs[world];
    if (stats.sweeps > iterations) {
        std::fprintf(stderr, "world %u (%u DOFs, %u rows): %u sweeps of at most %u\n", world, n, m,
                     stats.sweeps, iterations);
        die("a world ran more sweeps than asked");
    }
    if (stats.path != STEEL_PATH_GENERAL && stats.path != STEEL_PATH_DENSE)
        die("a world reports no path");
    if (stats.flags & STEEL_WORLD_NONFINITE) {
        for (uint32_t i = 0; i < m; ++i)
            if (impulses[row0 + i] != 0.0) die("a flagged world kept a nonzero impulse");
        for (uint32_t k = 0; k < n; ++k) {
            const double v_hat = float32 ? double(float(r.v_hat[dof0 + k])) : r.v_hat[dof0 + k];
            if (std::memcmp(&velocities[dof0 + k], &v_hat, sizeof(double)) != 0)
                die("a flagged world's velocity is not v-hat");
        }
        return;
    }
    for (uint32_t i = 0; i < m; ++i)
        if (!std::isfinite(impulses[row0 + i])) die("an unflagged world has a non-finite impulse");
    for (uint32_t k = 0; k < n; ++k)
        if (!std::isfinite(velocities[dof0 + k]))
            die("an unflagged world has a non-finite velocity");
    if (!std::isfinite(stats.residual)) die("an unflagged world has a non-finite residual");
}

// A CPU batch of 1 to 4 worlds from the input: its precision, options (set first, so the
// upload's denominator check sees them; a refused set leaves the defaults) and rows. `batch` is
// left empty (id 0, destroyed) when the upload refused them, with a message.
struct RandomBatch {
    steel_batch batch{};
    steel_solve_options used; // the options in force
    bool float32 = false;
    Rows rows;
};

inline RandomBatch upload_random_batch(Input& in) {
    RandomBatch made;
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = 1 + in.below(4);
    desc.precision = in.flag() ? STEEL_PRECISION_FLOAT32 : STEEL_PRECISION_FLOAT64;
    made.float32 = desc.precision == STEEL_PRECISION_FLOAT32;
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &made.batch) != STEEL_OK) die("create failed");

    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 1 + in.below(30);
    options.tolerance = in.flag() ? 0.0 : in.number();
    options.cfm = in.flag() ? 0.0 : in.number();
    options.path = int32_t(in.below(3));
    options.warm_start = in.below(2);
    options.contact_regularization = in.flag() ? 0.0 : in.number();
    options.nesterov_momentum = in.below(2);
    options.enable_bilateral_preelimination = in.below(2);
    options.record_residual_history = in.below(2);
    const steel_status options_status = steel_batch_set_options(made.batch, &options);
    if (options_status != STEEL_OK && steel_last_error_message()[0] == '\0')
        die("a refusal without a message");
    steel_solve_options_default(&made.used);
    steel_batch_get_options(made.batch, &made.used);

    made.rows = random_rows(in, desc.world_count);
    const steel_rows_desc rows_desc = desc_of(made.rows, in);
    if (steel_batch_upload_rows(made.batch, &rows_desc) != STEEL_OK) {
        if (steel_last_error_message()[0] == '\0') die("a refused upload without a message");
        steel_batch_destroy(made.batch);
        made.batch = steel_batch{};
    }
    return made;
}

// A solved batch's impulses, velocities and world stats, read through the C API.
struct Results {
    std::vector<double> impulses, velocities;
    std::vector<steel_world_stats> stats;
};

inline Results read_results(const RandomBatch& made) {
    Results out;
    const uint64_t total_rows = made.rows.bias.size(), total_dofs = made.rows.v_hat.size();
    const uint32_t world_count = uint32_t(made.rows.dofs.size());
    out.impulses.resize(total_rows);
    out.velocities.resize(total_dofs);
    out.stats.resize(world_count);
    uint64_t count = 0;
    uint32_t worlds = 0;
    if (steel_batch_read_impulses(made.batch, out.impulses.data(), total_rows, &count) !=
            STEEL_OK ||
        count != total_rows ||
        steel_batch_read_velocities(made.batch, out.velocities.data(), total_dofs, &count) !=
            STEEL_OK ||
        count != total_dofs ||
        steel_batch_read_world_stats(made.batch, sizeof(steel_world_stats), out.stats.data(),
                                     world_count, &worlds) != STEEL_OK ||
        worlds != world_count)
        die("reading a solved batch failed");
    return out;
}

// check_world on every world of a solved batch's results.
inline void check_worlds(const RandomBatch& made, const Results& results) {
    uint64_t row0 = 0, dof0 = 0;
    for (uint32_t w = 0; w < made.rows.dofs.size(); ++w) {
        check_world(made.rows, results.impulses, results.velocities, results.stats[w], w, row0,
                    dof0, made.used.iterations, made.float32);
        row0 += made.rows.rows[w];
        dof0 += made.rows.dofs[w];
    }
}

} // namespace fuzz
