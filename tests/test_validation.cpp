// Bad input (DESIGN: "nothing crashes, nothing is half-applied"): every validation rule of the
// rows upload and the options gets its own case, checking the status, that the message names
// the world, row and field, and that the batch still solves its previous data exactly as before.
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

namespace {

// A valid two-world batch: world 0 a stack of 3, world 1 a bilateral, a contact normal, a
// bounded row and a friction row over three DOFs.
scenes::RowsBuilder valid_rows() {
    scenes::RowsBuilder builder;
    scenes::StackSpec stack;
    stack.height = 3;
    scenes::add_stack_world(builder, stack);
    builder.begin_world({0.5, -1.0, 0.25});
    scenes::Row row;
    row.blocks[0] = {0, {1.0}, {1.0}};
    row.blocks[1] = {2, {1.0}, {0.5}};
    builder.add_row(row); // row 0: bilateral
    row.kind = STEEL_ROW_CONTACT_NORMAL;
    row.blocks[0] = {1, {1.0}, {1.0}};
    row.blocks[1] = {};
    builder.add_row(row); // row 1: contact normal
    row.kind = STEEL_ROW_BOUNDED;
    row.lower = -1.0;
    row.upper = 2.0;
    row.blocks[0] = {0, {1.0, -1.0}, {1.0, -1.0}};
    builder.add_row(row); // row 2: bounded
    row.kind = STEEL_ROW_FRICTION_BOX;
    row.normal_row = 1;
    row.friction = 0.5;
    row.blocks[0] = {2, {1.0}, {0.5}};
    builder.add_row(row); // row 3: friction on row 1
    return builder;
}

// World 1's row `r` is batch row 3 + r (world 0 has 3 rows); its first value index:
// world 0 uses 1 + 2 + 2 = 5 values; world 1's rows use 2, 1, 2, 1.
constexpr uint64_t kRow = 3;

struct Fixture {
    scenes::RowsBuilder good = valid_rows();
    steel_batch batch{};
    test::Solved before;

    Fixture() {
        test::SolveSetup setup;
        batch = test::make_batch(good, setup);
        const steel_rows_desc rows = good.desc();
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
        REQUIRE_OK(steel_batch_solve(batch));
        before = test::read_all(batch);
    }
    ~Fixture() { steel_batch_destroy(batch); }

    // Uploads a broken copy of the good rows; expects `status` and a message containing each of
    // `needles`; then checks the batch still holds and solves the good rows bit for bit.
    void
    expect_rejected(const std::function<void(scenes::RowsBuilder&, steel_rows_desc&)>& breakage,
                    std::initializer_list<const char*> needles,
                    steel_status status = STEEL_ERROR_INVALID_ARGUMENT) {
        scenes::RowsBuilder broken = good;
        steel_rows_desc rows = broken.desc();
        breakage(broken, rows);
        const steel_status got = steel_batch_upload_rows(batch, &rows);
        const std::string message = steel_last_error_message();
        INFO("message: " << message);
        CHECK(got == status);
        for (const char* needle : needles)
            CHECK(message.find(needle) != std::string::npos);
        // Nothing changed: the old results are still readable, and a new solve reproduces them.
        const test::Solved kept = test::read_all(batch);
        CHECK(kept.impulses == before.impulses);
        REQUIRE_OK(steel_batch_solve(batch));
        const test::Solved again = test::read_all(batch);
        CHECK(std::memcmp(again.impulses.data(), before.impulses.data(),
                          before.impulses.size() * sizeof(double)) == 0);
        CHECK(std::memcmp(again.velocities.data(), before.velocities.data(),
                          before.velocities.size() * sizeof(double)) == 0);
    }
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

TEST_CASE("the valid fixture uploads and solves") {
    Fixture f;
    CHECK(f.before.impulses.size() == 7);
}

TEST_CASE("upload rejects a world count that differs from the batch") {
    Fixture f;
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.world_count = 3; },
                      {"world_count is 3", "2 worlds"});
}

TEST_CASE("upload rejects missing required arrays") {
    Fixture f;
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.world_row_counts = nullptr; },
                      {"world_row_counts is NULL"});
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.unconstrained_velocity = nullptr; },
                      {"unconstrained_velocity is NULL"});
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.kind = nullptr; }, {"kind is NULL"});
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.jacobian = nullptr; },
                      {"jacobian is NULL"});
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.lower = nullptr; },
                      {"lower is NULL", "BOUNDED"});
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.normal_row = nullptr; },
                      {"normal_row is NULL"});
}

TEST_CASE("upload rejects a block that leaves its world") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.block_offset[2 * (kRow + 1)] = 3; },
                      {"world 1, row 1", "block 0 covers DOFs [3, 4)", "has 3"});
}

TEST_CASE("upload rejects overlapping blocks") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.block_offset[2 * kRow + 1] = 0; },
                      {"world 1, row 0", "overlap"});
}

TEST_CASE("upload rejects a value_count that does not match the blocks") {
    Fixture f;
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.value_count -= 1; }, {"value_count"});
    f.expect_rejected([](auto&, steel_rows_desc& d) { d.value_count += 1; },
                      {"value_count", "hold 11 values"});
}

TEST_CASE("upload rejects an unknown row kind") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.kind[kRow + 0] = 17; },
                      {"world 1, row 0", "kind = 17"});
}

TEST_CASE("upload rejects bounds with lower above upper, NaN, or no admissible impulse") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.lower[kRow + 2] = 3.0; },
                      {"world 1, row 2", "lower = 3 > upper = 2"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.upper[kRow + 2] = kNaN; },
                      {"world 1, row 2", "upper is NaN"});
    f.expect_rejected(
        [](auto& b, steel_rows_desc&) {
            b.lower[kRow + 2] = kInf;
            b.upper[kRow + 2] = kInf;
        },
        {"world 1, row 2", "admit no impulse"});
}

TEST_CASE("upload accepts infinite bounds that leave room") {
    Fixture f;
    scenes::RowsBuilder open = f.good;
    open.lower[kRow + 2] = -kInf;
    open.upper[kRow + 2] = kInf;
    const steel_rows_desc rows = open.desc();
    REQUIRE_OK(steel_batch_upload_rows(f.batch, &rows));
}

TEST_CASE("upload rejects a friction row whose normal_row is outside the world") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.normal_row[kRow + 3] = 4; },
                      {"world 1, row 3", "normal_row = 4", "[0, 4)"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.normal_row[kRow + 3] = -1; },
                      {"world 1, row 3", "normal_row = -1"});
}

TEST_CASE("upload rejects a friction row whose normal_row is not a contact normal") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.normal_row[kRow + 3] = 2; },
                      {"world 1, row 3", "normal_row = 2", "not STEEL_ROW_CONTACT_NORMAL"});
}

TEST_CASE("upload rejects a negative or non-finite friction coefficient") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.friction[kRow + 3] = -0.1; },
                      {"world 1, row 3", "friction = -0.1"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.friction[kRow + 3] = kInf; },
                      {"world 1, row 3", "friction = inf"});
}

TEST_CASE("upload rejects NaN and infinity in every number") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.unconstrained_velocity[4] = kNaN; },
                      {"world 1, dof 1", "unconstrained_velocity is NaN"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.jacobian[5 + 1] = kInf; },
                      {"world 1, row 0", "jacobian[1] is infinite"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.response[5 + 3] = kNaN; },
                      {"world 1, row 2", "response[0] is NaN"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.bias[kRow + 1] = kNaN; },
                      {"world 1, row 1", "bias is NaN"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.initial_impulse[1] = -kInf; },
                      {"world 0, row 1", "initial_impulse is infinite"});
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.regularization[0] = kNaN; },
                      {"world 0, row 0", "regularization = nan"});
}

TEST_CASE("upload rejects a negative regularization") {
    Fixture f;
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.regularization[kRow] = -1.0; },
                      {"world 1, row 0", "regularization = -1 must be >= 0"});
}

TEST_CASE("upload rejects a row whose J.Y + cfm is not positive") {
    Fixture f;
    // Y = -J makes J.Y negative: not a response of any positive definite H.
    f.expect_rejected([](auto& b, steel_rows_desc&) { b.response[5 + 2] = -1.0; },
                      {"world 1, row 1", "J.Y + cfm", "must be positive"});
}

TEST_CASE("a float32 batch rejects numbers that overflow float32") {
    scenes::RowsBuilder builder = valid_rows();
    test::SolveSetup setup;
    setup.precision = STEEL_PRECISION_FLOAT32;
    const steel_batch batch = test::make_batch(builder, setup);
    builder.bias[kRow] = 1e39;
    const steel_rows_desc rows = builder.desc();
    CHECK(steel_batch_upload_rows(batch, &rows) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("does not fit float32") !=
          std::string::npos);
    CHECK(steel_batch_solve(batch) == STEEL_ERROR_NO_DATA); // the failed first upload left nothing

    // A finite bound too: [1e39, 1e40] would become [inf, inf], which admits no impulse. An
    // infinite bound is an open side and stays allowed.
    builder.bias[kRow] = 0;
    builder.lower[kRow + 2] = 1e39;
    builder.upper[kRow + 2] = 1e40;
    const steel_rows_desc bounded = builder.desc();
    CHECK(steel_batch_upload_rows(batch, &bounded) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_upload_rows: world 1, row 2 (batch row 5): lower = 1e+39 does not fit "
          "float32");
    builder.lower[kRow + 2] = -1.0;
    CHECK(steel_batch_upload_rows(batch, &bounded) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("upper = 1e+40 does not fit float32") !=
          std::string::npos);
    builder.lower[kRow + 2] = -INFINITY;
    builder.upper[kRow + 2] = INFINITY;
    REQUIRE_OK(steel_batch_upload_rows(batch, &bounded));
    steel_batch_destroy(batch);
}

TEST_CASE("set_options rejects out-of-range values and keeps the old options") {
    Fixture f;
    steel_solve_options before;
    before.struct_size = sizeof(before);
    REQUIRE_OK(steel_batch_get_options(f.batch, &before));
    const auto expect_bad = [&](const std::function<void(steel_solve_options&)>& breakage,
                                const char* needle) {
        steel_solve_options options;
        steel_solve_options_default(&options);
        breakage(options);
        CHECK(steel_batch_set_options(f.batch, &options) == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(steel_last_error_message()).find(needle) != std::string::npos);
        steel_solve_options after;
        after.struct_size = sizeof(after);
        REQUIRE_OK(steel_batch_get_options(f.batch, &after));
        CHECK(std::memcmp(&before, &after, sizeof(after)) == 0);
    };
    expect_bad([](steel_solve_options& o) { o.iterations = 0; }, "iterations = 0");
    expect_bad([](steel_solve_options& o) { o.tolerance = -1; }, "tolerance = -1");
    expect_bad([](steel_solve_options& o) { o.tolerance = kNaN; }, "tolerance = nan");
    expect_bad([](steel_solve_options& o) { o.cfm = -0.5; }, "cfm = -0.5");
    expect_bad([](steel_solve_options& o) { o.cfm = kInf; }, "cfm = inf");
    expect_bad([](steel_solve_options& o) { o.path = 3; }, "path = 3");
    expect_bad([](steel_solve_options& o) { o.warm_start = 2; }, "warm_start = 2");
}

TEST_CASE("a row with an empty Jacobian needs cfm > 0, at upload and at set_options") {
    scenes::RowsBuilder builder;
    builder.begin_world({1.0});
    scenes::Row empty;
    empty.bias = 1.0;
    builder.add_row(empty);
    test::SolveSetup setup;
    const steel_batch batch = test::make_batch(builder, setup);
    const steel_rows_desc rows = builder.desc();
    CHECK(steel_batch_upload_rows(batch, &rows) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("J.Y + cfm = 0") != std::string::npos);

    steel_solve_options options = test::options_for(setup);
    options.cfm = 0.5;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    options.cfm = 0.0; // would leave the uploaded row with d = 0
    CHECK(steel_batch_set_options(batch, &options) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("steel_batch_set_options: world 0, row 0") !=
          std::string::npos);
    // J = 0 can never satisfy J.v + b = 0: each sweep adds -b / cfm = -2 to lambda.
    options.cfm = 0.5;
    options.iterations = 3;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    double impulse = 0;
    REQUIRE_OK(steel_batch_read_impulses(batch, &impulse, 1, nullptr));
    CHECK(impulse == doctest::Approx(-6.0));
    steel_batch_destroy(batch);
}

TEST_CASE("versioned structs: too small is refused, a newer one with a zero tail is accepted") {
    Fixture f;
    struct Bigger {
        steel_solve_options known;
        uint64_t future_field;
    } bigger{};
    steel_solve_options_default(&bigger.known);
    bigger.known.struct_size = sizeof(Bigger);
    bigger.known.iterations = 7;
    REQUIRE_OK(steel_batch_set_options(f.batch, &bigger.known));
    steel_solve_options read;
    read.struct_size = sizeof(read);
    REQUIRE_OK(steel_batch_get_options(f.batch, &read));
    CHECK(read.iterations == 7);

    bigger.future_field = 1;
    CHECK(steel_batch_set_options(f.batch, &bigger.known) == STEEL_ERROR_STRUCT_VERSION);
    CHECK(std::string(steel_last_error_message()).find("newer Steel") != std::string::npos);

    steel_solve_options small;
    steel_solve_options_default(&small);
    small.struct_size = 8;
    CHECK(steel_batch_set_options(f.batch, &small) == STEEL_ERROR_STRUCT_VERSION);
    CHECK(std::string(steel_last_error_message()).find("struct_size = 8") != std::string::npos);

    scenes::RowsBuilder builder = valid_rows();
    steel_rows_desc rows = builder.desc();
    rows.struct_size = 4;
    CHECK(steel_batch_upload_rows(f.batch, &rows) == STEEL_ERROR_STRUCT_VERSION);

    // An unset struct_size (garbage) is refused before any byte past the struct is read or written.
    rows = builder.desc();
    rows.struct_size = 0x40000000u;
    CHECK(steel_batch_upload_rows(f.batch, &rows) == STEEL_ERROR_STRUCT_VERSION);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_upload_rows: steel_rows_desc.struct_size = 1073741824 is larger than any "
          "Steel "
          "struct (at most 4096); set it to sizeof(steel_rows_desc)");
    steel_solve_options out;
    out.struct_size = 4097;
    CHECK(steel_batch_get_options(f.batch, &out) == STEEL_ERROR_STRUCT_VERSION);
    CHECK(std::string(steel_last_error_message()).find("struct_size = 4097 is larger") !=
          std::string::npos);
}

TEST_CASE("an unused block may carry any offset, even in a world without DOFs") {
    // Found by fuzz_solve_rows: a length-0 block's offset is never range-checked, so it must never
    // be used to form a pointer either.
    const uint32_t dofs = 0, rows = 1;
    const uint32_t offsets[2] = {5, 1000000}, lengths[2] = {0, 0};
    const double bias = 1.0;
    const int32_t kind = STEEL_ROW_BILATERAL;
    steel_rows_desc desc;
    steel_rows_desc_default(&desc);
    desc.world_count = 1;
    desc.world_dof_counts = &dofs;
    desc.world_row_counts = &rows;
    desc.block_offset = offsets;
    desc.block_length = lengths;
    desc.bias = &bias;
    desc.kind = &kind;
    steel_batch_desc batch_desc;
    steel_batch_desc_default(&batch_desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &batch_desc, &batch));
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.cfm = 1.0;
    options.iterations = 1;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_upload_rows(batch, &desc));
    REQUIRE_OK(steel_batch_solve(batch));
    double impulse = 0;
    REQUIRE_OK(steel_batch_read_impulses(batch, &impulse, 1, nullptr));
    CHECK(impulse == -1.0); // -(0 + b) / cfm
    steel_batch_destroy(batch);
}

TEST_CASE(
    "a rows upload on several threads gives one thread's rows and reports one thread's error") {
    // 40 worlds, so that the threads' runs of worlds split them; every other world is the
    // fixture's second world less its bounded row, the rest stacks of different heights.
    scenes::RowsBuilder builder;
    for (uint32_t w = 0; w < 40; ++w) {
        if (w % 2 == 1) {
            builder.begin_world({0.5, -1.0, 0.25 * w});
            scenes::Row row;
            row.blocks[0] = {0, {1.0}, {1.0}};
            row.blocks[1] = {2, {1.0}, {0.5}};
            builder.add_row(row);
            row.kind = STEEL_ROW_CONTACT_NORMAL;
            row.blocks[0] = {1, {1.0}, {1.0}};
            row.blocks[1] = {};
            builder.add_row(row);
            row.kind = STEEL_ROW_FRICTION_BOX;
            row.normal_row = 1;
            row.friction = 0.5;
            row.blocks[0] = {2, {1.0}, {0.5}};
            builder.add_row(row);
            continue;
        }
        scenes::StackSpec stack;
        stack.height = 1 + w % 5;
        scenes::add_stack_world(builder, stack);
    }
    const auto run = [&](const scenes::RowsBuilder& rows_builder, uint32_t threads) {
        test::SolveSetup setup;
        setup.threads = threads;
        const steel_batch batch = test::make_batch(rows_builder, setup);
        const steel_rows_desc rows = rows_builder.desc();
        const steel_status status = steel_batch_upload_rows(batch, &rows);
        std::string message = steel_last_error_message();
        test::Solved solved;
        if (status == STEEL_OK) {
            REQUIRE_OK(steel_batch_solve(batch));
            solved = test::read_all(batch);
        }
        steel_batch_destroy(batch);
        return std::make_pair(message, solved);
    };
    const auto one = run(builder, 1);
    REQUIRE(one.first.empty());
    for (uint32_t threads : {2u, 3u, 8u}) {
        CAPTURE(threads);
        const auto many = run(builder, threads);
        CHECK(many.first.empty());
        CHECK(many.second.impulses == one.second.impulses);
        CHECK(many.second.velocities == one.second.velocities);
    }

    // A NaN in an early world's Jacobian and an unknown kind in two later worlds: one thread
    // checks every world's structure before any world's numbers, and the worlds in order, so it
    // names the first of the later worlds, as must every thread count. Without the kinds, the
    // NaN is reported.
    scenes::RowsBuilder broken = builder;
    broken.jacobian[3] = kNaN; // in the first worlds' rows
    uint64_t world21_row = 0;
    for (uint32_t w = 0; w < 21; ++w)
        world21_row += builder.row_counts[w];
    broken.kind[world21_row + 1] = 17;        // world 21, row 1
    broken.kind[broken.kind.size() - 2] = 18; // world 39, row 1
    scenes::RowsBuilder nan_only = builder;
    nan_only.jacobian[3] = kNaN;
    // Then the message lists every refused world, the NaN's world first (found here from the
    // rows' value counts, not from the library).
    uint32_t nan_world = 0;
    for (uint64_t row = 0, values = 0, world_end = builder.row_counts[0];; ++row) {
        while (row >= world_end)
            world_end += builder.row_counts[++nan_world];
        values += builder.block_length[2 * row] + builder.block_length[2 * row + 1];
        if (values > 3) break;
    }
    REQUIRE(nan_world < 21);
    const std::string listed =
        "; 3 of the 40 worlds are refused: " + std::to_string(nan_world) + ", 21, 39";
    for (uint32_t threads : {1u, 2u, 8u}) {
        CAPTURE(threads);
        const std::string message = run(broken, threads).first;
        INFO(message);
        CHECK(message.find("world 21, row 1") != std::string::npos);
        CHECK(message.find("kind = 17") != std::string::npos);
        CHECK(message.size() > listed.size());
        CHECK(message.substr(message.size() - std::min(message.size(), listed.size())) == listed);
        const std::string nan_message = run(nan_only, threads).first;
        INFO(nan_message);
        CHECK(nan_message.find("jacobian") != std::string::npos);
        CHECK(nan_message.find("is NaN") != std::string::npos);
        CHECK(nan_message.find("refused") == std::string::npos); // one world: its reason only
        CHECK(nan_message == run(nan_only, 1).first);
    }
}
