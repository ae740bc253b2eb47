// The propagation response's walks through an articulation (SPEC 7). Impulses applied during a
// sweep are not pushed through the whole tree at once: each body keeps the articulated bias
// impulse p of everything applied in its subtree since the last sync, and each DOF the joint
// impulse tau applied at it. Applying an impulse updates p from the body up to the root; reading
// a body's velocity walks from the root down to it:
//
//     dqd_j = D_j^-1 (tau_j - S_j^T p_j - U_j^T dv_parent),   dv_j = dv_parent + S_j dqd_j
//
// Both cost the body's depth, and every read sees every impulse applied anywhere in the tree,
// so a sweep is exactly the Gauss-Seidel sweep of the immediate response. sync() pushes the
// accumulated impulses into qd once per sweep (linear in the tree) and clears them, so that the
// world's velocity vector is consistent again.
#pragma once

#include "../host_device.hpp"
#include "../sum6.hpp"
#include "propagation_view.hpp"

#include <cstdint>
#include <vector>

namespace steel::propagation {

// The walk's cache of one tree: the last body of the tree read, its velocity kept current while
// impulses land on it alone, and those impulses, waiting (as bias, minus the impulse) to walk up
// the tree once. The rows of a contact (and a finger's several contacts) read one body in turn,
// and an impulse at b moves b by its 6x6 response W_bb, so only the first read walks down.
//
// One per tree rather than one per walk: impulses on another tree neither move this tree's
// bodies nor need this tree's pending impulses, so a tree keeps its cache while the walk works
// elsewhere. The colored sweep leans on that: its colors visit a tree through one contact each,
// its consecutive colors often at one body, and a color's contacts (on different trees) use
// different caches, so they give the same bits in any order or at once (colored_sweep.hpp).
template <class Real> struct TreeCache {
    Real velocity[6] = {0, 0, 0, 0, 0, 0};
    Real pending[6] = {0, 0, 0, 0, 0, 0};
    int32_t body = -1;       // -1: none
    int32_t has_pending = 0; // pending holds impulses not yet carried up
};

// A worker thread's scratch for the walks, sized for the largest world.
template <class Real> struct WalkScratch {
    std::vector<Real> bias, joint_impulse, body_change;
    std::vector<TreeCache<Real>> parked;
    std::vector<int32_t> path;
    void reserve(uint32_t bodies, uint32_t dofs, uint32_t depth) {
        if (bias.size() < 6 * size_t(bodies)) bias.resize(6 * size_t(bodies));
        if (body_change.size() < 6 * size_t(bodies)) body_change.resize(6 * size_t(bodies));
        if (parked.size() < bodies) parked.resize(bodies);
        if (joint_impulse.size() < dofs) joint_impulse.resize(dofs);
        if (path.size() < depth) path.resize(depth);
    }
};

template <class Real> struct TreeWalk {
    PropagationView<Real> set;
    uint32_t body0;      // the world's first global tree body
    uint32_t dof0;       // the world's first global DOF
    Real* velocity;      // the world's qd at the last sync (world-local DOFs)
    Real* bias;          // [6 * world bodies] p per body since the last sync
    Real* joint_impulse; // [world DOFs] tau per DOF since the last sync
    Real* body_change;   // [6 * world bodies] scratch for sync
    int32_t* path;       // [set.max_depth] scratch
    // [world bodies]: each tree's cache at its root's slot, while the walk works on another tree
    // (or on none: parked). May be null without use_cache.
    TreeCache<Real>* parked;
    // The cache of the tree the walk works on, the tree rooted at cache_root (-1: none, and then
    // cache.body is -1 too). Held here rather than in `parked`, so that row after row on one tree
    // reads and writes it without looking the tree up. Off (use_cache false) while the responses
    // the cache needs are being computed.
    TreeCache<Real> cache = {};
    int32_t cache_root = -1;
    bool use_cache = true;

    // Empties every tree's cache (a solve's start); `bodies`: the world's tree bodies.
    STEEL_HOST_DEVICE void clear_caches(uint32_t bodies) {
        if (!use_cache) return;
        for (uint32_t k = 0; k < bodies; ++k)
            parked[k] = TreeCache<Real>();
        cache.body = -1;
        cache_root = -1;
    }
    // Puts the working tree's cache back in its slot; the walk then holds no tree's.
    STEEL_HOST_DEVICE void park() {
        if (cache_root < 0) return;
        parked[uint32_t(cache_root) - body0] = cache;
        cache.body = -1;
        cache_root = -1;
    }
    // Makes the walk's cache that of body's tree.
    STEEL_HOST_DEVICE void work_on_tree_of(int32_t body) {
        const int32_t root = set.root[size_t(body)];
        if (root == cache_root) return;
        park();
        cache = parked[uint32_t(root) - body0];
        cache_root = root;
    }
    // Carries the impulses waiting at the working tree's cached body up to the root.
    STEEL_HOST_DEVICE void flush() {
        if (!cache.has_pending) return;
        carry_up(cache.body, cache.pending);
        for (int r = 0; r < 6; ++r)
            cache.pending[r] = 0;
        cache.has_pending = 0;
    }
    // Flushes and forgets the working tree's cached body.
    STEEL_HOST_DEVICE void drop_cache() {
        flush();
        cache.body = -1;
    }
    // Flushes and forgets every tree's cache in world `world` (before a sync).
    STEEL_HOST_DEVICE void drop_caches(uint32_t world) {
        if (!use_cache) return;
        for (uint32_t b = body0; b < set.world_body_offset[world + 1]; ++b)
            if (set.parent[b] < 0) {
                work_on_tree_of(int32_t(b));
                drop_cache();
                park();
            }
    }

    STEEL_HOST_DEVICE const Real* s(uint32_t world_dof) const {
        return set.subspace + 6 * size_t(dof0 + world_dof);
    }
    STEEL_HOST_DEVICE const Real* u(uint32_t world_dof) const {
        return set.transmitted + 6 * size_t(dof0 + world_dof);
    }
    STEEL_HOST_DEVICE Real* p(int32_t body) { return bias + 6 * size_t(uint32_t(body) - body0); }

    // dqd of body j's joint given its parent's velocity change.
    STEEL_HOST_DEVICE void joint_rates(int32_t j, const Real dv_parent[6], Real* dqd) {
        const uint32_t first = set.dof_first[size_t(j)], count = set.dof_count[size_t(j)];
        const Real* pj = p(j);
        if (count == 1) { // revolute and prismatic joints: the same arithmetic, unrolled
            const Real* sa = s(first);
            const Real* ua = u(first);
            // The S.p part first: it does not wait for the parent's dv.
            const Real value = (joint_impulse[first] - dot6(sa, pj)) - dot6(ua, dv_parent);
            dqd[0] = set.d_inverse[set.d_inverse_offset[size_t(j)]] * value; // -0 + x is x
            return;
        }
        Real rhs[6];
        for (uint32_t a = 0; a < count; ++a) {
            const Real* sa = s(first + a);
            const Real* ua = u(first + a);
            rhs[a] = (joint_impulse[first + a] - dot6(sa, pj)) - dot6(ua, dv_parent);
        }
        const Real* d = set.d_inverse + set.d_inverse_offset[size_t(j)];
        for (uint32_t a = 0; a < count; ++a) {
            Real value = kSumStart<Real>;
            for (uint32_t b = 0; b < count; ++b)
                value += d[a * count + b] * rhs[b];
            dqd[a] = value;
        }
    }

    // Walks from the root down to `target`, leaving its velocity change in dv and, when
    // `velocity_out` is set, its current spatial velocity there. Returns target's own dqd in dqd.
    STEEL_HOST_DEVICE void walk_down(int32_t target, Real dv[6], Real* velocity_out, Real dqd[6]) {
        uint32_t depth = 0;
        for (int32_t j = target; j >= 0; j = set.parent[size_t(j)])
            path[depth++] = j;
        for (int r = 0; r < 6; ++r) {
            dv[r] = kSumStart<Real>;
            if (velocity_out) velocity_out[r] = kSumStart<Real>;
        }
        while (depth-- > 0) {
            const int32_t j = path[depth];
            const uint32_t first = set.dof_first[size_t(j)], count = set.dof_count[size_t(j)];
            joint_rates(j, dv, dqd);
            if (count == 1) { // revolute and prismatic joints: the loop below, unrolled
                const Real* sa = s(first);
                const Real rate = velocity[first] + dqd[0];
                for (int r = 0; r < 6; ++r)
                    dv[r] += sa[r] * dqd[0];
                if (velocity_out)
                    for (int r = 0; r < 6; ++r)
                        velocity_out[r] += sa[r] * rate;
                continue;
            }
            for (uint32_t a = 0; a < count; ++a) {
                const Real* sa = s(first + a);
                for (int r = 0; r < 6; ++r)
                    dv[r] += sa[r] * dqd[a];
                if (velocity_out)
                    for (int r = 0; r < 6; ++r)
                        velocity_out[r] += sa[r] * (velocity[first + a] + dqd[a]);
            }
        }
    }

    // The body's spatial velocity now.
    STEEL_HOST_DEVICE void body_velocity(int32_t body, Real out[6]) {
        if (body != cache.body) {
            Real dv[6], dqd[6];
            if (!use_cache) {
                walk_down(body, dv, out, dqd);
                return;
            }
            work_on_tree_of(body);
            if (body != cache.body) {
                drop_cache();
                walk_down(body, dv, cache.velocity, dqd);
                cache.body = body;
            }
        }
        for (int r = 0; r < 6; ++r)
            out[r] = cache.velocity[r];
    }

    // The DOF's rate now.
    STEEL_HOST_DEVICE Real joint_rate(uint32_t world_dof) {
        const int32_t body = set.dof_body[size_t(dof0 + world_dof)];
        if (use_cache) { // the walk down reads p, which the pending impulses are not in yet
            work_on_tree_of(body);
            flush();
        }
        Real dv[6], dqd[6];
        walk_down(body, dv, nullptr, dqd);
        return velocity[world_dof] + dqd[world_dof - set.dof_first[size_t(body)]];
    }

    // Adds delta to p of `body` and carries what its joint passes on up to the root: the part of
    // an impulse that the joint does not absorb by moving, delta - U D^-1 S^T delta.
    STEEL_HOST_DEVICE void carry_up(int32_t body, Real delta[6]) {
        for (int32_t j = body; j >= 0; j = set.parent[size_t(j)]) {
            Real* pj = p(j);
            for (int r = 0; r < 6; ++r)
                pj[r] += delta[r];
            const uint32_t first = set.dof_first[size_t(j)], count = set.dof_count[size_t(j)];
            const Real* d = set.d_inverse + set.d_inverse_offset[size_t(j)];
            if (count == 1) { // the same arithmetic as below, unrolled
                const Real coefficient = d[0] * dot6(s(first), delta); // -0 + x is x
                const Real* ua = u(first);
                for (int r = 0; r < 6; ++r)
                    delta[r] -= ua[r] * coefficient;
                continue;
            }
            Real st[6];
            for (uint32_t a = 0; a < count; ++a)
                st[a] = dot6(s(first + a), delta);
            for (uint32_t a = 0; a < count; ++a) {
                Real coefficient = kSumStart<Real>; // (D^-1 S^T delta)_a
                for (uint32_t b = 0; b < count; ++b)
                    coefficient += d[a * count + b] * st[b];
                const Real* ua = u(first + a);
                for (int r = 0; r < 6; ++r)
                    delta[r] -= ua[r] * coefficient;
            }
        }
    }

    // A spatial impulse scale * force applied at the body (p is the bias: minus the impulse).
    STEEL_HOST_DEVICE void apply_body_impulse(int32_t body, const Real force[6], Real scale) {
        if (use_cache) {
            if (body != cache.body) work_on_tree_of(body);
            if (body == cache.body) {
                for (int r = 0; r < 6; ++r)
                    cache.pending[r] -= scale * force[r];
                cache.has_pending = 1;
                const Real* response = set.body_response + 36 * size_t(body);
                for (int r = 0; r < 6; ++r) {
                    Real change = kSumStart<Real>;
                    for (int c = 0; c < 6; ++c)
                        change += response[6 * r + c] * force[c];
                    cache.velocity[r] += scale * change;
                }
                return;
            }
            drop_cache(); // the impulse moves the cached body too
        }
        Real delta[6];
        for (int r = 0; r < 6; ++r)
            delta[r] = -scale * force[r];
        carry_up(body, delta);
    }

    // A joint impulse `amount` at one DOF: the joint passes U D^-1 e_dof amount to its parent.
    STEEL_HOST_DEVICE void apply_joint_impulse(uint32_t world_dof, Real amount) {
        const int32_t body = set.dof_body[size_t(dof0 + world_dof)];
        if (use_cache) {
            work_on_tree_of(body);
            drop_cache();
        }
        joint_impulse[world_dof] += amount;
        const int32_t parent = set.parent[size_t(body)];
        if (parent < 0) return;
        const uint32_t first = set.dof_first[size_t(body)], count = set.dof_count[size_t(body)];
        const Real* d = set.d_inverse + set.d_inverse_offset[size_t(body)];
        const uint32_t column = world_dof - first;
        Real delta[6];
        for (int r = 0; r < 6; ++r)
            delta[r] = kSumStart<Real>;
        for (uint32_t a = 0; a < count; ++a) {
            const Real* ua = u(first + a);
            for (int r = 0; r < 6; ++r)
                delta[r] += ua[r] * d[a * count + column] * amount;
        }
        carry_up(parent, delta);
    }
};

// Pushes the accumulated impulses of the world's trees into qd and clears them (SPEC 7's
// "each iteration, propagation of the accumulated impulses through the tree").
template <class Real>
STEEL_HOST_DEVICE void sync_world(TreeWalk<Real>& walk, uint32_t world) { // parents first, one pass
    const PropagationView<Real>& set = walk.set;
    const uint32_t first = set.world_body_offset[world], last = set.world_body_offset[world + 1];
    walk.drop_caches(world);
    for (uint32_t b = first; b < last; ++b) {
        const int32_t parent = set.parent[b];
        Real zero[6] = {0, 0, 0, 0, 0, 0};
        const Real* dv_parent =
            parent >= 0 ? walk.body_change + 6 * size_t(uint32_t(parent) - first) : zero;
        Real dqd[6];
        walk.joint_rates(int32_t(b), dv_parent, dqd);
        Real* dv = walk.body_change + 6 * size_t(b - first);
        for (int r = 0; r < 6; ++r)
            dv[r] = dv_parent[r];
        const uint32_t dof = set.dof_first[b], count = set.dof_count[b];
        if (count == 1) { // revolute and prismatic joints: the loops below, unrolled
            const Real* sa = walk.s(dof);
            for (int r = 0; r < 6; ++r)
                dv[r] += sa[r] * dqd[0];
            walk.velocity[dof] += dqd[0];
            continue;
        }
        for (uint32_t a = 0; a < count; ++a) {
            const Real* sa = walk.s(dof + a);
            for (int r = 0; r < 6; ++r)
                dv[r] += sa[r] * dqd[a];
        }
        for (uint32_t a = 0; a < count; ++a)
            walk.velocity[dof + a] += dqd[a];
    }
    for (uint32_t k = 0; k < 6 * (last - first); ++k)
        walk.bias[k] = 0;
    for (uint32_t b = first; b < last; ++b)
        for (uint32_t a = 0; a < set.dof_count[b]; ++a)
            walk.joint_impulse[set.dof_first[b] + a] = 0;
}

} // namespace steel::propagation
