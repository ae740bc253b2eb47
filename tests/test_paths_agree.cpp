// The dense path and the matrix-free sweep are the same Gauss-Seidel iteration (SPEC 2, 3): on
// random worlds they agree to rounding after every sweep, and both agree with a textbook PGS
// written here from scratch on the assembled Delassus matrix.
#include "cone_friction.hpp"
#include "rows_scenes.hpp"
#include "support.hpp"

#include <algorithm>
#include <cmath>

namespace {

// cone_pairs: some friction rows after a normal become FRICTION_CONE pairs (make_cone_pairs).
scenes::RowsBuilder random_batch(uint64_t seed, uint32_t worlds, bool cone_pairs = false) {
    std::mt19937_64 rng(seed);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < worlds; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1 + uint32_t(rng() % 5);
        spec.min_body_dofs = 1;
        spec.max_body_dofs = 7;
        spec.row_count = 1 + uint32_t(rng() % 24);
        const uint64_t row0 = builder.total_rows();
        scenes::add_random_world(builder, rng, spec);
        if (cone_pairs) test::make_cone_pairs(builder, row0, spec.row_count, rng, 0);
    }
    return builder;
}

// Textbook projected Gauss-Seidel on A = J H^-1 J^T assembled densely from the builder's arrays,
// each row's error taken on the impulses as they stand. A FRICTION_CONE pair is one 2x2 block:
// both errors first, then steel's cone_block_update (whose projection test_cone_friction.cpp
// checks against closed forms) on the pair's block of this A.
std::vector<double> reference_pgs(const scenes::RowsBuilder& b, uint32_t sweeps) {
    std::vector<double> lambda(b.total_rows(), 0.0);
    uint64_t row0 = 0, value0 = 0, dof0 = 0;
    for (uint32_t w = 0; w < b.world_count(); ++w) {
        const uint32_t m = b.row_counts[w], n = b.dof_counts[w];
        // Dense J and Y of the world (m x n).
        std::vector<double> J(size_t(m) * n, 0.0), Y(size_t(m) * n, 0.0);
        uint64_t value = value0;
        for (uint32_t i = 0; i < m; ++i)
            for (int k = 0; k < 2; ++k)
                for (uint32_t j = 0; j < b.block_length[2 * (row0 + i) + k]; ++j, ++value) {
                    const uint32_t dof = b.block_offset[2 * (row0 + i) + k] + j;
                    J[size_t(i) * n + dof] = b.jacobian[value];
                    Y[size_t(i) * n + dof] = b.response[value];
                }
        std::vector<double> A(size_t(m) * m, 0.0), rhs(m, 0.0);
        for (uint32_t i = 0; i < m; ++i) {
            for (uint32_t j = 0; j < m; ++j)
                for (uint32_t d = 0; d < n; ++d)
                    A[size_t(i) * m + j] += J[size_t(i) * n + d] * Y[size_t(j) * n + d];
            rhs[i] = b.bias[row0 + i];
            for (uint32_t d = 0; d < n; ++d)
                rhs[i] += J[size_t(i) * n + d] * b.unconstrained_velocity[dof0 + d];
        }
        double* l = lambda.data() + row0;
        const auto error = [&](uint32_t i) {
            double w_i = rhs[i];
            for (uint32_t j = 0; j < m; ++j)
                w_i += A[size_t(i) * m + j] * l[j];
            return w_i;
        };
        for (uint32_t s = 0; s < sweeps; ++s)
            for (uint32_t i = 0; i < m; ++i) {
                const uint64_t r = row0 + i;
                if (b.kind[r] == STEEL_ROW_FRICTION_CONE) {
                    const uint32_t k = i + 1;
                    const double w0 = error(i), w1 = error(k);
                    const steel::ConeStep<double> next = steel::cone_block_update(
                        w0, w1, l[i], l[k], A[size_t(i) * m + i], A[size_t(i) * m + k],
                        A[size_t(k) * m + i], A[size_t(k) * m + k], b.friction[r],
                        l[b.normal_row[r]]);
                    l[i] = next.impulse0;
                    l[k] = next.impulse1;
                    ++i;
                    continue;
                }
                double x = l[i] - error(i) / A[size_t(i) * m + i];
                switch (b.kind[r]) {
                case STEEL_ROW_BOUNDED:
                    x = std::clamp(x, b.lower[r], b.upper[r]);
                    break;
                case STEEL_ROW_CONTACT_NORMAL:
                    x = std::max(x, 0.0);
                    break;
                case STEEL_ROW_FRICTION_BOX: {
                    const double limit = b.friction[r] * l[b.normal_row[r]];
                    x = std::clamp(x, -limit, limit);
                    break;
                }
                default:
                    break;
                }
                l[i] = x;
            }
        row0 += m;
        dof0 += n;
        value0 = value;
    }
    return lambda;
}

// Solves the builder's worlds on each path for 1 to max_sweeps sweeps (in float64) and holds both
// to reference_pgs, and to each other, within 1e-12 relative after every sweep count.
void check_paths_match_reference(const scenes::RowsBuilder& builder, uint32_t max_sweeps) {
    for (uint32_t sweeps = 1; sweeps <= max_sweeps; ++sweeps) {
        test::SolveSetup setup;
        setup.iterations = sweeps;
        setup.path = STEEL_PATH_GENERAL;
        const test::Solved general = test::solve(builder, setup);
        setup.path = STEEL_PATH_DENSE;
        const test::Solved dense = test::solve(builder, setup);
        const std::vector<double> reference = reference_pgs(builder, sweeps);
        CAPTURE(sweeps);
        test::check_path_taken(general, STEEL_PATH_GENERAL);
        test::check_path_taken(dense, STEEL_PATH_DENSE);
        const double scale = std::max(1.0, test::max_abs(reference));
        CHECK(test::max_abs_diff(general.impulses, dense.impulses) <= 1e-12 * scale);
        CHECK(test::max_abs_diff(general.impulses, reference) <= 1e-12 * scale);
        CHECK(test::max_abs_diff(dense.impulses, reference) <= 1e-12 * scale);
        const double vscale = std::max(1.0, test::max_abs(general.velocities));
        CHECK(test::max_abs_diff(general.velocities, dense.velocities) <= 1e-12 * vscale);
        for (const steel_world_stats& stats : general.stats)
            CHECK(stats.sweeps == sweeps);
    }
}

} // namespace

TEST_CASE("dense and matrix-free paths agree to 1e-12 relative after every sweep in float64") {
    check_paths_match_reference(random_batch(42, 64), 40);
}

// Both paths run one group behind (a single row or a cone pair; row_kernels.inc, dense_path.hpp):
// a pair's steps are held for the single row after it, a single row's for a pair after it, and
// a pair after a pair takes the first pair's steps at once. The textbook sweep has none of this.
TEST_CASE("with cone pairs, both paths agree with a block Gauss-Seidel after every sweep") {
    const scenes::RowsBuilder builder = random_batch(5, 96, true);
    uint32_t pairs = 0, single_after_pair = 0, pair_after_pair = 0, pair_after_single = 0;
    uint64_t row0 = 0;
    for (uint32_t w = 0; w < builder.world_count(); ++w) {
        const uint32_t m = builder.row_counts[w];
        const auto cone = [&](uint32_t i) {
            return builder.kind[row0 + i] == STEEL_ROW_FRICTION_CONE;
        };
        for (uint32_t i = 0; i < m; ++i) {
            if (!cone(i)) continue;
            ++pairs;
            pair_after_single += i > 0 && !cone(i - 1);
            pair_after_pair += i > 0 && cone(i - 1);
            single_after_pair += i + 2 < m && !cone(i + 2);
            ++i;
        }
        row0 += m;
    }
    CAPTURE(pairs);
    REQUIRE(single_after_pair > 20);
    REQUIRE(pair_after_single > 20);
    REQUIRE(pair_after_pair > 0);
    check_paths_match_reference(builder, 30);
}

TEST_CASE("dense and matrix-free paths agree to float32 rounding after every sweep in float32") {
    const scenes::RowsBuilder builder = random_batch(7, 64);
    for (uint32_t sweeps = 1; sweeps <= 10; ++sweeps) {
        test::SolveSetup setup;
        setup.precision = STEEL_PRECISION_FLOAT32;
        setup.iterations = sweeps;
        setup.path = STEEL_PATH_GENERAL;
        const test::Solved general = test::solve(builder, setup);
        setup.path = STEEL_PATH_DENSE;
        const test::Solved dense = test::solve(builder, setup);
        const std::vector<double> reference = reference_pgs(builder, sweeps);
        CAPTURE(sweeps);
        test::check_path_taken(general, STEEL_PATH_GENERAL);
        test::check_path_taken(dense, STEEL_PATH_DENSE);
        // float32 carries about 6e-8 relative; a few dozen roundings per row and a few sweeps of
        // error growth stay well inside 1e-4 of the largest impulse.
        const double scale = std::max(1.0, test::max_abs(reference));
        CHECK(test::max_abs_diff(general.impulses, dense.impulses) <= 1e-4 * scale);
        CHECK(test::max_abs_diff(general.impulses, reference) <= 1e-4 * scale);
        CHECK(test::max_abs_diff(dense.impulses, reference) <= 1e-4 * scale);
    }
}

TEST_CASE("the residual each path reports agrees sweep by sweep") {
    const scenes::RowsBuilder builder = random_batch(99, 16);
    for (uint32_t sweeps : {1u, 5u, 20u}) {
        test::SolveSetup setup;
        setup.iterations = sweeps;
        setup.path = STEEL_PATH_GENERAL;
        const test::Solved general = test::solve(builder, setup);
        setup.path = STEEL_PATH_DENSE;
        const test::Solved dense = test::solve(builder, setup);
        CAPTURE(sweeps);
        test::check_path_taken(general, STEEL_PATH_GENERAL);
        test::check_path_taken(dense, STEEL_PATH_DENSE);
        for (size_t w = 0; w < general.stats.size(); ++w) {
            // Near convergence the residual is itself rounding noise: compare against the
            // first sweep's scale.
            const steel_world_stats& g = general.stats[w];
            const steel_world_stats& d = dense.stats[w];
            const double noise = 1e-12 * std::max(1.0, g.first_residual);
            CHECK(std::fabs(g.first_residual - d.first_residual) <= noise);
            CHECK(std::fabs(g.residual - d.residual) <=
                  1e-9 * std::max(g.residual, d.residual) + noise);
        }
    }
}

TEST_CASE("AUTO weighs the sweeps a solve will run: the same world goes dense only at 50") {
    // 16 rows of 24 values (two bodies of 12 DOFs, every row over both), float64: dense from
    // 50 sweeps with tolerance 0 (up to 16 rows), general at 20 (up to 14) and with a tolerance,
    // which may stop the solve early and counts as at most 20 (impl/classify.hpp).
    std::mt19937_64 rng(5);
    scenes::RowsBuilder builder;
    scenes::RandomWorldSpec spec;
    spec.body_count = 2;
    spec.min_body_dofs = spec.max_body_dofs = 12;
    spec.two_body_fraction = 1.0;
    spec.row_count = 16;
    scenes::add_random_world(builder, rng, spec);
    REQUIRE(builder.jacobian.size() == 16 * 24);

    test::SolveSetup setup;
    setup.iterations = 50;
    const test::Solved fifty = test::solve(builder, setup);
    test::check_path_taken(fifty, STEEL_PATH_DENSE);
    setup.iterations = 20;
    test::check_path_taken(test::solve(builder, setup), STEEL_PATH_GENERAL);
    setup.iterations = 50;
    setup.tolerance = 1e-300; // never reached: all 50 sweeps run, as above
    const test::Solved with_tolerance = test::solve(builder, setup);
    test::check_path_taken(with_tolerance, STEEL_PATH_GENERAL);
    CHECK(with_tolerance.stats[0].sweeps == 50);
    // Same iteration on either path: the impulses agree to rounding.
    const double scale = std::max(1.0, test::max_abs(fifty.impulses));
    CHECK(test::max_abs_diff(fifty.impulses, with_tolerance.impulses) <= 1e-10 * scale);
}
