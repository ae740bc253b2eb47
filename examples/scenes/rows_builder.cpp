#include "rows_builder.hpp"

#include <stdexcept>

namespace scenes {

void RowsBuilder::begin_world(const std::vector<double>& v_hat) {
    dof_counts.push_back(uint32_t(v_hat.size()));
    row_counts.push_back(0);
    unconstrained_velocity.insert(unconstrained_velocity.end(), v_hat.begin(), v_hat.end());
}

uint32_t RowsBuilder::add_row(const Row& row) {
    if (row_counts.empty()) throw std::logic_error("RowsBuilder::add_row before begin_world");
    for (const Block& block : row.blocks) {
        if (block.jacobian.size() != block.response.size())
            throw std::logic_error("RowsBuilder::add_row: a block's J and Y differ in length");
        block_offset.push_back(block.offset);
        block_length.push_back(uint32_t(block.jacobian.size()));
        jacobian.insert(jacobian.end(), block.jacobian.begin(), block.jacobian.end());
        response.insert(response.end(), block.response.begin(), block.response.end());
    }
    bias.push_back(row.bias);
    kind.push_back(row.kind);
    lower.push_back(row.lower);
    upper.push_back(row.upper);
    normal_row.push_back(row.normal_row);
    friction.push_back(row.friction);
    regularization.push_back(row.regularization);
    initial_impulse.push_back(row.initial_impulse);
    return row_counts.back()++;
}

steel_rows_desc RowsBuilder::desc() const {
    steel_rows_desc desc;
    steel_rows_desc_default(&desc);
    desc.world_count = world_count();
    desc.world_dof_counts = dof_counts.data();
    desc.world_row_counts = row_counts.data();
    desc.unconstrained_velocity = unconstrained_velocity.data();
    desc.block_offset = block_offset.data();
    desc.block_length = block_length.data();
    desc.value_count = jacobian.size();
    desc.jacobian = jacobian.data();
    desc.response = response.data();
    desc.bias = bias.data();
    desc.kind = kind.data();
    desc.lower = lower.data();
    desc.upper = upper.data();
    desc.normal_row = normal_row.data();
    desc.friction = friction.data();
    desc.regularization = regularization.data();
    desc.initial_impulse = initial_impulse.data();
    return desc;
}

} // namespace scenes
