// Device-pointer interop on a device: rows uploaded from device memory, values updated on the
// device, solve_async on a caller's stream, results read into device memory, and a solve
// captured in a CUDA graph and replayed. Everything is compared with the host-side calls.
#include "cuda_support.hpp"
#include "test_snapshot_support.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace {

#define REQUIRE_CUDA(call) REQUIRE((call) == cudaSuccess)

template <class T> T* to_device(const std::vector<T>& host) {
    T* device = nullptr;
    REQUIRE_CUDA(cudaMalloc(&device, std::max<size_t>(1, host.size()) * sizeof(T)));
    if (!host.empty())
        REQUIRE_CUDA(
            cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return device;
}

template <class T> std::vector<T> to_host(const T* device, size_t count) {
    std::vector<T> host(count);
    REQUIRE_CUDA(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

// The builder's arrays copied to the device, and a desc pointing at them.
struct DeviceRows {
    std::vector<void*> owned;
    steel_rows_desc desc{};
    template <class T> const T* keep(const std::vector<T>& host) {
        if (host.empty()) return nullptr;
        T* device = to_device(host);
        owned.push_back(device);
        return device;
    }
    explicit DeviceRows(const scenes::RowsBuilder& b) {
        desc = b.desc();
        desc.world_dof_counts = keep(b.dof_counts);
        desc.world_row_counts = keep(b.row_counts);
        desc.unconstrained_velocity = keep(b.unconstrained_velocity);
        desc.block_offset = keep(b.block_offset);
        desc.block_length = keep(b.block_length);
        desc.jacobian = keep(b.jacobian);
        desc.response = keep(b.response);
        desc.bias = keep(b.bias);
        desc.kind = keep(b.kind);
        desc.lower = keep(b.lower);
        desc.upper = keep(b.upper);
        desc.normal_row = keep(b.normal_row);
        desc.friction = keep(b.friction);
        desc.regularization = keep(b.regularization);
        desc.initial_impulse = keep(b.initial_impulse);
    }
    ~DeviceRows() {
        for (void* pointer : owned)
            cudaFree(pointer);
    }
};

// A CUDA batch holding `builder`'s rows, solved once (which also loads every kernel it needs).
steel_batch solved_batch(const scenes::RowsBuilder& builder, int32_t precision) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    return cuda_test::solved_batch(builder, cuda_test::run(STEEL_BACKEND_CUDA, precision, options));
}

// `builder`'s biases times `scale`: what a device values update writes in these tests.
std::vector<double> scaled_bias(const scenes::RowsBuilder& builder, double scale) {
    std::vector<double> bias = builder.bias;
    for (double& b : bias)
        b *= scale;
    return bias;
}

// The CUDA backend's own solve of `builder` with its biases scaled: what a replay of a graph
// that updates the biases and solves must give.
test::Solved scaled_bias_solve(const scenes::RowsBuilder& builder, double scale,
                               int32_t precision) {
    scenes::RowsBuilder scaled = builder;
    scaled.bias = scaled_bias(builder, scale);
    steel_solve_options options;
    steel_solve_options_default(&options);
    return cuda_test::solve(scaled, cuda_test::run(STEEL_BACKEND_CUDA, precision, options));
}

} // namespace

TEST_CASE("rows uploaded from device memory solve exactly like rows uploaded from the host") {
    const scenes::RowsBuilder builder = cuda_test::random_batch(21, 64);
    steel_solve_options options;
    steel_solve_options_default(&options);
    const test::Solved host = cuda_test::solve(
        builder, cuda_test::run(STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64, options));
    DeviceRows rows(builder);
    const steel_batch batch =
        cuda_test::create(builder.world_count(), STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
    REQUIRE_OK(steel_batch_upload_rows_device(batch, &rows.desc, nullptr));
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved device = test::read_all(batch);
    CHECK(device.impulses == host.impulses);
    CHECK(device.velocities == host.velocities);
    // A bad upload from the device is refused like a bad host upload, and changes nothing.
    steel_rows_desc bad = rows.desc;
    bad.world_count = builder.world_count() + 1;
    CHECK(steel_batch_upload_rows_device(batch, &bad, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    // A value_count past the caller's J and Y is refused before they are read.
    bad = rows.desc;
    bad.value_count = rows.desc.value_count + (uint64_t(1) << 40);
    CHECK(steel_batch_upload_rows_device(batch, &bad, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()).find("but the rows' blocks hold") !=
          std::string::npos);
    // Counts whose total passes 2^32 - 1 are refused before they size anything (here the
    // velocities alone would be 48 GB of staging).
    std::vector<uint32_t> huge_dofs(builder.world_count(), 0), no_rows(builder.world_count(), 0);
    huge_dofs[0] = huge_dofs[1] = 3000000000u;
    steel_rows_desc_default(&bad);
    bad.world_count = builder.world_count();
    bad.world_dof_counts = to_device(huge_dofs);
    bad.world_row_counts = to_device(no_rows);
    bad.unconstrained_velocity = to_device(std::vector<double>(1, 0.0)); // a pointer to stage from
    CHECK(steel_batch_upload_rows_device(batch, &bad, nullptr) == STEEL_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(steel_last_error_message()) ==
          "steel_batch_upload_rows_device: world 1: the batch's total DOF or row count passes "
          "2^32 - 1");
    REQUIRE_CUDA(cudaFree(const_cast<uint32_t*>(bad.world_dof_counts)));
    REQUIRE_CUDA(cudaFree(const_cast<uint32_t*>(bad.world_row_counts)));
    REQUIRE_CUDA(cudaFree(const_cast<double*>(bad.unconstrained_velocity)));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(test::read_all(batch).impulses == host.impulses);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("solve_async on a caller's stream, read into device memory, equals steel_batch_solve") {
    const scenes::RowsBuilder builder = cuda_test::random_batch(22, 512);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        const steel_batch batch = solved_batch(builder, precision);
        const test::Solved sync = test::read_all(batch);

        cudaStream_t stream = nullptr;
        REQUIRE_CUDA(cudaStreamCreate(&stream));
        double* impulses = nullptr;
        REQUIRE_CUDA(cudaMalloc(&impulses, sync.impulses.size() * sizeof(double)));
        REQUIRE_OK(steel_batch_solve_async(batch, stream));
        uint64_t count = 0;
        CHECK(steel_batch_read_impulses_device(batch, impulses, 0, &count, stream) ==
              STEEL_ERROR_BUFFER_TOO_SMALL);
        REQUIRE_OK(steel_batch_read_impulses_device(batch, impulses, count, &count, stream));
        REQUIRE_CUDA(cudaStreamSynchronize(stream));
        CHECK(to_host(impulses, count) == sync.impulses);
        CHECK(test::read_all(batch).impulses == sync.impulses); // the host readers settle first

        // The same solve captured in a graph and replayed, after new values from the device.
        steel_row_values_desc values;
        steel_row_values_desc_default(&values);
        double* device_bias = to_device(scaled_bias(builder, 0.5));
        values.bias = device_bias;
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        REQUIRE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        const steel_status update = steel_batch_update_values_device(batch, &values, stream);
        const steel_status solve = steel_batch_solve_async(batch, stream);
        const steel_status read =
            steel_batch_read_impulses_device(batch, impulses, count, &count, stream);
        REQUIRE_CUDA(cudaStreamEndCapture(stream, &graph));
        REQUIRE_OK(update);
        REQUIRE_OK(solve);
        REQUIRE_OK(read);
        REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        REQUIRE_CUDA(cudaGraphLaunch(exec, stream));
        REQUIRE_CUDA(cudaStreamSynchronize(stream));
        const std::vector<double> replayed = to_host(impulses, count);

        const test::Solved expected = scaled_bias_solve(builder, 0.5, precision);
        CHECK(replayed == expected.impulses);
        CHECK(test::read_all(batch).impulses == expected.impulses);

        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaFree(device_bias);
        cudaFree(impulses);
        cudaStreamDestroy(stream);
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}

TEST_CASE("a propagation solve replays from a CUDA graph, and waits for a new scene after a "
          "device values update") {
    scenes::SceneBuilder builder;
    builder.begin_world();
    scenes::add_legged_robot(builder);
    builder.begin_world();
    scenes::add_box_pile(builder, 5);
    const steel_scene_desc desc = builder.desc();
    const steel_batch batch = cuda_test::create(2, STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
    steel_solve_options options = cuda_test::options_with(20, STEEL_PATH_AUTO);
    options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
    options.solve_mode = STEEL_SOLVE_COLORED;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
    cudaStream_t stream = nullptr;
    REQUIRE_CUDA(cudaStreamCreate(&stream));
    // Building and mirroring the trees and colors cannot be captured: refused, with the way out,
    // and the capture ends cleanly.
    cudaGraph_t refused = nullptr;
    REQUIRE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const steel_status first_async = steel_batch_solve_async(batch, stream);
    const std::string first_async_message = steel_last_error_message();
    REQUIRE_CUDA(cudaStreamEndCapture(stream, &refused));
    CHECK(first_async == STEEL_ERROR_UNSUPPORTED);
    CHECK(first_async_message.find("call steel_batch_solve") != std::string::npos);
    cudaGraphDestroy(refused);
    REQUIRE_OK(steel_batch_solve(batch)); // builds and mirrors the trees and colors
    const test::Solved first = test::read_all(batch);
    CHECK(test::max_abs(first.impulses) > 0);

    const uint64_t rows = first.impulses.size();
    double* impulses = nullptr;
    REQUIRE_CUDA(cudaMalloc(&impulses, rows * sizeof(double)));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    uint64_t count = rows;
    REQUIRE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const steel_status solve = steel_batch_solve_async(batch, stream);
    const steel_status read =
        steel_batch_read_impulses_device(batch, impulses, rows, &count, stream);
    REQUIRE_CUDA(cudaStreamEndCapture(stream, &graph));
    REQUIRE_OK(solve);
    REQUIRE_OK(read);
    REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    // Other results on the device before the replay (a plain solve of 3 sweeps; the graph keeps
    // the 20 of its capture) and NaN in the output: only a replayed solve gives `first` back.
    options.iterations = 3;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(test::read_all(batch).impulses != first.impulses);
    REQUIRE_CUDA(cudaMemset(impulses, 0xff, rows * sizeof(double)));
    REQUIRE_CUDA(cudaGraphLaunch(exec, stream));
    REQUIRE_CUDA(cudaStreamSynchronize(stream));
    CHECK(to_host(impulses, rows) == first.impulses);
    options.iterations = 20;
    REQUIRE_OK(steel_batch_set_options(batch, &options));

    // New biases from the device: the trees and packs were built from the scene's values.
    double* device_bias = to_device(std::vector<double>(rows, 0.0));
    steel_row_values_desc values;
    steel_row_values_desc_default(&values);
    values.bias = device_bias;
    REQUIRE_OK(steel_batch_update_values_device(batch, &values, stream));
    REQUIRE_CUDA(cudaStreamSynchronize(stream));
    CHECK(steel_batch_solve(batch) == STEEL_ERROR_UNSUPPORTED);
    CHECK(std::string(steel_last_error_message()).find("upload the scene again") !=
          std::string::npos);
    REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(test::read_all(batch).impulses == first.impulses);

    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(device_bias);
    cudaFree(impulses);
    cudaStreamDestroy(stream);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("after graph replays on another stream, the host readers and a plain solve wait for "
          "each and see its results") {
    const scenes::RowsBuilder builder = cuda_test::random_batch(24, 256);
    for (int32_t precision : {STEEL_PRECISION_FLOAT64, STEEL_PRECISION_FLOAT32}) {
        const steel_batch batch = solved_batch(builder, precision);

        std::vector<double> bias(builder.bias.size());
        double* device_bias = to_device(bias);
        steel_row_values_desc values;
        steel_row_values_desc_default(&values);
        values.bias = device_bias;
        cudaStream_t capture = nullptr, other = nullptr;
        REQUIRE_CUDA(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
        REQUIRE_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        REQUIRE_CUDA(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
        const steel_status update = steel_batch_update_values_device(batch, &values, capture);
        const steel_status solve = steel_batch_solve_async(batch, capture);
        REQUIRE_CUDA(cudaStreamEndCapture(capture, &graph));
        REQUIRE_OK(update);
        REQUIRE_OK(solve);
        REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));

        // Replayed where the batch never saw a call, and read with no synchronization between:
        // each read must wait for its replay and copy what that replay wrote, not the last.
        for (double scale : {0.5, 0.25, 2.0}) {
            const test::Solved expected = scaled_bias_solve(builder, scale, precision);
            bias = scaled_bias(builder, scale);
            REQUIRE_CUDA(cudaMemcpyAsync(device_bias, bias.data(), bias.size() * sizeof(double),
                                         cudaMemcpyHostToDevice, other));
            REQUIRE_CUDA(cudaGraphLaunch(exec, other));
            const test::Solved read = test::read_all(batch);
            CHECK(read.impulses == expected.impulses);
            CHECK(read.velocities == expected.velocities);
        }
        // A plain solve waits for a replay in flight, then solves the rows it updated.
        const test::Solved halved = scaled_bias_solve(builder, 0.5, precision);
        bias = scaled_bias(builder, 0.5);
        REQUIRE_CUDA(cudaMemcpyAsync(device_bias, bias.data(), bias.size() * sizeof(double),
                                     cudaMemcpyHostToDevice, other));
        REQUIRE_CUDA(cudaGraphLaunch(exec, other));
        REQUIRE_OK(steel_batch_solve(batch));
        CHECK(test::read_all(batch).impulses == halved.impulses);

        REQUIRE_CUDA(cudaStreamSynchronize(other));
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaFree(device_bias);
        cudaStreamDestroy(capture);
        cudaStreamDestroy(other);
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}

TEST_CASE("work on a caller's stream is waited for: a delayed device read keeps its solve's "
          "results, and a destroyed stream is no trouble") {
    const scenes::RowsBuilder builder = cuda_test::random_batch(25, 128);
    const steel_batch batch = solved_batch(builder, STEEL_PRECISION_FLOAT64);
    const test::Solved first = test::read_all(batch);

    // The impulses' read waits behind 200 ms of host work on its stream, and the velocities' is
    // read on a second stream after it: the upload and solve that follow at once must wait for
    // both reads, not only the last one, before overwriting the results.
    cudaStream_t stream = nullptr, second_stream = nullptr;
    REQUIRE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE_CUDA(cudaStreamCreateWithFlags(&second_stream, cudaStreamNonBlocking));
    double *impulses = nullptr, *velocities = nullptr;
    REQUIRE_CUDA(cudaMalloc(&impulses, first.impulses.size() * sizeof(double)));
    REQUIRE_CUDA(cudaMalloc(&velocities, first.velocities.size() * sizeof(double)));
    REQUIRE_CUDA(cudaLaunchHostFunc(
        stream, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); },
        nullptr));
    uint64_t count = 0, velocity_count = 0;
    REQUIRE_OK(
        steel_batch_read_impulses_device(batch, impulses, first.impulses.size(), &count, stream));
    REQUIRE_OK(steel_batch_read_velocities_device(batch, velocities, first.velocities.size(),
                                                  &velocity_count, second_stream));
    scenes::RowsBuilder doubled = builder;
    doubled.bias = scaled_bias(builder, 2.0);
    const steel_rows_desc doubled_rows = doubled.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &doubled_rows));
    REQUIRE_OK(steel_batch_solve(batch));
    REQUIRE_CUDA(cudaStreamSynchronize(stream));
    REQUIRE_CUDA(cudaStreamSynchronize(second_stream));
    CHECK(to_host(impulses, count) == first.impulses);
    CHECK(to_host(velocities, velocity_count) == first.velocities);
    cudaStreamDestroy(second_stream);
    cudaFree(velocities);
    const test::Solved second = test::read_all(batch);
    CHECK(second.impulses == scaled_bias_solve(builder, 2.0, STEEL_PRECISION_FLOAT64).impulses);

    // An asynchronous solve whose stream is gone before the host reads its results.
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    REQUIRE_OK(steel_batch_solve_async(batch, stream));
    REQUIRE_CUDA(cudaStreamDestroy(stream));
    CHECK(test::read_all(batch).impulses == first.impulses);
    cudaFree(impulses);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a capture file records the rows a device values update left, so its replay solves "
          "the same") {
    const scenes::RowsBuilder builder = cuda_test::random_batch(26, 64);
    const steel_batch batch = solved_batch(builder, STEEL_PRECISION_FLOAT64);
    const std::string path = snaptest::temporary_path("cuda_capture.steel");
    REQUIRE_OK(steel_batch_set_capture(batch, path.c_str()));
    double* device_bias = to_device(scaled_bias(builder, 0.5));
    steel_row_values_desc values;
    steel_row_values_desc_default(&values);
    values.bias = device_bias;
    REQUIRE_OK(steel_batch_update_values_device(batch, &values, nullptr));
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved solved = test::read_all(batch);
    CHECK(solved.impulses == scaled_bias_solve(builder, 0.5, STEEL_PRECISION_FLOAT64).impulses);

    // One record: a little-endian byte count, then the snapshot of the batch as it solved.
    const std::vector<uint8_t> stream = snaptest::read_bytes(path);
    REQUIRE(stream.size() > 4);
    const uint32_t size = uint32_t(stream[0]) | uint32_t(stream[1]) << 8 |
                          uint32_t(stream[2]) << 16 | uint32_t(stream[3]) << 24;
    REQUIRE(stream.size() == 4 + uint64_t(size));
    steel_batch replay{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, stream.data() + 4, size, &replay));
    REQUIRE_OK(steel_batch_solve(replay));
    CHECK(test::read_all(replay).impulses == solved.impulses);
    REQUIRE_OK(steel_batch_destroy(replay));
    REQUIRE_OK(steel_batch_destroy(batch));
    cudaFree(device_bias);
    std::remove(path.c_str());
}

TEST_CASE("a CUDA scene batch's snapshot holds its scene, and loses it once a device values "
          "update changes the rows") {
    const scenes::SceneBuilder builder = cuda_test::robot_worlds(STEEL_FRICTION_MODEL_BOX, 6);
    const steel_scene_desc scene = builder.desc();
    steel_solve_options options = cuda_test::options_with(20, STEEL_PATH_AUTO);
    options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
    const steel_batch batch =
        cuda_test::create(scene.world_count, STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    REQUIRE_OK(steel_batch_solve(batch));
    const std::vector<uint8_t> bytes = snaptest::save_memory(batch);
    REQUIRE(steel::snapshot::decode(bytes.data(), bytes.size(), "test").has_scene);

    // Loaded, a CUDA scene batch again: the propagation response on the device, the same bits.
    steel_batch loaded{};
    REQUIRE_OK(steel_batch_load_memory(STEEL_ABI_VERSION, bytes.data(), bytes.size(), &loaded));
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    REQUIRE_OK(steel_batch_get_desc(loaded, &desc));
    CHECK(desc.backend == STEEL_BACKEND_CUDA);
    REQUIRE_OK(steel_batch_solve(loaded));
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(test::read_all(loaded).impulses == test::read_all(batch).impulses);
    REQUIRE_OK(steel_batch_destroy(loaded));

    // New biases on the device (which the propagation response refuses: its data came from the
    // scene): the rows no longer follow from the scene, and the snapshot says so by holding the
    // rows alone, even after the next solve.
    options.articulated_contact_response = STEEL_RESPONSE_IMMEDIATE;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    uint64_t rows = 0;
    REQUIRE_OK(steel_batch_read_impulses(batch, nullptr, 0, &rows));
    double* device_bias = to_device(std::vector<double>(rows, 0.01));
    steel_row_values_desc values;
    steel_row_values_desc_default(&values);
    values.bias = device_bias;
    REQUIRE_OK(steel_batch_update_values_device(batch, &values, nullptr));
    REQUIRE_OK(steel_batch_solve(batch));
    const std::vector<uint8_t> edited = snaptest::save_memory(batch);
    const steel::snapshot::Snapshot rows_only =
        steel::snapshot::decode(edited.data(), edited.size(), "test");
    CHECK_FALSE(rows_only.has_scene);
    CHECK(rows_only.rows.bias == std::vector<double>(rows, 0.01));
    // A scene upload makes the rows the scene's again.
    REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
    const std::vector<uint8_t> again = snaptest::save_memory(batch);
    CHECK(steel::snapshot::decode(again.data(), again.size(), "test").has_scene);
    REQUIRE_OK(steel_batch_destroy(batch));
    cudaFree(device_bias);
}

// Takes the device's free memory, largest pieces first (what is free need not come in one
// piece), down to 256 bytes or until only `leave` bytes are free, and gives it all back however
// the test ends.
struct DeviceMemoryHog {
    std::vector<void*> taken;
    ~DeviceMemoryHog() { release(); }
    static size_t free_now() {
        size_t free_bytes = 0, total_bytes = 0;
        REQUIRE_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
        return free_bytes;
    }
    void take_all(size_t leave = 0) {
        const size_t start = free_now();
        for (size_t piece = start > leave ? start - leave : 0;
             piece >= 256 && taken.size() < 100000; piece /= 2)
            for (void* p = nullptr;
                 free_now() >= leave + piece && cudaMalloc(&p, piece) == cudaSuccess; p = nullptr)
                taken.push_back(p);
        (void)cudaGetLastError();
    }
    void release() {
        for (void* p : taken)
            cudaFree(p);
        taken.clear();
    }
};

TEST_CASE("out of device memory, an upload and an options change are refused and change "
          "nothing, a captured graph's buffers included") {
    // Two worlds, a stack and a one-DOF world; the big upload gives the second world 2^20 DOFs
    // and 16 rows across all of them (J and Y 128 MiB each), more than is left on the device.
    scenes::RowsBuilder small;
    scenes::add_stack_world(small, scenes::StackSpec{});
    small.begin_world({0.0});
    scenes::Row one;
    one.blocks[0] = scenes::Block{0, {1.0}, {1.0}};
    one.bias = -1;
    one.kind = STEEL_ROW_CONTACT_NORMAL;
    small.add_row(one);
    scenes::RowsBuilder big;
    scenes::add_stack_world(big, scenes::StackSpec{});
    const uint32_t dofs = 1u << 20;
    big.begin_world(std::vector<double>(dofs, 0.0));
    scenes::Row wide;
    wide.blocks[0] =
        scenes::Block{0, std::vector<double>(dofs, 1e-3), std::vector<double>(dofs, 1e-3)};
    wide.bias = -1;
    for (int r = 0; r < 16; ++r)
        big.add_row(wide);

    const steel_batch batch = cuda_test::create(2, STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
    const steel_rows_desc small_rows = small.desc(), big_rows = big.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &small_rows));
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved before = test::read_all(batch);
    steel_solve_options options_before;
    options_before.struct_size = sizeof options_before;
    REQUIRE_OK(steel_batch_get_options(batch, &options_before));

    double* impulses = nullptr;
    REQUIRE_CUDA(cudaMalloc(&impulses, before.impulses.size() * sizeof(double)));
    // A graph captured now holds the batch's buffers: a refused upload must leave them all.
    cudaStream_t stream = nullptr;
    REQUIRE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    uint64_t count = 0;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    REQUIRE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const steel_status solve = steel_batch_solve_async(batch, stream);
    const steel_status read =
        steel_batch_read_impulses_device(batch, impulses, before.impulses.size(), &count, stream);
    REQUIRE_CUDA(cudaStreamEndCapture(stream, &graph));
    REQUIRE_OK(solve);
    REQUIRE_OK(read);
    REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    const auto release_graph = [&] {
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaStreamDestroy(stream);
    };

    // Take all the device's free memory but 64 MiB, less than the big upload's J and Y need.
    DeviceMemoryHog hog;
    hog.take_all(size_t(64) << 20);
    if (hog.taken.empty()) { // as in the tests below: a device whose memory can't be taken fails
        FAIL_CHECK("no device memory could be taken, so the refused upload was not tried");
        release_graph();
        cudaFree(impulses);
        REQUIRE_OK(steel_batch_destroy(batch));
        return;
    }
    CHECK(steel_batch_upload_rows(batch, &big_rows) == STEEL_ERROR_OUT_OF_MEMORY);
    const std::string upload_message = steel_last_error_message();
    CHECK(upload_message.find("steel_batch_upload_rows: ") == 0);
    CHECK(upload_message.find("the batch keeps its previous rows") != std::string::npos);
    steel_solve_options greedy = options_before;
    greedy.record_residual_history = 1;
    greedy.iterations = 100000000; // 1.6 GB of history
    CHECK(steel_batch_set_options(batch, &greedy) == STEEL_ERROR_OUT_OF_MEMORY);
    CHECK(std::string(steel_last_error_message()).find("the options are unchanged") !=
          std::string::npos);
    steel_solve_options options_after;
    options_after.struct_size = sizeof options_after;
    REQUIRE_OK(steel_batch_get_options(batch, &options_after));
    CHECK(options_after.iterations == options_before.iterations);
    CHECK(options_after.record_residual_history == options_before.record_residual_history);
    // The graph replays on the buffers it captured, none of them moved or freed, with the
    // memory still taken.
    // (On `stream`: the legacy stream's cudaMemset would not be ordered with a non-blocking one.)
    REQUIRE_CUDA(cudaMemsetAsync(impulses, 0, before.impulses.size() * sizeof(double), stream));
    REQUIRE_CUDA(cudaGraphLaunch(exec, stream));
    REQUIRE_CUDA(cudaStreamSynchronize(stream));
    CHECK(to_host(impulses, count) == before.impulses);
    // The last solve's results are still there, on the host and on the device, and the rows
    // too: a solve needs no new mirror (which would not fit).
    CHECK(test::read_all(batch).impulses == before.impulses);
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(test::read_all(batch).impulses == before.impulses);
    hog.release();
    REQUIRE_OK(
        steel_batch_read_impulses_device(batch, impulses, before.impulses.size(), &count, nullptr));
    REQUIRE_CUDA(cudaDeviceSynchronize());
    CHECK(to_host(impulses, count) == before.impulses);
    // With the memory back, the batch solves as before, and takes the big upload.
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(test::read_all(batch).impulses == before.impulses);
    REQUIRE_OK(steel_batch_upload_rows(batch, &big_rows));
    release_graph();
    cudaFree(impulses);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("out of device memory, the first propagation solve is refused, says where, and leaves "
          "the batch to solve as if it had never failed") {
    scenes::SceneBuilder builder;
    builder.begin_world();
    scenes::add_legged_robot(builder);
    builder.begin_world();
    scenes::add_box_pile(builder, 5);
    const steel_scene_desc desc = builder.desc();
    steel_solve_options options = cuda_test::options_with(20, STEEL_PATH_AUTO);
    const steel_batch batch = cuda_test::create(2, STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_upload_scene(batch, &desc));
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved before = test::read_all(batch);
    // The switch sizes nothing new; the first solve with it mirrors the trees and colors.
    options.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
    options.solve_mode = STEEL_SOLVE_COLORED;
    REQUIRE_OK(steel_batch_set_options(batch, &options));

    // Where the device read below writes; read once now, so that its kernel is loaded (CUDA
    // loads modules lazily, into device memory) before the memory is gone.
    double* impulses = nullptr;
    REQUIRE_CUDA(cudaMalloc(&impulses, before.impulses.size() * sizeof(double)));
    uint64_t count = 0;
    REQUIRE_OK(
        steel_batch_read_impulses_device(batch, impulses, before.impulses.size(), &count, nullptr));
    DeviceMemoryHog hog;
    hog.take_all();
    REQUIRE(!hog.taken.empty());
    for (const bool synchronous : {true, false}) {
        CAPTURE(synchronous);
        const steel_status status =
            synchronous ? steel_batch_solve(batch) : steel_batch_solve_async(batch, nullptr);
        const std::string message = steel_last_error_message();
        CHECK(status == STEEL_ERROR_OUT_OF_MEMORY);
        const std::string where = synchronous ? "steel_batch_solve" : "steel_batch_solve_async";
        CHECK(message.find(where + ": mirroring the propagation response's data to the device: "
                                   "cudaMalloc: CUDA error cudaErrorMemoryAllocation") == 0);
        CHECK(message.find("nothing was solved, the batch keeps its last results") !=
              std::string::npos);
        // The last results stand, on the host and on the device.
        const test::Solved kept = test::read_all(batch);
        CHECK(kept.impulses == before.impulses);
        CHECK(kept.velocities == before.velocities);
    }
    REQUIRE_CUDA(cudaMemsetAsync(impulses, 0, count * sizeof(double), nullptr));
    REQUIRE_OK(
        steel_batch_read_impulses_device(batch, impulses, before.impulses.size(), &count, nullptr));
    REQUIRE_CUDA(cudaDeviceSynchronize());
    CHECK(to_host(impulses, count) == before.impulses);
    hog.release();
    cudaFree(impulses);

    // With the memory back, the same batch solves exactly as a batch that never ran out.
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved after = test::read_all(batch);
    const steel_batch fresh = cuda_test::create(2, STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
    REQUIRE_OK(steel_batch_set_options(fresh, &options));
    REQUIRE_OK(steel_batch_upload_scene(fresh, &desc));
    REQUIRE_OK(steel_batch_solve(fresh));
    const test::Solved reference = test::read_all(fresh);
    CHECK(after.impulses == reference.impulses);
    CHECK(after.velocities == reference.velocities);
    CHECK(after.impulses != before.impulses); // the propagation response did run
    REQUIRE_OK(steel_batch_destroy(fresh));
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("pre-elimination's device room follows each world's bilateral rows: worlds of "
          "contacts alone need none") {
    // Eight worlds of 1,024 contact rows on 6 DOFs and no bilateral row, then loops, which have.
    // Room sized m x m for every world (S) would be 64 MiB for the contact worlds alone; 16 MiB
    // is left, and the loops need well under 1 MiB.
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    scenes::RowsBuilder builder;
    for (int w = 0; w < 8; ++w) {
        builder.begin_world(std::vector<double>(6, -0.5));
        for (int r = 0; r < 1024; ++r) {
            scenes::Row contact;
            contact.kind = STEEL_ROW_CONTACT_NORMAL;
            std::vector<double> j(6);
            for (double& value : j)
                value = unit(rng);
            contact.blocks[0] = scenes::Block{0, j, j}; // unit masses: Y = J
            contact.bias = 0.1 * unit(rng);
            builder.add_row(contact);
        }
    }
    for (uint32_t links : {3u, 5u})
        scenes::add_loop_world(builder, rng, links);

    // Five sweeps from the first solve (which also loads the kernels): the emulated warps take
    // a while over 8,192 rows.
    steel_solve_options options = cuda_test::options_with(5, STEEL_PATH_AUTO);
    const steel_batch batch = cuda_test::solved_batch(
        builder, cuda_test::run(STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64, options));
    DeviceMemoryHog hog;
    hog.take_all(size_t(16) << 20);
    REQUIRE(!hog.taken.empty());
    options.enable_bilateral_preelimination = 1;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    REQUIRE_OK(steel_batch_solve(batch));
    const test::Solved gpu = test::read_all(batch);
    hog.release();
    REQUIRE_OK(steel_batch_destroy(batch));

    const test::Solved cpu = cuda_test::solve(
        builder, cuda_test::run(STEEL_BACKEND_CPU, STEEL_PRECISION_FLOAT64, options));
    cuda_test::check_preeliminated(gpu, cpu, builder, 5, STEEL_PRECISION_FLOAT64,
                                   builder.world_count() - 2);
}

TEST_CASE("out of device memory, loading a CUDA snapshot is refused, names the call, and makes "
          "no batch") {
    const scenes::RowsBuilder builder = cuda_test::random_batch(25, 32);
    const steel_batch batch = solved_batch(builder, STEEL_PRECISION_FLOAT64);
    const test::Solved solved = test::read_all(batch);
    const std::vector<uint8_t> snapshot = snaptest::save_memory(batch);
    REQUIRE_OK(steel_batch_destroy(batch));

    DeviceMemoryHog hog;
    hog.take_all();
    REQUIRE(!hog.taken.empty());
    steel_batch loaded{};
    CHECK(steel_batch_load_memory(STEEL_ABI_VERSION, snapshot.data(), snapshot.size(), &loaded) ==
          STEEL_ERROR_OUT_OF_MEMORY);
    const std::string message = steel_last_error_message();
    // On a GPU the stream the batch makes may be what does not fit; here it is the rows' mirror.
    CHECK(message.find("steel_batch_load_memory: ") == 0);
    CHECK(message.find("cudaErrorMemoryAllocation") != std::string::npos);
#if defined(STEEL_EMULATED_CUDA)
    CHECK(message.find("mirroring the snapshot's rows to the device: ") != std::string::npos);
    CHECK(message.find("nothing was loaded") != std::string::npos);
#endif
    CHECK(loaded.id == 0);
    hog.release();

    // With the memory back the same bytes load, and the batch solves as the saved one did.
    REQUIRE_OK(
        steel_batch_load_memory(STEEL_ABI_VERSION, snapshot.data(), snapshot.size(), &loaded));
    CHECK(test::read_all(loaded).impulses == solved.impulses);
    REQUIRE_OK(steel_batch_solve(loaded));
    CHECK(test::read_all(loaded).impulses == solved.impulses);
    REQUIRE_OK(steel_batch_destroy(loaded));
}

TEST_CASE("a batch on another GPU leaves the caller's current device as it was") {
    int devices = 0;
    REQUIRE_CUDA(cudaGetDeviceCount(&devices));
    if (devices < 2) {
        MESSAGE("not run: it needs two GPUs, this machine has " << devices);
        return;
    }
    const scenes::RowsBuilder builder = cuda_test::random_batch(23, 32);
    steel_solve_options options;
    steel_solve_options_default(&options);
    const test::Solved expected = cuda_test::solve(
        builder, cuda_test::run(STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64, options));
    const auto current = [] {
        int device = -1;
        REQUIRE_CUDA(cudaGetDevice(&device));
        return device;
    };
    const size_t device0_free_before = DeviceMemoryHog::free_now(); // device 0 is current
    REQUIRE_CUDA(cudaSetDevice(1));
    const steel_batch batch =
        cuda_test::create(builder.world_count(), STEEL_BACKEND_CUDA, STEEL_PRECISION_FLOAT64);
    REQUIRE_CUDA(cudaSetDevice(0));
    const steel_rows_desc rows = builder.desc();
    REQUIRE_OK(steel_batch_upload_rows(batch, &rows));
    CHECK(current() == 0);
    REQUIRE_OK(steel_batch_solve(batch));
    CHECK(current() == 0);
    const test::Solved solved = test::read_all(batch);
    CHECK(current() == 0);
    CHECK(solved.impulses == expected.impulses); // the same kernels on the same model of GPU
    CHECK(solved.velocities == expected.velocities);
    // Its memory is on device 1: a device read into device 0 would be a peer copy, so read back
    // into device 1's memory while device 0 stays current.
    REQUIRE_CUDA(cudaSetDevice(1));
    double* on_device1 = nullptr;
    REQUIRE_CUDA(cudaMalloc(&on_device1, solved.impulses.size() * sizeof(double)));
    REQUIRE_CUDA(cudaSetDevice(0));
    uint64_t count = 0;
    REQUIRE_OK(steel_batch_read_impulses_device(batch, on_device1, solved.impulses.size(), &count,
                                                nullptr));
    CHECK(current() == 0);
    REQUIRE_CUDA(cudaSetDevice(1));
    REQUIRE_CUDA(cudaDeviceSynchronize());
    CHECK(to_host(on_device1, count) == expected.impulses);
    REQUIRE_CUDA(cudaFree(on_device1));

    // The other calls that touch the device, from device 0: options that grow the batch's
    // buffers, a values update and a solve on a stream of device 1, the host readers after them,
    // a snapshot.
    // A blocking stream: ordered after to_device's copy on device 1's legacy stream.
    cudaStream_t stream1 = nullptr;
    REQUIRE_CUDA(cudaStreamCreate(&stream1));
    double* bias1 = to_device(scaled_bias(builder, 2.0));
    REQUIRE_CUDA(cudaSetDevice(0));
    steel_solve_options history = options;
    history.record_residual_history = 1;
    REQUIRE_OK(steel_batch_set_options(batch, &history));
    CHECK(current() == 0);
    steel_row_values_desc values;
    steel_row_values_desc_default(&values);
    values.bias = bias1;
    REQUIRE_OK(steel_batch_update_values_device(batch, &values, stream1));
    CHECK(current() == 0);
    REQUIRE_OK(steel_batch_solve_async(batch, stream1));
    CHECK(current() == 0);
    const test::Solved scaled = test::read_all(batch); // waits for stream1
    CHECK(current() == 0);
    CHECK(scaled.impulses ==
          scaled_bias_solve(builder, 2.0, STEEL_PRECISION_FLOAT64).impulses); // on device 0
    uint32_t sweeps = 0;
    REQUIRE_OK(steel_batch_read_residual_history(batch, 0, nullptr, 0, &sweeps));
    CHECK(sweeps > 0);
    uint64_t snapshot_size = 0;
    REQUIRE_OK(steel_batch_save_memory(batch, nullptr, 0, &snapshot_size));
    CHECK(snapshot_size > 0);
    CHECK(current() == 0);
#if defined(STEEL_EMULATED_CUDA)
    // Exact accounting there: none of it allocated on device 0. (On GPUs the runtime's own
    // allocations may move the number.)
    CHECK(DeviceMemoryHog::free_now() == device0_free_before);
#else
    (void)device0_free_before;
#endif
    REQUIRE_CUDA(cudaSetDevice(1));
    REQUIRE_CUDA(cudaFree(bias1));
    REQUIRE_CUDA(cudaStreamDestroy(stream1));
    REQUIRE_CUDA(cudaSetDevice(0));
    REQUIRE_OK(steel_batch_destroy(batch));
    CHECK(current() == 0);
}
