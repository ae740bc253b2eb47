// MuJoCo's side of the peer benchmark (Debian libmujoco-dev 2.2.2): one mjData per copy over one
// shared mjModel, PGS solver, pyramidal friction (4 rows per contact), warm start off,
// tolerance 0 (every sweep runs). Collision detection is not run: the forward pass is called
// stage by stage and the scene's contacts are written into d->contact in place of
// mj_collision's. Contacts are made nearly hard (solimp 0.9999: MuJoCo's constraints are always
// soft, with regularization R = (1 - d) / d times the row's diagonal). Timed: mj_projectConstraint
// as setup (J M^-1 J' + R, the rows) and mj_fwdConstraint as the solve (the right-hand side, the
// PGS sweeps, and qacc from the forces). MuJoCo 2.2.2 has no threads: two threads split the copies.
#include "mujoco_model.hpp"
#include "peer_bench.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace peers;

Vec3 normalized(const Vec3& v) {
    const double n = std::sqrt(dot(v, v));
    return {v[0] / n, v[1] / n, v[2] / n};
}

class MujocoWorld {
  public:
    MujocoWorld(const Scene& scene, const mjModel* m) : scene_(scene), m_(m), d_(mj_makeData(m)) {
        for (size_t k = 0; k < scene.bodies.size(); ++k) {
            body_id_.push_back(mj_name2id(m, mjOBJ_BODY, ("b" + std::to_string(k)).c_str()));
            geom_id_.push_back(mj_name2id(m, mjOBJ_GEOM, ("g" + std::to_string(k)).c_str()));
            const Vec3& f = scene.bodies[k].force;
            for (int i = 0; i < 3; ++i)
                d_->xfrc_applied[6 * body_id_.back() + i] = f[size_t(i)];
        }
    }
    ~MujocoWorld() { mj_deleteData(d_); }
    MujocoWorld(const MujocoWorld&) = delete;
    MujocoWorld& operator=(const MujocoWorld&) = delete;

    StepTimes step() {
        mju_copy(d_->qpos, m_->qpos0, m_->nq);
        mju_zero(d_->qvel, m_->nv);
        // mj_fwdPosition without mj_collision.
        mj_kinematics(m_, d_);
        mj_comPos(m_, d_);
        mj_camlight(m_, d_);
        mj_tendon(m_, d_);
        mj_crb(m_, d_);
        mj_factorM(m_, d_);
        write_contacts();
        mj_makeConstraint(m_, d_);
        mj_transmission(m_, d_);
        StepTimes t;
        double start = now_seconds();
        mj_projectConstraint(m_, d_);
        t.setup = now_seconds() - start;
        mj_fwdVelocity(m_, d_);
        mj_fwdActuation(m_, d_);
        mj_fwdAcceleration(m_, d_);
        start = now_seconds();
        mj_fwdConstraint(m_, d_);
        t.solve = now_seconds() - start;
        return t;
    }

    // Velocities after the step: qvel + dt qacc (MuJoCo's Euler), mapped to each body's com.
    BodyVelocities velocities() const {
        const int nv = m_->nv;
        const size_t n = size_t(nv);
        std::vector<mjtNum> v(n), jacp(3 * n), jacr(3 * n);
        for (int i = 0; i < nv; ++i)
            v[size_t(i)] = d_->qvel[i] + m_->opt.timestep * d_->qacc[i];
        BodyVelocities out;
        for (int id : body_id_) {
            mj_jacBodyCom(m_, d_, jacp.data(), jacr.data(), id);
            double linear[3], angular[3];
            mju_mulMatVec(linear, jacp.data(), v.data(), 3, nv);
            mju_mulMatVec(angular, jacr.data(), v.data(), 3, nv);
            out.insert(out.end(),
                       {linear[0], linear[1], linear[2], angular[0], angular[1], angular[2]});
        }
        return out;
    }

    // MuJoCo's rows (nefc); a contact row's Jacobian is nonzero on the DOFs from each body up to
    // its tree's root.
    void count_rows(uint32_t& rows, double& row_dofs) const {
        rows = uint32_t(d_->nefc);
        row_dofs = count_row_dofs();
    }
    double count_row_dofs() const {
        double total = 0;
        for (const Contact& c : scene_.contacts)
            total += 4.0 * (chain_dofs(scene_, c.body_a) + chain_dofs(scene_, c.body_b));
        return total + double(d_->nefc) - 4.0 * double(scene_.contacts.size());
    }

  private:
    // MuJoCo's normal points from geom1 to geom2 and pushes geom2 along it: geom2 is body a.
    void write_contacts() {
        d_->ncon = 0;
        for (const Contact& c : scene_.contacts) {
            mjContact& con = d_->contact[d_->ncon++];
            con = mjContact{};
            con.dist = c.gap;
            const Vec3 n = normalized(c.normal);
            const Vec3 t1 =
                normalized(cross(n, std::fabs(n[0]) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0}));
            const Vec3 t2 = cross(n, t1);
            for (int i = 0; i < 3; ++i) {
                con.pos[i] = c.point[size_t(i)];
                con.frame[i] = n[size_t(i)];
                con.frame[3 + i] = t1[size_t(i)];
                con.frame[6 + i] = t2[size_t(i)];
            }
            con.friction[0] = con.friction[1] = c.friction;
            con.friction[2] = 0.005;
            con.friction[3] = con.friction[4] = 0.0001;
            con.solref[0] = 0.02;
            con.solref[1] = 1;
            const mjtNum solimp[5] = {0.9999, 0.9999, 0.001, 0.5, 2};
            for (int i = 0; i < mjNIMP; ++i)
                con.solimp[i] = solimp[i];
            con.dim = 3;
            con.geom1 = c.body_b < 0 ? 0 : geom_id_[size_t(c.body_b)];
            con.geom2 = geom_id_[size_t(c.body_a)];
            con.exclude = 0;
            con.efc_address = -1;
        }
    }

    const Scene& scene_;
    const mjModel* m_;
    mjData* d_;
    std::vector<int> body_id_, geom_id_;
};

void run_scene(const SceneEntry& entry, const Options& options) {
    const Scene& s = entry.scene;
    if (s.contacts.size() > 2000) {
        print_skip(
            "mujoco", "pgs", s.name,
            "not run: MuJoCo 2.2.2 sizes efc_AR (and its sparse column index) as njmax x njmax per "
            "mjData; at 16000 rows that is 2 GB of doubles plus 1 GB of ints");
        return;
    }
    mjModel* m = load_mujoco_model(s, 10);
    if (!m) return;
    for (uint32_t copies : copy_counts(options, entry.small)) {
        std::vector<std::unique_ptr<MujocoWorld>> worlds;
        for (uint32_t c = 0; c < copies; ++c)
            worlds.push_back(std::make_unique<MujocoWorld>(s, m));
        run_copies(s, worlds, options, "mujoco", "pgs",
                   [&](uint32_t sweeps) { m->opt.iterations = int(sweeps); });
    }
    mj_deleteModel(m);
}

void warning_to_stderr(const char* message) {
    std::fprintf(stderr, "mujoco warning: %s\n", message);
}
void error_to_stderr(const char* message) {
    std::fprintf(stderr, "mujoco error: %s\n", message);
    std::exit(1);
}

} // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    mju_user_warning = warning_to_stderr; // not MUJOCO_LOG.TXT in the working directory
    mju_user_error = error_to_stderr;
    print_header();
    for (const SceneEntry& entry : benchmark_scenes())
        if (options.only_scene.empty() || options.only_scene == entry.scene.name)
            run_scene(entry, options);
    return 0;
}
