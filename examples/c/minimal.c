/*
 * minimal.c: the smallest rows-mode program. One world: a 2 kg box resting on the ground, one
 * DOF (its vertical velocity), one contact row. Over a step dt = 1/60 gravity makes it fall at
 * v-hat = -g*dt; the contact must stop it, so the exact impulse is m*g*dt.
 *
 *   cc -std=c99 minimal.c $(pkg-config --cflags --libs steel) -o minimal && ./minimal
 *
 * It is README.md's example, and it runs as a test (ctest: example_c_minimal).
 */
#include <steel/steel.h>

#include <stdio.h>

int main(void) {
    const double m = 2.0, g_dt = 9.81 / 60.0;
    const uint32_t dofs[1] = {1}, rows_per_world[1] = {1};
    const double v_hat[1] = {-g_dt};
    const uint32_t block_offset[2] = {0, 0}, block_length[2] = {1, 0}; /* one block: DOF 0 */
    const double jacobian[1] = {1.0}, response[1] = {1.0 / m};         /* Y = H^-1 J^T */
    const double bias[1] = {0.0};
    const int32_t kind[1] = {STEEL_ROW_CONTACT_NORMAL};

    steel_batch batch = {0};
    steel_batch_desc desc;
    steel_batch_desc_default(&desc); /* CPU, float64, one world, one thread */
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &batch) != STEEL_OK) {
        fprintf(stderr, "%s\n", steel_last_error_message());
        return 1;
    }

    steel_rows_desc rows;
    steel_rows_desc_default(&rows);
    rows.world_count = 1;
    rows.world_dof_counts = dofs;
    rows.world_row_counts = rows_per_world;
    rows.unconstrained_velocity = v_hat;
    rows.block_offset = block_offset;
    rows.block_length = block_length;
    rows.value_count = 1;
    rows.jacobian = jacobian;
    rows.response = response;
    rows.bias = bias;
    rows.kind = kind;

    double impulse = 0;
    if (steel_batch_upload_rows(batch, &rows) != STEEL_OK || steel_batch_solve(batch) != STEEL_OK ||
        steel_batch_read_impulses(batch, &impulse, 1, NULL) != STEEL_OK) {
        fprintf(stderr, "%s\n", steel_last_error_message());
        steel_batch_destroy(batch);
        return 1;
    }
    printf("impulse %.6f, exact %.6f\n", impulse, m * g_dt); /* 0.327000 twice */
    steel_batch_destroy(batch);
    return impulse - m * g_dt < 1e-12 && m * g_dt - impulse < 1e-12 ? 0 : 1;
}
