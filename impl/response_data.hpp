// What the propagation response and the colored solve mode (SPEC 7) solve with, built on the
// host once per upload by the first solve that asks for it: the propagation set (from the scene
// record) and the colors, partly on the batch's threads. Both backends call this, so they fail
// the same way: INVALID_ARGUMENT for rows without a scene upload or with cone friction
// (build_propagation_set says which row).
#pragma once

#include "batch.hpp"
#include "colored/colored_plan.hpp"
#include "error.hpp"
#include "propagation/propagation_build.hpp"

#include <memory>
#include <string>

namespace steel {

template <class Real>
void prepare_response_data(BatchState<Real>& state, const steel_solve_options& options,
                           const scene::SceneRecord* scene, ThreadPool& pool, const char* where) {
    const bool propagation = options.articulated_contact_response == STEEL_RESPONSE_PROPAGATION;
    if (propagation && !state.propagation) {
        if (!scene)
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("%s: articulated_contact_response = STEEL_RESPONSE_PROPAGATION needs a "
                        "scene upload (steel_batch_upload_scene): these rows came from "
                        "steel_batch_upload_rows or a snapshot and carry no bodies to propagate "
                        "through",
                        where));
        std::unique_ptr<propagation::PropagationSet<Real>> set = std::move(state.spare_propagation);
        if (!set) set = std::make_unique<propagation::PropagationSet<Real>>();
        try {
            propagation::build_propagation_set_into(*scene, state.rows, state.propagation_scratch,
                                                    *set, &pool);
        } catch (Error& error) {
            error.message = std::string(where) + ": " + error.message; // name the call, as all do
            throw;
        }
        state.propagation = std::move(set);
    }
    if (options.solve_mode == STEEL_SOLVE_COLORED && !state.colored) {
        std::unique_ptr<colored::ColoredPlan<Real>> plan = std::move(state.spare_colored);
        if (!plan) plan = std::make_unique<colored::ColoredPlan<Real>>();
        colored::build_colored_plan_into(state.rows, *state.propagation, *plan);
        state.colored = std::move(plan);
    }
}

} // namespace steel
