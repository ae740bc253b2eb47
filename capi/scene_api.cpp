// The scene-mode functions of steel.h: check, build through impl/scene, forward, catch.
#include "boundary.hpp"

#include "../impl/batch.hpp"
#include "../impl/cuda/device_backend.hpp"
#include "../impl/handle_registry.hpp"
#include "../impl/output_checks.hpp"
#include "../impl/scene/scene_rows.hpp"

#include <cstring>

using namespace steel;

namespace {

steel_scene_desc default_scene() {
    steel_scene_desc scene{};
    scene.struct_size = sizeof(scene);
    scene.dt = 1.0 / 60.0;
    scene.baumgarte = 0.2;
    scene.restitution_threshold = 0.5;
    scene.friction_model = STEEL_FRICTION_MODEL_BOX;
    scene.drive_mode = STEEL_DRIVE_MODE_AUGMENTED;
    return scene;
}

// Runs `fill(record, impulses, velocities, out)` for a batch whose last solve came from a scene,
// after the usual count / capacity checks. `count(record)` is the number of doubles written.
template <class Count, class Fill>
steel_status read_scene(steel_batch batch, const char* where, double* out, uint64_t capacity,
                        uint64_t* out_count, Count&& count, Fill&& fill) {
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        cuda::settle_host_results(b, where);
        std::visit(
            [&](auto& state) {
                if (!state.solved)
                    fail(STEEL_ERROR_NO_DATA,
                         format("%s: the batch has not been solved since its last upload", where));
                if (!b.scene)
                    fail(STEEL_ERROR_NO_DATA,
                         format("%s: the batch's rows were uploaded as rows, not as a scene",
                                where));
                if (!output_wanted<uint64_t>(where, out, capacity, count(*b.scene), out_count,
                                             "values to write"))
                    return;
                const std::vector<double> impulse(state.results.impulse.begin(),
                                                  state.results.impulse.end());
                const std::vector<double> velocity(state.results.velocity.begin(),
                                                   state.results.velocity.end());
                fill(*b.scene, impulse, velocity, out);
            },
            b.state);
    });
}

// Calls visit(world, articulation, its qd slice) for every articulation of the scene.
template <class Visit>
void for_each_articulation(const scene::SceneRecord& record, const std::vector<double>& velocity,
                           Visit&& visit) {
    for (size_t w = 0; w < record.worlds.size(); ++w)
        for (const scene::ArticulationRecord& art : record.worlds[w].articulations) {
            const size_t first = record.world_dof_offset[w] + art.first_dof;
            const std::vector<double> qd(velocity.begin() + long(first),
                                         velocity.begin() + long(first + art.model.dof_count()));
            visit(w, art, qd);
        }
}

} // namespace

extern "C" {

steel_status steel_scene_desc_init(steel_scene_desc* out, uint32_t struct_size) {
    constexpr const char* where = "steel_scene_desc_init";
    return call_guarded(where, [&] {
        write_versioned(out, struct_size, default_scene(), where, "steel_scene_desc");
    });
}

steel_status steel_batch_upload_scene(steel_batch batch, const steel_scene_desc* scene_in) {
    constexpr const char* where = "steel_batch_upload_scene";
    return call_guarded(where, [&] {
        Batch& b = lookup_batch(batch.id, where);
        const steel_scene_desc desc =
            read_versioned(scene_in, default_scene(), where, "steel_scene_desc");
        // Into the spare record's memory; on failure it stays the spare, and the batch as it was.
        std::unique_ptr<scene::SceneRecord> record = std::move(b.spare_scene);
        if (!record) record = std::make_unique<scene::SceneRecord>();
        scene::SceneTotals totals;
        try {
            const std::vector<steel_rows_desc> rows = scene::build_scene_rows_into(
                desc, b.desc.world_count, *record, b.scene_rows, &b.pool, &b.scene_row_runs);
            totals = scene::upload_totals(*record, desc);
            b.scene_inputs.reserve_for(desc, totals); // room for the copy below, for snapshots
            replace_rows(b, rows, where, "in the rows built from the scene");
        } catch (...) {
            b.spare_scene = std::move(record);
            throw;
        }
        b.spare_scene = std::move(b.scene);
        b.scene = std::move(record);
        b.scene_inputs.assign(desc, totals, &b.pool); // into the room made above: cannot fail
    });
}

steel_status steel_batch_read_contact_impulses(steel_batch batch, double* out, uint64_t capacity,
                                               uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_contact_impulses", out, capacity, out_count,
        [](const scene::SceneRecord& r) { return 6 * uint64_t(r.world_contact_offset.back()); },
        [](const scene::SceneRecord& r, const std::vector<double>& impulse,
           const std::vector<double>&, double* o) {
            for (const scene::WorldRecord& world : r.worlds)
                for (const scene::ContactRecord& c : world.contacts) {
                    const auto at = [&](int k) {
                        return c.rows[k] >= 0 ? impulse[size_t(c.rows[k])] : 0.0;
                    };
                    const double ln = at(0), l1 = at(1), l2 = at(2);
                    const scene::Vec3 total = ln * c.normal + l1 * c.tangent1 + l2 * c.tangent2;
                    const double values[6] = {ln, l1, l2, total.x, total.y, total.z};
                    std::memcpy(o, values, sizeof(values));
                    o += 6;
                }
        });
}

steel_status steel_batch_read_joint_velocities(steel_batch batch, double* out, uint64_t capacity,
                                               uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_joint_velocities", out, capacity, out_count,
        [](const scene::SceneRecord& r) { return uint64_t(r.world_dof_offset.back()); },
        [](const scene::SceneRecord&, const std::vector<double>&,
           const std::vector<double>& velocity,
           double* o) { std::copy(velocity.begin(), velocity.end(), o); });
}

steel_status steel_batch_read_limit_impulses(steel_batch batch, double* out, uint64_t capacity,
                                             uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_limit_impulses", out, capacity, out_count,
        [](const scene::SceneRecord& r) { return uint64_t(r.world_dof_offset.back()); },
        [](const scene::SceneRecord& r, const std::vector<double>& impulse,
           const std::vector<double>&, double* o) {
            for (const scene::WorldRecord& world : r.worlds)
                for (size_t k = 0; k < world.lower_limit_row.size(); ++k)
                    *o++ =
                        (world.lower_limit_row[k] >= 0 ? impulse[size_t(world.lower_limit_row[k])]
                                                       : 0.0) -
                        (world.upper_limit_row[k] >= 0 ? impulse[size_t(world.upper_limit_row[k])]
                                                       : 0.0);
        });
}

steel_status steel_batch_read_drive_impulses(steel_batch batch, double* out, uint64_t capacity,
                                             uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_drive_impulses", out, capacity, out_count,
        [](const scene::SceneRecord& r) { return uint64_t(r.world_dof_offset.back()); },
        [](const scene::SceneRecord& r, const std::vector<double>& impulse,
           const std::vector<double>&, double* o) {
            for (const scene::WorldRecord& world : r.worlds)
                for (int64_t row : world.drive_row)
                    *o++ = row >= 0 ? impulse[size_t(row)] : 0.0;
        });
}

steel_status steel_batch_read_constraint_impulses(steel_batch batch, double* out, uint64_t capacity,
                                                  uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_constraint_impulses", out, capacity, out_count,
        [](const scene::SceneRecord& r) {
            uint64_t count = 0;
            for (const scene::WorldRecord& world : r.worlds)
                count += 3 * world.connect_rows.size() + world.mimic_rows.size();
            return count;
        },
        [](const scene::SceneRecord& r, const std::vector<double>& impulse,
           const std::vector<double>&, double* o) {
            const auto at = [&](int64_t row) { return row >= 0 ? impulse[size_t(row)] : 0.0; };
            for (const scene::WorldRecord& world : r.worlds)
                for (const auto& rows : world.connect_rows)
                    for (int64_t row : rows)
                        *o++ = at(row);
            for (const scene::WorldRecord& world : r.worlds)
                for (int64_t row : world.mimic_rows)
                    *o++ = at(row);
        });
}

steel_status steel_batch_read_body_velocities(steel_batch batch, double* out, uint64_t capacity,
                                              uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_body_velocities", out, capacity, out_count,
        [](const scene::SceneRecord& r) { return 6 * uint64_t(r.world_body_offset.back()); },
        [](const scene::SceneRecord& r, const std::vector<double>&,
           const std::vector<double>& velocity, double* o) {
            for_each_articulation(
                r, velocity,
                [&](size_t w, const scene::ArticulationRecord& art, const std::vector<double>& qd) {
                    std::vector<scene::Spatial> v =
                        scene::body_velocities(art.model, art.kinematics, qd);
                    if (art.standalone && art.flags == STEEL_BODY_KINEMATIC)
                        v[0] = art.kinematic_velocity;
                    for (size_t b = 0; b < v.size(); ++b) {
                        const scene::Vec3 com =
                            scene::point_velocity(v[b], art.kinematics.body_inertia[b].com);
                        double* slot = o + 6 * (r.world_body_offset[w] + art.first_body + b);
                        const double values[6] = {com.x,          com.y,          com.z,
                                                  v[b].angular.x, v[b].angular.y, v[b].angular.z};
                        std::memcpy(slot, values, sizeof(values));
                    }
                });
        });
}

steel_status steel_batch_read_body_poses(steel_batch batch, double* out, uint64_t capacity,
                                         uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_body_poses", out, capacity, out_count,
        [](const scene::SceneRecord& r) { return 7 * uint64_t(r.world_body_offset.back()); },
        [](const scene::SceneRecord& r, const std::vector<double>&,
           const std::vector<double>& velocity, double* o) {
            for_each_articulation(
                r, velocity,
                [&](size_t w, const scene::ArticulationRecord& art, const std::vector<double>& qd) {
                    std::vector<scene::Pose> poses;
                    if (art.standalone && art.flags == STEEL_BODY_KINEMATIC) {
                        // Moves at its prescribed velocity: the com in a straight line at v_com,
                        // the body turning at w about it (as a dynamic standalone body is stepped).
                        const scene::Pose now = art.kinematics.body_pose[0];
                        const scene::Spatial& v = art.kinematic_velocity;
                        const scene::Vec3 com = art.model.bodies[0].com; // body frame
                        const scene::Vec3 com_now = scene::apply(now, com);
                        const scene::Vec3 com_next =
                            com_now + r.dt * scene::point_velocity(v, com_now);
                        const scene::Quat turned =
                            scene::integrate_world(now.orientation, v.angular, r.dt);
                        poses.push_back({com_next - scene::rotation(turned) * com, turned});
                    } else {
                        std::vector<double> q = art.q;
                        scene::integrate_positions(art.model, art.kinematics, q, qd, r.dt);
                        poses = scene::forward_kinematics(art.model, q).body_pose;
                    }
                    for (size_t b = 0; b < poses.size(); ++b) {
                        double* slot = o + 7 * (r.world_body_offset[w] + art.first_body + b);
                        const scene::Pose& p = poses[b];
                        const double values[7] = {p.position.x,    p.position.y,    p.position.z,
                                                  p.orientation.w, p.orientation.x, p.orientation.y,
                                                  p.orientation.z};
                        std::memcpy(slot, values, sizeof(values));
                    }
                });
        });
}

steel_status steel_batch_read_integrated_positions(steel_batch batch, double* out,
                                                   uint64_t capacity, uint64_t* out_count) {
    return read_scene(
        batch, "steel_batch_read_integrated_positions", out, capacity, out_count,
        [](const scene::SceneRecord& r) { return uint64_t(r.world_position_offset.back()); },
        [](const scene::SceneRecord& r, const std::vector<double>&,
           const std::vector<double>& velocity, double* o) {
            std::copy(r.joint_position.begin(), r.joint_position.end(), o);
            for_each_articulation(
                r, velocity,
                [&](size_t w, const scene::ArticulationRecord& art, const std::vector<double>& qd) {
                    if (art.standalone)
                        return; // no scene position coordinates: see steel_batch_read_body_poses
                    const size_t first = r.world_position_offset[w] + art.first_position;
                    std::vector<double> q(o + first, o + first + art.model.position_count());
                    scene::integrate_positions(art.model, art.kinematics, q, qd, r.dt);
                    std::copy(q.begin(), q.end(), o + first);
                });
        });
}

} // extern "C"
