// A batch: the worlds' rows in one precision, the options, the last results, and the worker
// threads. capi/ owns batches through the handle registry; everything here is plain C++.
#pragma once

#include "colored/colored_plan.hpp"
#include "cuda/device_backend.hpp"
#include "preelimination.hpp"
#include "sweep_row.hpp"
#include "propagation/propagation_set.hpp"
#include "propagation/tree_walk.hpp"
#include "row_set.hpp"
#include "scene/scene_inputs.hpp"
#include "scene/scene_record.hpp"
#include "scene/scene_rows.hpp"
#include "thread_pool.hpp"

#include <steel/steel.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace steel {

template <class Real> struct BatchState {
    RowSet<Real> rows;
    RowSet<Real> spare_rows; // the rows of the upload before, whose memory the next one reuses
    bool has_rows = false;
    SolveResults<Real> results;
    bool solved = false; // results belong to the current rows
    std::vector<steel_world_stats> stats;
    std::vector<int32_t> world_path;        // classification of the last solve
    std::vector<double> history;            // residual per sweep, world w at w * history_stride
    uint32_t history_stride = 0;            // iterations of the last solve, 0 = not recorded
    std::vector<std::vector<Real>> scratch; // per worker thread, grown, never shrunk
    std::vector<std::vector<SweepRow<Real>>> sweep_rows;       // per worker thread, likewise
    std::vector<PreeliminationWorkspace<Real>> preelimination; // per worker thread, likewise
    // The propagation response's data for the current scene upload, built by the first solve
    // that asks for it (impl/propagation/).
    std::unique_ptr<propagation::PropagationSet<Real>> propagation;
    // The set of an earlier upload, and the float64 room the next set is built in, kept for
    // their memory like spare_colored. Never read otherwise.
    std::unique_ptr<propagation::PropagationSet<Real>> spare_propagation;
    propagation::PropagationSet<double> propagation_scratch;
    std::vector<propagation::WalkScratch<Real>> walk_scratch; // per worker thread
    std::unique_ptr<colored::ColoredPlan<Real>> colored;      // the colors, built like propagation
    // The colors of an earlier upload, kept for their memory: the next colored solve builds into
    // them (colored_plan.hpp). Never read otherwise.
    std::unique_ptr<colored::ColoredPlan<Real>> spare_colored;
};

struct Batch {
    Batch(const steel_batch_desc& desc_in, const steel_solve_options& options_in);

    steel_batch_desc desc;
    steel_solve_options options;
    std::variant<BatchState<float>, BatchState<double>> state;
    std::unique_ptr<scene::SceneRecord> scene; // set while the rows came from a scene upload
    // That upload's steel_scene_desc, copied: what a snapshot of the batch holds (read only
    // while `scene` is set). One copy, replaced once an upload can no longer fail.
    scene::SceneInputs scene_inputs;
    // The record of the scene upload before, kept for its memory: the next scene upload builds
    // into it. Never read otherwise.
    std::unique_ptr<scene::SceneRecord> spare_scene;
    // The last scene upload's rows in float64, before the batch's precision: kept only for their
    // memory, which the next scene upload builds into (scene_rows.hpp). Never read otherwise: a
    // failed upload leaves them half built.
    scene::BuiltRows scene_rows;
    std::vector<scene::BuiltRows> scene_row_runs; // instead, per run of worlds built on the pool
    ThreadPool pool;
    // Non-empty: every solve appends a snapshot (impl/snapshot/capture.hpp).
    std::string capture_path;
    // The options the readable results were solved with (set by every solve and by a load), and
    // whether a device values update changed the rows since: a snapshot holds results only next
    // to the options and rows that made them (impl/snapshot/snapshot_batch.cpp).
    steel_solve_options results_options{};
    bool rows_updated_since_solve = false;
    // Whether a device values update changed the rows since the last upload: a scene batch's
    // rows then no longer follow from its scene, and a snapshot holds the rows alone.
    bool rows_edited_since_upload = false;
    cuda::DeviceBatchPtr device; // STEEL_BACKEND_CUDA only: the device mirror (impl/cuda/)
};

// Validates `rows` in full against the batch's world count and options and, only if all of it
// is valid (and, for a CUDA batch, mirrored to the device), replaces the batch's rows and
// clears its results. Throws steel::Error otherwise,
// leaving the batch as it was; its message starts with `where` (the C function called) and,
// when set, `origin` (where the rows came from, for rows the caller did not write itself).
// (The caller keeps or drops batch.scene.)
void replace_rows(Batch& batch, const steel_rows_desc& rows, const char* where,
                  const char* origin = nullptr);
// The same for an upload in parts (rows_upload.hpp).
void replace_rows(Batch& batch, const std::vector<steel_rows_desc>& parts, const char* where,
                  const char* origin = nullptr);

// Solves every world of the batch with its options on the CPU backend. Throws steel::Error
// before changing anything if the options ask for what the rows cannot give (the propagation
// response without a scene upload, or with cone friction).
void solve_batch_on_cpu(Batch& batch);

} // namespace steel
