// Bullet's side of the peer benchmark (Debian libbullet-dev 3.24, the float64 build): one
// dynamics world per copy, stepped by stepSimulation, with collision detection switched off and
// the scene's contacts put into persistent manifolds by hand (box friction along two
// directions). Free-body scenes (stacks, piles) use btDiscreteDynamicsWorld with
// btSequentialImpulseConstraintSolver; scenes with joints (chain, arm) use btMultiBody
// (reduced coordinates, like Steel) with btMultiBodyConstraintSolver, the free box as a
// btRigidBody. Only the solver's solveGroup is timed, in two parts: setup
// (solveGroupCacheFriendlySetup: rows, Jacobians, effective masses) and solve (the sweeps plus
// solveGroupCacheFriendlyFinish, which writes the velocities back). Bullet runs no threads in
// this build: two threads split the copies.
#include "peer_bench.hpp"
#include "bullet_timed_solver.hpp"

#include <btBulletDynamicsCommon.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyJointLimitConstraint.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>

#include <memory>
#include <vector>

namespace {

using namespace peers;

btVector3 bt(const Vec3& v) {
    return {v[0], v[1], v[2]};
}

// No collision detection: the manifolds hold exactly the scene's contacts.
class NoCollisionDispatcher : public btCollisionDispatcher {
  public:
    using btCollisionDispatcher::btCollisionDispatcher;
    void dispatchAllCollisionPairs(btOverlappingPairCache*, const btDispatcherInfo&,
                                   btDispatcher*) override {}
};

// Where a scene body lives in Bullet: a rigid body, the multibody's base, or one of its links.
struct BodyRef {
    btRigidBody* rigid = nullptr;
    int link = -2; // -1: the multibody's base; >= 0: link index
};

class BulletWorld {
  public:
    explicit BulletWorld(const Scene& scene) : scene_(scene) {
        dispatcher_ = std::make_unique<NoCollisionDispatcher>(&configuration_);
        if (scene.articulated) {
            auto solver = std::make_unique<TimedSolver<btMultiBodyConstraintSolver>>();
            timed_ = solver.get();
            world_ = std::make_unique<btMultiBodyDynamicsWorld>(dispatcher_.get(), &broadphase_,
                                                                solver.get(), &configuration_);
            solver_ = std::move(solver);
            build_multibody();
        } else {
            auto solver = std::make_unique<TimedSolver<btSequentialImpulseConstraintSolver>>();
            timed_ = solver.get();
            world_ = std::make_unique<btDiscreteDynamicsWorld>(dispatcher_.get(), &broadphase_,
                                                               solver.get(), &configuration_);
            solver_ = std::move(solver);
        }
        world_->setGravity(bt(scene.gravity));
        world_->getSimulationIslandManager()->setSplitIslands(false); // one solveGroup per step
        btContactSolverInfo& info = world_->getSolverInfo();
        info.m_solverMode =
            SOLVER_SIMD | SOLVER_USE_2_FRICTION_DIRECTIONS; // cold start, 3 rows/contact
        info.m_splitImpulse = 0;                   // zero gaps: no position correction either way
        info.m_leastSquaresResidualThreshold = -1; // never stop before the sweep count
        add_rigid_bodies();
        add_manifolds();
    }
    ~BulletWorld() {
        for (auto& c : limits_)
            static_cast<btMultiBodyDynamicsWorld*>(world_.get())
                ->removeMultiBodyConstraint(c.get());
        if (multibody_)
            static_cast<btMultiBodyDynamicsWorld*>(world_.get())->removeMultiBody(multibody_.get());
        for (auto& o : colliders_)
            world_->removeCollisionObject(o.get());
        for (auto& b : rigid_)
            world_->removeRigidBody(b.get());
    }
    BulletWorld(const BulletWorld&) = delete;
    BulletWorld& operator=(const BulletWorld&) = delete;

    void set_sweeps(uint32_t sweeps) { world_->getSolverInfo().m_numIterations = int(sweeps); }

    StepTimes step() {
        reset();
        timed_->times = {};
        world_->stepSimulation(btScalar(scene_.dt), 0);
        return timed_->times;
    }

    BodyVelocities velocities() const {
        std::vector<btVector3> omega, vel;
        if (multibody_) {
            omega.resize(size_t(multibody_->getNumLinks()) + 1);
            vel.resize(omega.size());
            multibody_->compTreeLinkVelocities(omega.data(),
                                               vel.data()); // link frames, at the coms
        }
        BodyVelocities v;
        for (const BodyRef& ref : refs_) {
            btVector3 linear, angular;
            if (ref.rigid) {
                linear = ref.rigid->getLinearVelocity();
                angular = ref.rigid->getAngularVelocity();
            } else {
                const size_t k = size_t(ref.link + 1);
                linear = multibody_->localDirToWorld(ref.link, vel[k]);
                angular = multibody_->localDirToWorld(ref.link, omega[k]);
            }
            v.insert(v.end(),
                     {linear[0], linear[1], linear[2], angular[0], angular[1], angular[2]});
        }
        return v;
    }

    void count_rows(uint32_t& rows, double& row_dofs) const {
        rows = timed_->rows;
        row_dofs = count_row_dofs();
    }

    // Bullet's rows span 6 DOFs per rigid body; a multibody row spans the multibody's 6 base
    // DOFs plus its joint DOFs (Bullet stores it at that length even for a fixed base). Limit
    // rows exist only while a limit is reached (none at rest here).
    double count_row_dofs() const {
        const auto side = [&](int32_t body) -> double {
            if (body < 0) return 0;
            const BodyRef& ref = refs_[size_t(body)];
            return ref.rigid ? 6.0 : 6.0 + multibody_->getNumDofs();
        };
        double total = 0;
        for (const Contact& c : scene_.contacts)
            total += 3 * (side(c.body_a) + side(c.body_b));
        const double limit_rows = double(timed_->rows) - 3.0 * double(scene_.contacts.size());
        if (multibody_) total += limit_rows * (6.0 + multibody_->getNumDofs());
        return total;
    }

  private:
    // The bodies with joints form one tree: a floating base (a FREE root with children) or a
    // fixed one (the root's joint goes to the world).
    void build_multibody() {
        const std::vector<Body>& bodies = scene_.bodies;
        refs_.resize(bodies.size());
        bool floating = bodies[0].joint == Joint::Free;
        std::vector<size_t> links;
        for (size_t i = floating ? 1 : 0; i < bodies.size(); ++i)
            if (bodies[i].joint != Joint::Free) links.push_back(i);
        const Body& root = bodies[0];
        multibody_ = std::make_unique<btMultiBody>(int(links.size()), floating ? root.mass : 1.0,
                                                   floating ? bt(root.inertia) : btVector3(1, 1, 1),
                                                   !floating, false);
        if (floating) refs_[0].link = -1;
        base_com_ = floating ? root.com : Vec3{0, 0, 0};
        for (size_t k = 0; k < links.size(); ++k)
            refs_[links[k]].link = int(k);
        for (size_t k = 0; k < links.size(); ++k) {
            const Body& b = bodies[links[k]];
            const int parent = b.parent < 0 ? -1 : refs_[size_t(b.parent)].link;
            const Vec3 parent_com = parent < 0 ? base_com_ : bodies[size_t(b.parent)].com;
            const btVector3 to_pivot = bt(sub(b.anchor, parent_com)),
                            to_com = bt(sub(b.com, b.anchor));
            const btQuaternion same(0, 0, 0, 1);
            if (b.joint == Joint::Revolute)
                multibody_->setupRevolute(int(k), b.mass, bt(b.inertia), parent, same, bt(b.axis),
                                          to_pivot, to_com, true);
            else if (b.joint == Joint::Prismatic)
                multibody_->setupPrismatic(int(k), b.mass, bt(b.inertia), parent, same, bt(b.axis),
                                           to_pivot, to_com, true);
            else
                multibody_->setupFixed(int(k), b.mass, bt(b.inertia), parent, same, to_pivot,
                                       to_com);
        }
        multibody_->finalizeMultiDof();
        multibody_->setLinearDamping(0);
        multibody_->setAngularDamping(0);
        multibody_->setCanSleep(false);
        auto* world = static_cast<btMultiBodyDynamicsWorld*>(world_.get());
        world->addMultiBody(multibody_.get());
        for (size_t k = 0; k < links.size(); ++k) {
            const Body& b = bodies[links[k]];
            if (b.lower > -1e300 || b.upper < 1e300) {
                limits_.push_back(std::make_unique<btMultiBodyJointLimitConstraint>(
                    multibody_.get(), int(k), b.lower, b.upper));
                world->addMultiBodyConstraint(limits_.back().get());
            }
        }
        // Colliders only carry the contacts (manifolds need collision objects); they never
        // collide (mask 0).
        for (int link = floating ? -1 : 0; link < int(links.size()); ++link) {
            colliders_.push_back(std::make_unique<btMultiBodyLinkCollider>(multibody_.get(), link));
            colliders_.back()->setCollisionShape(&marker_);
            world->addCollisionObject(colliders_.back().get(), btBroadphaseProxy::DefaultFilter, 0);
            if (link < 0)
                multibody_->setBaseCollider(colliders_.back().get());
            else
                multibody_->getLink(link).m_collider = colliders_.back().get();
        }
    }

    void add_rigid_bodies() {
        refs_.resize(scene_.bodies.size());
        ground_ = std::make_unique<btRigidBody>(0.0, nullptr, &marker_);
        world_->addRigidBody(ground_.get(), btBroadphaseProxy::StaticFilter, 0);
        for (size_t i = 0; i < scene_.bodies.size(); ++i) {
            if (refs_[i].link != -2) continue;
            const Body& b = scene_.bodies[i];
            rigid_.push_back(
                std::make_unique<btRigidBody>(b.mass, nullptr, &marker_, bt(b.inertia)));
            rigid_.back()->setActivationState(DISABLE_DEACTIVATION);
            world_->addRigidBody(rigid_.back().get(), btBroadphaseProxy::DefaultFilter, 0);
            refs_[i].rigid = rigid_.back().get();
        }
    }

    const btCollisionObject* object(int32_t body) const {
        if (body < 0) return ground_.get();
        const BodyRef& ref = refs_[size_t(body)];
        if (ref.rigid) return ref.rigid;
        return ref.link < 0 ? multibody_->getBaseCollider()
                            : multibody_->getLink(ref.link).m_collider;
    }

    // One manifold per body pair; normalWorldOnB points from B into A, as the scene's normal.
    void add_manifolds() {
        for (const Contact& c : scene_.contacts) {
            const btCollisionObject* a = object(c.body_a);
            const btCollisionObject* b = object(c.body_b);
            btPersistentManifold* manifold = nullptr;
            for (btPersistentManifold* m : manifolds_)
                if (m->getBody0() == a && m->getBody1() == b) manifold = m;
            if (!manifold) {
                manifold = dispatcher_->getNewManifold(a, b);
                manifolds_.push_back(manifold);
            }
            const btVector3 point = bt(c.point), normal = bt(c.normal);
            btManifoldPoint p(a->getWorldTransform().invXform(point),
                              b->getWorldTransform().invXform(point), normal, c.gap);
            p.m_positionWorldOnA = point;
            p.m_positionWorldOnB = point - normal * c.gap;
            p.m_combinedFriction = c.friction;
            p.m_combinedRestitution = 0;
            manifold->addManifoldPoint(p);
        }
    }

    // Back to the initial state (positions, zero velocities, zero impulses, the external forces).
    void reset() {
        const btQuaternion same(0, 0, 0, 1);
        for (size_t i = 0; i < refs_.size(); ++i) {
            const Body& b = scene_.bodies[i];
            if (btRigidBody* r = refs_[i].rigid) {
                r->setWorldTransform(btTransform(same, bt(b.com)));
                r->setInterpolationWorldTransform(r->getWorldTransform());
                r->setLinearVelocity({0, 0, 0});
                r->setAngularVelocity({0, 0, 0});
                r->clearForces();
                r->applyCentralForce(bt(b.force));
            }
        }
        if (multibody_) {
            multibody_->setBasePos(bt(base_com_));
            multibody_->setWorldToBaseRot(same);
            multibody_->setBaseVel({0, 0, 0});
            multibody_->setBaseOmega({0, 0, 0});
            for (int k = 0; k < multibody_->getNumLinks(); ++k) {
                multibody_->setJointPos(k, 0);
                multibody_->setJointVel(k, 0);
            }
            multibody_->clearForcesAndTorques();
            for (size_t i = 0; i < refs_.size(); ++i)
                if (!refs_[i].rigid && refs_[i].link >= 0)
                    multibody_->addLinkForce(refs_[i].link, bt(scene_.bodies[i].force));
            btAlignedObjectArray<btQuaternion> rotations;
            btAlignedObjectArray<btVector3> origins;
            multibody_->forwardKinematics(rotations, origins);
            multibody_->updateCollisionObjectWorldTransforms(rotations, origins);
        }
        for (btPersistentManifold* m : manifolds_)
            for (int k = 0; k < m->getNumContacts(); ++k) {
                btManifoldPoint& p = m->getContactPoint(k);
                p.m_appliedImpulse = p.m_appliedImpulseLateral1 = p.m_appliedImpulseLateral2 = 0;
            }
    }

    const Scene& scene_;
    btDefaultCollisionConfiguration configuration_;
    btDbvtBroadphase broadphase_;
    btSphereShape marker_{0.01};
    std::unique_ptr<NoCollisionDispatcher> dispatcher_;
    std::unique_ptr<btConstraintSolver> solver_;
    TimedSolverBase* timed_ = nullptr;
    std::unique_ptr<btDiscreteDynamicsWorld> world_;
    std::unique_ptr<btMultiBody> multibody_;
    Vec3 base_com_{0, 0, 0};
    std::vector<std::unique_ptr<btMultiBodyJointLimitConstraint>> limits_;
    std::vector<std::unique_ptr<btMultiBodyLinkCollider>> colliders_;
    std::unique_ptr<btRigidBody> ground_;
    std::vector<std::unique_ptr<btRigidBody>> rigid_;
    std::vector<BodyRef> refs_;
    std::vector<btPersistentManifold*> manifolds_;
};

void run_scene(const SceneEntry& entry, const Options& options) {
    const Scene& s = entry.scene;
    for (uint32_t copies : copy_counts(options, entry.small)) {
        std::vector<std::unique_ptr<BulletWorld>> worlds;
        for (uint32_t c = 0; c < copies; ++c)
            worlds.push_back(std::make_unique<BulletWorld>(s));
        run_copies(s, worlds, options, "bullet", s.articulated ? "multibody" : "sequential-impulse",
                   [&](uint32_t sweeps) {
                       for (auto& w : worlds)
                           w->set_sweeps(sweeps);
                   });
    }
}

void no_profile_zone(const char*) {}
void no_profile_leave() {}

} // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    // Bullet's profiler is one global object: switch it off so copies can step on two threads.
    btSetCustomEnterProfileZoneFunc(no_profile_zone);
    btSetCustomLeaveProfileZoneFunc(no_profile_leave);
    print_header();
    for (const SceneEntry& entry : benchmark_scenes())
        if (options.only_scene.empty() || options.only_scene == entry.scene.name)
            run_scene(entry, options);
    return 0;
}
