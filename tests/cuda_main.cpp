// main() of steel_cuda_tests (and of steel_emulated_cuda_tests): the GPU tests run only where a
// CUDA batch can be created. Without a device (STEEL_ERROR_NO_DEVICE) it says why and exits 77,
// which ctest reports as skipped (SKIP_RETURN_CODE). Any other refusal (a device that was seen
// but cannot be used, say) is a failure, exit 1, so that neither ctest nor scripts/gpu_check.sh
// reports a broken device as a missing one.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <steel/steel.h>

#include <cstdio>

int main(int argc, char** argv) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.backend = STEEL_BACKEND_CUDA;
    steel_batch batch{};
    const steel_status status = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
    if (status == STEEL_ERROR_NO_DEVICE) {
        std::printf("SKIP steel_cuda_tests: no CUDA batch can be made here (%s: %s)\n",
                    steel_status_string(status), steel_last_error_message());
        return 77;
    }
    if (status != STEEL_OK) {
        std::printf(
            "FAIL steel_cuda_tests: a CUDA batch could not be created (status %d, %s: %s)\n",
            int(status), steel_status_string(status), steel_last_error_message());
        return 1;
    }
    steel_batch_destroy(batch);
    doctest::Context context(argc, argv);
    return context.run();
}
