// Worlds in rows mode, with the truths tests check them against:
//  - the resting 1D stack: box k rests on box k-1 (box 0 on the ground) through contact k; each
//    box has one DOF, its vertical velocity. Its exact impulses are closed-form.
//  - random worlds: bodies (articulations) with random SPD mass matrices H, rows over one or two
//    whole bodies with random J, and Y = H^-1 J^T computed by Cholesky.
#pragma once

#include "rows_builder.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace scenes {

struct StackSpec {
    uint32_t height = 5;
    double bottom_mass = 1.0;
    double top_mass = 1.0; // masses grow geometrically from bottom to top
    double gravity = 9.81;
    double dt = 1.0 / 60.0;
};

// Box masses, bottom (index 0) to top.
std::vector<double> stack_masses(const StackSpec& spec);

// Adds one stack world: n = m = height, every box falling at g*dt before constraints.
void add_stack_world(RowsBuilder& builder, const StackSpec& spec);

// Contact k carries the weight of boxes k..height-1 for one step: g * dt * sum of their masses.
std::vector<double> stack_exact_impulses(const StackSpec& spec);

struct RandomWorldSpec {
    uint32_t body_count = 4;
    uint32_t min_body_dofs = 1;
    uint32_t max_body_dofs = 6;
    uint32_t row_count = 8;
    double two_body_fraction = 0.5; // rows that touch two bodies
    bool mixed_kinds = true;        // bilateral, bounded, contact normal and friction rows
};

// Adds a random world. Deterministic for a given engine state on every platform (no
// std::*_distribution, whose output is implementation-defined).
void add_random_world(RowsBuilder& builder, std::mt19937_64& rng, const RandomWorldSpec& spec);

// A closed loop of `links` bodies (3 DOFs each, random SPD mass) joined in a ring by bilateral
// rows, every other body pressed on the ground by a contact normal and held by a bounded row:
// the worlds where bilateral pre-elimination applies (tests and bench_convergence).
void add_loop_world(RowsBuilder& builder, std::mt19937_64& rng, uint32_t links);

// Uniform in [0, 1) and standard normal, from 64-bit engine draws.
double uniform01(std::mt19937_64& rng);
double normal01(std::mt19937_64& rng);

// Dense helpers for small SPD systems (row-major n x n).
bool cholesky_factor(std::vector<double>& a, uint32_t n);
void cholesky_solve(const std::vector<double>& factor, uint32_t n, std::vector<double>& x);

} // namespace scenes
