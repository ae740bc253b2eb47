// Snapshots of scene uploads (docs/snapshots.md): the snapshot holds the scene as uploaded, and a
// loaded one is the batch that scene's upload makes, so it reads per contact, per joint and per
// body, and replays the propagation response and colored sweeps bit for bit.
#include "robot_scenes.hpp"
#include "scene_support.hpp"
#include "test_snapshot_support.hpp"

#include "batch.hpp"
#include "handle_registry.hpp"
#include "snapshot/compare.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace {

using scenes::BodySpec;
using scenes::SceneBuilder;
using steel::snapshot::decode;
using steel::snapshot::encode;
using steel::snapshot::Snapshot;

bool message_has(const char* needle) {
    return std::string(steel_last_error_message()).find(needle) != std::string::npos;
}

// Every kind of scene input: the articulated mix (arm with a box, legged robot, box pile,
// four-bar, chain) with drive rows and effort limits, a kinematic platform carrying a box
// (standalone bodies with poses, velocities and flags), and two pendulums, one mimicking the
// other, under a velocity limit.
struct FullScene {
    SceneBuilder builder;
    std::vector<double> pose, velocity, velocity_limit, effort_limit;
    std::vector<int32_t> flags;
    uint32_t platform = 0; // the kinematic platform's scene body index

    steel_scene_desc desc() const {
        steel_scene_desc d = builder.desc();
        d.body_pose = pose.data();
        d.body_velocity = velocity.data();
        d.body_flags = flags.data();
        d.joint_velocity_limit = velocity_limit.data();
        d.drive_effort_limit = effort_limit.data();
        return d;
    }
};

FullScene full_scene() {
    FullScene s;
    SceneBuilder& b = s.builder;
    b.drive_mode = STEEL_DRIVE_MODE_ROWS;
    scenes::add_articulated_mix(b, 1);
    b.contact_restitution[0] = 0.4;

    b.begin_world();
    s.platform = uint32_t(b.joint_type.size());
    BodySpec platform = scenes::free_box(1.0, {2, 2, 0.1}, {0, 0, -0.1});
    platform.joint = STEEL_JOINT_NONE;
    platform.q = {};
    platform.qd = {};
    b.add_body(platform);
    b.add_body(scenes::free_box(1.0, {0.2, 0.2, 0.2}, {0, 0, 0.19}));
    scenes::box_plane_contacts(b, 1, {{0, 0, 0.19}, {1, 0, 0, 0}}, {0.2, 0.2, 0.2}, 0, 0.0, 0.3);

    b.begin_world();
    for (int k = 0; k < 2; ++k) {
        BodySpec link;
        link.joint = STEEL_JOINT_REVOLUTE;
        link.axis = {0, 1, 0};
        link.com = {0, 0, -0.5};
        link.parent_frame.position = {double(k), 0, 2};
        link.q = {0.2 * (k + 1)};
        link.qd = {0.1};
        b.add_body(link);
    }
    b.add_mimic(0, 1, 1.5, 0.05);

    const size_t bodies = b.joint_type.size(), dofs = b.velocity.size();
    s.flags.assign(bodies, STEEL_BODY_DYNAMIC);
    s.flags[s.platform] = STEEL_BODY_KINEMATIC;
    s.pose.assign(7 * bodies, 0.0);
    for (size_t k = 0; k < bodies; ++k)
        s.pose[7 * k + 3] = 1.0;
    s.pose[7 * s.platform + 2] = -0.1;
    s.velocity.assign(6 * bodies, 0.0);
    s.velocity[6 * s.platform] = 2.0;
    s.velocity_limit.assign(dofs, INFINITY);
    s.velocity_limit[dofs - 1] = 0.5;
    s.effort_limit.assign(dofs, INFINITY);
    for (size_t k = 0; k < dofs; ++k)
        if (b.kp[k] > 0 || b.kd[k] > 0) s.effort_limit[k] = 80.0;
    return s;
}

// How a scene batch is solved in these tests.
struct Mode {
    int32_t response = STEEL_RESPONSE_IMMEDIATE;
    int32_t solve_mode = STEEL_SOLVE_SERIAL;
    int32_t precision = STEEL_PRECISION_FLOAT64;
};

steel_batch solved_scene_batch(const steel_scene_desc& scene, const Mode& mode) {
    test::SceneMode scene_mode;
    scene_mode.response = mode.response;
    scene_mode.solve_mode = mode.solve_mode;
    scene_mode.precision = mode.precision;
    scene_mode.iterations = 12;
    scene_mode.threads = 2;
    const steel_batch batch = test::make_scene_batch(scene.world_count, scene_mode);
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    REQUIRE_OK(steel_batch_solve(batch));
    return batch;
}

// Every output of a solved scene batch, rows and scene readers both.
struct SceneOutputs {
    test::Solved solved;
    std::vector<std::vector<double>> scene;
};

SceneOutputs read_scene_outputs(steel_batch batch) {
    SceneOutputs out;
    out.solved = test::read_all(batch);
    for (auto read : {steel_batch_read_contact_impulses, steel_batch_read_joint_velocities,
                      steel_batch_read_limit_impulses, steel_batch_read_drive_impulses,
                      steel_batch_read_constraint_impulses, steel_batch_read_body_velocities,
                      steel_batch_read_body_poses, steel_batch_read_integrated_positions})
        out.scene.push_back(test::read_doubles(batch, read));
    return out;
}

bool same_scene_outputs(const SceneOutputs& a, const SceneOutputs& b) {
    if (!snaptest::same_bits(a.solved.impulses, b.solved.impulses) ||
        !snaptest::same_bits(a.solved.velocities, b.solved.velocities) ||
        !snaptest::same_stats(a.solved.stats, b.solved.stats) || a.scene.size() != b.scene.size())
        return false;
    for (size_t k = 0; k < a.scene.size(); ++k)
        if (!snaptest::same_bits(a.scene[k], b.scene[k])) return false;
    return true;
}

steel_batch load(const std::vector<uint8_t>& bytes) {
    steel_batch batch{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &batch));
    return batch;
}

Snapshot decoded(const std::vector<uint8_t>& bytes) {
    return decode(bytes.data(), bytes.size(), "test");
}

template <class T> std::vector<T> values(const T* pointer, size_t count) {
    return std::vector<T>(pointer, pointer + count);
}

} // namespace

TEST_CASE("a scene batch's snapshot holds the scene as it was uploaded") {
    const FullScene full = full_scene();
    const steel_scene_desc scene = full.desc();
    const steel_batch batch = solved_scene_batch(scene, {});
    const Snapshot s = decoded(snaptest::save_memory(batch));
    REQUIRE_OK(steel_batch_destroy(batch));
    REQUIRE(s.has_scene);
    REQUIRE(s.has_rows);
    const SceneBuilder& b = full.builder;
    CHECK(s.scene.world_count == 7);
    CHECK(s.scene.dt == b.dt);
    CHECK(s.scene.drive_mode == STEEL_DRIVE_MODE_ROWS);
    // The arrays, against the builder's own vectors.
    CHECK(s.scene.world_body_count.values == b.body_counts);
    CHECK(s.scene.gravity.values == b.gravity);
    CHECK(s.scene.body_mass.values == b.mass);
    CHECK(s.scene.body_inertia.values == b.inertia);
    CHECK(s.scene.joint_type.values == b.joint_type);
    CHECK(s.scene.joint_parent_frame.values == b.parent_frame);
    CHECK(s.scene.joint_position.values == b.position);
    CHECK(s.scene.joint_velocity.values == b.velocity);
    CHECK(s.scene.drive_stiffness.values == b.kp);
    CHECK(s.scene.external_force.values == b.external);
    CHECK(s.scene.body_pose.values == full.pose);
    CHECK(s.scene.body_velocity.values == full.velocity);
    CHECK(s.scene.body_flags.values == full.flags);
    CHECK(s.scene.joint_velocity_limit.values == full.velocity_limit);
    CHECK(s.scene.drive_effort_limit.values == full.effort_limit);
    CHECK(s.scene.contact_point.values == b.contact_point);
    CHECK(s.scene.contact_restitution.values == b.contact_restitution);
    CHECK(s.scene.connect_point_b.values == b.connect_point_b);
    CHECK(s.scene.mimic_joint_a.values == b.mimic_a);
    CHECK(s.scene.mimic_offset.values == b.mimic_offset);
    // Present exactly where the desc had a pointer.
#define STEEL_CHECK_PRESENT(type, name, unit, per)                                                 \
    CHECK_MESSAGE(s.scene.name.present == (scene.name != nullptr), #name);
    STEEL_SCENE_ARRAYS(STEEL_CHECK_PRESENT)
#undef STEEL_CHECK_PRESENT
}

TEST_CASE("scenes compare by every scalar and array, numbers by their bits") {
    const FullScene full = full_scene();
    const steel_batch batch = solved_scene_batch(full.desc(), {});
    const Snapshot s = decoded(snaptest::save_memory(batch));
    REQUIRE_OK(steel_batch_destroy(batch));
    REQUIRE(s.has_scene);
    const steel::scene::SceneInputs& scene = s.scene;
    CHECK(scene.same_bits(scene));
    // One change anywhere is seen: a scalar, the last value of an array, a value's sign of
    // zero, an array's presence, a length.
    auto changed = scene;
    changed.baumgarte = std::nextafter(changed.baumgarte, 1.0);
    CHECK_FALSE(scene.same_bits(changed));
    changed = scene;
    REQUIRE(!changed.mimic_offset.values.empty());
    changed.mimic_offset.values.back() = std::nextafter(changed.mimic_offset.values.back(), 1e9);
    CHECK_FALSE(scene.same_bits(changed));
    changed = scene;
    changed.contact_restitution.values.assign(changed.contact_restitution.values.size(), 0.0);
    auto negative_zero = changed;
    negative_zero.contact_restitution.values.assign(changed.contact_restitution.values.size(),
                                                    -0.0);
    CHECK_FALSE(changed.same_bits(negative_zero));
    changed = scene;
    changed = scene;
    changed.mimic_offset.values.clear(); // present and empty...
    auto absent = changed;
    absent.mimic_offset.present = false; // ...is not absent
    CHECK_FALSE(changed.same_bits(absent));
    changed = scene;
    changed.joint_position.values.pop_back();
    CHECK_FALSE(scene.same_bits(changed));
    // A NaN equals itself (the same bits), which a comparison of values would deny.
    auto with_nan = scene;
    with_nan.gravity.values[0] = std::numeric_limits<double>::quiet_NaN();
    CHECK(with_nan.same_bits(with_nan));
}

TEST_CASE("a loaded scene snapshot reads and solves bit for bit like the original batch") {
    const FullScene full = full_scene();
    const steel_scene_desc scene = full.desc();
    for (const Mode mode :
         {Mode{STEEL_RESPONSE_IMMEDIATE, STEEL_SOLVE_SERIAL, STEEL_PRECISION_FLOAT64},
          Mode{STEEL_RESPONSE_PROPAGATION, STEEL_SOLVE_SERIAL, STEEL_PRECISION_FLOAT64},
          Mode{STEEL_RESPONSE_PROPAGATION, STEEL_SOLVE_COLORED, STEEL_PRECISION_FLOAT32}}) {
        CAPTURE(mode.response);
        CAPTURE(mode.solve_mode);
        CAPTURE(mode.precision);
        const steel_batch original = solved_scene_batch(scene, mode);
        const SceneOutputs first = read_scene_outputs(original);
        REQUIRE(test::max_abs(first.solved.impulses) > 0);
        const std::vector<uint8_t> bytes = snaptest::save_memory(original);

        const steel_batch loaded = load(bytes);
        // The recorded outputs, through every reader; then the same content saved again (the
        // rows the scene builds again are the recorded ones, bit for bit).
        CHECK(same_scene_outputs(read_scene_outputs(loaded), first));
        CHECK(snaptest::same_content(decoded(snaptest::save_memory(loaded)), decoded(bytes)));
        // Solved again, both from the same state: the same bits.
        REQUIRE_OK(steel_batch_solve(loaded));
        REQUIRE_OK(steel_batch_solve(original));
        CHECK(same_scene_outputs(read_scene_outputs(loaded), read_scene_outputs(original)));
        REQUIRE_OK(steel_batch_destroy(loaded));
        REQUIRE_OK(steel_batch_destroy(original));
    }
}

TEST_CASE("one world extracted from a scene snapshot solves like that world in the whole batch") {
    const FullScene full = full_scene();
    const steel_scene_desc scene = full.desc();
    for (int32_t response : {STEEL_RESPONSE_IMMEDIATE, STEEL_RESPONSE_PROPAGATION}) {
        CAPTURE(response);
        const steel_batch whole_batch = solved_scene_batch(scene, {response});
        const SceneOutputs whole = read_scene_outputs(whole_batch);
        const Snapshot snapshot = decoded(snaptest::save_memory(whole_batch));
        REQUIRE_OK(steel_batch_destroy(whole_batch));
        uint64_t contact0 = 0, dof0 = 0;
        for (uint32_t w = 0; w < 7; ++w) {
            CAPTURE(w);
            const Snapshot one = steel::snapshot::extract_world(snapshot, w);
            REQUIRE(one.has_scene);
            CHECK(one.scene.world_count == 1);
            const steel_batch batch = load(encode(one));
            REQUIRE_OK(steel_batch_solve(batch));
            const SceneOutputs alone = read_scene_outputs(batch);
            REQUIRE_OK(steel_batch_destroy(batch));
            const uint32_t contacts = full.builder.contact_counts[w];
            const uint32_t dofs = snapshot.rows.world_dof_counts[w];
            CHECK(snaptest::same_bits(
                alone.scene[0],
                std::vector<double>(whole.scene[0].begin() + int64_t(6 * contact0),
                                    whole.scene[0].begin() + int64_t(6 * (contact0 + contacts)))));
            CHECK(snaptest::same_bits(
                alone.scene[1],
                std::vector<double>(whole.scene[1].begin() + int64_t(dof0),
                                    whole.scene[1].begin() + int64_t(dof0 + dofs))));
            contact0 += contacts;
            dof0 += dofs;
        }
    }
}

TEST_CASE("a snapshot whose scene is damaged is refused with a message naming the damage") {
    const FullScene full = full_scene();
    const steel_batch batch = solved_scene_batch(full.desc(), {});
    const Snapshot good = decoded(snaptest::save_memory(batch));
    REQUIRE_OK(steel_batch_destroy(batch));
    const uint64_t pile_contacts = full.builder.contact_counts[2];
    uint64_t pile_first_contact = 0;
    for (uint32_t w = 0; w < 2; ++w)
        pile_first_contact += full.builder.contact_counts[w];

    struct Damage {
        const char* what;
        std::function<void(Snapshot&)> apply;
        const char* message;
    };
    const std::vector<Damage> damages = {
        {"a mass short", [](Snapshot& s) { s.scene.body_mass.values.pop_back(); },
         "the snapshot's scene.body_mass has"},
        {"an extra world count",
         [](Snapshot& s) { s.scene.world_contact_count.values.push_back(0); },
         "the snapshot's scene.world_contact_count has 8 values but the scene's counts give it 7"},
        {"no joint type", [](Snapshot& s) { s.scene.joint_type.values[3] = 42; },
         "the snapshot's scene.joint_type[3] = 42 is not a STEEL_JOINT_* value"},
        {"no body flag", [&](Snapshot& s) { s.scene.body_flags.values[full.platform] = 7; },
         "is not a STEEL_BODY_* value"},
        {"a negative mass", [](Snapshot& s) { s.scene.body_mass.values[2] = -1.0; },
         "the snapshot's scene fails the upload checks: steel_batch_upload_scene: world 0, body 2"},
        {"no world body counts", [](Snapshot& s) { s.scene.world_body_count = {}; },
         "the snapshot's scene has no world_body_count"},
        {"no rows",
         [](Snapshot& s) {
             s.has_rows = false;
             s.solved = false;
         },
         "the snapshot has a scene but no rows"},
        {"a contact fewer than its rows",
         [&](Snapshot& s) {
             // The box pile loses its last contact: the scene builds fewer rows than recorded.
             const uint64_t c = pile_first_contact + pile_contacts - 1;
             s.scene.world_contact_count.values[2] -= 1;
             const auto erase = [&](auto& array, uint64_t per) {
                 array.values.erase(array.values.begin() + int64_t(per * c),
                                    array.values.begin() + int64_t(per * (c + 1)));
             };
             erase(s.scene.contact_body_a, 1);
             erase(s.scene.contact_body_b, 1);
             erase(s.scene.contact_point, 3);
             erase(s.scene.contact_normal, 3);
             erase(s.scene.contact_distance, 1);
             erase(s.scene.contact_friction, 1);
             erase(s.scene.contact_restitution, 1);
         },
         "world 2: the snapshot's scene builds"},
    };
    for (const Damage& damage : damages) {
        const std::string what = damage.what;
        CAPTURE(what);
        Snapshot bad = good;
        damage.apply(bad);
        const std::vector<uint8_t> bytes = encode(bad);
        steel_batch loaded{};
        CHECK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &loaded) ==
              STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(loaded.id == 0);
        const std::string message = steel_last_error_message();
        INFO(message);
        CHECK(message_has(damage.message));
    }
}

TEST_CASE("a snapshot without its scene replays a propagation solve with the immediate response") {
    // Rows alone have no trees: the loaded batch refuses the propagation response until its
    // options change; the immediate response is the same iteration (to rounding).
    SceneBuilder builder;
    builder.begin_world();
    scenes::add_arm_with_box(builder, 0.8, 40.0);
    const steel_scene_desc scene = builder.desc();
    const steel_batch batch = solved_scene_batch(scene, {STEEL_RESPONSE_PROPAGATION});
    const test::Solved recorded = test::read_all(batch);
    Snapshot rows_only = decoded(snaptest::save_memory(batch));
    REQUIRE(rows_only.has_scene);
    rows_only.has_scene = false;
    const std::vector<uint8_t> bytes = encode(rows_only);

    const steel_batch loaded = load(bytes);
    CHECK(steel_batch_solve(loaded) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(message_has("needs a scene upload"));
    uint64_t count = 0;
    CHECK(steel_batch_read_contact_impulses(loaded, nullptr, 0, &count) == STEEL_ERROR_NO_DATA);
    steel_solve_options replay;
    steel_solve_options_default(&replay);
    REQUIRE_OK(steel_batch_get_options(loaded, &replay));
    CHECK(replay.articulated_contact_response == STEEL_RESPONSE_PROPAGATION);
    replay.articulated_contact_response = STEEL_RESPONSE_IMMEDIATE;
    REQUIRE_OK(steel_batch_set_options(loaded, &replay));
    REQUIRE_OK(steel_batch_solve(loaded));
    const test::Solved replayed = test::read_all(loaded);
    CHECK(test::max_abs_diff(recorded.impulses, replayed.impulses) <=
          1e-10 * test::max_abs(recorded.impulses));
    REQUIRE_OK(steel_batch_destroy(loaded));

    // A rows upload after the scene upload: the next snapshot holds no scene.
    const steel_rows_desc rows = rows_only.rows.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    CHECK_FALSE(decoded(snaptest::save_memory(batch)).has_scene);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("steel-replay replays a scene snapshot and a scene capture with their scenes") {
    const FullScene full = full_scene();
    const steel_scene_desc scene = full.desc();
    const std::string capture = snaptest::temporary_path("scene_capture.steel");
    const steel_batch batch = solved_scene_batch(scene, {STEEL_RESPONSE_PROPAGATION});
    const std::string single = snaptest::temporary_path("scene.steel");
    REQUIRE_OK(steel_batch_save_file(batch, single.c_str()));

    // Two steps of a capture: the second from the first's integrated positions and velocities.
    REQUIRE_OK(steel_batch_set_capture(batch, capture.c_str()));
    REQUIRE_OK(steel_batch_solve(batch));
    SceneBuilder next = full.builder;
    next.set_state(test::read_doubles(batch, steel_batch_read_integrated_positions),
                   test::read_doubles(batch, steel_batch_read_joint_velocities));
    FullScene stepped = full;
    stepped.builder = next;
    const steel_scene_desc second = stepped.desc();
    REQUIRE_OK(steel_batch_upload_scene(batch, &second));
    REQUIRE_OK(steel_batch_solve(batch));
    REQUIRE_OK(steel_batch_destroy(batch));

    std::string output;
    CHECK(snaptest::run_replay("--info " + single, &output) == 0);
    INFO(output);
    CHECK(output.find("scene: " + std::to_string(full.builder.joint_type.size()) + " bodies") !=
          std::string::npos);
    CHECK(output.find("articulated_contact_response propagation") != std::string::npos);
    CHECK(snaptest::run_replay(single, &output) == 0);
    CHECK(output.find("no scene") == std::string::npos);
    CHECK(snaptest::run_replay(capture, &output) == 0);
    CHECK(output.find("record 1:") != std::string::npos);
    CHECK(output.find("no scene") == std::string::npos);

    const std::vector<uint8_t> bytes = snaptest::read_bytes(capture);
    const auto records = steel::snapshot::split_capture(bytes.data(), bytes.size(), "test");
    REQUIRE(records.size() == 2);
    for (const auto& record : records)
        CHECK(decode(bytes.data() + record.offset, record.size, "test").has_scene);
    std::remove(single.c_str());
    std::remove(capture.c_str());
}

TEST_CASE("a scene batch's snapshot size bound holds its saved size tightly") {
    const FullScene full = full_scene();
    const steel_scene_desc scene = full.desc();
    for (int32_t response : {STEEL_RESPONSE_IMMEDIATE, STEEL_RESPONSE_PROPAGATION}) {
        const steel_batch batch = solved_scene_batch(scene, {response});
        const steel::Batch& internal = steel::lookup_batch(batch.id, "test");
        const uint64_t bound = steel::snapshot::snapshot_size_bound(internal);
        const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
        const Snapshot rows_only = [&] {
            Snapshot s = decoded(bytes);
            s.has_scene = false;
            return s;
        }();
        // The scene is most of the difference a scene makes, and all of it is bounded.
        CHECK(bound >= bytes.size());
        CHECK(bound <= bytes.size() + 8192 + 64 * uint64_t(scene.world_count));
        CHECK(bytes.size() > encode(rows_only).size() + 8 * full.builder.mass.size() * 40);
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}

TEST_CASE("every truncation and every single-bit flip of a small scene snapshot is refused") {
    // One box resting on the ground: the scene table is most of the file.
    SceneBuilder builder;
    builder.begin_world();
    builder.add_body(scenes::free_box(1.0, {0.1, 0.1, 0.1}, {0, 0, 0.1}));
    scenes::box_plane_contacts(builder, 0, {{0, 0, 0.1}, {1, 0, 0, 0}}, {0.1, 0.1, 0.1}, -1, 0.0,
                               0.5);
    const steel_scene_desc scene = builder.desc();
    const steel_batch batch = solved_scene_batch(scene, {STEEL_RESPONSE_PROPAGATION});
    const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    REQUIRE(decoded(bytes).has_scene);
    INFO("snapshot of " << bytes.size() << " bytes");
    const auto refused = [](const std::vector<uint8_t>& damaged) {
        steel_batch loaded{77};
        const steel_status status =
            steel_batch_load_memory(STEEL_ABI_VERSION, damaged.data(), damaged.size(), &loaded);
        CHECK(status == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(loaded.id == 0);
        CHECK(message_has("steel_batch_load_memory"));
        if (status == STEEL_OK) steel_batch_destroy(loaded);
    };
    for (size_t length = 0; length < bytes.size(); ++length) {
        CAPTURE(length);
        refused(std::vector<uint8_t>(bytes.begin(), bytes.begin() + int64_t(length)));
    }
    for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
        CAPTURE(bit);
        std::vector<uint8_t> flipped = bytes;
        flipped[bit / 8] = uint8_t(flipped[bit / 8] ^ (1u << (bit % 8)));
        refused(flipped);
    }
}

TEST_CASE("a refused scene upload leaves the snapshot's scene as it was; an accepted one replaces "
          "it") {
    const FullScene full = full_scene();
    const steel_scene_desc first = full.desc();
    const steel_batch batch = solved_scene_batch(first, {});
    const Snapshot before = decoded(snaptest::save_memory(batch));

    // A bad mass deep in the last world: refused, and the snapshot is the same.
    FullScene bad = full;
    bad.builder.mass.back() = -1.0;
    const steel_scene_desc refused = bad.desc();
    CHECK(steel_batch_upload_scene(batch, &refused) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(snaptest::same_content(decoded(snaptest::save_memory(batch)), before));

    // A smaller scene, then the first again: each snapshot holds the scene just uploaded.
    SceneBuilder small;
    for (uint32_t w = 0; w < first.world_count; ++w) {
        small.begin_world();
        small.add_body(scenes::free_box(2.0, {0.1, 0.1, 0.1}, {0, 0, 0.1}));
        scenes::box_plane_contacts(small, 0, {{0, 0, 0.1}, {1, 0, 0, 0}}, {0.1, 0.1, 0.1}, -1, 0.0,
                                   0.5);
    }
    const steel_scene_desc second = small.desc();
    REQUIRE_OK(steel_batch_upload_scene(batch, &second));
    const Snapshot after = decoded(snaptest::save_memory(batch));
    REQUIRE(after.has_scene);
    CHECK(after.scene.body_mass.values == small.mass);
    CHECK(after.scene.contact_point.values == small.contact_point);
    CHECK_FALSE(after.scene.body_flags.present);
    REQUIRE_OK(steel_batch_upload_scene(batch, &first));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(snaptest::same_content(decoded(snaptest::save_memory(batch)), before));
    REQUIRE_OK(steel_batch_destroy(batch));
}
