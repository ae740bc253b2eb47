// The colored solve mode (SPEC 7): each world's contacts (a normal row and its friction rows)
// are colored so that no two contacts of one color share a responding unit (a free body, or a
// whole articulation, since an impulse on any link moves all of them); static and kinematic
// bodies never conflict. The coloring is greedy in upload order, so it is deterministic; a
// contact that finds none of the first kMaxColors colors free goes to the serial group with
// every row that is not a contact (limits, drives, connect, mimic), swept after the colors.
//
// Within a color, contacts between one-body articulations with 6-DOF blocks and box friction
// are packed kPackLanes at a time into structure-of-arrays packs that the SIMD kernels solve
// lane by lane (contact_packs.hpp); the pack layout does not depend on the processor, so every
// SIMD width computes the same numbers. The other contacts of a color (touching a tree) are
// solved one after another through the propagation walks.
#pragma once

#include "../row_set.hpp"
#include "../propagation/propagation_set.hpp"

#include <cstdint>
#include <vector>

namespace steel::colored {

constexpr uint32_t kMaxColors = 64;

// Lanes per pack: one AVX-512 register of the precision.
template <class Real> constexpr uint32_t kPackLanes = 64 / sizeof(Real);

template <class Real> struct ContactPacks {
    static constexpr uint32_t lanes = kPackLanes<Real>;
    // Per pack, lane-minor: [pack][row 0..2][side 0..1][k 0..5][lane] and so on.
    std::vector<Real> jacobian, response;       // 36 * lanes per pack each
    std::vector<Real> bias, jy, regularization; // 3 * lanes per pack
    std::vector<Real> friction;                 // lanes per pack
    std::vector<int32_t>
        velocity_offset; // 2 * lanes per pack: world-local DOF of each side, -1 static
    // 3 * lanes per pack: world-local rows, -1 for padding. A contact's three rows are
    // consecutive, so the pack kernel reads the first and takes the two after it.
    std::vector<int32_t> impulse_index;
    uint32_t count = 0;
};

template <class Real> struct ColoredPlan {
    ContactPacks<Real> packs;
    std::vector<uint32_t> world_color_offset; // [worlds + 1] into the per-color arrays
    std::vector<uint32_t> color_pack_offset;  // [colors + 1] global packs of each color
    std::vector<uint32_t>
        color_contact_offset; // [colors + 1] into contact_rows: contacts solved one by one
    std::vector<uint32_t> contact_rows;        // world-local first row and row count, 2 per contact
    std::vector<uint32_t> world_serial_offset; // [worlds + 1] into serial_rows
    std::vector<uint32_t> serial_rows;         // world-local rows swept after the colors
    // Per batch row: its color (kMaxColors: the serial group) and the responding units of its
    // contact, named by the unit's first world-local DOF, -1 for none; for tests and diagnostics.
    std::vector<uint8_t> row_color;
    std::vector<int32_t> row_unit_a, row_unit_b;
};

// Colors every world's contacts. Needs the propagation set of the same rows (which blocks are
// one-body articulations, which rows have tree terms). A block always covers one whole
// articulation, so the articulation a block belongs to is the responding unit.
template <class Real>
ColoredPlan<Real> build_colored_plan(const RowSet<Real>& rows,
                                     const propagation::PropagationSet<Real>& set);

// The same into `plan`, whose arrays keep their memory: a batch uploaded every step builds its
// colors into the previous upload's plan instead of faulting in fresh pages.
template <class Real>
void build_colored_plan_into(const RowSet<Real>& rows, const propagation::PropagationSet<Real>& set,
                             ColoredPlan<Real>& plan);

} // namespace steel::colored
