/*
 * lsteel_snapshot.c: snapshots and capture from Lua (docs/snapshots.md).
 *
 *   batch:save(path)                 -- steel_batch_save_file
 *   local bytes = batch:save_string() -- steel_batch_save_memory, as a Lua string
 *   batch:set_capture(path)          -- append every later solve to a capture file; nil stops
 *   local copy <close> = steel.load(path)        -- steel_batch_load_file: a new batch
 *   local copy2 <close> = steel.load_string(bytes) -- steel_batch_load_memory
 *
 * A loaded batch is created "closed" first, like steel.batch, so a refused snapshot leaves an
 * object whose __gc does nothing; the error carries Steel's message naming what was wrong.
 */
#include "lsteel.h"

#include <string.h>

/* The path at `index` (nil allowed when `optional`). A Lua string may hold a NUL byte, which
 * would silently cut the C path short: another file than the one named. */
static const char* check_path(lua_State* L, int index, int optional) {
    if (optional && lua_isnoneornil(L, index)) return NULL;
    size_t length = 0;
    const char* path = luaL_checklstring(L, index, &length);
    if (strlen(path) != length) luaL_argerror(L, index, "steel: the path holds a NUL byte");
    return path;
}

static int batch_save(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    LSTEEL_CHECK(L, steel_batch_save_file(handle, check_path(L, 2, 0)));
    return 0;
}

static int batch_save_string(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    uint64_t size = 0;
    LSTEEL_CHECK(L, steel_batch_save_memory(handle, NULL, 0, &size));
    /* A scratch userdata, so an error below leaks nothing (see lsteel.h's memory rule). */
    void* bytes = lua_newuserdatauv(L, size > 0 ? (size_t)size : 1, 0);
    LSTEEL_CHECK(L, steel_batch_save_memory(handle, bytes, size, &size));
    lua_pushlstring(L, (const char*)bytes, (size_t)size);
    return 1;
}

static int batch_set_capture(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    LSTEEL_CHECK(L, steel_batch_set_capture(handle, check_path(L, 2, 1)));
    return 0;
}

static int load_file(lua_State* L) {
    const char* path = check_path(L, 1, 0);
    steel_batch* slot = lsteel_push_closed_batch(L);
    steel_batch handle = {0};
    LSTEEL_CHECK(L, steel_batch_load_file(STEEL_ABI_VERSION, path, &handle));
    *slot = handle;
    return 1;
}

static int load_string(lua_State* L) {
    size_t size = 0;
    const char* bytes = luaL_checklstring(L, 1, &size);
    steel_batch* slot = lsteel_push_closed_batch(L);
    steel_batch handle = {0};
    LSTEEL_CHECK(L, steel_batch_load_memory(STEEL_ABI_VERSION, bytes, (uint64_t)size, &handle));
    *slot = handle;
    return 1;
}

const luaL_Reg lsteel_snapshot_methods[] = {{"save", batch_save},
                                            {"save_string", batch_save_string},
                                            {"set_capture", batch_set_capture},
                                            {NULL, NULL}};

const luaL_Reg lsteel_snapshot_functions[] = {
    {"load", load_file}, {"load_string", load_string}, {NULL, NULL}};
