/*
 * consumer.c: a user's program built against an *installed* Steel (tests/install_consumer/run.sh
 * builds it twice: with find_package(Steel) and with pkg-config). It sees only the installed
 * header and library, and exits nonzero unless all of these hold:
 *
 *  - the library it loaded is the one under the expected directory (argv[2]), read from
 *    /proc/self/maps, so a libsteel found elsewhere (the build tree, /usr/local) cannot pass;
 *  - steel_abi_version() of the library equals STEEL_ABI_VERSION of the installed header;
 *  - steel_version() equals the expected version (argv[1], the build's PROJECT_VERSION) and the
 *    version the package metadata announced (STEEL_PACKAGE_VERSION: Steel_VERSION from the CMake
 *    package, or `pkg-config --modversion steel`);
 *  - a real solve gives the closed-form answer. Two worlds, each one unit mass (one DOF, its
 *    vertical velocity) on the ground with one contact-normal row (J = 1, Y = H^-1 J^T = 1):
 *    world 0 falls at v-hat = -1, so the contact must stop it: impulse exactly 1, velocity
 *    exactly 0; world 1 rises at v-hat = +1, so the contact stays slack: impulse exactly 0,
 *    velocity exactly +1. Every number is exact in float64, so the comparison is ==.
 *
 *   consumer EXPECTED_VERSION EXPECTED_LIBSTEEL_DIR
 */
#include <steel/steel.h>

#include <stdio.h>
#include <string.h>

#ifndef STEEL_PACKAGE_VERSION
#error "build with -DSTEEL_PACKAGE_VERSION=\"<the version the package metadata announced>\""
#endif

static int failures = 0;

static void check(int ok, const char* what) {
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        ++failures;
    }
}

/* The path of the libsteel mapped into this process, from /proc/self/maps; "" if none. */
static void loaded_libsteel(char* out, size_t capacity) {
    char line[4096];
    FILE* maps = fopen("/proc/self/maps", "r");
    out[0] = '\0';
    if (!maps) return;
    while (fgets(line, (int)sizeof(line), maps)) {
        const char* path = strchr(line, '/');
        if (path && strstr(path, "/libsteel.so")) {
            size_t length = strcspn(path, "\n");
            if (length >= capacity) length = capacity - 1;
            memcpy(out, path, length);
            out[length] = '\0';
            break;
        }
    }
    fclose(maps);
}

static int solve_two_worlds(void) {
    const uint32_t dofs[2] = {1, 1}, rows_per_world[2] = {1, 1};
    const double v_hat[2] = {-1.0, 1.0};
    const uint32_t block_offset[4] = {0, 0, 0, 0}, block_length[4] = {1, 0, 1, 0};
    const double jacobian[2] = {1.0, 1.0}, response[2] = {1.0, 1.0}; /* unit mass: Y = J */
    const double bias[2] = {0.0, 0.0};
    const int32_t kind[2] = {STEEL_ROW_CONTACT_NORMAL, STEEL_ROW_CONTACT_NORMAL};
    double impulses[2] = {-7.0, -7.0}, velocities[2] = {-7.0, -7.0};
    uint64_t impulse_count = 0, velocity_count = 0;
    steel_world_stats stats[2];
    uint32_t stats_count = 0;
    steel_batch batch = {0};
    steel_batch_desc desc;
    steel_rows_desc rows;
    steel_status status;

    steel_batch_desc_default(&desc); /* CPU, float64, one thread */
    desc.world_count = 2;
    status = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
    if (status != STEEL_OK) {
        fprintf(stderr, "FAIL: steel_batch_create: %s: %s\n", steel_status_string(status),
                steel_last_error_message());
        return 0;
    }
    steel_rows_desc_default(&rows);
    rows.world_count = 2;
    rows.world_dof_counts = dofs;
    rows.world_row_counts = rows_per_world;
    rows.unconstrained_velocity = v_hat;
    rows.block_offset = block_offset;
    rows.block_length = block_length;
    rows.value_count = 2;
    rows.jacobian = jacobian;
    rows.response = response;
    rows.bias = bias;
    rows.kind = kind;
    status = steel_batch_upload_rows(batch, &rows);
    if (status == STEEL_OK) status = steel_batch_solve(batch);
    if (status == STEEL_OK) status = steel_batch_read_impulses(batch, impulses, 2, &impulse_count);
    if (status == STEEL_OK)
        status = steel_batch_read_velocities(batch, velocities, 2, &velocity_count);
    if (status == STEEL_OK)
        status = steel_batch_read_world_stats(batch, (uint32_t)sizeof(steel_world_stats), stats, 2,
                                              &stats_count);
    if (status != STEEL_OK) {
        fprintf(stderr, "FAIL: upload/solve/read: %s: %s\n", steel_status_string(status),
                steel_last_error_message());
        steel_batch_destroy(batch);
        return 0;
    }
    printf("world 0 (falling at -1): impulse %.17g (exact 1), velocity %.17g (exact 0)\n",
           impulses[0], velocities[0]);
    printf("world 1 (rising at +1):  impulse %.17g (exact 0), velocity %.17g (exact 1)\n",
           impulses[1], velocities[1]);
    check(impulse_count == 2 && velocity_count == 2 && stats_count == 2,
          "read counts are 2, 2 and 2");
    check(impulses[0] == 1.0, "world 0: contact impulse is exactly 1");
    check(velocities[0] == 0.0, "world 0: velocity after the solve is exactly 0");
    check(impulses[1] == 0.0, "world 1: separating contact's impulse is exactly 0");
    check(velocities[1] == 1.0, "world 1: velocity after the solve is exactly +1");
    check((stats[0].flags & STEEL_WORLD_NONFINITE) == 0 &&
              (stats[1].flags & STEEL_WORLD_NONFINITE) == 0,
          "no world is flagged non-finite");
    check(steel_batch_destroy(batch) == STEEL_OK, "steel_batch_destroy succeeds");
    return 1;
}

int main(int argc, char** argv) {
    char loaded[4096];
    const char* version;
    size_t dir_length;

    if (argc != 3) {
        fprintf(stderr, "usage: %s EXPECTED_VERSION EXPECTED_LIBSTEEL_DIR\n", argv[0]);
        return 2;
    }
    version = steel_version();
    printf("libsteel %s (ABI %u; header ABI %u; package metadata says %s; expected %s)\n",
           version ? version : "(null)", (unsigned)steel_abi_version(), (unsigned)STEEL_ABI_VERSION,
           STEEL_PACKAGE_VERSION, argv[1]);

    loaded_libsteel(loaded, sizeof(loaded));
    printf("loaded %s\n", loaded[0] ? loaded : "(no libsteel in /proc/self/maps)");
    dir_length = strlen(argv[2]);
    check(loaded[0] != '\0' && strncmp(loaded, argv[2], dir_length) == 0 &&
              loaded[dir_length] == '/' && strchr(loaded + dir_length + 1, '/') == NULL,
          "libsteel was loaded from the installed prefix's library directory");

    check(steel_abi_version() == STEEL_ABI_VERSION,
          "steel_abi_version() == STEEL_ABI_VERSION of the installed header");
    check(version != NULL && strcmp(version, argv[1]) == 0,
          "steel_version() == the build's PROJECT_VERSION");
    check(version != NULL && strcmp(version, STEEL_PACKAGE_VERSION) == 0,
          "steel_version() == the version the package metadata announced");
    check((steel_build_features() & STEEL_FEATURE_FLOAT64) != 0,
          "the library has the float64 feature");

    if (!solve_two_worlds()) ++failures;

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
