// The CPU backend: classify every world, then solve the worlds in parallel, each on the path it
// was given. A world's result depends only on its own rows and the options, never on the
// thread that ran it.
#include "batch.hpp"
#include "classify.hpp"
#include "colored/colored_plan.hpp"
#include "colored/colored_sweep.hpp"
#include "dense_path.hpp"
#include "error.hpp"
#include "general_sweep.hpp"
#include "momentum.hpp"
#include "nonfinite.hpp"
#include "preelimination.hpp"
#include "propagation/propagation_build.hpp"
#include "response_data.hpp"
#include "propagation/propagation_sweep.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace steel {

namespace testing {
// Test seam: counts the colored worlds solved one at a time with the pool to themselves (their
// widest colors split over it), while the rest of the pool waits. Only counted, never read here.
std::atomic<uint32_t> colored_worlds_split{0};
} // namespace testing

namespace {

// The sweeps AUTO weighs for these options (classify.hpp).
uint32_t classified_sweeps(const steel_solve_options& options) {
    return steel::classified_sweeps(options.iterations, options.tolerance);
}

// Scratch one world needs on its path: the dense problem, then the momentum vectors.
uint64_t world_scratch_size(int32_t path, bool momentum, uint32_t m, uint32_t n) {
    uint64_t size = path == STEEL_PATH_DENSE ? dense_scratch_size(m, n) : 0;
    if (momentum) size += 2 * uint64_t(m) + n;
    return size;
}

template <class Real>
WorldOutcome sweep_world(const WorldRows<Real>& rows, int32_t path,
                         const steel_solve_options& options, Real* scratch,
                         SweepRow<Real>* sweep_rows, Real* impulse, Real* velocity,
                         double* history) {
    const SolveParams<Real> params{Real(options.cfm), Real(options.contact_regularization)};
    const SweepSettings settings{options.iterations, options.tolerance};
    const uint32_t m = rows.row_count, n = rows.dof_count;
    const bool dense = path == STEEL_PATH_DENSE;
    const bool momentum = options.nesterov_momentum != 0;
    for (uint32_t i = 0; i < m; ++i)
        impulse[i] = options.warm_start ? rows.initial_impulse[i] : Real(0);

    Real* cursor = scratch;
    Real *a = nullptr, *rhs = nullptr, *lagged = nullptr;
    if (dense) {
        a = cursor;
        rhs = a + size_t(m) * dense_stride(m);
        lagged = rhs + m;
        build_dense_problem(rows, a, rhs, lagged + m);
        cursor += dense_scratch_size(m, n);
    } else {
        velocity_from_impulses(rows, impulse, velocity);
    }
    if (dense)
        prepare_sweep_rows(rows, params, sweep_rows);
    else
        prepare_general_sweep_rows(rows, params, sweep_rows);
    MomentumState<Real> state{};
    if (momentum) {
        state.start = cursor;
        state.previous = cursor + m;
        state.previous_velocity = dense ? nullptr : cursor + 2 * size_t(m);
        momentum_reset(state, impulse, m, velocity, n);
    }

    const auto sweep = [&] {
        if (momentum) momentum_begin_sweep(state, impulse, m);
        return dense ? dense_sweep(rows, a, rhs, params, sweep_rows, impulse, lagged)
                     : simd::general_sweep_prepared(rows, params, sweep_rows, impulse, velocity);
    };
    const auto between = [&](double residual) {
        return momentum && momentum_extrapolate(state, residual, impulse, m, velocity, n);
    };
    WorldOutcome outcome = run_sweeps<Real>(settings, history, sweep, between);
    if (dense) velocity_from_impulses(rows, impulse, velocity);
    outcome.path = path;
    return outcome;
}

// Solves one world on its path, with bilateral pre-elimination when asked, and isolates it if
// anything turned non-finite.
template <class Real>
WorldOutcome solve_world(const WorldRows<Real>& rows, int32_t path,
                         const steel_solve_options& options, Real* scratch,
                         SweepRow<Real>* sweep_rows, PreeliminationWorkspace<Real>& preelimination,
                         Real* impulse, Real* velocity, double* history) {
    const uint32_t n = rows.dof_count;
    WorldOutcome outcome;
    if (options.enable_bilateral_preelimination && bilateral_row_count(rows) > 0) {
        WorldRows<Real> kept;
        const PreeliminationSpace<Real> space = preelimination.space();
        if (build_preeliminated_world(rows, Real(options.cfm), space, kept)) {
            const int32_t kept_path =
                classify_world(options.path, kept.row_count, uint64_t(kept.row_count) * n,
                               precision_of<Real>, classified_sweeps(options));
            outcome = sweep_world(kept, kept_path, options, scratch, sweep_rows, space.kept_impulse,
                                  velocity, history);
            recover_bilateral_impulses(rows, space, impulse, velocity);
        } else {
            outcome.flags |= STEEL_WORLD_NONFINITE;
        }
    } else {
        outcome = sweep_world(rows, path, options, scratch, sweep_rows, impulse, velocity, history);
    }

    isolate_if_nonfinite(rows, outcome, impulse, velocity);
    return outcome;
}

// Runs packs [first, last) of a color: on this thread, or, for a world that has the pool to
// itself and a color of at least kMinPacksToSplit packs, in tasks of kPacksPerTask packs over the
// pool. The packs of a color are independent and the merge (a max, a sum of zeros) does not
// depend on order, so the split changes nothing in the results. Smaller colors stay on one
// thread: a wake-up per color per sweep cost more than it saved below this size on the 2-vCPU
// machine measured (bench/RESULTS.md), and tasks of neighbouring packs keep threads off each
// other's cache lines.
constexpr uint32_t kPacksPerTask = 32;
constexpr uint32_t kMinPacksToSplit = 256;

template <class Real> struct PackRunner {
    const colored::ColoredPlan<Real>* plan;
    ThreadPool* pool; // null: this thread
    std::vector<SweepResult<Real>>* partial;

    SweepResult<Real> operator()(uint32_t first, uint32_t last, const SolveParams<Real>& params,
                                 Real* impulse, Real* velocity) const {
        if (!pool || last - first < kMinPacksToSplit)
            return colored::solve_packs(plan->packs, first, last, params, impulse, velocity);
        // partial has room for the widest color (split_room), so this allocates nothing: a
        // solve past its allocations cannot fail half-way through a world.
        const uint32_t tasks = (last - first + kPacksPerTask - 1) / kPacksPerTask;
        partial->assign(tasks, SweepResult<Real>{});
        pool->parallel_for(tasks, [&](uint32_t task, uint32_t) {
            const uint32_t begin = first + task * kPacksPerTask;
            const uint32_t end = std::min(last, begin + kPacksPerTask);
            (*partial)[task] =
                colored::solve_packs(plan->packs, begin, end, params, impulse, velocity);
        });
        SweepResult<Real> result;
        for (const SweepResult<Real>& part : *partial)
            colored::merge(result, part);
        return result;
    }
};

// The tasks PackRunner splits the widest color of `plan` into (0 if none is split).
template <class Real> uint32_t split_room(const colored::ColoredPlan<Real>& plan) {
    uint32_t widest = 0;
    for (size_t c = 0; c + 1 < plan.color_pack_offset.size(); ++c)
        widest = std::max(widest, plan.color_pack_offset[c + 1] - plan.color_pack_offset[c]);
    return widest < kMinPacksToSplit ? 0 : (widest + kPacksPerTask - 1) / kPacksPerTask;
}

// Whether world w has a color that PackRunner would split over the pool.
template <class Real> bool has_color_to_split(const colored::ColoredPlan<Real>& plan, uint32_t w) {
    for (uint32_t c = plan.world_color_offset[w]; c < plan.world_color_offset[w + 1]; ++c)
        if (plan.color_pack_offset[c + 1] - plan.color_pack_offset[c] >= kMinPacksToSplit)
            return true;
    return false;
}

// One world under the propagation response (SPEC 7): serial sweeps through the trees, or, with
// a pack runner, colored sweeps.
template <class Real>
WorldOutcome solve_propagation_world(const propagation::PropagationSet<Real>& set,
                                     const PackRunner<Real>* colored, const RowSet<Real>& row_set,
                                     uint32_t w, const steel_solve_options& options,
                                     propagation::WalkScratch<Real>& scratch, Real* impulse,
                                     Real* velocity, double* history) {
    const uint32_t body0 = set.world_body_offset[w];
    propagation::PropagationWorld<Real> world{
        world_rows(row_set, w),
        row_set.world_row_offset[w],
        {propagation::propagation_view_of<Real>(set), body0, row_set.world_dof_offset[w], velocity,
         scratch.bias.data(), scratch.joint_impulse.data(), scratch.body_change.data(),
         scratch.path.data(), scratch.parked.data()}};
    world.rows.jy = set.denominator.data() + world.row0;
    const SolveParams<Real> params{Real(options.cfm), Real(options.contact_regularization)};
    const auto run_packs = [&](uint32_t first, uint32_t last) {
        return (*colored)(first, last, params, impulse, velocity);
    };
    return propagation::propagation_solve(
        world, w, SweepSettings{options.iterations, options.tolerance}, options.warm_start != 0,
        impulse, history, [&] {
            return colored ? colored::colored_sweep(*colored->plan, world, w, params, impulse,
                                                    run_packs)
                           : propagation::propagation_sweep(world, w, params, impulse);
        });
}

template <class Real>
void solve_state(BatchState<Real>& state, const steel_solve_options& options,
                 const scene::SceneRecord* scene, ThreadPool& pool) {
    const RowSet<Real>& set = state.rows;
    const uint32_t world_count = set.world_count;
    const bool momentum = options.nesterov_momentum != 0;
    const bool propagation = options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION;
    prepare_response_data(state, options, scene, pool, "steel_batch_solve");
    const bool colored = options.solve_mode == STEEL_SOLVE_COLORED;

    state.world_path.resize(world_count);
    uint64_t scratch_size = 0;
    for (uint32_t w = 0; w < world_count; ++w) {
        const uint32_t m = set.row_count(w);
        const uint64_t values = set.value_offset[set.world_row_offset[w + 1]] -
                                set.value_offset[set.world_row_offset[w]];
        state.world_path[w] =
            classify_world(options.path, m, values, precision_of<Real>, classified_sweeps(options));
        scratch_size = std::max(
            scratch_size, world_scratch_size(state.world_path[w], momentum, m, set.dof_count(w)));
    }
    // Everything that may allocate happens here, before the parallel part. The history's room
    // comes first, and the history and its stride change together only once everything is
    // allocated: a solve refused for want of memory leaves the last solve's results readable.
    // Past that point nothing allocates (parallel_for keeps a pointer to its task, the colored
    // split's partial results have their room), so nothing can fail half-way.
    const uint32_t history_stride = options.record_residual_history ? options.iterations : 0;
    const uint64_t history_size = uint64_t(world_count) * history_stride;
    std::vector<double> grown_history;
    if (state.history.capacity() < history_size) grown_history.reserve(history_size);
    state.preelimination.resize(pool.thread_count());
    if (options.enable_bilateral_preelimination) {
        // Room for the worlds that have bilateral rows, each as much as its own derived world
        // needs (its kept rows' path, as solve_world classifies them).
        uint32_t max_rows = 0, max_dofs = 0;
        PreeliminationRoom max_room;
        for (uint32_t w = 0; w < world_count; ++w) {
            const uint32_t m = set.row_count(w), n = set.dof_count(w);
            const uint32_t b = bilateral_row_count(world_rows(set, w));
            if (b == 0) continue;
            const PreeliminationRoom room = preelimination_room(m, b, n);
            max_rows = std::max(max_rows, m);
            max_dofs = std::max(max_dofs, n);
            max_room.kept_values = std::max(max_room.kept_values, room.kept_values);
            max_room.schur = std::max(max_room.schur, room.schur);
            const uint32_t c = m - b;
            const int32_t kept_path = classify_world(
                options.path, c, uint64_t(c) * n, precision_of<Real>, classified_sweeps(options));
            scratch_size = std::max(scratch_size, world_scratch_size(kept_path, momentum, c, n));
        }
        for (PreeliminationWorkspace<Real>& workspace : state.preelimination)
            workspace.reserve(max_rows, max_dofs, max_room);
    }
    if (propagation) {
        uint32_t max_bodies = 0, max_dofs = 0;
        for (uint32_t w = 0; w < world_count; ++w) {
            max_bodies = std::max(max_bodies, state.propagation->world_body_offset[w + 1] -
                                                  state.propagation->world_body_offset[w]);
            max_dofs = std::max(max_dofs, set.dof_count(w));
        }
        state.walk_scratch.resize(pool.thread_count());
        for (propagation::WalkScratch<Real>& scratch : state.walk_scratch)
            scratch.reserve(max_bodies, max_dofs, std::max(state.propagation->max_depth, 1u));
    }
    state.scratch.resize(pool.thread_count());
    for (std::vector<Real>& scratch : state.scratch)
        if (scratch.size() < scratch_size) scratch.resize(scratch_size);
    // A world's prepared rows for its sweeps, general or dense (a pre-eliminated world keeps fewer
    // rows).
    uint32_t sweep_rows_size = 0;
    if (!propagation)
        for (uint32_t w = 0; w < world_count; ++w)
            sweep_rows_size = std::max(sweep_rows_size, set.row_count(w));
    state.sweep_rows.resize(pool.thread_count());
    for (std::vector<SweepRow<Real>>& rows : state.sweep_rows)
        if (rows.size() < sweep_rows_size) rows.resize(sweep_rows_size);
    state.results.impulse.resize(set.total_rows());
    state.results.velocity.resize(set.total_dofs());
    state.stats.resize(world_count);
    // Colored worlds fewer than the threads: each world with a color wide enough to split is
    // solved alone, one after another, its wide colors split over the pool; the others (all of
    // them if none has such a color) are spread over the pool as usual, each on one thread. A
    // world with only narrow colors gains nothing from the pool to itself: solved alone, the
    // worlds of a batch of 2 to thread_count - 1 would all run on one thread.
    const bool within_world =
        colored && pool.thread_count() > 1 && world_count < pool.thread_count();
    const auto split = [&](uint32_t w) {
        return within_world && has_color_to_split(*state.colored, w);
    };
    std::vector<SweepResult<Real>> partial;
    if (within_world) partial.reserve(split_room(*state.colored));
    if (grown_history.capacity() > 0) state.history.swap(grown_history);
    state.history.assign(history_size, 0.0);
    state.history_stride = history_stride;

    const PackRunner<Real> on_thread{state.colored.get(), nullptr, nullptr};
    const PackRunner<Real> on_pool{state.colored.get(), &pool, &partial};
    const auto solve_one = [&](uint32_t w, uint32_t thread, bool alone) {
        const WorldRows<Real> rows = world_rows(set, w);
        Real* impulse = state.results.impulse.data() + set.world_row_offset[w];
        Real* velocity = state.results.velocity.data() + set.world_dof_offset[w];
        double* history = state.history_stride
                              ? state.history.data() + uint64_t(w) * state.history_stride
                              : nullptr;
        const PackRunner<Real>* runner = !colored ? nullptr : alone ? &on_pool : &on_thread;
        const WorldOutcome outcome =
            propagation
                ? solve_propagation_world(*state.propagation, runner, set, w, options,
                                          state.walk_scratch[thread], impulse, velocity, history)
                : solve_world(rows, state.world_path[w], options, state.scratch[thread].data(),
                              state.sweep_rows[thread].data(), state.preelimination[thread],
                              impulse, velocity, history);
        write_world_stats(state.stats[w], outcome);
    };
    uint32_t spread = world_count; // worlds left to spread over the pool
    for (uint32_t w = 0; w < world_count; ++w)
        if (split(w)) {
            testing::colored_worlds_split.fetch_add(1, std::memory_order_relaxed);
            solve_one(w, 0, true);
            --spread;
        }
    if (spread > 0) {
        // Threads take runs of neighbouring worlds, not single worlds: a world rewrites its
        // impulses and velocities every sweep, and two threads on neighbouring small worlds would
        // share those cache lines. At least four runs per thread keep the load balanced.
        const uint32_t run = std::max(1u, std::min(16u, world_count / (4 * pool.thread_count())));
        const uint32_t runs = (world_count + run - 1) / run;
        pool.parallel_for(runs, [&](uint32_t r, uint32_t thread) {
            for (uint32_t w = r * run; w < std::min(world_count, (r + 1) * run); ++w)
                if (!split(w)) solve_one(w, thread, false);
        });
    }
    state.solved = true;
}

} // namespace

void solve_batch_on_cpu(Batch& batch) {
    std::visit(
        [&](auto& state) { solve_state(state, batch.options, batch.scene.get(), batch.pool); },
        batch.state);
}

} // namespace steel
