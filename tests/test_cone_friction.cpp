// Coupled (cone) friction (SPEC 4): a contact's two tangent rows are one block projected onto
// the disk |lambda_t| <= mu lambda_n.
#include "rows_scenes.hpp"
#include "support.hpp"

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
    return test::solve(sliding_block(vx, vy, kind), setup);
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
        CHECK(test::max_abs_diff(general.impulses, dense.impulses) < 1e-13);
        const std::vector<double> expected = test::velocity_from(builder, general.impulses);
        CHECK(test::max_abs_diff(general.velocities, expected) < 1e-13);
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
    CHECK(std::string(steel_last_error_message()).find("followed by its partner") != std::string::npos);
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
        const std::vector<double> j = r == 0 ? std::vector<double>{1.0} : std::vector<double>{std::cos(angle), std::sin(angle)};
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
