#include "scene_inputs.hpp"

#include "articulation.hpp"
#include "scene_record.hpp"

#include "../error.hpp"
#include "../thread_pool.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstring>

namespace steel::scene {

namespace {

const char* const kUnitName[kSceneUnitCount] = {
    "world",           "body", "DOF", "position coordinate", "contact", "connect constraint",
    "mimic constraint"};

// Calls visit(name, member of SceneInputs, field of steel_scene_desc, unit, per) for every array,
// in list order.
template <class Visit> void for_each_array(Visit&& visit) {
#define STEEL_SCENE_VISIT(type, name, unit, per)                                                   \
    visit(#name, &SceneInputs::name, &steel_scene_desc::name, SceneUnit::unit, uint64_t(per));
    STEEL_SCENE_ARRAYS(STEEL_SCENE_VISIT)
#undef STEEL_SCENE_VISIT
}

// A present array's pointer: never NULL, even when it holds no values (present and empty is not
// absent, see SceneArray).
template <class T> const T* pointer_of(const SceneArray<T>& array) {
    static const T kNone[1] = {};
    if (!array.present) return nullptr;
    return array.values.empty() ? kNone : array.values.data();
}

uint64_t sum(const uint32_t* counts, uint32_t first, uint32_t end) {
    uint64_t total = 0;
    if (counts)
        for (uint32_t w = first; w < end; ++w)
            total += counts[w];
    return total;
}

[[noreturn]] void bad(const char* where, const std::string& what) {
    fail(STEEL_ERROR_INVALID_ARGUMENT, std::string(where) + ": " + what);
}

void require_length(const char* where, const char* name, uint64_t length, uint64_t expected,
                    SceneUnit unit, uint64_t per) {
    if (length != expected)
        bad(where, format("the snapshot's scene.%s has %" PRIu64 " values but the scene's counts "
                          "give it %" PRIu64 " (%" PRIu64 " per %s)",
                          name, length, expected, per, kUnitName[int(unit)]));
}

// The items of every unit in worlds [first, end) of a desc whose count arrays, joint_type and
// body_flags hold what the counts say (an upload's checked desc; a decoded scene after totals()
// checked their lengths).
SceneTotals totals_of(const steel_scene_desc& d, uint32_t first, uint32_t end, const char* where) {
    SceneTotals t;
    t.count[int(SceneUnit::world)] = end - first;
    const uint64_t body0 = sum(d.world_body_count, 0, first);
    t.count[int(SceneUnit::body)] = sum(d.world_body_count, first, end);
    t.count[int(SceneUnit::contact)] = sum(d.world_contact_count, first, end);
    t.count[int(SceneUnit::connect)] = sum(d.world_connect_count, first, end);
    t.count[int(SceneUnit::mimic)] = sum(d.world_mimic_count, first, end);
    const uint64_t bodies = t.of(SceneUnit::body);
    if (bodies > 0 && d.joint_type == nullptr)
        bad(where, format("the snapshot's scene has %" PRIu64 " bodies but no joint_type", bodies));
    for (uint64_t b = body0; b < body0 + bodies; ++b) {
        const int32_t type = d.joint_type[b];
        const int32_t flags = d.body_flags ? d.body_flags[b] : STEEL_BODY_DYNAMIC;
        if (type < STEEL_JOINT_FIXED || type > STEEL_JOINT_NONE)
            bad(where, format("the snapshot's scene.joint_type[%" PRIu64
                              "] = %d is not a STEEL_JOINT_* value",
                              b, type));
        if (flags < STEEL_BODY_DYNAMIC || flags > STEEL_BODY_KINEMATIC)
            bad(where, format("the snapshot's scene.body_flags[%" PRIu64
                              "] = %d is not a STEEL_BODY_* value",
                              b, flags));
        const BodyCoordinates body = body_coordinates(type, flags);
        t.count[int(SceneUnit::dof)] += body.dofs;
        t.count[int(SceneUnit::position)] += body.positions;
    }
    return t;
}

uint64_t chunk_count(uint64_t bytes, uint64_t chunk) {
    return (bytes + chunk - 1) / chunk;
}

} // namespace

BodyCoordinates body_coordinates(int32_t joint_type, int32_t flags) {
    BodyCoordinates body;
    if (joint_type == STEEL_JOINT_NONE) {
        body.dofs = flags == STEEL_BODY_DYNAMIC ? 6 : 0; // the DOFs of an equivalent FREE joint
    } else {
        body.dofs = joint_dof_count(JointType(joint_type));
        body.positions = joint_position_count(JointType(joint_type));
    }
    return body;
}

SceneTotals upload_totals(const SceneRecord& record, const steel_scene_desc& d) {
    SceneTotals t;
    t.count[int(SceneUnit::world)] = d.world_count;
    t.count[int(SceneUnit::body)] = record.world_body_offset.back();
    t.count[int(SceneUnit::dof)] = record.world_dof_offset.back();
    t.count[int(SceneUnit::position)] = record.world_position_offset.back();
    t.count[int(SceneUnit::contact)] = record.world_contact_offset.back();
    t.count[int(SceneUnit::connect)] = sum(d.world_connect_count, 0, d.world_count);
    t.count[int(SceneUnit::mimic)] = sum(d.world_mimic_count, 0, d.world_count);
    return t;
}

void SceneInputs::reserve_for(const steel_scene_desc& d, const SceneTotals& whole) {
    uint64_t chunks = 0;
    for_each_array([&](const char*, auto member, auto field, SceneUnit unit, uint64_t per) {
        auto& values = (this->*member).values;
        if (d.*field == nullptr) return;
        values.reserve(per * whole.of(unit));
        chunks += chunk_count(values.capacity() * sizeof(values[0]), kCopyChunkBytes);
    });
    copy_chunks_.reserve(chunks);
}

void SceneInputs::assign(const steel_scene_desc& d, const SceneTotals& whole, ThreadPool* pool) {
    world_count = d.world_count;
    dt = d.dt;
    baumgarte = d.baumgarte;
    restitution_threshold = d.restitution_threshold;
    friction_model = d.friction_model;
    drive_mode = d.drive_mode;
    // Every array sized here and copied in chunks, on the pool's threads when given one, so that
    // the copy shrinks with the build as threads are added.
    copy_chunks_.clear();
    for_each_array([&](const char*, auto member, auto field, SceneUnit unit, uint64_t per) {
        auto& array = this->*member;
        const auto* values = d.*field;
        array.present = values != nullptr;
        array.values.resize(array.present ? per * whole.of(unit) : 0);
        const uint64_t bytes = array.values.size() * sizeof(array.values[0]);
        for (uint64_t at = 0; at < bytes; at += kCopyChunkBytes)
            copy_chunks_.push_back({reinterpret_cast<char*>(array.values.data()) + at,
                                    reinterpret_cast<const char*>(values) + at,
                                    std::min<uint64_t>(kCopyChunkBytes, bytes - at)});
    });
    const auto run = [&](uint32_t k, uint32_t) {
        std::memcpy(copy_chunks_[k].to, copy_chunks_[k].from, copy_chunks_[k].bytes);
    };
    if (pool && pool->thread_count() > 1 && copy_chunks_.size() > 1)
        pool->parallel_for(uint32_t(copy_chunks_.size()), run);
    else
        for (uint32_t k = 0; k < copy_chunks_.size(); ++k)
            run(k, 0);
}

steel_scene_desc SceneInputs::desc() const {
    steel_scene_desc d;
    steel_scene_desc_default(&d);
    d.world_count = world_count;
    d.dt = dt;
    d.baumgarte = baumgarte;
    d.restitution_threshold = restitution_threshold;
    d.friction_model = friction_model;
    d.drive_mode = drive_mode;
    for_each_array([&](const char*, auto member, auto field, SceneUnit, uint64_t) {
        d.*field = pointer_of(this->*member);
    });
    return d;
}

SceneTotals SceneInputs::totals(const char* where) const {
    if (!world_body_count.present)
        bad(where, "the snapshot's scene has no world_body_count (every world needs a body count)");
    for_each_array([&](const char* name, auto member, auto, SceneUnit unit, uint64_t per) {
        const auto& array = this->*member;
        if (unit == SceneUnit::world && array.present)
            require_length(where, name, array.values.size(), per * world_count, unit, per);
    });
    const uint64_t bodies = sum(pointer_of(world_body_count), 0, world_count);
    if (joint_type.present)
        require_length(where, "joint_type", joint_type.values.size(), bodies, SceneUnit::body, 1);
    if (body_flags.present)
        require_length(where, "body_flags", body_flags.values.size(), bodies, SceneUnit::body, 1);
    return totals_of(desc(), 0, world_count, where);
}

void SceneInputs::check_lengths(const char* where) const {
    const SceneTotals t = totals(where);
    for_each_array([&](const char* name, auto member, auto, SceneUnit unit, uint64_t per) {
        const auto& array = this->*member;
        if (array.present)
            require_length(where, name, array.values.size(), per * t.of(unit), unit, per);
    });
}

uint64_t SceneInputs::snapshot_bytes() const {
    uint64_t bytes = 0;
    for_each_array([&](const char*, auto member, auto, SceneUnit, uint64_t) {
        const auto& array = this->*member;
        if (array.present) bytes += 12 + array.values.size() * sizeof(array.values[0]);
    });
    return bytes;
}

bool SceneInputs::same_bits(const SceneInputs& other) const {
    const auto bits = [](const double& a, const double& b) {
        return std::memcmp(&a, &b, sizeof(a)) == 0;
    };
    bool same = world_count == other.world_count && bits(dt, other.dt) &&
                bits(baumgarte, other.baumgarte) &&
                bits(restitution_threshold, other.restitution_threshold) &&
                friction_model == other.friction_model && drive_mode == other.drive_mode;
    for_each_array([&](const char*, auto member, auto, SceneUnit, uint64_t) {
        const auto& a = this->*member;
        const auto& b = other.*member;
        same = same && a.present == b.present && a.values.size() == b.values.size() &&
               (a.values.empty() || std::memcmp(a.values.data(), b.values.data(),
                                                a.values.size() * sizeof(a.values[0])) == 0);
    });
    return same;
}

SceneInputs SceneInputs::world(uint32_t w, const char* where) const {
    if (w >= world_count)
        bad(where, format("world %u is outside the scene's %u worlds", w, world_count));
    totals(where); // the counting arrays' lengths, before totals_of reads them
    const steel_scene_desc d = desc();
    const SceneTotals before = totals_of(d, 0, w, where), own = totals_of(d, w, w + 1, where);
    SceneInputs out;
    out.world_count = 1;
    out.dt = dt;
    out.baumgarte = baumgarte;
    out.restitution_threshold = restitution_threshold;
    out.friction_model = friction_model;
    out.drive_mode = drive_mode;
    for_each_array([&](const char*, auto member, auto, SceneUnit unit, uint64_t per) {
        const auto& source = this->*member;
        auto& array = out.*member;
        array.present = source.present;
        if (!source.present) return;
        const uint64_t first = per * before.of(unit), count = per * own.of(unit);
        array.values.assign(source.values.begin() + int64_t(first),
                            source.values.begin() + int64_t(first + count));
    });
    return out;
}

} // namespace steel::scene
