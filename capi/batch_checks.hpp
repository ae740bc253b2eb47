// The checks behind steel_batch_create and steel_batch_set_options, shared with the snapshot
// loader (capi/snapshot_api.cpp) so that a loaded batch is held to exactly the rules of the
// calls it stands for. One piece of code each; defined in capi/batch_api.cpp.
#pragma once

#include "../impl/batch.hpp"

#include <steel/steel.h>

namespace steel {

// A desc as steel_batch_create accepts it (backend, precision, world_count, reserved0,
// thread_count), with thread_count 0 resolved to the hardware's. Throws steel::Error
// (UNSUPPORTED for a backend not built, INVALID_ARGUMENT otherwise) prefixed by `where`.
steel_batch_desc checked_batch_desc(const steel_batch_desc& desc, const char* where);

// The option ranges steel_batch_set_options checks that do not depend on rows.
void check_options(const steel_solve_options& options, const char* where);

// steel_batch_set_options on a batch already looked up: every check (the rows' denominators
// under the new options included), then the options become the batch's. Throws on failure and
// then changes nothing.
void set_batch_options(Batch& batch, const steel_solve_options& options, const char* where);

} // namespace steel
