// One sweep of a world in the colored solve mode (SPEC 7): color after color, the packed
// contacts of the color by the SIMD kernel and its other contacts one by one through the
// propagation walks, then the serial group, then one sync of the trees.
//
// No two contacts of a color share a responding unit, and the walks keep a cache per tree
// (tree_walk.hpp), so a color's contacts touch disjoint data, caches included, and give the same
// bits in any order, or at once: the device gives them to different lanes. A tree's cache lives
// on from color to color, so a run of contacts on one body walks the tree once.
#pragma once

#include "../propagation/propagation_sweep.hpp"
#include "colored_plan.hpp"
#include "contact_packs.hpp"

namespace steel::colored {

template <class Real> void merge(SweepResult<Real>& into, const SweepResult<Real>& part) {
    if (part.residual > into.residual) into.residual = part.residual;
    into.nonfinite_probe += part.nonfinite_probe;
}

// run_packs(first, last) solves packs [first, last) of the plan (on this thread or split over
// threads: the caller's choice, which does not change the results).
template <class Real, class RunPacks>
SweepResult<Real>
colored_sweep(const ColoredPlan<Real>& plan, propagation::PropagationWorld<Real>& world, uint32_t w,
              const SolveParams<Real>& params, Real* impulse, const RunPacks& run_packs) {
    SweepResult<Real> result;
    for (uint32_t c = plan.world_color_offset[w]; c < plan.world_color_offset[w + 1]; ++c) {
        // A color of tree contacts alone (a robot's feet) has no packs: no call for nothing.
        if (plan.color_pack_offset[c] != plan.color_pack_offset[c + 1])
            merge(result, run_packs(plan.color_pack_offset[c], plan.color_pack_offset[c + 1]));
        for (uint32_t k = plan.color_contact_offset[c]; k < plan.color_contact_offset[c + 1]; ++k) {
            const uint32_t first = plan.contact_rows[2 * size_t(k)],
                           count = plan.contact_rows[2 * size_t(k) + 1];
            for (uint32_t i = first; i < first + count; ++i)
                propagation::update_row(world, i, params, impulse, result);
            // The device's lanes park the tree's cache here for the lane that takes the tree's
            // next contact (propagation_kernel.cuh); one walk does not need to, and parking
            // does no arithmetic, so the bits are the same.
        }
    }
    for (uint32_t k = plan.world_serial_offset[w]; k < plan.world_serial_offset[w + 1]; ++k)
        propagation::update_row(world, plan.serial_rows[k], params, impulse, result);
    propagation::sync_world(world.walk, w);
    return result;
}

} // namespace steel::colored
