/*
 * lsteel_scene.c: scene mode on a steel.batch (docs/scene-mode.md): batch:upload_scene and the
 * readers of a scene solve's results.
 *
 *   batch:upload_scene {
 *     dt = 1 / 60, friction_model = "cone", gravity = { 0, 0, -9.81 },
 *     world_body_count = { 1 }, world_contact_count = { 4 },
 *     body_mass = { 2 }, body_com = { 0, 0, 0 }, body_inertia = { ... }, joint_type = { "free" },
 *     joint_parent = { -1 }, ..., contact_body_a = { 0, 0, 0, 0 }, ...
 *   }
 *   batch:solve()
 *   local per_contact = batch:contact_impulses()    -- 6 per contact; or into a float64 buffer
 *   local q_next = batch:integrated_positions()
 *
 * The table's fields are steel_scene_desc's, by their C names. The step parameters are numbers
 * (dt, baumgarte, restitution_threshold) or names (friction_model "box" / "cone", drive_mode
 * "augmented" / "rows"; the numbers of steel.h work too); fields left out keep
 * steel_scene_desc_default's values. world_count defaults to #world_body_count (or the batch's
 * world count when that is missing too). Every array is a Lua table or a steel.buffer of its C
 * type: uint32 for the world counts, int32 for body and joint indices, joint_type (names "fixed",
 * "revolute", "prismatic", "ball", "free", "none") and body_flags ("dynamic", "static",
 * "kinematic"), float64 for the rest.
 *
 * Steel reads each array as far as the counts say, so every length is checked here first, against
 * the counts it follows from: the world counts, the body / contact / connect / mimic totals, and
 * the DOF and position-coordinate totals. Those last two follow from joint_type and body_flags,
 * so their values are checked here as well (an unknown joint type has no DOF count); everything
 * else in the scene is Steel's to validate, and its messages come through unchanged.
 */
#include "lsteel.h"

#include <stdio.h>
#include <string.h>

/* What an array's length is a multiple of. */
typedef enum scene_per {
    PER_WORLD,    /* world_count */
    PER_BODY,     /* total bodies: the sum of world_body_count */
    PER_DOF,      /* total DOFs: from joint_type and body_flags */
    PER_POSITION, /* total position coordinates: from joint_type */
    PER_CONTACT,  /* the sum of world_contact_count */
    PER_CONNECT,  /* the sum of world_connect_count */
    PER_MIMIC     /* the sum of world_mimic_count */
} scene_per;

static const char* const per_text[] = {
    "world_count",
    "total bodies, the sum of world_body_count",
    "total DOFs, from joint_type and body_flags",
    "total position coordinates, from joint_type",
    "total contacts, the sum of world_contact_count",
    "total connect constraints, the sum of world_connect_count",
    "total mimic constraints, the sum of world_mimic_count",
};

/* Every array of steel_scene_desc: X(field, element type, C type, names for int32 entries, per,
 * values per item). One list for the reading, the length checks and the desc. */
#define SCENE_ARRAYS(X)                                                                            \
    X(gravity, LSTEEL_FLOAT64, double, NULL, PER_WORLD, 3)                                         \
    X(world_body_count, LSTEEL_UINT32, uint32_t, NULL, PER_WORLD, 1)                               \
    X(world_contact_count, LSTEEL_UINT32, uint32_t, NULL, PER_WORLD, 1)                            \
    X(world_connect_count, LSTEEL_UINT32, uint32_t, NULL, PER_WORLD, 1)                            \
    X(world_mimic_count, LSTEEL_UINT32, uint32_t, NULL, PER_WORLD, 1)                              \
    X(body_mass, LSTEEL_FLOAT64, double, NULL, PER_BODY, 1)                                        \
    X(body_com, LSTEEL_FLOAT64, double, NULL, PER_BODY, 3)                                         \
    X(body_inertia, LSTEEL_FLOAT64, double, NULL, PER_BODY, 6)                                     \
    X(joint_type, LSTEEL_INT32, int32_t, lsteel_joint_type_names, PER_BODY, 1)                     \
    X(joint_parent, LSTEEL_INT32, int32_t, NULL, PER_BODY, 1)                                      \
    X(joint_axis, LSTEEL_FLOAT64, double, NULL, PER_BODY, 3)                                       \
    X(joint_parent_frame, LSTEEL_FLOAT64, double, NULL, PER_BODY, 7)                               \
    X(joint_child_frame, LSTEEL_FLOAT64, double, NULL, PER_BODY, 7)                                \
    X(joint_position, LSTEEL_FLOAT64, double, NULL, PER_POSITION, 1)                               \
    X(joint_velocity, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                    \
    X(joint_armature, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                    \
    X(joint_damping, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                     \
    X(joint_lower, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                       \
    X(joint_upper, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                       \
    X(drive_stiffness, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                   \
    X(drive_damping, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                     \
    X(drive_target_position, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                             \
    X(drive_target_velocity, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                             \
    X(drive_effort_limit, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                                \
    X(joint_velocity_limit, LSTEEL_FLOAT64, double, NULL, PER_DOF, 1)                              \
    X(external_force, LSTEEL_FLOAT64, double, NULL, PER_BODY, 6)                                   \
    X(body_pose, LSTEEL_FLOAT64, double, NULL, PER_BODY, 7)                                        \
    X(body_velocity, LSTEEL_FLOAT64, double, NULL, PER_BODY, 6)                                    \
    X(body_flags, LSTEEL_INT32, int32_t, lsteel_body_flag_names, PER_BODY, 1)                      \
    X(contact_body_a, LSTEEL_INT32, int32_t, NULL, PER_CONTACT, 1)                                 \
    X(contact_body_b, LSTEEL_INT32, int32_t, NULL, PER_CONTACT, 1)                                 \
    X(contact_point, LSTEEL_FLOAT64, double, NULL, PER_CONTACT, 3)                                 \
    X(contact_normal, LSTEEL_FLOAT64, double, NULL, PER_CONTACT, 3)                                \
    X(contact_distance, LSTEEL_FLOAT64, double, NULL, PER_CONTACT, 1)                              \
    X(contact_friction, LSTEEL_FLOAT64, double, NULL, PER_CONTACT, 1)                              \
    X(contact_restitution, LSTEEL_FLOAT64, double, NULL, PER_CONTACT, 1)                           \
    X(connect_body_a, LSTEEL_INT32, int32_t, NULL, PER_CONNECT, 1)                                 \
    X(connect_body_b, LSTEEL_INT32, int32_t, NULL, PER_CONNECT, 1)                                 \
    X(connect_point_a, LSTEEL_FLOAT64, double, NULL, PER_CONNECT, 3)                               \
    X(connect_point_b, LSTEEL_FLOAT64, double, NULL, PER_CONNECT, 3)                               \
    X(mimic_joint_a, LSTEEL_INT32, int32_t, NULL, PER_MIMIC, 1)                                    \
    X(mimic_joint_b, LSTEEL_INT32, int32_t, NULL, PER_MIMIC, 1)                                    \
    X(mimic_ratio, LSTEEL_FLOAT64, double, NULL, PER_MIMIC, 1)                                     \
    X(mimic_offset, LSTEEL_FLOAT64, double, NULL, PER_MIMIC, 1)

#define SCENE_INDEX(field, type, ctype, names, per, width) A_##field,
enum scene_array_index { SCENE_ARRAYS(SCENE_INDEX) A_COUNT };

typedef struct scene_array {
    const char* field;
    lsteel_type type;
    const lsteel_name* names;
    scene_per per;
    uint32_t width;
} scene_array;

#define SCENE_ENTRY(field, type, ctype, names, per, width) {#field, type, names, per, width},
static const scene_array scene_arrays[A_COUNT] = {SCENE_ARRAYS(SCENE_ENTRY)};

/* The scalar fields (the step parameters and world_count). */
static const char* const scalar_fields[] = {
    "world_count",    "dt",         "baumgarte", "restitution_threshold",
    "friction_model", "drive_mode", NULL};

static const char* const what = "scene";

/* ---- the step parameters ----------------------------------------------------------------- */

static void read_number(lua_State* L, int table, const char* field, double* out) {
    if (lua_getfield(L, table, field) != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "steel: scene.%s must be a number, got %s", field,
                       lsteel_describe(L, -1));
        *out = (double)lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
}

/* A name from `names`, or an int32 number (checked by Steel). */
static void read_enum(lua_State* L, int table, const char* field, const lsteel_name* names,
                      int32_t* out) {
    const int type = lua_getfield(L, table, field);
    if (type == LUA_TSTRING) {
        if (!lsteel_find_name(names, lua_tostring(L, -1), out)) {
            lsteel_push_name_list(L, names);
            luaL_error(L, "steel: scene.%s = '%s' is not one of %s", field, lua_tostring(L, -2),
                       lua_tostring(L, -1));
        }
    } else if (type != LUA_TNIL) {
        int ok = 0;
        const lua_Integer value = type == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || value < INT32_MIN || value > INT32_MAX) {
            const char* given = lsteel_describe(L, -1);
            lsteel_push_name_list(L, names);
            luaL_error(L, "steel: scene.%s must be one of %s (or a steel.h number), got %s", field,
                       lua_tostring(L, -1), given);
        }
        *out = (int32_t)value;
    }
    lua_pop(L, 1);
}

/* ---- counts ------------------------------------------------------------------------------ */

static uint64_t sum_of(const lsteel_array* array) {
    uint64_t sum = 0;
    for (size_t k = 0; k < array->count; ++k)
        sum += ((const uint32_t*)array->data)[k];
    return sum;
}

/* Checks the length of every array counted `per`. */
static void check_counts(lua_State* L, const lsteel_array* arrays, scene_per per, uint64_t items) {
    for (int k = 0; k < A_COUNT; ++k) {
        const scene_array* a = &scene_arrays[k];
        if (a->per != per) continue;
        if (a->width == 1) {
            lsteel_check_count(L, &arrays[k], what, a->field, items, per_text[per]);
        } else {
            /* Not lua_pushfstring: an allocation could run a finalizer that changes a count
             * buffer after its sum was taken. */
            char count_name[64];
            snprintf(count_name, sizeof count_name, "%d * %s", (int)a->width, per_text[per]);
            lsteel_check_count(L, &arrays[k], what, a->field, (uint64_t)a->width * items,
                               count_name);
        }
    }
}

/* Totals of DOFs and position coordinates from joint_type and body_flags (both of the right length
 * by now). Their values are checked here: an unknown joint type has no DOF count to check the
 * per-DOF arrays against. */
static void count_coordinates(lua_State* L, const lsteel_array* joint_type,
                              const lsteel_array* body_flags, uint64_t bodies, uint64_t* dofs,
                              uint64_t* positions) {
    static const uint32_t joint_dofs[] = {0, 1, 1, 3, 6}, joint_positions[] = {0, 1, 1, 4, 7};
    *dofs = *positions = 0;
    for (uint64_t b = 0; b < bodies; ++b) {
        const int32_t type = ((const int32_t*)joint_type->data)[b];
        const int32_t flags =
            body_flags->data != NULL ? ((const int32_t*)body_flags->data)[b] : STEEL_BODY_DYNAMIC;
        if (type < STEEL_JOINT_FIXED || type > STEEL_JOINT_NONE) {
            lsteel_push_name_list(L, lsteel_joint_type_names);
            luaL_error(L, "steel: scene.joint_type[%I] = %d is not a STEEL_JOINT_* value (%s)",
                       (lua_Integer)b + 1, (int)type, lua_tostring(L, -1));
        }
        if (flags < STEEL_BODY_DYNAMIC || flags > STEEL_BODY_KINEMATIC) {
            lsteel_push_name_list(L, lsteel_body_flag_names);
            luaL_error(L, "steel: scene.body_flags[%I] = %d is not a STEEL_BODY_* value (%s)",
                       (lua_Integer)b + 1, (int)flags, lua_tostring(L, -1));
        }
        if (type == STEEL_JOINT_NONE) {
            /* a standalone body: no position coordinates */
            *dofs += flags == STEEL_BODY_DYNAMIC ? 6 : 0;
        } else {
            *dofs += joint_dofs[type];
            *positions += joint_positions[type];
        }
    }
}

/* ---- batch:upload_scene ------------------------------------------------------------------ */

static int is_known_field(const char* name) {
    for (const char* const* field = scalar_fields; *field != NULL; ++field)
        if (strcmp(*field, name) == 0) return 1;
    for (int k = 0; k < A_COUNT; ++k)
        if (strcmp(scene_arrays[k].field, name) == 0) return 1;
    return 0;
}

/* batch:upload_scene(scene): see the top of this file. */
static int batch_upload_scene(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING || !is_known_field(lua_tostring(L, -2)))
            luaL_error(L, "steel: unknown scene field %s (not a field of steel_scene_desc)",
                       lsteel_describe(L, -2));
        lua_pop(L, 1);
    }

    steel_scene_desc scene;
    steel_scene_desc_default(&scene);
    read_number(L, 2, "dt", &scene.dt);
    read_number(L, 2, "baumgarte", &scene.baumgarte);
    read_number(L, 2, "restitution_threshold", &scene.restitution_threshold);
    read_enum(L, 2, "friction_model", lsteel_friction_model_names, &scene.friction_model);
    read_enum(L, 2, "drive_mode", lsteel_drive_mode_names, &scene.drive_mode);

    /* Every array stays on the stack until the call (each a temporary copy or nil), and each
     * conversion and message needs a few more slots. */
    luaL_checkstack(L, A_COUNT + 20, "steel: upload_scene");
    lsteel_array arrays[A_COUNT];
    for (int k = 0; k < A_COUNT; ++k)
        arrays[k] = lsteel_read_array(L, 2, what, scene_arrays[k].field, scene_arrays[k].type,
                                      scene_arrays[k].names);

    /* The world count, then every count that follows from it, in the order they depend. */
    uint64_t world_count = arrays[A_world_body_count].count;
    if (lua_getfield(L, 2, "world_count") != LUA_TNIL) {
        int ok = 0;
        const lua_Integer value = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || value < 0 || value > (lua_Integer)UINT32_MAX)
            luaL_error(L, "steel: scene.world_count must be an integer in [0, 4294967295], got %s",
                       lsteel_describe(L, -1));
        world_count = (uint64_t)value;
    } else if (arrays[A_world_body_count].data == NULL) {
        steel_batch_desc desc;
        steel_batch_desc_default(&desc);
        LSTEEL_CHECK(L, steel_batch_get_desc(handle, &desc));
        world_count = desc.world_count;
    }
    lua_pop(L, 1);
    if (world_count > UINT32_MAX) luaL_error(L, "steel: scene has more than 2^32 - 1 worlds");
    check_counts(L, arrays, PER_WORLD, world_count);

    const uint64_t bodies = sum_of(&arrays[A_world_body_count]);
    check_counts(L, arrays, PER_BODY, bodies);
    check_counts(L, arrays, PER_CONTACT, sum_of(&arrays[A_world_contact_count]));
    check_counts(L, arrays, PER_CONNECT, sum_of(&arrays[A_world_connect_count]));
    check_counts(L, arrays, PER_MIMIC, sum_of(&arrays[A_world_mimic_count]));

    if (bodies > 0 && arrays[A_joint_type].data == NULL)
        luaL_error(
            L,
            "steel: scene.joint_type is missing but there are %I bodies (it says how many DOFs and "
            "position coordinates each has)",
            (lua_Integer)bodies);
    uint64_t dofs = 0, positions = 0;
    if (bodies > 0)
        count_coordinates(L, &arrays[A_joint_type], &arrays[A_body_flags], bodies, &dofs,
                          &positions);
    check_counts(L, arrays, PER_DOF, dofs);
    check_counts(L, arrays, PER_POSITION, positions);

    scene.world_count = (uint32_t)world_count;
#define SCENE_ASSIGN(field, type, ctype, names, per, width)                                        \
    scene.field = (const ctype*)arrays[A_##field].data;
    SCENE_ARRAYS(SCENE_ASSIGN)
#undef SCENE_ASSIGN
    LSTEEL_CHECK(L, steel_batch_upload_scene(handle, &scene));
    return 0;
}

/* ---- readers ----------------------------------------------------------------------------- */

/* Each: batch:<name>([buffer]) -> a table (or the float64 buffer filled), count. */
static int batch_contact_impulses(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_contact_impulses);
}
static int batch_joint_velocities(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_joint_velocities);
}
static int batch_limit_impulses(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_limit_impulses);
}
static int batch_drive_impulses(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_drive_impulses);
}
static int batch_body_velocities(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_body_velocities);
}
static int batch_body_poses(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_body_poses);
}
static int batch_constraint_impulses(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_constraint_impulses);
}
static int batch_integrated_positions(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_integrated_positions);
}

const luaL_Reg lsteel_scene_methods[] = {{"upload_scene", batch_upload_scene},
                                         {"contact_impulses", batch_contact_impulses},
                                         {"joint_velocities", batch_joint_velocities},
                                         {"limit_impulses", batch_limit_impulses},
                                         {"drive_impulses", batch_drive_impulses},
                                         {"body_velocities", batch_body_velocities},
                                         {"body_poses", batch_body_poses},
                                         {"constraint_impulses", batch_constraint_impulses},
                                         {"integrated_positions", batch_integrated_positions},
                                         {NULL, NULL}};
