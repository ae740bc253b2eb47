// The cone pair's own step (cone_block_update, impl/cone_friction.hpp) against the problem it
// solves, worked out another way: the x in the disk |x| <= r that minimizes
// 1/2 (x - lambda)^T A (x - lambda) + w^T (x - lambda). Inside, x = lambda - A^-1 w. On the edge,
// x = (A + nu I)^-1 (A lambda - w) with the nu > 0 that puts |x| on r, found here by bisection in
// long double (|x(nu)| falls as nu grows), where the step runs Newton in Real.
#include "cone_friction.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace {

struct Block {
    long double a00, a01, a11; // symmetric positive definite
    long double impulse0, impulse1, error0, error1, radius;
};

struct Point {
    long double x0, x1;
};

// (A + nu I)^-1 p.
Point shifted_solve(const Block& b, long double nu, long double p0, long double p1) {
    const long double b00 = b.a00 + nu, b11 = b.a11 + nu;
    const long double det = b00 * b11 - b.a01 * b.a01;
    return {(b11 * p0 - b.a01 * p1) / det, (b00 * p1 - b.a01 * p0) / det};
}

Point unconstrained(const Block& b) {
    const Point step = shifted_solve(b, 0, b.error0, b.error1);
    return {b.impulse0 - step.x0, b.impulse1 - step.x1};
}

Point on_edge(const Block& b) {
    const long double p0 = b.a00 * b.impulse0 + b.a01 * b.impulse1 - b.error0;
    const long double p1 = b.a01 * b.impulse0 + b.a11 * b.impulse1 - b.error1;
    const auto norm = [&](long double nu) {
        const Point x = shifted_solve(b, nu, p0, p1);
        return std::hypot(x.x0, x.x1);
    };
    long double low = 0, high = b.a00 + b.a11;
    while (norm(high) > b.radius)
        high *= 2;
    for (int k = 0; k < 200; ++k) {
        const long double middle = (low + high) / 2;
        (norm(middle) > b.radius ? low : high) = middle;
    }
    return shifted_solve(b, (low + high) / 2, p0, p1);
}

// A block with A's scale, the impulses' scale and the disk drawn over many decades.
Block random_block(std::mt19937_64& random, double decades) {
    std::uniform_real_distribution<double> unit(0, 1), signed_unit(-1, 1);
    const double scale = std::pow(10.0, decades * signed_unit(random));
    const double impulse_scale = std::pow(10.0, decades * signed_unit(random));
    Block b;
    b.a00 = scale * (0.2 + 2 * unit(random));
    b.a11 = scale * (0.2 + 2 * unit(random));
    b.a01 = 0.95 * signed_unit(random) * std::sqrt(double(b.a00 * b.a11));
    b.impulse0 = impulse_scale * signed_unit(random);
    b.impulse1 = impulse_scale * signed_unit(random);
    // Errors of a size that moves the impulse by about its own scale, so that the unconstrained
    // step lands inside the disk about as often as outside.
    b.error0 = scale * impulse_scale * 2 * signed_unit(random);
    b.error1 = scale * impulse_scale * 2 * signed_unit(random);
    b.radius = impulse_scale * 2 * unit(random);
    return b;
}

template <class Real> void check_against_bisection(double decades, double tolerance) {
    std::mt19937_64 random(20261204);
    int inside = 0, clamped = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        Block b = random_block(random, decades);
        // The block as Real holds it, so that both sides solve the same problem.
        for (long double* value :
             {&b.a00, &b.a01, &b.a11, &b.impulse0, &b.impulse1, &b.error0, &b.error1, &b.radius})
            *value = Real(*value);
        const steel::ConeStep<Real> step = steel::cone_block_update<Real>(
            Real(b.error0), Real(b.error1), Real(b.impulse0), Real(b.impulse1), Real(b.a00),
            Real(b.a01), Real(b.a01), Real(b.a11), Real(1), Real(b.radius));
        const Point free = unconstrained(b);
        const long double free_norm = std::hypot(free.x0, free.x1);
        // Too near the edge to say which side rounding puts it on.
        if (std::fabs(free_norm - b.radius) < 1e-3 * b.radius) continue;
        const Point expected = free_norm < b.radius ? free : on_edge(b);
        const long double size = std::max(b.radius, free_norm);
        CAPTURE(trial);
        CAPTURE(double(b.a00));
        CAPTURE(double(b.impulse0));
        CAPTURE(double(b.radius));
        REQUIRE(std::isfinite(double(step.impulse0)));
        REQUIRE(std::isfinite(double(step.impulse1)));
        CHECK(double(std::fabs(step.impulse0 - expected.x0) / size) < tolerance);
        CHECK(double(std::fabs(step.impulse1 - expected.x1) / size) < tolerance);
        if (free_norm < b.radius) {
            ++inside;
        } else {
            ++clamped;
            // On the edge, to rounding.
            const long double norm = std::hypot((long double)step.impulse0, step.impulse1);
            CHECK(double(std::fabs(norm - b.radius) / b.radius) < tolerance);
        }
    }
    CHECK(inside > 3000);
    CHECK(clamped > 3000);
}

} // namespace

TEST_CASE("a cone pair's step is the disk-constrained minimizer, in float64") {
    check_against_bisection<double>(6, 1e-10);
}

TEST_CASE("a cone pair's step is the disk-constrained minimizer, in float32, over 12 decades") {
    check_against_bisection<float>(6, 2e-3);
}
