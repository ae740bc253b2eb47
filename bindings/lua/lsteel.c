/*
 * lsteel.c: luaopen_steel, the module-level functions, and the one way a failed Steel call
 * becomes a Lua error. See lsteel.h for the map of the module.
 *
 *   local steel = require "steel"
 *   steel.version()         --> "0.1.0"         (the library's)
 *   steel.abi_version()     --> 1               (the library's)
 *   steel.ABI_VERSION       --> 1               (the header this module was built with)
 *   steel.build_features()  --> { float32 = true, float64 = true, cuda = false }, bits
 *   steel.status_string(-1) --> "invalid argument"
 *   steel.batch{...}, steel.buffer(...), steel.default_options()
 */
#include "lsteel.h"

#include <string.h>

const lsteel_name lsteel_backend_names[] = {
    {"cpu", STEEL_BACKEND_CPU}, {"cuda", STEEL_BACKEND_CUDA}, {NULL, 0}};
const lsteel_name lsteel_precision_names[] = {
    {"float32", STEEL_PRECISION_FLOAT32}, {"float64", STEEL_PRECISION_FLOAT64}, {NULL, 0}};
const lsteel_name lsteel_path_names[] = {{"auto", STEEL_PATH_AUTO},
                                         {"general", STEEL_PATH_GENERAL},
                                         {"dense", STEEL_PATH_DENSE},
                                         {NULL, 0}};
const lsteel_name lsteel_row_kind_names[] = {
    {"bilateral", STEEL_ROW_BILATERAL},           {"bounded", STEEL_ROW_BOUNDED},
    {"contact_normal", STEEL_ROW_CONTACT_NORMAL}, {"friction_box", STEEL_ROW_FRICTION_BOX},
    {"friction_cone", STEEL_ROW_FRICTION_CONE},   {NULL, 0}};
const lsteel_name lsteel_joint_type_names[] = {{"fixed", STEEL_JOINT_FIXED},
                                               {"revolute", STEEL_JOINT_REVOLUTE},
                                               {"prismatic", STEEL_JOINT_PRISMATIC},
                                               {"ball", STEEL_JOINT_BALL},
                                               {"free", STEEL_JOINT_FREE},
                                               {"none", STEEL_JOINT_NONE},
                                               {NULL, 0}};
const lsteel_name lsteel_body_flag_names[] = {{"dynamic", STEEL_BODY_DYNAMIC},
                                              {"static", STEEL_BODY_STATIC},
                                              {"kinematic", STEEL_BODY_KINEMATIC},
                                              {NULL, 0}};
const lsteel_name lsteel_friction_model_names[] = {
    {"box", STEEL_FRICTION_MODEL_BOX}, {"cone", STEEL_FRICTION_MODEL_CONE}, {NULL, 0}};
const lsteel_name lsteel_drive_mode_names[] = {
    {"augmented", STEEL_DRIVE_MODE_AUGMENTED}, {"rows", STEEL_DRIVE_MODE_ROWS}, {NULL, 0}};

int lsteel_find_name(const lsteel_name* names, const char* name, int32_t* out) {
    for (; names->name != NULL; ++names)
        if (strcmp(names->name, name) == 0) {
            *out = names->value;
            return 1;
        }
    return 0;
}

const char* lsteel_name_of(const lsteel_name* names, int32_t value) {
    for (; names->name != NULL; ++names)
        if (names->value == value) return names->name;
    return NULL;
}

void lsteel_push_name_list(lua_State* L, const lsteel_name* names) {
    luaL_Buffer text;
    luaL_buffinit(L, &text);
    for (const lsteel_name* name = names; name->name != NULL; ++name) {
        if (name != names) luaL_addstring(&text, ", ");
        luaL_addchar(&text, '\'');
        luaL_addstring(&text, name->name);
        luaL_addchar(&text, '\'');
    }
    luaL_pushresult(&text);
}

const char* lsteel_describe(lua_State* L, int index) {
    if (lua_type(L, index) == LUA_TSTRING)
        return lua_pushfstring(L, "'%s'", lua_tostring(L, index));
    return luaL_tolstring(L, index, NULL);
}

int lsteel_status_error(lua_State* L, steel_status status) {
    /* Copy the message first: it is only valid until this thread's next Steel call. */
    return luaL_error(L, "%s [%s]", steel_last_error_message(), steel_status_string(status));
}

static int version(lua_State* L) {
    lua_pushstring(L, steel_version());
    return 1;
}

static int abi_version(lua_State* L) {
    lua_pushinteger(L, (lua_Integer)steel_abi_version());
    return 1;
}

/* A table of the features by name, and the raw STEEL_FEATURE_* bits as a second result. */
static int build_features(lua_State* L) {
    const uint32_t bits = steel_build_features();
    lua_createtable(L, 0, 3);
    lua_pushboolean(L, (bits & STEEL_FEATURE_FLOAT32) != 0);
    lua_setfield(L, -2, "float32");
    lua_pushboolean(L, (bits & STEEL_FEATURE_FLOAT64) != 0);
    lua_setfield(L, -2, "float64");
    lua_pushboolean(L, (bits & STEEL_FEATURE_CUDA) != 0);
    lua_setfield(L, -2, "cuda");
    lua_pushinteger(L, (lua_Integer)bits);
    return 2;
}

static int status_string(lua_State* L) {
    const lua_Integer status = luaL_checkinteger(L, 1);
    luaL_argcheck(L, status >= INT32_MIN && status <= INT32_MAX, 1, "not a steel_status");
    lua_pushstring(L, steel_status_string((steel_status)status));
    return 1;
}

static int default_options(lua_State* L) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    lsteel_push_options(L, &options);
    return 1;
}

static const luaL_Reg module_functions[] = {{"version", version},
                                            {"abi_version", abi_version},
                                            {"build_features", build_features},
                                            {"status_string", status_string},
                                            {"default_options", default_options},
                                            {NULL, NULL}};

__attribute__((visibility("default"))) int luaopen_steel(lua_State* L) {
    luaL_newlib(L, module_functions);
    lua_pushinteger(L, (lua_Integer)STEEL_ABI_VERSION);
    lua_setfield(L, -2, "ABI_VERSION");
    luaL_setfuncs(L, lsteel_snapshot_functions, 0);
    lsteel_open_buffer(L);
    lsteel_open_batch(L);
    return 1;
}
