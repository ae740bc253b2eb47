// The dense path's A, built a row at a time from a table of the responses by DOF: the part of
// impl/dense_path.hpp that the SIMD kernels compile once per instruction set.
#pragma once

#include "host_device.hpp"
#include "world_rows.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace steel {

// A's rows, and those of the table of Y by DOF that build_dense_problem reads (below), are padded
// to a whole number of kDenseChunk values (zeros in the table; never read in A).
constexpr uint32_t kDenseChunk = 8;
inline uint32_t dense_stride(uint32_t row_count) {
    return (row_count + kDenseChunk - 1) / kDenseChunk * kDenseChunk;
}

// A from the table of Y by DOF (dense_path.hpp, build_dense_problem, says how). Inlined into
// the SIMD kernels (impl/simd/row_kernels.inc, dense_rows_from_table), so that each instruction
// set's copy holds a chunk's eight sums in that set's registers; every sum adds its own terms in
// order, so every copy gives the same bits. (Summing two or three chunks of a row at once, to
// overlap their chains of adds, was 1.2x to 1.5x slower: bench/RESULTS.md.)
template <class Real>
STEEL_HOST_FORCE_INLINE inline void fill_dense_by_rows(const WorldRows<Real>& rows, Real* a,
                                                       Real* table) {
    const uint32_t m = rows.row_count, n = rows.dof_count, stride = dense_stride(m);
    std::fill(table, table + size_t(n) * stride, Real(0));
    for (uint32_t j = 0; j < m; ++j) {
        const Real* response = rows.response + rows.value_offset[j];
        for (int block = 0; block < 2; ++block) {
            const uint32_t offset = rows.block_offset[2 * j + block],
                           length = rows.block_length[2 * j + block];
            for (uint32_t k = 0; k < length; ++k)
                table[size_t(offset + k) * stride + j] = response[k];
            response += length;
        }
    }
    // kDenseChunk sums of row i at a time, held in registers over all of J_i's values.
    for (uint32_t i = 0; i < m; ++i) {
        const Real* jacobian = rows.jacobian + rows.value_offset[i];
        const uint32_t offset0 = rows.block_offset[2 * i], length0 = rows.block_length[2 * i];
        const uint32_t offset1 = rows.block_offset[2 * i + 1],
                       length1 = rows.block_length[2 * i + 1];
        for (uint32_t first = 0; first < m; first += kDenseChunk) {
            Real sum[kDenseChunk] = {};
            const auto add_block = [&](const Real* values, uint32_t offset, uint32_t length) {
                for (uint32_t k = 0; k < length; ++k) {
                    const Real value = values[k];
                    const Real* y = table + size_t(offset + k) * stride + first;
                    for (uint32_t q = 0; q < kDenseChunk; ++q)
                        sum[q] += value * y[q];
                }
            };
            add_block(jacobian, offset0, length0);
            add_block(jacobian + length0, offset1, length1);
            for (uint32_t q = 0; q < kDenseChunk; ++q)
                a[size_t(i) * stride + first + q] = sum[q];
        }
        a[size_t(i) * stride + i] = rows.jy[i];
    }
}

} // namespace steel
