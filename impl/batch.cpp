#include "batch.hpp"

#include "error.hpp"
#include "rows_upload.hpp"

#include <string>

namespace steel {

Batch::Batch(const steel_batch_desc& desc_in, const steel_solve_options& options_in)
    : desc(desc_in), options(options_in), pool(desc_in.thread_count) {
    if (desc.precision == STEEL_PRECISION_FLOAT32)
        state.emplace<BatchState<float>>();
    else
        state.emplace<BatchState<double>>();
}

namespace {

// Into the spare arrays (the rows before the current ones), so that a batch uploaded every step
// reuses its memory instead of faulting in fresh pages each time.
void build_replacement_rows(Batch& batch, const std::vector<steel_rows_desc>& parts) {
    std::visit(
        [&](auto& state) {
            using Real = typename std::decay_t<decltype(state.rows.jy)>::value_type;
            build_row_set_into<Real>(parts.data(), uint32_t(parts.size()), batch.desc.world_count,
                                     batch.options.cfm, batch.options.contact_regularization,
                                     state.spare_rows, &batch.pool);
        },
        batch.state);
}

// The valid spare rows become the batch's: on the device first (a CUDA batch), since that can
// fail, then on the host, which cannot.
void commit_replacement_rows(Batch& batch, const char* where) {
    std::visit(
        [&](auto& state) {
            cuda::mirror_incoming_rows(batch, state.spare_rows, where);
            std::swap(state.rows, state.spare_rows);
            state.has_rows = true;
            state.solved = false;
            state.results.impulse.clear(); // keeps their memory for the next solve
            state.results.velocity.clear();
            state.stats.clear();
            if (state.propagation) state.spare_propagation = std::move(state.propagation);
            if (state.colored) state.spare_colored = std::move(state.colored);
        },
        batch.state);
    batch.rows_edited_since_upload = false;
    cuda::rows_changed(batch);
}

} // namespace

void replace_rows(Batch& batch, const steel_rows_desc& rows, const char* where,
                  const char* origin) {
    replace_rows(batch, std::vector<steel_rows_desc>{rows}, where, origin);
}

void replace_rows(Batch& batch, const std::vector<steel_rows_desc>& parts, const char* where,
                  const char* origin) {
    try {
        build_replacement_rows(batch, parts);
    } catch (Error& error) {
        // The validation (rows_upload.cpp) names steel_batch_upload_rows; the caller may be
        // another function, with rows of its own making.
        const std::string named = std::string(kRowsUploadName) + ": ";
        if (error.message.compare(0, named.size(), named) == 0)
            error.message = std::string(where) + ": " + (origin ? std::string(origin) + ", " : "") +
                            error.message.substr(named.size());
        throw;
    }
    commit_replacement_rows(batch, where);
}

} // namespace steel
