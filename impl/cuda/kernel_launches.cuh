// The backend's sequences of kernel launches: a solve (classification, the general sweep, the
// dense path; or the propagation kernel) and a values update (J.Y, cone cross terms). Their
// sizes, shared memory and parameters are worked out here once, for both places that launch them:
// device_batch.cu (with
// <<<>>>) and the host emulation in tests/simt/, which runs the same kernels with the same
// geometry on the CPU so that the tests can check them without a GPU. Each takes
// launch(kernel, blocks, threads, shared_bytes, arguments...).
#pragma once

#include "classify_kernel.cuh"
#include "dense_kernel.cuh"
#include "general_kernel.cuh"
#include "preelimination_kernel.cuh"
#include "propagation_kernel.cuh"
#include "values_kernels.cuh"

#include <algorithm>
#include <cstddef>

namespace steel::cuda {

constexpr uint32_t kWarpsPerBlock = 4;
// The dense kernel holds A in shared memory: (32^2 + 64) doubles is 8.7 KB a warp, 35 KB a
// block of 4 warps, inside the 48 KB every device gives without opting in.
constexpr uint32_t kDeviceDenseMaxRows = 32;
constexpr size_t kDefaultSharedBytes = 48 * 1024;

inline uint32_t blocks_for(uint64_t items, uint32_t per_block) {
    return uint32_t((items + per_block - 1) / per_block);
}

// Blocks of kGridStrideThreads for a grid-stride loop over `items` (convert_kernel): capped
// before narrowing, so no count is too big for the grid.
constexpr uint32_t kGridStrideThreads = 256;
inline uint32_t grid_stride_blocks(uint64_t items) {
    return uint32_t(
        std::min<uint64_t>((items + kGridStrideThreads - 1) / kGridStrideThreads, 4096));
}

// Where a solve writes: buffers of the sizes size_solve_buffers (device_batch.cu) gives them.
template <class Real> struct SolveOutputs {
    Real* impulse;            // [total_rows]
    Real* velocity;           // [total_dofs]
    Real* momentum_scratch;   // [2 total_rows + total_dofs]
    int32_t* world_path;      // [world_count]
    steel_world_stats* stats; // [world_count]
    double* history;          // [world_count * iterations] when the history is recorded
};

// A warp-per-world launch's dynamic shared bytes: room for each warp's v when all of a block's
// fit the default 48 KB, else 0 (v stays in global memory).
template <class Real> size_t velocity_shared_bytes(const RowsShape& shape) {
    const size_t velocity_bytes = size_t(kWarpsPerBlock) * shape.max_dofs * sizeof(Real);
    return velocity_bytes <= kDefaultSharedBytes ? velocity_bytes : 0;
}

// Tells the kernels where v lives (solve.velocity_in_shared); returns velocity_shared_bytes.
template <class Real> size_t place_velocity(DeviceSolve<Real>& solve, const RowsShape& shape) {
    const size_t velocity_bytes = velocity_shared_bytes<Real>(shape);
    solve.velocity_in_shared = velocity_bytes > 0 ? 1 : 0;
    solve.shared_per_warp = solve.velocity_in_shared ? shape.max_dofs : 0;
    return velocity_bytes;
}

template <class Real>
DeviceSolve<Real> solve_setup(const steel_solve_options& options, const RowsShape& shape,
                              const SolveOutputs<Real>& out) {
    DeviceSolve<Real> solve{};
    solve.params = SolveParams<Real>{Real(options.cfm), Real(options.contact_regularization)};
    solve.settings = SweepSettings{options.iterations, options.tolerance};
    solve.requested_path = options.path;
    solve.warm_start = options.warm_start;
    solve.momentum = options.nesterov_momentum;
    solve.dense_max_rows = std::min(kDeviceDenseMaxRows, shape.max_rows);
    solve.history_stride = options.record_residual_history ? options.iterations : 0;
    solve.history = out.history;
    solve.impulse = out.impulse;
    solve.velocity = out.velocity;
    solve.momentum_scratch = out.momentum_scratch;
    solve.world_path = out.world_path;
    solve.stats = out.stats;
    return solve;
}

// Which build of a twice-built kernel a solve launches (general_sweep_kernel and
// propagation_kernel): as it is, or under __launch_bounds__(128, 4). Both give the same bits;
// an H200 timed both (docs/cuda.md, "Measured on an H200").
enum class KernelBuild { plain, bounded };
static_assert(kWarpsPerBlock * kWarpSize == 128, "the bounded kernels' launch bounds");

// The solve's launches, in order on one stream: classification, the general sweep, the dense
// path, and with enable_bilateral_preelimination the pre-elimination kernel, which needs
// `preelimination` (room laid out by preelimination_buffers.hpp). Returns the residual history's
// stride (0 = none recorded).
template <class Real, class Launch>
uint32_t launch_solve_kernels(const RowsView<Real>& view, const RowsShape& shape,
                              const steel_solve_options& options, const SolveOutputs<Real>& out,
                              const PreeliminationBuffers<Real>* preelimination, Launch&& launch,
                              KernelBuild general = KernelBuild::plain) {
    DeviceSolve<Real> solve = solve_setup(options, shape, out);
    solve.preeliminate = options.enable_bilateral_preelimination && preelimination ? 1 : 0;
    const uint32_t threads = kWarpsPerBlock * kWarpSize;
    const uint32_t blocks = blocks_for(shape.world_count, kWarpsPerBlock);

    launch(classify_worlds_kernel<Real>, blocks_for(shape.world_count, 128), 128u, size_t(0), view,
           solve);

    // General sweep: v in shared memory when every warp's fits the default 48 KB.
    const size_t velocity_bytes = place_velocity(solve, shape);
    if (general == KernelBuild::bounded)
        launch(general_sweep_kernel_bounded<Real>, blocks, threads, velocity_bytes, view, solve);
    else
        launch(general_sweep_kernel<Real>, blocks, threads, velocity_bytes, view, solve);

    // Dense path: A, rhs and lambda of up to dense_max_rows rows per warp.
    const uint32_t dense_rows = solve.dense_max_rows;
    solve.shared_per_warp = dense_rows * dense_rows + 2 * dense_rows;
    const size_t dense_bytes = size_t(kWarpsPerBlock) * solve.shared_per_warp * sizeof(Real);
    if (dense_rows > 0) launch(dense_path_kernel<Real>, blocks, threads, dense_bytes, view, solve);

    // Pre-elimination: its derived worlds may take the dense path, so the same shared memory.
    if (solve.preeliminate && dense_rows > 0)
        launch(preelimination_kernel<Real>, blocks, threads, dense_bytes, view, *preelimination,
               solve);
    return solve.history_stride;
}

// Which kernel runs the propagation response's serial sweeps (propagation_kernel.cuh). Both give
// the CPU's bits. On an H200 a warp per world is faster while the batch fits in one wave of the
// warp kernel, a thread per world beyond (docs/cuda.md, "Measured on an H200").
enum class SerialLayout { thread_per_world, warp_per_world };

// Which build of each twice-built kernel a solve launches (device_batch.cu: the environment's
// choice when the batch was made, else the measured default).
struct KernelChoice {
    SerialLayout serial_layout = SerialLayout::thread_per_world;
    KernelBuild general = KernelBuild::plain;
    KernelBuild propagation = KernelBuild::plain; // the warp-per-world propagation kernel
};

// Threads per block of propagation_thread_kernel: one warp, so that a batch of a thousand worlds
// still spreads over 32 multiprocessors.
constexpr uint32_t kThreadKernelBlock = 32;

// A solve under the propagation response, serial or colored (plan.world_color_offset null:
// serial): classification (for the paths the batch reports, as on the CPU), then the
// propagation kernel of the given choice.
template <class Real, class Launch>
uint32_t launch_propagation_kernels(const RowsView<Real>& view,
                                    const propagation::PropagationView<Real>& trees,
                                    const WalkScratchView<Real>& scratch,
                                    const ColoredView<Real>& plan, const RowsShape& shape,
                                    const steel_solve_options& options,
                                    const SolveOutputs<Real>& out, const KernelChoice& kernels,
                                    Launch&& launch) {
    DeviceSolve<Real> solve = solve_setup(options, shape, out);
    launch(classify_worlds_kernel<Real>, blocks_for(shape.world_count, 128), 128u, size_t(0), view,
           solve);
    if (plan.world_color_offset == nullptr &&
        kernels.serial_layout == SerialLayout::thread_per_world) {
        launch(propagation_thread_kernel<Real>, blocks_for(shape.world_count, kThreadKernelBlock),
               kThreadKernelBlock, size_t(0), view, trees, scratch, solve);
        return solve.history_stride;
    }
    // v in shared memory when every warp's fits the default 48 KB, as in the general sweep.
    const uint32_t blocks = blocks_for(shape.world_count, kWarpsPerBlock),
                   threads = kWarpsPerBlock * kWarpSize;
    const size_t velocity_bytes = place_velocity(solve, shape);
    if (kernels.propagation == KernelBuild::bounded)
        launch(propagation_kernel_bounded<Real>, blocks, threads, velocity_bytes, view, trees,
               scratch, plan, solve);
    else
        launch(propagation_kernel<Real>, blocks, threads, velocity_bytes, view, trees, scratch,
               plan, solve);
    return solve.history_stride;
}

// What steel_batch_update_values_device recomputes after new J or Y values.
template <class Real, class Launch>
void launch_values_kernels(const RowsView<Real>& view, uint32_t total_rows, Launch&& launch) {
    if (total_rows == 0) return;
    launch(row_jy_kernel<Real>, blocks_for(total_rows, 128), 128u, size_t(0), view, total_rows);
    launch(cone_cross_kernel<Real>, blocks_for(view.world_count, 128), 128u, size_t(0), view);
}

} // namespace steel::cuda
