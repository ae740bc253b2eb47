/*
 * scene.c: the smallest scene-mode program. A 2 kg box (1 m cube) is dropped from 5 cm above the
 * ground and stepped for one second at dt = 1/60. Steel builds the rows itself from the body, its
 * FREE joint to the world and four contacts; this program is the collision detection: every step
 * it gives the four bottom corners as contacts with the plane z = 0, their signed distance
 * included (a contact with a positive gap only acts once the gap would close within the step).
 *
 * Each step: upload the scene, solve, read the integrated positions and the new joint velocities
 * (the next step's state) and the contact impulses. At the end the box must rest on the ground:
 * height 0.5, no velocity, and the four normal impulses carrying its weight, m g dt.
 *
 *   cc -std=c99 scene.c $(pkg-config --cflags --libs steel) -o scene && ./scene
 *
 * It runs as a test (ctest: example_c_scene) and exits 1 on a wrong answer.
 */
#include <steel/steel.h>

#include <math.h>
#include <stdio.h>

static int failed(const char* what) {
    fprintf(stderr, "%s failed: %s\n", what, steel_last_error_message());
    return 1;
}

/* v rotated by the unit quaternion q = (w, x, y, z). */
static void rotate(const double* q, const double* v, double* out) {
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    out[0] =
        (1 - 2 * (y * y + z * z)) * v[0] + 2 * (x * y - w * z) * v[1] + 2 * (x * z + w * y) * v[2];
    out[1] =
        2 * (x * y + w * z) * v[0] + (1 - 2 * (x * x + z * z)) * v[1] + 2 * (y * z - w * x) * v[2];
    out[2] =
        2 * (x * z - w * y) * v[0] + 2 * (y * z + w * x) * v[1] + (1 - 2 * (x * x + y * y)) * v[2];
}

int main(void) {
    const double m = 2.0, h = 0.5, g = 9.81, dt = 1.0 / 60.0;

    /* One body: the box, moved by a FREE joint to the world (6 DOFs; q = position, quaternion). */
    const double gravity[3] = {0, 0, -g};
    const uint32_t body_count[1] = {1}, contact_count[1] = {4};
    const double mass[1] = {m}, com[3] = {0, 0, 0};
    const double inertia[6] = {
        m * (4 * h * h) / 6, m * (4 * h * h) / 6, m * (4 * h * h) / 6, 0, 0, 0};
    const int32_t joint_type[1] = {STEEL_JOINT_FREE}, joint_parent[1] = {-1};
    const double identity[7] = {0, 0, 0, 1, 0, 0, 0}; /* joint frames = body frame, world frame */
    double q[7] = {0, 0, h + 0.05, 1, 0, 0, 0};       /* 5 cm above the ground */
    double qd[6] = {0, 0, 0, 0, 0, 0};

    /* Four contacts, box (body 0) against the world (-1), refilled every step. */
    const int32_t contact_a[4] = {0, 0, 0, 0}, contact_b[4] = {-1, -1, -1, -1};
    const double normal[12] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    const double friction[4] = {0.5, 0.5, 0.5, 0.5};
    double point[12], distance[4];

    steel_batch batch = {0};
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    if (steel_batch_create(STEEL_ABI_VERSION, &desc, &batch) != STEEL_OK)
        return failed("steel_batch_create");
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 100;
    if (steel_batch_set_options(batch, &options) != STEEL_OK)
        return failed("steel_batch_set_options");

    steel_scene_desc scene;
    steel_scene_desc_default(&scene); /* dt 1/60, baumgarte 0.2, box friction */
    scene.world_count = 1;
    scene.dt = dt;
    scene.gravity = gravity;
    scene.world_body_count = body_count;
    scene.world_contact_count = contact_count;
    scene.body_mass = mass;
    scene.body_com = com;
    scene.body_inertia = inertia;
    scene.joint_type = joint_type;
    scene.joint_parent = joint_parent;
    scene.joint_parent_frame = identity;
    scene.joint_child_frame = identity;
    scene.joint_position = q;
    scene.joint_velocity = qd;
    scene.contact_body_a = contact_a;
    scene.contact_body_b = contact_b;
    scene.contact_point = point;
    scene.contact_normal = normal;
    scene.contact_distance = distance;
    scene.contact_friction = friction;

    double impulses[4 * 6]; /* per contact: normal, two tangents, world impulse on the box */
    double total_normal = 0;
    for (int step = 1; step <= 60; ++step) {
        /* Collision detection: the bottom corners of the box at its current pose. */
        for (int c = 0; c < 4; ++c) {
            const double corner[3] = {c & 1 ? h : -h, c & 2 ? h : -h, -h};
            double offset[3];
            rotate(q + 3, corner, offset);
            for (int k = 0; k < 3; ++k)
                point[3 * c + k] = q[k] + offset[k];
            distance[c] = point[3 * c + 2]; /* signed height above z = 0 */
        }
        if (steel_batch_upload_scene(batch, &scene) != STEEL_OK)
            return failed("steel_batch_upload_scene");
        if (steel_batch_solve(batch) != STEEL_OK) return failed("steel_batch_solve");
        /* The next state: q advanced by the new velocities (quaternion kept unit), and qd. */
        if (steel_batch_read_integrated_positions(batch, q, 7, NULL) != STEEL_OK ||
            steel_batch_read_joint_velocities(batch, qd, 6, NULL) != STEEL_OK ||
            steel_batch_read_contact_impulses(batch, impulses, 4 * 6, NULL) != STEEL_OK)
            return failed("reading the step");
        total_normal = 0;
        for (int c = 0; c < 4; ++c)
            total_normal += impulses[6 * c];
        if (step <= 8 || step % 20 == 0)
            printf(
                "step %2d: height %.6f m, vertical velocity %+.6f m/s, normal impulse %.6f N s\n",
                step, q[2], qd[2], total_normal);
    }
    steel_batch_destroy(batch);

    const double weight = m * g * dt;
    printf("at rest: height %.6f (exact %.6f), normal impulse %.9f (m g dt = %.9f)\n", q[2], h,
           total_normal, weight);
    const int ok =
        fabs(q[2] - h) < 1e-3 && fabs(qd[2]) < 1e-3 && fabs(total_normal - weight) < 1e-6 * weight;
    return ok ? 0 : 1;
}
