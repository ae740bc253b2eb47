/*
 * lsteel.h: the pieces of the Lua module `steel` (bindings/lua/) and how they fit.
 *
 * The module is plain C over the public header <steel/steel.h>, so it doubles as an ABI test. It
 * follows Lua's own liolib.c: each handle is a full userdata with a metatable, methods fetch it
 * with luaL_checkudata, __gc and __close are idempotent, a handle is created "closed" first so an
 * error half-way leaves a consistent object, and every failure is a Lua error with a message.
 *
 *   lsteel.c          luaopen_steel, version and features, status -> Lua error
 *   lsteel_buffer.c   steel.buffer: numeric arrays (float64, int32, uint32) in one userdata
 *   lsteel_arrays.c   reading a field of a Lua table as a C array (table or buffer), with checks
 *   lsteel_options.c  steel_solve_options <-> Lua tables, by SPEC name: THE one option table
 *   lsteel_batch.c    steel.batch: create, upload_rows, set_options, solve, read, close
 *   lsteel_scene.c    batch:upload_scene (steel_scene_desc from a Lua table) and the scene readers
 *   lsteel_snapshot.c batch:save, save_string, set_capture; steel.load, load_string
 *
 * Memory rule: nothing here calls malloc. Every temporary array lives in a Lua userdata on the
 * stack, so a Lua error (a longjmp) in the middle of a conversion leaks nothing.
 *
 * Only luaopen_steel is exported from steel.so (everything else has hidden visibility; a test
 * checks the exported symbol list).
 */
#ifndef LSTEEL_H
#define LSTEEL_H

#include <steel/steel.h>

#include <lauxlib.h>
#include <lua.h>

#include <stddef.h>
#include <stdint.h>

#define LSTEEL_INTERNAL __attribute__((visibility("hidden")))

/* Metatable names (also what luaL_checkudata reports: "steel.batch expected, got nil"). */
#define LSTEEL_BATCH "steel.batch"
#define LSTEEL_BUFFER "steel.buffer"

/* ---- lsteel.c ---- */

/* The module's entry point, the one symbol steel.so exports. */
__attribute__((visibility("default"))) int luaopen_steel(lua_State* L);

/* Raises a Lua error for a failed Steel call: Steel's own message (steel_last_error_message()),
 * then the status in brackets, e.g.
 *   "steel_batch_set_options: iterations = 0; at least one sweep is needed [invalid argument]".
 * Never returns. */
LSTEEL_INTERNAL int lsteel_status_error(lua_State* L, steel_status status);

/* Calls `call`'s status check: returns if OK, raises lsteel_status_error otherwise. */
#define LSTEEL_CHECK(L, call)                                                                      \
    do {                                                                                           \
        steel_status lsteel_status_ = (call);                                                      \
        if (lsteel_status_ != STEEL_OK) lsteel_status_error((L), lsteel_status_);                  \
    } while (0)

/* Pushes and returns a short text for the value at `index`, for error messages: strings quoted
 * ('fast'), anything else as tostring gives it (2.5, true, table: 0x...). */
LSTEEL_INTERNAL const char* lsteel_describe(lua_State* L, int index);

/* A name <-> value pair for the string-valued fields ("float64", "dense", "contact_normal"). */
typedef struct lsteel_name {
    const char* name;
    int32_t value;
} lsteel_name;

/* Looks a string up in a { NULL }-terminated list; returns 1 and sets *out when found. */
LSTEEL_INTERNAL int lsteel_find_name(const lsteel_name* names, const char* name, int32_t* out);
/* The name of a value, or NULL. */
LSTEEL_INTERNAL const char* lsteel_name_of(const lsteel_name* names, int32_t value);
/* Pushes "'a', 'b', 'c'" (the valid names, for error messages). */
LSTEEL_INTERNAL void lsteel_push_name_list(lua_State* L, const lsteel_name* names);

LSTEEL_INTERNAL extern const lsteel_name lsteel_backend_names[];
LSTEEL_INTERNAL extern const lsteel_name lsteel_precision_names[];
LSTEEL_INTERNAL extern const lsteel_name lsteel_path_names[];
LSTEEL_INTERNAL extern const lsteel_name lsteel_row_kind_names[];
LSTEEL_INTERNAL extern const lsteel_name lsteel_joint_type_names[];
LSTEEL_INTERNAL extern const lsteel_name lsteel_body_flag_names[];
LSTEEL_INTERNAL extern const lsteel_name lsteel_friction_model_names[];
LSTEEL_INTERNAL extern const lsteel_name lsteel_drive_mode_names[];

/* ---- lsteel_buffer.c ---- */

typedef enum lsteel_type { LSTEEL_FLOAT64 = 0, LSTEEL_INT32 = 1, LSTEEL_UINT32 = 2 } lsteel_type;

typedef struct lsteel_buffer {
    size_t count;     /* number of elements */
    lsteel_type type; /* element type */
    void* data;       /* points just behind this header, inside the same userdata */
} lsteel_buffer;

LSTEEL_INTERNAL const char* lsteel_type_name(lsteel_type type);
/* Pushes a new zero-filled buffer of `count` elements and returns it. */
LSTEEL_INTERNAL lsteel_buffer* lsteel_new_buffer(lua_State* L, size_t count, lsteel_type type);
/* The buffer at index `index`, or NULL if that value is not a buffer. */
LSTEEL_INTERNAL lsteel_buffer* lsteel_to_buffer(lua_State* L, int index);
/* Creates the buffer metatable and registers steel.buffer in the module table on top. */
LSTEEL_INTERNAL void lsteel_open_buffer(lua_State* L);

/* ---- lsteel_arrays.c ---- */

/* A C array read from one field of a Lua table: points into a steel.buffer the caller passed
 * (no copy) or into a temporary buffer pushed on the stack (a copy of a Lua table). */
typedef struct lsteel_array {
    const void* data; /* NULL when the field is nil */
    size_t count;
} lsteel_array;

/* Reads field `field` of the table at `table_index` as an array of `type`:
 *  - nil: data = NULL, count = 0;
 *  - a steel.buffer of that type: used in place;
 *  - a Lua sequence of numbers: copied into a temporary buffer left on the stack. Integers are
 *    checked to be whole and in range. `names` (may be NULL) lets int32 entries also be strings
 *    (row kinds).
 * `what` names the table in error messages ("rows"). Leaves one value on the stack (the
 * temporary buffer, or nil), so call luaL_checkstack first when reading many fields. */
LSTEEL_INTERNAL lsteel_array lsteel_read_array(lua_State* L, int table_index, const char* what,
                                               const char* field, lsteel_type type,
                                               const lsteel_name* names);

/* Raises "steel: rows.bias has 3 values but needs 4 (total_rows)" unless array.count == count.
 * An absent array (nil) passes: it goes to Steel as NULL, and Steel says if it was needed. */
LSTEEL_INTERNAL void lsteel_check_count(lua_State* L, const lsteel_array* array, const char* what,
                                        const char* field, uint64_t count, const char* count_name);

/* ---- lsteel_options.c ---- */

/* Applies every field of the Lua table at `index` to *options (which holds the current values):
 * names are the SPEC / steel_solve_options names; an unknown name, a SPEC option not built yet,
 * or a value of the wrong type is a Lua error naming the option. */
LSTEEL_INTERNAL void lsteel_options_from_table(lua_State* L, int index,
                                               steel_solve_options* options);
/* Pushes a table with every supported option by name (booleans for 0/1 fields, names for
 * enums). */
LSTEEL_INTERNAL void lsteel_push_options(lua_State* L, const steel_solve_options* options);

/* ---- lsteel_batch.c ---- */

/* Creates the batch metatable (with the scene methods too) and registers steel.batch in the
 * module table on top. */
LSTEEL_INTERNAL void lsteel_open_batch(lua_State* L);

/* The live handle of the steel.batch argument at `index`; a Lua error if it is not a batch or
 * was closed. */
LSTEEL_INTERNAL steel_batch lsteel_check_batch(lua_State* L, int index);

/* A steel_batch_read_* function that fills doubles (impulses, velocities, scene results). */
typedef steel_status (*lsteel_read_fn)(steel_batch, double*, uint64_t, uint64_t*);

/* batch:<reader>([buffer]): calls `read` for the batch at 1 and returns a new table of its values,
 * or the float64 buffer at 2 filled; then the count. */
LSTEEL_INTERNAL int lsteel_read_vector(lua_State* L, lsteel_read_fn read);

/* ---- lsteel_scene.c ---- */

/* The scene methods of steel.batch (upload_scene and the scene readers), { NULL }-terminated. */
LSTEEL_INTERNAL extern const luaL_Reg lsteel_scene_methods[];

/* ---- lsteel_snapshot.c ---- */

/* Batch methods save, save_string, set_capture; module functions load, load_string. */
LSTEEL_INTERNAL extern const luaL_Reg lsteel_snapshot_methods[];
LSTEEL_INTERNAL extern const luaL_Reg lsteel_snapshot_functions[];

/* Pushes a new steel.batch userdata holding the null handle (closed), with its metatable, and
 * returns where its handle lives: fill it once a create or load has succeeded. */
LSTEEL_INTERNAL steel_batch* lsteel_push_closed_batch(lua_State* L);

#endif /* LSTEEL_H */
