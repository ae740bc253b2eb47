#include "articulation.hpp"

namespace steel::scene {

namespace {

Quat conjugate(Quat q) {
    return {q.w, -q.x, -q.y, -q.z};
}

Pose inverse(const Pose& pose) {
    const Quat inverse_orientation = conjugate(pose.orientation);
    return {-(rotation(inverse_orientation) * pose.position), inverse_orientation};
}

const Vec3 kUnit[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

// The child joint frame relative to the parent joint frame for the joint's position q.
Pose joint_motion(const JointModel& joint, const double* q) {
    switch (joint.type) {
    case JointType::revolute:
        return {{}, axis_angle(joint.axis, q[0])};
    case JointType::prismatic:
        return {q[0] * joint.axis, {}};
    case JointType::ball:
        return {{}, normalized({q[0], q[1], q[2], q[3]})};
    case JointType::free:
        return {{q[0], q[1], q[2]}, normalized({q[3], q[4], q[5], q[6]})};
    default:
        return {};
    }
}

Pose parent_joint_frame(const ArticulationModel& model, const Kinematics& kin, uint32_t i) {
    const JointModel& joint = model.joints[i];
    return joint.parent < 0 ? joint.parent_frame
                            : compose(kin.body_pose[joint.parent], joint.parent_frame);
}

Spatial joint_velocity(const ArticulationModel& model, const Kinematics& kin, uint32_t i,
                       const double* rates) {
    Spatial sum;
    for (uint32_t k = model.dof_offset[i]; k < model.dof_offset[i + 1]; ++k)
        sum = sum + rates[k] * kin.subspace[k];
    return sum;
}

} // namespace

uint32_t joint_dof_count(JointType type) {
    switch (type) {
    case JointType::revolute:
    case JointType::prismatic:
        return 1;
    case JointType::ball:
        return 3;
    case JointType::free:
        return 6;
    default:
        return 0;
    }
}

uint32_t joint_position_count(JointType type) {
    switch (type) {
    case JointType::revolute:
    case JointType::prismatic:
        return 1;
    case JointType::ball:
        return 4;
    case JointType::free:
        return 7;
    default:
        return 0;
    }
}

void ArticulationModel::finalize() {
    dof_offset.assign(joints.size() + 1, 0);
    position_offset.assign(joints.size() + 1, 0);
    for (size_t i = 0; i < joints.size(); ++i) {
        dof_offset[i + 1] = dof_offset[i] + joint_dof_count(joints[i].type);
        position_offset[i + 1] = position_offset[i] + joint_position_count(joints[i].type);
    }
}

Kinematics forward_kinematics(const ArticulationModel& model, const std::vector<double>& q) {
    Kinematics kin;
    forward_kinematics(model, q, kin);
    return kin;
}

void forward_kinematics(const ArticulationModel& model, const std::vector<double>& q,
                        Kinematics& kin) {
    const size_t count = model.joints.size();
    kin.body_pose.resize(count);
    kin.joint_origin.resize(count);
    kin.subspace.resize(model.dof_count());
    kin.body_inertia.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
        const JointModel& joint = model.joints[i];
        const Pose parent_frame = parent_joint_frame(model, kin, i);
        const Pose child_frame =
            compose(parent_frame, joint_motion(joint, q.data() + model.position_offset[i]));
        kin.body_pose[i] = compose(child_frame, inverse(joint.child_frame));
        const Vec3 o = child_frame.position;
        kin.joint_origin[i] = o;
        Spatial* s = kin.subspace.data() + model.dof_offset[i];
        switch (joint.type) {
        case JointType::revolute: {
            const Vec3 a = rotation(parent_frame.orientation) * joint.axis;
            s[0] = {a, cross(o, a)}; // the axis through o stays still: v_O = o x a
            break;
        }
        case JointType::prismatic:
            s[0] = {{}, rotation(parent_frame.orientation) * joint.axis};
            break;
        case JointType::ball:
            for (int k = 0; k < 3; ++k)
                s[k] = {kUnit[k], cross(o, kUnit[k])};
            break;
        case JointType::free:
            for (int k = 0; k < 3; ++k) {
                s[k] = {{}, kUnit[k]};
                s[3 + k] = {kUnit[k], cross(o, kUnit[k])};
            }
            break;
        default:
            break;
        }
        const BodyModel& body = model.bodies[i];
        const Mat3 r = rotation(kin.body_pose[i].orientation);
        kin.body_inertia[i] = {body.mass, apply(kin.body_pose[i], body.com),
                               r * body.inertia * transpose(r)};
    }
}

std::vector<Spatial> body_velocities(const ArticulationModel& model, const Kinematics& kin,
                                     const std::vector<double>& qd) {
    std::vector<Spatial> velocity(model.joints.size());
    for (uint32_t i = 0; i < model.joints.size(); ++i) {
        const int32_t parent = model.joints[i].parent;
        velocity[i] =
            (parent < 0 ? Spatial{} : velocity[parent]) + joint_velocity(model, kin, i, qd.data());
    }
    return velocity;
}

std::vector<double> mass_matrix(const ArticulationModel& model, const Kinematics& kin) {
    std::vector<double> h;
    DynamicsScratch scratch;
    mass_matrix(model, kin, h, scratch);
    return h;
}

void mass_matrix(const ArticulationModel& model, const Kinematics& kin, std::vector<double>& h,
                 DynamicsScratch& scratch) {
    const uint32_t n = model.dof_count();
    h.assign(size_t(n) * n, 0.0);
    std::vector<Inertia>& composite = scratch.composite;
    composite.assign(kin.body_inertia.begin(), kin.body_inertia.end());
    for (size_t i = model.joints.size(); i-- > 0;)
        if (model.joints[i].parent >= 0)
            composite[model.joints[i].parent] =
                combine(composite[model.joints[i].parent], composite[i]);
    for (uint32_t i = 0; i < model.joints.size(); ++i)
        for (uint32_t k = model.dof_offset[i]; k < model.dof_offset[i + 1]; ++k) {
            const Spatial force = composite[i] * kin.subspace[k];
            for (int32_t j = int32_t(i); j >= 0; j = model.joints[j].parent)
                for (uint32_t l = model.dof_offset[j]; l < model.dof_offset[j + 1]; ++l) {
                    const double value = dot(kin.subspace[l], force);
                    h[size_t(l) * n + k] = value;
                    h[size_t(k) * n + l] = value;
                }
        }
}

std::vector<double> inverse_dynamics(const ArticulationModel& model, const Kinematics& kin,
                                     const std::vector<double>& qd, const std::vector<double>& qdd,
                                     Vec3 gravity, const std::vector<Spatial>& external_force) {
    std::vector<double> tau(model.dof_count());
    DynamicsScratch scratch;
    inverse_dynamics(model, kin, qd.data(), qdd.data(), gravity, external_force, tau.data(),
                     scratch);
    return tau;
}

void inverse_dynamics(const ArticulationModel& model, const Kinematics& kin, const double* qd,
                      const double* qdd, Vec3 gravity, const std::vector<Spatial>& external_force,
                      double* tau, DynamicsScratch& scratch) {
    const size_t count = model.joints.size();
    std::vector<Spatial>& velocity = scratch.velocity;
    std::vector<Spatial>& acceleration = scratch.acceleration;
    std::vector<Spatial>& force = scratch.force;
    velocity.resize(count);
    acceleration.resize(count);
    force.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
        const JointModel& joint = model.joints[i];
        const int32_t parent = joint.parent;
        const Spatial joint_rate = joint_velocity(model, kin, i, qd);
        velocity[i] = (parent < 0 ? Spatial{} : velocity[parent]) + joint_rate;
        // The subspace's own rate of change times qd. Revolute and prismatic columns are fixed
        // in the child: V x (S qd). Ball and free angular columns keep world directions but
        // hang on the moving joint origin o: (0, o_dot x w).
        Spatial bias;
        const Vec3 origin_velocity = point_velocity(velocity[i], kin.joint_origin[i]);
        switch (joint.type) {
        case JointType::revolute:
        case JointType::prismatic:
            bias = cross_motion(velocity[i], joint_rate);
            break;
        case JointType::ball:
            bias = {{}, cross(origin_velocity, joint_rate.angular)};
            break;
        case JointType::free: {
            const uint32_t k = model.dof_offset[i];
            const Vec3 w{qd[k + 3], qd[k + 4], qd[k + 5]};
            bias = {{}, cross(origin_velocity, w)};
            break;
        }
        default:
            break;
        }
        // Gravity as a fictitious upward acceleration of the fixed base (Featherstone 5.3).
        const Spatial base{{}, -gravity};
        const Spatial joint_acceleration = qdd ? joint_velocity(model, kin, i, qdd) : Spatial{};
        acceleration[i] = (parent < 0 ? base : acceleration[parent]) + joint_acceleration + bias;
        const Inertia& inertia = kin.body_inertia[i];
        force[i] = inertia * acceleration[i] + cross_force(velocity[i], inertia * velocity[i]);
        if (!external_force.empty()) force[i] = force[i] + (-1.0) * external_force[i];
    }
    for (size_t i = count; i-- > 0;) {
        for (uint32_t k = model.dof_offset[i]; k < model.dof_offset[i + 1]; ++k)
            tau[k] = dot(kin.subspace[k], force[i]);
        if (model.joints[i].parent >= 0)
            force[model.joints[i].parent] = force[model.joints[i].parent] + force[i];
    }
}

void point_jacobian(const ArticulationModel& model, const Kinematics& kin, int32_t body, Vec3 point,
                    Vec3 direction, double* row) {
    for (int32_t j = body; j >= 0; j = model.joints[j].parent)
        for (uint32_t k = model.dof_offset[j]; k < model.dof_offset[j + 1]; ++k)
            row[k] = dot(direction, point_velocity(kin.subspace[k], point));
}

void angular_jacobian(const ArticulationModel& model, const Kinematics& kin, int32_t body,
                      Vec3 direction, double* row) {
    for (int32_t j = body; j >= 0; j = model.joints[j].parent)
        for (uint32_t k = model.dof_offset[j]; k < model.dof_offset[j + 1]; ++k)
            row[k] = dot(direction, kin.subspace[k].angular);
}

void integrate_positions(const ArticulationModel& model, const Kinematics& kin,
                         std::vector<double>& q, const std::vector<double>& qd, double dt) {
    for (uint32_t i = 0; i < model.joints.size(); ++i) {
        double* p = q.data() + model.position_offset[i];
        const double* v = qd.data() + model.dof_offset[i];
        const JointModel& joint = model.joints[i];
        // A world-axes rotation rate w turns the child joint frame, whose orientation relative
        // to the parent joint frame (orientation F in world) is r: r' = F^-1 exp(w dt) F r.
        const Quat frame = parent_joint_frame(model, kin, i).orientation;
        const auto turn = [&](double* r, Vec3 w) {
            const Quat relative{r[0], r[1], r[2], r[3]};
            const Quat turned =
                normalized(conjugate(frame) * integrate_world(frame * relative, w, dt));
            r[0] = turned.w;
            r[1] = turned.x;
            r[2] = turned.y;
            r[3] = turned.z;
        };
        switch (joint.type) {
        case JointType::revolute:
        case JointType::prismatic:
            p[0] += v[0] * dt;
            break;
        case JointType::ball:
            turn(p, {v[0], v[1], v[2]});
            break;
        case JointType::free: {
            const Vec3 step = transpose(rotation(frame)) * (dt * Vec3{v[0], v[1], v[2]});
            p[0] += step.x;
            p[1] += step.y;
            p[2] += step.z;
            turn(p + 3, {v[3], v[4], v[5]});
            break;
        }
        default:
            break;
        }
    }
}

} // namespace steel::scene
