// What every solve kernel is given besides the rows, by value, so that a captured CUDA graph
// holds it. Plain data: the launch code (kernel_launches.cuh) fills it on the host.
#pragma once

#include "../solve_params.hpp"
#include "../sweep_result.hpp"

#include <steel/steel.h>

#include <cstdint>

namespace steel::cuda {

template <class Real> struct DeviceSolve {
    SolveParams<Real> params;
    SweepSettings settings;
    int32_t requested_path;
    uint32_t warm_start;
    uint32_t momentum;
    uint32_t preeliminate;       // enable_bilateral_preelimination
    uint32_t velocity_in_shared; // general and propagation kernels: v in shared memory
    uint32_t shared_per_warp;    // Reals of shared memory per warp
    uint32_t dense_max_rows;     // largest m the dense kernel's shared memory holds
    uint32_t history_stride;     // 0 = no residual history
    double* history;             // [world_count * history_stride]
    Real* impulse;               // [total_rows]
    Real* velocity;              // [total_dofs]
    Real* momentum_scratch;      // [2 total_rows + total_dofs]: start, previous, previous velocity
    int32_t* world_path;         // [world_count]
    steel_world_stats* stats;    // [world_count]
};

} // namespace steel::cuda
