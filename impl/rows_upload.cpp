#include "rows_upload.hpp"

#include "dense_entry.hpp"
#include "error.hpp"
#include "refused_worlds.hpp"
#include "row_update.hpp"
#include "thread_pool.hpp"
#include "world_rows.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <limits>

namespace steel {

namespace {

constexpr const char* kWhere = kRowsUploadName;

const char* precision_name(float) {
    return "float32";
}
const char* precision_name(double) {
    return "float64";
}

[[noreturn]] void bad(const std::string& message) {
    fail(STEEL_ERROR_INVALID_ARGUMENT, std::string(kWhere) + ": " + message);
}

std::string row_place(uint32_t world, uint32_t row, uint64_t batch_row) {
    return format("world %u, row %u (batch row %" PRIu64 ")", world, row, batch_row);
}

// Converts a finite double to Real; throws if it is NaN, infinite, or overflows Real. what()
// names the value ("world 1, row 3 (batch row 7): bias"); it is only called on failure, because
// uploads are checked value by value and formatting costs far more than the check.
template <class Real, class What> Real finite_value(double value, const What& what) {
    if (std::isnan(value)) bad(format("%s is NaN", what().c_str()));
    if (std::isinf(value)) bad(format("%s is infinite", what().c_str()));
    const Real converted = Real(value);
    if (!std::isfinite(converted))
        bad(format("%s = %g does not fit %s", what().c_str(), value, precision_name(Real())));
    return converted;
}

// A bound to Real: an infinity stays one (an open side), a finite value must fit Real.
template <class Real, class What> Real bound_value(double value, const What& what) {
    return std::isinf(value) ? Real(value) : finite_value<Real>(value, what);
}

template <class T> void require(const T* pointer, const char* field, const char* reason) {
    if (pointer == nullptr) bad(format("%s is NULL but %s", field, reason));
}

// FRICTION_CONE rows come in consecutive pairs naming the same normal row and friction.
template <class Real> void check_cone_pairs(const RowSet<Real>& set, uint32_t w) {
    const uint32_t m = set.row_count(w);
    for (uint32_t i = 0; i < m; ++i) {
        const uint64_t r = set.world_row_offset[w] + uint64_t(i);
        if (set.kind[r] != STEEL_ROW_FRICTION_CONE) continue;
        if (i + 1 >= m || set.kind[r + 1] != STEEL_ROW_FRICTION_CONE)
            bad(format("%s: a FRICTION_CONE row must be followed by its partner, another "
                       "FRICTION_CONE row",
                       row_place(w, i, r).c_str()));
        if (set.normal_row[r + 1] != set.normal_row[r] || set.friction[r + 1] != set.friction[r])
            bad(format(
                "%s: the FRICTION_CONE pair's second row has normal_row = %d and friction = %g, "
                "the first %d and %g; they must match",
                row_place(w, i + 1, r + 1).c_str(), set.normal_row[r + 1],
                double(set.friction[r + 1]), set.normal_row[r], double(set.friction[r])));
        ++i; // the partner
    }
}

// The off-diagonal entries of each cone pair's 2x2 block of A in world w (0 for other rows), as
// the dense path and the device's values kernel form them (dense_entry), and a check that the
// block (with its regularization) is positive definite.
template <class Real> void compute_cone_cross_terms(RowSet<Real>& set, uint32_t w) {
    const WorldRows<Real> rows = world_rows(set, w);
    const uint64_t row0 = set.world_row_offset[w];
    std::fill(set.cone_cross_01.begin() + long(row0),
              set.cone_cross_01.begin() + long(row0 + rows.row_count), Real(0));
    std::fill(set.cone_cross_10.begin() + long(row0),
              set.cone_cross_10.begin() + long(row0 + rows.row_count), Real(0));
    for (uint32_t i = 0; i + 1 < rows.row_count; ++i) {
        if (rows.kind[i] != STEEL_ROW_FRICTION_CONE) continue;
        const uint64_t r = row0 + uint64_t(i);
        set.cone_cross_01[r] = dense_entry(rows, i, i + 1);
        set.cone_cross_10[r] = dense_entry(rows, i + 1, i);
        const Real a00 = set.jy[r] + set.regularization[r],
                   a11 = set.jy[r + 1] + set.regularization[r + 1];
        const Real det = a00 * a11 - set.cone_cross_01[r] * set.cone_cross_10[r];
        // Relative: tangents a hair from parallel give a determinant of rounding size, and
        // every block step would amplify rounding by its inverse (found by fuzz_paths_agree).
        const Real relative_floor = sizeof(Real) == 4 ? Real(1e-5) : Real(1e-12);
        if (!(a00 > 0) || !(det > relative_floor * a00 * a11) || !std::isfinite(det))
            bad(format("%s: the FRICTION_CONE pair's 2x2 block of A has determinant %g; it must be "
                       "positive "
                       "definite and not nearly singular (are the two tangent rows parallel?)",
                       row_place(w, i, r).c_str(), double(det)));
        ++i;
    }
}

// One part of an upload: a steel_rows_desc over consecutive worlds, and where its worlds, rows,
// values and DOFs start in the batch. A rows upload is one part; a scene upload built on several
// threads is one part per run of worlds, read where it was built.
struct Part {
    const steel_rows_desc* desc;
    uint32_t world0 = 0;
    uint64_t row0 = 0, value0 = 0, dof0 = 0;
};

// World w's v-hat, each value checked finite in the batch's precision.
template <class Real> void copy_velocity(const Part& part, RowSet<Real>& set, uint32_t w) {
    const steel_rows_desc& desc = *part.desc;
    for (uint32_t k = 0; k < desc.world_dof_counts[w - part.world0]; ++k) {
        const uint64_t dof = set.world_dof_offset[w] + uint64_t(k);
        set.unconstrained_velocity[dof] =
            finite_value<Real>(desc.unconstrained_velocity[dof - part.dof0], [&] {
                return format("world %u, dof %u: unconstrained_velocity", w, k);
            });
    }
}

// World w's structure (blocks, kinds, bounds, friction rows' normals), checked, with every
// structural array of its rows written (defaults where a kind has no value). value_offset must
// be set already.
template <class Real> void copy_structure(const Part& part, RowSet<Real>& set, uint32_t w) {
    const steel_rows_desc& desc = *part.desc;
    const uint32_t n = desc.world_dof_counts[w - part.world0];
    const uint32_t m = desc.world_row_counts[w - part.world0];
    for (uint32_t i = 0; i < m; ++i) {
        const uint64_t r = set.world_row_offset[w] + uint64_t(i);
        const uint64_t local = r - part.row0; // the row in the part's arrays
        const auto place = [&] { return row_place(w, i, r); };
        uint64_t begin[2], end[2];
        for (int k = 0; k < 2; ++k) {
            const uint32_t length = desc.block_length[2 * local + k];
            begin[k] = desc.block_offset[2 * local + k];
            end[k] = begin[k] + length;
            if (length > 0 && end[k] > n)
                bad(format("%s: block %d covers DOFs [%" PRIu64 ", %" PRIu64
                           ") but the world has %u",
                           place().c_str(), k, begin[k], end[k], n));
            // An unused block (length 0) may carry any offset in the upload; store 0 so the
            // kernels never form a pointer outside the world's arrays (x + offset is computed
            // before the length is looked at). Found by fuzz/fuzz_solve_rows.
            set.block_length[2 * r + k] = length;
            set.block_offset[2 * r + k] = length > 0 ? uint32_t(begin[k]) : 0;
        }
        if (set.block_length[2 * r] > 0 && set.block_length[2 * r + 1] > 0 && begin[0] < end[1] &&
            begin[1] < end[0])
            bad(format("%s: blocks 0 [%" PRIu64 ", %" PRIu64 ") and 1 [%" PRIu64 ", %" PRIu64
                       ") overlap",
                       place().c_str(), begin[0], end[0], begin[1], end[1]));
        if (set.value_offset[r + 1] - part.value0 > desc.value_count)
            bad(format("%s: the rows' blocks need more than value_count = %" PRIu64 " values",
                       place().c_str(), desc.value_count));

        const int32_t kind = desc.kind[local];
        set.kind[r] = kind;
        if (kind < STEEL_ROW_BILATERAL || kind > STEEL_ROW_FRICTION_CONE)
            bad(format("%s: kind = %d is not a STEEL_ROW_* value", place().c_str(), kind));
        set.lower[r] = Real(0);
        set.upper[r] = Real(0);
        if (kind == STEEL_ROW_BOUNDED) {
            require(desc.lower, "lower", "there are BOUNDED rows");
            require(desc.upper, "upper", "there are BOUNDED rows");
            const double lo = desc.lower[local], hi = desc.upper[local];
            if (std::isnan(lo)) bad(format("%s: lower is NaN", place().c_str()));
            if (std::isnan(hi)) bad(format("%s: upper is NaN", place().c_str()));
            if (!(lo <= hi)) bad(format("%s: lower = %g > upper = %g", place().c_str(), lo, hi));
            if (lo == INFINITY || hi == -INFINITY)
                bad(format("%s: the bounds [%g, %g] admit no impulse", place().c_str(), lo, hi));
            set.lower[r] = bound_value<Real>(lo, [&] { return place() + ": lower"; });
            set.upper[r] = bound_value<Real>(hi, [&] { return place() + ": upper"; });
        }
        set.normal_row[r] = -1;
        set.friction[r] = Real(0);
        if (kind == STEEL_ROW_FRICTION_BOX || kind == STEEL_ROW_FRICTION_CONE) {
            require(desc.normal_row, "normal_row", "there are friction rows");
            require(desc.friction, "friction", "there are friction rows");
            const int32_t normal = desc.normal_row[local];
            if (normal < 0 || uint32_t(normal) >= m)
                bad(format("%s: normal_row = %d is outside the world's rows [0, %u)",
                           place().c_str(), normal, m));
            const int32_t normal_kind =
                desc.kind[set.world_row_offset[w] - part.row0 + uint64_t(normal)];
            if (normal_kind != STEEL_ROW_CONTACT_NORMAL)
                bad(format("%s: normal_row = %d is a row of kind %d, not STEEL_ROW_CONTACT_NORMAL",
                           place().c_str(), normal, normal_kind));
            const double mu = desc.friction[local];
            if (!std::isfinite(mu) || mu < 0)
                bad(format("%s: friction = %g must be finite and >= 0", place().c_str(), mu));
            set.normal_row[r] = normal;
            set.friction[r] = finite_value<Real>(mu, [&] { return place() + ": friction"; });
        }
    }
}

// World w's numbers, each checked finite in the batch's precision, and J.Y of its rows.
template <class Real> void copy_numbers(const Part& part, RowSet<Real>& set, uint32_t w) {
    const steel_rows_desc& desc = *part.desc;
    for (uint32_t i = 0; i < desc.world_row_counts[w - part.world0]; ++i) {
        const uint64_t r = set.world_row_offset[w] + uint64_t(i);
        const uint64_t local = r - part.row0;
        const auto place = [&] { return row_place(w, i, r); };
        for (uint64_t v = set.value_offset[r]; v < set.value_offset[r + 1]; ++v) {
            const uint64_t k = v - set.value_offset[r];
            set.jacobian[v] = finite_value<Real>(desc.jacobian[v - part.value0], [&] {
                return place() + format(": jacobian[%" PRIu64 "]", k);
            });
            set.response[v] = finite_value<Real>(desc.response[v - part.value0], [&] {
                return place() + format(": response[%" PRIu64 "]", k);
            });
        }
        set.bias[r] = finite_value<Real>(desc.bias[local], [&] { return place() + ": bias"; });
        set.regularization[r] = Real(0);
        if (desc.regularization) {
            const double c = desc.regularization[local];
            if (!(c >= 0)) bad(format("%s: regularization = %g must be >= 0", place().c_str(), c));
            set.regularization[r] =
                finite_value<Real>(c, [&] { return place() + ": regularization"; });
        }
        set.initial_impulse[r] =
            desc.initial_impulse ? finite_value<Real>(desc.initial_impulse[local],
                                                      [&] { return place() + ": initial_impulse"; })
                                 : Real(0);
        // J.Y: J and Y share the row's layout, so it is a plain dot product of the two value runs.
        Real sum = 0;
        for (uint64_t v = set.value_offset[r]; v < set.value_offset[r + 1]; ++v)
            sum += set.jacobian[v] * set.response[v];
        set.jy[r] = sum;
    }
}

template <class Real>
void check_world_denominators(const RowSet<Real>& set, uint32_t w, double cfm,
                              double contact_regularization, const char* where) {
    for (uint32_t i = 0; i < set.row_count(w); ++i) {
        const uint64_t r = set.world_row_offset[w] + uint64_t(i);
        // The same choice of c and d the row update makes (row_update.hpp).
        Real c = set.regularization[r];
        if (c == 0 && set.kind[r] == STEEL_ROW_CONTACT_NORMAL) c = Real(contact_regularization);
        const bool cone = set.kind[r] == STEEL_ROW_FRICTION_CONE;
        const Real d = cone ? set.jy[r] + c : row_denominator(set.jy[r], c, Real(cfm));
        if (!(d > 0) || !std::isfinite(d))
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("%s: %s: J.Y + %s = %g must be positive and finite (J.Y = %g; is Y = H^-1 "
                        "J^T?)",
                        where, row_place(w, i, r).c_str(), c > 0 || cone ? "regularization" : "cfm",
                        double(d), double(set.jy[r])));
    }
}

// Calls phase(w) for every world: in runs on the pool (ThreadPool::for_each_run, which reports
// the first bad world whatever the thread count), or in order on this thread.
template <class Phase>
void for_each_world(ThreadPool* pool, uint32_t world_count, const Phase& phase) {
    if (!pool) {
        for (uint32_t w = 0; w < world_count; ++w)
            phase(w);
        return;
    }
    pool->for_each_run(world_count, [&](uint32_t, uint32_t first, uint32_t end) {
        for (uint32_t w = first; w < end; ++w)
            phase(w);
    });
}

} // namespace

template <class Real>
void build_row_set_into(const steel_rows_desc* parts, uint32_t part_count,
                        uint32_t batch_world_count, double cfm, double contact_regularization,
                        RowSet<Real>& set, ThreadPool* pool) {
    uint64_t world_total = 0;
    for (uint32_t p = 0; p < part_count; ++p)
        world_total += parts[p].world_count;
    if (world_total != batch_world_count)
        bad(format("world_count is %" PRIu64 " but the batch has %u worlds", world_total,
                   batch_world_count));
    const uint32_t world_count = batch_world_count;

    // Where each part starts, each world's part, and the batch's offsets; the parts' pointers.
    std::vector<Part> part(part_count);
    std::vector<uint32_t> part_of(world_count);
    set.world_count = world_count;
    set.world_dof_offset.resize(size_t(world_count) + 1);
    set.world_row_offset.resize(size_t(world_count) + 1);
    uint64_t total_dofs = 0;
    uint64_t total_rows = 0;
    uint32_t next_world = 0;
    for (uint32_t p = 0; p < part_count; ++p) {
        const steel_rows_desc& desc = parts[p];
        part[p] = {&desc, next_world, total_rows, 0, total_dofs};
        if (desc.world_count == 0) continue;
        require(desc.world_dof_counts, "world_dof_counts", "every world needs a DOF count");
        require(desc.world_row_counts, "world_row_counts", "every world needs a row count");
        for (uint32_t k = 0; k < desc.world_count; ++k, ++next_world) {
            part_of[next_world] = p;
            set.world_dof_offset[next_world] = uint32_t(total_dofs);
            set.world_row_offset[next_world] = uint32_t(total_rows);
            total_dofs += desc.world_dof_counts[k];
            total_rows += desc.world_row_counts[k];
            if (total_dofs > UINT32_MAX || total_rows > UINT32_MAX)
                bad(format("world %u: the batch's total DOF or row count passes 2^32 - 1",
                           next_world));
        }
        const uint64_t dofs = total_dofs - part[p].dof0, rows = total_rows - part[p].row0;
        if (dofs > 0)
            require(desc.unconstrained_velocity, "unconstrained_velocity", "there are DOFs");
        if (rows > 0) {
            require(desc.block_offset, "block_offset", "there are rows");
            require(desc.block_length, "block_length", "there are rows");
            require(desc.bias, "bias", "there are rows");
            require(desc.kind, "kind", "there are rows");
        }
        if (desc.value_count > 0) {
            require(desc.jacobian, "jacobian", "value_count > 0");
            require(desc.response, "response", "value_count > 0");
        }
    }
    set.world_dof_offset[world_count] = uint32_t(total_dofs);
    set.world_row_offset[world_count] = uint32_t(total_rows);

    // Sized, not filled: every value is written by the phases below (a batch uploaded every step
    // keeps its sizes, so nothing is written twice).
    set.unconstrained_velocity.resize(total_dofs);
    set.block_length.resize(2 * total_rows);
    set.block_offset.resize(2 * total_rows);
    set.value_offset.resize(total_rows + 1);
    for (std::vector<Real>* array :
         {&set.bias, &set.lower, &set.upper, &set.friction, &set.regularization,
          &set.initial_impulse, &set.jy, &set.cone_cross_01, &set.cone_cross_10})
        array->resize(total_rows);
    set.kind.resize(total_rows);
    set.normal_row.resize(total_rows);

    // Where each row's values start: a running sum, on this thread.
    uint64_t value_total = 0;
    for (uint32_t p = 0; p < part_count; ++p) {
        part[p].value0 = value_total;
        const uint64_t end = p + 1 < part_count ? part[p + 1].row0 : total_rows;
        for (uint64_t r = part[p].row0; r < end; ++r) {
            const uint64_t local = r - part[p].row0;
            set.value_offset[r] = value_total;
            value_total +=
                uint64_t(parts[p].block_length[2 * local]) + parts[p].block_length[2 * local + 1];
        }
    }
    set.value_offset[total_rows] = value_total;

    // Then world by world, phase after phase as one thread would check them: v-hat, the
    // structure (so values are only read where they exist), the cone pairs, the numbers.
    const auto in_part = [&](uint32_t world) -> const Part& { return part[part_of[world]]; };
    const auto values_held = [&](uint32_t p) {
        return (p + 1 < part_count ? part[p + 1].value0 : value_total) - part[p].value0;
    };
    try {
        for_each_world(pool, world_count, [&](uint32_t w) { copy_velocity(in_part(w), set, w); });
        for_each_world(pool, world_count, [&](uint32_t w) { copy_structure(in_part(w), set, w); });
        for_each_world(pool, world_count, [&](uint32_t w) { check_cone_pairs(set, w); });
        for (uint32_t p = 0; p < part_count; ++p)
            if (values_held(p) != parts[p].value_count)
                bad(format("value_count = %" PRIu64 " but the rows' blocks hold %" PRIu64 " values",
                           parts[p].value_count, values_held(p)));
        set.jacobian.resize(value_total);
        set.response.resize(value_total);
        for_each_world(pool, world_count, [&](uint32_t w) { copy_numbers(in_part(w), set, w); });
        for_each_world(pool, world_count, [&](uint32_t w) { compute_cone_cross_terms(set, w); });
        for_each_world(pool, world_count, [&](uint32_t w) {
            check_world_denominators(set, w, cfm, contact_regularization, kWhere);
        });
    } catch (Error& error) {
        if (error.status != STEEL_ERROR_INVALID_ARGUMENT) throw;
        // The message names the first bad world of the first phase that found one; add every
        // refused world (refused_worlds.hpp), each world through all the phases alone. Not when
        // a part's value_count is wrong: its values cannot be read.
        for (uint32_t p = 0; p < part_count; ++p)
            if (values_held(p) != parts[p].value_count) throw;
        set.jacobian.resize(value_total);
        set.response.resize(value_total);
        error.message += refused_worlds_text(
            find_refused_worlds(pool, 0, world_count,
                                [&](uint32_t w) {
                                    copy_velocity(in_part(w), set, w);
                                    copy_structure(in_part(w), set, w);
                                    check_cone_pairs(set, w);
                                    copy_numbers(in_part(w), set, w);
                                    compute_cone_cross_terms(set, w);
                                    check_world_denominators(set, w, cfm, contact_regularization,
                                                             kWhere);
                                }),
            world_count);
        throw;
    }
}

template <class Real>
void build_row_set_into(const steel_rows_desc& desc, uint32_t batch_world_count, double cfm,
                        double contact_regularization, RowSet<Real>& set, ThreadPool* pool) {
    build_row_set_into(&desc, 1, batch_world_count, cfm, contact_regularization, set, pool);
}

template <class Real>
RowSet<Real> build_row_set(const steel_rows_desc& desc, uint32_t batch_world_count, double cfm,
                           double contact_regularization) {
    RowSet<Real> set;
    build_row_set_into(desc, batch_world_count, cfm, contact_regularization, set);
    return set;
}

template <class Real>
void check_denominators(const RowSet<Real>& set, double cfm, double contact_regularization,
                        const char* where) {
    for (uint32_t w = 0; w < set.world_count; ++w)
        check_world_denominators(set, w, cfm, contact_regularization, where);
}

template void build_row_set_into<float>(const steel_rows_desc&, uint32_t, double, double,
                                        RowSet<float>&, ThreadPool*);
template void build_row_set_into<double>(const steel_rows_desc&, uint32_t, double, double,
                                         RowSet<double>&, ThreadPool*);
template void build_row_set_into<float>(const steel_rows_desc*, uint32_t, uint32_t, double, double,
                                        RowSet<float>&, ThreadPool*);
template void build_row_set_into<double>(const steel_rows_desc*, uint32_t, uint32_t, double, double,
                                         RowSet<double>&, ThreadPool*);
template RowSet<float> build_row_set<float>(const steel_rows_desc&, uint32_t, double, double);
template RowSet<double> build_row_set<double>(const steel_rows_desc&, uint32_t, double, double);
template void check_denominators<float>(const RowSet<float>&, double, double, const char*);
template void check_denominators<double>(const RowSet<double>&, double, double, const char*);

} // namespace steel
