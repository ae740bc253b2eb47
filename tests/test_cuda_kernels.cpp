// CPU-run tests of the arithmetic the CUDA kernels add to the shared code (impl/cuda/*.hpp): it
// must give the CPU path's numbers, so that only summation order separates the backends.
#include "rows_scenes.hpp"
#include "support.hpp"

#include "dense_entry.hpp"
#include "dense_path.hpp"
#include "rows_upload.hpp"
#include "simd/simd_isa.hpp"

#include <cstring>
#include <random>

namespace {

using steel::simd::SimdIsa;

template <class Real> void check_dense_entries(uint64_t seed) {
    std::mt19937_64 rng(seed);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 32; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1 + uint32_t(rng() % 5);
        spec.max_body_dofs = 7;
        spec.row_count = 1 + uint32_t(rng() % 24);
        scenes::add_random_world(builder, rng, spec);
    }
    // And worlds of many more DOFs than rows, whose A build_dense_problem forms entry by entry
    // instead of from its table of Y by DOF (dense_uses_table).
    for (uint32_t w = 0; w < 4; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1400; // 8,400 DOFs: a table of 8 x 8,400 values, past the bound
        spec.min_body_dofs = spec.max_body_dofs = 6;
        spec.row_count = 2 + w;
        scenes::add_random_world(builder, rng, spec);
    }
    const steel::RowSet<Real> set =
        steel::build_row_set<Real>(builder.desc(), builder.world_count(), 0.0, 0.0);
    uint32_t tables_used = 0;
    for (uint32_t w = 0; w < set.world_count; ++w) {
        const steel::WorldRows<Real> rows = steel::world_rows(set, w);
        const uint32_t m = rows.row_count;
        const uint32_t stride = steel::dense_stride(m);
        std::vector<Real> a(size_t(m) * stride), rhs(m), table(size_t(rows.dof_count) * stride);
        tables_used += steel::dense_uses_table(m, rows.dof_count) ? 1 : 0;
        // A from the table is built by the SIMD kernels: every width must give the same A.
        std::vector<Real> first_a;
        for (SimdIsa isa : {SimdIsa::scalar, SimdIsa::avx2, SimdIsa::avx512}) {
            if (!steel::simd::simd_isa_supported(isa)) continue; // test_simd.cpp says which
            const SimdIsa previous = steel::simd::set_simd_isa(isa);
            std::fill(a.begin(), a.end(), Real(0));
            steel::build_dense_problem(rows, a.data(), rhs.data(), table.data());
            steel::simd::set_simd_isa(previous);
            if (first_a.empty()) first_a = a;
            CHECK(std::memcmp(first_a.data(), a.data(), a.size() * sizeof(Real)) == 0);
        }
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < m; ++j) {
                if (i == j) continue; // the diagonal is the stored J.Y on both sides
                const Real entry = steel::dense_entry(rows, i, j);
                CAPTURE(w);
                CAPTURE(i);
                CAPTURE(j);
                CHECK(std::memcmp(&entry, &a[size_t(i) * stride + j], sizeof(Real)) == 0);
            }
        for (uint32_t i = 0; i + 1 < m; ++i)
            if (rows.kind[i] == STEEL_ROW_FRICTION_CONE) {
                const Real cross01 = steel::dense_entry(rows, i, i + 1),
                           cross10 = steel::dense_entry(rows, i + 1, i);
                CHECK(std::memcmp(&cross01, &rows.cone_cross_01[i], sizeof(Real)) == 0);
                CHECK(std::memcmp(&cross10, &rows.cone_cross_10[i], sizeof(Real)) == 0);
                ++i;
            }
    }
    // Both ways of building A ran.
    CHECK(tables_used == 32);
    CHECK(set.world_count == 36);
}

} // namespace

TEST_CASE(
    "dense_entry gives the CPU dense path's A bit for bit, and the upload's cone cross terms") {
    check_dense_entries<double>(3);
    check_dense_entries<float>(4);
}
