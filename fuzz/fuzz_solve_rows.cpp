// Fuzz target: solving arbitrary rows. Every count, index, kind and number comes from the input,
// numbers including zeros, denormals, 1e300, NaN and infinities. Properties:
//  - the upload either refuses (an error status and a message) or accepts;
//  - an accepted batch always solves (status OK, within the sweeps asked, so never a hang), and
//    every world ends either with finite impulses and velocities, or flagged
//    STEEL_WORLD_NONFINITE with its impulses zero and its velocity v-hat (SPEC 9).
#include "random_rows.hpp"

#include <steel/steel.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Input in(data, size);
    const fuzz::RandomBatch made = fuzz::upload_random_batch(in);
    if (made.batch.id == 0) return 0; // refused, with a message
    if (steel_batch_solve(made.batch) != STEEL_OK) fuzz::die("an accepted upload failed to solve");
    fuzz::check_worlds(made, fuzz::read_results(made));
    steel_batch_destroy(made.batch);
    return 0;
}
