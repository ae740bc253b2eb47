/*
 * lsteel_options.c: steel_solve_options as a Lua table, field by field, by the names SPEC.md
 * and steel.h give them:
 *
 *   batch:set_options{ iterations = 200, tolerance = 1e-8, path = "dense",
 *                      nesterov_momentum = true, record_residual_history = true }
 *
 * `option_fields` below is the one place an option is named. Adding an option that the C struct
 * gained is one line there (and, for an enum, one line of names). SPEC's drive_mode became a field
 * of the scene (steel_scene_desc), as did friction_model, dt and the other step parameters: naming
 * one here says to pass it to batch:upload_scene.
 */
#include "lsteel.h"

#include <string.h>

typedef enum option_type {
    OPTION_COUNT,  /* uint32_t, an integer >= 0 */
    OPTION_NUMBER, /* double */
    OPTION_FLAG,   /* uint32_t 0/1: true/false or 0/1 in Lua */
    OPTION_ENUM    /* int32_t, a name from `names` in Lua */
} option_type;

typedef struct option_field {
    const char* name;
    option_type type;
    size_t offset;
    const lsteel_name* names; /* OPTION_ENUM: the values by name */
} option_field;

/* SPEC section 7's names of the solve and response modes. */
static const lsteel_name solve_mode_names[] = {{"serial", 0}, {"colored", 1}, {NULL, 0}};
static const lsteel_name contact_response_names[] = {
    {"immediate", 0}, {"propagation", 1}, {NULL, 0}};

#define FIELD(name, type, names)                                                                   \
    { #name, type, offsetof(steel_solve_options, name), names }

static const option_field option_fields[] = {
    FIELD(iterations, OPTION_COUNT, NULL),
    FIELD(tolerance, OPTION_NUMBER, NULL),
    FIELD(cfm, OPTION_NUMBER, NULL),
    FIELD(path, OPTION_ENUM, lsteel_path_names),
    FIELD(warm_start, OPTION_FLAG, NULL),
    FIELD(contact_regularization, OPTION_NUMBER, NULL),
    FIELD(nesterov_momentum, OPTION_FLAG, NULL),
    FIELD(enable_bilateral_preelimination, OPTION_FLAG, NULL),
    FIELD(record_residual_history, OPTION_FLAG, NULL),
    FIELD(solve_mode, OPTION_ENUM, solve_mode_names),
    FIELD(articulated_contact_response, OPTION_ENUM, contact_response_names),
};

#define OPTION_COUNT_ALL (sizeof option_fields / sizeof option_fields[0])

/* steel_scene_desc's step parameters: set per upload (batch:upload_scene), not as solve options. */
static const char* const scene_fields[] = {
    "drive_mode", "friction_model", "dt", "baumgarte", "restitution_threshold", "gravity", NULL};

static const option_field* find_option(const char* name) {
    for (size_t k = 0; k < OPTION_COUNT_ALL; ++k)
        if (strcmp(option_fields[k].name, name) == 0) return &option_fields[k];
    return NULL;
}

static void* field_address(steel_solve_options* options, const option_field* field) {
    return (unsigned char*)options + field->offset;
}

/* Sets one option from the value at the stack top. */
static void set_option(lua_State* L, steel_solve_options* options, const option_field* field) {
    const char* name = field->name;
    int ok = 0;
    switch (field->type) {
    case OPTION_COUNT: {
        const lua_Integer value = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || value < 0 || value > (lua_Integer)UINT32_MAX)
            luaL_error(L, "steel: option '%s' must be an integer in [0, 4294967295], got %s", name,
                       lsteel_describe(L, -1));
        *(uint32_t*)field_address(options, field) = (uint32_t)value;
        break;
    }
    case OPTION_NUMBER:
        if (lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "steel: option '%s' must be a number, got %s", name,
                       lsteel_describe(L, -1));
        *(double*)field_address(options, field) = (double)lua_tonumber(L, -1);
        break;
    case OPTION_FLAG: {
        uint32_t flag = 0;
        if (lua_isboolean(L, -1)) {
            flag = lua_toboolean(L, -1) ? 1u : 0u;
        } else {
            const lua_Integer value =
                lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : -1;
            if (!ok || (value != 0 && value != 1))
                luaL_error(L, "steel: option '%s' must be a boolean (or 0/1), got %s", name,
                           lsteel_describe(L, -1));
            flag = (uint32_t)value;
        }
        *(uint32_t*)field_address(options, field) = flag;
        break;
    }
    case OPTION_ENUM: {
        int32_t value = 0;
        if (lua_type(L, -1) != LUA_TSTRING ||
            !lsteel_find_name(field->names, lua_tostring(L, -1), &value)) {
            const char* given = lsteel_describe(L, -1);
            lsteel_push_name_list(L, field->names);
            luaL_error(L, "steel: option '%s' = %s is not one of %s", name, given,
                       lua_tostring(L, -1));
        }
        *(int32_t*)field_address(options, field) = value;
        break;
    }
    }
}

void lsteel_options_from_table(lua_State* L, int index, steel_solve_options* options) {
    index = lua_absindex(L, index);
    luaL_checktype(L, index, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, index) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "steel: option names are strings, got %s", lsteel_describe(L, -2));
        const option_field* field = find_option(lua_tostring(L, -2));
        if (field == NULL) {
            for (const char* const* scene = scene_fields; *scene != NULL; ++scene)
                if (strcmp(*scene, lua_tostring(L, -2)) == 0)
                    luaL_error(L,
                               "steel: '%s' is not a solve option; it is a field of the scene: "
                               "batch:upload_scene{ %s = ..., ... }",
                               *scene, *scene);
            luaL_error(L, "steel: unknown option '%s'", lua_tostring(L, -2));
        }
        set_option(L, options, field);
        lua_pop(L, 1);
    }
}

void lsteel_push_options(lua_State* L, const steel_solve_options* options) {
    lua_createtable(L, 0, (int)OPTION_COUNT_ALL);
    steel_solve_options copy = *options;
    for (size_t k = 0; k < OPTION_COUNT_ALL; ++k) {
        const option_field* field = &option_fields[k];
        const void* address = field_address(&copy, field);
        switch (field->type) {
        case OPTION_COUNT:
            lua_pushinteger(L, (lua_Integer) * (const uint32_t*)address);
            break;
        case OPTION_NUMBER:
            lua_pushnumber(L, *(const double*)address);
            break;
        case OPTION_FLAG:
            lua_pushboolean(L, *(const uint32_t*)address != 0);
            break;
        case OPTION_ENUM: {
            const char* value_name = lsteel_name_of(field->names, *(const int32_t*)address);
            if (value_name != NULL)
                lua_pushstring(L, value_name);
            else
                lua_pushinteger(L, *(const int32_t*)address);
            break;
        }
        }
        lua_setfield(L, -2, field->name);
    }
}
