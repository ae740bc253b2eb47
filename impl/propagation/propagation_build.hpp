// Builds the propagation response's data (propagation_set.hpp) from a scene upload and the rows
// it produced. Everything is computed in float64 and rounded once to the batch's precision.
#pragma once

#include "../row_set.hpp"
#include "../scene/scene_record.hpp"
#include "propagation_set.hpp"

namespace steel {
class ThreadPool;
}

namespace steel::propagation {

// Throws steel::Error (INVALID_ARGUMENT) for what the propagation response cannot solve: coupled
// (cone) friction rows, which need the immediate response (SPEC 7).
template <class Real>
PropagationSet<Real> build_propagation_set(const scene::SceneRecord& scene,
                                           const RowSet<Real>& rows);

// The same into `set`, built in float64 in `scratch` first; both keep their arrays' memory, so
// that a batch uploaded every step does not fault in a fresh set each time. On an error `set`
// is left partly written. With a pool, the trees' factorizations and the rows' denominators (the
// tree walks) are worked out on its threads, with the same bits.
template <class Real>
void build_propagation_set_into(const scene::SceneRecord& scene, const RowSet<Real>& rows,
                                PropagationSet<double>& scratch, PropagationSet<Real>& set,
                                ThreadPool* pool = nullptr);

} // namespace steel::propagation
