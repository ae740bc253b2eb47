// cfm and regularization (SPEC 5): cfm relaxes plain rows without moving their fixed point;
// a regularized row is soft, and its answer follows c alone.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cmath>

namespace {

// One world, one row over two DOFs.
scenes::RowsBuilder single_row(int32_t kind, double regularization) {
    scenes::RowsBuilder builder;
    builder.begin_world({0.7, -1.3});
    scenes::Row row;
    row.kind = kind;
    row.blocks[0] = {0, {1.0, 2.0}, {0.5, 0.25}}; // J.Y = 0.5 + 0.5 = 1
    row.bias = 0.1;
    row.regularization = regularization;
    builder.add_row(row);
    return builder;
}

constexpr double kJv = 1.0 * 0.7 + 2.0 * -1.3; // J . v-hat
constexpr double kJY = 1.0;

} // namespace

TEST_CASE("an unregularized problem converges to the same impulses with and without cfm") {
    // Bilateral rows with fewer rows than DOFs: A is positive definite, the answer unique.
    std::mt19937_64 rng(5);
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 12; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 3;
        spec.min_body_dofs = 4;
        spec.max_body_dofs = 6;
        spec.row_count = 6;
        spec.mixed_kinds = false;
        scenes::add_random_world(builder, rng, spec);
    }
    for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
        test::SolveSetup setup;
        setup.path = path;
        setup.iterations = 100000;
        setup.tolerance = 1e-13;
        const test::Solved plain = test::solve(builder, setup);
        setup.cfm = 0.3;
        const test::Solved relaxed = test::solve(builder, setup);
        CAPTURE(path);
        test::check_path_taken(plain, path);
        test::check_path_taken(relaxed, path);
        for (const steel_world_stats& stats : relaxed.stats)
            CHECK((stats.flags & STEEL_WORLD_CONVERGED) != 0);
        const double scale = std::max(1.0, test::max_abs(plain.impulses));
        CHECK(test::max_abs_diff(plain.impulses, relaxed.impulses) <= 1e-9 * scale);
    }
}

TEST_CASE("one update of a row with cfm moves exactly (d - cfm)/d of the way") {
    for (double cfm : {0.0, 0.25, 1.0, 4.0}) {
        test::SolveSetup setup;
        setup.iterations = 1;
        setup.cfm = cfm;
        const test::Solved solved = test::solve(single_row(STEEL_ROW_BILATERAL, 0.0), setup);
        const double target = -(kJv + 0.1) / kJY; // the row's exact answer
        const double d = kJY + cfm;
        CHECK(solved.impulses[0] == doctest::Approx(target * (d - cfm) / d).epsilon(1e-15));
    }
}

TEST_CASE("a regularized row alone converges to -(J.v-hat + b)/(J.Y + c), whatever cfm is") {
    for (double c : {0.1, 1.0, 10.0})
        for (double cfm : {0.0, 0.5, 3.0})
            for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE}) {
                test::SolveSetup setup;
                setup.iterations = 200;
                setup.cfm = cfm;
                setup.path = path;
                const test::Solved solved = test::solve(single_row(STEEL_ROW_BILATERAL, c), setup);
                CAPTURE(c);
                CAPTURE(cfm);
                CAPTURE(path);
                test::check_path_taken(solved, path);
                CHECK(solved.impulses[0] ==
                      doctest::Approx(-(kJv + 0.1) / (kJY + c)).epsilon(1e-14));
            }
}

TEST_CASE("a regularized contact normal is soft: its impulse is smaller by J.Y/(J.Y + c)") {
    // A contact pushing apart (J.v-hat + b < 0): the stiff answer stops it, the soft one less.
    test::SolveSetup setup;
    setup.iterations = 100;
    const test::Solved stiff = test::solve(single_row(STEEL_ROW_CONTACT_NORMAL, 0.0), setup);
    const test::Solved soft = test::solve(single_row(STEEL_ROW_CONTACT_NORMAL, 0.5), setup);
    CHECK(stiff.impulses[0] == doctest::Approx(-(kJv + 0.1) / kJY));
    CHECK(soft.impulses[0] == doctest::Approx(stiff.impulses[0] * kJY / (kJY + 0.5)));
}
