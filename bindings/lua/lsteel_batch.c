/*
 * lsteel_batch.c: steel.batch, a Steel batch as a Lua userdata.
 *
 *   local batch <close> = steel.batch{ world_count = 2, precision = "float64" }
 *   batch:upload_rows{ world_dof_counts = {1, 2}, world_row_counts = {1, 2}, ... }
 *   batch:set_options{ iterations = 100, tolerance = 1e-9 }
 *   batch:solve()
 *   local impulses = batch:impulses()          -- a table, or batch:impulses(buffer)
 *   local stats = batch:stats()                -- one table per world
 *
 * The pattern is liolib's: the userdata is created holding the null handle and its metatable
 * set *before* steel_batch_create runs, so an error at any point leaves an object whose __gc is
 * a no-op. close, __gc and __close destroy the handle once and set it to null; any later method
 * call is a Lua error ("attempt to use a closed steel.batch"), never a call with a stale handle.
 *
 * Indices that are Steel data keep Steel's meaning: DOF offsets, normal_row and world numbers
 * are 0-based like in C. Results come back as Lua sequences, so impulses[1] is row 0.
 *
 * Scene mode's methods (upload_scene and its readers) live in lsteel_scene.c and are added to
 * the same method table, and so do the snapshot methods of lsteel_snapshot.c.
 */
#include "lsteel.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct lua_batch {
    steel_batch handle; /* the null handle once closed */
} lua_batch;

static lua_batch* check_batch_object(lua_State* L, int index) {
    return (lua_batch*)luaL_checkudata(L, index, LSTEEL_BATCH);
}

/* The live handle of the batch argument at `index`; an error if it was closed. */
steel_batch lsteel_check_batch(lua_State* L, int index) {
    lua_batch* batch = check_batch_object(L, index);
    if (batch->handle.id == 0) luaL_error(L, "steel: attempt to use a closed steel.batch");
    return batch->handle;
}

/* ---- creation ---------------------------------------------------------------------------- */

static void read_enum_field(lua_State* L, int table, const char* field, const lsteel_name* names,
                            int32_t* out) {
    if (lua_getfield(L, table, field) != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TSTRING || !lsteel_find_name(names, lua_tostring(L, -1), out)) {
            const char* given = lsteel_describe(L, -1);
            lsteel_push_name_list(L, names);
            luaL_error(L, "steel.batch: %s = %s is not one of %s", field, given,
                       lua_tostring(L, -1));
        }
    }
    lua_pop(L, 1);
}

static void read_count_field(lua_State* L, int table, const char* field, uint32_t* out) {
    if (lua_getfield(L, table, field) != LUA_TNIL) {
        int ok = 0;
        const lua_Integer value = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || value < 0 || value > (lua_Integer)UINT32_MAX)
            luaL_error(L, "steel.batch: %s must be an integer in [0, 4294967295], got %s", field,
                       lsteel_describe(L, -1));
        *out = (uint32_t)value;
    }
    lua_pop(L, 1);
}

/* steel.batch([desc]): desc fields are steel_batch_desc's: backend ("cpu", "cuda"), precision
 * ("float32", "float64"), world_count, thread_count (0 = one per hardware thread, at most 256).
 * Others are an error. */
static int batch_new(lua_State* L) {
    static const char* const known[] = {"backend", "precision", "world_count", "thread_count",
                                        NULL};
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_pushnil(L);
        while (lua_next(L, 1) != 0) {
            int found = 0;
            if (lua_type(L, -2) == LUA_TSTRING)
                for (const char* const* name = known; *name != NULL; ++name)
                    found = found || strcmp(*name, lua_tostring(L, -2)) == 0;
            if (!found)
                luaL_error(L,
                           "steel.batch: unknown field %s (known: backend, precision, world_count, "
                           "thread_count)",
                           lsteel_describe(L, -2));
            lua_pop(L, 1);
        }
        read_enum_field(L, 1, "backend", lsteel_backend_names, &desc.backend);
        read_enum_field(L, 1, "precision", lsteel_precision_names, &desc.precision);
        read_count_field(L, 1, "world_count", &desc.world_count);
        read_count_field(L, 1, "thread_count", &desc.thread_count);
    }
    steel_batch* slot = lsteel_push_closed_batch(L);
    steel_batch handle = {0};
    LSTEEL_CHECK(L, steel_batch_create(STEEL_ABI_VERSION, &desc, &handle));
    *slot = handle;
    return 1;
}

steel_batch* lsteel_push_closed_batch(lua_State* L) {
    lua_batch* batch = (lua_batch*)lua_newuserdatauv(L, sizeof(lua_batch), 0);
    batch->handle.id = 0; /* "closed" until a create or load succeeds */
    luaL_setmetatable(L, LSTEEL_BATCH);
    return &batch->handle;
}

/* batch:close(), __gc, __close: destroy once; later calls do nothing. */
static int batch_close(lua_State* L) {
    lua_batch* batch = check_batch_object(L, 1);
    if (batch->handle.id != 0) {
        const steel_batch handle = batch->handle;
        batch->handle.id = 0;
        /* A live handle always destroys; anything else would be a bug in Steel, and raising
         * from __gc only turns into a warning, so report it where we can. */
        const steel_status status = steel_batch_destroy(handle);
        if (status != STEEL_OK) lsteel_status_error(L, status);
    }
    return 0;
}

static int batch_is_closed(lua_State* L) {
    lua_pushboolean(L, check_batch_object(L, 1)->handle.id == 0);
    return 1;
}

/* The 64-bit handle id (0 once closed), for logs and for matching a batch across tools. */
static int batch_handle(lua_State* L) {
    lua_pushinteger(L, (lua_Integer)check_batch_object(L, 1)->handle.id);
    return 1;
}

static int batch_tostring(lua_State* L) {
    const lua_batch* batch = check_batch_object(L, 1);
    if (batch->handle.id == 0)
        lua_pushliteral(L, "steel.batch (closed)");
    else {
        char text[64];
        snprintf(text, sizeof text, "steel.batch (handle 0x%016" PRIx64 ")", batch->handle.id);
        lua_pushstring(L, text);
    }
    return 1;
}

static int batch_desc(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    LSTEEL_CHECK(L, steel_batch_get_desc(handle, &desc));
    lua_createtable(L, 0, 4);
    const char* backend = lsteel_name_of(lsteel_backend_names, desc.backend);
    const char* precision = lsteel_name_of(lsteel_precision_names, desc.precision);
    lua_pushstring(L, backend != NULL ? backend : "unknown");
    lua_setfield(L, -2, "backend");
    lua_pushstring(L, precision != NULL ? precision : "unknown");
    lua_setfield(L, -2, "precision");
    lua_pushinteger(L, (lua_Integer)desc.world_count);
    lua_setfield(L, -2, "world_count");
    lua_pushinteger(L, (lua_Integer)desc.thread_count);
    lua_setfield(L, -2, "thread_count");
    return 1;
}

/* ---- rows upload ------------------------------------------------------------------------- */

/* Sum of a uint32 array, in 64 bits. */
static uint64_t sum_of(const lsteel_array* array) {
    uint64_t sum = 0;
    for (size_t k = 0; k < array->count; ++k)
        sum += ((const uint32_t*)array->data)[k];
    return sum;
}

/* batch:upload_rows(rows): rows has steel_rows_desc's fields by name, each a table or a
 * steel.buffer (kind also takes names: "contact_normal", ...). world_count defaults to
 * #world_dof_counts and value_count to #jacobian. Every array's length is checked against the
 * counts before Steel sees it; Steel then validates the contents. */
static int batch_upload_rows(lua_State* L) {
    static const char* const known[] = {"world_count",
                                        "world_dof_counts",
                                        "world_row_counts",
                                        "unconstrained_velocity",
                                        "block_offset",
                                        "block_length",
                                        "value_count",
                                        "jacobian",
                                        "response",
                                        "bias",
                                        "kind",
                                        "lower",
                                        "upper",
                                        "normal_row",
                                        "friction",
                                        "regularization",
                                        "initial_impulse",
                                        NULL};
    const steel_batch handle = lsteel_check_batch(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 2) != 0) {
        int found = 0;
        if (lua_type(L, -2) == LUA_TSTRING)
            for (const char* const* name = known; *name != NULL; ++name)
                found = found || strcmp(*name, lua_tostring(L, -2)) == 0;
        if (!found)
            luaL_error(L, "steel: unknown rows field %s (not a field of steel_rows_desc)",
                       lsteel_describe(L, -2));
        lua_pop(L, 1);
    }
    /* 15 arrays stay on the stack until the call, each conversion and error message needs a few
     * more slots: ask for plenty (Lua does not check stack overflow in C functions). */
    luaL_checkstack(L, 40, "steel: upload_rows");

    const char* what = "rows";
    const lsteel_array dof_counts =
        lsteel_read_array(L, 2, what, "world_dof_counts", LSTEEL_UINT32, NULL);
    const lsteel_array row_counts =
        lsteel_read_array(L, 2, what, "world_row_counts", LSTEEL_UINT32, NULL);
    const lsteel_array v_hat =
        lsteel_read_array(L, 2, what, "unconstrained_velocity", LSTEEL_FLOAT64, NULL);
    const lsteel_array block_offset =
        lsteel_read_array(L, 2, what, "block_offset", LSTEEL_UINT32, NULL);
    const lsteel_array block_length =
        lsteel_read_array(L, 2, what, "block_length", LSTEEL_UINT32, NULL);
    const lsteel_array jacobian = lsteel_read_array(L, 2, what, "jacobian", LSTEEL_FLOAT64, NULL);
    const lsteel_array response = lsteel_read_array(L, 2, what, "response", LSTEEL_FLOAT64, NULL);
    const lsteel_array bias = lsteel_read_array(L, 2, what, "bias", LSTEEL_FLOAT64, NULL);
    const lsteel_array kind =
        lsteel_read_array(L, 2, what, "kind", LSTEEL_INT32, lsteel_row_kind_names);
    const lsteel_array lower = lsteel_read_array(L, 2, what, "lower", LSTEEL_FLOAT64, NULL);
    const lsteel_array upper = lsteel_read_array(L, 2, what, "upper", LSTEEL_FLOAT64, NULL);
    const lsteel_array normal_row = lsteel_read_array(L, 2, what, "normal_row", LSTEEL_INT32, NULL);
    const lsteel_array friction = lsteel_read_array(L, 2, what, "friction", LSTEEL_FLOAT64, NULL);
    const lsteel_array regularization =
        lsteel_read_array(L, 2, what, "regularization", LSTEEL_FLOAT64, NULL);
    const lsteel_array initial_impulse =
        lsteel_read_array(L, 2, what, "initial_impulse", LSTEEL_FLOAT64, NULL);

    /* The counts every other length follows from. */
    uint64_t world_count = dof_counts.count;
    if (lua_getfield(L, 2, "world_count") != LUA_TNIL) {
        int ok = 0;
        const lua_Integer value = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || value < 0 || value > (lua_Integer)UINT32_MAX)
            luaL_error(L, "steel: rows.world_count must be an integer in [0, 4294967295], got %s",
                       lsteel_describe(L, -1));
        world_count = (uint64_t)value;
    } else if (dof_counts.data == NULL) {
        world_count = row_counts.count;
    }
    lua_pop(L, 1);
    if (world_count > UINT32_MAX) luaL_error(L, "steel: rows has more than 2^32 - 1 worlds");
    uint64_t value_count = jacobian.count;
    if (lua_getfield(L, 2, "value_count") != LUA_TNIL) {
        int ok = 0;
        const lua_Integer value = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || value < 0)
            luaL_error(L, "steel: rows.value_count must be an integer >= 0, got %s",
                       lsteel_describe(L, -1));
        value_count = (uint64_t)value;
    } else if (jacobian.data == NULL) {
        value_count = response.count;
    }
    lua_pop(L, 1);
    /* From here to the call no Lua code runs (no metamethod, no allocation, so no finalizer):
     * the count buffers the sums read are the ones Steel reads. */
    lsteel_check_count(L, &dof_counts, what, "world_dof_counts", world_count, "world_count");
    lsteel_check_count(L, &row_counts, what, "world_row_counts", world_count, "world_count");
    const uint64_t total_dofs = sum_of(&dof_counts);
    const uint64_t total_rows = sum_of(&row_counts);

    lsteel_check_count(L, &v_hat, what, "unconstrained_velocity", total_dofs,
                       "total_dofs, the sum of world_dof_counts");
    lsteel_check_count(L, &block_offset, what, "block_offset", 2 * total_rows, "2 * total_rows");
    lsteel_check_count(L, &block_length, what, "block_length", 2 * total_rows, "2 * total_rows");
    lsteel_check_count(L, &jacobian, what, "jacobian", value_count, "value_count");
    lsteel_check_count(L, &response, what, "response", value_count, "value_count");
    const char* per_row = "total_rows, the sum of world_row_counts";
    lsteel_check_count(L, &bias, what, "bias", total_rows, per_row);
    lsteel_check_count(L, &kind, what, "kind", total_rows, per_row);
    lsteel_check_count(L, &lower, what, "lower", total_rows, per_row);
    lsteel_check_count(L, &upper, what, "upper", total_rows, per_row);
    lsteel_check_count(L, &normal_row, what, "normal_row", total_rows, per_row);
    lsteel_check_count(L, &friction, what, "friction", total_rows, per_row);
    lsteel_check_count(L, &regularization, what, "regularization", total_rows, per_row);
    lsteel_check_count(L, &initial_impulse, what, "initial_impulse", total_rows, per_row);

    steel_rows_desc rows;
    steel_rows_desc_default(&rows);
    rows.world_count = (uint32_t)world_count;
    rows.world_dof_counts = (const uint32_t*)dof_counts.data;
    rows.world_row_counts = (const uint32_t*)row_counts.data;
    rows.unconstrained_velocity = (const double*)v_hat.data;
    rows.block_offset = (const uint32_t*)block_offset.data;
    rows.block_length = (const uint32_t*)block_length.data;
    rows.value_count = value_count;
    rows.jacobian = (const double*)jacobian.data;
    rows.response = (const double*)response.data;
    rows.bias = (const double*)bias.data;
    rows.kind = (const int32_t*)kind.data;
    rows.lower = (const double*)lower.data;
    rows.upper = (const double*)upper.data;
    rows.normal_row = (const int32_t*)normal_row.data;
    rows.friction = (const double*)friction.data;
    rows.regularization = (const double*)regularization.data;
    rows.initial_impulse = (const double*)initial_impulse.data;
    LSTEEL_CHECK(L, steel_batch_upload_rows(handle, &rows));
    return 0;
}

/* ---- options and solve ------------------------------------------------------------------- */

/* batch:set_options(table): the named options change, the others keep their current values. */
static int batch_set_options(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    steel_solve_options options;
    steel_solve_options_default(&options);
    LSTEEL_CHECK(L, steel_batch_get_options(handle, &options));
    lsteel_options_from_table(L, 2, &options);
    LSTEEL_CHECK(L, steel_batch_set_options(handle, &options));
    return 0;
}

static int batch_options(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    steel_solve_options options;
    steel_solve_options_default(&options);
    LSTEEL_CHECK(L, steel_batch_get_options(handle, &options));
    lsteel_push_options(L, &options);
    return 1;
}

static int batch_solve(lua_State* L) {
    LSTEEL_CHECK(L, steel_batch_solve(lsteel_check_batch(L, 1)));
    lua_settop(L, 1);
    return 1; /* the batch, so batch:solve():impulses() reads well */
}

/* ---- reading results --------------------------------------------------------------------- */

/* Pushes a Lua sequence of doubles copied from a buffer. */
static void push_sequence(lua_State* L, const double* values, size_t count) {
    lua_createtable(L, count > INT32_MAX ? 0 : (int)count, 0);
    for (size_t k = 0; k < count; ++k) {
        lua_pushnumber(L, values[k]);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
}

/* The out argument at `index`: a float64 steel.buffer, or nil (then a table is returned). */
static lsteel_buffer* optional_out_buffer(lua_State* L, int index) {
    if (lua_isnoneornil(L, index)) return NULL;
    lsteel_buffer* buffer = lsteel_to_buffer(L, index);
    if (buffer == NULL || buffer->type != LSTEEL_FLOAT64)
        luaL_typeerror(L, index, "float64 steel.buffer or nil");
    return buffer;
}

/* batch:impulses([buffer]) / batch:velocities([buffer]) (and the scene readers): a new table, or
 * the buffer filled (Steel refuses a buffer that is too small: BUFFER_TOO_SMALL, nothing
 * written). Also returns the count. */
int lsteel_read_vector(lua_State* L, lsteel_read_fn read) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    lsteel_buffer* out = optional_out_buffer(L, 2);
    uint64_t count = 0;
    if (out != NULL) {
        LSTEEL_CHECK(L, read(handle, (double*)out->data, out->count, &count));
        lua_settop(L, 2);
    } else {
        LSTEEL_CHECK(L, read(handle, NULL, 0, &count));
        lsteel_buffer* scratch = lsteel_new_buffer(L, (size_t)count, LSTEEL_FLOAT64);
        LSTEEL_CHECK(L, read(handle, (double*)scratch->data, scratch->count, &count));
        push_sequence(L, (const double*)scratch->data, (size_t)count);
    }
    lua_pushinteger(L, (lua_Integer)count);
    return 2;
}

static int batch_impulses(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_impulses);
}
static int batch_velocities(lua_State* L) {
    return lsteel_read_vector(L, steel_batch_read_velocities);
}

static uint32_t check_world(lua_State* L, int index) {
    const lua_Integer world = luaL_checkinteger(L, index);
    luaL_argcheck(L, world >= 0 && world <= (lua_Integer)UINT32_MAX, index,
                  "a world number (0-based)");
    return (uint32_t)world;
}

/* batch:residual_history(world [, buffer]): the residual of every sweep of the last solve in
 * `world` (0-based), oldest first; needs record_residual_history. Also returns the count. */
static int batch_residual_history(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    const uint32_t world = check_world(L, 2);
    lsteel_buffer* out = optional_out_buffer(L, 3);
    uint32_t count = 0;
    if (out != NULL) {
        const uint32_t capacity = out->count > UINT32_MAX ? UINT32_MAX : (uint32_t)out->count;
        LSTEEL_CHECK(L, steel_batch_read_residual_history(handle, world, (double*)out->data,
                                                          capacity, &count));
        lua_settop(L, 3);
    } else {
        LSTEEL_CHECK(L, steel_batch_read_residual_history(handle, world, NULL, 0, &count));
        lsteel_buffer* scratch = lsteel_new_buffer(L, count, LSTEEL_FLOAT64);
        LSTEEL_CHECK(L, steel_batch_read_residual_history(handle, world, (double*)scratch->data,
                                                          count, &count));
        push_sequence(L, (const double*)scratch->data, count);
    }
    lua_pushinteger(L, (lua_Integer)count);
    return 2;
}

static void set_number(lua_State* L, const char* name, double value) {
    lua_pushnumber(L, value);
    lua_setfield(L, -2, name);
}

static void set_integer(lua_State* L, const char* name, lua_Integer value) {
    lua_pushinteger(L, value);
    lua_setfield(L, -2, name);
}

static void set_boolean(lua_State* L, const char* name, int value) {
    lua_pushboolean(L, value);
    lua_setfield(L, -2, name);
}

/* batch:stats(): one table per world (stats[1] is world 0) with steel_world_stats' fields:
 * path ("general" / "dense"), sweeps, flags (the raw bits), converged, nonfinite (the bits as
 * booleans), residual, first_residual, momentum_restarts. */
static int batch_stats(lua_State* L) {
    const steel_batch handle = lsteel_check_batch(L, 1);
    const uint32_t element_size = (uint32_t)sizeof(steel_world_stats);
    uint32_t count = 0;
    LSTEEL_CHECK(L, steel_batch_read_world_stats(handle, element_size, NULL, 0, &count));
    /* The raw stats go to a scratch userdata (freed by Lua), then out as tables. */
    steel_world_stats* stats =
        (steel_world_stats*)lua_newuserdatauv(L, (size_t)count * element_size, 0);
    LSTEEL_CHECK(L, steel_batch_read_world_stats(handle, element_size, stats, count, &count));
    lua_createtable(L, (int)(count > INT32_MAX ? 0 : count), 0);
    for (uint32_t w = 0; w < count; ++w) {
        const steel_world_stats* s = &stats[w];
        lua_createtable(L, 0, 8);
        const char* path = lsteel_name_of(lsteel_path_names, s->path);
        lua_pushstring(L, path != NULL ? path : "unknown");
        lua_setfield(L, -2, "path");
        set_integer(L, "sweeps", (lua_Integer)s->sweeps);
        set_integer(L, "flags", (lua_Integer)s->flags);
        set_boolean(L, "converged", (s->flags & STEEL_WORLD_CONVERGED) != 0);
        set_boolean(L, "nonfinite", (s->flags & STEEL_WORLD_NONFINITE) != 0);
        set_number(L, "residual", s->residual);
        set_number(L, "first_residual", s->first_residual);
        set_integer(L, "momentum_restarts", (lua_Integer)s->momentum_restarts);
        lua_rawseti(L, -2, (lua_Integer)w + 1);
    }
    return 1;
}

void lsteel_open_batch(lua_State* L) {
    static const luaL_Reg methods[] = {{"close", batch_close},
                                       {"is_closed", batch_is_closed},
                                       {"handle", batch_handle},
                                       {"desc", batch_desc},
                                       {"upload_rows", batch_upload_rows},
                                       {"set_options", batch_set_options},
                                       {"options", batch_options},
                                       {"solve", batch_solve},
                                       {"impulses", batch_impulses},
                                       {"velocities", batch_velocities},
                                       {"residual_history", batch_residual_history},
                                       {"stats", batch_stats},
                                       {NULL, NULL}};
    static const luaL_Reg metamethods[] = {{"__gc", batch_close},
                                           {"__close", batch_close},
                                           {"__tostring", batch_tostring},
                                           {NULL, NULL}};
    luaL_newmetatable(L, LSTEEL_BATCH);
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);
    luaL_setfuncs(L, lsteel_scene_methods, 0);
    luaL_setfuncs(L, lsteel_snapshot_methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    lua_pushcfunction(L, batch_new);
    lua_setfield(L, -2, "batch");
}
