// A Bullet constraint solver that times its own phases: setup (rows, Jacobians, effective
// masses), the sweeps, and finish (velocities written back), and counts the rows it built.
#pragma once

#include "peer_bench.hpp"

#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>

#include <type_traits>

namespace peers {

// The island callback calls solveGroup a second time with no bodies: neither timed nor counted.
struct TimedSolverBase {
    StepTimes times; // setup; solve = sweeps + finish
    uint32_t rows = 0;
};

template <class Solver> class TimedSolver : public Solver, public TimedSolverBase {
  protected:
    void count_rows() {
        uint32_t built = uint32_t(this->m_tmpSolverContactConstraintPool.size() +
                                  this->m_tmpSolverContactFrictionConstraintPool.size() +
                                  this->m_tmpSolverNonContactConstraintPool.size());
        if constexpr (std::is_base_of_v<btMultiBodyConstraintSolver, Solver>)
            built += uint32_t(this->m_multiBodyNormalContactConstraints.size() +
                              this->m_multiBodyFrictionContactConstraints.size() +
                              this->m_multiBodyNonContactConstraints.size());
        rows = built;
    }

    btScalar solveGroupCacheFriendlySetup(btCollisionObject** bodies, int numBodies,
                                          btPersistentManifold** manifolds, int numManifolds,
                                          btTypedConstraint** constraints, int numConstraints,
                                          const btContactSolverInfo& info,
                                          btIDebugDraw* draw) override {
        if (numBodies == 0)
            return Solver::solveGroupCacheFriendlySetup(bodies, numBodies, manifolds, numManifolds,
                                                        constraints, numConstraints, info, draw);
        const double start = now_seconds();
        const btScalar r = Solver::solveGroupCacheFriendlySetup(
            bodies, numBodies, manifolds, numManifolds, constraints, numConstraints, info, draw);
        times.setup += now_seconds() - start;
        return r;
    }
    btScalar solveGroupCacheFriendlyIterations(btCollisionObject** bodies, int numBodies,
                                               btPersistentManifold** manifolds, int numManifolds,
                                               btTypedConstraint** constraints, int numConstraints,
                                               const btContactSolverInfo& info,
                                               btIDebugDraw* draw) override {
        if (numBodies == 0)
            return Solver::solveGroupCacheFriendlyIterations(bodies, numBodies, manifolds,
                                                             numManifolds, constraints,
                                                             numConstraints, info, draw);
        count_rows(); // here: finish empties the pools
        const double start = now_seconds();
        const btScalar r = Solver::solveGroupCacheFriendlyIterations(
            bodies, numBodies, manifolds, numManifolds, constraints, numConstraints, info, draw);
        times.solve += now_seconds() - start;
        return r;
    }
    btScalar solveGroupCacheFriendlyFinish(btCollisionObject** bodies, int numBodies,
                                           const btContactSolverInfo& info) override {
        if (numBodies == 0) return Solver::solveGroupCacheFriendlyFinish(bodies, numBodies, info);
        const double start = now_seconds();
        const btScalar r = Solver::solveGroupCacheFriendlyFinish(bodies, numBodies, info);
        times.solve += now_seconds() - start;
        return r;
    }
};

} // namespace peers
