// Steel's side of the peer benchmark: each scene uploaded once per batch (the upload builds the
// rows: reported as setup), then steel_batch_solve timed alone (classification, v = v-hat + Y
// lambda, the sweeps). Threads are Steel's own (thread_count).
//
//   peer_steel [--variant default|default-float32|dense|propagation|colored|colored-float32]
//              [--quick] [--scene NAME] ...
// default: SERIAL + IMMEDIATE; dense: the same with the path forced to DENSE (up to
// STEEL_DENSE_MAX_ROWS rows); propagation: SERIAL + PROPAGATION; colored: COLORED + PROPAGATION.
#include "peer_bench.hpp"

#include <steel/steel.h>

#include <cstdio>
#include <string>

namespace {

using namespace peers;

bool ok(steel_status status, const char* what, std::string* why = nullptr) {
    if (status == STEEL_OK) return true;
    const std::string text = std::string(what) + ": " + steel_last_error_message();
    if (why)
        *why = text;
    else
        std::fprintf(stderr, "%s\n", text.c_str());
    return false;
}

// Rows as Steel's immediate response stores them: a side on an articulation spans its whole tree
// (Y = H~^-1 J^T is dense there); the propagation response keeps 6 values a side.
double row_dofs(const Scene& s, bool propagation) {
    const auto side = [&](int32_t body) {
        return body < 0 ? 0u : propagation ? 6u : tree_dofs(s, body);
    };
    double total = 0;
    for (const Contact& c : s.contacts)
        total += 3.0 * (side(c.body_a) + side(c.body_b));
    for (size_t i = 0; i < s.bodies.size(); ++i) {
        const Body& b = s.bodies[i];
        const double limits = (b.lower > -1e300 ? 1 : 0) + (b.upper < 1e300 ? 1 : 0);
        total += limits * (propagation ? 1.0 : tree_dofs(s, int32_t(i)));
    }
    return total;
}

void run_scene(const SceneEntry& entry, const Options& options) {
    const Scene& s = entry.scene;
    const std::string variant = options.variant.empty() ? "default" : options.variant;
    const bool propagation =
        variant != "default" && variant != "default-float32" && variant != "dense";
    for (uint32_t copies : copy_counts(options, entry.small))
        for (uint32_t threads : options.threads) {
            scenes::SceneBuilder builder;
            for (uint32_t w = 0; w < copies; ++w) {
                builder.begin_world();
                s.add_to_steel(builder);
            }
            steel_batch_desc desc;
            steel_batch_desc_default(&desc);
            desc.world_count = copies;
            desc.thread_count = threads;
            if (variant == "colored-float32" || variant == "default-float32")
                desc.precision = STEEL_PRECISION_FLOAT32;
            steel_batch batch{};
            if (!ok(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch), "create")) return;
            const steel_scene_desc scene_desc = builder.desc();
            bool uploaded = true;
            const StepTimes upload = time_batch(1, 1, options.quick, [&](uint32_t) {
                StepTimes t;
                const double start = now_seconds();
                uploaded = uploaded && ok(steel_batch_upload_scene(batch, &scene_desc), "upload");
                t.setup = now_seconds() - start;
                return t;
            });
            uint64_t rows = 0;
            for (uint32_t sweeps : options.sweeps) {
                steel_solve_options o;
                steel_solve_options_default(&o);
                o.iterations = sweeps;
                o.tolerance = 0;
                o.warm_start = 0;
                if (variant == "dense")
                    o.path = STEEL_PATH_DENSE; // where the world's rows allow it
                if (variant == "propagation")
                    o.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
                if (variant == "colored" || variant == "colored-float32") {
                    o.articulated_contact_response = STEEL_RESPONSE_PROPAGATION;
                    o.solve_mode = STEEL_SOLVE_COLORED;
                }
                std::string why;
                bool solved = uploaded &&
                              ok(steel_batch_set_options(batch, &o), "set_options", &why) &&
                              ok(steel_batch_solve(batch), "solve", &why);
                if (!solved) {
                    print_skip("steel", variant, s.name, "not available (" + why + ")");
                    steel_batch_destroy(batch);
                    return;
                }
                StepTimes solve = time_batch(1, 1, options.quick, [&](uint32_t) {
                    StepTimes t;
                    const double start = now_seconds();
                    ok(steel_batch_solve(batch), "solve");
                    t.solve = now_seconds() - start;
                    return t;
                });
                ok(steel_batch_read_impulses(batch, nullptr, 0, &rows), "rows");
                BodyVelocities v(6 * s.bodies.size() * copies);
                uint64_t count = 0;
                ok(steel_batch_read_body_velocities(batch, v.data(), v.size(), &count),
                   "velocities");
                Result r;
                r.engine = "steel";
                r.variant = variant;
                r.scene = s.name;
                r.copies = copies;
                r.sweeps = sweeps;
                r.threads = threads;
                r.rows = uint32_t(rows / copies);
                r.row_dofs = row_dofs(s, propagation);
                r.batch = {upload.setup, solve.solve};
                r.residual = contact_normal_residual(s, v);
                print_result(r);
            }
            steel_batch_destroy(batch);
        }
}

} // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    print_header();
    for (const SceneEntry& entry : benchmark_scenes())
        if (options.only_scene.empty() || options.only_scene == entry.scene.name)
            run_scene(entry, options);
    return 0;
}
