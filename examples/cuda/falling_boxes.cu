// falling_boxes.cu: a simulation whose state never leaves the GPU, stepped by one CUDA graph.
//
// 16,384 worlds, each a box of its own mass dropped from its own height onto the ground: one
// DOF (the vertical velocity v), one contact row with J = 1, Y = 1/m and a speculative bias
// b = y/dt, so the contact lets the box fall exactly the gap that is left (J v + b >= 0). The
// positions y and velocities v live in the program's own device arrays. One step is
//
//   prepare<<<>>>                      v-hat = v - g dt, b = y / dt        (the program's kernel)
//   steel_batch_update_values_device   v-hat and b into the batch          (Steel, on the device)
//   steel_batch_solve_async            the contact impulses
//   steel_batch_read_velocities_device v = v-hat + Y lambda, into the program's v
//   steel_batch_read_impulses_device   lambda, into the program's array
//   integrate<<<>>>                    y += v dt, total impulse += lambda  (the program's kernel)
//
// run once as enqueued, then captured in a CUDA graph and replayed for every later step:
// nothing crosses to the host. At the
// end the program checks closed forms: the semi-implicit Euler fall y_K = h - g dt^2 K(K+1)/2
// until the ground stops it (y = 0 after), and momentum: the ground's total impulse on each box
// is m (v_K - v_0 + K g dt).
//
// libsteel carries its own (static, hidden) CUDA runtime; this program links another. Device
// pointers and streams pass between them as they would between any two CUDA libraries.
//
//   nvcc -std=c++17 falling_boxes.cu $(pkg-config --cflags --libs steel) -o falling_boxes
//
// Built with the CUDA backend; runs as a test (ctest: example_cuda_falling_boxes, label gpu),
// reported as skipped (exit 77) where no CUDA device is present (STEEL_ERROR_NO_DEVICE); any
// other failure to create the batch is a failure (exit 1).
#include <steel/steel.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr uint32_t kBoxes = 16384;
constexpr uint32_t kSteps = 120; // two seconds: the lower boxes land, the higher ones still fall
constexpr double kGravity = 9.81, kStep = 1.0 / 60.0;

void require_cuda(cudaError_t error, const char* what) {
    if (error == cudaSuccess) return;
    std::fprintf(stderr, "falling_boxes: %s: %s\n", what, cudaGetErrorString(error));
    std::exit(1);
}

void require_steel(steel_status status, const char* what) {
    if (status == STEEL_OK) return;
    std::fprintf(stderr, "falling_boxes: %s: %s (%d): %s\n", what, steel_status_string(status),
                 int(status), steel_last_error_message());
    std::exit(1);
}

template <class T> T* device_copy(const std::vector<T>& host) {
    T* device = nullptr;
    require_cuda(cudaMalloc(&device, host.size() * sizeof(T)), "cudaMalloc");
    require_cuda(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
                 "cudaMemcpy");
    return device;
}

template <class T> std::vector<T> host_copy(const T* device, size_t count) {
    std::vector<T> host(count);
    require_cuda(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost),
                 "cudaMemcpy");
    return host;
}

// The program's own arrays, all on the device.
struct Boxes {
    double* height;        // y
    double* velocity;      // v, written by Steel each step
    double* free_velocity; // v-hat, read by Steel
    double* bias;          // b = y / dt, read by Steel
    double* impulse;       // the last step's lambda, written by Steel
    double* total_impulse; // summed over the steps
};

__global__ void prepare(Boxes boxes, uint32_t count) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    boxes.free_velocity[i] = boxes.velocity[i] - kGravity * kStep;
    boxes.bias[i] = boxes.height[i] / kStep;
}

__global__ void integrate(Boxes boxes, uint32_t count) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    boxes.height[i] += boxes.velocity[i] * kStep;
    boxes.total_impulse[i] += boxes.impulse[i];
}

// One step on `stream`: the program's kernels and Steel's calls, all asynchronous.
void enqueue_step(steel_batch batch, const Boxes& boxes, const steel_row_values_desc& values,
                  cudaStream_t stream) {
    const uint32_t threads = 256, blocks = (kBoxes + threads - 1) / threads;
    prepare<<<blocks, threads, 0, stream>>>(boxes, kBoxes);
    require_cuda(cudaGetLastError(), "prepare<<<>>>");
    require_steel(steel_batch_update_values_device(batch, &values, stream), "update values");
    require_steel(steel_batch_solve_async(batch, stream), "solve");
    require_steel(
        steel_batch_read_velocities_device(batch, boxes.velocity, kBoxes, nullptr, stream),
        "read velocities");
    require_steel(steel_batch_read_impulses_device(batch, boxes.impulse, kBoxes, nullptr, stream),
                  "read impulses");
    integrate<<<blocks, threads, 0, stream>>>(boxes, kBoxes);
    require_cuda(cudaGetLastError(), "integrate<<<>>>");
}

double mass_of(uint32_t i) {
    return 0.5 + double(i % 7);
}
double drop_height_of(uint32_t i) {
    return 1.0 + 29.0 * double(i) / double(kBoxes - 1);
}

// One row per world with all of its arrays on the device, uploaded once.
void upload_boxes(steel_batch batch, std::vector<void*>& owned) {
    std::vector<uint32_t> ones(kBoxes, 1), block_offset(2 * kBoxes, 0), block_length(2 * kBoxes, 0);
    std::vector<double> jacobian(kBoxes, 1.0), response(kBoxes), zeros(kBoxes, 0.0);
    std::vector<int32_t> kind(kBoxes, STEEL_ROW_CONTACT_NORMAL);
    for (uint32_t i = 0; i < kBoxes; ++i) {
        block_length[2 * i] = 1; // one block: the world's DOF 0
        response[i] = 1.0 / mass_of(i);
    }
    steel_rows_desc rows;
    steel_rows_desc_default(&rows);
    rows.world_count = kBoxes;
    rows.value_count = kBoxes;
    const auto keep = [&owned](auto* device) {
        owned.push_back(device);
        return device;
    };
    rows.world_dof_counts = keep(device_copy(ones));
    rows.world_row_counts = keep(device_copy(ones));
    rows.unconstrained_velocity = keep(device_copy(zeros)); // replaced every step
    rows.block_offset = keep(device_copy(block_offset));
    rows.block_length = keep(device_copy(block_length));
    rows.jacobian = keep(device_copy(jacobian));
    rows.response = keep(device_copy(response));
    rows.bias = keep(device_copy(zeros)); // replaced every step
    rows.kind = keep(device_copy(kind));
    // Validated like a host upload (the arrays are read back once), then mirrored.
    require_steel(steel_batch_upload_rows_device(batch, &rows, nullptr), "upload");
}

// Every box against the closed forms; returns the number that disagree.
int check(const Boxes& boxes) {
    const std::vector<double> y = host_copy(boxes.height, kBoxes);
    const std::vector<double> v = host_copy(boxes.velocity, kBoxes);
    const std::vector<double> total = host_copy(boxes.total_impulse, kBoxes);
    const double fallen = kGravity * kStep * kStep * kSteps * (kSteps + 1) / 2.0;
    int wrong = 0;
    uint32_t landed = 0;
    double worst_height = 0, worst_momentum = 0;
    for (uint32_t i = 0; i < kBoxes; ++i) {
        const double expected_y = std::max(0.0, drop_height_of(i) - fallen);
        const double momentum = mass_of(i) * (v[i] + kSteps * kGravity * kStep);
        const double height_error = std::fabs(y[i] - expected_y);
        const double momentum_error =
            std::fabs(total[i] - momentum) / (mass_of(i) * kGravity * kStep);
        worst_height = std::max(worst_height, height_error);
        worst_momentum = std::max(worst_momentum, momentum_error);
        landed += expected_y == 0.0;
        if (!(height_error <= 1e-9) || !(momentum_error <= 1e-9)) {
            if (++wrong <= 5)
                std::fprintf(
                    stderr,
                    "box %u: y %.12g (expected %.12g), total impulse %.12g (expected %.12g)\n", i,
                    y[i], expected_y, total[i], momentum);
        }
    }
    std::printf("%u of %u boxes landed; worst height error %.3g m, worst momentum error %.3g "
                "steps' weight\n",
                landed, kBoxes, worst_height, worst_momentum);
    return wrong;
}

} // namespace

int main() {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.backend = STEEL_BACKEND_CUDA;
    desc.world_count = kBoxes;
    steel_batch batch = {0};
    const steel_status created = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
    // Only a machine without a (usable) device skips; a device that was seen but cannot make a
    // batch (a context in an error state, say: STEEL_ERROR_INTERNAL) is a failure.
    if (created == STEEL_ERROR_NO_DEVICE) {
        std::printf("SKIP: %s\n", steel_last_error_message());
        return 77;
    }
    require_steel(created, "steel_batch_create");

    std::vector<void*> owned;
    upload_boxes(batch, owned);
    std::vector<double> heights(kBoxes), zeros(kBoxes, 0.0);
    for (uint32_t i = 0; i < kBoxes; ++i)
        heights[i] = drop_height_of(i);
    const Boxes boxes{device_copy(heights), device_copy(zeros), device_copy(zeros),
                      device_copy(zeros),   device_copy(zeros), device_copy(zeros)};

    steel_row_values_desc values;
    steel_row_values_desc_default(&values);
    values.unconstrained_velocity = boxes.free_velocity;
    values.bias = boxes.bias; // J, Y and the warm start keep their uploaded values

    cudaStream_t stream = nullptr;
    require_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t step = nullptr;
    // The first step runs as it is enqueued, which also loads every kernel: drivers older than
    // CUDA 12.3 cannot load one while a stream is being captured.
    enqueue_step(batch, boxes, values, stream);
    require_cuda(cudaStreamSynchronize(stream), "first step");
    require_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
    enqueue_step(batch, boxes, values, stream);
    require_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
    require_cuda(cudaGraphInstantiate(&step, graph, 0), "cudaGraphInstantiate");

    const auto start = std::chrono::steady_clock::now();
    for (uint32_t k = 1; k < kSteps; ++k)
        require_cuda(cudaGraphLaunch(step, stream), "cudaGraphLaunch");
    require_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%u steps of %u worlds replayed in %.3f ms (%.1f us a step)\n", kSteps - 1, kBoxes,
                seconds * 1e3, seconds * 1e6 / (kSteps - 1));

    const int wrong = check(boxes);
    cudaGraphExecDestroy(step);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    for (double* array : {boxes.height, boxes.velocity, boxes.free_velocity, boxes.bias,
                          boxes.impulse, boxes.total_impulse})
        cudaFree(array);
    for (void* array : owned)
        cudaFree(array);
    steel_batch_destroy(batch);
    if (wrong)
        std::fprintf(stderr, "falling_boxes: %d boxes disagree with the closed forms\n", wrong);
    return wrong ? 1 : 0;
}
