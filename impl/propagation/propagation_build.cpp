#include "propagation_build.hpp"

#include "../error.hpp"
#include "../thread_pool.hpp"
#include "articulated_body.hpp"
#include "propagation_rows.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <type_traits>
#include <utility>

namespace steel::propagation {

namespace {

// The point a tree's spatial quantities are taken about: its root joint's origin, not the world
// origin. About the world origin a tree at distance X has axes (o x a) of size X and inertias of
// size m X^2 whose differences are of size 1, so the walks would cancel them away far from the
// origin (float32 a few kilometres out). Joint-space results do not depend on the point, only
// their rounding does; each tree's subspace, inertias and body terms use its own.
scene::Vec3 tree_reference(const scene::ArticulationRecord& art) {
    return art.kinematics.joint_origin[0];
}

// A motion vector (angular, linear velocity of the point at the origin) about `reference`.
scene::Spatial motion_about(const scene::Spatial& motion, const scene::Vec3& reference) {
    return {motion.angular, motion.linear + cross(motion.angular, reference)};
}

// A tree's kinematics with its subspace and inertias about tree_reference, for the factorization.
void kinematics_about_reference(const scene::ArticulationRecord& art, scene::Kinematics& out) {
    const scene::Vec3 reference = tree_reference(art);
    out.subspace.resize(art.kinematics.subspace.size());
    for (size_t k = 0; k < out.subspace.size(); ++k)
        out.subspace[k] = motion_about(art.kinematics.subspace[k], reference);
    out.body_inertia = art.kinematics.body_inertia;
    for (scene::Inertia& inertia : out.body_inertia)
        inertia.com = inertia.com - reference;
}

// The shapes of one world's trees, from the models alone: each tree body's parent, joint DOFs,
// depth and room in d_inverse, the tree body owning each DOF, and where each articulation's
// bodies went, appended to first_body (-1: a one-body articulation, solved with its uploaded
// blocks). Cheap, and done in order; the numbers follow world by world on the batch's threads
// (add_tree_factors).
void add_tree_shapes(const scene::WorldRecord& world, uint32_t dof0, PropagationSet<double>& out,
                     std::vector<uint32_t>& depth, std::vector<int32_t>& first_body) {
    for (const scene::ArticulationRecord& art : world.articulations) {
        first_body.push_back(-1);
        const scene::ArticulationModel& model = art.model;
        if (model.joints.size() < 2) continue;
        const int32_t base = int32_t(out.parent.size());
        first_body.back() = base;
        for (size_t i = 0; i < model.joints.size(); ++i) {
            const int32_t parent = model.joints[i].parent;
            const uint32_t dofs = model.dof_offset[i + 1] - model.dof_offset[i];
            out.parent.push_back(parent < 0 ? -1 : base + parent);
            out.root.push_back(parent < 0 ? base + int32_t(i) : out.root[size_t(base + parent)]);
            out.dof_first.push_back(art.first_dof + model.dof_offset[i]);
            out.dof_count.push_back(dofs);
            out.d_inverse_offset.push_back(out.d_inverse_offset.back() + dofs * dofs);
            depth.push_back(parent < 0 ? 1 : depth[size_t(base + parent)] + 1);
            out.max_depth = std::max(out.max_depth, depth.back());
            for (uint32_t k = model.dof_offset[i]; k < model.dof_offset[i + 1]; ++k)
                out.dof_body[size_t(dof0) + art.first_dof + k] = base + int32_t(i);
        }
    }
}

// The numbers of world w's trees: each one's articulated-body factorization, into the room
// add_tree_shapes made for it. Writes only world w's tree bodies and DOFs.
void add_tree_factors(const scene::WorldRecord& world, uint32_t w, uint32_t dof0,
                      const int32_t* first_body, PropagationSet<double>& out,
                      ArticulatedBodyFactor& factor, scene::Kinematics& local) {
    for (size_t a = 0; a < world.articulations.size(); ++a) {
        if (first_body[a] < 0) continue;
        const scene::ArticulationRecord& art = world.articulations[a];
        kinematics_about_reference(art, local);
        if (!factor_articulated_body(art.model, local, art.augmentation, factor))
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("propagation response: world %u, articulation rooted at body %u: a joint's "
                        "articulated inertia D is not positive definite",
                        w, art.first_body));
        // The bodies' D^-1 one after another, as the shapes laid them out.
        std::copy(factor.d_inverse.begin(), factor.d_inverse.end(),
                  out.d_inverse.begin() + out.d_inverse_offset[size_t(first_body[a])]);
        const size_t first_dof = 6 * (size_t(dof0) + art.first_dof);
        std::copy(factor.subspace.begin(), factor.subspace.end(),
                  out.subspace.begin() + long(first_dof));
        std::copy(factor.transmitted.begin(), factor.transmitted.end(),
                  out.transmitted.begin() + long(first_dof));
    }
}

// The terms, kept blocks and denominators of one world's rows, and its touched bodies' responses.
template <class Real>
void add_rows(const scene::WorldRecord& world, uint32_t w, const RowSet<Real>& rows,
              const int32_t* first_body, PropagationSet<double>& out) {
    const uint32_t row0 = rows.world_row_offset[w];
    const uint32_t m = rows.row_count(w);
    if (world.term_offset.size() != size_t(m) + 1)
        fail(STEEL_ERROR_INTERNAL,
             format("propagation response: world %u has %u rows but the scene recorded %zu", w, m,
                    world.term_offset.size() - 1));
    for (uint32_t r = 0; r < m; ++r) {
        const uint32_t global = row0 + r;
        if (rows.kind[global] == STEEL_ROW_FRICTION_CONE)
            fail(STEEL_ERROR_INVALID_ARGUMENT,
                 format("world %u, row %u is FRICTION_CONE: coupled friction needs "
                        "articulated_contact_response = "
                        "STEEL_RESPONSE_IMMEDIATE (docs/propagation-and-colored.md); upload the "
                        "scene with friction_model BOX",
                        w, r));
        uint8_t immediate = 0;
        // A block covers one whole articulation; it stays immediate unless its DOFs are a tree's.
        for (uint32_t block = 0; block < 2; ++block) {
            if (rows.block_length[2 * size_t(global) + block] == 0) continue;
            const uint32_t first_dof =
                rows.world_dof_offset[w] + rows.block_offset[2 * size_t(global) + block];
            if (out.dof_body[first_dof] < 0) immediate = uint8_t(immediate | (1u << block));
        }
        out.immediate_blocks.push_back(immediate);
        for (uint32_t t = world.term_offset[r]; t < world.term_offset[r + 1]; ++t) {
            const scene::PropagationTerm& term = world.terms[t];
            const int32_t base = first_body[size_t(term.articulation)];
            if (base < 0) continue; // a one-body articulation: its block carries it
            out.term_body.push_back(term.body >= 0 ? base + term.body : -1);
            out.term_dof.push_back(term.dof >= 0
                                       ? world.articulations[size_t(term.articulation)].first_dof +
                                             uint32_t(term.dof)
                                       : 0);
            double value[6];
            std::copy(term.value, term.value + 6, value);
            // A body term is a force (moment about the world origin, force): its moment goes to
            // the tree's point.
            if (term.body >= 0) {
                const scene::Vec3 force{value[3], value[4], value[5]};
                const scene::Vec3 moment =
                    scene::Vec3{value[0], value[1], value[2]} -
                    cross(tree_reference(world.articulations[size_t(term.articulation)]), force);
                value[0] = moment.x;
                value[1] = moment.y;
                value[2] = moment.z;
            }
            out.term_value.insert(out.term_value.end(), value, value + 6);
        }
        out.row_term_offset.push_back(uint32_t(out.term_body.size()));
    }
}

// What add_denominators works in, kept from world to world of a run.
struct DenominatorScratch {
    std::vector<double> velocity, bias, joint, change;
    std::vector<int32_t> path;
    std::vector<bool> done;
};

// Fills body_response for every body a term touches and the denominator of every row of world
// w, by applying unit impulses to a world at rest and reading what moves. Writes only world w's
// bodies and rows, so worlds can be done on different threads.
template <class Real>
void add_denominators(uint32_t w, const RowSet<Real>& rows, PropagationSet<double>& out,
                      DenominatorScratch& scratch) {
    const uint32_t body0 = out.world_body_offset[w], bodies = out.world_body_offset[w + 1] - body0;
    const uint32_t n = rows.dof_count(w);
    std::vector<double>& velocity = scratch.velocity;
    std::vector<double>& bias = scratch.bias;
    std::vector<double>& joint = scratch.joint;
    std::vector<double>& change = scratch.change;
    velocity.assign(n, 0.0);
    bias.assign(6 * size_t(bodies), 0.0);
    joint.assign(n, 0.0);
    change.assign(6 * size_t(bodies), 0.0); // as fresh arrays had it
    std::vector<int32_t>& path = scratch.path;
    path.resize(std::max(out.max_depth, 1u));
    // The walk reads world w's tree arrays only, complete by now (add_tree_factors ran first;
    // the view's denominator is not read: it is what this function fills in).
    TreeWalk<double> walk{propagation_view_of<double>(out),
                          body0,
                          rows.world_dof_offset[w],
                          velocity.data(),
                          bias.data(),
                          joint.data(),
                          change.data(),
                          path.data(),
                          nullptr};
    walk.use_cache = false; // the responses the cache needs are what is computed here
    const auto clear = [&] {
        std::fill(bias.begin(), bias.end(), 0.0);
        std::fill(joint.begin(), joint.end(), 0.0);
    };
    const uint32_t row0 = rows.world_row_offset[w];
    std::vector<bool>& done = scratch.done;
    done.assign(bodies, false);
    for (uint32_t r = 0; r < rows.row_count(w); ++r)
        for (uint32_t t = out.row_term_offset[row0 + r]; t < out.row_term_offset[row0 + r + 1];
             ++t) {
            const int32_t body = out.term_body[t];
            if (body < 0 || done[size_t(body) - body0]) continue;
            done[size_t(body) - body0] = true;
            double* response = out.body_response.data() + 36 * size_t(body);
            for (int c = 0; c < 6; ++c) {
                double unit[6] = {0, 0, 0, 0, 0, 0}, column[6];
                unit[c] = 1;
                walk.apply_body_impulse(body, unit, 1.0);
                walk.body_velocity(body, column);
                for (int k = 0; k < 6; ++k)
                    response[6 * k + c] = column[k];
                clear();
            }
        }
    for (uint32_t r = 0; r < rows.row_count(w); ++r) {
        const uint32_t global = row0 + r;
        double d = 0;
        const Real* j = rows.jacobian.data() + rows.value_offset[global];
        const Real* y = rows.response.data() + rows.value_offset[global];
        for (uint32_t block = 0; block < 2; ++block) {
            const uint32_t length = rows.block_length[2 * size_t(global) + block];
            if (out.immediate_blocks[global] & (1u << block))
                for (uint32_t k = 0; k < length; ++k)
                    d += double(j[k]) * double(y[k]);
            j += length;
            y += length;
        }
        const uint32_t first = out.row_term_offset[global], last = out.row_term_offset[global + 1];
        if (last == first + 1 && out.term_body[first] >= 0) {
            // One body: f^T W f with the body's 6x6 response.
            const double* f = out.term_value.data() + 6 * size_t(first);
            const double* response = out.body_response.data() + 36 * size_t(out.term_body[first]);
            for (int a = 0; a < 6; ++a)
                for (int b = 0; b < 6; ++b)
                    d += f[a] * response[6 * a + b] * f[b];
        } else if (last > first) {
            // Several terms, possibly on one tree (a contact between two of its links): apply them
            // all and read them all, so every cross term is in.
            for (uint32_t t = first; t < last; ++t) {
                const double* value = out.term_value.data() + 6 * size_t(t);
                if (out.term_body[t] >= 0)
                    walk.apply_body_impulse(out.term_body[t], value, 1.0);
                else
                    walk.apply_joint_impulse(out.term_dof[t], value[0]);
            }
            for (uint32_t t = first; t < last; ++t) {
                const double* value = out.term_value.data() + 6 * size_t(t);
                if (out.term_body[t] >= 0) {
                    double velocity_now[6];
                    walk.body_velocity(out.term_body[t], velocity_now);
                    for (int k = 0; k < 6; ++k)
                        d += value[k] * velocity_now[k];
                } else {
                    d += value[0] * walk.joint_rate(out.term_dof[t]);
                }
            }
            clear();
        }
        out.denominator[global] = d;
    }
}

// `to` holds `from` in its precision, its arrays reused: rounded once, or in float64 swapped
// (`from` then keeps the memory of the set before, for the next build).
template <class To> void take_in(PropagationSet<double>& from, PropagationSet<To>& to) {
    if constexpr (std::is_same_v<To, double>) {
        std::swap(from, to);
    } else {
        const auto round = [](const std::vector<double>& values, std::vector<To>& into) {
            into.assign(values.begin(), values.end());
        };
        to.world_count = from.world_count;
        to.world_body_offset = from.world_body_offset;
        to.max_depth = from.max_depth;
        to.parent = from.parent;
        to.root = from.root;
        to.dof_first = from.dof_first;
        to.dof_count = from.dof_count;
        to.d_inverse_offset = from.d_inverse_offset;
        round(from.d_inverse, to.d_inverse);
        round(from.body_response, to.body_response);
        round(from.subspace, to.subspace);
        round(from.transmitted, to.transmitted);
        to.dof_body = from.dof_body;
        to.row_term_offset = from.row_term_offset;
        to.immediate_blocks = from.immediate_blocks;
        round(from.denominator, to.denominator);
        to.term_body = from.term_body;
        to.term_dof = from.term_dof;
        round(from.term_value, to.term_value);
    }
}

} // namespace

template <class Real>
void build_propagation_set_into(const scene::SceneRecord& scene, const RowSet<Real>& rows,
                                PropagationSet<double>& out, PropagationSet<Real>& set,
                                ThreadPool* pool) {
    out.clear();
    out.world_count = rows.world_count;
    out.world_body_offset.assign(1, 0);
    out.d_inverse_offset.assign(1, 0);
    out.subspace.assign(6 * size_t(rows.total_dofs()), 0.0);
    out.transmitted.assign(6 * size_t(rows.total_dofs()), 0.0);
    out.dof_body.assign(rows.total_dofs(), -1);
    out.row_term_offset.assign(1, 0);
    if (scene.worlds.size() != rows.world_count)
        fail(STEEL_ERROR_INTERNAL,
             "propagation response: the scene and the rows disagree on the world count");
    std::vector<uint32_t> depth;
    std::vector<int32_t> first_body;            // per articulation of every world
    std::vector<size_t> world_first_body_start; // per world: where its articulations start
    for (uint32_t w = 0; w < rows.world_count; ++w) {
        world_first_body_start.push_back(first_body.size());
        add_tree_shapes(scene.worlds[w], rows.world_dof_offset[w], out, depth, first_body);
        out.world_body_offset.push_back(uint32_t(out.parent.size()));
    }
    out.d_inverse.resize(out.d_inverse_offset.back());
    out.body_response.assign(36 * out.parent.size(), 0.0);
    for (uint32_t w = 0; w < rows.world_count; ++w)
        add_rows(scene.worlds[w], w, rows, first_body.data() + world_first_body_start[w], out);
    // The factorizations and the walks, nearly all of the build's time, world by world on the
    // batch's threads: each world's values depend on its own inputs only, so any thread count
    // gives the same bits (and a failed factorization is reported for the first such world).
    out.denominator.resize(rows.total_rows());
    const auto numbers = [&](uint32_t, uint32_t first, uint32_t end) {
        ArticulatedBodyFactor factor;
        scene::Kinematics local;
        DenominatorScratch scratch;
        for (uint32_t w = first; w < end; ++w) {
            add_tree_factors(scene.worlds[w], w, rows.world_dof_offset[w],
                             first_body.data() + world_first_body_start[w], out, factor, local);
            add_denominators(w, rows, out, scratch);
        }
    };
    if (pool)
        pool->for_each_run(rows.world_count, numbers);
    else
        numbers(0, 0, rows.world_count);
    take_in(out, set);
}

template <class Real>
PropagationSet<Real> build_propagation_set(const scene::SceneRecord& scene,
                                           const RowSet<Real>& rows) {
    PropagationSet<double> scratch;
    PropagationSet<Real> set;
    build_propagation_set_into(scene, rows, scratch, set);
    return set;
}

template PropagationSet<float> build_propagation_set(const scene::SceneRecord&,
                                                     const RowSet<float>&);
template PropagationSet<double> build_propagation_set(const scene::SceneRecord&,
                                                      const RowSet<double>&);
template void build_propagation_set_into(const scene::SceneRecord&, const RowSet<float>&,
                                         PropagationSet<double>&, PropagationSet<float>&,
                                         ThreadPool*);
template void build_propagation_set_into(const scene::SceneRecord&, const RowSet<double>&,
                                         PropagationSet<double>&, PropagationSet<double>&,
                                         ThreadPool*);

} // namespace steel::propagation
