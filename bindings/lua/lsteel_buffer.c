/*
 * lsteel_buffer.c: steel.buffer, a fixed-size numeric array in one Lua userdata. Bulk numbers
 * (J and Y values, impulses, residual histories) go through it without a Lua table per value:
 * an upload reads a buffer in place, and the read functions can fill one.
 *
 *   local b = steel.buffer(1000)              -- 1000 float64 zeros
 *   local k = steel.buffer({0, 1, 2}, "int32") -- a copy of a table; "float64", "int32", "uint32"
 *   b[1] = 2.5; print(b[1], #b, b:type())      -- indices are 1-based, like a Lua sequence
 *   b:fill(0); local t = b:totable()
 *
 * Reading past the end gives nil (so ipairs works); writing past it, or a value the type cannot
 * hold, is an error. The memory belongs to Lua: no __gc is needed.
 */
#include "lsteel.h"

#include <stdio.h>
#include <string.h>

static const lsteel_name type_names[] = {
    {"float64", LSTEEL_FLOAT64}, {"int32", LSTEEL_INT32}, {"uint32", LSTEEL_UINT32}, {NULL, 0}};

/* The data starts at this offset inside the userdata, aligned for double. */
#define DATA_OFFSET ((sizeof(lsteel_buffer) + 15u) & ~(size_t)15u)

static size_t element_size(lsteel_type type) {
    return type == LSTEEL_FLOAT64 ? sizeof(double) : sizeof(int32_t);
}

const char* lsteel_type_name(lsteel_type type) {
    return lsteel_name_of(type_names, (int32_t)type);
}

lsteel_buffer* lsteel_new_buffer(lua_State* L, size_t count, lsteel_type type) {
    if (count > (((size_t)-1) - DATA_OFFSET) / element_size(type) || count > (size_t)LUA_MAXINTEGER)
        luaL_error(L, "steel.buffer: %f elements is too many", (lua_Number)count);
    const size_t bytes = DATA_OFFSET + count * element_size(type);
    lsteel_buffer* buffer = (lsteel_buffer*)lua_newuserdatauv(L, bytes, 0);
    buffer->count = count;
    buffer->type = type;
    buffer->data = (unsigned char*)buffer + DATA_OFFSET;
    memset(buffer->data, 0, count * element_size(type));
    luaL_setmetatable(L, LSTEEL_BUFFER);
    return buffer;
}

lsteel_buffer* lsteel_to_buffer(lua_State* L, int index) {
    return (lsteel_buffer*)luaL_testudata(L, index, LSTEEL_BUFFER);
}

static lsteel_buffer* check_buffer(lua_State* L, int index) {
    return (lsteel_buffer*)luaL_checkudata(L, index, LSTEEL_BUFFER);
}

/* Stores the number at `index` as element `position` (0-based); `what` names it in errors. */
static void store(lua_State* L, lsteel_buffer* buffer, size_t position, int index,
                  const char* what) {
    /* Numbers only, as upload tables take them: Lua would also convert a string like "0x10". */
    if (lua_type(L, index) != LUA_TNUMBER)
        luaL_error(L, "steel.buffer: %s must be a number, got %s", what, luaL_typename(L, index));
    int is_number = 0;
    if (buffer->type == LSTEEL_FLOAT64) {
        const lua_Number value = lua_tonumberx(L, index, &is_number);
        ((double*)buffer->data)[position] = (double)value;
        return;
    }
    const lua_Integer value = lua_tointegerx(L, index, &is_number);
    if (!is_number)
        luaL_error(L, "steel.buffer: %s must be an integer for a %s buffer, got %s", what,
                   lsteel_type_name(buffer->type), lsteel_describe(L, index));
    if (buffer->type == LSTEEL_INT32) {
        if (value < INT32_MIN || value > INT32_MAX)
            luaL_error(L, "steel.buffer: %s = %I is out of the int32 range", what, value);
        ((int32_t*)buffer->data)[position] = (int32_t)value;
    } else {
        if (value < 0 || value > (lua_Integer)UINT32_MAX)
            luaL_error(L, "steel.buffer: %s = %I is out of the uint32 range", what, value);
        ((uint32_t*)buffer->data)[position] = (uint32_t)value;
    }
}

static void push_element(lua_State* L, const lsteel_buffer* buffer, size_t position) {
    switch (buffer->type) {
    case LSTEEL_FLOAT64:
        lua_pushnumber(L, ((const double*)buffer->data)[position]);
        break;
    case LSTEEL_INT32:
        lua_pushinteger(L, ((const int32_t*)buffer->data)[position]);
        break;
    case LSTEEL_UINT32:
        lua_pushinteger(L, (lua_Integer)((const uint32_t*)buffer->data)[position]);
        break;
    }
}

/* steel.buffer(count | table [, type]) */
static int buffer_new(lua_State* L) {
    const int type = luaL_checkoption(L, 2, "float64",
                                      (const char* const[]){"float64", "int32", "uint32", NULL});
    if (lua_type(L, 1) == LUA_TTABLE) {
        const lua_Integer count = luaL_len(L, 1);
        lsteel_buffer* buffer = lsteel_new_buffer(L, (size_t)count, (lsteel_type)type);
        for (lua_Integer k = 1; k <= count; ++k) {
            lua_geti(L, 1, k);
            char what[48];
            snprintf(what, sizeof what, "element %lld", (long long)k);
            store(L, buffer, (size_t)(k - 1), -1, what);
            lua_pop(L, 1);
        }
        return 1;
    }
    const lua_Integer count = luaL_checkinteger(L, 1);
    luaL_argcheck(L, count >= 0, 1, "the element count must be >= 0");
    lsteel_new_buffer(L, (size_t)count, (lsteel_type)type);
    return 1;
}

static int buffer_len(lua_State* L) {
    lua_pushinteger(L, (lua_Integer)check_buffer(L, 1)->count);
    return 1;
}

/* buffer[i] (1-based; nil past either end) or a method by name. */
static int buffer_index(lua_State* L) {
    const lsteel_buffer* buffer = check_buffer(L, 1);
    if (lua_type(L, 2) == LUA_TSTRING) {
        lua_getmetatable(L, 1);
        lua_getfield(L, -1, "__methods");
        lua_pushvalue(L, 2);
        lua_rawget(L, -2);
        return 1;
    }
    int is_integer = 0;
    const lua_Integer position = lua_tointegerx(L, 2, &is_integer);
    if (!is_integer || position < 1 || (lua_Unsigned)position > buffer->count) {
        lua_pushnil(L);
        return 1;
    }
    push_element(L, buffer, (size_t)(position - 1));
    return 1;
}

static int buffer_newindex(lua_State* L) {
    lsteel_buffer* buffer = check_buffer(L, 1);
    int is_integer = 0;
    const lua_Integer position = lua_tointegerx(L, 2, &is_integer);
    if (!is_integer || position < 1 || (lua_Unsigned)position > buffer->count)
        return luaL_error(L, "steel.buffer: index %s is outside [1, %d]", lsteel_describe(L, 2),
                          (int)(buffer->count > INT32_MAX ? INT32_MAX : buffer->count));
    char what[48];
    snprintf(what, sizeof what, "element %lld", (long long)position);
    store(L, buffer, (size_t)(position - 1), 3, what);
    return 0;
}

static int buffer_totable(lua_State* L) {
    const lsteel_buffer* buffer = check_buffer(L, 1);
    lua_createtable(L, buffer->count > INT32_MAX ? 0 : (int)buffer->count, 0);
    for (size_t k = 0; k < buffer->count; ++k) {
        push_element(L, buffer, k);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    return 1;
}

static int buffer_fill(lua_State* L) {
    lsteel_buffer* buffer = check_buffer(L, 1);
    luaL_checkany(L, 2);
    for (size_t k = 0; k < buffer->count; ++k)
        store(L, buffer, k, 2, "the fill value");
    lua_settop(L, 1);
    return 1;
}

static int buffer_type(lua_State* L) {
    lua_pushstring(L, lsteel_type_name(check_buffer(L, 1)->type));
    return 1;
}

static int buffer_tostring(lua_State* L) {
    const lsteel_buffer* buffer = check_buffer(L, 1);
    lua_pushfstring(L, "steel.buffer(%I, %s): %p", (lua_Integer)buffer->count,
                    lsteel_type_name(buffer->type), (const void*)buffer);
    return 1;
}

void lsteel_open_buffer(lua_State* L) {
    static const luaL_Reg metamethods[] = {{"__len", buffer_len},
                                           {"__index", buffer_index},
                                           {"__newindex", buffer_newindex},
                                           {"__tostring", buffer_tostring},
                                           {NULL, NULL}};
    static const luaL_Reg methods[] = {
        {"totable", buffer_totable}, {"fill", buffer_fill}, {"type", buffer_type}, {NULL, NULL}};
    luaL_newmetatable(L, LSTEEL_BUFFER);
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__methods");
    lua_pop(L, 1);
    lua_pushcfunction(L, buffer_new);
    lua_setfield(L, -2, "buffer");
}
