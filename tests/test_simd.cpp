// The CPU's SIMD general sweep (impl/simd/row_kernels.hpp): one canonical summation order, so
// scalar, AVX2 and AVX-512 give the same bits; a dot product as accurate as any other order; an
// update that equals the portable one exactly; and a sweep that agrees with the portable (GPU)
// sweep to rounding.
#include "dense_path.hpp"
#include "error.hpp"
#include "general_sweep.hpp"
#include "rows_scenes.hpp"
#include "rows_upload.hpp"
#include "simd/row_kernels.hpp"
#include "simd/simd_isa.hpp"
#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using steel::simd::SimdIsa;

namespace {

const SimdIsa kAllIsas[] = {SimdIsa::scalar, SimdIsa::avx2, SimdIsa::avx512};

// The widths this processor can run; says which it cannot.
std::vector<SimdIsa> supported_isas() {
    std::vector<SimdIsa> isas;
    for (SimdIsa isa : kAllIsas) {
        if (steel::simd::simd_isa_supported(isa))
            isas.push_back(isa);
        else
            test::report_undetected_isa(steel::simd::simd_isa_name(isa));
    }
    return isas;
}

// Sets the width for a scope and puts the previous one back.
class IsaScope {
  public:
    explicit IsaScope(SimdIsa isa) : previous_(steel::simd::set_simd_isa(isa)) {}
    ~IsaScope() { steel::simd::set_simd_isa(previous_); }
    IsaScope(const IsaScope&) = delete;
    IsaScope& operator=(const IsaScope&) = delete;

  private:
    SimdIsa previous_;
};

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Random worlds whose rows cover whole bodies of min_dofs to max_dofs DOFs (so 1 to max_dofs values
// per block), over one or two bodies, of every kind: bilateral, bounded, contact normal, box
// friction, and cone pairs made from two consecutive rows after a normal; some rows regularized.
scenes::RowsBuilder random_worlds(uint64_t seed, uint32_t worlds, uint32_t max_dofs,
                                  uint32_t min_dofs = 1) {
    std::mt19937_64 rng(seed);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < worlds; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1 + uint32_t(rng() % 4);
        spec.min_body_dofs = min_dofs;
        spec.max_body_dofs = max_dofs;
        spec.row_count = 1 + uint32_t(rng() % 24);
        const uint64_t row0 = builder.total_rows();
        scenes::add_random_world(builder, rng, spec);
        test::make_cone_pairs(builder, row0, spec.row_count, rng, 5);
    }
    return builder;
}

test::Solved solve_general(const scenes::RowsBuilder& builder, int32_t precision) {
    const steel_batch batch = test::make_batch(builder, test::SolveSetup{precision});
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.path = STEEL_PATH_GENERAL;
    options.iterations = 30;
    options.tolerance = 0;
    options.warm_start = 0;
    options.cfm = 1e-4;
    options.contact_regularization = 1e-3;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    test::Solved solved = test::read_all(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    return solved;
}

// Rows over hand-made blocks, for the kernels one at a time: a world of `dofs` DOFs, row r with
// blocks of lengths[r] values at offsets[r].
template <class Real> struct KernelRows {
    std::vector<uint32_t> block_offset, block_length;
    std::vector<uint64_t> value_offset{0};
    std::vector<Real> values;

    void add_row(uint32_t offset0, uint32_t length0, uint32_t offset1, uint32_t length1,
                 std::mt19937_64& rng) {
        block_offset.insert(block_offset.end(), {offset0, offset1});
        block_length.insert(block_length.end(), {length0, length1});
        for (uint32_t k = 0; k < length0 + length1; ++k)
            values.push_back(random_value(rng));
        value_offset.push_back(values.size());
    }

    steel::WorldRows<Real> view(uint32_t dofs) const {
        steel::WorldRows<Real> rows{};
        rows.dof_count = dofs;
        rows.row_count = uint32_t(value_offset.size() - 1);
        rows.block_offset = block_offset.data();
        rows.block_length = block_length.data();
        rows.value_offset = value_offset.data();
        rows.jacobian = values.data();
        rows.response = values.data();
        return rows;
    }

    // Signs and magnitudes over 12 orders: any change of summation order shows in the bits.
    static Real random_value(std::mt19937_64& rng) {
        const double magnitude = std::pow(10.0, 12.0 * scenes::uniform01(rng) - 6.0);
        return Real(scenes::uniform01(rng) < 0.5 ? -magnitude : magnitude);
    }
};

// Every pair of block lengths 0..40 (all the tails and block boundaries of a chunk of 8 or 16,
// plus a few long rows, at assorted offsets in a world of 512 DOFs.
template <class Real> KernelRows<Real> all_block_lengths(std::mt19937_64& rng) {
    KernelRows<Real> rows;
    std::vector<std::pair<uint32_t, uint32_t>> lengths;
    for (uint32_t a = 0; a <= 40; ++a)
        for (uint32_t b = 0; b <= 40; ++b)
            if (a + b > 0) lengths.emplace_back(a, b);
    for (uint32_t a : {63u, 64u, 65u, 127u, 128u, 129u, 200u})
        lengths.emplace_back(a, a % 7);
    for (const auto& [a, b] : lengths)
        rows.add_row(uint32_t(rng() % 50), a, 250 + uint32_t(rng() % 50), b, rng);
    return rows;
}

template <class Real> std::vector<Real> random_vector(uint32_t n, std::mt19937_64& rng) {
    std::vector<Real> x(n);
    for (Real& value : x)
        value = KernelRows<Real>::random_value(rng);
    return x;
}

// row_kernels.hpp's canonical order, one value at a time: kDotLanes partial sums over each
// block's whole chunks, kTailSums tail sums over the rest (value j of a block's tail to tail sum
// j mod kTailSums), the pairwise tree, then the tail sums' total.
template <class Real>
Real canonical_dot(const steel::WorldRows<Real>& rows, uint32_t row, const Real* x) {
    constexpr uint32_t lanes = steel::simd::kDotLanes<Real>;
    Real partial[lanes], tail_sum[steel::simd::kTailSums];
    std::fill(std::begin(partial), std::end(partial), -Real(0)); // every sum starts at -0
    std::fill(std::begin(tail_sum), std::end(tail_sum), -Real(0));
    bool whole_chunk = false;
    const Real* value = rows.jacobian + rows.value_offset[row];
    for (uint32_t block = 0; block < 2; ++block) {
        const uint32_t length = rows.block_length[2 * row + block];
        const Real* xs = x + rows.block_offset[2 * row + block];
        uint32_t k = 0;
        for (; k + lanes <= length; k += lanes, whole_chunk = true)
            for (uint32_t l = 0; l < lanes; ++l)
                partial[l] = partial[l] + value[k + l] * xs[k + l];
        for (uint32_t j = 0; k < length; ++k, ++j)
            tail_sum[j % steel::simd::kTailSums] =
                tail_sum[j % steel::simd::kTailSums] + value[k] * xs[k];
        value += length;
    }
    const Real tail = (tail_sum[0] + tail_sum[2]) + (tail_sum[1] + tail_sum[3]);
    if (!whole_chunk) return tail;
    for (uint32_t half = lanes / 2; half > 0; half /= 2)
        for (uint32_t l = 0; l < half; ++l)
            partial[l] = partial[l] + partial[l + half];
    return partial[0] + tail;
}

// The builder's rows as the batch stores them (options' cfm and regularization 0).
template <class Real> steel::RowSet<Real> row_set_of(const scenes::RowsBuilder& builder) {
    const steel_rows_desc desc = builder.desc();
    steel::RowSet<Real> set;
    try {
        set = steel::build_row_set<Real>(desc, builder.world_count(), 0.0, 0.0);
    } catch (const steel::Error& error) {
        FAIL(error.message);
    }
    return set;
}

// A sweep in the canonical order, one value at a time (canonical_dot, the portable row_axpy),
// around the shared row update: what every width's sweep must give bit for bit, whatever shortcuts
// it takes for rows it recognizes (row_kernels.inc's rows over free bodies). It runs one group
// (a single row or a cone pair) behind on v as the kernels do (row_kernels.inc): a row's rate is
// its dot product on v before the previous group's steps are added, plus A_i,g times each of
// those steps in row order, A_i,g taken from dense_entry here; except that a pair's steps go
// into v before another pair's dot products.
template <class Real>
steel::SweepResult<Real> canonical_sweep(const steel::WorldRows<Real>& rows,
                                         const steel::SolveParams<Real>& params, Real* impulse,
                                         Real* velocity) {
    steel::SweepResult<Real> result;
    uint32_t held_first = 0, held_count = 0; // the previous group, its steps not yet in v
    Real held_step[2] = {0, 0};
    const auto add_held_steps = [&] {
        for (uint32_t g = 0; g < held_count; ++g)
            steel::row_axpy(rows, held_first + g, rows.response, held_step[g], velocity);
        held_count = 0;
    };
    for (uint32_t i = 0; i < rows.row_count;) {
        const uint32_t count = rows.kind[i] == STEEL_ROW_FRICTION_CONE ? 2 : 1;
        if (count == 2 && held_count == 2) add_held_steps();
        Real rate[2] = {0, 0};
        for (uint32_t k = 0; k < count; ++k) {
            rate[k] = canonical_dot(rows, i + k, velocity);
            for (uint32_t g = 0; g < held_count; ++g)
                rate[k] = rate[k] + steel::dense_entry(rows, i + k, held_first + g) * held_step[g];
        }
        add_held_steps();
        const steel::RowError<Real> error0{rate[0], rows.bias[i]};
        const steel::RowError<Real> error1 = count == 2
                                                 ? steel::RowError<Real>{rate[1], rows.bias[i + 1]}
                                                 : steel::RowError<Real>{0, 0};
        REQUIRE(steel::update_rows(rows, i, params, error0, error1, impulse, held_step, result) ==
                count);
        held_first = i;
        held_count = count;
        i += count;
    }
    add_held_steps();
    return result;
}

// 20 sweeps of every world of `builder` on every width, by general_sweep (which forms each row's
// SweepRow as it goes) and by general_sweep_prepared (from rows prepared once, as the solver does),
// against canonical_sweep: the same bits.
template <class Real> void check_sweeps_are_canonical(const scenes::RowsBuilder& builder) {
    const steel::RowSet<Real> set = row_set_of<Real>(builder);
    const steel::SolveParams<Real> params{Real(1e-4), Real(1e-3)};
    uint32_t loaded = 0; // worlds whose impulses are not all zero
    for (SimdIsa isa : supported_isas()) {
        CAPTURE(steel::simd::simd_isa_name(isa));
        const IsaScope scope(isa);
        for (uint32_t w = 0; w < set.world_count; ++w) {
            CAPTURE(w);
            const steel::WorldRows<Real> rows = steel::world_rows(set, w);
            std::vector<steel::SweepRow<Real>> prepared(rows.row_count);
            steel::prepare_general_sweep_rows(rows, params, prepared.data());
            std::vector<Real> impulse(rows.row_count, Real(0)), velocity(rows.dof_count);
            steel::portable_velocity_from_impulses(rows, impulse.data(), velocity.data());
            std::vector<Real> expected_impulse = impulse, expected_velocity = velocity;
            std::vector<Real> prepared_impulse = impulse, prepared_velocity = velocity;
            for (uint32_t sweep = 0; sweep < 20; ++sweep) {
                const steel::SweepResult<Real> got =
                    steel::general_sweep(rows, params, impulse.data(), velocity.data());
                const steel::SweepResult<Real> got_prepared = steel::simd::general_sweep_prepared(
                    rows, params, prepared.data(), prepared_impulse.data(),
                    prepared_velocity.data());
                const steel::SweepResult<Real> expected = canonical_sweep(
                    rows, params, expected_impulse.data(), expected_velocity.data());
                REQUIRE(std::memcmp(&got.residual, &expected.residual, sizeof(Real)) == 0);
                REQUIRE(std::memcmp(&got_prepared.residual, &expected.residual, sizeof(Real)) == 0);
            }
            loaded += std::any_of(impulse.begin(), impulse.end(), [](Real x) { return x != 0; });
            REQUIRE(same_bits(impulse, expected_impulse));
            REQUIRE(same_bits(velocity, expected_velocity));
            REQUIRE(same_bits(prepared_impulse, expected_impulse));
            REQUIRE(same_bits(prepared_velocity, expected_velocity));
        }
    }
    CHECK(loaded > set.world_count / 2);
}

// Worlds of free bodies only (6 DOFs each), so most rows are the sweep's rows over free bodies
// (two blocks of 6 values, or 6 and none), which take their own code.
template <class Real> void check_free_body_rows_are_canonical() {
    const scenes::RowsBuilder builder = random_worlds(17, 24, 6, 6);
    uint32_t two_bodies = 0, one_body = 0;
    for (size_t r = 0; r < builder.kind.size(); ++r)
        if (builder.kind[r] != STEEL_ROW_FRICTION_CONE && builder.block_length[2 * r] == 6) {
            two_bodies += builder.block_length[2 * r + 1] == 6;
            one_body += builder.block_length[2 * r + 1] == 0;
        }
    CHECK(two_bodies > 50);
    CHECK(one_body > 50);
    check_sweeps_are_canonical<Real>(builder);
}

template <class Real> void check_dot_is_canonical() {
    std::mt19937_64 rng(7);
    const KernelRows<Real> kernel_rows = all_block_lengths<Real>(rng);
    const steel::WorldRows<Real> rows = kernel_rows.view(512);
    const std::vector<Real> x = random_vector<Real>(512, rng);
    uint32_t order_matters = 0; // rows where the in-order sum gives other bits
    for (SimdIsa isa : supported_isas()) {
        CAPTURE(steel::simd::simd_isa_name(isa));
        const IsaScope scope(isa);
        for (uint32_t row = 0; row < rows.row_count; ++row) {
            CAPTURE(row);
            const Real expected = canonical_dot(rows, row, x.data());
            const Real got = steel::simd::row_dot(rows, row, rows.jacobian, x.data());
            REQUIRE(std::memcmp(&got, &expected, sizeof(Real)) == 0);
            if (isa == SimdIsa::scalar && steel::row_dot(rows, row, rows.jacobian, x.data()) != got)
                ++order_matters;
        }
    }
    CHECK(order_matters > rows.row_count / 4); // the comparison above has teeth
}

template <class Real> void check_dot_accuracy() {
    std::mt19937_64 rng(11);
    const KernelRows<Real> kernel_rows = all_block_lengths<Real>(rng);
    const steel::WorldRows<Real> rows = kernel_rows.view(512);
    const std::vector<Real> x = random_vector<Real>(512, rng);
    const long double eps = std::numeric_limits<Real>::epsilon();
    for (SimdIsa isa : supported_isas()) {
        CAPTURE(steel::simd::simd_isa_name(isa));
        const IsaScope scope(isa);
        for (uint32_t row = 0; row < rows.row_count; ++row) {
            long double exact = 0, magnitude = 0;
            const Real* value = rows.jacobian + rows.value_offset[row];
            uint32_t length = 0;
            for (uint32_t block = 0; block < 2; ++block)
                for (uint32_t k = 0; k < rows.block_length[2 * row + block]; ++k, ++length) {
                    const long double term = (long double)(*value++) *
                                             (long double)x[rows.block_offset[2 * row + block] + k];
                    exact += term;
                    magnitude += std::fabs(term);
                }
            const Real got = steel::simd::row_dot(rows, row, rows.jacobian, x.data());
            CAPTURE(row);
            CAPTURE(length);
            CHECK(std::fabs((long double)got - exact) <= length * eps * magnitude);
        }
    }
}

template <class Real> void check_axpy_is_portable() {
    std::mt19937_64 rng(13);
    const KernelRows<Real> kernel_rows = all_block_lengths<Real>(rng);
    const steel::WorldRows<Real> rows = kernel_rows.view(512);
    const std::vector<Real> start = random_vector<Real>(512, rng);
    for (SimdIsa isa : supported_isas()) {
        CAPTURE(steel::simd::simd_isa_name(isa));
        const IsaScope scope(isa);
        for (uint32_t row = 0; row < rows.row_count; ++row) {
            CAPTURE(row);
            const Real scale = KernelRows<Real>::random_value(rng);
            std::vector<Real> expected = start, got = start; // DOFs outside the blocks: canaries
            steel::row_axpy(rows, row, rows.response, scale, expected.data());
            steel::simd::row_axpy(rows, row, rows.response, scale, got.data());
            REQUIRE(same_bits(got, expected));
        }
    }
}

} // namespace

TEST_CASE("SIMD general sweep: bit-identical impulses, velocities and stats on every width") {
    for (const auto& [seed, max_dofs] : {std::pair<uint64_t, uint32_t>{3, 20}, {4, 200}}) {
        const scenes::RowsBuilder builder = random_worlds(seed, 16, max_dofs);
        for (int32_t kind = STEEL_ROW_BILATERAL; kind <= STEEL_ROW_FRICTION_CONE; ++kind)
            CHECK(std::count(builder.kind.begin(), builder.kind.end(), kind) > 0);
        CHECK(*std::max_element(builder.regularization.begin(), builder.regularization.end()) > 0);
        CHECK(*std::max_element(builder.block_length.begin(), builder.block_length.end()) >
              (max_dofs * 3) / 4);
        for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64}) {
            CAPTURE(max_dofs);
            CAPTURE(precision);
            std::vector<test::Solved> runs;
            for (SimdIsa isa : supported_isas()) {
                const IsaScope scope(isa);
                runs.push_back(solve_general(builder, precision));
            }
            REQUIRE(!runs.empty());
            CHECK(test::max_abs(runs[0].impulses) > 0);
            for (const test::Solved& run : runs) {
                CHECK(same_bits(run.impulses, runs[0].impulses));
                CHECK(same_bits(run.velocities, runs[0].velocities));
                CHECK(std::memcmp(run.stats.data(), runs[0].stats.data(),
                                  run.stats.size() * sizeof(steel_world_stats)) == 0);
            }
        }
    }
}

TEST_CASE("SIMD general sweep over free bodies gives the canonical order's bits on every width") {
    check_free_body_rows_are_canonical<float>();
    check_free_body_rows_are_canonical<double>();
}

TEST_CASE("SIMD general sweep, prepared or not, gives the canonical order's bits on mixed rows") {
    // Bodies of 1 to 40 DOFs: chunks and tails, every row kind, cone pairs, regularized rows.
    const scenes::RowsBuilder builder = random_worlds(5, 32, 40);
    CHECK(std::count(builder.kind.begin(), builder.kind.end(), STEEL_ROW_FRICTION_CONE) > 0);
    check_sweeps_are_canonical<float>(builder);
    check_sweeps_are_canonical<double>(builder);
}

TEST_CASE("SIMD dot product sums in the canonical order on every width, float32 and float64") {
    check_dot_is_canonical<float>();
    check_dot_is_canonical<double>();
}

TEST_CASE("SIMD dot product is within length * eps * sum |J x| of a long double reference") {
    check_dot_accuracy<float>();
    check_dot_accuracy<double>();
}

TEST_CASE("SIMD update v += Y step equals the portable one bit for bit and stays in its blocks") {
    check_axpy_is_portable<float>();
    check_axpy_is_portable<double>();
}

TEST_CASE("SIMD general sweep agrees with the portable (GPU) sweep to 1e-12 relative") {
    const scenes::RowsBuilder builder = random_worlds(5, 32, 40);
    const steel::RowSet<double> set = row_set_of<double>(builder);
    const steel::SolveParams<double> params{1e-4, 1e-3};
    for (SimdIsa isa : supported_isas()) {
        CAPTURE(steel::simd::simd_isa_name(isa));
        const IsaScope scope(isa);
        for (uint32_t w = 0; w < set.world_count; ++w) {
            const steel::WorldRows<double> rows = steel::world_rows(set, w);
            std::vector<double> impulse_simd(rows.row_count, 0.0), velocity_simd(rows.dof_count);
            std::vector<double> impulse_portable = impulse_simd, velocity_portable = velocity_simd;
            steel::velocity_from_impulses(rows, impulse_simd.data(), velocity_simd.data());
            steel::portable_velocity_from_impulses(rows, impulse_portable.data(),
                                                   velocity_portable.data());
            REQUIRE(same_bits(velocity_simd, velocity_portable));
            for (uint32_t sweep = 0; sweep < 20; ++sweep) {
                steel::general_sweep(rows, params, impulse_simd.data(), velocity_simd.data());
                steel::portable_general_sweep(rows, params, impulse_portable.data(),
                                              velocity_portable.data());
            }
            const double scale = std::max(1.0, test::max_abs(impulse_portable));
            CAPTURE(w);
            CHECK(test::max_abs_diff(impulse_simd, impulse_portable) <= 1e-12 * scale);
            CHECK(test::max_abs_diff(velocity_simd, velocity_portable) <=
                  1e-12 * std::max(1.0, test::max_abs(velocity_portable)));
        }
    }
}

// The sweep runs one group behind on v (row_kernels.inc): a row adds the previous group's steps
// (a single row's, or a cone pair's two) to its rate through its couplings, which must be A_i,g
// of the dense path's A (built from the table of responses, another code than dense_entry's) for
// the rows g of the group before row i's, and 0 where that group has no such row, or where both
// groups are pairs (the sweep holds no pair's steps for another pair).
TEST_CASE("a row's couplings are the dense path's A_i,g for the rows g of the group before") {
    const scenes::RowsBuilder builder = random_worlds(11, 32, 12);
    const steel::RowSet<double> set = row_set_of<double>(builder);
    const steel::SolveParams<double> params{1e-4, 1e-3};
    uint32_t coupled = 0, after_pair = 0, of_pair = 0, pair_after_pair = 0;
    for (uint32_t w = 0; w < set.world_count; ++w) {
        const steel::WorldRows<double> rows = steel::world_rows(set, w);
        const uint32_t m = rows.row_count, stride = steel::dense_stride(m);
        std::vector<double> a(size_t(m) * stride), rhs(m), table(size_t(rows.dof_count) * stride);
        REQUIRE(steel::dense_uses_table(m, rows.dof_count));
        steel::build_dense_problem(rows, a.data(), rhs.data(), table.data());
        std::vector<steel::SweepRow<double>> prepared(m);
        steel::prepare_general_sweep_rows(rows, params, prepared.data());
        // The group before row i's, found by walking the groups here (a pair is two CONE rows).
        uint32_t previous_first = 0, previous_count = 0;
        for (uint32_t i = 0; i < m;) {
            const uint32_t count = rows.kind[i] == STEEL_ROW_FRICTION_CONE ? 2 : 1;
            if (count == 2 && previous_count == 2) {
                previous_count = 0;
                ++pair_after_pair;
            }
            for (uint32_t r = i; r < i + count; ++r) {
                CAPTURE(w);
                CAPTURE(r);
                for (uint32_t k = 0; k < 2; ++k) {
                    CAPTURE(k);
                    if (k < previous_count) {
                        const double entry = a[size_t(r) * stride + previous_first + k];
                        CHECK(std::memcmp(&prepared[r].coupling[k], &entry, sizeof(double)) == 0);
                        coupled += entry != 0;
                        after_pair += entry != 0 && previous_count == 2;
                        of_pair += entry != 0 && count == 2;
                    } else {
                        CHECK(prepared[r].coupling[k] == 0.0);
                    }
                }
                // The sweep formed on the fly carries the same couplings.
                const steel::SweepRow<double> formed = steel::general_sweep_row(
                    rows, r, params, steel::RowGroup{previous_first, previous_count});
                CHECK(std::memcmp(formed.coupling, prepared[r].coupling, sizeof(formed.coupling)) ==
                      0);
            }
            previous_first = i;
            previous_count = count;
            i += count;
        }
    }
    CHECK(coupled > 100);
    CHECK(after_pair > 10); // couplings to a pair's rows
    CHECK(of_pair > 10);    // a pair's rows coupled to the group before
    CHECK(pair_after_pair > 0);
}

TEST_CASE("the SIMD width can be narrowed and put back") {
    CHECK(steel::simd::simd_isa_supported(SimdIsa::scalar));
    const SimdIsa in_use = steel::simd::simd_isa();
    CHECK(steel::simd::simd_isa_supported(in_use));
    {
        const IsaScope scope(SimdIsa::scalar);
        CHECK(steel::simd::simd_isa() == SimdIsa::scalar);
    }
    CHECK(steel::simd::simd_isa() == in_use);
}
