// The batch functions of steel.h: check, convert, forward, catch. No solver logic here.
#include "boundary.hpp"
#include "batch_checks.hpp"

#include "../impl/batch.hpp"
#include "../impl/cuda/device_backend.hpp"
#include "../impl/handle_registry.hpp"
#include "../impl/output_checks.hpp"
#include "../impl/rows_upload.hpp"
#include "../impl/snapshot/capture.hpp"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <memory>
#include <thread>

using namespace steel;

namespace {

constexpr uint32_t kMaxThreads = 256;

steel_batch_desc default_desc() {
    steel_batch_desc desc{};
    desc.struct_size = sizeof(desc);
    desc.backend = STEEL_BACKEND_CPU;
    desc.precision = STEEL_PRECISION_FLOAT64;
    desc.world_count = 1;
    desc.thread_count = 1;
    return desc;
}

steel_solve_options default_options() {
    steel_solve_options options{};
    options.struct_size = sizeof(options);
    options.iterations = 50;
    options.tolerance = 0;
    options.cfm = 0;
    options.path = STEEL_PATH_AUTO;
    options.warm_start = 1;
    return options;
}

steel_rows_desc default_rows() {
    steel_rows_desc rows{};
    rows.struct_size = sizeof(rows);
    return rows;
}

template <class Member>
steel_status read_vector(steel_batch batch, const char* where, double* out, uint64_t capacity,
                         uint64_t* out_count, Member member) {
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        cuda::settle_host_results(b, where); // a CUDA batch's results may still be on the device
        std::visit(
            [&](auto& state) {
                if (!state.solved)
                    fail(STEEL_ERROR_NO_DATA,
                         format("%s: the batch has not been solved since its last upload", where));
                const auto& values = member(state.results);
                if (output_wanted<uint64_t>(where, out, capacity, values.size(), out_count,
                                            "values to write"))
                    std::copy(values.begin(), values.end(), out);
            },
            b.state);
    });
}

} // namespace

// The checks shared with the snapshot loader (batch_checks.hpp).
namespace steel {

steel_batch_desc checked_batch_desc(const steel_batch_desc& desc_in, const char* where) {
    steel_batch_desc desc = desc_in;
    if (desc.backend == STEEL_BACKEND_CUDA && !cuda::compiled_in())
        fail(STEEL_ERROR_UNSUPPORTED, format("%s: this build of Steel has no CUDA backend (built "
                                             "without nvcc or with STEEL_CUDA=OFF)",
                                             where));
    if (desc.backend != STEEL_BACKEND_CPU && desc.backend != STEEL_BACKEND_CUDA)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: backend = %d is not a STEEL_BACKEND_* value", where, desc.backend));
    if (desc.precision != STEEL_PRECISION_FLOAT32 && desc.precision != STEEL_PRECISION_FLOAT64)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: precision = %d is not a STEEL_PRECISION_* value", where, desc.precision));
    if (desc.world_count == 0)
        fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: world_count is 0", where));
    if (desc.reserved0 != 0)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: reserved0 = %u must be 0", where, desc.reserved0));
    if (desc.thread_count > kMaxThreads)
        fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: thread_count = %u is above the limit of %u",
                                                  where, desc.thread_count, kMaxThreads));
    // 0 resolves within the limit too: the batch's desc goes into its snapshots and captures,
    // which are loaded through these same checks.
    if (desc.thread_count == 0) desc.thread_count = ThreadPool::hardware_thread_count(kMaxThreads);
    return desc;
}

void check_options(const steel_solve_options& options, const char* where) {
    auto bad = [&](const std::string& what) {
        fail(STEEL_ERROR_INVALID_ARGUMENT, std::string(where) + ": " + what);
    };
    if (options.iterations < 1) bad("iterations = 0; at least one sweep is needed");
    if (!std::isfinite(options.tolerance) || options.tolerance < 0)
        bad(format("tolerance = %g must be finite and >= 0", options.tolerance));
    if (!std::isfinite(options.cfm) || options.cfm < 0)
        bad(format("cfm = %g must be finite and >= 0", options.cfm));
    if (options.path < STEEL_PATH_AUTO || options.path > STEEL_PATH_DENSE)
        bad(format("path = %d is not a STEEL_PATH_* value", options.path));
    if (options.warm_start > 1) bad(format("warm_start = %u must be 0 or 1", options.warm_start));
    if (!std::isfinite(options.contact_regularization) || options.contact_regularization < 0)
        bad(format("contact_regularization = %g must be finite and >= 0",
                   options.contact_regularization));
    if (options.nesterov_momentum > 1)
        bad(format("nesterov_momentum = %u must be 0 or 1", options.nesterov_momentum));
    if (options.enable_bilateral_preelimination > 1)
        bad(format("enable_bilateral_preelimination = %u must be 0 or 1",
                   options.enable_bilateral_preelimination));
    if (options.record_residual_history > 1)
        bad(format("record_residual_history = %u must be 0 or 1", options.record_residual_history));
    if (options.solve_mode != STEEL_SOLVE_SERIAL && options.solve_mode != STEEL_SOLVE_COLORED)
        bad(format("solve_mode = %d is not a STEEL_SOLVE_* value", options.solve_mode));
    if (options.articulated_contact_response != STEEL_RESPONSE_IMMEDIATE &&
        options.articulated_contact_response != STEEL_RESPONSE_PROPAGATION)
        bad(format("articulated_contact_response = %d is not a STEEL_RESPONSE_* value",
                   options.articulated_contact_response));
    const bool propagation = options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION;
    if (options.solve_mode == STEEL_SOLVE_COLORED && !propagation)
        bad("solve_mode = STEEL_SOLVE_COLORED needs articulated_contact_response = "
            "STEEL_RESPONSE_PROPAGATION "
            "(docs/propagation-and-colored.md): colors are found from the bodies a contact "
            "touches");
    if (propagation && options.nesterov_momentum)
        bad("nesterov_momentum = 1 needs articulated_contact_response = STEEL_RESPONSE_IMMEDIATE "
            "(docs/propagation-and-colored.md)");
    if (propagation && options.enable_bilateral_preelimination)
        bad("enable_bilateral_preelimination = 1 needs articulated_contact_response = "
            "STEEL_RESPONSE_IMMEDIATE");
    if (options.reserved0 != 0) bad(format("reserved0 = %u must be 0", options.reserved0));
}

void set_batch_options(Batch& b, const steel_solve_options& options, const char* where) {
    check_options(options, where);
    cuda::settle_host_mirror(b, where); // the denominators are checked on current rows
    std::visit(
        [&](auto& state) {
            if (state.has_rows)
                check_denominators(state.rows, options.cfm, options.contact_regularization, where);
        },
        b.state);
    cuda::options_changing(b, options, where); // sizes the device buffers: a solve never allocates
    b.options = options;
}

} // namespace steel

extern "C" {

steel_status steel_batch_desc_init(steel_batch_desc* out, uint32_t struct_size) {
    constexpr const char* where = "steel_batch_desc_init";
    return call_guarded(where, [&] {
        write_versioned(out, struct_size, default_desc(), where, "steel_batch_desc");
    });
}

steel_status steel_solve_options_init(steel_solve_options* out, uint32_t struct_size) {
    constexpr const char* where = "steel_solve_options_init";
    return call_guarded(where, [&] {
        write_versioned(out, struct_size, default_options(), where, "steel_solve_options");
    });
}

steel_status steel_rows_desc_init(steel_rows_desc* out, uint32_t struct_size) {
    constexpr const char* where = "steel_rows_desc_init";
    return call_guarded(where, [&] {
        write_versioned(out, struct_size, default_rows(), where, "steel_rows_desc");
    });
}

steel_status steel_batch_create(uint32_t abi_version, const steel_batch_desc* desc_in,
                                steel_batch* out) {
    constexpr const char* where = "steel_batch_create";
    if (out) out->id = 0;
    return call_guarded(where, [&] {
        if (out == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: out is NULL", where));
        if (abi_version != STEEL_ABI_VERSION)
            fail(
                STEEL_ERROR_ABI_MISMATCH,
                format(
                    "%s: the caller's header has ABI version %u but this library (Steel %s) has %u",
                    where, abi_version, steel_version(), STEEL_ABI_VERSION));
        const steel_batch_desc desc = checked_batch_desc(
            read_versioned(desc_in, default_desc(), where, "steel_batch_desc"), where);
        auto created = std::make_unique<Batch>(desc, default_options());
        cuda::attach_backend(*created, where); // a CUDA batch: finds the device (NO_DEVICE if none)
        out->id = register_batch(std::move(created));
        snapshot::capture_from_environment(
            lookup_batch(out->id, where)); // STEEL_CAPTURE; never fails
    });
}

steel_status steel_batch_destroy(steel_batch batch) {
    constexpr const char* where = "steel_batch_destroy";
    return call_guarded(where, [&] {
        if (batch.id == 0) return;
        std::unique_ptr<Batch> doomed = unregister_batch(batch.id, where);
    });
}

// Writes the whole struct without reading out->struct_size (steel.h): safe only while every
// caller's steel_batch_desc is this size. A caller built against an older header would have a
// smaller one, so growing the struct needs either write_versioned here (as get_options does) or
// a new STEEL_ABI_VERSION, which steel_batch_create refuses to mix.
static_assert(STEEL_ABI_VERSION != 1u || sizeof(steel_batch_desc) == 24,
              "steel_batch_desc grew under ABI 1: make steel_batch_get_desc honour struct_size");

steel_status steel_batch_get_desc(steel_batch batch, steel_batch_desc* out) {
    constexpr const char* where = "steel_batch_get_desc";
    return call_guarded(where, [&] {
        if (out == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: out is NULL", where));
        *out = lookup_batch(batch.id, where).desc;
    });
}

steel_status steel_batch_upload_rows(steel_batch batch, const steel_rows_desc* rows_in) {
    constexpr const char* where = "steel_batch_upload_rows";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        const steel_rows_desc rows =
            read_versioned(rows_in, default_rows(), where, "steel_rows_desc");
        replace_rows(b, rows, where); // a CUDA batch's device mirror too
        b.scene.reset();
    });
}

steel_status steel_batch_set_options(steel_batch batch, const steel_solve_options* options_in) {
    constexpr const char* where = "steel_batch_set_options";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        set_batch_options(
            b, read_versioned(options_in, default_options(), where, "steel_solve_options"), where);
    });
}

steel_status steel_batch_get_options(steel_batch batch, steel_solve_options* out) {
    constexpr const char* where = "steel_batch_get_options";
    return call_guarded(where, [&] {
        if (out == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: out is NULL", where));
        const Batch& b = lookup_batch(batch.id, where);
        write_versioned(out, out->struct_size, b.options, where, "steel_solve_options");
    });
}

steel_status steel_batch_solve(steel_batch batch) {
    constexpr const char* where = "steel_batch_solve";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        const bool has_rows = std::visit([](auto& state) { return state.has_rows; }, b.state);
        if (!has_rows) fail(STEEL_ERROR_NO_DATA, format("%s: no rows have been uploaded", where));
        if (b.device) {
            cuda::solve(b, nullptr, true);
        } else {
            solve_batch_on_cpu(b);
        }
        b.results_options = b.options; // what a snapshot pairs with these results
        b.rows_updated_since_solve = false;
        snapshot::capture_solve(b); // appends to the capture file, if any; never fails the solve
    });
}

steel_status steel_batch_read_impulses(steel_batch batch, double* out, uint64_t capacity,
                                       uint64_t* out_count) {
    return read_vector(
        batch, "steel_batch_read_impulses", out, capacity, out_count,
        [](const auto& results) -> const auto& { return results.impulse; });
}

steel_status steel_batch_read_velocities(steel_batch batch, double* out, uint64_t capacity,
                                         uint64_t* out_count) {
    return read_vector(
        batch, "steel_batch_read_velocities", out, capacity, out_count,
        [](const auto& results) -> const auto& { return results.velocity; });
}

steel_status steel_batch_read_world_stats(steel_batch batch, uint32_t element_size,
                                          steel_world_stats* out, uint32_t capacity,
                                          uint32_t* out_count) {
    constexpr const char* where = "steel_batch_read_world_stats";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        cuda::settle_host_results(b, where);
        if (element_size < sizeof(steel_world_stats))
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("%s: element_size = %u is smaller than %zu", where, element_size,
                        sizeof(steel_world_stats)));
        std::visit(
            [&](auto& state) {
                if (!state.solved)
                    fail(STEEL_ERROR_NO_DATA,
                         format("%s: the batch has not been solved since its last upload", where));
                const uint32_t count = uint32_t(state.stats.size());
                if (!output_wanted<uint32_t>(where, out, capacity, count, out_count, "worlds"))
                    return;
                unsigned char* bytes = reinterpret_cast<unsigned char*>(out);
                for (uint32_t w = 0; w < count; ++w) {
                    unsigned char* element = bytes + size_t(w) * element_size;
                    std::memset(element, 0, element_size);
                    std::memcpy(element, &state.stats[w], sizeof(steel_world_stats));
                }
            },
            b.state);
    });
}

steel_status steel_batch_read_residual_history(steel_batch batch, uint32_t world, double* out,
                                               uint32_t capacity, uint32_t* out_count) {
    constexpr const char* where = "steel_batch_read_residual_history";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        cuda::settle_host_results(b, where);
        if (world >= b.desc.world_count)
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("%s: world %u is out of range; the batch has %u worlds", where, world,
                        b.desc.world_count));
        std::visit(
            [&](auto& state) {
                if (!state.solved)
                    fail(STEEL_ERROR_NO_DATA,
                         format("%s: the batch has not been solved since its last upload", where));
                if (state.history_stride == 0)
                    fail(STEEL_ERROR_NO_DATA,
                         format("%s: the last solve ran with record_residual_history = 0", where));
                const uint32_t count = state.stats[world].sweeps;
                const std::string what = format("sweeps of world %u", world);
                if (!output_wanted<uint32_t>(where, out, capacity, count, out_count, what.c_str()))
                    return;
                const double* history =
                    state.history.data() + uint64_t(world) * state.history_stride;
                std::copy(history, history + count, out);
            },
            b.state);
    });
}

} // extern "C"
