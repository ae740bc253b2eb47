// The GPU against the host emulation of the same kernels (tests/simt/), bit for bit. The device
// code is built without FMA contraction and with IEEE division and square root, so the only
// thing left to differ would be a kernel that does not do on the device what it does on the
// host: a race, an uninitialized read, a compiler difference. On a device (skipped without one,
// like every test of steel_cuda_tests), and in steel_emulated_cuda_tests on the emulated device,
// whose launches run in order: the reference emulation here runs its blocks and warps in the
// shuffled order (simt/schedule.hpp), so that there too two orders of the same kernels meet.
#include "cuda_support.hpp"
#include "robot_scenes.hpp"
#include "scene_builder.hpp"
#include "simt/emulated_kernels.hpp"
#include "simt/schedule.hpp"

#include "batch.hpp"
#include "handle_registry.hpp"

#include <cstring>
#include <variant>

using cuda_test::options_with;

namespace {

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class Real> double largest_gap(const std::vector<Real>& a, const std::vector<Real>& b) {
    double gap = a.size() == b.size() ? 0.0 : 1e300;
    for (size_t k = 0; k < a.size() && k < b.size(); ++k)
        gap = std::max(gap, std::fabs(double(a[k]) - double(b[k])));
    return gap;
}

// The batch (a CUDA batch, uploaded) is solved on the device; its host mirror then holds both
// the rows and the device's results, and the emulation runs on those rows.
void check_device_equals_emulation(steel_batch batch, const steel_solve_options& options) {
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    std::visit(
        [&](auto& host) {
            const auto emulated = [&] {
                const simt::ScopedSchedule shuffled(simt::Schedule::shuffled);
                return test::emulate_solve(host.rows, options);
            }();
            for (const std::string& problem : emulated.problems)
                FAIL_CHECK(problem);
            INFO("largest impulse gap " << largest_gap(host.results.impulse, emulated.impulse));
            CHECK(same_bits(host.results.impulse, emulated.impulse));
            CHECK(same_bits(host.results.velocity, emulated.velocity));
            CHECK(host.world_path == emulated.world_path);
            REQUIRE(host.stats.size() == emulated.stats.size());
            for (size_t w = 0; w < host.stats.size(); ++w) {
                CAPTURE(w);
                CHECK(std::memcmp(&host.stats[w], &emulated.stats[w], sizeof(steel_world_stats)) ==
                      0);
            }
            if (options.record_residual_history) CHECK(same_bits(host.history, emulated.history));
        },
        steel::lookup_batch(batch.id, "test").state);
}

} // namespace

TEST_CASE("GPU = emulated kernels bit for bit: random worlds, every path, both precisions, "
          "momentum, history and pre-elimination") {
    const scenes::RowsBuilder builder = cuda_test::random_batch(42, 24);
    const steel_rows_desc rows = builder.desc();
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        const steel_batch batch =
            cuda_test::create(builder.world_count(), STEEL_BACKEND_CUDA, precision);
        REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
        for (int32_t path : {STEEL_PATH_GENERAL, STEEL_PATH_DENSE, STEEL_PATH_AUTO}) {
            CAPTURE(precision);
            CAPTURE(path);
            steel_solve_options options = options_with(9, path);
            check_device_equals_emulation(batch, options);
            options.nesterov_momentum = 1;
            options.record_residual_history = 1;
            options.cfm = 1e-6;
            options.contact_regularization = 1e-4;
            check_device_equals_emulation(batch, options);
            options.enable_bilateral_preelimination = 1;
            check_device_equals_emulation(batch, options);
        }
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}

TEST_CASE("GPU = emulated kernels bit for bit: scenes with box and cone friction") {
    for (int32_t model : {STEEL_FRICTION_MODEL_BOX, STEEL_FRICTION_MODEL_CONE}) {
        const scenes::SceneBuilder builder = cuda_test::robot_worlds(model, 6);
        const steel_scene_desc desc = builder.desc();
        const steel_batch batch =
            cuda_test::create(desc.world_count, STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
        REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
        CAPTURE(model);
        check_device_equals_emulation(batch, options_with(12, STEEL_PATH_AUTO));
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}
