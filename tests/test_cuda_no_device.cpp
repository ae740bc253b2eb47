// The CUDA backend's behaviour where it cannot run: built without it, or built with it on a
// machine without a device or driver. Either way a CUDA batch is refused with a clear status and
// message, the device-pointer functions refuse CPU batches, and the CPU backend is untouched.
// (Where a device is present, tests/test_cuda_backend.cpp takes over.)
#include "rows_scenes.hpp"
#include "support.hpp"

#include <cstdlib>
#include <string>

namespace {

// OK when a device is present; the tests below then have nothing to check.
steel_status create_cuda_batch(steel_batch& batch) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.backend = STEEL_BACKEND_CUDA;
    return steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
}

bool built_with_cuda() {
    return (steel_build_features() & STEEL_FEATURE_CUDA) != 0;
}

} // namespace

TEST_CASE("steel_build_features reports CUDA exactly when the backend is compiled in") {
#if defined(STEEL_TEST_WITH_CUDA)
    CHECK(built_with_cuda());
#else
    CHECK_FALSE(built_with_cuda());
#endif
}

TEST_CASE("a CUDA batch without a device or without the backend is refused with a clear status and "
          "message") {
    steel_batch batch{12345};
    const steel_status status = create_cuda_batch(batch);
    if (status == STEEL_OK) {
        MESSAGE("a CUDA device is present: the no-device answer cannot be observed here");
        REQUIRE_OK(steel_batch_destroy(batch));
        return;
    }
    const std::string message = steel_last_error_message();
    CAPTURE(message);
    CHECK(batch.id == 0);
    if (built_with_cuda()) {
        CHECK(status == STEEL_ERROR_NO_DEVICE);
        CHECK(std::string(steel_status_string(status)) == "no CUDA device");
        CHECK(message.find("no CUDA device was found") != std::string::npos);
        CHECK(message.find("cudaError") != std::string::npos); // the runtime's own words
    } else {
        CHECK(status == STEEL_ERROR_UNSUPPORTED);
        CHECK(message.find("no CUDA backend") != std::string::npos);
    }
    // Asking again gives the same answer (nothing sticky, nothing crashed).
    CHECK(create_cuda_batch(batch) == status);
}

TEST_CASE("a CUDA batch asked for an unknown kernel build is refused, naming the variable") {
    // The variables are read before any device is looked for, so this holds with or without one.
    if (!built_with_cuda()) {
        MESSAGE("built without the CUDA backend: no kernel to pick");
        return;
    }
    struct Variable {
        const char* name;
        const char* bad;
        const char* takes;
    };
    for (const Variable& variable :
         {Variable{"STEEL_CUDA_SERIAL_LAYOUT", "threads", "\"thread\" or \"warp\""},
          Variable{"STEEL_CUDA_GENERAL_KERNEL", "bound", "\"plain\" or \"bounded\""},
          Variable{"STEEL_CUDA_PROPAGATION_KERNEL", "Bounded", "\"plain\" or \"bounded\""}}) {
        CAPTURE(variable.name);
        setenv(variable.name, variable.bad, 1);
        steel_batch batch{12345};
        const steel_status status = create_cuda_batch(batch);
        const std::string message = steel_last_error_message();
        unsetenv(variable.name);
        CAPTURE(message);
        CHECK(status == STEEL_ERROR_INVALID_ARGUMENT);
        CHECK(batch.id == 0);
        CHECK(message.find(std::string(variable.name) + " is \"" + variable.bad + "\"") !=
              std::string::npos);
        CHECK(message.find(variable.takes) != std::string::npos);
        // Unset again, the answer is the machine's own (OK with a device, NO_DEVICE without).
        const steel_status again = create_cuda_batch(batch);
        CHECK(again != STEEL_ERROR_INVALID_ARGUMENT);
        if (again == STEEL_OK) REQUIRE_OK(steel_batch_destroy(batch));
    }
}

TEST_CASE("the device-pointer functions refuse a CPU batch and leave it working") {
    scenes::RowsBuilder builder;
    scenes::add_stack_world(builder, scenes::StackSpec{});
    test::SolveSetup setup;
    const steel_batch batch = test::make_batch(builder, setup);
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve(batch));

    const steel_status expected =
        built_with_cuda() ? STEEL_ERROR_INVALID_ARGUMENT : STEEL_ERROR_UNSUPPORTED;
    const char* expected_words = built_with_cuda() ? "STEEL_BACKEND_CUDA batch" : "no CUDA backend";
    steel_row_values_desc values;
    steel_row_values_desc_default(&values);
    CHECK(values.struct_size == sizeof(values));
    double out[16];
    uint64_t count = 0;
    const steel_status statuses[] = {
        steel_batch_upload_rows_device(batch, &rows, nullptr),
        steel_batch_update_values_device(batch, &values, nullptr),
        steel_batch_solve_async(batch, nullptr),
        steel_batch_read_impulses_device(batch, out, 16, &count, nullptr),
        steel_batch_read_velocities_device(batch, out, 16, &count, nullptr),
    };
    for (const steel_status status : statuses)
        CHECK(status == expected);
    CHECK(std::string(steel_last_error_message()).find(expected_words) != std::string::npos);

    // A null or destroyed handle is still INVALID_HANDLE, as everywhere.
    CHECK(steel_batch_solve_async(steel_batch{0}, nullptr) == STEEL_ERROR_INVALID_HANDLE);

    // The batch is as it was: it solves and reads as before.
    const test::Solved before = test::read_all(batch);
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved after = test::read_all(batch);
    CHECK(before.impulses == after.impulses);
    REQUIRE_OK(steel_batch_destroy(batch));
}
