/*
 * lsteel_arrays.c: one field of a Lua table as a C array, for the desc structs of the C API.
 * A field may be a Lua sequence (copied, every entry checked) or a steel.buffer of the right
 * element type (used in place, no copy). The C API reads as many values as its counts say, so
 * the caller checks every array's length with lsteel_check_count before handing it to Steel:
 * a short table must be a Lua error here, never a read past its end in the library.
 *
 * Scene uploads (lsteel_scene.c) and snapshots (later) take their arrays through the same two
 * functions.
 */
#include "lsteel.h"

/* Stores entry `position` (0-based) of the table being copied, which is at the stack top. */
static void store_entry(lua_State* L, lsteel_buffer* copy, size_t position, const char* what,
                        const char* field, const lsteel_name* names) {
    const lua_Integer lua_position = (lua_Integer)position + 1;
    if (copy->type == LSTEEL_FLOAT64) {
        if (lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "steel: %s.%s[%I] must be a number, got %s", what, field, lua_position,
                       luaL_typename(L, -1));
        ((double*)copy->data)[position] = (double)lua_tonumber(L, -1);
        return;
    }
    if (names != NULL && lua_type(L, -1) == LUA_TSTRING) {
        int32_t value = 0;
        if (!lsteel_find_name(names, lua_tostring(L, -1), &value)) {
            lsteel_push_name_list(L, names);
            luaL_error(L, "steel: %s.%s[%I] = '%s' is not one of %s", what, field, lua_position,
                       lua_tostring(L, -2), lua_tostring(L, -1));
        }
        ((int32_t*)copy->data)[position] = value;
        return;
    }
    int is_integer = 0;
    const lua_Integer value =
        lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &is_integer) : 0;
    if (!is_integer)
        luaL_error(L, "steel: %s.%s[%I] must be an integer%s, got %s", what, field, lua_position,
                   names != NULL ? " or a name" : "", lsteel_describe(L, -1));
    if (copy->type == LSTEEL_INT32) {
        if (value < INT32_MIN || value > INT32_MAX)
            luaL_error(L, "steel: %s.%s[%I] = %I is out of the int32 range", what, field,
                       lua_position, value);
        ((int32_t*)copy->data)[position] = (int32_t)value;
    } else {
        if (value < 0 || value > (lua_Integer)UINT32_MAX)
            luaL_error(L, "steel: %s.%s[%I] = %I is out of the uint32 range", what, field,
                       lua_position, value);
        ((uint32_t*)copy->data)[position] = (uint32_t)value;
    }
}

lsteel_array lsteel_read_array(lua_State* L, int table_index, const char* what, const char* field,
                               lsteel_type type, const lsteel_name* names) {
    lsteel_array array = {NULL, 0};
    table_index = lua_absindex(L, table_index);
    luaL_checkstack(L, 8, "steel: reading an array"); /* the value, its copy, an entry, messages */
    lua_getfield(L, table_index, field);
    if (lua_isnil(L, -1)) return array;

    const lsteel_buffer* buffer = lsteel_to_buffer(L, -1);
    if (buffer != NULL) {
        if (buffer->type != type)
            luaL_error(L, "steel: %s.%s is a %s buffer; it must be a %s buffer or a table", what,
                       field, lsteel_type_name(buffer->type), lsteel_type_name(type));
        array.data = buffer->data;
        array.count = buffer->count;
        return array;
    }
    if (!lua_istable(L, -1))
        luaL_error(L, "steel: %s.%s must be a table or a steel.buffer, got %s", what, field,
                   luaL_typename(L, -1));

    const lua_Integer count = luaL_len(L, -1);
    lsteel_buffer* copy = lsteel_new_buffer(L, (size_t)(count < 0 ? 0 : count), type);
    for (lua_Integer k = 1; k <= count; ++k) {
        lua_geti(L, -2, k);
        store_entry(L, copy, (size_t)(k - 1), what, field, names);
        lua_pop(L, 1);
    }
    lua_remove(L, -2); /* the table; the copy stays on the stack until the caller is done */
    array.data = copy->data;
    array.count = copy->count;
    return array;
}

void lsteel_check_count(lua_State* L, const lsteel_array* array, const char* what,
                        const char* field, uint64_t count, const char* count_name) {
    /* An absent array goes to Steel as NULL: Steel itself says whether it was needed. */
    if (array->data == NULL) return;
    if ((uint64_t)array->count != count)
        luaL_error(L, "steel: %s.%s has %I values but needs %I (%s)", what, field,
                   (lua_Integer)array->count, (lua_Integer)count, count_name);
}
