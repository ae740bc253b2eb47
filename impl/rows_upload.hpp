// Validation and copy of a rows upload into a fresh RowSet. Nothing in the batch is touched
// here: the caller swaps the result in only when the whole upload was valid.
#pragma once

#include "row_set.hpp"

#include <steel/steel.h>

namespace steel {

class ThreadPool;

// The function the errors below name first ("steel_batch_upload_rows: world 2, row 5 ...");
// replace_rows (batch.hpp) puts its own caller's name in its place.
constexpr const char* kRowsUploadName = "steel_batch_upload_rows";

// Throws steel::Error (INVALID_ARGUMENT) naming the world, row and field of the first problem.
// cfm and contact_regularization are the batch's current options, needed for the d > 0 check.
template <class Real>
RowSet<Real> build_row_set(const steel_rows_desc& desc, uint32_t batch_world_count, double cfm,
                           double contact_regularization);

// The same into `set`, reusing its arrays' memory (every array is overwritten; on an error `set`
// is left partly written, so pass one that is not in use). With a pool the worlds are checked
// and copied on its threads; the set and any error message are the same for any thread count.
template <class Real>
void build_row_set_into(const steel_rows_desc& desc, uint32_t batch_world_count, double cfm,
                        double contact_regularization, RowSet<Real>& set,
                        ThreadPool* pool = nullptr);

// The same from an upload given in parts: consecutive worlds each, in world order, each part
// indexed like a whole upload of its worlds (a scene upload built on several threads is read
// where each thread built it). One part is the upload above.
template <class Real>
void build_row_set_into(const steel_rows_desc* parts, uint32_t part_count,
                        uint32_t batch_world_count, double cfm, double contact_regularization,
                        RowSet<Real>& set, ThreadPool* pool = nullptr);

// Every uploaded row keeps a positive, finite denominator under these options (set_options check).
template <class Real>
void check_denominators(const RowSet<Real>& rows, double cfm, double contact_regularization,
                        const char* where);

} // namespace steel
