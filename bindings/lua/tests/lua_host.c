/*
 * lua_host.c: a minimal Lua 5.4 interpreter for Steel's Lua tests: `steel_lua_host script.lua
 * [args...]` runs the script with `arg` set like the stock lua5.4 does, and exits 0 on success,
 * 1 on an error (printed with a traceback), or the script's os.exit code.
 *
 * Why not just lua5.4: this program is built by the same CMake build as steel.so, so in the
 * AddressSanitizer build it is instrumented too and owns the ASan runtime. The Lua module's
 * tests then run under ASan and LeakSanitizer without preloading anything into a foreign
 * interpreter, and lua_close() at the end runs every __gc, so a binding that leaked would show.
 * `require "steel"` still goes through package.cpath (LUA_CPATH), exactly as in lua5.4.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdio.h>

static int traceback(lua_State* L) {
    const char* message = lua_tostring(L, 1);
    if (message == NULL) message = luaL_tolstring(L, 1, NULL);
    luaL_traceback(L, L, message, 1);
    return 1;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s script.lua [args...]\n", argv[0]);
        return 2;
    }
    lua_State* L = luaL_newstate();
    if (L == NULL) {
        fprintf(stderr, "%s: cannot create a Lua state\n", argv[0]);
        return 1;
    }
    luaL_openlibs(L);

    /* arg[0] = the script, arg[1..] = its arguments, arg[-1] = this program (as lua.c does). */
    lua_createtable(L, argc - 2, 2);
    for (int k = 0; k < argc; ++k) {
        lua_pushstring(L, argv[k]);
        lua_rawseti(L, -2, k - 1);
    }
    lua_setglobal(L, "arg");

    int status = 0;
    lua_pushcfunction(L, traceback);
    if (luaL_loadfile(L, argv[1]) != LUA_OK) {
        fprintf(stderr, "%s\n", lua_tostring(L, -1));
        status = 1;
    } else {
        for (int k = 2; k < argc; ++k)
            lua_pushstring(L, argv[k]);
        if (lua_pcall(L, argc - 2, 0, 1) != LUA_OK) {
            fprintf(stderr, "%s\n", lua_tostring(L, -1));
            status = 1;
        }
    }
    lua_close(L); /* runs every pending __gc and __close */
    return status;
}
