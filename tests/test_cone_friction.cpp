// Coupled (cone) friction (SPEC 4): a contact's two tangent rows are one block projected onto
// the disk |lambda_t| <= mu lambda_n.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace {

constexpr double kMass = 2.0, kGravity = 9.81, kDt = 0.01, kMu = 0.5;

// A point mass with three translational DOFs (H = m I) resting on the ground: one contact
// normal along z and two tangent rows along x and y, as a cone pair or as two box rows.
scenes::RowsBuilder sliding_block(double vx, double vy, int32_t friction_kind) {
    scenes::RowsBuilder builder;
    builder.begin_world({vx, vy, -kGravity * kDt});
    const double inv = 1.0 / kMass;
    scenes::Row normal;
    normal.kind = STEEL_ROW_CONTACT_NORMAL;
    normal.blocks[0] = {2, {1.0}, {inv}};
    const uint32_t n = builder.add_row(normal);
    for (uint32_t axis = 0; axis < 2; ++axis) {
        scenes::Row tangent;
        tangent.kind = friction_kind;
        tangent.normal_row = int32_t(n);
        tangent.friction = kMu;
        tangent.blocks[0] = {axis, {1.0}, {inv}};
        builder.add_row(tangent);
    }
    return builder;
}

test::Solved solve_block(double vx, double vy, int32_t kind, int32_t path) {
    test::SolveSetup setup;
    setup.iterations = 200;
    setup.path = path;
    test::Solved solved = test::solve(sliding_block(vx, vy, kind), setup);
    test::check_path_taken(solved, path);
    return solved;
}

} // namespace

TEST_CASE("a sliding contact ends with |lambda_t| = mu lambda_n, opposite the slip") {
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        const double vx = 3.0, vy = -4.0; // |v_t| = 5: far more than friction can stop in one step
        const test::Solved solved = solve_block(vx, vy, STEEL_ROW_FRICTION_CONE, path);
        const double normal = solved.impulses[0];
        CHECK(normal == doctest::Approx(kMass * kGravity * kDt));
        const double tx = solved.impulses[1], ty = solved.impulses[2];
        CHECK(std::hypot(tx, ty) == doctest::Approx(kMu * normal).epsilon(1e-12));
        // Opposite the slip: lambda_t parallel to -(vx, vy).
        CHECK(tx / ty == doctest::Approx(vx / vy).epsilon(1e-12));
        CHECK(tx * vx + ty * vy < 0);
    }
}

TEST_CASE("a sticking contact stays strictly inside the disk and stops the slip") {
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        const double vx = 0.01, vy = 0.02;
        const test::Solved solved = solve_block(vx, vy, STEEL_ROW_FRICTION_CONE, path);
        const double normal = solved.impulses[0];
        const double tx = solved.impulses[1], ty = solved.impulses[2];
        CHECK(std::hypot(tx, ty) < kMu * normal);
        CHECK(tx == doctest::Approx(-kMass * vx));
        CHECK(ty == doctest::Approx(-kMass * vy));
        CHECK(std::fabs(solved.velocities[0]) < 1e-12);
        CHECK(std::fabs(solved.velocities[1]) < 1e-12);
    }
}

TEST_CASE("box and cone friction agree when the slip is along a tangent axis") {
    for (double vx : {0.05, 3.0, -7.0}) {
        const test::Solved box = solve_block(vx, 0.0, STEEL_ROW_FRICTION_BOX, STEEL_PATH_GENERAL);
        const test::Solved cone = solve_block(vx, 0.0, STEEL_ROW_FRICTION_CONE, STEEL_PATH_GENERAL);
        CAPTURE(vx);
        CHECK(test::max_abs_diff(box.impulses, cone.impulses) < 1e-12);
        CHECK(test::max_abs_diff(box.velocities, cone.velocities) < 1e-12);
    }
}

TEST_CASE("a cone pair over two bodies couples through its cross terms on both paths alike") {
    // Tangent directions that are not orthogonal in the metric of Y make A_tt non-diagonal.
    scenes::RowsBuilder builder;
    builder.begin_world({1.0, -0.5, 0.2, -3.0, 0.4});
    scenes::Row normal;
    normal.kind = STEEL_ROW_CONTACT_NORMAL;
    normal.blocks[0] = {2, {1.0}, {0.5}};
    normal.blocks[1] = {3, {-1.0, 0.3}, {-0.25, 0.1}};
    builder.add_row(normal);
    scenes::Row t0;
    t0.kind = STEEL_ROW_FRICTION_CONE;
    t0.normal_row = 0;
    t0.friction = 0.8;
    t0.blocks[0] = {0, {1.0, 0.4}, {0.5, 0.3}};
    builder.add_row(t0);
    scenes::Row t1 = t0;
    t1.blocks[0] = {0, {0.3, 1.0}, {0.2, 0.6}};
    t1.blocks[1] = {3, {0.5}, {0.2}};
    builder.add_row(t1);
    for (uint32_t sweeps : {1u, 2u, 10u, 100u}) {
        test::SolveSetup setup;
        setup.iterations = sweeps;
        setup.path = STEEL_PATH_GENERAL;
        const test::Solved general = test::solve(builder, setup);
        setup.path = STEEL_PATH_DENSE;
        const test::Solved dense = test::solve(builder, setup);
        CAPTURE(sweeps);
        test::check_path_taken(general, STEEL_PATH_GENERAL);
        test::check_path_taken(dense, STEEL_PATH_DENSE);
        CHECK(test::max_abs_diff(general.impulses, dense.impulses) < 1e-13);
        const std::vector<double> expected = test::velocity_from(builder, general.impulses);
        CHECK(test::max_abs_diff(general.velocities, expected) < 1e-13);
    }
}

namespace {

// A point body with different masses along x and y (H = diag(1, 10, 2)) and a tangent frame
// turned by 0.4 rad from its axes, so A_tt = T H^-1 T^T is neither diagonal nor a multiple of I.
constexpr double kMassX = 1.0, kMassY = 10.0, kMassZ = 2.0, kTurn = 0.4;

scenes::RowsBuilder anisotropic_block(double vx, double vy) {
    scenes::RowsBuilder builder;
    builder.begin_world({vx, vy, -kGravity * kDt});
    scenes::Row normal;
    normal.kind = STEEL_ROW_CONTACT_NORMAL;
    normal.blocks[0] = {2, {1.0}, {1.0 / kMassZ}};
    builder.add_row(normal);
    const double c = std::cos(kTurn), s = std::sin(kTurn);
    const double tangents[2][2] = {{c, s}, {-s, c}};
    for (const auto& t : tangents) {
        scenes::Row tangent;
        tangent.kind = STEEL_ROW_FRICTION_CONE;
        tangent.normal_row = 0;
        tangent.friction = kMu;
        tangent.blocks[0] = {0, {t[0], t[1]}, {t[0] / kMassX, t[1] / kMassY}};
        builder.add_row(tangent);
    }
    return builder;
}

// The tangent velocity T v of a solved anisotropic block.
std::array<double, 2> tangent_velocity(const test::Solved& solved) {
    const double c = std::cos(kTurn), s = std::sin(kTurn);
    const double vx = solved.velocities[0], vy = solved.velocities[1];
    return {c * vx + s * vy, -s * vx + c * vy};
}

// The sliding answer by a route the solver does not take: the slip is v_t = q + A_tt lambda_t
// (q = T v-hat) and must equal -nu lambda_t with |lambda_t| = r, so lambda_t = -(A_tt + nu I)^-1 q;
// |lambda_t(nu)| falls as nu grows, and bisection finds the nu where it is r.
std::array<double, 2> sliding_reference(double vx, double vy, double radius) {
    const double c = std::cos(kTurn), s = std::sin(kTurn);
    const double q0 = c * vx + s * vy, q1 = -s * vx + c * vy;
    const double a00 = c * c / kMassX + s * s / kMassY, a11 = s * s / kMassX + c * c / kMassY;
    const double a01 = -c * s / kMassX + s * c / kMassY;
    auto impulse = [&](double nu) {
        const double det = (a00 + nu) * (a11 + nu) - a01 * a01;
        return std::array<double, 2>{-((a11 + nu) * q0 - a01 * q1) / det,
                                     -((a00 + nu) * q1 - a01 * q0) / det};
    };
    double low = 0, high = 1e6;
    for (int k = 0; k < 200; ++k) {
        const double mid = 0.5 * (low + high);
        const std::array<double, 2> l = impulse(mid);
        (std::hypot(l[0], l[1]) > radius ? low : high) = mid;
    }
    return impulse(0.5 * (low + high));
}

} // namespace

TEST_CASE("on an anisotropic body the cone's friction is exactly opposite the slip") {
    // A radial scaling of the unprojected block step stops where the slip is parallel to
    // A_tt lambda_t instead: here about 20 degrees off, with |lambda_t| still on the edge.
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        for (const auto& slip :
             {std::array<double, 2>{1.0, 1.0}, std::array<double, 2>{-0.3, 2.0}}) {
            CAPTURE(path);
            CAPTURE(slip[0]);
            test::SolveSetup setup;
            setup.iterations = 300;
            setup.path = path;
            const test::Solved solved = test::solve(anisotropic_block(slip[0], slip[1]), setup);
            test::check_path_taken(solved, path);
            const double normal = solved.impulses[0];
            CHECK(normal == doctest::Approx(kMassZ * kGravity * kDt).epsilon(1e-14));
            const double l0 = solved.impulses[1], l1 = solved.impulses[2];
            const std::array<double, 2> v = tangent_velocity(solved);
            const double radius = kMu * normal;
            CHECK(std::hypot(l0, l1) == doctest::Approx(radius).epsilon(1e-13));
            // Maximal dissipation: lambda_t x v_t = 0 and lambda_t . v_t < 0.
            CHECK(std::fabs(l0 * v[1] - l1 * v[0]) < 1e-12 * radius * std::hypot(v[0], v[1]));
            CHECK(l0 * v[0] + l1 * v[1] < 0);
            const std::array<double, 2> reference = sliding_reference(slip[0], slip[1], radius);
            CHECK(l0 == doctest::Approx(reference[0]).epsilon(1e-12));
            CHECK(l1 == doctest::Approx(reference[1]).epsilon(1e-12));
            CHECK(solved.stats[0].residual < 1e-14);
        }
    }
}

TEST_CASE("on an anisotropic body a sticking cone contact stops the slip inside the disk") {
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        test::SolveSetup setup;
        setup.iterations = 300;
        setup.path = path;
        const test::Solved solved = test::solve(anisotropic_block(0.004, -0.002), setup);
        CAPTURE(path);
        test::check_path_taken(solved, path);
        const std::array<double, 2> v = tangent_velocity(solved);
        CHECK(std::hypot(solved.impulses[1], solved.impulses[2]) < kMu * solved.impulses[0]);
        CHECK(std::fabs(v[0]) < 1e-15);
        CHECK(std::fabs(v[1]) < 1e-15);
    }
}

TEST_CASE("an unclamped cone pair's residual is its velocity error, as a scalar row's is") {
    // One sweep from zero impulses: the normal row first (it is alone on z), then the pair sees
    // errors w = T v-hat, far inside a huge disk, so the residual is max |w|.
    scenes::RowsBuilder builder = anisotropic_block(0.7, -1.9);
    for (size_t r = 1; r < 3; ++r)
        builder.friction[r] = 1e6;
    test::SolveSetup setup;
    setup.iterations = 1;
    setup.path = STEEL_PATH_GENERAL;
    const test::Solved solved = test::solve(builder, setup);
    test::check_path_taken(solved, STEEL_PATH_GENERAL);
    const double c = std::cos(kTurn), s = std::sin(kTurn);
    const double w0 = c * 0.7 + s * -1.9, w1 = -s * 0.7 + c * -1.9;
    const double normal_error = kGravity * kDt;
    const double expected = std::max({std::fabs(w0), std::fabs(w1), normal_error});
    CHECK(solved.stats[0].residual == doctest::Approx(expected).epsilon(1e-14));
}

TEST_CASE("pre-eliminating a bilateral row keeps the cone's friction opposite the slip") {
    // A bilateral row locks the direction (0.3, 1) of a unit-mass body; the eliminated world's
    // A_tt is then nearly singular. Both ways of solving must find the same sliding answer.
    scenes::RowsBuilder builder;
    builder.begin_world({1.0, 0.2, -1.0});
    const double norm = std::hypot(0.3, 1.0);
    scenes::Row lock;
    lock.blocks[0] = {0, {0.3 / norm, 1.0 / norm}, {0.3 / norm, 1.0 / norm}};
    builder.add_row(lock);
    scenes::Row normal;
    normal.kind = STEEL_ROW_CONTACT_NORMAL;
    normal.blocks[0] = {2, {1.0}, {1.0}};
    builder.add_row(normal);
    for (uint32_t axis = 0; axis < 2; ++axis) {
        scenes::Row tangent;
        tangent.kind = STEEL_ROW_FRICTION_CONE;
        tangent.normal_row = 1;
        tangent.friction = kMu;
        tangent.blocks[0] = {axis, {1.0}, {1.0}};
        builder.add_row(tangent);
    }
    test::SolveSetup setup;
    setup.iterations = 300;
    const test::Solved plain = test::solve(builder, setup);
    steel_solve_options options = test::options_for(setup);
    options.enable_bilateral_preelimination = 1;
    const test::Solved eliminated = test::solve(builder, setup, options);
    CHECK(test::max_abs_diff(plain.impulses, eliminated.impulses) < 1e-9);
    CHECK(test::max_abs_diff(plain.velocities, eliminated.velocities) < 1e-9);
    // The slip along the free direction (1, -0.3) is opposed by friction along it alone.
    const double vx = plain.velocities[0], vy = plain.velocities[1];
    CHECK(std::fabs(0.3 * vx + vy) < 1e-12); // the lock holds
    CHECK(std::fabs(plain.impulses[2] * vy - plain.impulses[3] * vx) < 1e-12);
}

TEST_CASE("friction met before its normal row, with a negative warm-started normal, never pushes") {
    // Rows in the order friction x, friction y, normal (the format allows it), the normal row
    // warm-started at -1 (initial impulses are only checked for finiteness). The first sweep's
    // friction rows see lambda_n = -1: they must allow no friction, as the cone does, and leave
    // the slip (1, 0) alone rather than speed it up.
    for (int32_t kind : {STEEL_ROW_FRICTION_BOX, STEEL_ROW_FRICTION_CONE}) {
        CAPTURE(kind);
        scenes::RowsBuilder builder;
        builder.begin_world({1.0, 0.0, -kGravity * kDt});
        for (uint32_t axis = 0; axis < 2; ++axis) {
            scenes::Row tangent;
            tangent.kind = kind;
            tangent.normal_row = 2;
            tangent.friction = kMu;
            tangent.blocks[0] = {axis, {1.0}, {1.0 / kMass}};
            builder.add_row(tangent);
        }
        scenes::Row normal;
        normal.kind = STEEL_ROW_CONTACT_NORMAL;
        normal.blocks[0] = {2, {1.0}, {1.0 / kMass}};
        normal.initial_impulse = -1.0;
        builder.add_row(normal);
        test::SolveSetup setup;
        setup.iterations = 1;
        setup.path = STEEL_PATH_GENERAL;
        const test::Solved solved = test::solve(builder, setup);
        test::check_path_taken(solved, STEEL_PATH_GENERAL);
        CHECK(solved.impulses[0] == 0.0);
        CHECK(solved.impulses[1] == 0.0);
        CHECK(solved.velocities[0] == 1.0);
    }
}

TEST_CASE("cone rows must come in matching consecutive pairs") {
    scenes::RowsBuilder builder = sliding_block(1.0, 1.0, STEEL_ROW_FRICTION_CONE);
    const steel_batch batch = test::make_batch(builder, test::SolveSetup{});
    scenes::RowsBuilder lonely = builder;
    lonely.kind[2] = STEEL_ROW_FRICTION_BOX;
    steel_rows_desc rows = lonely.desc();
    CHECK(steel_batch_upload_rows(batch, &rows) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("world 0, row 1") != std::string::npos);
    CHECK(std::string(steel_last_error_message()).find("followed by its partner") !=
          std::string::npos);
    scenes::RowsBuilder mismatched = builder;
    mismatched.friction[2] = 0.9;
    rows = mismatched.desc();
    CHECK(steel_batch_upload_rows(batch, &rows) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("must match") != std::string::npos);
    scenes::RowsBuilder parallel = builder;
    parallel.block_offset[2 * 2] = 0; // both tangents along x: a singular block
    rows = parallel.desc();
    CHECK(steel_batch_upload_rows(batch, &rows) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("determinant") != std::string::npos);
    // Nearly parallel (1e-7 rad apart) is refused too: the block would amplify rounding ~1e14.
    scenes::RowsBuilder nearly = builder;
    nearly.block_length[2 * 2] = 2;
    nearly.block_offset[2 * 2] = 0;
    nearly.jacobian.clear();
    nearly.response.clear();
    for (size_t r = 0; r < 3; ++r) {
        const double angle = r == 2 ? 1e-7 : 0.0;
        const std::vector<double> j = r == 0
                                          ? std::vector<double>{1.0}
                                          : std::vector<double>{std::cos(angle), std::sin(angle)};
        for (double value : j) {
            nearly.jacobian.push_back(value);
            nearly.response.push_back(value / kMass);
        }
    }
    nearly.block_length[2 * 0] = 1;
    nearly.block_offset[2 * 0] = 2;
    nearly.block_length[2 * 1] = 2;
    nearly.block_offset[2 * 1] = 0;
    rows = nearly.desc();
    CHECK(steel_batch_upload_rows(batch, &rows) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("nearly singular") != std::string::npos);
    steel_batch_destroy(batch);
}
