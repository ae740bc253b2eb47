// ODE's side of the peer benchmark (Debian libode-dev 0.16, double precision): every copy is its
// own dWorld; bodies at their com, hinge/slider/fixed joints for articulations (ODE works in
// maximal coordinates), and the scene's contacts fed as contact joints (dContactApprox1: box
// friction bounded by mu times the normal impulse, like Steel's). The timed figure is one
// dWorldQuickStep: it includes building the Jacobians and inverse inertias, the unconstrained
// velocity, the SOR-LCP sweeps (ODE's default over-relaxation 1.3 and its reordering of rows
// every 8 sweeps are left as they are) and integrating positions. ODE has no threads inside a
// step here: two threads split the copies.
#include "peer_bench.hpp"

#include <ode/ode.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace {

using namespace peers;

class OdeWorld {
  public:
    explicit OdeWorld(const Scene& scene) : scene_(scene) {
        world_ = dWorldCreate();
        // Each world gets its own (single-threaded) threading object: the default one is shared
        // by all worlds and asserts when two threads step different worlds at once.
        threading_ = dThreadingAllocateSelfThreadedImplementation();
        dWorldSetStepThreadingImplementation(
            world_, dThreadingImplementationGetFunctions(threading_), threading_);
        dWorldSetGravity(world_, scene.gravity[0], scene.gravity[1], scene.gravity[2]);
        contacts_ = dJointGroupCreate(0);
        for (const Body& b : scene.bodies) {
            dBodyID body = dBodyCreate(world_);
            dMass mass;
            dMassSetParameters(&mass, b.mass, 0, 0, 0, b.inertia[0], b.inertia[1], b.inertia[2], 0,
                               0, 0);
            dBodySetMass(body, &mass);
            bodies_.push_back(body);
        }
        reset_bodies();
        for (size_t i = 0; i < scene.bodies.size(); ++i)
            add_joint(i);
    }
    ~OdeWorld() {
        dJointGroupDestroy(contacts_);
        dWorldDestroy(world_);
        dThreadingFreeImplementation(threading_);
    }
    OdeWorld(const OdeWorld&) = delete;
    OdeWorld& operator=(const OdeWorld&) = delete;

    void set_sweeps(uint32_t sweeps) { dWorldSetQuickStepNumIterations(world_, int(sweeps)); }

    // Back to the scene's initial state with fresh contact joints, then one timed step.
    StepTimes step() {
        reset_bodies();
        dJointGroupEmpty(contacts_);
        for (const Contact& c : scene_.contacts) {
            dContact contact{};
            contact.surface.mode = dContactApprox1;
            contact.surface.mu = c.friction;
            for (int k = 0; k < 3; ++k) {
                contact.geom.pos[k] = c.point[k];
                contact.geom.normal[k] = c.normal[k];
            }
            contact.geom.depth = -c.gap;
            dJointID joint = dJointCreateContact(world_, contacts_, &contact);
            dJointAttach(joint, bodies_[size_t(c.body_a)],
                         c.body_b < 0 ? nullptr : bodies_[size_t(c.body_b)]);
        }
        StepTimes t;
        const double start = now_seconds();
        dWorldQuickStep(world_, scene_.dt);
        t.solve = now_seconds() - start;
        return t;
    }

    BodyVelocities velocities() const {
        BodyVelocities v;
        for (dBodyID body : bodies_) {
            const dReal* linear = dBodyGetLinearVel(body);
            const dReal* angular = dBodyGetAngularVel(body);
            v.insert(v.end(),
                     {linear[0], linear[1], linear[2], angular[0], angular[1], angular[2]});
        }
        return v;
    }

    // ODE's rows: 3 per contact (mu > 0), 5 per hinge or slider (limits at rest inside their
    // range add none), 6 per fixed joint; each row spans 6 DOFs per dynamic body it joins.
    void count_rows(uint32_t& rows, double& row_dofs) const {
        rows = 0;
        row_dofs = 0;
        for (const Contact& c : scene_.contacts) {
            rows += 3;
            row_dofs += 3.0 * (c.body_b < 0 ? 6 : 12);
        }
        for (const Body& b : scene_.bodies) {
            const uint32_t n = b.joint == Joint::Free ? 0 : b.joint == Joint::Fixed ? 6 : 5;
            rows += n;
            row_dofs += n * (b.parent < 0 ? 6.0 : 12.0);
        }
    }

  private:
    void reset_bodies() {
        const dQuaternion identity{1, 0, 0, 0};
        for (size_t i = 0; i < bodies_.size(); ++i) {
            const Body& b = scene_.bodies[i];
            dBodySetPosition(bodies_[i], b.com[0], b.com[1], b.com[2]);
            dBodySetQuaternion(bodies_[i], identity);
            dBodySetLinearVel(bodies_[i], 0, 0, 0);
            dBodySetAngularVel(bodies_[i], 0, 0, 0);
            dBodySetForce(bodies_[i], b.force[0], b.force[1], b.force[2]);
            dBodySetTorque(bodies_[i], 0, 0, 0);
        }
    }

    void add_joint(size_t i) {
        const Body& b = scene_.bodies[i];
        if (b.joint == Joint::Free) return;
        dJointID joint = nullptr;
        switch (b.joint) {
        case Joint::Revolute:
            joint = dJointCreateHinge(world_, nullptr);
            break;
        case Joint::Prismatic:
            joint = dJointCreateSlider(world_, nullptr);
            break;
        default:
            joint = dJointCreateFixed(world_, nullptr);
            break;
        }
        dJointAttach(joint, bodies_[i], b.parent < 0 ? nullptr : bodies_[size_t(b.parent)]);
        if (b.joint == Joint::Revolute) {
            dJointSetHingeAnchor(joint, b.anchor[0], b.anchor[1], b.anchor[2]);
            dJointSetHingeAxis(joint, b.axis[0], b.axis[1], b.axis[2]);
            if (b.lower > -1e300) dJointSetHingeParam(joint, dParamLoStop, b.lower);
            if (b.upper < 1e300) dJointSetHingeParam(joint, dParamHiStop, b.upper);
        } else if (b.joint == Joint::Prismatic) {
            dJointSetSliderAxis(joint, b.axis[0], b.axis[1], b.axis[2]);
        } else {
            dJointSetFixed(joint);
        }
    }

    const Scene& scene_;
    dWorldID world_;
    dThreadingImplementationID threading_;
    dJointGroupID contacts_;
    std::vector<dBodyID> bodies_;
};

void run_scene(const SceneEntry& entry, const Options& options) {
    const Scene& s = entry.scene;
    for (uint32_t copies : copy_counts(options, entry.small)) {
        std::vector<std::unique_ptr<OdeWorld>> worlds;
        for (uint32_t c = 0; c < copies; ++c)
            worlds.push_back(std::make_unique<OdeWorld>(s));
        run_copies(
            s, worlds, options, "ode", "quickstep",
            [&](uint32_t sweeps) {
                for (auto& w : worlds)
                    w->set_sweeps(sweeps);
            },
            [] { dAllocateODEDataForThread(dAllocateMaskAll); },
            [] { dRandSetSeed(1); }); // ODE reorders rows at random: make the residual repeatable
    }
}

} // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    dInitODE2(0);
    dAllocateODEDataForThread(dAllocateMaskAll);
    print_header();
    for (const SceneEntry& entry : benchmark_scenes())
        if (options.only_scene.empty() || options.only_scene == entry.scene.name)
            run_scene(entry, options);
    dCloseODE();
    return 0;
}
