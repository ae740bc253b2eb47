// Fuzz target: solving arbitrary rows. Every count, index, kind and number comes from the input,
// numbers including zeros, denormals, 1e300, NaN and infinities. Properties:
//  - the upload either refuses (an error status and a message) or accepts;
//  - an accepted batch always solves (status OK, within the sweeps asked, so never a hang), and
//    every world ends either with finite impulses and velocities, or flagged
//    STEEL_WORLD_NONFINITE with its impulses zero and its velocity v-hat (SPEC 9).
#include "fuzz_input.hpp"

#include <steel/steel.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

struct Rows {
    std::vector<uint32_t> dofs, rows, block_offset, block_length;
    std::vector<double> v_hat, jacobian, response, bias, lower, upper, friction, regularization, initial;
    std::vector<int32_t> kind, normal_row;
};

Rows random_rows(fuzz::Input& in, uint32_t world_count) {
    Rows r;
    for (uint32_t w = 0; w < world_count; ++w) {
        const uint32_t n = in.below(9), m = in.below(11);
        r.dofs.push_back(n);
        r.rows.push_back(m);
        for (uint32_t k = 0; k < n; ++k) r.v_hat.push_back(in.number());
        for (uint32_t i = 0; i < m; ++i) {
            for (int b = 0; b < 2; ++b) {
                // Mostly blocks inside the world; sometimes anything.
                const bool wild = in.below(16) == 0;
                const uint32_t offset = wild ? in.u32() : (n ? in.below(n) : 0);
                const uint32_t length = wild ? in.u32() % 12 : (n > offset ? in.below(n - offset + 1) : 0);
                r.block_offset.push_back(offset);
                r.block_length.push_back(length);
                for (uint32_t k = 0; k < length; ++k) {
                    r.jacobian.push_back(in.number());
                    // Often Y = J / mass, the response of a diagonal mass matrix, so J.Y > 0.
                    r.response.push_back(in.flag() ? r.jacobian.back() * (0.5 + in.unit() * 0.4) : in.number());
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

steel_rows_desc desc_of(Rows& r, fuzz::Input& in) {
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
    if (in.below(16) == 0 && desc.value_count > 0) desc.value_count -= 1 + in.below(uint32_t(desc.value_count));
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

void check_world(const Rows& r, const std::vector<double>& impulses, const std::vector<double>& velocities,
                 const steel_world_stats& stats, uint32_t world, uint64_t row0, uint64_t dof0, uint32_t iterations,
                 bool float32) {
    const uint32_t m = r.rows[world], n = r.dofs[world];
    if (stats.sweeps > iterations) {
        std::fprintf(stderr, "world %u (%u DOFs, %u rows): %u sweeps of at most %u\n", world, n, m, stats.sweeps,
                     iterations);
        fuzz::die("a world ran more sweeps than asked");
    }
    if (stats.path != STEEL_PATH_GENERAL && stats.path != STEEL_PATH_DENSE) fuzz::die("a world reports no path");
    if (stats.flags & STEEL_WORLD_NONFINITE) {
        for (uint32_t i = 0; i < m; ++i)
            if (impulses[row0 + i] != 0.0) fuzz::die("a flagged world kept a nonzero impulse");
        for (uint32_t k = 0; k < n; ++k) {
            const double v_hat = float32 ? double(float(r.v_hat[dof0 + k])) : r.v_hat[dof0 + k];
            if (std::memcmp(&velocities[dof0 + k], &v_hat, sizeof(double)) != 0)
                fuzz::die("a flagged world's velocity is not v-hat");
        }
        return;
    }
    for (uint32_t i = 0; i < m; ++i)
        if (!std::isfinite(impulses[row0 + i])) fuzz::die("an unflagged world has a non-finite impulse");
    for (uint32_t k = 0; k < n; ++k)
        if (!std::isfinite(velocities[dof0 + k])) fuzz::die("an unflagged world has a non-finite velocity");
    if (!std::isfinite(stats.residual)) fuzz::die("an unflagged world has a non-finite residual");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Input in(data, size);
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = 1 + in.below(4);
    desc.precision = in.flag() ? STEEL_PRECISION_FLOAT32 : STEEL_PRECISION_FLOAT64;
    const bool float32 = desc.precision == STEEL_PRECISION_FLOAT32;
    steel_batch batch{};
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &batch) != STEEL_OK) fuzz::die("create failed");

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
    // Options first (they may be refused; then the defaults stay), so the upload's denominator
    // check sees them.
    const steel_status options_status = steel_batch_set_options(batch, &options);
    if (options_status != STEEL_OK && steel_last_error_message()[0] == '\0') fuzz::die("a refusal without a message");
    steel_solve_options used;
    steel_solve_options_default(&used);
    steel_batch_get_options(batch, &used);

    Rows rows = random_rows(in, desc.world_count);
    const steel_rows_desc rows_desc = desc_of(rows, in);
    if (steel_batch_upload_rows(batch, &rows_desc) != STEEL_OK) {
        if (steel_last_error_message()[0] == '\0') fuzz::die("a refused upload without a message");
        steel_batch_destroy(batch);
        return 0;
    }
    if (steel_batch_solve(batch) != STEEL_OK) fuzz::die("an accepted upload failed to solve");

    const uint64_t total_rows = rows.bias.size(), total_dofs = rows.v_hat.size();
    std::vector<double> impulses(total_rows), velocities(total_dofs);
    std::vector<steel_world_stats> stats(desc.world_count);
    uint64_t count = 0;
    uint32_t worlds = 0;
    if (steel_batch_read_impulses(batch, impulses.data(), total_rows, &count) != STEEL_OK || count != total_rows ||
        steel_batch_read_velocities(batch, velocities.data(), total_dofs, &count) != STEEL_OK ||
        count != total_dofs ||
        steel_batch_read_world_stats(batch, sizeof(steel_world_stats), stats.data(), desc.world_count, &worlds) !=
            STEEL_OK ||
        worlds != desc.world_count)
        fuzz::die("reading a solved batch failed");
    uint64_t row0 = 0, dof0 = 0;
    for (uint32_t w = 0; w < desc.world_count; ++w) {
        check_world(rows, impulses, velocities, stats[w], w, row0, dof0, used.iterations, float32);
        row0 += rows.rows[w];
        dof0 += rows.dofs[w];
    }
    steel_batch_destroy(batch);
    return 0;
}
