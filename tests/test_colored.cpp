// The colored solve mode (SPEC 7): valid colors, the serial answer at convergence, and
// bit-identical results for any thread count and on every SIMD width.
#include "batch.hpp"
#include "colored/colored_plan.hpp"
#include "colored/contact_packs.hpp"
#include "handle_registry.hpp"
#include "propagation/propagation_build.hpp"
#include "robot_scenes.hpp"
#include "rows_upload.hpp"
#include "scene/scene_rows.hpp"
#include "scene_support.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <type_traits>
#include <variant>

namespace steel::testing {
// impl/cpu_solver.cpp: colored worlds solved alone with their colors split over the pool.
extern std::atomic<uint32_t> colored_worlds_split;
} // namespace steel::testing

namespace {

using scenes::ContactSpec;
using scenes::SceneBuilder;

// Colored sweeps under the propagation response unless a test says otherwise.
struct Mode : test::SceneMode {
    Mode() {
        response = STEEL_RESPONSE_PROPAGATION;
        solve_mode = STEEL_SOLVE_COLORED;
    }
};

test::Solved solve_with(const steel_scene_desc& scene, const Mode& mode) {
    return test::solve_with(scene, mode);
}

// `bodies` free boxes and `contacts` random contacts between random pairs of them or with the
// ground, all slightly penetrating, per world.
SceneBuilder random_piles(uint32_t worlds, uint32_t bodies, uint32_t contacts, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    SceneBuilder builder;
    for (uint32_t w = 0; w < worlds; ++w) {
        builder.begin_world();
        for (uint32_t b = 0; b < bodies; ++b)
            builder.add_body(
                scenes::free_box(0.5 + 0.5 * (unit(rng) + 1), {0.5, 0.5, 0.5},
                                 {3 * unit(rng), 3 * unit(rng), 1 + 2 * (unit(rng) + 1)}));
        for (uint32_t c = 0; c < contacts; ++c) {
            const int32_t a = int32_t(rng() % bodies);
            int32_t b = int32_t(rng() % (bodies + 1)) - 1; // -1: the ground
            if (b == a) b = -1;
            double n[3] = {unit(rng), unit(rng), 1.5};
            const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            builder.add_contact(ContactSpec{a,
                                            b,
                                            {3 * unit(rng), 3 * unit(rng), 2 * (unit(rng) + 1)},
                                            {n[0] / length, n[1] / length, n[2] / length},
                                            -0.01 * (unit(rng) + 1),
                                            0.5,
                                            0});
        }
    }
    return builder;
}

struct Built {
    steel::scene::SceneRecord record;
    steel::RowSet<double> rows;
    steel::propagation::PropagationSet<double> set;
    steel::colored::ColoredPlan<double> plan;
};

Built build(const steel_scene_desc& desc) {
    Built out;
    const steel::scene::BuiltRows built =
        steel::scene::build_scene_rows(desc, desc.world_count, out.record);
    out.rows = steel::build_row_set<double>(built.desc(), desc.world_count, 0.0, 0.0);
    out.set = steel::propagation::build_propagation_set(out.record, out.rows);
    out.plan = steel::colored::build_colored_plan(out.rows, out.set);
    return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

} // namespace

TEST_CASE("colored: no two contacts of a color share a responding unit, on random piles") {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
        SceneBuilder builder = random_piles(3, 40, 300, seed);
        const Built built = build(builder.desc());
        const auto& plan = built.plan;
        uint32_t colored_contacts = 0;
        for (uint32_t w = 0; w < 3; ++w) {
            const uint32_t row0 = built.rows.world_row_offset[w];
            std::vector<std::set<int32_t>> units(steel::colored::kMaxColors);
            for (uint32_t r = row0; r < built.rows.world_row_offset[w + 1]; ++r) {
                if (built.rows.kind[r] != STEEL_ROW_CONTACT_NORMAL) continue;
                const uint32_t color = plan.row_color[r];
                if (color == steel::colored::kMaxColors) continue;
                ++colored_contacts;
                for (int32_t unit : {plan.row_unit_a[r], plan.row_unit_b[r]}) {
                    if (unit < 0) continue;
                    CHECK(units[color].insert(unit).second); // a unit appears once per color
                }
                // Its friction rows carry the same color.
                CHECK(plan.row_color[r + 1] == color);
                CHECK(plan.row_color[r + 2] == color);
            }
        }
        CHECK(colored_contacts == 900); // 300 contacts a world: none overflowed at 40 bodies
        CHECK(plan.packs.count > 0);
    }
}

TEST_CASE("colored: pack lanes fill in order, hold three consecutive rows and share no body") {
    // What the pack kernel relies on (impl/colored/contact_pack_kernel.inc, pack_lanes.inc): it
    // stops at a pack's first padding lane, one pointer per lane names its three impulses, and
    // the lanes' bodies are stored in any order.
    constexpr uint32_t L = steel::colored::ContactPacks<double>::lanes;
    SceneBuilder builder = random_piles(3, 40, 300, 11);
    const Built built = build(builder.desc());
    const auto& packs = built.plan.packs;
    REQUIRE(packs.count > 10);
    uint32_t lanes_used = 0, partial_packs = 0;
    for (uint32_t pack = 0; pack < packs.count; ++pack) {
        std::set<int32_t> bodies;
        bool padding_seen = false;
        for (uint32_t lane = 0; lane < L; ++lane) {
            const int32_t* rows = packs.impulse_index.data() + size_t(pack) * 3 * L + lane;
            if (rows[0] < 0) {
                CHECK(lane > 0); // no pack is all padding
                CHECK(rows[L] < 0);
                CHECK(rows[2 * L] < 0);
                partial_packs += padding_seen ? 0 : 1;
                padding_seen = true;
                continue;
            }
            CHECK_FALSE(padding_seen); // a contact after a padding lane would never be solved
            ++lanes_used;
            CHECK(rows[L] == rows[0] + 1);
            CHECK(rows[2 * L] == rows[0] + 2);
            for (uint32_t side = 0; side < 2; ++side) {
                const int32_t body = packs.velocity_offset[(size_t(pack) * 2 + side) * L + lane];
                if (body >= 0) CHECK(bodies.insert(body).second);
            }
        }
    }
    CHECK(lanes_used > packs.count); // packs hold more than one contact each
    CHECK(partial_packs > 0);        // and the last of a color is often partial
}

TEST_CASE("colored: more contacts on one body than colors go to the serial group") {
    SceneBuilder builder;
    builder.begin_world();
    builder.add_body(scenes::free_box(1, {0.5, 0.5, 0.5}, {0, 0, 0.5}));
    for (uint32_t c = 0; c < steel::colored::kMaxColors + 6; ++c)
        builder.add_contact(ContactSpec{0, -1, {0.01 * c, 0, 0}, {0, 0, 1}, -0.001, 0.5, 0});
    const Built built = build(builder.desc());
    uint32_t serial = 0;
    for (uint32_t r = 0; r < built.rows.total_rows(); ++r)
        if (built.rows.kind[r] == STEEL_ROW_CONTACT_NORMAL &&
            built.plan.row_color[r] == steel::colored::kMaxColors)
            ++serial;
    CHECK(serial == 6);
    // And it still converges to the serial answer.
    Mode serial_mode, colored_mode;
    serial_mode.solve_mode = STEEL_SOLVE_SERIAL;
    serial_mode.iterations = colored_mode.iterations = 4000;
    const test::Solved a = solve_with(builder.desc(), serial_mode),
                       b = solve_with(builder.desc(), colored_mode);
    // The normal impulses of 70 redundant contacts are not unique; the body's motion is.
    CHECK(test::max_abs_diff(a.velocities, b.velocities) <= 1e-8);
}

TEST_CASE("colored: converges to the serial answer") {
    struct Case {
        const char* name;
        void (*build)(SceneBuilder&);
    };
    const Case cases[] = {
        {"stack of 3", [](SceneBuilder& b) { scenes::add_box_stack(b, 3); }},
        {"pile of 40", [](SceneBuilder& b) { scenes::add_box_pile(b, 40); }},
        {"arm with box", [](SceneBuilder& b) { scenes::add_arm_with_box(b, 0.8, 40.0); }},
        {"legged robot", [](SceneBuilder& b) { scenes::add_legged_robot(b); }},
    };
    for (const Case& c : cases) {
        CAPTURE(std::string(c.name));
        SceneBuilder builder;
        builder.begin_world();
        c.build(builder);
        Mode serial, colored;
        serial.solve_mode = STEEL_SOLVE_SERIAL;
        serial.iterations = colored.iterations = 3000;
        const test::Solved a = solve_with(builder.desc(), serial),
                           b = solve_with(builder.desc(), colored);
        CHECK(a.stats[0].residual <= 1e-9);
        CHECK(b.stats[0].residual <= 1e-9);
        CHECK(test::max_abs_diff(a.velocities, b.velocities) <=
              1e-8 * (1 + test::max_abs(a.velocities)));
        CHECK(test::max_abs_diff(a.impulses, b.impulses) <= 1e-6 * test::max_abs(a.impulses));
    }
}

namespace {

// How many of a color's contacts the last pack of the color holds, per color with packs, for
// packs of `lanes` (a color's contacts are the same whatever the precision; only the lanes per
// pack differ).
std::vector<uint32_t> last_pack_fills(const steel::colored::ColoredPlan<double>& plan,
                                      uint32_t lanes) {
    constexpr uint32_t L = steel::colored::ContactPacks<double>::lanes;
    std::vector<uint32_t> fills;
    for (size_t c = 0; c + 1 < plan.color_pack_offset.size(); ++c) {
        uint32_t packed = 0;
        for (uint32_t pack = plan.color_pack_offset[c]; pack < plan.color_pack_offset[c + 1];
             ++pack)
            for (uint32_t lane = 0; lane < L; ++lane)
                packed += plan.packs.impulse_index[size_t(pack) * 3 * L + lane] >= 0 ? 1 : 0;
        if (packed > 0) fills.push_back(packed % lanes == 0 ? lanes : packed % lanes);
    }
    return fills;
}

} // namespace

TEST_CASE("colored: bit-identical for any thread count and on every SIMD width") {
    using steel::colored::PackIsa;
    SceneBuilder builder = random_piles(6, 30, 200, 42);
    scenes::add_arm_with_box(builder, 0.8, 40.0); // a tree in the last world: scalar contacts too
    builder.begin_world();
    scenes::add_box_stack(builder, 5); // colors of one to three contacts
    const steel_scene_desc desc = builder.desc();

    // The pack kernel solves a pack's used lanes with full, half or (float32) quarter-width
    // vectors (contact_pack_kernel.inc); every one of them must run here. Last packs of 1-4,
    // 5-8 and more lanes, of each precision's packs.
    const Built built = build(desc);
    for (uint32_t lanes : {steel::colored::kPackLanes<float>, steel::colored::kPackLanes<double>}) {
        CAPTURE(lanes);
        bool quarter = false, half = false, full = false;
        for (uint32_t fill : last_pack_fills(built.plan, lanes)) {
            quarter |= fill <= lanes / 4;
            half |= fill > lanes / 4 && fill <= lanes / 2;
            full |= fill > lanes / 2;
        }
        CHECK(quarter);
        CHECK(half);
        CHECK(full);
    }
    const PackIsa original = steel::colored::pack_isa();
    for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64}) {
        CAPTURE(precision);
        std::vector<test::Solved> runs;
        for (PackIsa isa : {PackIsa::scalar, PackIsa::avx2, PackIsa::avx512}) {
            if (!steel::colored::pack_isa_supported(isa)) {
                test::report_undetected_isa(steel::colored::pack_isa_name(isa));
                continue;
            }
            steel::colored::set_pack_isa(isa);
            for (uint32_t threads : {1u, 2u, 5u}) {
                Mode mode;
                mode.precision = precision;
                mode.threads = threads;
                mode.iterations = 25;
                runs.push_back(solve_with(desc, mode));
            }
        }
        steel::colored::set_pack_isa(original);
        REQUIRE(runs.size() >= 3);
        CHECK(test::max_abs(runs[0].impulses) > 0);
        for (const test::Solved& run : runs) {
            CHECK(same_bits(run.impulses, runs[0].impulses));
            CHECK(same_bits(run.velocities, runs[0].velocities));
            CHECK(std::memcmp(run.stats.data(), runs[0].stats.data(),
                              run.stats.size() * sizeof(steel_world_stats)) == 0);
        }
    }
}

TEST_CASE("colored: a world larger than the rest split over threads gives the same bits") {
    // One big world: fewer worlds than threads, so a color of at least 256 packs is spread over
    // the pool. 5,000 boxes each on the ground make one color of 5,000 contacts (625 packs in
    // float64, 313 in float32); random contacts between them add smaller colors.
    SceneBuilder builder;
    builder.begin_world();
    for (int32_t box = 0; box < 5000; ++box)
        builder.add_body(scenes::free_box(1.0 + 0.001 * box, {0.5, 0.5, 0.5}, {1.1 * box, 0, 0.5}));
    for (int32_t box = 0; box < 5000; ++box) // first, so all of them take color 0
        builder.add_contact(ContactSpec{box, -1, {1.1 * box, 0.2, 0}, {0, 0, 1}, -0.001, 0.5, 0});
    std::mt19937 rng(7);
    for (int c = 0; c < 2000; ++c) {
        const int32_t a = int32_t(rng() % 5000), b = int32_t((a + 1 + rng() % 4998) % 5000);
        builder.add_contact(
            ContactSpec{a, b, {1.1 * a + 0.5, 0, 0.5}, {0.6, 0, 0.8}, -0.002, 0.4, 0});
    }
    const Built built = build(builder.desc());
    REQUIRE(built.plan.color_pack_offset[1] - built.plan.color_pack_offset[0] ==
            625); // split: >= 256
    const steel_scene_desc desc = builder.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64}) {
        CAPTURE(precision);
        Mode mode;
        mode.precision = precision;
        mode.iterations = 10;
        const test::Solved one = solve_with(desc, mode);
        for (uint32_t threads : {2u, 3u, 8u}) {
            mode.threads = threads;
            const test::Solved many = solve_with(desc, mode);
            CHECK(same_bits(one.impulses, many.impulses));
            CHECK(same_bits(one.velocities, many.velocities));
        }
        // And the colored order really is not the serial one (the mode is in use).
        mode.solve_mode = STEEL_SOLVE_SERIAL;
        mode.threads = 1;
        const test::Solved serial = solve_with(desc, mode);
        CHECK(test::max_abs_diff(serial.impulses, one.impulses) > 0);
    }
}

TEST_CASE("colored: fewer worlds than threads are spread over them unless a color can be split") {
    // Seven worlds whose colors are all narrower than the split threshold, on eight threads:
    // each world runs on one thread, not all seven one after another on the calling thread.
    SceneBuilder piles = random_piles(7, 30, 200, 11);
    const Built built = build(piles.desc());
    for (size_t c = 0; c + 1 < built.plan.color_pack_offset.size(); ++c)
        REQUIRE(built.plan.color_pack_offset[c + 1] - built.plan.color_pack_offset[c] <
                256); // kMinPacksToSplit in impl/cpu_solver.cpp
    for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64}) {
        CAPTURE(precision);
        Mode mode;
        mode.precision = precision;
        mode.iterations = 25;
        const test::Solved one = solve_with(piles.desc(), mode);
        mode.threads = 8;
        steel::testing::colored_worlds_split = 0;
        const test::Solved many = solve_with(piles.desc(), mode);
        CHECK(steel::testing::colored_worlds_split.load() == 0);
        CHECK(same_bits(one.impulses, many.impulses));
        CHECK(same_bits(one.velocities, many.velocities));
        CHECK(std::memcmp(one.stats.data(), many.stats.data(),
                          one.stats.size() * sizeof(steel_world_stats)) == 0);
    }

    // A world with a color of 263 packs (2,100 boxes on the ground, float64) between two small
    // ones: that world alone is split over the pool, the small ones are spread; same bits.
    SceneBuilder mixed;
    const auto add_small = [&](uint32_t seed) {
        std::mt19937 rng(seed);
        mixed.begin_world();
        for (int32_t box = 0; box < 20; ++box)
            mixed.add_body(scenes::free_box(1.0, {0.5, 0.5, 0.5}, {1.1 * box, 0, 0.5}));
        for (int32_t box = 0; box < 20; ++box)
            mixed.add_contact(ContactSpec{
                box, -1, {1.1 * box, 0.1 * double(rng() % 5), 0}, {0, 0, 1}, -0.001, 0.5, 0});
    };
    add_small(1);
    mixed.begin_world();
    for (int32_t box = 0; box < 2100; ++box)
        mixed.add_body(scenes::free_box(1.0 + 0.001 * box, {0.5, 0.5, 0.5}, {1.1 * box, 0, 0.5}));
    for (int32_t box = 0; box < 2100; ++box)
        mixed.add_contact(ContactSpec{box, -1, {1.1 * box, 0.2, 0}, {0, 0, 1}, -0.001, 0.5, 0});
    add_small(2);
    const Built mixed_built = build(mixed.desc());
    REQUIRE(mixed_built.plan.world_color_offset[2] - mixed_built.plan.world_color_offset[1] == 1);
    const uint32_t wide = mixed_built.plan.world_color_offset[1];
    REQUIRE(mixed_built.plan.color_pack_offset[wide + 1] -
                mixed_built.plan.color_pack_offset[wide] ==
            263);
    Mode mode;
    mode.iterations = 10;
    const test::Solved one = solve_with(mixed.desc(), mode);
    mode.threads = 8;
    steel::testing::colored_worlds_split = 0;
    const test::Solved many = solve_with(mixed.desc(), mode);
    CHECK(steel::testing::colored_worlds_split.load() == 1);
    CHECK(same_bits(one.impulses, many.impulses));
    CHECK(same_bits(one.velocities, many.velocities));
    CHECK(std::memcmp(one.stats.data(), many.stats.data(),
                      one.stats.size() * sizeof(steel_world_stats)) == 0);
}

TEST_CASE("colored: a contact whose friction rows have different coefficients is not packed") {
    // A scene contact has one coefficient for both friction rows; rows can have two. The
    // batch's rows are changed after the upload, before the first solve builds the colors: the
    // second friction row of box 0's contact gets 0.1 against the first's 0.5. Each box has one
    // contact, so the colored sweep visits the rows in the serial order, and with the contact
    // solved row by row (not packed with the first row's coefficient) gives the serial bits.
    SceneBuilder builder;
    builder.begin_world();
    for (int32_t box = 0; box < 2; ++box) {
        scenes::BodySpec body = scenes::free_box(1.0, {0.5, 0.5, 0.5}, {3.0 * box, 0, 0.5});
        body.qd = {3.0, -2.0, -1.0, 0.5, 0.0, 0.0}; // sliding both ways, and into the ground
        builder.add_body(body);
        builder.add_contact(
            ContactSpec{box, -1, {3.0 * box + 0.3, 0.2, 0}, {0, 0, 1}, -0.01, 0.5, 0});
    }
    const steel_scene_desc desc = builder.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT32, STEEL_PRECISION_FLOAT64}) {
        CAPTURE(precision);
        test::Solved solved[2];
        for (int32_t solve_mode : {STEEL_SOLVE_SERIAL, STEEL_SOLVE_COLORED}) {
            Mode mode;
            mode.precision = precision;
            mode.solve_mode = solve_mode;
            mode.iterations = 20;
            const steel_batch batch = test::make_scene_batch(1, mode);
            REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
            steel::Batch& internal = steel::lookup_batch(batch.id, "test");
            std::visit(
                [](auto& state) {
                    REQUIRE(state.rows.total_rows() == 6);
                    REQUIRE(state.rows.kind[1] == STEEL_ROW_FRICTION_BOX);
                    REQUIRE(state.rows.kind[2] == STEEL_ROW_FRICTION_BOX);
                    using Real = std::decay_t<decltype(state.rows.friction[0])>;
                    REQUIRE(state.rows.friction[1] == Real(0.5));
                    state.rows.friction[2] = Real(0.1);
                },
                internal.state);
            REQUIRE_OK(steel_batch_solve(batch));
            if (solve_mode == STEEL_SOLVE_COLORED)
                std::visit(
                    [](auto& state) {
                        REQUIRE(state.colored);
                        CHECK(state.colored->packs.count == 1); // box 1's contact
                        // Box 0's contact, solved row by row: first row 0, three rows.
                        CHECK(state.colored->contact_rows == std::vector<uint32_t>{0, 3});
                    },
                    internal.state);
            solved[solve_mode == STEEL_SOLVE_COLORED] = test::read_all(batch);
            REQUIRE_OK(steel_batch_destroy(batch));
        }
        const test::Solved &serial = solved[0], &colored = solved[1];
        // Both friction rows of box 0 slide, each at its own bound.
        REQUIRE(serial.impulses[0] > 0);
        CHECK(std::fabs(serial.impulses[1]) == doctest::Approx(0.5 * serial.impulses[0]));
        CHECK(std::fabs(serial.impulses[2]) == doctest::Approx(0.1 * serial.impulses[0]));
        CHECK(same_bits(serial.impulses, colored.impulses));
        CHECK(same_bits(serial.velocities, colored.velocities));
    }
}
