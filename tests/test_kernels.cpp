// White-box tests of the shared kernel bodies (impl/*.hpp): the same functions a GPU backend
// will run, exercised on the CPU.
#include "classify.hpp"
#include "dense_cholesky.hpp"
#include "row_update.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

using steel::project_impulse;

TEST_CASE("projection onto each row kind's set") {
    CHECK(project_impulse(STEEL_ROW_BILATERAL, -5.0, 0.0, 0.0, 0.0, 0.0) == -5.0);
    CHECK(project_impulse(STEEL_ROW_BOUNDED, -5.0, -1.0, 2.0, 0.0, 0.0) == -1.0);
    CHECK(project_impulse(STEEL_ROW_BOUNDED, 5.0, -1.0, 2.0, 0.0, 0.0) == 2.0);
    CHECK(project_impulse(STEEL_ROW_BOUNDED, 0.5, -1.0, 2.0, 0.0, 0.0) == 0.5);
    CHECK(project_impulse(STEEL_ROW_CONTACT_NORMAL, -0.5, 7.0, 9.0, 0.0, 0.0) ==
          0.0); // bounds ignored
    CHECK(project_impulse(STEEL_ROW_CONTACT_NORMAL, 3.0, 0.0, 0.0, 0.0, 0.0) == 3.0);
    // Friction: [-mu ln, mu ln] with the live normal impulse.
    CHECK(project_impulse(STEEL_ROW_FRICTION_BOX, 3.0, 0.0, 0.0, 0.5, 4.0) == 2.0);
    CHECK(project_impulse(STEEL_ROW_FRICTION_BOX, -3.0, 0.0, 0.0, 0.5, 4.0) == -2.0);
    CHECK(project_impulse(STEEL_ROW_FRICTION_BOX, 1.5, 0.0, 0.0, 0.5, 4.0) == 1.5);
    CHECK(project_impulse(STEEL_ROW_FRICTION_BOX, 1.5, 0.0, 0.0, 0.5, 0.0) == 0.0);
    // A negative live normal impulse allows no friction (it must not swap the bounds).
    CHECK(project_impulse(STEEL_ROW_FRICTION_BOX, 1.5, 0.0, 0.0, 0.5, -1.0) == 0.0);
    CHECK(project_impulse(STEEL_ROW_FRICTION_BOX, -1.5, 0.0, 0.0, 0.5, -1.0) == 0.0);
}

TEST_CASE("projection keeps NaN visible for the non-finite check") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int32_t kind :
         {STEEL_ROW_BILATERAL, STEEL_ROW_BOUNDED, STEEL_ROW_CONTACT_NORMAL, STEEL_ROW_FRICTION_BOX})
        CHECK(std::isnan(project_impulse(kind, nan, -1.0, 1.0, 0.5, 1.0)));
}

TEST_CASE("the row update is a Gauss-Seidel step on the soft condition") {
    // error = J.v + b = 2, d = J.Y + cfm = 4: lambda moves by -2/4, however the error splits
    // into the rate J.v and the bias b (exact in binary here).
    using Error = steel::RowError<double>;
    CHECK(steel::updated_impulse(Error{2.0, 0.0}, 1.0, 4.0, 0.0, STEEL_ROW_BILATERAL, 0.0, 0.0, 0.0,
                                 0.0) == 0.5);
    CHECK(steel::updated_impulse(Error{1.5, 0.5}, 1.0, 4.0, 0.0, STEEL_ROW_BILATERAL, 0.0, 0.0, 0.0,
                                 0.0) == 0.5);
    CHECK(steel::updated_impulse(Error{-6.0, 8.0}, 1.0, 4.0, 0.0, STEEL_ROW_BILATERAL, 0.0, 0.0,
                                 0.0, 0.0) == 0.5);
    // Regularized: error gains c * lambda = 0.5 * 1, d = J.Y + c.
    const double d = steel::row_denominator(3.0, 0.5, 100.0);
    CHECK(d == 3.5); // cfm left out of a regularized row
    CHECK(steel::updated_impulse(Error{2.0, 0.0}, 1.0, d, 0.5, STEEL_ROW_BILATERAL, 0.0, 0.0, 0.0,
                                 0.0) == doctest::Approx(1.0 - 2.5 / 3.5));
    CHECK(steel::row_denominator(3.0, 0.0, 0.25) == 3.25);
}

TEST_CASE("classification follows the requested path and the dense size limit") {
    constexpr int32_t f32 = STEEL_PRECISION_FLOAT32, f64 = STEEL_PRECISION_FLOAT64;
    for (int32_t precision : {f32, f64})
        for (uint32_t sweeps : {1u, 10u, 20u, 50u}) {
            CAPTURE(precision);
            CAPTURE(sweeps);
            const auto path = [&](int32_t requested, uint32_t m, uint64_t values) {
                return steel::classify_world(requested, m, values, precision, sweeps);
            };
            CHECK(path(STEEL_PATH_GENERAL, 4, 24) == STEEL_PATH_GENERAL);
            CHECK(path(STEEL_PATH_DENSE, 4, 24) == STEEL_PATH_DENSE);
            CHECK(path(STEEL_PATH_DENSE, STEEL_DENSE_MAX_ROWS, 1) == STEEL_PATH_DENSE);
            CHECK(path(STEEL_PATH_DENSE, STEEL_DENSE_MAX_ROWS + 1, 1) == STEEL_PATH_GENERAL);
            CHECK(path(STEEL_PATH_AUTO, 0, 0) == STEEL_PATH_GENERAL);
            // Under AUTO rows with no values never go dense, nor big worlds, nor any world in
            // fewer than 10 sweeps; small worlds do from 10 sweeps (in float64 not with rows of
            // one value, the general sweep's fastest case: see the next test case).
            const int32_t small = sweeps < 10 ? STEEL_PATH_GENERAL : STEEL_PATH_DENSE;
            CHECK(path(STEEL_PATH_AUTO, 3, 0) == STEEL_PATH_GENERAL);
            CHECK(path(STEEL_PATH_AUTO, 1, 1) == (precision == f32 ? small : STEEL_PATH_GENERAL));
            CHECK(path(STEEL_PATH_AUTO, 2, 2 * 2) == small);
            CHECK(path(STEEL_PATH_AUTO, 4, 4 * 5) == small);
            CHECK(path(STEEL_PATH_AUTO, 8, 8 * 64) == small);
            CHECK(path(STEEL_PATH_AUTO, 33, 33 * 64) == STEEL_PATH_GENERAL);
            CHECK(path(STEEL_PATH_AUTO, 1000, 1000 * 12) == STEEL_PATH_GENERAL);
        }
}

TEST_CASE("AUTO's dense bound grows with the sweeps a solve is sure to run") {
    using steel::dense_auto_max_rows;
    constexpr int32_t f32 = STEEL_PRECISION_FLOAT32, f64 = STEEL_PRECISION_FLOAT64;
    // A tolerance may stop a solve early: it counts as at most 20 sweeps.
    CHECK(steel::classified_sweeps(50, 0.0) == 50);
    CHECK(steel::classified_sweeps(50, 1e-6) == 20);
    CHECK(steel::classified_sweeps(12, 1e-6) == 12);
    // Fewer than 10 sweeps: never dense (measured at 5, dense was at most 1.14x faster).
    for (int32_t precision : {f32, f64})
        for (uint64_t values : {1u, 6u, 15u, 64u})
            CHECK(dense_auto_max_rows(precision, values, 9) == 0);
    // Rows of 2 to 5 values: 12 (float32) or 10 rows at 10 sweeps; 12 at 20; 14 at 50. Rows of
    // 1 value: the same in float32, never dense in float64. Rows of exactly 6 values (a free
    // body's): never dense.
    for (uint64_t values : {1u, 2u, 5u}) {
        CHECK(dense_auto_max_rows(f32, values, 10) == 12);
        CHECK(dense_auto_max_rows(f64, values, 10) == (values == 1 ? 0 : 10));
        CHECK(dense_auto_max_rows(f32, values, 20) == 12);
        CHECK(dense_auto_max_rows(f64, values, 20) == (values == 1 ? 0 : 12));
        CHECK(dense_auto_max_rows(f32, values, 50) == 14);
        CHECK(dense_auto_max_rows(f64, values, 50) == (values == 1 ? 0 : 14));
    }
    for (int32_t precision : {f32, f64})
        for (uint32_t sweeps : {10u, 20u, 50u, 500u})
            CHECK(dense_auto_max_rows(precision, 6, sweeps) == 0);
    // The tables of impl/classify.hpp at their edges (bench/RESULTS.md has the measurements).
    // float64: 10 sweeps (8 from 7 values), 20 (12 / 14 / 18 / 20 from 7, 16, 32, 64 values) and
    // 50 (14 / 16 / 22 / 30 from 7, 16, 32, 64 values).
    CHECK(dense_auto_max_rows(f64, 7, 10) == 8);
    CHECK(dense_auto_max_rows(f64, 64, 19) == 8);
    CHECK(dense_auto_max_rows(f64, 7, 20) == 12);
    CHECK(dense_auto_max_rows(f64, 15, 20) == 12);
    CHECK(dense_auto_max_rows(f64, 16, 49) == 14);
    CHECK(dense_auto_max_rows(f64, 32, 20) == 18);
    CHECK(dense_auto_max_rows(f64, 64, 20) == 20);
    CHECK(dense_auto_max_rows(f64, 7, 50) == 14);
    CHECK(dense_auto_max_rows(f64, 31, 50) == 16);
    CHECK(dense_auto_max_rows(f64, 63, 50) == 22);
    CHECK(dense_auto_max_rows(f64, 64, 500) == 30);
    // float32: 10 sweeps (8 from 7 values), 20 (12 / 16 from 7, 32 values) and 50 (12 / 14 /
    // 18 / 24 from 7, 16, 32, 64 values).
    CHECK(dense_auto_max_rows(f32, 7, 10) == 8);
    CHECK(dense_auto_max_rows(f32, 64, 19) == 8);
    CHECK(dense_auto_max_rows(f32, 31, 20) == 12);
    CHECK(dense_auto_max_rows(f32, 32, 20) == 16);
    CHECK(dense_auto_max_rows(f32, 7, 50) == 12);
    CHECK(dense_auto_max_rows(f32, 16, 50) == 14);
    CHECK(dense_auto_max_rows(f32, 32, 50) == 18);
    CHECK(dense_auto_max_rows(f32, 64, 50) == 24);
    // More sweeps never take a world off the dense path, in either precision.
    for (int32_t precision : {f32, f64})
        for (uint64_t values = 1; values <= 80; ++values)
            for (uint32_t sweeps = 1; sweeps < 60; ++sweeps) {
                CAPTURE(precision);
                CAPTURE(values);
                CAPTURE(sweeps);
                CHECK(dense_auto_max_rows(precision, values, sweeps) <=
                      dense_auto_max_rows(precision, values, sweeps + 1));
            }
}

TEST_CASE("four Cholesky solves at once give each one's bits alone, and solve the system") {
    // The scene build's Y = H~^-1 J^T (cholesky_solve_in_place_4) against one solve at a time,
    // on random positive definite matrices M M^T + n I of every size a joint tree reaches.
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (uint32_t n : {1u, 2u, 5u, 6u, 7u, 14u, 31u}) {
        CAPTURE(n);
        std::vector<double> m(size_t(n) * n), h(size_t(n) * n, 0.0);
        for (double& value : m)
            value = uniform(random);
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = 0; j < n; ++j) {
                for (uint32_t k = 0; k < n; ++k)
                    h[size_t(i) * n + j] += m[size_t(i) * n + k] * m[size_t(j) * n + k];
                if (i == j) h[size_t(i) * n + j] += n;
            }
        std::vector<double> l = h;
        REQUIRE(steel::cholesky_factor_in_place(l.data(), n));
        std::vector<double> b(4 * size_t(n));
        for (double& value : b)
            value = uniform(random);
        std::vector<double> together = b, alone = b;
        double* const x[4] = {together.data() + 2 * n, together.data(), together.data() + 3 * n,
                              together.data() + n}; // any four blocks, in any order
        steel::cholesky_solve_in_place_4(l.data(), n, x);
        for (uint32_t r = 0; r < 4; ++r)
            steel::cholesky_solve_in_place(l.data(), n, alone.data() + size_t(r) * n);
        CHECK(std::memcmp(together.data(), alone.data(), together.size() * sizeof(double)) == 0);
        for (uint32_t r = 0; r < 4; ++r) // H x = b, to rounding
            for (uint32_t i = 0; i < n; ++i) {
                double hx = 0;
                for (uint32_t j = 0; j < n; ++j)
                    hx += h[size_t(i) * n + j] * together[size_t(r) * n + j];
                CHECK(hx == doctest::Approx(b[size_t(r) * n + i]).epsilon(1e-10));
            }
    }
}
