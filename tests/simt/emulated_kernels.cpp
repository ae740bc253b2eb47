// The one translation unit that compiles Steel's CUDA kernels with g++ (emulated_kernels.hpp).
#include "host_simt.hpp" // first: CUDA's keywords and warp built-ins for the kernel headers

#include "cuda/kernel_launches.cuh"
#include "emulated_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace test {

using namespace steel;
using namespace steel::cuda;

namespace {

template <class T> std::vector<T> garbage(size_t count) {
    std::vector<T> values(count);
    if (count) std::memset(static_cast<void*>(values.data()), 0xff, count * sizeof(T));
    return values;
}

// A std::vector whose resize leaves 0xff bytes, as uninitialized device memory might hold.
template <class T> struct GarbageArray : std::vector<T> {
    void resize(size_t count) {
        std::vector<T>::resize(count);
        if (count) std::memset(static_cast<void*>(this->data()), 0xff, count * sizeof(T));
    }
};

// launch(kernel, blocks, threads, shared_bytes, arguments...) for kernel_launches.cuh, on the host.
struct HostLaunch {
    template <class Kernel, class... Args>
    void operator()(Kernel kernel, uint32_t blocks, uint32_t threads, size_t shared_bytes,
                    const Args&... args) const {
        simt::launch({blocks, 1, 1}, {threads, 1, 1}, shared_bytes, [&] { kernel(args...); });
    }
};

// Outputs as uninitialized device memory would hold them, and the shape of the rows.
template <class Real> struct HostOutputs {
    EmulatedSolve<Real> result;
    std::vector<Real> momentum;
    RowsShape shape;
    SolveOutputs<Real> out{};

    HostOutputs(const RowSet<Real>& rows, const steel_solve_options& options) {
        const uint32_t worlds = rows.world_count;
        shape = rows_shape(rows);
        result.impulse = garbage<Real>(rows.total_rows());
        result.velocity = garbage<Real>(rows.total_dofs());
        momentum = garbage<Real>(2 * size_t(rows.total_rows()) + rows.total_dofs());
        result.world_path = garbage<int32_t>(worlds);
        result.stats = garbage<steel_world_stats>(worlds);
        result.history = garbage<double>(
            options.record_residual_history ? size_t(worlds) * options.iterations : 0);
        out = SolveOutputs<Real>{result.impulse.data(), result.velocity.data(),
                                 momentum.data(),       result.world_path.data(),
                                 result.stats.data(),   result.history.data()};
        (void)simt::take_problems();
    }
};

// The build alone, for emulate_preelimination_build: a world's warp leaves at once (uniformly)
// if the world has no bilateral row.
template <class Real>
__global__ void preelimination_build_kernel(RowsView<Real> set, PreeliminationBuffers<Real> buffers,
                                            Real cfm, int32_t* built) {
    const uint32_t lane = threadIdx.x % kWarpSize;
    const uint32_t world = blockIdx.x * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
    if (world >= set.world_count) return;
    const WorldRows<Real> rows = device_world_rows(set, world);
    if (bilateral_row_count(rows) == 0) return;
    const bool ok =
        warp_build_preeliminated_world(rows, cfm, world_space(buffers, set, world), lane);
    if (lane == 0) built[world] = ok ? 1 : 0;
}

} // namespace

template <class Real>
EmulatedSolve<Real> emulate_solve(RowSet<Real> rows, const steel_solve_options& options) {
    HostOutputs<Real> host(rows, options);
    // Pre-elimination's room, laid out as device_batch.cu lays it out, uninitialized.
    const PreeliminationLayout layout = preelimination_layout(rows);
    PreeliminationArrays<Real, GarbageArray> spaces;
    spaces.resize(layout);
    const PreeliminationBuffers<Real> buffers =
        spaces.view(layout.world_value_base.data(), layout.world_schur_base.data());
    if (rows.world_count > 0)
        host.result.history_stride = launch_solve_kernels(
            rows_view_of<Real>(rows, rows.world_count), host.shape, options, host.out,
            options.enable_bilateral_preelimination ? &buffers : nullptr, HostLaunch{});
    host.result.problems = simt::take_problems();
    return std::move(host.result);
}

template <class Real>
EmulatedSolve<Real>
emulate_propagation_solve(RowSet<Real> rows, const propagation::PropagationSet<Real>& set,
                          const colored::ColoredPlan<Real>* plan,
                          const steel_solve_options& options, bool serial_thread_per_world) {
    HostOutputs<Real> host(rows, options);
    // The walks' scratch as DevicePropagation sizes it, uninitialized.
    const uint32_t path_stride = std::max(set.max_depth, 1u);
    std::vector<Real> bias = garbage<Real>(6 * set.parent.size()),
                      body_change = garbage<Real>(6 * set.parent.size()),
                      joint_impulse = garbage<Real>(rows.total_dofs());
    std::vector<propagation::TreeCache<Real>> parked =
        garbage<propagation::TreeCache<Real>>(set.parent.size());
    std::vector<int32_t> path =
        garbage<int32_t>(size_t(rows.world_count) * kWarpSize * path_stride);
    const WalkScratchView<Real> scratch{bias.data(),   body_change.data(), joint_impulse.data(),
                                        parked.data(), path.data(),        path_stride};
    if (rows.world_count > 0)
        host.result.history_stride = launch_propagation_kernels(
            rows_view_of<Real>(rows, rows.world_count), propagation::propagation_view_of<Real>(set),
            scratch, plan ? colored_view_of<Real>(*plan) : ColoredView<Real>{}, host.shape, options,
            host.out,
            KernelChoice{serial_thread_per_world ? SerialLayout::thread_per_world
                                                 : SerialLayout::warp_per_world},
            HostLaunch{});
    host.result.problems = simt::take_problems();
    return std::move(host.result);
}

template <class Real>
std::vector<std::string> emulate_preelimination_build(
    RowSet<Real> rows, Real cfm,
    const std::function<void(uint32_t, bool, const PreeliminationSpace<Real>&)>& check) {
    (void)simt::take_problems();
    const PreeliminationLayout layout = preelimination_layout(rows);
    PreeliminationArrays<Real, GarbageArray> spaces;
    spaces.resize(layout);
    const PreeliminationBuffers<Real> buffers =
        spaces.view(layout.world_value_base.data(), layout.world_schur_base.data());
    std::vector<int32_t> built(rows.world_count, -1);
    const RowsView<Real> view = rows_view_of<Real>(rows, rows.world_count);
    if (rows.world_count > 0)
        HostLaunch{}(preelimination_build_kernel<Real>,
                     blocks_for(rows.world_count, kWarpsPerBlock), kWarpsPerBlock * kWarpSize,
                     size_t(0), view, buffers, cfm, built.data());
    std::vector<std::string> problems = simt::take_problems();
    for (uint32_t w = 0; w < rows.world_count; ++w)
        if (built[w] >= 0) check(w, built[w] == 1, world_space(buffers, view, w));
    return problems;
}

template <class Real> std::vector<std::string> emulate_values_kernels(RowSet<Real>& rows) {
    (void)simt::take_problems();
    const RowsView<Real> view = rows_view_of<Real>(rows, rows.world_count);
    launch_values_kernels(view, rows.total_rows(), HostLaunch{});
    return simt::take_problems();
}

template EmulatedSolve<float> emulate_solve(steel::RowSet<float>, const steel_solve_options&);
template EmulatedSolve<double> emulate_solve(steel::RowSet<double>, const steel_solve_options&);
template EmulatedSolve<float> emulate_propagation_solve(RowSet<float>,
                                                        const propagation::PropagationSet<float>&,
                                                        const colored::ColoredPlan<float>*,
                                                        const steel_solve_options&, bool);
template EmulatedSolve<double> emulate_propagation_solve(RowSet<double>,
                                                         const propagation::PropagationSet<double>&,
                                                         const colored::ColoredPlan<double>*,
                                                         const steel_solve_options&, bool);
template std::vector<std::string> emulate_preelimination_build(
    RowSet<float>, float,
    const std::function<void(uint32_t, bool, const PreeliminationSpace<float>&)>&);
template std::vector<std::string> emulate_preelimination_build(
    RowSet<double>, double,
    const std::function<void(uint32_t, bool, const PreeliminationSpace<double>&)>&);
template std::vector<std::string> emulate_values_kernels(steel::RowSet<float>&);
template std::vector<std::string> emulate_values_kernels(steel::RowSet<double>&);

} // namespace test
