// Fuzz target: arbitrary sequences of C API calls decoded from the input, on a few handle slots
// that may hold live, destroyed, null or made-up batches, with struct_size, capacities, counts
// and element sizes that are right, too small or too large. The harness only ever lies in ways
// the API promises to detect: an array it passes is as long as the counts it passes say (a C
// API cannot detect a short array), everything else is fair game. Properties:
//  - no call crashes, hangs or leaks (ASan, UBSan, LeakSanitizer);
//  - every status is OK or one of the documented errors; OK leaves an empty message, an error a
//    message naming the function (which the harness checks);
//  - a read never writes past its capacity (guard values after every output buffer);
//  - a refused upload (from the host or the device), options change, solve, values update or
//    solve_async leaves the batch as it was: its snapshot (steel_batch_save_memory: rows,
//    options, results) has the same bytes before and after.
// CUDA batches run on the emulated device (tests/fake_cuda/), whose memory the sequence may
// shrink to a few kilobytes at any point, so that uploads, option changes and solves run out of
// it part way: those answer OUT_OF_MEMORY, naming the function, and leak nothing. The sequence
// also makes the device-pointer interop calls (upload from device arrays, values updates,
// solve_async, device reads) on the legacy stream and two streams of its own, which it may
// destroy after any call; the host never touches the device memory they read (the emulation
// faults if it does), and device reads keep within their capacity.
#include "fuzz_input.hpp"

#include <cuda_runtime.h>
#include <steel/steel.h>

#include <algorithm>
#include <map>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kSlots = 4;
constexpr uint32_t kMaxCalls = 48;
constexpr double kGuard = 1234.5;
constexpr size_t kDeviceMemory = size_t(1) << 30; // the emulated device's, unless shrunk

// The emulated device memory and streams the sequence made: freed at the end, after the
// batches (which wait for their work on the streams first).
struct DeviceSide {
    std::vector<void*> buffers;
    cudaStream_t streams[2] = {}; // made on first use: non-blocking, blocking
    ~DeviceSide() {
        (void)cudaDeviceSynchronize();
        for (void* buffer : buffers)
            cudaFree(buffer);
        for (cudaStream_t stream : streams)
            if (stream) cudaStreamDestroy(stream);
        (void)cudaGetLastError();
    }
    // A device copy of host (all of it, guard element included), or null where the device has
    // no room (the emulated memory may have been shrunk).
    template <class T> T* copy_of(const std::vector<T>& host) {
        void* buffer = nullptr;
        if (cudaMalloc(&buffer, std::max<size_t>(1, host.size()) * sizeof(T)) != cudaSuccess) {
            (void)cudaGetLastError();
            return nullptr;
        }
        buffers.push_back(buffer);
        if (!host.empty())
            cudaMemcpy(buffer, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
        return static_cast<T*>(buffer);
    }
    // NULL (the legacy stream) or one of the two, made now if needed.
    void* stream(fuzz::Input& in) {
        const uint32_t k = in.below(3);
        if (k == 0) return nullptr;
        cudaStream_t& stream = streams[k - 1];
        if (!stream &&
            cudaStreamCreateWithFlags(&stream, k == 1 ? cudaStreamNonBlocking
                                                      : cudaStreamDefault) != cudaSuccess)
            stream = nullptr;
        return stream;
    }
};

struct Counts {
    uint32_t total_rows = 0, total_dofs = 0;
    uint64_t values = 0;
};

struct Harness {
    steel_batch slot[kSlots] = {};
    std::vector<steel_batch> created;  // destroyed at the end, whatever the sequence did
    std::vector<uint8_t> saved;        // the last save_memory output
    std::map<uint64_t, Counts> counts; // by batch id, after a successful upload
    DeviceSide device;
};

void check_status(steel_status status, const char* function) {
    if (status < STEEL_ERROR_NO_DEVICE || status > STEEL_OK) fuzz::die("an undocumented status");
    if (status == STEEL_ERROR_INTERNAL) {
        std::fprintf(stderr, "%s: %s\n", function, steel_last_error_message());
        fuzz::die("STEEL_ERROR_INTERNAL: a bug in Steel");
    }
    const char* message = steel_last_error_message();
    if (message == nullptr) fuzz::die("a NULL message");
    if (status == STEEL_OK && message[0] != '\0') fuzz::die("a success left a message");
    if (status != STEEL_OK && std::strstr(message, function) == nullptr) {
        std::fprintf(stderr, "%s -> %d: '%s'\n", function, status, message);
        fuzz::die("an error message that does not name its function");
    }
}

steel_batch pick_handle(Harness& h, fuzz::Input& in) {
    switch (in.below(8)) {
    case 0:
        return steel_batch{0};
    case 1:
        return steel_batch{in.u64()}; // made up
    default:
        return h.slot[in.below(kSlots)];
    }
}

// A struct_size that is right most of the time, else too small or larger (with a zero tail).
uint32_t struct_size(fuzz::Input& in, uint32_t right) {
    switch (in.below(8)) {
    case 0:
        return in.below(right);
    case 1:
        return right + 8 * (1 + in.below(4));
    default:
        return right;
    }
}

// The batch's snapshot, or nothing where it has none to give (a bad handle).
std::vector<uint8_t> snapshot_of(steel_batch batch) {
    uint64_t size = 0;
    if (steel_batch_save_memory(batch, nullptr, 0, &size) != STEEL_OK) return {};
    std::vector<uint8_t> bytes(size);
    if (steel_batch_save_memory(batch, bytes.data(), size, &size) != STEEL_OK) return {};
    return bytes;
}

// Runs `call` on `batch` and checks its status (check_status); a refusal must change nothing
// (see the top of this file).
template <class Call>
steel_status check_refusal_changes_nothing(steel_batch batch, const char* function, Call call) {
    const std::vector<uint8_t> before = snapshot_of(batch);
    const steel_status status = call();
    check_status(status, function);
    if (status == STEEL_OK) return status;
    const std::string message = steel_last_error_message();
    if (snapshot_of(batch) != before) {
        std::fprintf(stderr, "%s -> %d: '%s'\n", function, status, message.c_str());
        fuzz::die("a refused call changed the batch");
    }
    return status;
}

// Builds and uploads rows whose arrays hold what their counts say (plus a guard tail).
// Rows as the uploads build them from the input: the arrays (each one longer than its count,
// as a guard) and a desc pointing into them, some arrays left NULL.
struct BuiltRows {
    std::vector<uint32_t> dofs, rows, offset, length;
    std::vector<double> v_hat, jacobian, response, bias, lower, upper, mu, reg, initial;
    std::vector<int32_t> kind, normal;
    uint32_t total_dofs = 0, total_rows = 0;
    uint64_t values = 0;
    steel_rows_desc desc{};
};

void build_rows(BuiltRows& b, fuzz::Input& in) {
    const uint32_t worlds = in.below(4); // may not match the batch
    std::vector<uint32_t>&dofs = b.dofs, &rows = b.rows;
    dofs.assign(worlds + 1, 0);
    rows.assign(worlds + 1, 0);
    uint32_t& total_dofs = b.total_dofs;
    uint32_t& total_rows = b.total_rows;
    for (uint32_t w = 0; w < worlds; ++w) {
        dofs[w] = in.below(5);
        rows[w] = in.below(5);
        total_dofs += dofs[w];
        total_rows += rows[w];
    }
    std::vector<double>& v_hat = b.v_hat;
    v_hat.assign(total_dofs + 1, 0.0);
    for (double& v : v_hat)
        v = in.flag() ? in.unit() : in.number();
    std::vector<uint32_t>&offset = b.offset, &length = b.length;
    offset.assign(2 * total_rows + 1, 0);
    length.assign(2 * total_rows + 1, 0);
    uint64_t& values = b.values;
    for (uint32_t r = 0; r < 2 * total_rows; ++r) {
        offset[r] = in.below(5);
        length[r] = in.below(4);
        values += length[r];
    }
    std::vector<double>&jacobian = b.jacobian, &response = b.response;
    jacobian.assign(values + 1, 0.0);
    response.assign(values + 1, 0.0);
    for (uint64_t v = 0; v < values; ++v) {
        jacobian[v] = in.unit();
        response[v] = in.flag() ? jacobian[v] : in.number();
    }
    std::vector<double>&bias = b.bias, &lower = b.lower, &upper = b.upper, &mu = b.mu, &reg = b.reg,
    &initial = b.initial;
    for (std::vector<double>* each : {&bias, &lower, &upper, &mu, &reg, &initial})
        each->assign(total_rows + 1, 0.0);
    std::vector<int32_t>&kind = b.kind, &normal = b.normal;
    kind.assign(total_rows + 1, 0);
    normal.assign(total_rows + 1, 0);
    for (uint32_t r = 0; r < total_rows; ++r) {
        bias[r] = in.unit();
        kind[r] = int32_t(in.below(6));
        lower[r] = -std::fabs(in.unit());
        upper[r] = std::fabs(in.unit());
        normal[r] = int32_t(in.below(5)) - 1;
        mu[r] = std::fabs(in.unit());
        reg[r] = in.below(4) ? 0.0 : std::fabs(in.unit());
        initial[r] = in.unit();
    }
    steel_rows_desc& desc = b.desc;
    steel_rows_desc_default(&desc);
    desc.world_count = worlds;
    desc.world_dof_counts = in.below(16) ? dofs.data() : nullptr;
    desc.world_row_counts = in.below(16) ? rows.data() : nullptr;
    desc.unconstrained_velocity = in.below(16) ? v_hat.data() : nullptr;
    desc.block_offset = offset.data();
    desc.block_length = length.data();
    desc.value_count = values - (values > 0 && in.below(16) == 0 ? 1 : 0);
    desc.jacobian = in.below(16) ? jacobian.data() : nullptr;
    desc.response = response.data();
    desc.bias = bias.data();
    desc.kind = in.below(16) ? kind.data() : nullptr;
    desc.lower = in.flag() ? lower.data() : nullptr;
    desc.upper = in.flag() ? upper.data() : nullptr;
    desc.normal_row = in.flag() ? normal.data() : nullptr;
    desc.friction = in.flag() ? mu.data() : nullptr;
    desc.regularization = in.flag() ? reg.data() : nullptr;
    desc.initial_impulse = in.flag() ? initial.data() : nullptr;
}

// What a successful upload left in a batch: the lengths a values update must give.
void note_counts(Harness& h, steel_batch batch, const BuiltRows& b) {
    h.counts[batch.id] = Counts{b.total_rows, b.total_dofs, b.values};
}

void upload(Harness& h, fuzz::Input& in) {
    BuiltRows b;
    build_rows(b, in);
    // A bigger struct_size means a newer caller: the bytes past our struct must exist (zero).
    struct Wider {
        steel_rows_desc desc;
        uint8_t tail[32];
    } wider{};
    wider.desc = b.desc;
    wider.desc.struct_size = struct_size(in, sizeof(steel_rows_desc));
    if (wider.desc.struct_size > sizeof(steel_rows_desc) && in.below(4) == 0)
        wider.tail[in.below(32)] = 1;
    const steel_batch batch = pick_handle(h, in);
    const bool pass_null = in.below(32) == 0;
    if (check_refusal_changes_nothing(batch, "steel_batch_upload_rows", [&] {
            return steel_batch_upload_rows(batch, pass_null ? nullptr : &wider.desc);
        }) == STEEL_OK)
        note_counts(h, batch, b);
}

void set_options(Harness& h, fuzz::Input& in) {
    struct Wider {
        steel_solve_options options;
        uint8_t tail[32];
    } wider{};
    steel_solve_options_default(&wider.options);
    steel_solve_options& o = wider.options;
    o.iterations = in.below(12); // 0 is refused; never many (no hang)
    o.tolerance = in.flag() ? 0.0 : in.number();
    o.cfm = in.flag() ? 0.0 : in.number();
    o.path = int32_t(in.below(5)) - 1;
    o.warm_start = in.below(3);
    o.contact_regularization = in.flag() ? 0.0 : in.number();
    o.nesterov_momentum = in.below(3);
    o.enable_bilateral_preelimination = in.below(3);
    o.record_residual_history = in.below(3);
    o.reserved0 = in.below(16) == 0 ? 1u : 0u;
    o.struct_size = struct_size(in, sizeof(steel_solve_options));
    if (o.struct_size > sizeof(steel_solve_options) && in.below(4) == 0)
        wider.tail[in.below(32)] = 1;
    const steel_batch batch = pick_handle(h, in);
    const bool pass_null = in.below(32) == 0;
    check_refusal_changes_nothing(batch, "steel_batch_set_options", [&] {
        return steel_batch_set_options(batch, pass_null ? nullptr : &o);
    });
}

// A read into a buffer of `capacity` plus guards that must survive.
template <class Read>
steel_status read_doubles(fuzz::Input& in, uint64_t capacity_hint, Read read) {
    const uint64_t capacity = in.below(4) == 0 ? capacity_hint : in.below(24);
    std::vector<double> buffer(capacity + 4, kGuard);
    uint64_t count = 0;
    const int shape = int(in.below(4)); // 0: query only, 1: both NULL, 2-3: read
    steel_status status;
    if (shape == 0)
        status = read(nullptr, 0, &count);
    else if (shape == 1)
        status = read(nullptr, 0, nullptr);
    else
        status = read(buffer.data(), capacity, in.flag() ? &count : nullptr);
    for (uint64_t k = capacity; k < buffer.size(); ++k)
        if (buffer[k] != kGuard) fuzz::die("a read wrote past its capacity");
    if (status == STEEL_ERROR_BUFFER_TOO_SMALL)
        for (uint64_t k = 0; k < capacity; ++k)
            if (buffer[k] != kGuard) fuzz::die("a too-small read wrote anyway");
    return status;
}

void device_call(Harness& h, fuzz::Input& in);

void one_call(Harness& h, fuzz::Input& in) {
    switch (in.below(16)) {
    case 0: { // create
        steel_batch_desc desc;
        steel_batch_desc_default(&desc);
        desc.backend = int32_t(in.below(4)) - 1;
        desc.precision = int32_t(in.below(4));
        desc.world_count = in.below(4);
        desc.thread_count = in.below(3);
        desc.reserved0 = in.below(16) == 0 ? 1u : 0u;
        desc.struct_size = struct_size(in, sizeof(steel_batch_desc));
        struct {
            steel_batch_desc desc;
            uint8_t tail[32];
        } wider{desc, {}};
        steel_batch out{};
        const uint32_t abi = in.below(16) ? STEEL_ABI_VERSION : in.u32();
        const bool pass_null = in.below(32) == 0;
        const steel_status status =
            steel_batch_create(abi, pass_null ? nullptr : &wider.desc, &out);
        check_status(status, "steel_batch_create");
        if (status == STEEL_OK) {
            h.created.push_back(out);
            h.slot[in.below(kSlots)] = out;
        } else if (out.id != 0) {
            fuzz::die("a failed create returned a handle");
        }
        return;
    }
    case 1:
        check_status(steel_batch_destroy(pick_handle(h, in)), "steel_batch_destroy");
        return;
    case 2:
        upload(h, in);
        return;
    case 3:
        set_options(h, in);
        return;
    case 4: { // get options, maybe into a larger struct
        struct {
            steel_solve_options options;
            uint8_t tail[32];
        } wider{};
        std::memset(&wider, 0xEE, sizeof(wider));
        wider.options.struct_size = struct_size(in, sizeof(steel_solve_options));
        const steel_batch batch = pick_handle(h, in);
        const steel_status status = steel_batch_get_options(batch, &wider.options);
        check_status(status, "steel_batch_get_options");
        const uint32_t extra = wider.options.struct_size - uint32_t(sizeof(steel_solve_options));
        if (status == STEEL_OK)
            for (uint32_t k = 0; k < sizeof(wider.tail); ++k)
                if (wider.tail[k] != (k < extra ? 0 : 0xEE))
                    fuzz::die("get_options wrote the wrong tail");
        return;
    }
    case 5: {
        const steel_batch batch = pick_handle(h, in);
        check_refusal_changes_nothing(batch, "steel_batch_solve",
                                      [&] { return steel_batch_solve(batch); });
        return;
    }
    case 6: {
        const steel_batch batch = pick_handle(h, in);
        check_status(read_doubles(in, 32,
                                  [&](double* out, uint64_t capacity, uint64_t* count) {
                                      return steel_batch_read_impulses(batch, out, capacity, count);
                                  }),
                     "steel_batch_read_impulses");
        return;
    }
    case 7: {
        const steel_batch batch = pick_handle(h, in);
        check_status(read_doubles(in, 32,
                                  [&](double* out, uint64_t capacity, uint64_t* count) {
                                      return steel_batch_read_velocities(batch, out, capacity,
                                                                         count);
                                  }),
                     "steel_batch_read_velocities");
        return;
    }
    case 8: { // world stats with an element size that may be too small or larger
        const uint32_t element =
            in.below(4) == 0 ? in.below(64) : uint32_t(sizeof(steel_world_stats)) + 8 * in.below(3);
        const uint32_t capacity = in.below(6);
        std::vector<uint8_t> buffer(size_t(element) * capacity + 64, 0xCD);
        uint32_t count = 0;
        const steel_batch batch = pick_handle(h, in);
        const bool pass_out = in.flag();
        const bool pass_count = in.flag();
        const steel_status status = steel_batch_read_world_stats(
            batch, element,
            pass_out ? reinterpret_cast<steel_world_stats*>(buffer.data()) : nullptr, capacity,
            pass_count ? &count : nullptr);
        check_status(status, "steel_batch_read_world_stats");
        for (size_t k = size_t(element) * capacity; k < buffer.size(); ++k)
            if (buffer[k] != 0xCD) fuzz::die("read_world_stats wrote past its capacity");
        return;
    }
    case 9: { // residual history of some world
        const steel_batch batch = pick_handle(h, in);
        const uint32_t world = in.below(5);
        const steel_status status =
            read_doubles(in, 16, [&](double* out, uint64_t capacity, uint64_t* count) {
                uint32_t small_count = 0;
                const steel_status s = steel_batch_read_residual_history(
                    batch, world, out, uint32_t(capacity), count ? &small_count : nullptr);
                if (count) *count = small_count;
                return s;
            });
        check_status(status, "steel_batch_read_residual_history");
        return;
    }
    case 10: { // save to memory: query, then a capacity that may be short
        const steel_batch batch = pick_handle(h, in);
        uint64_t size = 0;
        const steel_status query = steel_batch_save_memory(batch, nullptr, 0, &size);
        check_status(query, "steel_batch_save_memory");
        if (query != STEEL_OK) return;
        const uint64_t capacity =
            in.below(4) == 0 ? size - std::min<uint64_t>(size, 1 + in.below(16)) : size;
        std::vector<uint8_t> buffer(capacity + 8, 0x5A);
        const steel_status status = steel_batch_save_memory(batch, buffer.data(), capacity, &size);
        check_status(status, "steel_batch_save_memory");
        for (uint64_t k = capacity; k < buffer.size(); ++k)
            if (buffer[k] != 0x5A) fuzz::die("save_memory wrote past its capacity");
        if (status == STEEL_OK) h.saved.assign(buffer.begin(), buffer.begin() + int64_t(size));
        return;
    }
    case 11: { // load the last save, maybe cut short or damaged, or with another ABI version
        std::vector<uint8_t> bytes = h.saved;
        if (!bytes.empty() && in.below(4) == 0) bytes.resize(in.below(uint32_t(bytes.size())));
        if (!bytes.empty() && in.below(4) == 0)
            bytes[in.below(uint32_t(bytes.size()))] ^= uint8_t(1 + in.below(255));
        steel_batch out{};
        const uint32_t abi = in.below(16) ? STEEL_ABI_VERSION : in.u32();
        const bool null_data = in.flag();
        const bool null_out = in.below(32) == 0;
        const steel_status status = steel_batch_load_memory(
            abi, null_data ? nullptr : bytes.data(), bytes.size(), null_out ? nullptr : &out);
        check_status(status, "steel_batch_load_memory");
        if (status == STEEL_OK) {
            h.created.push_back(out);
            h.slot[in.below(kSlots)] = out;
        }
        return;
    }
    case 12: { // capture to the null device (appends are thrown away), to nowhere, or off
        static const char* const paths[] = {nullptr, "", "/dev/null",
                                            "/nonexistent-folder/capture.steel"};
        const steel_batch batch = pick_handle(h, in);
        const char* path = paths[in.below(4)];
        check_status(steel_batch_set_capture(batch, path), "steel_batch_set_capture");
        return;
    }
    case 13: {
        steel_batch_desc desc;
        const steel_batch batch = pick_handle(h, in);
        const bool pass_null = in.below(16) == 0;
        check_status(steel_batch_get_desc(batch, pass_null ? nullptr : &desc),
                     "steel_batch_get_desc");
        return;
    }
    case 14: { // the functions without a batch; the emulated device's memory
        if (in.below(4) == 0)
            fake_cuda::set_memory_limit(in.flag() ? kDeviceMemory : in.below(1u << 16));
        if (steel_status_string(int32_t(in.u32())) == nullptr) fuzz::die("NULL status string");
        if (steel_version() == nullptr || steel_abi_version() != STEEL_ABI_VERSION)
            fuzz::die("bad version");
        (void)steel_build_features();
        steel_batch_desc_default(nullptr); // NULL is a no-op
        steel_solve_options_default(nullptr);
        steel_rows_desc_default(nullptr);
        return;
    }
    default: { // the device calls, or a load of arbitrary bytes from the rest of the input
        if (in.below(4) != 0) {
            device_call(h, in);
            return;
        }
        std::vector<uint8_t> bytes(in.below(64));
        for (uint8_t& b : bytes)
            b = in.byte();
        steel_batch out{};
        const steel_status status =
            steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &out);
        check_status(status, "steel_batch_load_memory");
        if (status == STEEL_OK) h.created.push_back(out);
        return;
    }
    }
}

// Replaces each array desc points to by a device copy of the vector it points into; false where
// the device has no room. Now and then one array stays in host memory: a lie the device reads
// must refuse (CUDA reports the pointer), not act on.
bool move_rows_to_device(Harness& h, BuiltRows& b, fuzz::Input& in) {
    steel_rows_desc& d = b.desc;
    const int left_on_host = in.below(16) == 0 ? int(in.below(15)) : -1;
    int index = 0;
    bool room = true;
    const auto move = [&](auto& field, const auto& vector) {
        const bool keep = index++ == left_on_host;
        if (field == nullptr || keep || !room) return;
        auto* copy = h.device.copy_of(vector);
        room = copy != nullptr;
        field = copy;
    };
    move(d.world_dof_counts, b.dofs);
    move(d.world_row_counts, b.rows);
    move(d.unconstrained_velocity, b.v_hat);
    move(d.block_offset, b.offset);
    move(d.block_length, b.length);
    move(d.jacobian, b.jacobian);
    move(d.response, b.response);
    move(d.bias, b.bias);
    move(d.kind, b.kind);
    move(d.lower, b.lower);
    move(d.upper, b.upper);
    move(d.normal_row, b.normal);
    move(d.friction, b.mu);
    move(d.regularization, b.reg);
    move(d.initial_impulse, b.initial);
    return room;
}

// A device read into `capacity` doubles of device memory plus guards that must survive.
void read_device(Harness& h, fuzz::Input& in, bool impulses) {
    const char* function =
        impulses ? "steel_batch_read_impulses_device" : "steel_batch_read_velocities_device";
    const steel_batch batch = pick_handle(h, in);
    const uint64_t capacity = in.below(4) == 0 ? 64 : in.below(24);
    double* buffer = h.device.copy_of(std::vector<double>(capacity + 4, kGuard));
    if (buffer == nullptr) return;
    void* stream = h.device.stream(in);
    uint64_t count = 0;
    const int shape = int(in.below(4)); // 0: query only, 1: both NULL, 2-3: read
    const auto read =
        impulses ? steel_batch_read_impulses_device : steel_batch_read_velocities_device;
    steel_status status;
    if (shape == 0)
        status = read(batch, nullptr, 0, &count, stream);
    else if (shape == 1)
        status = read(batch, nullptr, 0, nullptr, stream);
    else
        status = read(batch, buffer, capacity, in.flag() ? &count : nullptr, stream);
    check_status(status, function);
    if (cudaDeviceSynchronize() != cudaSuccess) fuzz::die("the device failed after a device read");
    std::vector<double> back(capacity + 4);
    cudaMemcpy(back.data(), buffer, back.size() * sizeof(double), cudaMemcpyDeviceToHost);
    for (uint64_t k = capacity; k < back.size(); ++k)
        if (back[k] != kGuard) fuzz::die("a device read wrote past its capacity");
    if (status == STEEL_ERROR_BUFFER_TOO_SMALL)
        for (uint64_t k = 0; k < capacity; ++k)
            if (back[k] != kGuard) fuzz::die("a too-small device read wrote anyway");
}

// The device-pointer interop (steel.h), on the emulated device's streams and memory.
void device_call(Harness& h, fuzz::Input& in) {
    switch (in.below(6)) {
    case 0: { // upload from device arrays
        BuiltRows b;
        build_rows(b, in);
        if (!move_rows_to_device(h, b, in)) return;
        b.desc.struct_size = struct_size(in, sizeof(steel_rows_desc));
        struct {
            steel_rows_desc desc;
            uint8_t tail[32];
        } wider{b.desc, {}};
        const steel_batch batch = pick_handle(h, in);
        void* stream = h.device.stream(in);
        if (check_refusal_changes_nothing(batch, "steel_batch_upload_rows_device", [&] {
                return steel_batch_upload_rows_device(batch, &wider.desc, stream);
            }) == STEEL_OK)
            note_counts(h, batch, b);
        return;
    }
    case 1: { // new values from device arrays of the lengths the batch's rows have (or none)
        const steel_batch batch = pick_handle(h, in);
        const auto known = h.counts.find(batch.id);
        const Counts counts = known != h.counts.end() ? known->second : Counts{};
        const bool sized = known != h.counts.end();
        const auto values_of = [&](uint64_t n) -> const double* {
            if (!sized || in.flag()) return nullptr;
            std::vector<double> host(n);
            for (double& v : host)
                v = in.flag() ? in.unit() : in.number();
            return h.device.copy_of(host);
        };
        steel_row_values_desc values;
        steel_row_values_desc_default(&values);
        values.unconstrained_velocity = values_of(counts.total_dofs);
        values.jacobian = values_of(counts.values);
        values.response = values_of(counts.values);
        values.bias = values_of(counts.total_rows);
        values.initial_impulse = values_of(counts.total_rows);
        values.reserved0 = in.below(16) == 0 ? 1u : 0u;
        values.struct_size = struct_size(in, sizeof(steel_row_values_desc));
        struct {
            steel_row_values_desc values;
            uint8_t tail[32];
        } wider{values, {}};
        void* stream = h.device.stream(in);
        const bool pass_null = in.below(32) == 0;
        check_refusal_changes_nothing(batch, "steel_batch_update_values_device", [&] {
            return steel_batch_update_values_device(batch, pass_null ? nullptr : &wider.values,
                                                    stream);
        });
        return;
    }
    case 2: {
        const steel_batch batch = pick_handle(h, in);
        void* stream = h.device.stream(in);
        check_refusal_changes_nothing(batch, "steel_batch_solve_async",
                                      [&] { return steel_batch_solve_async(batch, stream); });
        return;
    }
    case 3:
        read_device(h, in, /*impulses=*/true);
        return;
    case 4:
        read_device(h, in, /*impulses=*/false);
        return;
    default: { // the caller may destroy a stream right after a call (steel.h)
        cudaStream_t& stream = h.device.streams[in.below(2)];
        if (stream) cudaStreamDestroy(stream);
        stream = nullptr;
        return;
    }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Input in(data, size);
    fake_cuda::set_memory_limit(kDeviceMemory);
    Harness harness;
    for (uint32_t call = 0; call < kMaxCalls && !in.exhausted(); ++call)
        one_call(harness, in);
    for (steel_batch batch : harness.created)
        steel_batch_destroy(batch); // destroyed ones answer INVALID_HANDLE
    return 0;
}
