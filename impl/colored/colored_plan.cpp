#include "colored_plan.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <cstring>

namespace steel::colored {

namespace {

// A contact: its normal row and the friction rows right after it (world-local).
struct Contact {
    uint32_t first, count;
    int32_t unit_a,
        unit_b; // responding units: the world-local DOF offset of each block's articulation
};

template <class Real>
bool packable(const RowSet<Real>& rows, const propagation::PropagationSet<Real>& set, uint32_t row0,
              const Contact& contact) {
    if (contact.count != 3) return false;
    const uint32_t first = row0 + contact.first;
    if (rows.kind[first] != STEEL_ROW_CONTACT_NORMAL ||
        rows.kind[first + 1] != STEEL_ROW_FRICTION_BOX ||
        rows.kind[first + 2] != STEEL_ROW_FRICTION_BOX)
        return false;
    // A pack holds one friction coefficient per contact, for both friction rows (a scene
    // contact has one). Rows with two different ones are solved one by one, as the serial sweep
    // does. Compared by their bits: mu = -0 and +0 are equal but clamp to zeros of other signs.
    if (std::memcmp(&rows.friction[first + 1], &rows.friction[first + 2], sizeof(Real)) != 0)
        return false;
    for (uint32_t r = first; r < first + 3; ++r) {
        if (set.row_term_offset[r + 1] != set.row_term_offset[r]) return false; // touches a tree
        for (uint32_t block = 0; block < 2; ++block) {
            const uint32_t length = rows.block_length[2 * size_t(r) + block];
            if (length != 0 && (length != 6 || !(set.immediate_blocks[r] & (1u << block))))
                return false;
            if (length != rows.block_length[2 * size_t(first) + block] ||
                rows.block_offset[2 * size_t(r) + block] !=
                    rows.block_offset[2 * size_t(first) + block])
                return false;
        }
    }
    return true;
}

template <class Real>
void add_pack_lane(ContactPacks<Real>& packs, uint32_t pack, uint32_t lane,
                   const RowSet<Real>& rows, const propagation::PropagationSet<Real>& set,
                   uint32_t row0, const Contact& contact) {
    constexpr uint32_t L = ContactPacks<Real>::lanes;
    for (uint32_t r = 0; r < 3; ++r) {
        const uint32_t row = row0 + contact.first + r;
        const Real* j = rows.jacobian.data() + rows.value_offset[row];
        const Real* y = rows.response.data() + rows.value_offset[row];
        for (uint32_t side = 0; side < 2; ++side) {
            const uint32_t length = rows.block_length[2 * size_t(row) + side];
            for (uint32_t k = 0; k < 6; ++k) {
                const size_t at = ((size_t(pack) * 3 + r) * 2 + side) * 6 * L + k * L + lane;
                packs.jacobian[at] = length ? j[k] : Real(0);
                packs.response[at] = length ? y[k] : Real(0);
            }
            j += length;
            y += length;
        }
        const size_t at = (size_t(pack) * 3 + r) * L + lane;
        packs.bias[at] = rows.bias[row];
        packs.jy[at] = set.denominator[row]; // the propagation denominator, as serial sweeps use
        packs.regularization[at] = rows.regularization[row];
        packs.impulse_index[at] = int32_t(contact.first + r);
    }
    packs.friction[size_t(pack) * L + lane] = rows.friction[row0 + contact.first + 1];
    for (uint32_t side = 0; side < 2; ++side) {
        const uint32_t row = row0 + contact.first;
        packs.velocity_offset[(size_t(pack) * 2 + side) * L + lane] =
            rows.block_length[2 * size_t(row) + side]
                ? int32_t(rows.block_offset[2 * size_t(row) + side])
                : -1;
    }
}

// `count` packs whose lanes are all padding: nothing moves (J = Y = 0, b = 0) and the
// denominator is 1, so a padding lane never divides by zero. Allocated once, at their final
// size: grown pack by pack, the arrays of a big batch were copied and page-faulted many times.
template <class Real> void allocate_packs(ContactPacks<Real>& packs, uint32_t count) {
    constexpr uint32_t L = ContactPacks<Real>::lanes;
    packs.count = count;
    packs.jacobian.assign(size_t(count) * 36 * L, Real(0));
    packs.response.assign(size_t(count) * 36 * L, Real(0));
    packs.bias.assign(size_t(count) * 3 * L, Real(0));
    packs.jy.assign(size_t(count) * 3 * L, Real(1));
    packs.regularization.assign(size_t(count) * 3 * L, Real(0));
    packs.friction.assign(size_t(count) * L, Real(0));
    packs.velocity_offset.assign(size_t(count) * 2 * L, -1);
    packs.impulse_index.assign(size_t(count) * 3 * L, -1);
}

} // namespace

template <class Real>
void build_colored_plan_into(const RowSet<Real>& rows, const propagation::PropagationSet<Real>& set,
                             ColoredPlan<Real>& plan) {
    plan.world_color_offset.assign(1, 0);
    plan.color_pack_offset.assign(1, 0);
    plan.color_contact_offset.assign(1, 0);
    plan.world_serial_offset.assign(1, 0);
    plan.contact_rows.clear();
    plan.serial_rows.clear();
    plan.row_color.assign(rows.total_rows(), uint8_t(kMaxColors));
    plan.row_unit_a.assign(rows.total_rows(), -1);
    plan.row_unit_b.assign(rows.total_rows(), -1);
    constexpr uint32_t L = ContactPacks<Real>::lanes;

    // First every world's colors (and its serial group), then the packs they need, allocated
    // once, then the packs filled. The colored contacts of all worlds sit in one array, each
    // world's sorted by color (stable: upload order within a color), and each color is a range
    // of it: no heap object per world or color.
    std::vector<Contact> ordered;          // every world's colored contacts, color by color
    std::vector<uint32_t> color_end;       // per color of every world: its end in `ordered`
    std::vector<uint32_t> world_colors{0}; // per world + 1: its first color in color_end
    std::vector<Contact> found;            // one world's colored contacts, in upload order
    std::vector<uint8_t> found_color;
    std::vector<uint64_t> used; // used[dof]: the colors taken by the unit named by that DOF
    uint32_t count[kMaxColors + 1];
    for (uint32_t w = 0; w < rows.world_count; ++w) {
        const uint32_t row0 = rows.world_row_offset[w], m = rows.row_count(w);
        used.assign(rows.dof_count(w), 0);
        found.clear();
        found_color.clear();
        uint32_t colors = 0;
        for (uint32_t i = 0; i < m;) {
            const uint32_t row = row0 + i;
            if (rows.kind[row] != STEEL_ROW_CONTACT_NORMAL) {
                plan.serial_rows.push_back(i++);
                continue;
            }
            Contact contact{i, 1, -1, -1};
            while (i + contact.count < m && rows.normal_row[row + contact.count] == int32_t(i))
                ++contact.count;
            for (uint32_t block = 0; block < 2; ++block)
                if (rows.block_length[2 * size_t(row) + block] > 0)
                    (block == 0 ? contact.unit_a : contact.unit_b) =
                        int32_t(rows.block_offset[2 * size_t(row) + block]);
            const uint64_t taken = (contact.unit_a >= 0 ? used[size_t(contact.unit_a)] : 0) |
                                   (contact.unit_b >= 0 ? used[size_t(contact.unit_b)] : 0);
            for (uint32_t r = row; r < row + contact.count; ++r) {
                plan.row_unit_a[r] = contact.unit_a;
                plan.row_unit_b[r] = contact.unit_b;
            }
            if (~taken == 0) { // every color taken: the serial group
                for (uint32_t r = 0; r < contact.count; ++r)
                    plan.serial_rows.push_back(i + r);
            } else {
                const uint32_t color = uint32_t(__builtin_ctzll(~taken));
                for (int32_t unit : {contact.unit_a, contact.unit_b})
                    if (unit >= 0) used[size_t(unit)] |= uint64_t(1) << color;
                colors = std::max(colors, color + 1);
                found.push_back(contact);
                found_color.push_back(uint8_t(color));
                for (uint32_t r = row; r < row + contact.count; ++r)
                    plan.row_color[r] = uint8_t(color);
            }
            i += contact.count;
        }
        plan.world_serial_offset.push_back(uint32_t(plan.serial_rows.size()));
        // Counting sort by color. A contact takes the lowest color free on both its units, so
        // the colors in use are 0 .. colors - 1, none empty.
        std::fill(count, count + colors + 1, 0u);
        for (uint8_t color : found_color)
            ++count[color + 1];
        const uint32_t base = uint32_t(ordered.size());
        for (uint32_t c = 0; c < colors; ++c) {
            count[c + 1] += count[c];
            color_end.push_back(base + count[c + 1]);
        }
        ordered.resize(base + found.size());
        for (size_t k = 0; k < found.size(); ++k)
            ordered[base + count[found_color[k]]++] = found[k];
        world_colors.push_back(uint32_t(color_end.size()));
    }

    const auto color_begin = [&](uint32_t c) { return c == 0 ? 0u : color_end[c - 1]; };
    uint32_t packs = 0;
    for (uint32_t w = 0; w < rows.world_count; ++w)
        for (uint32_t c = world_colors[w]; c < world_colors[w + 1]; ++c) {
            uint32_t packed = 0;
            for (uint32_t k = color_begin(c); k < color_end[c]; ++k)
                packed += packable(rows, set, rows.world_row_offset[w], ordered[k]) ? 1 : 0;
            packs += (packed + L - 1) / L;
        }
    allocate_packs(plan.packs, packs);

    uint32_t next_pack = 0;
    for (uint32_t w = 0; w < rows.world_count; ++w) {
        const uint32_t row0 = rows.world_row_offset[w];
        for (uint32_t c = world_colors[w]; c < world_colors[w + 1]; ++c) {
            uint32_t lane = L, pack = 0;
            for (uint32_t k = color_begin(c); k < color_end[c]; ++k) {
                const Contact& contact = ordered[k];
                if (!packable(rows, set, row0, contact)) {
                    plan.contact_rows.push_back(contact.first);
                    plan.contact_rows.push_back(contact.count);
                    continue;
                }
                if (lane == L) {
                    pack = next_pack++;
                    lane = 0;
                }
                add_pack_lane(plan.packs, pack, lane++, rows, set, row0, contact);
            }
            plan.color_pack_offset.push_back(next_pack);
            plan.color_contact_offset.push_back(uint32_t(plan.contact_rows.size() / 2));
        }
        plan.world_color_offset.push_back(uint32_t(plan.color_pack_offset.size() - 1));
    }
}

template <class Real>
ColoredPlan<Real> build_colored_plan(const RowSet<Real>& rows,
                                     const propagation::PropagationSet<Real>& set) {
    ColoredPlan<Real> plan;
    build_colored_plan_into(rows, set, plan);
    return plan;
}

template void build_colored_plan_into(const RowSet<float>&,
                                      const propagation::PropagationSet<float>&,
                                      ColoredPlan<float>&);
template void build_colored_plan_into(const RowSet<double>&,
                                      const propagation::PropagationSet<double>&,
                                      ColoredPlan<double>&);
template ColoredPlan<float> build_colored_plan(const RowSet<float>&,
                                               const propagation::PropagationSet<float>&);
template ColoredPlan<double> build_colored_plan(const RowSet<double>&,
                                                const propagation::PropagationSet<double>&);

} // namespace steel::colored
