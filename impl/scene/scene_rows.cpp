#include "scene_rows.hpp"

#include "scene_inputs.hpp"

#include "../dense_cholesky.hpp"
#include "../error.hpp"
#include "../refused_worlds.hpp"
#include "../thread_pool.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>

namespace steel::scene {

namespace {

constexpr const char* kWhere = "steel_batch_upload_scene";

[[noreturn]] void bad(const std::string& message) {
    fail(STEEL_ERROR_INVALID_ARGUMENT, std::string(kWhere) + ": " + message);
}

void require(const void* pointer, const char* field, const char* reason) {
    if (pointer == nullptr) bad(format("%s is NULL but %s", field, reason));
}

// Each check takes place(), a callable naming the item ("world 0, body 3"), and calls it only on
// failure: formatting every item's name up front cost more than building its rows.
template <class Place> void finite(double value, const Place& place, const char* field) {
    if (!std::isfinite(value))
        bad(format("%s: %s = %g is not finite", place().c_str(), field, value));
}

Vec3 vec3(const double* p) {
    return {p[0], p[1], p[2]};
}

template <class Place> void unit(Vec3 v, const Place& place, const char* field) {
    if (std::fabs(norm(v) - 1.0) > 1e-6)
        bad(format("%s: %s has length %.9g; it must be a unit vector", place().c_str(), field,
                   norm(v)));
}

template <class Place> Quat quat(const double* p, const Place& place, const char* field) {
    const Quat q{p[0], p[1], p[2], p[3]};
    const double length = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    if (std::fabs(length - 1.0) > 1e-6)
        bad(format("%s: %s has norm %.9g; it must be a unit quaternion (w, x, y, z)",
                   place().c_str(), field, length));
    return normalized(q);
}

template <class Place> Pose pose(const double* p, const Place& place, const char* field) {
    for (int k = 0; k < 7; ++k)
        finite(p[k], place, field);
    return {vec3(p), quat(p + 3, place, field)};
}

bool cholesky(std::vector<double>& a, uint32_t n) {
    return cholesky_factor_in_place(a.data(), n);
}

void cholesky_solve(const std::vector<double>& l, uint32_t n, double* x) {
    cholesky_solve_in_place(l.data(), n, x);
}

// A side's J values: inline for articulations of up to kInline DOFs, on the heap beyond. Sides
// are made, copied and dropped several times per row; with a heap vector each, allocation was
// most of a small world's build time.
class SideValues {
  public:
    void assign(size_t count, double value) {
        size_ = count;
        if (count > kInline) {
            heap_.assign(count, value);
        } else {
            heap_.clear();
            std::fill(inline_, inline_ + count, value);
        }
    }
    double* data() { return size_ > kInline ? heap_.data() : inline_; }
    const double* data() const { return size_ > kInline ? heap_.data() : inline_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    double& operator[](size_t k) { return data()[k]; }
    double operator[](size_t k) const { return data()[k]; }
    const double* begin() const { return data(); }
    const double* end() const { return data() + size_; }

  private:
    static constexpr size_t kInline = 24;
    double inline_[kInline];
    std::vector<double> heap_;
    size_t size_ = 0;
};

// One side of a row: dense J over one articulation's DOFs, and, for a row acting at a body
// (contact, connect), the body and the spatial force whose J_body^T image the jacobian is.
struct Side {
    int32_t articulation = -1;
    SideValues jacobian;
    int32_t body = -1; // articulation-local; -1: a joint-space row
    Spatial force;
};

class WorldBuilder {
  public:
    // Reads the world's articulations, their factors and body_articulation from `world` and
    // `scratch`, built before it.
    WorldBuilder(BuiltRows& out, WorldRecord& world, WorldScratch& scratch)
        : out_(out), articulations_(world.articulations), factor_(scratch.factor),
          body_articulation_(scratch.body_articulation), scratch_(scratch), world_(world) {
        scratch.pending_articulation.clear();
        scratch.pending_start.clear();
    }

    // The side of a row on body b (-1: the world, no side).
    Side side(int32_t body) const {
        Side s;
        if (body < 0) return s;
        s.articulation = body_articulation_[body];
        s.jacobian.assign(articulations_[s.articulation].model.dof_count(), 0.0);
        return s;
    }
    int32_t local_body(int32_t body) const {
        return body - int32_t(articulations_[body_articulation_[body]].first_body);
    }
    const ArticulationRecord& articulation_of(int32_t body) const {
        return articulations_[body_articulation_[body]];
    }

    // Appends a row with up to two sides, their Y = H~^-1 J^T left to solve_responses. Returns
    // its world-local index, or -1 when the row cannot act (J is zero to 1e-12: both sides
    // static, or a direction no joint can move, like the out-of-plane axis of a planar loop's
    // connect constraint).
    int32_t add_row(Side a, Side b, double bias, int32_t kind, double lower, double upper,
                    int32_t normal_row, double friction, double regularization = 0.0) {
        std::vector<PropagationTerm>& terms = scratch_.terms;
        terms.clear();
        for (const Side* s : {&a, &b})
            append_terms(*s, terms);
        if (a.articulation >= 0 &&
            a.articulation == b.articulation) { // one articulation: one block
            for (size_t k = 0; k < a.jacobian.size(); ++k)
                a.jacobian[k] += b.jacobian[k];
            b = Side{};
        }
        double largest = 0;
        for (const Side* s : {&a, &b})
            for (double value : s->jacobian)
                largest = std::max(largest, std::fabs(value));
        if (largest < 1e-12) return -1;
        if (a.articulation >= 0 && b.articulation >= 0 &&
            articulations_[a.articulation].first_dof > articulations_[b.articulation].first_dof)
            std::swap(a, b);
        for (const Side* s : {&a, &b}) {
            const uint32_t n =
                s->articulation >= 0 ? articulations_[s->articulation].model.dof_count() : 0;
            out_.block_offset.push_back(n > 0 ? articulations_[s->articulation].first_dof : 0);
            out_.block_length.push_back(n);
            if (n == 0) continue;
            scratch_.pending_articulation.push_back(s->articulation);
            scratch_.pending_start.push_back(out_.response.size());
            out_.jacobian.insert(out_.jacobian.end(), s->jacobian.begin(), s->jacobian.end());
            out_.response.insert(out_.response.end(), s->jacobian.begin(), s->jacobian.end());
        }
        out_.bias.push_back(bias);
        out_.kind.push_back(kind);
        out_.lower.push_back(lower);
        out_.upper.push_back(upper);
        out_.normal_row.push_back(normal_row);
        out_.friction.push_back(friction);
        out_.regularization.push_back(regularization);
        out_.initial_impulse.push_back(0.0);
        world_.terms.insert(world_.terms.end(), terms.begin(), terms.end());
        world_.term_offset.push_back(uint32_t(world_.terms.size()));
        return int32_t(out_.row_counts.back()++);
    }

    // A point-velocity side: J = direction . (velocity of world point p on the body).
    Side point_side(int32_t body, Vec3 point, Vec3 direction) const {
        Side s = side(body);
        if (body >= 0 && !s.jacobian.empty()) {
            point_jacobian(articulation_of(body).model, articulation_of(body).kinematics,
                           local_body(body), point, direction, s.jacobian.data());
            s.body = local_body(body);
            s.force = {cross(point, direction), direction}; // n.(v_O + w x p) = (p x n).w + n.v_O
        }
        return s;
    }

    bool can_act(const Side& a, const Side& b) const {
        Side sum = a;
        if (a.articulation >= 0 && a.articulation == b.articulation) {
            for (size_t k = 0; k < sum.jacobian.size(); ++k)
                sum.jacobian[k] += b.jacobian[k];
        } else {
            for (double value : b.jacobian)
                if (std::fabs(value) >= 1e-12) return true;
        }
        for (double value : sum.jacobian)
            if (std::fabs(value) >= 1e-12) return true;
        return false;
    }

    // Turns every J block the rows added into Y = H~^-1 J^T, in place in the rows' response
    // array: articulation by articulation, four blocks of one articulation at a time. Each
    // block gets the bits of a solve of its own; a world of 100 boxes spent 40 % of its build
    // in one solve after another, each waiting on its own dependent subtractions.
    void solve_responses() {
        const std::vector<int32_t>& articulation = scratch_.pending_articulation;
        const std::vector<size_t>& start = scratch_.pending_start;
        std::vector<size_t>& grouped = scratch_.grouped_start;
        std::vector<uint32_t>& end = scratch_.group_end; // where each group starts, then ends
        end.assign(articulations_.size() + 1, 0);
        for (int32_t a : articulation)
            ++end[size_t(a) + 1];
        for (size_t a = 1; a < end.size(); ++a)
            end[a] += end[a - 1];
        grouped.resize(start.size());
        for (size_t k = 0; k < start.size(); ++k)
            grouped[end[size_t(articulation[k])]++] = start[k];
        double* values = out_.response.data();
        uint32_t first = 0;
        for (size_t a = 0; a < articulations_.size(); ++a) {
            const double* l = factor_[a].data();
            const uint32_t n = articulations_[a].model.dof_count();
            uint32_t k = first;
            for (; k + 4 <= end[a]; k += 4) {
                double* const x[4] = {values + grouped[k], values + grouped[k + 1],
                                      values + grouped[k + 2], values + grouped[k + 3]};
                cholesky_solve_in_place_4(l, n, x);
            }
            for (; k < end[a]; ++k)
                cholesky_solve_in_place(l, n, values + grouped[k]);
            first = end[a];
        }
    }

    // J . qd of a row's sides at the step's velocities (for restitution).
    double rate(const Side& a, const Side& b, const double* qd) const {
        double sum = 0;
        for (const Side* s : {&a, &b}) {
            if (s->articulation < 0) continue;
            const uint32_t first = articulations_[s->articulation].first_dof;
            for (size_t k = 0; k < s->jacobian.size(); ++k)
                sum += s->jacobian[k] * qd[first + k];
        }
        return sum;
    }

  private:
    // The side as propagation terms: one body term, or its non-zero joint-space entries.
    static void append_terms(const Side& s, std::vector<PropagationTerm>& terms) {
        if (s.articulation < 0 || s.jacobian.empty()) return;
        if (s.body >= 0) {
            const Spatial& f = s.force;
            terms.push_back(
                {s.articulation,
                 s.body,
                 -1,
                 {f.angular.x, f.angular.y, f.angular.z, f.linear.x, f.linear.y, f.linear.z}});
            return;
        }
        for (size_t k = 0; k < s.jacobian.size(); ++k)
            if (s.jacobian[k] != 0.0)
                terms.push_back({s.articulation, -1, int32_t(k), {s.jacobian[k], 0, 0, 0, 0, 0}});
    }

    BuiltRows& out_;
    const std::vector<ArticulationRecord>& articulations_;
    const std::vector<std::vector<double>>& factor_;
    const std::vector<int32_t>& body_articulation_;
    WorldScratch& scratch_;
    WorldRecord& world_;
};

// A unit vector orthogonal to n, chosen the same way every time.
Vec3 first_tangent(Vec3 n) {
    const Vec3 helper = std::fabs(n.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
    const Vec3 t = cross(n, helper);
    return (1.0 / norm(t)) * t;
}

double positional_bias(double gap, double dt, double beta) {
    return gap > 0 ? gap / dt : beta * gap / dt;
}

// What every world's build reads besides the scene itself: where each world's connect and
// mimic constraints start in the scene's flat arrays, and how drives enter.
struct SceneLayout {
    std::vector<uint64_t> connect_offset, mimic_offset; // [world_count + 1]
    bool drives = false;                                // drive gains are given
    bool drive_rows = false;                            // drive_mode ROWS: a row per driven DOF
};

// The most rows world w can make: 3 per contact and connect, 1 per mimic, per DOF one per finite
// position-limit side, two for a finite velocity limit, one for a drive row. Needs the joint
// types checked, nothing else.
uint64_t world_row_bound(const steel_scene_desc& d, const SceneRecord& record,
                         const SceneLayout& layout, uint32_t w) {
    const std::vector<uint64_t>& connect_offset = layout.connect_offset;
    const std::vector<uint64_t>& mimic_offset = layout.mimic_offset;
    uint64_t rows = 3 * (record.world_contact_offset[w + 1] - record.world_contact_offset[w]) +
                    3 * (connect_offset[w + 1] - connect_offset[w]) +
                    (mimic_offset[w + 1] - mimic_offset[w]);
    for (uint64_t k = record.world_dof_offset[w]; k < record.world_dof_offset[w + 1]; ++k) {
        rows += (d.joint_lower && std::isfinite(d.joint_lower[k])) +
                (d.joint_upper && std::isfinite(d.joint_upper[k]));
        rows += d.joint_velocity_limit && std::isfinite(d.joint_velocity_limit[k]) ? 2 : 0;
        rows += layout.drive_rows && d.drive_stiffness &&
                (d.drive_stiffness[k] > 0 || d.drive_damping[k] > 0);
    }
    return rows;
}

// Reserves the row arrays for the most rows worlds [first_world, end_world) can make
// (world_row_bound) and, per row, twice the DOFs of the world's largest articulation.
// Grown world by world instead, the batch's J and Y were copied and page-faulted several times
// over: most of the time of a 65,536-world upload. Called after the joint types were checked; the
// bound needs no other validation, and reserve touches no memory, so an overestimate costs address
// space only. A bound too large to reserve is skipped: the arrays then grow as before.
void reserve_rows(const steel_scene_desc& d, const SceneRecord& record, const SceneLayout& layout,
                  uint32_t first_world, uint32_t end_world, BuiltRows& out) {
    uint64_t rows = 0, values = 0;
    for (uint32_t w = first_world; w < end_world; ++w) {
        const uint64_t world_rows = world_row_bound(d, record, layout, w);
        uint32_t largest = 0, current = 0;
        for (uint64_t b = record.world_body_offset[w]; b < record.world_body_offset[w + 1]; ++b) {
            if (d.joint_parent[b] < 0) current = 0;
            const int32_t type = d.joint_type[b];
            current += type == STEEL_JOINT_NONE ? 6 : joint_dof_count(JointType(type));
            largest = std::max(largest, current);
        }
        rows += world_rows;
        values += world_rows * 2 * largest;
    }
    try {
        for (std::vector<double>* array : {&out.bias, &out.lower, &out.upper, &out.friction,
                                           &out.regularization, &out.initial_impulse})
            array->reserve(rows);
        out.kind.reserve(rows);
        out.normal_row.reserve(rows);
        out.block_offset.reserve(2 * rows);
        out.block_length.reserve(2 * rows);
        out.jacobian.reserve(values);
        out.response.reserve(values);
        out.unconstrained_velocity.reserve(record.world_dof_offset[end_world] -
                                           record.world_dof_offset[first_world]);
        out.dof_counts.reserve(end_world - first_world);
        out.row_counts.reserve(end_world - first_world);
    } catch (const std::exception&) { // too large to reserve at once: grow instead
    }
}

using ConePair = WorldScratch::ConePair;

// Whether the pair's 2x2 block of A (J_t Y_t, no regularization in a scene) is singular or
// nearly so: both tangents may move the bodies and still move them along one path only (a link
// on a single hinge, pushed either way, turns about its one axis), and the upload refuses such a
// block. The bound is 10 times the float32 upload's (rows_upload.cpp), so the rows pass in
// either precision.
bool degenerate(const ConePair& pair, const BuiltRows& out) {
    const double* j0 = out.jacobian.data() + pair.first_values;
    const double* j1 = out.jacobian.data() + pair.second_values;
    const double* y0 = out.response.data() + pair.first_values;
    const double* y1 = out.response.data() + pair.second_values;
    double a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    for (size_t k = 0; k < pair.second_values - pair.first_values; ++k) {
        a00 += j0[k] * y0[k];
        a01 += j0[k] * y1[k];
        a10 += j1[k] * y0[k];
        a11 += j1[k] * y1[k];
    }
    return !(a00 * a11 - a01 * a10 > 1e-4 * a00 * a11);
}

// Builds world w: appends its rows to `out` and fills record.worlds[w]. The record's row
// indices count from `out`'s first row, so a world built into a run of worlds needs them
// shifted by the run's place in the batch (shift_rows).
void build_world(const steel_scene_desc& d, const SceneLayout& layout, uint32_t w,
                 SceneRecord& record, BuiltRows& out) {
    const std::vector<uint64_t>& connect_offset = layout.connect_offset;
    const std::vector<uint64_t>& mimic_offset = layout.mimic_offset;
    const bool drives = layout.drives, drive_rows = layout.drive_rows;
    WorldRecord& world = record.worlds[w];
    world.clear();
    // The record's per-row arrays reserved once for the most rows the world can make, at most two
    // terms a row (a body term or a one-DOF joint-space entry per side): grown row by row, a first
    // upload's records were copied and faulted in several times over.
    const uint64_t row_bound = world_row_bound(d, record, layout, w);
    world.terms.reserve(2 * row_bound);
    world.term_offset.reserve(row_bound + 1);
    world.contacts.reserve(record.world_contact_offset[w + 1] - record.world_contact_offset[w]);
    const uint64_t body0 = record.world_body_offset[w];
    const uint32_t body_count = uint32_t(record.world_body_offset[w + 1] - body0);
    const uint64_t dof0 = record.world_dof_offset[w], position0 = record.world_position_offset[w];
    const Vec3 gravity = vec3(d.gravity + 3 * size_t(w));
    for (int k = 0; k < 3; ++k)
        finite(
            d.gravity[3 * w + k], [&] { return format("world %u", w); }, "gravity");

    // Bodies and joints, grouped into articulations (a root joint and the bodies after it),
    // built into the records the world had, for their memory.
    WorldScratch& scratch = out.scratch;
    uint32_t roots = 0;
    for (uint32_t b = 0; b < body_count; ++b)
        roots += d.joint_parent[body0 + b] == -1;
    std::vector<ArticulationRecord>& articulations = world.articulations;
    articulations.resize(roots);
    uint32_t begun = 0; // articulations begun so far
    std::vector<int32_t>& body_articulation = scratch.body_articulation;
    body_articulation.resize(body_count);
    uint32_t dof = 0, position = 0;
    // The step's velocity of every DOF: joint_velocity, or body_velocity for a standalone body.
    std::vector<double>& world_qd = scratch.world_qd;
    world_qd.assign(record.world_dof_offset[w + 1] - dof0, 0.0);
    for (uint32_t b = 0; b < body_count; ++b) {
        const uint64_t g = body0 + b;
        const auto place = [&] { return format("world %u, body %u", w, b); };
        const int32_t parent = d.joint_parent[g];
        if (parent >= int32_t(b) || parent < -1)
            bad(format("%s: joint_parent = %d must be -1 or a body before it", place().c_str(),
                       parent));
        if (parent == -1) {
            ArticulationRecord& art = articulations[begun++];
            art.reset();
            art.first_body = b;
            art.first_dof = dof;
            art.first_position = position;
            // Its bodies are this one and those after it up to the next root: reserved, so
            // that the model is not regrown body by body.
            uint32_t count = 1;
            while (b + count < body_count && d.joint_parent[g + count] != -1)
                ++count;
            art.model.bodies.reserve(count);
            art.model.joints.reserve(count);
        } else if (uint32_t(parent) < articulations[begun - 1].first_body) {
            bad(format("%s: joint_parent = %d belongs to an earlier articulation; list each "
                       "articulation's "
                       "bodies together, root first",
                       place().c_str(), parent));
        } else if (articulations[begun - 1].standalone) {
            bad(format("%s: joint_parent = %d is a standalone body (STEEL_JOINT_NONE); joints "
                       "cannot hang "
                       "from it",
                       place().c_str(), parent));
        }
        const bool standalone = d.joint_type[g] == STEEL_JOINT_NONE;
        if (standalone && parent != -1)
            bad(format("%s: a standalone body (STEEL_JOINT_NONE) needs joint_parent = -1, not %d",
                       place().c_str(), parent));
        body_articulation[b] = int32_t(begun - 1);
        ArticulationRecord& art = articulations[begun - 1];
        BodyModel body;
        body.mass = d.body_mass[g];
        if (!(body.mass > 0) || !std::isfinite(body.mass))
            bad(format("%s: body_mass = %g must be finite and > 0", place().c_str(), body.mass));
        for (int k = 0; k < 3; ++k)
            finite(d.body_com[3 * g + k], place, "body_com");
        body.com = vec3(d.body_com + 3 * g);
        const double* inertia = d.body_inertia + 6 * g;
        for (int k = 0; k < 6; ++k)
            finite(inertia[k], place, "body_inertia");
        const double entries[9] = {inertia[0], inertia[3], inertia[4], inertia[3], inertia[1],
                                   inertia[5], inertia[4], inertia[5], inertia[2]};
        double check[9];
        std::copy(entries, entries + 9, check);
        if (!cholesky_factor_in_place(check, 3))
            bad(format("%s: body_inertia is not positive definite", place().c_str()));
        // A rigid body's: its second moment of mass, sum m r r^T = tr(I)/2 E - I, is positive
        // semidefinite, so no principal moment exceeds the sum of the other two (a flat plate's
        // equals it). Checked with a slack of 1e-6 tr(I), for a plate's rounded numbers.
        const double trace = inertia[0] + inertia[1] + inertia[2];
        for (int k = 0; k < 9; ++k)
            check[k] = -entries[k];
        for (int k = 0; k < 3; ++k)
            check[4 * k] += (0.5 + 1e-6) * trace;
        if (!cholesky_factor_in_place(check, 3))
            bad(format("%s: body_inertia (Ixx Iyy Izz Ixy Ixz Iyz = %g %g %g %g %g %g) is no rigid "
                       "body's: a principal moment exceeds the sum of the other two",
                       place().c_str(), inertia[0], inertia[1], inertia[2], inertia[3], inertia[4],
                       inertia[5]));
        std::copy(entries, entries + 9, body.inertia.m);
        JointModel joint;
        joint.type = standalone ? JointType::fixed : JointType(d.joint_type[g]);
        joint.parent = parent < 0 ? -1 : parent - int32_t(art.first_body);
        if (standalone) {
            require(d.body_pose, "body_pose", "there are standalone bodies");
            art.standalone = true;
            art.flags = d.body_flags ? d.body_flags[g] : STEEL_BODY_DYNAMIC;
            const Pose body_pose = pose(d.body_pose + 7 * g, place, "body_pose");
            Vec3 com_velocity, angular;
            if (art.flags != STEEL_BODY_STATIC) {
                require(d.body_velocity, "body_velocity",
                        "there are dynamic or kinematic standalone bodies");
                for (int k = 0; k < 6; ++k)
                    finite(d.body_velocity[6 * g + k], place, "body_velocity");
                com_velocity = vec3(d.body_velocity + 6 * g);
                angular = vec3(d.body_velocity + 6 * g + 3);
            }
            const Vec3 arm = rotation(body_pose.orientation) * body.com;
            joint.parent_frame = body_pose;
            if (art.flags == STEEL_BODY_DYNAMIC) {
                // A FREE joint at the com, so that its velocity is the com's: a joint at the body
                // origin would carry the origin's velocity, which turns with the body, and stepping
                // it explicitly would move the com of a body spinning torque-free.
                joint.type = JointType::free;
                joint.parent_frame.position = body_pose.position + arm;
                joint.child_frame.position = body.com;
                art.q.assign({0, 0, 0, 1, 0, 0, 0});
                const double velocity[6] = {com_velocity.x, com_velocity.y, com_velocity.z,
                                            angular.x,      angular.y,      angular.z};
                std::copy(velocity, velocity + 6, world_qd.begin() + dof);
            } else if (art.flags == STEEL_BODY_KINEMATIC) {
                // The body origin moves at v_com - w x (R com); in Plucker form v_O = v_origin - w
                // x origin.
                const Vec3 origin_velocity = com_velocity - cross(angular, arm);
                art.kinematic_velocity = {angular,
                                          origin_velocity - cross(angular, body_pose.position)};
            }
            if (d.external_force)
                for (int k = 0; k < 6; ++k)
                    finite(d.external_force[6 * g + k], place, "external_force");
            art.model.bodies.push_back(body);
            art.model.joints.push_back(joint);
            dof += art.flags == STEEL_BODY_DYNAMIC ? 6 : 0;
            continue;
        }
        if (joint.type == JointType::revolute || joint.type == JointType::prismatic) {
            require(d.joint_axis, "joint_axis", "there are revolute or prismatic joints");
            for (int k = 0; k < 3; ++k)
                finite(d.joint_axis[3 * g + k], place, "joint_axis");
            joint.axis = vec3(d.joint_axis + 3 * g);
            unit(joint.axis, place, "joint_axis");
        }
        joint.parent_frame = pose(d.joint_parent_frame + 7 * g, place, "joint_parent_frame");
        joint.child_frame = pose(d.joint_child_frame + 7 * g, place, "joint_child_frame");
        const uint32_t positions = joint_position_count(joint.type),
                       dofs = joint_dof_count(joint.type);
        for (uint32_t k = 0; k < positions; ++k)
            finite(d.joint_position[position0 + position + k], place, "joint_position");
        if (joint.type == JointType::ball || joint.type == JointType::free) {
            double* q = record.joint_position.data() + position0 + position + positions - 4;
            const Quat r = quat(q, place, "joint_position's quaternion");
            q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
        }
        art.q.insert(art.q.end(), record.joint_position.begin() + long(position0 + position),
                     record.joint_position.begin() + long(position0 + position + positions));
        for (uint32_t k = 0; k < dofs; ++k) {
            const uint64_t gk = dof0 + dof + k;
            world_qd[dof + k] = d.joint_velocity[gk];
            const auto dof_place = [&] { return format("world %u, body %u, DOF %u", w, b, k); };
            finite(d.joint_velocity[gk], dof_place, "joint_velocity");
            if (d.joint_armature &&
                !(d.joint_armature[gk] >= 0 && std::isfinite(d.joint_armature[gk])))
                bad(format("%s: joint_armature = %g must be finite and >= 0", dof_place().c_str(),
                           d.joint_armature[gk]));
            if (d.joint_damping &&
                !(d.joint_damping[gk] >= 0 && std::isfinite(d.joint_damping[gk])))
                bad(format("%s: joint_damping = %g must be finite and >= 0", dof_place().c_str(),
                           d.joint_damping[gk]));
            const double lower = d.joint_lower ? d.joint_lower[gk] : -INFINITY;
            const double upper = d.joint_upper ? d.joint_upper[gk] : INFINITY;
            if (std::isnan(lower) || std::isnan(upper) || !(lower <= upper) || lower == INFINITY ||
                upper == -INFINITY)
                bad(format("%s: joint limits [%g, %g] are not an interval", dof_place().c_str(),
                           lower, upper));
            if (dofs != 1 && (std::isfinite(lower) || std::isfinite(upper)))
                bad(format("%s: joint limits apply to revolute and prismatic joints only",
                           dof_place().c_str()));
            if (drives) {
                const double kp = d.drive_stiffness[gk], kd = d.drive_damping[gk];
                if (!(kp >= 0) || !(kd >= 0) || !std::isfinite(kp) || !std::isfinite(kd))
                    bad(format("%s: drive gains kp = %g, kd = %g must be finite and >= 0",
                               dof_place().c_str(), kp, kd));
                if (dofs != 1 && (kp > 0 || kd > 0))
                    bad(format("%s: drives apply to revolute and prismatic joints only",
                               dof_place().c_str()));
                finite(d.drive_target_position[gk], dof_place, "drive_target_position");
                finite(d.drive_target_velocity[gk], dof_place, "drive_target_velocity");
            }
            if (d.drive_effort_limit) {
                const double effort = d.drive_effort_limit[gk];
                if (!(effort > 0))
                    bad(format("%s: drive_effort_limit = %g must be > 0", dof_place().c_str(),
                               effort));
                if (std::isfinite(effort) && !drive_rows)
                    bad(format("%s: drive_effort_limit = %g needs drive_mode = "
                               "STEEL_DRIVE_MODE_ROWS (an "
                               "augmented drive lives inside H~ and cannot be clamped)",
                               dof_place().c_str(), effort));
            }
            if (d.joint_velocity_limit && !(d.joint_velocity_limit[gk] > 0))
                bad(format("%s: joint_velocity_limit = %g must be > 0", dof_place().c_str(),
                           d.joint_velocity_limit[gk]));
        }
        if (d.external_force)
            for (int k = 0; k < 6; ++k)
                finite(d.external_force[6 * g + k], place, "external_force");
        art.model.bodies.push_back(body);
        art.model.joints.push_back(joint);
        dof += dofs;
        position += positions;
    }

    // Dynamics per articulation: H~, its factor, and v-hat.
    out.dof_counts.push_back(dof);
    out.row_counts.push_back(0);
    const size_t velocity0 = out.unconstrained_velocity.size();
    out.unconstrained_velocity.resize(velocity0 + dof);
    scratch.factor.resize(articulations.size());
    for (size_t a = 0; a < articulations.size(); ++a) {
        ArticulationRecord& art = articulations[a];
        std::vector<double>& factor = scratch.factor[a];
        art.model.finalize();
        const uint32_t n = art.model.dof_count();
        const std::vector<double>& q = art.q;
        forward_kinematics(art.model, q, art.kinematics);
        const double* qd = world_qd.data() + art.first_dof;
        std::vector<Spatial>& external = scratch.external;
        external.clear();
        if (d.external_force)
            for (uint32_t b = 0; b < art.model.bodies.size(); ++b) {
                const double* f = d.external_force + 6 * (body0 + art.first_body + b);
                const Vec3 force = vec3(f), torque = vec3(f + 3);
                const Vec3 com = art.kinematics.body_inertia[b].com;
                external.push_back({torque + cross(com, force), force});
            }
        std::vector<double>& bias = scratch.bias;
        bias.resize(n);
        inverse_dynamics(art.model, art.kinematics, qd, nullptr, gravity, external, bias.data(),
                         scratch.dynamics);
        mass_matrix(art.model, art.kinematics, factor, scratch.dynamics);
        std::vector<double>& force = scratch.force;
        force.resize(n);
        art.augmentation.assign(n, 0.0);
        for (uint32_t k = 0; k < n; ++k) {
            const uint64_t gk = dof0 + art.first_dof + k;
            // A standalone body's entries in the per-DOF arrays are not read (docs/scene-mode.md).
            const bool read = !art.standalone;
            const double armature = read && d.joint_armature ? d.joint_armature[gk] : 0.0;
            const double damping = read && d.joint_damping ? d.joint_damping[gk] : 0.0;
            // With drive rows the drive is a row, not part of H~.
            const double kp = read && drives && !drive_rows ? d.drive_stiffness[gk] : 0.0;
            const double kd = read && drives && !drive_rows ? d.drive_damping[gk] : 0.0;
            art.augmentation[k] = armature + d.dt * damping + d.dt * kd + d.dt * d.dt * kp;
            factor[size_t(k) * n + k] += art.augmentation[k];
            double f = -bias[k] - damping * qd[k];
            if (kp > 0 || kd > 0) {
                // The joint's own position coordinate (1-DOF joints only carry drives).
                uint32_t joint = 0;
                while (art.model.dof_offset[joint + 1] <= k)
                    ++joint;
                const double qk = q[art.model.position_offset[joint]];
                f += kp * (d.drive_target_position[gk] - qk - d.dt * qd[k]) +
                     kd * (d.drive_target_velocity[gk] - qd[k]);
            }
            force[k] = f;
        }
        // A free body's gyroscopic torque is taken implicitly (implicit_velocity.hpp says why
        // only a free body's); at rest it and its derivative vanish: the explicit step.
        const bool free_body =
            art.model.joints.size() == 1 && art.model.joints[0].type == JointType::free;
        const bool moving = std::any_of(qd, qd + n, [](double v) { return v != 0; });
        const bool implicit = free_body && moving &&
                              solve_implicit_velocity(art.model, art.kinematics, qd, factor, d.dt,
                                                      force.data(), scratch.implicit_velocity);
        if (!cholesky(factor, n))
            bad(format("world %u, articulation rooted at body %u: H~ is not positive definite", w,
                       art.first_body));
        if (!implicit) cholesky_solve(factor, n, force.data());
        for (uint32_t k = 0; k < n; ++k)
            out.unconstrained_velocity[velocity0 + art.first_dof + k] = qd[k] + d.dt * force[k];
    }

    WorldBuilder rows(out, world, scratch);
    const uint64_t row_base = out.bias.size();
    std::vector<ConePair>& cone_pairs = scratch.cone_pairs; // checked once their Y is known
    cone_pairs.clear();
    const double* qd_world = world_qd.data();
    const auto body_in_world = [&](int32_t body, bool allow_world, const auto& place,
                                   const char* field) {
        if (body < (allow_world ? -1 : 0) || body >= int32_t(body_count))
            bad(format("%s: %s = %d is not a body of the world (%u bodies%s)", place().c_str(),
                       field, body, body_count, allow_world ? ", or -1" : ""));
    };

    // Contacts: a normal row, then two friction rows.
    const uint64_t contact0 = record.world_contact_offset[w];
    const uint32_t contacts = uint32_t(record.world_contact_offset[w + 1] - contact0);
    for (uint32_t c = 0; c < contacts; ++c) {
        const uint64_t g = contact0 + c;
        const auto place = [&] { return format("world %u, contact %u", w, c); };
        const int32_t a = d.contact_body_a[g], b = d.contact_body_b[g];
        body_in_world(a, true, place, "contact_body_a");
        body_in_world(b, true, place, "contact_body_b");
        if (a == b)
            bad(format("%s: contact_body_a and contact_body_b are both %d", place().c_str(), a));
        for (int k = 0; k < 3; ++k) {
            finite(d.contact_point[3 * g + k], place, "contact_point");
            finite(d.contact_normal[3 * g + k], place, "contact_normal");
        }
        const Vec3 p = vec3(d.contact_point + 3 * g), n = vec3(d.contact_normal + 3 * g);
        unit(n, place, "contact_normal");
        const double distance = d.contact_distance[g], mu = d.contact_friction[g];
        finite(distance, place, "contact_distance");
        if (!(mu >= 0) || !std::isfinite(mu))
            bad(format("%s: contact_friction = %g must be finite and >= 0", place().c_str(), mu));
        const double e = d.contact_restitution ? d.contact_restitution[g] : 0.0;
        if (!(e >= 0 && e <= 1))
            bad(format("%s: contact_restitution = %g must be in [0, 1]", place().c_str(), e));

        const auto side_along = [&](int32_t body, Vec3 direction) {
            return rows.point_side(body, p, direction);
        };
        // A kinematic body's known motion enters the row as bias: n . v_kinematic(p).
        const auto kinematic_rate = [&](int32_t body, Vec3 direction) {
            if (body < 0) return 0.0;
            const ArticulationRecord& art = rows.articulation_of(body);
            if (!art.standalone || art.flags != STEEL_BODY_KINEMATIC) return 0.0;
            return dot(direction, point_velocity(art.kinematic_velocity, p));
        };
        const Side na = side_along(a, n), nb = side_along(b, -n);
        const double kinematic_normal = kinematic_rate(a, n) + kinematic_rate(b, -n);
        double bias = positional_bias(distance, d.dt, d.baumgarte);
        const double approach =
            rows.rate(na, nb, qd_world) + kinematic_rate(a, n) + kinematic_rate(b, -n);
        // Restitution only for a contact that closes within this step: a corner still far
        // away must not bounce in mid-air however fast it falls.
        if (e > 0 && approach < -d.restitution_threshold && distance + approach * d.dt <= 0)
            bias = std::min(bias, e * approach);
        bias += kinematic_normal;
        ContactRecord contact;
        contact.normal = n;
        contact.tangent1 = first_tangent(n);
        contact.tangent2 = cross(n, contact.tangent1);
        const int32_t normal = rows.add_row(na, nb, bias, STEEL_ROW_CONTACT_NORMAL, 0, 0, -1, 0);
        contact.rows[0] = normal >= 0 ? int64_t(row_base) + normal : -1;
        if (normal >= 0) {
            const int32_t friction_kind = d.friction_model == STEEL_FRICTION_MODEL_CONE
                                              ? STEEL_ROW_FRICTION_CONE
                                              : STEEL_ROW_FRICTION_BOX;
            Side t1a = side_along(a, contact.tangent1), t1b = side_along(b, -contact.tangent1);
            Side t2a = side_along(a, contact.tangent2), t2b = side_along(b, -contact.tangent2);
            // A cone pair needs both tangents; a direction that cannot move makes it a box row
            // (and so does a pair that moves the bodies along one path only: see below).
            const bool pair = friction_kind == STEEL_ROW_FRICTION_CONE && rows.can_act(t1a, t1b) &&
                              rows.can_act(t2a, t2b);
            const int32_t kind = pair ? STEEL_ROW_FRICTION_CONE : STEEL_ROW_FRICTION_BOX;
            const Vec3 t1 = contact.tangent1, t2 = contact.tangent2;
            const size_t first_values = out.jacobian.size();
            const int32_t first = rows.add_row(
                t1a, t1b, kinematic_rate(a, t1) + kinematic_rate(b, -t1), kind, 0, 0, normal, mu);
            const size_t second_values = out.jacobian.size();
            const int32_t second = rows.add_row(
                t2a, t2b, kinematic_rate(a, t2) + kinematic_rate(b, -t2), kind, 0, 0, normal, mu);
            if (pair && first >= 0 && second >= 0)
                cone_pairs.push_back({row_base + uint32_t(first), first_values, second_values});
            contact.rows[1] = first >= 0 ? int64_t(row_base) + first : -1;
            contact.rows[2] = second >= 0 ? int64_t(row_base) + second : -1;
        }
        world.contacts.push_back(contact);
    }

    // Joint limits: a [0, inf) row per finite bound, speculative while the joint is inside.
    world.lower_limit_row.assign(dof, -1);
    world.upper_limit_row.assign(dof, -1);
    if (d.joint_lower || d.joint_upper)
        for (const ArticulationRecord& art : articulations) {
            for (uint32_t j = 0; j < art.model.joints.size(); ++j) {
                if (joint_dof_count(art.model.joints[j].type) != 1) continue;
                const uint32_t k = art.first_dof + art.model.dof_offset[j];
                const double qk = art.q[art.model.position_offset[j]];
                const double lower = d.joint_lower ? d.joint_lower[dof0 + k] : -INFINITY;
                const double upper = d.joint_upper ? d.joint_upper[dof0 + k] : INFINITY;
                for (int sign : {1, -1}) {
                    const double bound = sign > 0 ? lower : upper;
                    if (!std::isfinite(bound)) continue;
                    Side s = rows.side(int32_t(art.first_body + j));
                    s.jacobian[art.model.dof_offset[j]] = sign;
                    const double gap = sign * (qk - bound);
                    const int32_t row =
                        rows.add_row(s, Side{}, positional_bias(gap, d.dt, d.baumgarte),
                                     STEEL_ROW_BOUNDED, 0.0, INFINITY, -1, 0);
                    (sign > 0 ? world.lower_limit_row : world.upper_limit_row)[k] =
                        row >= 0 ? int64_t(row_base) + row : -1;
                }
            }
        }

    // Velocity limits: qd' <= limit and -qd' <= limit, as [0, inf) rows.
    if (d.joint_velocity_limit)
        for (const ArticulationRecord& art : articulations) {
            if (art.standalone) continue; // its per-DOF entries are not read
            for (uint32_t k = 0; k < art.model.dof_count(); ++k) {
                const double limit = d.joint_velocity_limit[dof0 + art.first_dof + k];
                if (!std::isfinite(limit)) continue;
                uint32_t joint = 0;
                while (art.model.dof_offset[joint + 1] <= k)
                    ++joint;
                for (double sign : {1.0, -1.0}) {
                    Side s = rows.side(int32_t(art.first_body + joint));
                    s.jacobian[k] = sign;
                    rows.add_row(s, Side{}, limit, STEEL_ROW_BOUNDED, 0.0, INFINITY, -1, 0);
                }
            }
        }

    // Drive rows (drive_mode ROWS): lambda = dt f is the soft row
    //   qd' - (kp (target_q - q) + kd target_qd) / (dt kp + kd) + c lambda = 0,
    //   c = 1 / (dt (dt kp + kd)),
    // the same equation the augmented H~ solves, clamped to +-dt * effort limit.
    world.drive_row.assign(dof, -1);
    if (drives && drive_rows)
        for (const ArticulationRecord& art : articulations) {
            for (uint32_t j = 0; j < art.model.joints.size(); ++j) {
                if (joint_dof_count(art.model.joints[j].type) != 1) continue;
                const uint32_t k = art.first_dof + art.model.dof_offset[j];
                const uint64_t gk = dof0 + k;
                const double kp = d.drive_stiffness[gk], kd = d.drive_damping[gk];
                if (!(kp > 0 || kd > 0)) continue;
                const double qk = art.q[art.model.position_offset[j]];
                const double gain = d.dt * kp + kd;
                const double target =
                    (kp * (d.drive_target_position[gk] - qk) + kd * d.drive_target_velocity[gk]) /
                    gain;
                const double effort = d.drive_effort_limit ? d.drive_effort_limit[gk] : INFINITY;
                Side s = rows.side(int32_t(art.first_body + j));
                s.jacobian[art.model.dof_offset[j]] = 1.0;
                const int32_t row =
                    rows.add_row(s, Side{}, -target,
                                 std::isfinite(effort) ? STEEL_ROW_BOUNDED : STEEL_ROW_BILATERAL,
                                 -d.dt * effort, d.dt * effort, -1, 0, 1.0 / (d.dt * gain));
                world.drive_row[k] = row >= 0 ? int64_t(row_base) + row : -1;
            }
        }

    // Connect constraints: three bilateral rows holding two points together.
    for (uint64_t g = connect_offset[w]; g < connect_offset[w + 1]; ++g) {
        const auto place = [&] {
            return format("world %u, connect %" PRIu64, w, g - connect_offset[w]);
        };
        const int32_t a = d.connect_body_a[g], b = d.connect_body_b[g];
        body_in_world(a, false, place, "connect_body_a");
        body_in_world(b, true, place, "connect_body_b");
        if (a == b)
            bad(format("%s: connect_body_a and connect_body_b are both %d", place().c_str(), a));
        for (int k = 0; k < 3; ++k) {
            finite(d.connect_point_a[3 * g + k], place, "connect_point_a");
            finite(d.connect_point_b[3 * g + k], place, "connect_point_b");
        }
        const Vec3 pa = apply(rows.articulation_of(a).kinematics.body_pose[rows.local_body(a)],
                              vec3(d.connect_point_a + 3 * g));
        const Vec3 pb =
            b < 0 ? vec3(d.connect_point_b + 3 * g)
                  : apply(rows.articulation_of(b).kinematics.body_pose[rows.local_body(b)],
                          vec3(d.connect_point_b + 3 * g));
        const Vec3 axes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        world.connect_rows.push_back({-1, -1, -1});
        for (int axis = 0; axis < 3; ++axis) {
            const Vec3& e = axes[axis];
            const Side sa = rows.point_side(a, pa, e), sb = rows.point_side(b, pb, -e);
            double kinematic = 0;
            const ArticulationRecord& art_a = rows.articulation_of(a);
            if (art_a.standalone && art_a.flags == STEEL_BODY_KINEMATIC)
                kinematic += dot(e, point_velocity(art_a.kinematic_velocity, pa));
            if (b >= 0) {
                const ArticulationRecord& art_b = rows.articulation_of(b);
                if (art_b.standalone && art_b.flags == STEEL_BODY_KINEMATIC)
                    kinematic -= dot(e, point_velocity(art_b.kinematic_velocity, pb));
            }
            const int32_t row =
                rows.add_row(sa, sb, d.baumgarte * dot(e, pa - pb) / d.dt + kinematic,
                             STEEL_ROW_BILATERAL, 0, 0, -1, 0);
            world.connect_rows.back()[size_t(axis)] = row >= 0 ? int64_t(row_base) + row : -1;
        }
    }

    // Mimic constraints: q_a - ratio q_b - offset = 0.
    for (uint64_t g = mimic_offset[w]; g < mimic_offset[w + 1]; ++g) {
        const auto place = [&] {
            return format("world %u, mimic %" PRIu64, w, g - mimic_offset[w]);
        };
        const int32_t a = d.mimic_joint_a[g], b = d.mimic_joint_b[g];
        body_in_world(a, false, place, "mimic_joint_a");
        body_in_world(b, false, place, "mimic_joint_b");
        if (a == b)
            bad(format("%s: mimic_joint_a and mimic_joint_b are both %d", place().c_str(), a));
        const double ratio = d.mimic_ratio[g], offset = d.mimic_offset[g];
        finite(ratio, place, "mimic_ratio");
        finite(offset, place, "mimic_offset");
        double value[2];
        Side sides[2];
        for (int k = 0; k < 2; ++k) {
            const int32_t body = k == 0 ? a : b;
            const ArticulationRecord& art = rows.articulation_of(body);
            const uint32_t local = uint32_t(rows.local_body(body));
            if (joint_dof_count(art.model.joints[local].type) != 1)
                bad(format(
                    "%s: body %d's joint has %u DOFs; mimic needs revolute or prismatic joints",
                    place().c_str(), body, joint_dof_count(art.model.joints[local].type)));
            value[k] = art.q[art.model.position_offset[local]];
            sides[k] = rows.side(body);
            sides[k].jacobian[art.model.dof_offset[local]] = k == 0 ? 1.0 : -ratio;
        }
        const double error = value[0] - ratio * value[1] - offset;
        const int32_t row = rows.add_row(sides[0], sides[1], d.baumgarte * error / d.dt,
                                         STEEL_ROW_BILATERAL, 0, 0, -1, 0);
        world.mimic_rows.push_back(row >= 0 ? int64_t(row_base) + row : -1);
    }
    rows.solve_responses();
    for (const ConePair& pair : cone_pairs)
        if (degenerate(pair, out))
            out.kind[pair.first_row] = out.kind[pair.first_row + 1] = STEEL_ROW_FRICTION_BOX;
}

// Adds `by` to every batch row index world w's record holds (-1, no row, stays).
void shift_rows(WorldRecord& world, int64_t by) {
    const auto shift = [by](int64_t& row) {
        if (row >= 0) row += by;
    };
    for (ContactRecord& contact : world.contacts)
        for (int64_t& row : contact.rows)
            shift(row);
    for (std::vector<int64_t>* rows :
         {&world.lower_limit_row, &world.upper_limit_row, &world.drive_row, &world.mimic_rows})
        for (int64_t& row : *rows)
            shift(row);
    for (std::array<int64_t, 3>& rows : world.connect_rows)
        for (int64_t& row : rows)
            shift(row);
}

// Ends an upload that refused world `failed` with `error`: the worlds after it are each built
// alone (the failed build left its arrays half-written), and the message lists every refused
// world (refused_worlds.hpp). The rows built here are dropped.
[[noreturn]] void refuse_worlds(const steel_scene_desc& d, const SceneLayout& layout,
                                SceneRecord& record, ThreadPool* pool, uint32_t failed,
                                Error error) {
    std::vector<uint32_t> worlds{failed};
    const std::vector<uint32_t> others =
        find_refused_worlds(pool, failed + 1, d.world_count, [&](uint32_t w) {
            BuiltRows alone;
            build_world(d, layout, w, record, alone);
        });
    worlds.insert(worlds.end(), others.begin(), others.end());
    error.message += refused_worlds_text(worlds, d.world_count);
    throw error;
}

// Builds worlds [first, end) into `out`. A world that throws stops the run and is written to
// *failed (for refuse_worlds).
void build_world_run(const steel_scene_desc& d, const SceneLayout& layout, SceneRecord& record,
                     uint32_t first, uint32_t end, BuiltRows& out, uint32_t* failed) {
    uint32_t w = first;
    try {
        for (; w < end; ++w)
            build_world(d, layout, w, record, out);
    } catch (...) {
        *failed = w;
        throw;
    }
}

// Every world's rows, in world order, as the parts of an upload (rows_upload.hpp): `out` alone
// on one thread. With a pool of several threads the worlds are built in contiguous runs, each
// into its own arrays (`runs`, kept for their memory), which are the parts: a world's rows do
// not depend on where it is built, so the batch gets the one-thread rows bit for bit, without
// a copy to join them. An invalid world fails the upload with the message one thread would
// give (ThreadPool::for_each_run), which also lists every other world refused.
std::vector<steel_rows_desc> build_worlds(const steel_scene_desc& d, const SceneLayout& layout,
                                          SceneRecord& record, BuiltRows& out, ThreadPool* pool,
                                          std::vector<BuiltRows>* runs) {
    const uint32_t worlds = d.world_count;
    const uint32_t run_count = pool && runs ? pool->run_count(worlds) : 1;
    if (run_count <= 1) {
        out.clear();
        reserve_rows(d, record, layout, 0, worlds, out);
        uint32_t failed = 0;
        try {
            build_world_run(d, layout, record, 0, worlds, out, &failed);
        } catch (const Error& error) {
            if (error.status != STEEL_ERROR_INVALID_ARGUMENT) throw;
            refuse_worlds(d, layout, record, pool, failed, error);
        }
        return {out.desc()};
    }
    runs->resize(run_count);
    std::vector<uint32_t> first_world(run_count + 1, worlds);
    constexpr uint32_t kBuilt = UINT32_MAX; // a run's `failed` while none of its worlds threw
    std::vector<uint32_t> failed(run_count, kBuilt);
    try {
        pool->for_each_run(worlds, [&](uint32_t run, uint32_t first, uint32_t end) {
            BuiltRows& built = (*runs)[run];
            built.clear();
            first_world[run] = first;
            reserve_rows(d, record, layout, first, end, built);
            build_world_run(d, layout, record, first, end, built, &failed[run]);
        });
    } catch (const Error& error) {
        if (error.status != STEEL_ERROR_INVALID_ARGUMENT) throw;
        // for_each_run rethrew the error of the earliest run that stopped, at its failed world.
        const auto stopped = std::find_if(failed.begin(), failed.end(),
                                          [](uint32_t world) { return world != kBuilt; });
        refuse_worlds(d, layout, record, pool, *stopped, error);
    }
    // The record's row indices count from their run's first row: make them the batch's.
    std::vector<int64_t> first_row(run_count, 0);
    for (uint32_t run = 1; run < run_count; ++run)
        first_row[run] = first_row[run - 1] + int64_t((*runs)[run - 1].bias.size());
    pool->parallel_for(run_count, [&](uint32_t run, uint32_t) {
        for (uint32_t w = first_world[run]; w < first_world[run + 1]; ++w)
            shift_rows(record.worlds[w], first_row[run]);
    });
    std::vector<steel_rows_desc> parts;
    for (const BuiltRows& built : *runs)
        parts.push_back(built.desc());
    return parts;
}

} // namespace

steel_rows_desc BuiltRows::desc() const {
    steel_rows_desc desc{};
    desc.struct_size = sizeof(desc);
    desc.world_count = uint32_t(dof_counts.size());
    desc.world_dof_counts = dof_counts.data();
    desc.world_row_counts = row_counts.data();
    desc.unconstrained_velocity = unconstrained_velocity.data();
    desc.block_offset = block_offset.data();
    desc.block_length = block_length.data();
    desc.value_count = jacobian.size();
    desc.jacobian = jacobian.data();
    desc.response = response.data();
    desc.bias = bias.data();
    desc.kind = kind.data();
    desc.lower = lower.data();
    desc.upper = upper.data();
    desc.normal_row = normal_row.data();
    desc.friction = friction.data();
    desc.regularization = regularization.data();
    desc.initial_impulse = initial_impulse.data();
    return desc;
}

void BuiltRows::clear() {
    for (std::vector<uint32_t>* array : {&dof_counts, &row_counts, &block_offset, &block_length})
        array->clear();
    for (std::vector<double>* array : {&unconstrained_velocity, &jacobian, &response, &bias, &lower,
                                       &upper, &friction, &regularization, &initial_impulse})
        array->clear();
    kind.clear();
    normal_row.clear();
}

BuiltRows build_scene_rows(const steel_scene_desc& d, uint32_t batch_world_count,
                           SceneRecord& record) {
    BuiltRows out;
    build_scene_rows_into(d, batch_world_count, record, out);
    return out;
}

std::vector<steel_rows_desc> build_scene_rows_into(const steel_scene_desc& d,
                                                   uint32_t batch_world_count, SceneRecord& record,
                                                   BuiltRows& out, ThreadPool* pool,
                                                   std::vector<BuiltRows>* runs) {
    if (d.world_count != batch_world_count)
        bad(format("world_count is %u but the batch has %u worlds", d.world_count,
                   batch_world_count));
    if (!(d.dt > 0) || !std::isfinite(d.dt)) bad(format("dt = %g must be finite and > 0", d.dt));
    if (!(d.baumgarte >= 0 && d.baumgarte <= 1))
        bad(format("baumgarte = %g must be in [0, 1]", d.baumgarte));
    if (!(d.restitution_threshold >= 0) || !std::isfinite(d.restitution_threshold))
        bad(format("restitution_threshold = %g must be finite and >= 0", d.restitution_threshold));
    if (d.friction_model != STEEL_FRICTION_MODEL_BOX &&
        d.friction_model != STEEL_FRICTION_MODEL_CONE)
        bad(format("friction_model = %d is not a STEEL_FRICTION_MODEL_* value", d.friction_model));
    if (d.drive_mode != STEEL_DRIVE_MODE_AUGMENTED && d.drive_mode != STEEL_DRIVE_MODE_ROWS)
        bad(format("drive_mode = %d is not a STEEL_DRIVE_MODE_* value", d.drive_mode));
    SceneLayout layout;
    layout.drive_rows = d.drive_mode == STEEL_DRIVE_MODE_ROWS;
    require(d.gravity, "gravity", "every world needs one");
    require(d.world_body_count, "world_body_count", "every world needs a body count");
    const uint32_t worlds = d.world_count;

    // Totals and per-world offsets.
    // Every field is set below; the worlds' records keep their memory for build_world to reuse
    // (a batch builds each scene upload into the record of the one before last).
    record.dt = d.dt;
    record.worlds.resize(worlds);
    record.joint_position.clear();
    record.world_body_offset.assign(worlds + 1, 0);
    record.world_contact_offset.assign(worlds + 1, 0);
    std::vector<uint64_t>& connect_offset = layout.connect_offset;
    std::vector<uint64_t>& mimic_offset = layout.mimic_offset;
    connect_offset.assign(worlds + 1, 0);
    mimic_offset.assign(worlds + 1, 0);
    for (uint32_t w = 0; w < worlds; ++w) {
        record.world_body_offset[w + 1] = record.world_body_offset[w] + d.world_body_count[w];
        record.world_contact_offset[w + 1] =
            record.world_contact_offset[w] + (d.world_contact_count ? d.world_contact_count[w] : 0);
        connect_offset[w + 1] =
            connect_offset[w] + (d.world_connect_count ? d.world_connect_count[w] : 0);
        mimic_offset[w + 1] = mimic_offset[w] + (d.world_mimic_count ? d.world_mimic_count[w] : 0);
    }
    const uint64_t bodies = record.world_body_offset[worlds];
    if (bodies > 0) {
        for (const auto& [pointer, name] :
             {std::pair<const void*, const char*>{d.body_mass, "body_mass"},
              {d.body_com, "body_com"},
              {d.body_inertia, "body_inertia"},
              {d.joint_type, "joint_type"},
              {d.joint_parent, "joint_parent"},
              {d.joint_parent_frame, "joint_parent_frame"},
              {d.joint_child_frame, "joint_child_frame"}})
            require(pointer, name, "there are bodies");
    }
    if (record.world_contact_offset[worlds] > 0)
        for (const auto& [pointer, name] :
             {std::pair<const void*, const char*>{d.contact_body_a, "contact_body_a"},
              {d.contact_body_b, "contact_body_b"},
              {d.contact_point, "contact_point"},
              {d.contact_normal, "contact_normal"},
              {d.contact_distance, "contact_distance"},
              {d.contact_friction, "contact_friction"}})
            require(pointer, name, "there are contacts");
    if (connect_offset[worlds] > 0)
        for (const auto& [pointer, name] :
             {std::pair<const void*, const char*>{d.connect_body_a, "connect_body_a"},
              {d.connect_body_b, "connect_body_b"},
              {d.connect_point_a, "connect_point_a"},
              {d.connect_point_b, "connect_point_b"}})
            require(pointer, name, "there are connect constraints");
    if (mimic_offset[worlds] > 0)
        for (const auto& [pointer, name] :
             {std::pair<const void*, const char*>{d.mimic_joint_a, "mimic_joint_a"},
              {d.mimic_joint_b, "mimic_joint_b"},
              {d.mimic_ratio, "mimic_ratio"},
              {d.mimic_offset, "mimic_offset"}})
            require(pointer, name, "there are mimic constraints");

    // Joint types first: they fix the DOF and position counts.
    record.world_dof_offset.assign(worlds + 1, 0);
    record.world_position_offset.assign(worlds + 1, 0);
    uint64_t joint_dofs = 0; // DOFs of joints, as opposed to standalone bodies
    for (uint32_t w = 0; w < worlds; ++w) {
        uint32_t dofs = 0, positions = 0;
        for (uint64_t b = record.world_body_offset[w]; b < record.world_body_offset[w + 1]; ++b) {
            const int32_t type = d.joint_type[b];
            const uint64_t local = b - record.world_body_offset[w];
            if (type < STEEL_JOINT_FIXED || type > STEEL_JOINT_NONE)
                bad(format("world %u, body %" PRIu64
                           ": joint_type = %d is not a STEEL_JOINT_* value",
                           w, local, type));
            const int32_t flags = d.body_flags ? d.body_flags[b] : STEEL_BODY_DYNAMIC;
            if (flags < STEEL_BODY_DYNAMIC || flags > STEEL_BODY_KINEMATIC)
                bad(format("world %u, body %" PRIu64
                           ": body_flags = %d is not a STEEL_BODY_* value",
                           w, local, flags));
            if (flags != STEEL_BODY_DYNAMIC && type != STEEL_JOINT_NONE)
                bad(format("world %u, body %" PRIu64
                           ": body_flags = %d needs joint_type STEEL_JOINT_NONE (a "
                           "standalone body); a body in an articulation moves with its joint",
                           w, local, flags));
            const BodyCoordinates body = body_coordinates(type, flags);
            dofs += body.dofs;
            positions += body.positions;
            if (type != STEEL_JOINT_NONE) joint_dofs += body.dofs;
        }
        record.world_dof_offset[w + 1] = record.world_dof_offset[w] + dofs;
        record.world_position_offset[w + 1] = record.world_position_offset[w] + positions;
    }
    if (record.world_position_offset[worlds] > 0)
        require(d.joint_position, "joint_position", "there are joints with position coordinates");
    if (joint_dofs > 0) require(d.joint_velocity, "joint_velocity", "there are joints with DOFs");
    layout.drives = d.drive_stiffness || d.drive_damping;
    if (layout.drives) {
        for (const auto& [pointer, name] :
             {std::pair<const void*, const char*>{d.drive_stiffness, "drive_stiffness"},
              {d.drive_damping, "drive_damping"},
              {d.drive_target_position, "drive_target_position"},
              {d.drive_target_velocity, "drive_target_velocity"}})
            require(pointer, name, "drives are given");
    }
    if (d.joint_position)
        record.joint_position.assign(d.joint_position,
                                     d.joint_position + record.world_position_offset[worlds]);
    return build_worlds(d, layout, record, out, pool, runs);
}

} // namespace steel::scene
