// Differential fuzz target: the small-world dense path and the general (matrix-free) sweep are the
// same Gauss-Seidel iteration (SPEC 2, 3), so on any well-posed small world they must agree to
// rounding, sweep for sweep. The input builds a few small worlds the way a physics engine would
// (bodies with symmetric positive definite mass matrices H = B B^T + (n/4) I, rows over one or two
// bodies with Y = H^-1 J^T, every row kind, cone pairs, regularization, cfm, warm starts,
// bilateral pre-elimination), solves them once forced onto each path, and fails loudly, printing
// the world, when the impulses or velocities differ by more than rounding allows.
//
// Each forced solve is run a second time by the CUDA kernels, on the host (the emulation of
// tests/simt/, as fuzz_cuda_emulated.cpp runs them): the kernels sum in other orders than the CPU
// backend, so they are held to the same rounding rules against the CPU's solve on the same path,
// with the same sweep count, path and non-finite flag.
//
// Left out on purpose: a residual tolerance and Nesterov momentum. Both decide by comparing
// numbers (stop now? restart?), so a rounding-sized difference can legitimately flip a decision
// and change the result by far more than rounding. Ill-posed worlds (degenerate cone pairs,
// singular pre-elimination; see well_posed) are solved but not compared: there both paths return
// rounding noise amplified by 1e10 and more, and "agree to rounding" has no meaning. Where A is
// singular (more rows than the world can tell apart) only the velocities are unique, and only
// they are compared. "To rounding" is 1e-8 of the world's scale plus ten times what a 1e-13
// nudge of its inputs moves the answer (see the comments at the comparison).
#include "emulated.hpp"
#include "fuzz_input.hpp"

#include <steel/steel.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

struct Body {
    uint32_t offset, dofs;
    std::vector<double> factor; // Cholesky factor of H, row-major lower triangle
};

bool cholesky(std::vector<double>& a, uint32_t n) {
    for (uint32_t j = 0; j < n; ++j) {
        double d = a[j * n + j];
        for (uint32_t k = 0; k < j; ++k)
            d -= a[j * n + k] * a[j * n + k];
        if (!(d > 0)) return false;
        a[j * n + j] = std::sqrt(d);
        for (uint32_t i = j + 1; i < n; ++i) {
            double s = a[i * n + j];
            for (uint32_t k = 0; k < j; ++k)
                s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / a[j * n + j];
        }
    }
    return true;
}

void solve_in_place(const std::vector<double>& l, uint32_t n, double* x) {
    for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t k = 0; k < i; ++k)
            x[i] -= l[i * n + k] * x[k];
        x[i] /= l[i * n + i];
    }
    for (uint32_t i = n; i-- > 0;) {
        for (uint32_t k = i + 1; k < n; ++k)
            x[i] -= l[k * n + i] * x[k];
        x[i] /= l[i * n + i];
    }
}

struct Scene {
    std::vector<uint32_t> dofs, rows, block_offset, block_length;
    std::vector<double> v_hat, jacobian, response, bias, lower, upper, friction, regularization,
        initial;
    std::vector<int32_t> kind, normal_row;

    steel_rows_desc desc() const {
        steel_rows_desc d;
        steel_rows_desc_default(&d);
        d.world_count = uint32_t(dofs.size());
        d.world_dof_counts = dofs.data();
        d.world_row_counts = rows.data();
        d.unconstrained_velocity = v_hat.data();
        d.block_offset = block_offset.data();
        d.block_length = block_length.data();
        d.value_count = jacobian.size();
        d.jacobian = jacobian.data();
        d.response = response.data();
        d.bias = bias.data();
        d.kind = kind.data();
        d.lower = lower.data();
        d.upper = upper.data();
        d.normal_row = normal_row.data();
        d.friction = friction.data();
        d.regularization = regularization.data();
        d.initial_impulse = initial.data();
        return d;
    }
};

// One row's block over one body: J from the input, Y = H^-1 J^T.
void add_block(Scene& s, fuzz::Input& in, const Body& body) {
    s.block_offset.push_back(body.offset);
    s.block_length.push_back(body.dofs);
    std::vector<double> y(body.dofs);
    for (uint32_t k = 0; k < body.dofs; ++k) {
        y[k] = in.unit();
        s.jacobian.push_back(y[k]);
    }
    solve_in_place(body.factor, body.dofs, y.data());
    s.response.insert(s.response.end(), y.begin(), y.end());
}

void add_row(Scene& s, fuzz::Input& in, const std::vector<Body>& bodies, int32_t kind,
             int32_t normal, double mu) {
    const uint32_t a = in.below(uint32_t(bodies.size()));
    add_block(s, in, bodies[a]);
    if (bodies.size() > 1 && in.flag()) {
        add_block(s, in, bodies[(a + 1 + in.below(uint32_t(bodies.size()) - 1)) % bodies.size()]);
    } else {
        s.block_offset.push_back(0);
        s.block_length.push_back(0);
    }
    s.kind.push_back(kind);
    s.normal_row.push_back(normal);
    s.friction.push_back(mu);
    s.bias.push_back(2.0 * in.unit());
    const double lo = -std::fabs(in.unit()) * 2.0, hi = std::fabs(in.unit()) * 2.0;
    s.lower.push_back(kind == STEEL_ROW_BOUNDED ? lo : 0.0);
    s.upper.push_back(kind == STEEL_ROW_BOUNDED ? hi : 0.0);
    s.regularization.push_back(in.below(4) == 0 ? std::fabs(in.unit()) * 0.1 : 0.0);
    s.initial.push_back(in.below(3) == 0 ? in.unit() : 0.0);
}

// Returns false when the input does not make a well-posed world (it is then skipped).
bool add_world(Scene& s, fuzz::Input& in) {
    std::vector<Body> bodies(1 + in.below(3));
    uint32_t n = 0;
    for (Body& body : bodies) {
        body.offset = n;
        body.dofs = 1 + in.below(4);
        n += body.dofs;
        const uint32_t d = body.dofs;
        std::vector<double> b(size_t(d) * d);
        for (double& value : b)
            value = in.unit();
        body.factor.assign(size_t(d) * d, 0.0);
        for (uint32_t i = 0; i < d; ++i)
            for (uint32_t j = 0; j < d; ++j) {
                double sum = i == j ? 0.25 * d : 0.0;
                for (uint32_t k = 0; k < d; ++k)
                    sum += b[i * d + k] * b[j * d + k];
                body.factor[i * d + j] = sum;
            }
        if (!cholesky(body.factor, d)) return false;
    }
    s.dofs.push_back(n);
    for (uint32_t k = 0; k < n; ++k)
        s.v_hat.push_back(2.0 * in.unit());
    const uint32_t m_target = 1 + in.below(12);
    uint32_t m = 0;
    int32_t last_normal = -1;
    while (m < m_target) {
        const uint32_t pick = in.below(6);
        if (pick == 4 && last_normal >= 0 && m + 2 <= m_target) { // a cone pair
            const double mu = std::fabs(in.unit());
            add_row(s, in, bodies, STEEL_ROW_FRICTION_CONE, last_normal, mu);
            add_row(s, in, bodies, STEEL_ROW_FRICTION_CONE, last_normal, mu);
            m += 2;
            continue;
        }
        if (pick == 3 && last_normal >= 0) {
            add_row(s, in, bodies, STEEL_ROW_FRICTION_BOX, last_normal, std::fabs(in.unit()));
        } else if (pick == 2 || pick >= 3) {
            add_row(s, in, bodies, STEEL_ROW_CONTACT_NORMAL, -1, 0.0);
            last_normal = int32_t(m);
        } else {
            add_row(s, in, bodies, pick == 1 ? STEEL_ROW_BOUNDED : STEEL_ROW_BILATERAL, -1, 0.0);
        }
        ++m;
    }
    s.rows.push_back(m);
    return true;
}

// The condition number of a small symmetric matrix (row-major k x k), from its eigenvalues by
// cyclic Jacobi rotations; infinity when it is singular or indefinite.
double condition_number(std::vector<double> a, uint32_t k) {
    for (int sweep = 0; sweep < 50; ++sweep) {
        double off = 0;
        for (uint32_t p = 0; p < k; ++p)
            for (uint32_t q = p + 1; q < k; ++q)
                off += a[p * k + q] * a[p * k + q];
        if (off < 1e-300) break;
        for (uint32_t p = 0; p < k; ++p)
            for (uint32_t q = p + 1; q < k; ++q) {
                const double apq = a[p * k + q];
                if (apq == 0) continue;
                const double theta = (a[q * k + q] - a[p * k + p]) / (2 * apq);
                const double t =
                    (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), s = t * c;
                for (uint32_t r = 0; r < k; ++r) { // columns p, q
                    const double arp = a[r * k + p], arq = a[r * k + q];
                    a[r * k + p] = c * arp - s * arq;
                    a[r * k + q] = s * arp + c * arq;
                }
                for (uint32_t r = 0; r < k; ++r) { // rows p, q
                    const double apr = a[p * k + r], aqr = a[q * k + r];
                    a[p * k + r] = c * apr - s * aqr;
                    a[q * k + r] = s * apr + c * aqr;
                }
            }
    }
    double low = INFINITY, high = 0;
    for (uint32_t p = 0; p < k; ++p) {
        low = std::min(low, a[p * k + p]);
        high = std::max(high, a[p * k + p]);
    }
    return low > 0 ? high / low : INFINITY;
}

// The world's Delassus matrix A = J Y^T (m x m, row-major), symmetrized: it is symmetric up to
// the rounding of Y = H^-1 J^T.
std::vector<double> delassus(const Scene& s, uint32_t world, uint64_t row0, uint64_t value0) {
    const uint32_t m = s.rows[world], n = s.dofs[world];
    std::vector<double> J(size_t(m) * n, 0.0), Y(size_t(m) * n, 0.0);
    uint64_t value = value0;
    for (uint32_t i = 0; i < m; ++i)
        for (int b = 0; b < 2; ++b)
            for (uint32_t j = 0; j < s.block_length[2 * (row0 + i) + b]; ++j, ++value) {
                const uint32_t dof = s.block_offset[2 * (row0 + i) + b] + j;
                J[size_t(i) * n + dof] += s.jacobian[value];
                Y[size_t(i) * n + dof] += s.response[value];
            }
    std::vector<double> A(size_t(m) * m, 0.0);
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < m; ++j)
            for (uint32_t d = 0; d < n; ++d)
                A[size_t(i) * m + j] += J[size_t(i) * n + d] * Y[size_t(j) * n + d];
    for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = i + 1; j < m; ++j)
            A[size_t(i) * m + j] = A[size_t(j) * m + i] =
                0.5 * (A[size_t(i) * m + j] + A[size_t(j) * m + i]);
    return A;
}

// Whether agreement to rounding means anything for this world. Some worlds are ill-posed: the
// solver divides by a quantity that is (nearly) zero in exact arithmetic and rounding noise in
// practice, so both paths get rounding amplified by the condition of that division, up to 1e10
// and more, and differ by it. Worlds whose amplification may pass about 1e4 are not compared
// (every other world must agree to 1e-8 of its scale):
//  - a cone pair whose two tangent rows are (nearly) parallel: its 2x2 block of the matrix the
//    sweep sees (with the rows' regularization) is singular up to rounding, and the block step
//    divides by its determinant; or whose rows differ in scale by over 100x (a real contact's
//    tangents are unit directions): the disk |lambda_t| <= mu lambda_n then weighs an impulse
//    that barely moves the world against one that does, and its projection is ill-conditioned;
//  - with pre-elimination, which solves the bilateral block exactly, regularized by
//    r = max(cfm, 1e-10 * its largest diagonal entry) (impl/preelimination.hpp), and sweeps the
//    other rows C on the Schur complement A_CC - A_CB (A_BB + r I)^-1 A_BC: a (nearly) singular
//    A_BB (redundant bilateral rows, whose impulses r then decides), or a row of C whose Schur
//    diagonal all but vanishes (a limit or contact on a DOF the bilateral rows already fix, whose
//    velocity error is 0/0 after projection).
struct Posedness {
    bool compare = true;         // false: ill-posed, see above
    bool unique_impulses = true; // false: A (as swept) is singular, only velocities are defined
};

Posedness well_posed(const Scene& s, uint32_t world, uint64_t row0, uint64_t value0,
                     const steel_solve_options& options) {
    Posedness skip;
    skip.compare = false;
    const uint32_t m = s.rows[world];
    const std::vector<double> A = delassus(s, world, row0, value0);
    // The rows the sweep runs over, and the matrix it sees: A itself, or with pre-elimination
    // the Schur complement of the bilateral block over the other rows.
    std::vector<uint32_t> swept, bilateral;
    for (uint32_t i = 0; i < m; ++i)
        (options.enable_bilateral_preelimination && s.kind[row0 + i] == STEEL_ROW_BILATERAL
             ? bilateral
             : swept)
            .push_back(i);
    const uint32_t c = uint32_t(swept.size()), k = uint32_t(bilateral.size());
    std::vector<double> M(size_t(c) * c);
    for (uint32_t p = 0; p < c; ++p)
        for (uint32_t q = 0; q < c; ++q)
            M[p * c + q] = A[size_t(swept[p]) * m + swept[q]];
    if (k > 0) {
        std::vector<double> block(size_t(k) * k);
        double largest = 0;
        for (uint32_t p = 0; p < k; ++p) {
            for (uint32_t q = 0; q < k; ++q)
                block[p * k + q] = A[size_t(bilateral[p]) * m + bilateral[q]];
            largest = std::max(largest, block[p * k + p]);
        }
        const double r = std::max(options.cfm, 1e-10 * largest);
        for (uint32_t p = 0; p < k; ++p)
            block[p * k + p] += r;
        if (!(condition_number(block, k) <= 1e4)) return skip;
        if (!cholesky(block, k)) return skip;
        for (uint32_t q = 0; q < c; ++q) {
            std::vector<double> x(k); // (A_BB + r I)^-1 A_Bq
            for (uint32_t b = 0; b < k; ++b)
                x[b] = A[size_t(bilateral[b]) * m + swept[q]];
            solve_in_place(block, k, x.data());
            for (uint32_t p = 0; p < c; ++p)
                for (uint32_t b = 0; b < k; ++b)
                    M[p * c + q] -= A[size_t(swept[p]) * m + bilateral[b]] * x[b];
        }
        for (uint32_t p = 0; p < c; ++p)
            if (!(M[p * c + p] > 1e-3 * A[size_t(swept[p]) * m + swept[p]])) return skip;
    }
    for (uint32_t p = 0; p + 1 < c; ++p) {
        if (s.kind[row0 + swept[p]] != STEEL_ROW_FRICTION_CONE) continue;
        const double a00 = M[p * c + p] + s.regularization[row0 + swept[p]];
        const double a11 = M[(p + 1) * c + p + 1] + s.regularization[row0 + swept[p + 1]];
        const double a01 = 0.5 * (M[p * c + p + 1] + M[(p + 1) * c + p]);
        if (!(a00 * a11 - a01 * a01 > 1e-3 * a00 * a11)) return skip; // condition number <~ 4e3
        if (!(a00 > 1e-2 * a11 && a11 > 1e-2 * a00)) return skip;     // tangents of unlike scale
        ++p;
    }
    // With more rows than the world can tell apart (a box on four contacts, redundant joints), A
    // is singular: the velocities are determined, the impulses are not, and each path may settle
    // on another of the equally valid splits. Impulses are compared only where they are unique:
    // A as swept, with each row's own diagonal term (cfm or regularization), well-conditioned.
    for (uint32_t p = 0; p < c; ++p) {
        const uint64_t r = row0 + swept[p];
        const double own =
            s.regularization[r] > 0 ? s.regularization[r]
            : s.kind[r] == STEEL_ROW_CONTACT_NORMAL && options.contact_regularization > 0
                ? options.contact_regularization
            : s.kind[r] == STEEL_ROW_FRICTION_CONE ? 0.0
                                                   : options.cfm;
        M[p * c + p] += own;
    }
    for (uint32_t p = 0; p < c; ++p)
        for (uint32_t q = p + 1; q < c; ++q)
            M[p * c + q] = M[q * c + p] = 0.5 * (M[p * c + q] + M[q * c + p]);
    Posedness result;
    result.unique_impulses = c == 0 || condition_number(M, c) <= 1e8;
    return result;
}

struct Result {
    std::vector<double> impulses, velocities;
    std::vector<steel_world_stats> stats;
};

// Solves the scene forced onto one path, and with `emulated` the same rows by the emulated CUDA
// kernels too. Returns false if Steel refuses the scene (a degenerate row or cone block):
// refusals are the validation fuzz target's business, not this one's.
bool solve(const Scene& s, steel_solve_options options, int32_t path, Result& out,
           Result* emulated = nullptr) {
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.world_count = uint32_t(s.dofs.size());
    steel_batch batch{};
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &batch) != STEEL_OK)
        fuzz::die("create failed");
    options.path = path;
    if (steel_batch_set_options(batch, &options) != STEEL_OK) fuzz::die("valid options refused");
    const steel_rows_desc rows = s.desc();
    if (steel_batch_upload_rows(batch, &rows) != STEEL_OK) {
        steel_batch_destroy(batch);
        return false;
    }
    if (steel_batch_solve(batch) != STEEL_OK) fuzz::die("solve failed");
    out.impulses.resize(s.bias.size());
    out.velocities.resize(s.v_hat.size());
    out.stats.resize(s.dofs.size());
    uint64_t count = 0;
    uint32_t worlds = 0;
    if (steel_batch_read_impulses(batch, out.impulses.data(), out.impulses.size(), &count) !=
            STEEL_OK ||
        steel_batch_read_velocities(batch, out.velocities.data(), out.velocities.size(), &count) !=
            STEEL_OK ||
        steel_batch_read_world_stats(batch, sizeof(steel_world_stats), out.stats.data(),
                                     uint32_t(out.stats.size()), &worlds) != STEEL_OK)
        fuzz::die("reading results failed");
    if (emulated) *emulated = fuzz::emulated_solve<Result>(batch, options, "fuzz_paths_agree");
    steel_batch_destroy(batch);
    return true;
}

double max_abs(const double* x, uint32_t count) {
    double most = 0;
    for (uint32_t k = 0; k < count; ++k)
        most = std::max(most, std::fabs(x[k]));
    return most;
}

// Two solves of one world, named for the report (the CPU's general and dense paths, or a path on
// the CPU and the emulated kernels).
struct Pairing {
    const Result& a;
    const Result& b;
    const char* a_name;
    const char* b_name;
    const char* verdict;
};

[[noreturn]] void disagree(const Scene& s, const Pairing& pair, uint32_t world, uint64_t row0,
                           uint64_t dof0, const steel_solve_options& options, const char* what) {
    std::fprintf(
        stderr,
        "%s and %s disagree on %s in world %u (iterations %u, cfm %g, contact_regularization %g, "
        "warm_start %u, preelimination %u):\n",
        pair.a_name, pair.b_name, what, world, options.iterations, options.cfm,
        options.contact_regularization, options.warm_start,
        options.enable_bilateral_preelimination);
    for (uint32_t i = 0; i < s.rows[world]; ++i)
        std::fprintf(stderr, "  row %u kind %d: %s %.17g %s %.17g\n", i, s.kind[row0 + i],
                     pair.a_name, pair.a.impulses[row0 + i], pair.b_name,
                     pair.b.impulses[row0 + i]);
    for (uint32_t k = 0; k < s.dofs[world]; ++k)
        std::fprintf(stderr, "  dof %u: %s %.17g %s %.17g\n", k, pair.a_name,
                     pair.a.velocities[dof0 + k], pair.b_name, pair.b.velocities[dof0 + k]);
    fuzz::die(pair.verdict);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Input in(data, size);
    Scene scene;
    const uint32_t worlds = 1 + in.below(3);
    for (uint32_t w = 0; w < worlds; ++w)
        if (!add_world(scene, in)) return 0;

    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 1 + in.below(40);
    options.cfm = in.flag() ? 0.0 : std::fabs(in.unit()) * 0.01;
    options.warm_start = in.below(2);
    options.contact_regularization = in.below(4) == 0 ? std::fabs(in.unit()) * 0.01 : 0.0;
    options.enable_bilateral_preelimination = in.below(3) == 0;
    options.tolerance = 0;
    options.nesterov_momentum = 0;

    Result general, dense, nudged, general_kernels, dense_kernels;
    if (!solve(scene, options, STEEL_PATH_GENERAL, general, &general_kernels)) return 0;
    if (!solve(scene, options, STEEL_PATH_DENSE, dense, &dense_kernels))
        fuzz::die("the dense run refused rows the general run took");
    // How much this world's answer moves under a rounding-sized nudge of its inputs: the general
    // path again, every bias and v-hat entry moved by 1e-13 relative in a fixed +- pattern.
    // Friction makes projected Gauss-Seidel a non-monotone map that, on some worlds, amplifies
    // rounding sweep after sweep; there the two paths legitimately differ by about as much as
    // this nudge moves the answer (a 1e-13 nudge is a thousand times rounding; one fixed
    // pattern may miss the most sensitive direction, hence a margin of 10 below).
    Scene nudged_scene = scene;
    for (size_t k = 0; k < nudged_scene.bias.size(); ++k)
        nudged_scene.bias[k] *= 1 + (k % 2 ? 1e-13 : -1e-13);
    for (size_t k = 0; k < nudged_scene.v_hat.size(); ++k)
        nudged_scene.v_hat[k] *= 1 + (k % 3 ? -1e-13 : 1e-13);
    if (!solve(nudged_scene, options, STEEL_PATH_GENERAL, nudged)) return 0;

    const Pairing paths{general, dense, "general", "dense",
                        "the dense path and the general sweep disagree beyond rounding"};
    const Pairing general_on_gpu{
        general, general_kernels, "cpu", "kernels",
        "the CUDA kernels and the CPU's general sweep disagree beyond rounding"};
    const Pairing dense_on_gpu{
        dense, dense_kernels, "cpu", "kernels",
        "the CUDA kernels and the CPU's dense path disagree beyond rounding"};
    uint64_t row0 = 0, dof0 = 0, value0 = 0;
    for (uint32_t w = 0; w < worlds; ++w) {
        const uint32_t m = scene.rows[w], n = scene.dofs[w];
        const uint64_t values_of_world = [&] {
            uint64_t count = 0;
            for (uint64_t k = 2 * row0; k < 2 * (row0 + m); ++k)
                count += scene.block_length[k];
            return count;
        }();
        const Posedness posed = well_posed(scene, w, row0, value0, options);
        if (!posed.compare) {
            row0 += m;
            dof0 += n;
            value0 += values_of_world;
            continue;
        }
        // A world whose rows pre-elimination removed entirely has nothing left to sweep; such a
        // world runs the general path (zero rows) whatever was forced.
        bool all_bilateral = true;
        for (uint32_t i = 0; i < m; ++i)
            all_bilateral &= scene.kind[row0 + i] == STEEL_ROW_BILATERAL;
        const bool nothing_left = options.enable_bilateral_preelimination && all_bilateral;
        if (general.stats[w].path != STEEL_PATH_GENERAL ||
            (dense.stats[w].path != STEEL_PATH_DENSE && !nothing_left))
            fuzz::die("a forced path was not taken");
        // How much this world's answer moves when the inputs are nudged by rounding, the same for
        // every pairing.
        double impulse_sensitivity = 0, velocity_sensitivity = 0;
        for (uint32_t i = 0; i < m; ++i)
            impulse_sensitivity =
                std::max(impulse_sensitivity,
                         std::fabs(nudged.impulses[row0 + i] - general.impulses[row0 + i]));
        for (uint32_t k = 0; k < n; ++k)
            velocity_sensitivity =
                std::max(velocity_sensitivity,
                         std::fabs(nudged.velocities[dof0 + k] - general.velocities[dof0 + k]));
        const auto compare = [&](const Pairing& pair) {
            const steel_world_stats &stats_a = pair.a.stats[w], &stats_b = pair.b.stats[w];
            if (stats_a.sweeps != stats_b.sweeps)
                disagree(scene, pair, w, row0, dof0, options, "the sweep count");
            if ((stats_a.flags ^ stats_b.flags) & STEEL_WORLD_NONFINITE)
                disagree(scene, pair, w, row0, dof0, options, "the non-finite flag");
            // Rounding: each solve sums the same terms in another order, about 1e-16 relative per
            // operation, over a few dozen sweeps.
            const double impulse_scale = std::max(
                {1.0, max_abs(&pair.a.impulses[row0], m), max_abs(&pair.b.impulses[row0], m)});
            // v = v-hat + sum_j Y_j lambda_j is a sum whose terms may cancel: its rounding scales
            // with the terms, not with the result.
            double accumulated = 0;
            uint64_t value = value0;
            for (uint32_t j = 0; j < m; ++j) {
                double largest_y = 0;
                for (int b = 0; b < 2; ++b)
                    for (uint32_t k = 0; k < scene.block_length[2 * (row0 + j) + b]; ++k, ++value)
                        largest_y = std::max(largest_y, std::fabs(scene.response[value]));
                accumulated += largest_y * std::max(std::fabs(pair.a.impulses[row0 + j]),
                                                    std::fabs(pair.b.impulses[row0 + j]));
            }
            const double velocity_scale =
                std::max({1.0, max_abs(&pair.a.velocities[dof0], n),
                          max_abs(&pair.b.velocities[dof0], n), accumulated});
            // 1e-8 of the scale: well-conditioned worlds agree to about 1e-14
            // (tests/test_paths_agree.cpp holds random ones to 1e-12), and a real disagreement (a
            // wrong entry of A, a missing regularization) is of the order of the answer itself; the
            // margin between absorbs the rounding amplification of the moderately ill-conditioned
            // worlds well_posed keeps.
            const double impulse_tolerance = 1e-8 * impulse_scale + 10 * impulse_sensitivity;
            const double velocity_tolerance = 1e-8 * velocity_scale + 10 * velocity_sensitivity;
            for (uint32_t i = 0; i < m && posed.unique_impulses; ++i)
                if (!(std::fabs(pair.a.impulses[row0 + i] - pair.b.impulses[row0 + i]) <=
                      impulse_tolerance))
                    disagree(scene, pair, w, row0, dof0, options, "impulses");
            for (uint32_t k = 0; k < n; ++k)
                if (!(std::fabs(pair.a.velocities[dof0 + k] - pair.b.velocities[dof0 + k]) <=
                      velocity_tolerance))
                    disagree(scene, pair, w, row0, dof0, options, "velocities");
        };
        compare(paths);
        for (const Pairing* on_gpu : {&general_on_gpu, &dense_on_gpu}) {
            if (on_gpu->b.stats[w].path != on_gpu->a.stats[w].path)
                disagree(scene, *on_gpu, w, row0, dof0, options, "the path");
            compare(*on_gpu);
        }
        row0 += m;
        dof0 += n;
        value0 += values_of_world;
    }
    return 0;
}
