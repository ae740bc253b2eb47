/* Compiled as strict C99 (-pedantic-errors -Werror): the public header must be plain C, and a
 * C program linked against libsteel must be able to create, solve and read a batch. */
#include <steel/steel.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    steel_batch_desc desc;
    steel_solve_options options;
    steel_rows_desc rows;
    steel_batch batch;
    const uint32_t dofs = 1, row_count = 1;
    const double v_hat = -1.0, jacobian = 1.0, response = 0.5, bias = 0.0;
    const uint32_t offsets[2] = {0, 0}, lengths[2] = {1, 0};
    const int32_t kind = STEEL_ROW_CONTACT_NORMAL;
    double impulse = 0.0;
    uint64_t count = 0;

    if (steel_abi_version() != STEEL_ABI_VERSION) return 1;
    steel_batch_desc_default(&desc);
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &batch) != STEEL_OK) return 2;
    steel_rows_desc_default(&rows);
    rows.world_count = 1;
    rows.world_dof_counts = &dofs;
    rows.world_row_counts = &row_count;
    rows.unconstrained_velocity = &v_hat;
    rows.block_offset = offsets;
    rows.block_length = lengths;
    rows.value_count = 1;
    rows.jacobian = &jacobian;
    rows.response = &response;
    rows.bias = &bias;
    rows.kind = &kind;
    if (steel_batch_upload_rows(batch, &rows) != STEEL_OK) return 3;
    steel_solve_options_default(&options);
    if (steel_batch_set_options(batch, &options) != STEEL_OK) return 4;
    if (steel_batch_solve(batch) != STEEL_OK) return 5;
    if (steel_batch_read_impulses(batch, &impulse, 1, &count) != STEEL_OK || count != 1) return 6;
    /* One row, J = 1, Y = 0.5, v-hat = -1: lambda = 1 / 0.5 = 2 stops the motion exactly. */
    if (impulse != 2.0) return 7;
    if (steel_batch_destroy(batch) != STEEL_OK) return 8;
    if (strlen(steel_last_error_message()) != 0) return 9;
    printf("C99 client: Steel %s, impulse %g\n", steel_version(), impulse);
    return 0;
}
