// Every snapshot and capture committed under tests/data/ replays within tolerance: loaded, solved
// again, and compared world by world with the outputs it recorded. They were written by the
// "regenerate" case below (STEEL_WRITE_TEST_DATA=tests/data); a deliberate change of the
// solver's numbers means regenerating them, in the same commit, with the reason.
#include "robot_scenes.hpp"
#include "scene_support.hpp"
#include "snapshot/compare.hpp"
#include "test_snapshot_support.hpp"

#include <dirent.h>
#include <algorithm>
#include <cstdlib>
#include <string>

#ifndef STEEL_TEST_DATA_DIR
#error "tests/CMakeLists.txt defines STEEL_TEST_DATA_DIR"
#endif

namespace {

using namespace steel::snapshot;

std::vector<std::string> data_files() {
    std::vector<std::string> files;
    if (DIR* folder = ::opendir(STEEL_TEST_DATA_DIR)) {
        while (const dirent* entry = ::readdir(folder)) {
            const std::string name = entry->d_name;
            if (name.size() > 6 && name.compare(name.size() - 6, 6, ".steel") == 0)
                files.push_back(std::string(STEEL_TEST_DATA_DIR) + "/" + name);
        }
        ::closedir(folder);
    }
    std::sort(files.begin(), files.end());
    return files;
}

// The snapshot records of a file: itself, or each record of a capture stream.
std::vector<std::vector<uint8_t>> records_in(const std::vector<uint8_t>& bytes) {
    if (looks_like_snapshot(bytes.data(), bytes.size())) return {bytes};
    std::vector<std::vector<uint8_t>> records;
    for (const Record& record : split_capture(bytes.data(), bytes.size(), "test"))
        records.emplace_back(bytes.begin() + int64_t(record.offset),
                             bytes.begin() + int64_t(record.offset + record.size));
    return records;
}

void write_scene(const std::string& path, const scenes::RowsBuilder& builder, int32_t precision,
                 const steel_solve_options& options) {
    test::SolveSetup setup;
    setup.precision = precision;
    const steel_batch batch = test::make_batch(builder, setup);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    REQUIRE_OK(steel_batch_save_file(batch, path.c_str()));
    REQUIRE_OK(steel_batch_destroy(batch));
}

} // namespace

TEST_CASE("every committed snapshot replays within tolerance of what it recorded") {
    const std::vector<std::string> files = data_files();
    REQUIRE(files.size() >= 5); // the test must not pass by finding nothing
    int scenes = 0;
    for (const std::string& file : files) {
        const std::vector<std::vector<uint8_t>> records = records_in(snaptest::read_bytes(file));
        REQUIRE(!records.empty());
        for (size_t k = 0; k < records.size(); ++k) {
            CAPTURE(file);
            CAPTURE(k);
            const Snapshot recorded = decode(records[k].data(), records[k].size(), "test");
            REQUIRE(recorded.solved);
            scenes += recorded.has_scene;
            steel_batch batch{};
            REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, records[k].data(),
                                               records[k].size(), &batch));
            REQUIRE_OK(steel_batch_solve(batch));
            const test::Solved replayed = test::read_all(batch);
            REQUIRE_OK(steel_batch_destroy(batch));
            const double tolerance = default_tolerance(recorded.desc.precision);
            const std::vector<WorldDifference> worlds =
                compare_with_recorded(recorded, replayed.impulses, replayed.velocities);
            for (size_t w = 0; w < worlds.size(); ++w) {
                CAPTURE(w);
                CHECK(worlds[w].relative() <= tolerance);
                CHECK(replayed.stats[w].flags == recorded.results.stats[w].flags);
            }
        }
    }
    CHECK(scenes >= 1); // a scene batch's snapshot replays through its scene
}

// Writes the committed test data. Skipped unless STEEL_WRITE_TEST_DATA names a folder:
//   STEEL_WRITE_TEST_DATA=tests/data build/tests/steel_tests -tc='regenerate*'
TEST_CASE("regenerate the committed snapshots (STEEL_WRITE_TEST_DATA)") {
    const char* folder = std::getenv("STEEL_WRITE_TEST_DATA");
    if (folder == nullptr || *folder == '\0') return;
    const std::string out = folder;

    { // A tall stack with a 1:20 mass ratio: slow load propagation, many sweeps.
        scenes::RowsBuilder builder;
        scenes::StackSpec stack;
        stack.height = 12;
        stack.top_mass = 20.0;
        scenes::add_stack_world(builder, stack);
        steel_solve_options options;
        steel_solve_options_default(&options);
        options.iterations = 300;
        options.path = STEEL_PATH_GENERAL;
        write_scene(out + "/stack_tall_float64.steel", builder, STEEL_PRECISION_FLOAT64, options);
    }
    { // Random articulated worlds with every scalar row kind, in float32 with cfm.
        scenes::RowsBuilder builder;
        std::mt19937_64 rng(2026);
        for (uint32_t w = 0; w < 6; ++w) {
            scenes::RandomWorldSpec spec;
            spec.body_count = 2 + uint32_t(rng() % 3);
            spec.max_body_dofs = 6;
            spec.row_count = 4 + uint32_t(rng() % 12);
            scenes::add_random_world(builder, rng, spec);
        }
        steel_solve_options options;
        steel_solve_options_default(&options);
        options.cfm = 1e-5;
        write_scene(out + "/random_mixed_float32.steel", builder, STEEL_PRECISION_FLOAT32, options);
    }
    { // Cone friction, soft contacts, momentum, pre-elimination and residual history together.
        write_scene(out + "/cone_soft_momentum.steel", snaptest::varied_scene(7, 3),
                    STEEL_PRECISION_FLOAT64, snaptest::unusual_options(STEEL_PATH_AUTO));
    }
    { // A capture of three solves: first rows, other options, other rows.
        const std::string path = out + "/capture_three_solves.steel";
        std::remove(path.c_str());
        const scenes::RowsBuilder first = snaptest::varied_scene(41, 2),
                                  second = snaptest::varied_scene(42, 2);
        const steel_batch batch = test::make_batch(first, {});
        REQUIRE_OK(steel_batch_set_capture(batch, path.c_str()));
        steel_rows_desc rows = first.desc();
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
        REQUIRE_OK(steel_batch_solve(batch));
        const steel_solve_options options = snaptest::unusual_options(STEEL_PATH_DENSE);
        REQUIRE_OK(steel_batch_set_options(batch, &options));
        REQUIRE_OK(steel_batch_solve(batch));
        rows = second.desc();
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
        REQUIRE_OK(steel_batch_solve(batch));
        REQUIRE_OK(steel_batch_destroy(batch));
    }
    { // A scene batch (arm with a box, legged robot) under the propagation response and colored
      // sweeps: the snapshot holds the scene, and the replay walks its trees.
        scenes::SceneBuilder builder;
        builder.begin_world();
        scenes::add_arm_with_box(builder, 0.8, 2.0);
        builder.begin_world();
        scenes::add_legged_robot(builder);
        const steel_scene_desc scene = builder.desc();
        test::SceneMode mode;
        mode.response = STEEL_RESPONSE_PROPAGATION;
        mode.solve_mode = STEEL_SOLVE_COLORED;
        mode.iterations = 30;
        const steel_batch batch = test::make_scene_batch(scene.world_count, mode);
        REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
        REQUIRE_OK(steel_batch_solve(batch));
        REQUIRE_OK(
            steel_batch_save_file(batch, (out + "/scene_propagation_colored.steel").c_str()));
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}
