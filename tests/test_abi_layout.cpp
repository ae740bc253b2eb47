// The ABI is pinned: every public struct's size and field offsets, and the values of the enums
// (never reused). A change here is a breaking change and must bump STEEL_ABI_VERSION.
#include <doctest/doctest.h>
#include <steel/steel.h>

#include <cstddef>
#include <cstring>
#include <string>

static_assert(STEEL_ABI_VERSION == 1, "ABI version changed: update the pinned layout below");

static_assert(sizeof(steel_batch) == 8);
static_assert(offsetof(steel_batch, id) == 0);

static_assert(sizeof(steel_batch_desc) == 24);
static_assert(offsetof(steel_batch_desc, struct_size) == 0);
static_assert(offsetof(steel_batch_desc, backend) == 4);
static_assert(offsetof(steel_batch_desc, precision) == 8);
static_assert(offsetof(steel_batch_desc, world_count) == 12);
static_assert(offsetof(steel_batch_desc, thread_count) == 16);
static_assert(offsetof(steel_batch_desc, reserved0) == 20);

static_assert(sizeof(steel_rows_desc) == 136);
static_assert(offsetof(steel_rows_desc, struct_size) == 0);
static_assert(offsetof(steel_rows_desc, world_count) == 4);
static_assert(offsetof(steel_rows_desc, world_dof_counts) == 8);
static_assert(offsetof(steel_rows_desc, world_row_counts) == 16);
static_assert(offsetof(steel_rows_desc, unconstrained_velocity) == 24);
static_assert(offsetof(steel_rows_desc, block_offset) == 32);
static_assert(offsetof(steel_rows_desc, block_length) == 40);
static_assert(offsetof(steel_rows_desc, value_count) == 48);
static_assert(offsetof(steel_rows_desc, jacobian) == 56);
static_assert(offsetof(steel_rows_desc, response) == 64);
static_assert(offsetof(steel_rows_desc, bias) == 72);
static_assert(offsetof(steel_rows_desc, kind) == 80);
static_assert(offsetof(steel_rows_desc, lower) == 88);
static_assert(offsetof(steel_rows_desc, upper) == 96);
static_assert(offsetof(steel_rows_desc, normal_row) == 104);
static_assert(offsetof(steel_rows_desc, friction) == 112);
static_assert(offsetof(steel_rows_desc, regularization) == 120);
static_assert(offsetof(steel_rows_desc, initial_impulse) == 128);

static_assert(sizeof(steel_solve_options) == 64);
static_assert(offsetof(steel_solve_options, struct_size) == 0);
static_assert(offsetof(steel_solve_options, iterations) == 4);
static_assert(offsetof(steel_solve_options, tolerance) == 8);
static_assert(offsetof(steel_solve_options, cfm) == 16);
static_assert(offsetof(steel_solve_options, path) == 24);
static_assert(offsetof(steel_solve_options, warm_start) == 28);
static_assert(offsetof(steel_solve_options, contact_regularization) == 32);
static_assert(offsetof(steel_solve_options, nesterov_momentum) == 40);
static_assert(offsetof(steel_solve_options, enable_bilateral_preelimination) == 44);
static_assert(offsetof(steel_solve_options, record_residual_history) == 48);
static_assert(offsetof(steel_solve_options, solve_mode) == 52);
static_assert(offsetof(steel_solve_options, articulated_contact_response) == 56);
static_assert(offsetof(steel_solve_options, reserved0) == 60);

static_assert(sizeof(steel_world_stats) == 40);
static_assert(offsetof(steel_world_stats, struct_size) == 0);
static_assert(offsetof(steel_world_stats, path) == 4);
static_assert(offsetof(steel_world_stats, sweeps) == 8);
static_assert(offsetof(steel_world_stats, flags) == 12);
static_assert(offsetof(steel_world_stats, residual) == 16);
static_assert(offsetof(steel_world_stats, first_residual) == 24);
static_assert(offsetof(steel_world_stats, momentum_restarts) == 32);
static_assert(offsetof(steel_world_stats, reserved0) == 36);

// Scene mode.
static_assert(sizeof(steel_scene_desc) == 392);
static_assert(offsetof(steel_scene_desc, struct_size) == 0);
static_assert(offsetof(steel_scene_desc, world_count) == 4);
static_assert(offsetof(steel_scene_desc, dt) == 8);
static_assert(offsetof(steel_scene_desc, baumgarte) == 16);
static_assert(offsetof(steel_scene_desc, restitution_threshold) == 24);
static_assert(offsetof(steel_scene_desc, friction_model) == 32);
static_assert(offsetof(steel_scene_desc, drive_mode) == 36);
static_assert(offsetof(steel_scene_desc, gravity) == 40);
static_assert(offsetof(steel_scene_desc, world_body_count) == 48);
static_assert(offsetof(steel_scene_desc, world_contact_count) == 56);
static_assert(offsetof(steel_scene_desc, world_connect_count) == 64);
static_assert(offsetof(steel_scene_desc, world_mimic_count) == 72);
static_assert(offsetof(steel_scene_desc, body_mass) == 80);
static_assert(offsetof(steel_scene_desc, body_com) == 88);
static_assert(offsetof(steel_scene_desc, body_inertia) == 96);
static_assert(offsetof(steel_scene_desc, joint_type) == 104);
static_assert(offsetof(steel_scene_desc, joint_parent) == 112);
static_assert(offsetof(steel_scene_desc, joint_axis) == 120);
static_assert(offsetof(steel_scene_desc, joint_parent_frame) == 128);
static_assert(offsetof(steel_scene_desc, joint_child_frame) == 136);
static_assert(offsetof(steel_scene_desc, joint_position) == 144);
static_assert(offsetof(steel_scene_desc, joint_velocity) == 152);
static_assert(offsetof(steel_scene_desc, joint_armature) == 160);
static_assert(offsetof(steel_scene_desc, joint_damping) == 168);
static_assert(offsetof(steel_scene_desc, joint_lower) == 176);
static_assert(offsetof(steel_scene_desc, joint_upper) == 184);
static_assert(offsetof(steel_scene_desc, drive_stiffness) == 192);
static_assert(offsetof(steel_scene_desc, drive_damping) == 200);
static_assert(offsetof(steel_scene_desc, drive_target_position) == 208);
static_assert(offsetof(steel_scene_desc, drive_target_velocity) == 216);
static_assert(offsetof(steel_scene_desc, drive_effort_limit) == 224);
static_assert(offsetof(steel_scene_desc, joint_velocity_limit) == 232);
static_assert(offsetof(steel_scene_desc, external_force) == 240);
static_assert(offsetof(steel_scene_desc, body_pose) == 248);
static_assert(offsetof(steel_scene_desc, body_velocity) == 256);
static_assert(offsetof(steel_scene_desc, body_flags) == 264);
static_assert(offsetof(steel_scene_desc, contact_body_a) == 272);
static_assert(offsetof(steel_scene_desc, contact_body_b) == 280);
static_assert(offsetof(steel_scene_desc, contact_point) == 288);
static_assert(offsetof(steel_scene_desc, contact_normal) == 296);
static_assert(offsetof(steel_scene_desc, contact_distance) == 304);
static_assert(offsetof(steel_scene_desc, contact_friction) == 312);
static_assert(offsetof(steel_scene_desc, contact_restitution) == 320);
static_assert(offsetof(steel_scene_desc, connect_body_a) == 328);
static_assert(offsetof(steel_scene_desc, connect_body_b) == 336);
static_assert(offsetof(steel_scene_desc, connect_point_a) == 344);
static_assert(offsetof(steel_scene_desc, connect_point_b) == 352);
static_assert(offsetof(steel_scene_desc, mimic_joint_a) == 360);
static_assert(offsetof(steel_scene_desc, mimic_joint_b) == 368);
static_assert(offsetof(steel_scene_desc, mimic_ratio) == 376);
static_assert(offsetof(steel_scene_desc, mimic_offset) == 384);
static_assert(STEEL_JOINT_FIXED == 0 && STEEL_JOINT_REVOLUTE == 1 && STEEL_JOINT_PRISMATIC == 2 &&
              STEEL_JOINT_BALL == 3 && STEEL_JOINT_FREE == 4 && STEEL_JOINT_NONE == 5);
static_assert(STEEL_BODY_DYNAMIC == 0 && STEEL_BODY_STATIC == 1 && STEEL_BODY_KINEMATIC == 2);
static_assert(STEEL_FRICTION_MODEL_BOX == 0 && STEEL_FRICTION_MODEL_CONE == 1);
static_assert(STEEL_DRIVE_MODE_AUGMENTED == 0 && STEEL_DRIVE_MODE_ROWS == 1);

static_assert(STEEL_OK == 0 && STEEL_ERROR_INVALID_ARGUMENT == -1 &&
              STEEL_ERROR_INVALID_HANDLE == -2 && STEEL_ERROR_ABI_MISMATCH == -3 &&
              STEEL_ERROR_BUFFER_TOO_SMALL == -4 && STEEL_ERROR_UNSUPPORTED == -5 &&
              STEEL_ERROR_OUT_OF_MEMORY == -6 && STEEL_ERROR_STRUCT_VERSION == -7 &&
              STEEL_ERROR_NO_DATA == -8 && STEEL_ERROR_INTERNAL == -9 &&
              STEEL_ERROR_NO_DEVICE == -10);
static_assert(sizeof(steel_row_values_desc) == 48);
static_assert(offsetof(steel_row_values_desc, struct_size) == 0);
static_assert(offsetof(steel_row_values_desc, reserved0) == 4);
static_assert(offsetof(steel_row_values_desc, unconstrained_velocity) == 8);
static_assert(offsetof(steel_row_values_desc, jacobian) == 16);
static_assert(offsetof(steel_row_values_desc, response) == 24);
static_assert(offsetof(steel_row_values_desc, bias) == 32);
static_assert(offsetof(steel_row_values_desc, initial_impulse) == 40);

static_assert(STEEL_BACKEND_CPU == 0 && STEEL_BACKEND_CUDA == 1);
static_assert(STEEL_PRECISION_FLOAT32 == 1 && STEEL_PRECISION_FLOAT64 == 2);
static_assert(STEEL_ROW_BILATERAL == 0 && STEEL_ROW_BOUNDED == 1 && STEEL_ROW_CONTACT_NORMAL == 2 &&
              STEEL_ROW_FRICTION_BOX == 3 && STEEL_ROW_FRICTION_CONE == 4);
static_assert(STEEL_PATH_AUTO == 0 && STEEL_PATH_GENERAL == 1 && STEEL_PATH_DENSE == 2);
static_assert(STEEL_SOLVE_SERIAL == 0 && STEEL_SOLVE_COLORED == 1);
static_assert(STEEL_RESPONSE_IMMEDIATE == 0 && STEEL_RESPONSE_PROPAGATION == 1);
static_assert(STEEL_WORLD_NONFINITE == 1 && STEEL_WORLD_CONVERGED == 2);

TEST_CASE("the default structs carry their own size") {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    CHECK(desc.struct_size == sizeof(desc));
    steel_solve_options options;
    steel_solve_options_default(&options);
    CHECK(options.struct_size == sizeof(options));
    CHECK(options.iterations == 50);
    CHECK(options.warm_start == 1);
    steel_rows_desc rows;
    steel_rows_desc_default(&rows);
    CHECK(rows.struct_size == sizeof(rows));
    CHECK(rows.jacobian == nullptr);
}

// The caller's struct and its neighbours in one buffer, so a write past the caller's size shows.
template <class T> struct Guarded {
    unsigned char bytes[sizeof(T) + 64];
    Guarded() { std::memset(bytes, 0xab, sizeof(bytes)); }
    T* object() { return reinterpret_cast<T*>(bytes); }
    bool untouched_from(size_t first) const {
        for (size_t k = first; k < sizeof(bytes); ++k)
            if (bytes[k] != 0xab) return false;
        return true;
    }
};

template <class T>
void check_sized_init(steel_status (*init)(T*, uint32_t), void (*inline_default)(T*)) {
    T expected;
    inline_default(&expected); // the header's inline form passes its own sizeof
    CHECK(expected.struct_size == sizeof(T));

    Guarded<T> exact;
    REQUIRE(init(exact.object(), sizeof(T)) == STEEL_OK);
    CHECK(std::memcmp(exact.object(), &expected, sizeof(T)) == 0);
    CHECK(exact.untouched_from(sizeof(T)));

    // A caller from a newer header: its unknown tail comes back zero, struct_size is its own.
    Guarded<T> newer;
    REQUIRE(init(newer.object(), sizeof(T) + 16) == STEEL_OK);
    CHECK(newer.object()->struct_size == sizeof(T) + 16);
    for (size_t k = sizeof(T); k < sizeof(T) + 16; ++k)
        CHECK(newer.bytes[k] == 0);
    CHECK(newer.untouched_from(sizeof(T) + 16));
    CHECK(std::memcmp(newer.bytes + 4, reinterpret_cast<const unsigned char*>(&expected) + 4,
                      sizeof(T) - 4) == 0);

    // A caller from an older header, an unset size, a null pointer: refused, nothing written.
    for (uint32_t size : {0u, 4u, uint32_t(sizeof(T) - 8), 4097u, 0xffffffffu}) {
        Guarded<T> refused;
        CHECK(init(refused.object(), size) == STEEL_ERROR_STRUCT_VERSION);
        CHECK(
            std::string(steel_last_error_message()).find("struct_size = " + std::to_string(size)) !=
            std::string::npos);
        CHECK(refused.untouched_from(0));
    }
    CHECK(init(nullptr, sizeof(T)) == STEEL_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("the sized init functions write exactly the caller's struct_size bytes") {
    check_sized_init(steel_batch_desc_init, steel_batch_desc_default);
    check_sized_init(steel_rows_desc_init, steel_rows_desc_default);
    check_sized_init(steel_solve_options_init, steel_solve_options_default);
    check_sized_init(steel_scene_desc_init, steel_scene_desc_default);
    check_sized_init(steel_row_values_desc_init, steel_row_values_desc_default);
}
