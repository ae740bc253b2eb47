// Steel's CUDA kernels run on the host by the emulation in host_simt.hpp, for the CPU tests:
// the same kernel code, the same launch geometry (impl/cuda/kernel_launches.cuh), g++'s arithmetic.
// Plain C++ on this side: the emulation's macros stay inside emulated_kernels.cpp.
#pragma once

#include "colored/colored_plan.hpp"
#include "preelimination_world.hpp"
#include "propagation/propagation_set.hpp"
#include "row_set.hpp"

#include <steel/steel.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace test {

template <class Real> struct EmulatedSolve {
    std::vector<Real> impulse;  // [total_rows]
    std::vector<Real> velocity; // [total_dofs]
    std::vector<steel_world_stats> stats;
    std::vector<int32_t> world_path;
    std::vector<double> history; // world w's sweeps at w * history_stride
    uint32_t history_stride = 0;
    std::vector<std::string> problems; // what the emulation caught (host_simt.hpp); empty = none
};

// A CUDA batch's solve of `rows` with `options`: the classification, general sweep and dense
// path kernels, launched as device_batch.cu launches them. Every output starts as NaN (or
// 0xff bytes), as uninitialized device memory would.
template <class Real>
EmulatedSolve<Real> emulate_solve(steel::RowSet<Real> rows, const steel_solve_options& options);

// A CUDA batch's solve under the propagation response: the classification and propagation
// kernels on the host's own propagation set, with colored sweeps when `plan` is given and
// serial ones when it is null, those with a thread per world or a warp per world.
template <class Real>
EmulatedSolve<Real> emulate_propagation_solve(steel::RowSet<Real> rows,
                                              const steel::propagation::PropagationSet<Real>& set,
                                              const steel::colored::ColoredPlan<Real>* plan,
                                              const steel_solve_options& options,
                                              bool serial_thread_per_world);

// steel_batch_update_values_device's recomputation on the device: J.Y of every row and the cone
// pairs' cross terms, rewritten in `rows` by row_jy_kernel and cone_cross_kernel. Returns what
// the emulation caught.
template <class Real> std::vector<std::string> emulate_values_kernels(steel::RowSet<Real>& rows);

// Pre-elimination's build of the derived world as the device runs it
// (warp_build_preeliminated_world in preelimination_kernel.cuh, one warp per world with bilateral
// rows, into room laid out as device_batch.cu lays it out, uninitialized), then `check(world,
// built, space)` for each such world. Returns what the emulation caught.
template <class Real>
std::vector<std::string> emulate_preelimination_build(
    steel::RowSet<Real> rows, Real cfm,
    const std::function<void(uint32_t, bool, const steel::PreeliminationSpace<Real>&)>& check);

} // namespace test
