// Regularized (soft) contacts, SPEC 5: the contact_regularization option, and the settling depth
// of a resting contact stepped with a Baumgarte bias.
#include "support.hpp"

#include <cmath>

namespace {

constexpr double kMass = 2.0, kGravity = 9.81, kDt = 1.0 / 60.0, kBeta = 0.2;

struct Settled {
    double depth;            // final penetration
    double corrective_error; // -(J.v-hat + b) at the end: what the contact must correct
    double impulse;
};

// A box with one vertical DOF resting on the ground, stepped `steps` times. Each step the
// contact row gets the Baumgarte bias b = -beta * depth / dt.
Settled step_resting_box(double row_c, double option_c, uint32_t steps, double cfm = 0) {
    double height = 0.0, velocity = 0.0; // height < 0 is penetration
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 10;
    options.contact_regularization = option_c;
    options.cfm = cfm;
    REQUIRE_OK(steel_batch_set_options(batch, &options));
    Settled settled{};
    for (uint32_t step = 0; step < steps; ++step) {
        const double v_hat = velocity - kGravity * kDt;
        const double depth = -height;
        const double bias = -kBeta * depth / kDt;
        const uint32_t dofs = 1, rows = 1;
        const uint32_t offsets[2] = {0, 0}, lengths[2] = {1, 0};
        const double jacobian = 1.0, response = 1.0 / kMass;
        const int32_t kind = STEEL_ROW_CONTACT_NORMAL;
        steel_rows_desc desc_rows;
        steel_rows_desc_default(&desc_rows);
        desc_rows.world_count = 1;
        desc_rows.world_dof_counts = &dofs;
        desc_rows.world_row_counts = &rows;
        desc_rows.unconstrained_velocity = &v_hat;
        desc_rows.block_offset = offsets;
        desc_rows.block_length = lengths;
        desc_rows.value_count = 1;
        desc_rows.jacobian = &jacobian;
        desc_rows.response = &response;
        desc_rows.bias = &bias;
        desc_rows.kind = &kind;
        desc_rows.regularization = &row_c;
        REQUIRE_OK(steel_batch_upload_rows(batch, &desc_rows));
        REQUIRE_OK(steel_batch_solve(batch));
        REQUIRE_OK(steel_batch_read_velocities(batch, &velocity, 1, nullptr));
        REQUIRE_OK(steel_batch_read_impulses(batch, &settled.impulse, 1, nullptr));
        height += velocity * kDt;
        settled.corrective_error = -(v_hat + bias);
    }
    settled.depth = -height;
    REQUIRE_OK(steel_batch_destroy(batch));
    return settled;
}

} // namespace

TEST_CASE("an unregularized resting contact settles at zero depth carrying m g dt") {
    const Settled settled = step_resting_box(0.0, 0.0, 2000);
    CHECK(std::fabs(settled.depth) < 1e-12);
    CHECK(settled.impulse == doctest::Approx(kMass * kGravity * kDt));
}

TEST_CASE("a regularized resting contact settles at depth c m g dt^2 / beta, deeper for softer c") {
    const Settled stiff = step_resting_box(0.0, 0.0, 3000);
    double previous_depth = 0;
    for (double c : {0.01, 0.1, 0.5}) {
        const Settled soft = step_resting_box(c, 0.0, 3000);
        CAPTURE(c);
        // At rest v = 0, so J.v-hat + J.Y lambda = 0 and the soft condition leaves b = -c lambda
        // with lambda = m g dt: depth = c m g dt^2 / beta.
        CHECK(soft.depth ==
              doctest::Approx(c * kMass * kGravity * kDt * kDt / kBeta).epsilon(1e-9));
        CHECK(soft.impulse == doctest::Approx(kMass * kGravity * kDt).epsilon(1e-9));
        // It needs (J.Y + c) / J.Y times the unregularized contact's corrective error.
        const double jy = 1.0 / kMass;
        CHECK(soft.corrective_error / stiff.corrective_error ==
              doctest::Approx((jy + c) / jy).epsilon(1e-9));
        CHECK(soft.depth > previous_depth);
        previous_depth = soft.depth;
    }
}

TEST_CASE("contact_regularization regularizes contact normals exactly like a per-row c, whatever "
          "cfm is") {
    for (double cfm : {0.0, 0.3}) {
        const Settled per_row = step_resting_box(0.2, 0.0, 500, cfm);
        const Settled option = step_resting_box(0.0, 0.2, 500, cfm);
        CHECK(option.depth == per_row.depth);
        CHECK(option.impulse == per_row.impulse);
    }
    // A row's own c wins over the option.
    const Settled own = step_resting_box(0.05, 0.2, 500);
    const Settled reference = step_resting_box(0.05, 0.0, 500);
    CHECK(own.depth == reference.depth);
}
