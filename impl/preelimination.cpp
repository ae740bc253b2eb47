#include "preelimination.hpp"

namespace steel {

template <class Real>
void PreeliminationWorkspace<Real>::reserve(uint32_t rows, uint32_t dofs,
                                            const PreeliminationRoom& room) {
    const size_t m = rows, n = dofs;
    auto grow = [](auto& vector, size_t size) {
        if (vector.size() < size) vector.resize(size);
    };
    grow(block_offset, 2 * m);
    grow(block_length, 2 * m);
    grow(value_offset, m + 1);
    grow(jacobian, room.kept_values);
    grow(response, room.kept_values);
    grow(unconstrained_velocity, n);
    for (auto* vector : {&bias, &lower, &upper, &friction, &regularization, &initial_impulse, &jy,
                         &cross_01, &cross_10, &kept_impulse, &solved})
        grow(*vector, m);
    grow(kind, m);
    grow(normal_row, m);
    grow(kept_rows, m);
    grow(bilateral_rows, m);
    grow(kept_index, m);
    grow(schur, room.schur);
}

template <class Real> PreeliminationSpace<Real> PreeliminationWorkspace<Real>::space() {
    return {block_offset.data(),
            block_length.data(),
            value_offset.data(),
            jacobian.data(),
            response.data(),
            unconstrained_velocity.data(),
            bias.data(),
            lower.data(),
            upper.data(),
            friction.data(),
            regularization.data(),
            initial_impulse.data(),
            jy.data(),
            cross_01.data(),
            cross_10.data(),
            kind.data(),
            normal_row.data(),
            kept_rows.data(),
            bilateral_rows.data(),
            kept_index.data(),
            schur.data(),
            solved.data(),
            kept_impulse.data()};
}

template struct PreeliminationWorkspace<float>;
template struct PreeliminationWorkspace<double>;

} // namespace steel
