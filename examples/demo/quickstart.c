/*
 * quickstart.c: the worked example of docs/guide.md. Two worlds in one batch:
 *
 *   world 0: a 2 kg box resting on the ground. One DOF (its vertical velocity), one contact row.
 *   world 1: a 5 kg box sliding at 3 m/s on the ground with friction mu = 0.5. Two DOFs
 *            (horizontal, vertical velocity), a contact normal row and a box friction row.
 *
 * Gravity g = 9.81 over one step dt = 1/60 gives v-hat = -g*dt vertically. The exact answers:
 * each normal impulse is m*g*dt (it stops the fall), and the friction impulse is -mu*m*g*dt
 * (friction is saturated: the box keeps sliding at 3 - mu*g*dt).
 */
#include <steel/steel.h>

#include <stdio.h>

/* Every fallible call returns a status; on failure the library says what was wrong and where. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        steel_status status_ = (call);                                                             \
        if (status_ != STEEL_OK) {                                                                 \
            fprintf(stderr, "%s failed: %s\n  %s\n", #call, steel_status_string(status_),          \
                    steel_last_error_message());                                                   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int near(double value, double exact) {
    const double difference = value - exact;
    return difference < 1e-12 && difference > -1e-12;
}

static int run(steel_batch* batch) {
    const double g_dt = 9.81 / 60.0;
    const double m0 = 2.0, m1 = 5.0;

    /* Per world: DOF count n and row count m. */
    const uint32_t dof_counts[2] = {1, 2};
    const uint32_t row_counts[2] = {1, 2};
    /* v-hat of every world, concatenated: world 0's vertical, world 1's horizontal and vertical. */
    const double v_hat[3] = {-g_dt, 3.0, -g_dt};

    /* Rows, concatenated over worlds. Each row has two DOF blocks (offset, length), local to its
     * world; these rows use only block 0, of length 1. J and Y = H^-1 J^T hold the blocks' values
     * back to back. H is diagonal (the mass) here, so Y = J / m. */
    const uint32_t block_offset[6] = {0, 0, /* world 0, row 0: the contact, DOF 0 */
                                      1, 0, /* world 1, row 0: the contact, DOF 1 (vertical) */
                                      0, 0 /* world 1, row 1: the friction, DOF 0 (horizontal) */};
    const uint32_t block_length[6] = {1, 0, 1, 0, 1, 0};
    const double jacobian[3] = {1.0, 1.0, 1.0};
    const double response[3] = {1.0 / m0, 1.0 / m1, 1.0 / m1};
    const double bias[3] = {0.0, 0.0, 0.0};
    const int32_t kind[3] = {STEEL_ROW_CONTACT_NORMAL, STEEL_ROW_CONTACT_NORMAL,
                             STEEL_ROW_FRICTION_BOX};
    const int32_t normal_row[3] = {-1, -1, 0}; /* friction row -> world 1's row 0 */
    const double friction[3] = {0.0, 0.0, 0.5};

    steel_batch_desc desc;
    steel_rows_desc rows;
    steel_solve_options options;
    double impulses[3], velocities[3];
    steel_world_stats stats[2];
    uint32_t w;

    /* 1. Create a batch of two worlds (CPU, float64, one thread by default). */
    steel_batch_desc_default(&desc);
    desc.world_count = 2;
    CHECK(steel_batch_create(STEEL_ABI_VERSION, &desc, batch));

    /* 2. Upload the rows. The arrays are copied; they could be freed right after. */
    steel_rows_desc_default(&rows);
    rows.world_count = 2;
    rows.world_dof_counts = dof_counts;
    rows.world_row_counts = row_counts;
    rows.unconstrained_velocity = v_hat;
    rows.block_offset = block_offset;
    rows.block_length = block_length;
    rows.value_count = 3;
    rows.jacobian = jacobian;
    rows.response = response;
    rows.bias = bias;
    rows.kind = kind;
    rows.normal_row = normal_row;
    rows.friction = friction;
    CHECK(steel_batch_upload_rows(*batch, &rows));

    /* 3. Options: at most 100 sweeps, stop a world once its residual is below 1e-9. */
    steel_solve_options_default(&options);
    options.iterations = 100;
    options.tolerance = 1e-9;
    CHECK(steel_batch_set_options(*batch, &options));

    /* 4. Solve and read back. */
    CHECK(steel_batch_solve(*batch));
    CHECK(steel_batch_read_impulses(*batch, impulses, 3, NULL));
    CHECK(steel_batch_read_velocities(*batch, velocities, 3, NULL));
    CHECK(steel_batch_read_world_stats(*batch, sizeof(steel_world_stats), stats, 2, NULL));

    for (w = 0; w < 2; ++w)
        printf("world %u: path %s, %u sweeps, residual %.3g%s\n", w,
               stats[w].path == STEEL_PATH_DENSE ? "dense" : "general", stats[w].sweeps,
               stats[w].residual, (stats[w].flags & STEEL_WORLD_CONVERGED) ? ", converged" : "");
    printf("world 0: normal impulse %.6f (exact %.6f), velocity %.6f\n", impulses[0], m0 * g_dt,
           velocities[0]);
    printf("world 1: normal impulse %.6f (exact %.6f), friction impulse %.6f (exact %.6f)\n",
           impulses[1], m1 * g_dt, impulses[2], -0.5 * m1 * g_dt);
    printf("world 1: velocity (%.6f, %.6f), exact (%.6f, 0)\n", velocities[1], velocities[2],
           3.0 - 0.5 * g_dt);

    /* This file doubles as a test (ctest: example_quickstart): the answers must be exact. */
    return near(impulses[0], m0 * g_dt) && near(impulses[1], m1 * g_dt) &&
                   near(impulses[2], -0.5 * m1 * g_dt) && near(velocities[1], 3.0 - 0.5 * g_dt) &&
                   near(velocities[0], 0.0) && near(velocities[2], 0.0)
               ? 0
               : 1;
}

int main(void) {
    steel_batch batch = {0};
    const int result = run(&batch);
    /* 5. Destroy the batch (a null handle, e.g. after a failed create, is a no-op). */
    steel_batch_destroy(batch);
    return result;
}
