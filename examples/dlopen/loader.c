/*
 * loader.c: Steel the way a game engine loads a plugin. The program does not link libsteel: it
 * dlopens the library at run time, resolves each function it uses with dlsym, checks the
 * library's ABI version against the header it was compiled with before calling anything else,
 * and then solves the resting 1D stack and checks the answer.
 *
 *   cc -std=c99 -I<prefix>/include loader.c -ldl -o loader
 *   ./loader                       # dlopen("libsteel.so.0"): the soname, found on the usual path
 *   ./loader /opt/steel/lib/libsteel.so.0
 *
 * steel.h is only used for its types, constants and prototypes. Every function pointer's type is
 * checked against the header's prototype at compile time (CHECK_PROTOTYPE below), so a header
 * change that this file missed is a compile error, not a crash. Runs as a test (ctest:
 * example_dlopen_loader).
 */
#include <steel/steel.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The functions this program uses, as pointer types written out by hand. */
typedef const char* (*status_string_fn)(steel_status);
typedef const char* (*last_error_message_fn)(void);
typedef const char* (*version_fn)(void);
typedef uint32_t (*abi_version_fn)(void);
typedef steel_status (*batch_desc_init_fn)(steel_batch_desc*, uint32_t);
typedef steel_status (*batch_create_fn)(uint32_t, const steel_batch_desc*, steel_batch*);
typedef steel_status (*batch_destroy_fn)(steel_batch);
typedef steel_status (*rows_desc_init_fn)(steel_rows_desc*, uint32_t);
typedef steel_status (*batch_upload_rows_fn)(steel_batch, const steel_rows_desc*);
typedef steel_status (*solve_options_init_fn)(steel_solve_options*, uint32_t);
typedef steel_status (*batch_set_options_fn)(steel_batch, const steel_solve_options*);
typedef steel_status (*batch_solve_fn)(steel_batch);
typedef steel_status (*batch_read_impulses_fn)(steel_batch, double*, uint64_t, uint64_t*);

/* Compile-time check that a hand-written pointer type matches the header's prototype: comparing
 * pointers of different function types is a constraint violation (an error with -Werror, a
 * diagnostic in any case). sizeof does not evaluate its operand, so no symbol is referenced and
 * nothing needs libsteel at link time. */
#define CHECK_PROTOTYPE(function, type) ((void)sizeof(&function == (type)0))

typedef struct steel_api {
    status_string_fn status_string;
    last_error_message_fn last_error_message;
    version_fn version;
    abi_version_fn abi_version;
    batch_desc_init_fn batch_desc_init;
    batch_create_fn batch_create;
    batch_destroy_fn batch_destroy;
    rows_desc_init_fn rows_desc_init;
    batch_upload_rows_fn batch_upload_rows;
    solve_options_init_fn solve_options_init;
    batch_set_options_fn batch_set_options;
    batch_solve_fn batch_solve;
    batch_read_impulses_fn batch_read_impulses;
} steel_api;

/* dlsym returns void*; ISO C has no conversion from void* to a function pointer, so copy the
 * bits (POSIX guarantees they are the same size and representation). */
static int resolve(void* library, const char* name, void* out_function_pointer) {
    void* symbol = dlsym(library, name);
    if (symbol == NULL) {
        fprintf(stderr, "loader: %s not found: %s\n", name, dlerror());
        return 0;
    }
    memcpy(out_function_pointer, &symbol, sizeof symbol);
    return 1;
}

static int load_api(void* library, steel_api* api) {
    CHECK_PROTOTYPE(steel_status_string, status_string_fn);
    CHECK_PROTOTYPE(steel_last_error_message, last_error_message_fn);
    CHECK_PROTOTYPE(steel_version, version_fn);
    CHECK_PROTOTYPE(steel_abi_version, abi_version_fn);
    CHECK_PROTOTYPE(steel_batch_desc_init, batch_desc_init_fn);
    CHECK_PROTOTYPE(steel_batch_create, batch_create_fn);
    CHECK_PROTOTYPE(steel_batch_destroy, batch_destroy_fn);
    CHECK_PROTOTYPE(steel_rows_desc_init, rows_desc_init_fn);
    CHECK_PROTOTYPE(steel_batch_upload_rows, batch_upload_rows_fn);
    CHECK_PROTOTYPE(steel_solve_options_init, solve_options_init_fn);
    CHECK_PROTOTYPE(steel_batch_set_options, batch_set_options_fn);
    CHECK_PROTOTYPE(steel_batch_solve, batch_solve_fn);
    CHECK_PROTOTYPE(steel_batch_read_impulses, batch_read_impulses_fn);
    return resolve(library, "steel_status_string", &api->status_string) &&
           resolve(library, "steel_last_error_message", &api->last_error_message) &&
           resolve(library, "steel_version", &api->version) &&
           resolve(library, "steel_abi_version", &api->abi_version) &&
           resolve(library, "steel_batch_desc_init", &api->batch_desc_init) &&
           resolve(library, "steel_batch_create", &api->batch_create) &&
           resolve(library, "steel_batch_destroy", &api->batch_destroy) &&
           resolve(library, "steel_rows_desc_init", &api->rows_desc_init) &&
           resolve(library, "steel_batch_upload_rows", &api->batch_upload_rows) &&
           resolve(library, "steel_solve_options_init", &api->solve_options_init) &&
           resolve(library, "steel_batch_set_options", &api->batch_set_options) &&
           resolve(library, "steel_batch_solve", &api->batch_solve) &&
           resolve(library, "steel_batch_read_impulses", &api->batch_read_impulses);
}

#define HEIGHT 6u

/* Solves a HEIGHT-box resting stack of unit masses; returns 0 if every impulse is exact. */
static int solve_stack(const steel_api* api) {
    const double g_dt = 9.81 / 60.0;
    uint32_t dof_counts[1] = {HEIGHT}, row_counts[1] = {HEIGHT};
    double v_hat[HEIGHT], bias[HEIGHT], jacobian[2 * HEIGHT], response[2 * HEIGHT],
        impulses[HEIGHT];
    uint32_t block_offset[2 * HEIGHT], block_length[2 * HEIGHT];
    int32_t kind[HEIGHT];
    uint64_t values = 0;
    for (uint32_t k = 0; k < HEIGHT; ++k) {
        v_hat[k] = -g_dt;
        bias[k] = 0.0;
        kind[k] = STEEL_ROW_CONTACT_NORMAL;
        /* contact k: boxes k-1 and k (the ground for 0) */
        block_offset[2 * k] = k == 0 ? 0 : k - 1;
        block_length[2 * k] = k == 0 ? 1 : 2;
        block_offset[2 * k + 1] = 0;
        block_length[2 * k + 1] = 0;
        if (k > 0) {
            jacobian[values] = -1.0; /* unit masses: Y = J */
            response[values++] = -1.0;
        }
        jacobian[values] = 1.0;
        response[values++] = 1.0;
    }

    steel_batch_desc desc;
    api->batch_desc_init(&desc, sizeof desc); /* the inline *_default, by hand */
    steel_batch batch = {0};
    steel_status status = api->batch_create(STEEL_ABI_VERSION, &desc, &batch);
    if (status == STEEL_OK) {
        steel_rows_desc rows;
        api->rows_desc_init(&rows, sizeof rows);
        rows.world_count = 1;
        rows.world_dof_counts = dof_counts;
        rows.world_row_counts = row_counts;
        rows.unconstrained_velocity = v_hat;
        rows.block_offset = block_offset;
        rows.block_length = block_length;
        rows.value_count = values;
        rows.jacobian = jacobian;
        rows.response = response;
        rows.bias = bias;
        rows.kind = kind;
        status = api->batch_upload_rows(batch, &rows);
    }
    if (status == STEEL_OK) {
        steel_solve_options options;
        api->solve_options_init(&options, sizeof options);
        options.iterations = 2000;
        options.tolerance = 1e-13;
        status = api->batch_set_options(batch, &options);
    }
    if (status == STEEL_OK) status = api->batch_solve(batch);
    if (status == STEEL_OK) status = api->batch_read_impulses(batch, impulses, HEIGHT, NULL);
    if (status != STEEL_OK) {
        fprintf(stderr, "loader: %s: %s\n", api->status_string(status), api->last_error_message());
        api->batch_destroy(batch);
        return 1;
    }
    api->batch_destroy(batch);

    double worst = 0;
    for (uint32_t k = 0; k < HEIGHT; ++k) {
        const double exact = g_dt * (double)(HEIGHT - k); /* the weight of boxes k..HEIGHT-1 */
        worst = fmax(worst, fabs(impulses[k] - exact));
        printf("contact %u: impulse %.9f, exact %.9f\n", k, impulses[k], exact);
    }
    printf("worst error %.2e\n", worst);
    return worst < 1e-9 ? 0 : 1;
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "libsteel.so.0";
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "loader: cannot load %s: %s\n", path, dlerror());
        return 1;
    }
    steel_api api;
    if (!load_api(library, &api)) {
        dlclose(library);
        return 1;
    }
    /* The ABI check comes before any struct crosses the boundary: a library built from another
     * header would misread them. (steel_batch_create checks it again, as a safety net.) */
    const uint32_t library_abi = api.abi_version();
    printf("loaded %s: Steel %s, ABI %u (this program's header: ABI %u)\n", path, api.version(),
           library_abi, (unsigned)STEEL_ABI_VERSION);
    if (library_abi != STEEL_ABI_VERSION) {
        fprintf(
            stderr,
            "loader: ABI mismatch: library %u, header %u; rebuild against the library's header\n",
            library_abi, (unsigned)STEEL_ABI_VERSION);
        dlclose(library);
        return 1;
    }
    const int result = solve_stack(&api);
    dlclose(library);
    return result;
}
