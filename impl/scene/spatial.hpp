// Small fixed-size algebra for scene mode: 3-vectors, 3x3 matrices, unit quaternions, and 6D
// spatial vectors in world Plucker coordinates at the world origin (Featherstone, "Rigid Body
// Dynamics Algorithms", ch. 2). A motion vector is (angular velocity w, velocity v_O of the body
// point passing through the world origin); a force vector is (moment about the origin, force).
// Everything is double: scene mode builds rows in float64 and the upload rounds them.
#pragma once

#include <cmath>
#include <initializer_list>

namespace steel::scene {

struct Vec3 {
    double x = 0, y = 0, z = 0;
};

inline Vec3 operator+(Vec3 a, Vec3 b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
}
inline Vec3 operator-(Vec3 a, Vec3 b) {
    return {a.x - b.x, a.y - b.y, a.z - b.z};
}
inline Vec3 operator-(Vec3 a) {
    return {-a.x, -a.y, -a.z};
}
inline Vec3 operator*(double s, Vec3 a) {
    return {s * a.x, s * a.y, s * a.z};
}
inline double dot(Vec3 a, Vec3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
inline Vec3 cross(Vec3 a, Vec3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double norm(Vec3 a) {
    return std::sqrt(dot(a, a));
}

// Row-major 3x3.
struct Mat3 {
    double m[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    double& operator()(int r, int c) { return m[3 * r + c]; }
    double operator()(int r, int c) const { return m[3 * r + c]; }
};

inline Mat3 identity3() {
    Mat3 a;
    a(0, 0) = a(1, 1) = a(2, 2) = 1;
    return a;
}
inline Vec3 operator*(const Mat3& a, Vec3 v) {
    return {a(0, 0) * v.x + a(0, 1) * v.y + a(0, 2) * v.z,
            a(1, 0) * v.x + a(1, 1) * v.y + a(1, 2) * v.z,
            a(2, 0) * v.x + a(2, 1) * v.y + a(2, 2) * v.z};
}
inline Mat3 operator*(const Mat3& a, const Mat3& b) {
    Mat3 c;
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k)
            for (int col = 0; col < 3; ++col)
                c(r, col) += a(r, k) * b(k, col);
    return c;
}
inline Mat3 transpose(const Mat3& a) {
    Mat3 t;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            t(r, c) = a(c, r);
    return t;
}

// Unit quaternion (w, x, y, z) rotating body vectors into the parent (or world) frame.
struct Quat {
    double w = 1, x = 0, y = 0, z = 0;
};

inline Quat operator*(Quat a, Quat b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
inline Quat normalized(Quat q) {
    const double n = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    return {q.w / n, q.x / n, q.y / n, q.z / n};
}
inline Quat axis_angle(Vec3 unit_axis, double angle) {
    const double s = std::sin(0.5 * angle);
    return {std::cos(0.5 * angle), s * unit_axis.x, s * unit_axis.y, s * unit_axis.z};
}
inline Mat3 rotation(Quat q) {
    Mat3 r;
    const double w = q.w, x = q.x, y = q.y, z = q.z;
    r(0, 0) = 1 - 2 * (y * y + z * z);
    r(0, 1) = 2 * (x * y - w * z);
    r(0, 2) = 2 * (x * z + w * y);
    r(1, 0) = 2 * (x * y + w * z);
    r(1, 1) = 1 - 2 * (x * x + z * z);
    r(1, 2) = 2 * (y * z - w * x);
    r(2, 0) = 2 * (x * z - w * y);
    r(2, 1) = 2 * (y * z + w * x);
    r(2, 2) = 1 - 2 * (x * x + y * y);
    return r;
}
// q advanced by a world-frame angular velocity w over dt, staying on the unit sphere.
inline Quat integrate_world(Quat q, Vec3 w, double dt) {
    const double speed = norm(w);
    if (std::fabs(speed * dt) < 1e-300) return q;
    return normalized(axis_angle((1.0 / speed) * w, speed * dt) * q);
}

// A rigid transform: world (or parent) position of the frame origin and its rotation.
struct Pose {
    Vec3 position;
    Quat orientation;
};
inline Vec3 apply(const Pose& pose, Vec3 local) {
    return pose.position + rotation(pose.orientation) * local;
}
inline Pose compose(const Pose& outer, const Pose& inner) {
    return {apply(outer, inner.position), normalized(outer.orientation * inner.orientation)};
}

// Spatial motion or force vector: angular part first.
struct Spatial {
    Vec3 angular;
    Vec3 linear;
};
inline Spatial operator+(const Spatial& a, const Spatial& b) {
    return {a.angular + b.angular, a.linear + b.linear};
}
inline Spatial operator*(double s, const Spatial& a) {
    return {s * a.angular, s * a.linear};
}
inline double dot(const Spatial& motion, const Spatial& force) {
    return dot(motion.angular, force.angular) + dot(motion.linear, force.linear);
}
// Motion cross product a x m (the derivative of a motion vector m carried by a body moving at a).
inline Spatial cross_motion(const Spatial& a, const Spatial& m) {
    return {cross(a.angular, m.angular), cross(a.angular, m.linear) + cross(a.linear, m.angular)};
}
// Force cross product a x* f.
inline Spatial cross_force(const Spatial& a, const Spatial& f) {
    return {cross(a.angular, f.angular) + cross(a.linear, f.linear), cross(a.angular, f.linear)};
}
// Velocity of the body point at world position p, for a body moving at spatial velocity a.
inline Vec3 point_velocity(const Spatial& a, Vec3 p) {
    return a.linear + cross(a.angular, p);
}

// Spatial inertia about the world origin of a body of mass m, centre of mass c (world) and
// rotational inertia Ic about c (world axes):
//   M = [ Ic - m [c]x[c]x   m [c]x ]
//       [ -m [c]x           m 1    ]
struct Inertia {
    double mass = 0;
    Vec3 com;     // world
    Mat3 inertia; // about com, world axes
};
inline Spatial operator*(const Inertia& body, const Spatial& v) {
    // Momentum: linear h = m (v_O + w x c); angular about O: Ic w + c x h.
    const Vec3 h = body.mass * (v.linear + cross(v.angular, body.com));
    return {body.inertia * v.angular + cross(body.com, h), h};
}

} // namespace steel::scene

namespace steel::scene {

// The inertia of two bodies rigidly joined: masses add, the centre of mass is their weighted
// mean, and each rotational inertia moves to it by the parallel-axis theorem.
inline Inertia combine(const Inertia& a, const Inertia& b) {
    Inertia sum;
    sum.mass = a.mass + b.mass;
    if (sum.mass <= 0) return sum;
    sum.com = (1.0 / sum.mass) * (a.mass * a.com + b.mass * b.com);
    for (const Inertia* part : {&a, &b}) {
        const Vec3 d = part->com - sum.com;
        const double dd = dot(d, d);
        const double dv[3] = {d.x, d.y, d.z};
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                sum.inertia(r, c) +=
                    part->inertia(r, c) + part->mass * ((r == c ? dd : 0.0) - dv[r] * dv[c]);
    }
    return sum;
}

} // namespace steel::scene
