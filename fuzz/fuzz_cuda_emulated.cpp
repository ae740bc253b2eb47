// Fuzz target: the CUDA backend's kernels on arbitrary rows, without a GPU. The rows and options
// are fuzz_solve_rows.cpp's (random_rows.hpp); whatever the CPU backend's upload accepts is then
// solved twice: by the CPU backend, and by the CUDA kernels run on the host by the emulation of
// tests/simt/ (the launches of device_batch.cu, every output starting as uninitialized device
// memory would hold it). Properties of the kernels' solve:
//  - the emulation catches nothing: a warp's lanes meet at the same shuffles, votes and
//    __syncwarp calls with full masks, and each block stays inside its shared memory (ASan, in
//    the fuzzing build, also sees any read or write outside the arrays);
//  - every world ends within the sweeps asked, finite or flagged STEEL_WORLD_NONFINITE with zero
//    impulses and velocity v-hat, as the CPU backend promises (check_world);
//  - every world reports the CPU backend's path (classification counts rows and DOFs; the
//    numbers never change it);
//  - the kernels of steel_batch_update_values_device (J.Y of every row, the cone pairs' cross
//    terms), rerun on the uploaded rows, give the upload's values bit for bit: the same
//    arithmetic (dense_entry) in the same order, NaNs and infinities included.
// The numbers themselves are not compared: on such rows (non-finite, 1e300, A not positive
// definite) the two summation orders may round apart and Gauss-Seidel may amplify that without
// bound. tests/test_cuda_emulated.cpp holds well-posed worlds to the documented bound.
#include "emulated.hpp"
#include "random_rows.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <variant>
#include <vector>

namespace {

// The values kernels on a copy of the uploaded rows, J.Y poisoned first.
void check_values_kernels(const fuzz::RandomBatch& made) {
    std::visit(
        [&](auto& host) {
            auto rows = host.rows;
            using Real = typename decltype(rows.jy)::value_type;
            std::fill(rows.jy.begin(), rows.jy.end(), std::numeric_limits<Real>::quiet_NaN());
            // The cross terms' kernel writes each pair's first row; the rest stay as the upload
            // left them on the device, zero.
            std::fill(rows.cone_cross_01.begin(), rows.cone_cross_01.end(), Real(0));
            std::fill(rows.cone_cross_10.begin(), rows.cone_cross_10.end(), Real(0));
            fuzz::require_no_problems(test::emulate_values_kernels(rows));
            if (!fuzz::same_bits(rows.jy, host.rows.jy) ||
                !fuzz::same_bits(rows.cone_cross_01, host.rows.cone_cross_01) ||
                !fuzz::same_bits(rows.cone_cross_10, host.rows.cone_cross_10))
                fuzz::die("the values kernels' J.Y or cone cross terms are not the upload's");
        },
        steel::lookup_batch(made.batch.id, "fuzz_cuda_emulated").state);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Input in(data, size);
    const fuzz::RandomBatch made = fuzz::upload_random_batch(in);
    if (made.batch.id == 0) return 0; // refused, with a message
    if (steel_batch_solve(made.batch) != STEEL_OK) fuzz::die("an accepted upload failed to solve");
    const fuzz::Results cpu = fuzz::read_results(made);
    const auto emulated =
        fuzz::emulated_solve<fuzz::Results>(made.batch, made.used, "fuzz_cuda_emulated");
    fuzz::check_worlds(made, emulated);
    for (size_t w = 0; w < cpu.stats.size(); ++w)
        if (emulated.stats[w].path != cpu.stats[w].path) {
            std::fprintf(stderr, "world %zu: the kernels report path %d, the CPU backend %d\n", w,
                         emulated.stats[w].path, cpu.stats[w].path);
            fuzz::die("the kernels and the CPU backend disagree on a world's path");
        }
    check_values_kernels(made);
    steel_batch_destroy(made.batch);
    return 0;
}
