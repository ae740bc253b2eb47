#include "articulated_body.hpp"

#include "../dense_cholesky.hpp"

#include <array>

namespace steel::propagation {

namespace {

using Matrix6 = std::array<double, 36>; // row-major, acting on (angular, linear) motion vectors

// The body's spatial inertia about the point its com is given from (the world origin, or the
// tree's reference point of propagation_build.cpp), as a matrix (scene/spatial.hpp's Inertia).
Matrix6 spatial_inertia(const scene::Inertia& body) {
    const scene::Vec3 c = body.com;
    const double m = body.mass;
    const double cx[9] = {0, -c.z, c.y, c.z, 0, -c.x, -c.y, c.x, 0}; // [c]x
    Matrix6 out{};
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            double cxcx = 0; // ([c]x [c]x)(r, k)
            for (int l = 0; l < 3; ++l)
                cxcx += cx[3 * r + l] * cx[3 * l + k];
            out[size_t(6 * r + k)] = body.inertia(r, k) - m * cxcx;
            out[size_t(6 * r + 3 + k)] = m * cx[3 * r + k];
            out[size_t(6 * (3 + r) + k)] = -m * cx[3 * r + k];
            out[size_t(6 * (3 + r) + 3 + k)] = r == k ? m : 0.0;
        }
    return out;
}

} // namespace

bool factor_articulated_body(const scene::ArticulationModel& model,
                             const scene::Kinematics& kinematics,
                             const std::vector<double>& augmentation, ArticulatedBodyFactor& out) {
    const uint32_t bodies = uint32_t(model.joints.size());
    const uint32_t n = model.dof_count();
    out.subspace.assign(6 * size_t(n), 0.0);
    out.transmitted.assign(6 * size_t(n), 0.0);
    out.d_inverse_offset.assign(bodies + 1, 0);
    for (uint32_t i = 0; i < bodies; ++i) {
        const uint32_t dofs = model.dof_offset[i + 1] - model.dof_offset[i];
        out.d_inverse_offset[i + 1] = out.d_inverse_offset[i] + dofs * dofs;
    }
    out.d_inverse.assign(out.d_inverse_offset[bodies], 0.0);
    for (uint32_t k = 0; k < n; ++k) {
        const scene::Spatial& s = kinematics.subspace[k];
        const double column[6] = {s.angular.x, s.angular.y, s.angular.z,
                                  s.linear.x,  s.linear.y,  s.linear.z};
        for (int r = 0; r < 6; ++r)
            out.subspace[6 * size_t(k) + size_t(r)] = column[r];
    }

    std::vector<Matrix6> articulated(bodies);
    for (uint32_t i = 0; i < bodies; ++i)
        articulated[i] = spatial_inertia(kinematics.body_inertia[i]);
    for (uint32_t i = bodies; i-- > 0;) {
        const uint32_t first = model.dof_offset[i], dofs = model.dof_offset[i + 1] - first;
        const Matrix6& ia = articulated[i];
        double* u = out.transmitted.data() + 6 * size_t(first);
        const double* s = out.subspace.data() + 6 * size_t(first);
        for (uint32_t k = 0; k < dofs; ++k)
            for (int r = 0; r < 6; ++r) {
                double sum = 0;
                for (int c = 0; c < 6; ++c)
                    sum += ia[size_t(6 * r + c)] * s[6 * k + uint32_t(c)];
                u[6 * k + uint32_t(r)] = sum;
            }
        // D = S^T U + diag(augmentation), inverted through its Cholesky factor.
        std::array<double, 36> d{}, d_inverse{};
        for (uint32_t a = 0; a < dofs; ++a)
            for (uint32_t b = 0; b < dofs; ++b) {
                double sum = 0;
                for (int r = 0; r < 6; ++r)
                    sum += s[6 * a + uint32_t(r)] * u[6 * b + uint32_t(r)];
                d[a * dofs + b] = sum + (a == b ? augmentation[first + a] : 0.0);
            }
        if (dofs > 0 && !cholesky_factor_in_place(d.data(), dofs)) return false;
        for (uint32_t c = 0; c < dofs; ++c) {
            double column[6] = {0, 0, 0, 0, 0, 0};
            column[c] = 1;
            cholesky_solve_in_place(d.data(), dofs, column);
            for (uint32_t r = 0; r < dofs; ++r)
                d_inverse[r * dofs + c] = column[r];
        }
        std::copy(d_inverse.begin(), d_inverse.begin() + dofs * dofs,
                  out.d_inverse.begin() + out.d_inverse_offset[i]);
        const int32_t parent = model.joints[i].parent;
        if (parent < 0) continue;
        // The parent sees I^A_i - U D^-1 U^T: the joint gives way along S.
        Matrix6& target = articulated[size_t(parent)];
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) {
                double correction = 0;
                for (uint32_t a = 0; a < dofs; ++a)
                    for (uint32_t b = 0; b < dofs; ++b)
                        correction += u[6 * a + uint32_t(r)] * d_inverse[a * dofs + b] *
                                      u[6 * b + uint32_t(c)];
                target[size_t(6 * r + c)] += ia[size_t(6 * r + c)] - correction;
            }
    }
    return true;
}

} // namespace steel::propagation
