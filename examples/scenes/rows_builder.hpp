// Builds a rows upload (steel_rows_desc) world by world from plain C++ vectors. Shared by the
// demo, the tests and the benchmarks; a user with their own rows would fill the arrays directly.
#pragma once

#include <steel/steel.h>

#include <cstdint>
#include <vector>

namespace scenes {

// One DOF block of a row: the world-local DOF range and the J and Y values over it.
struct Block {
    uint32_t offset = 0;
    std::vector<double> jacobian;
    std::vector<double> response;
};

struct Row {
    Block blocks[2];
    double bias = 0;
    int32_t kind = STEEL_ROW_BILATERAL;
    double lower = 0;
    double upper = 0;
    int32_t normal_row = -1; // world-local, FRICTION_BOX only
    double friction = 0;
    double regularization = 0;
    double initial_impulse = 0;
};

class RowsBuilder {
  public:
    // Starts a new world with n = v_hat.size() DOFs.
    void begin_world(const std::vector<double>& unconstrained_velocity);
    // Appends a row to the current world; returns its world-local index.
    uint32_t add_row(const Row& row);

    uint32_t world_count() const { return uint32_t(dof_counts.size()); }
    uint64_t total_rows() const { return bias.size(); }
    uint64_t total_dofs() const { return unconstrained_velocity.size(); }

    // A desc pointing into this builder's arrays (valid while the builder lives, unchanged).
    steel_rows_desc desc() const;

    std::vector<uint32_t> dof_counts, row_counts;
    std::vector<double> unconstrained_velocity;
    std::vector<uint32_t> block_offset, block_length;
    std::vector<double> jacobian, response, bias, lower, upper, friction, regularization,
        initial_impulse;
    std::vector<int32_t> kind, normal_row;
};

} // namespace scenes
