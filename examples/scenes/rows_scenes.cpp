#include "rows_scenes.hpp"

#include <cmath>
#include <stdexcept>

namespace scenes {

std::vector<double> stack_masses(const StackSpec& spec) {
    std::vector<double> masses(spec.height);
    const double ratio =
        spec.height > 1 ? std::pow(spec.top_mass / spec.bottom_mass, 1.0 / (spec.height - 1)) : 1.0;
    double mass = spec.bottom_mass;
    for (uint32_t k = 0; k < spec.height; ++k, mass *= ratio)
        masses[k] = mass;
    if (spec.height > 0) masses.back() = spec.top_mass;
    return masses;
}

void add_stack_world(RowsBuilder& builder, const StackSpec& spec) {
    const std::vector<double> masses = stack_masses(spec);
    builder.begin_world(std::vector<double>(spec.height, -spec.gravity * spec.dt));
    for (uint32_t k = 0; k < spec.height; ++k) {
        // Contact k: relative velocity v_k - v_{k-1} >= 0 (the ground for k = 0). H is diagonal,
        // so Y = J / m entrywise. One block covers both boxes: DOFs k-1 and k are adjacent.
        Row row;
        row.kind = STEEL_ROW_CONTACT_NORMAL;
        if (k == 0) {
            row.blocks[0] = {0, {1.0}, {1.0 / masses[0]}};
        } else {
            row.blocks[0] = {k - 1, {-1.0, 1.0}, {-1.0 / masses[k - 1], 1.0 / masses[k]}};
        }
        builder.add_row(row);
    }
}

std::vector<double> stack_exact_impulses(const StackSpec& spec) {
    const std::vector<double> masses = stack_masses(spec);
    std::vector<double> impulses(spec.height);
    double above = 0;
    for (uint32_t k = spec.height; k-- > 0;) {
        above += masses[k];
        impulses[k] = spec.gravity * spec.dt * above;
    }
    return impulses;
}

double uniform01(std::mt19937_64& rng) {
    return double(rng() >> 11) * 0x1.0p-53;
}

double normal01(std::mt19937_64& rng) {
    // Box-Muller; 1 - u keeps the logarithm's argument in (0, 1].
    const double u = 1.0 - uniform01(rng);
    const double v = uniform01(rng);
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

bool cholesky_factor(std::vector<double>& a, uint32_t n) {
    for (uint32_t j = 0; j < n; ++j) {
        double diagonal = a[j * n + j];
        for (uint32_t k = 0; k < j; ++k)
            diagonal -= a[j * n + k] * a[j * n + k];
        if (!(diagonal > 0)) return false;
        const double root = std::sqrt(diagonal);
        a[j * n + j] = root;
        for (uint32_t i = j + 1; i < n; ++i) {
            double sum = a[i * n + j];
            for (uint32_t k = 0; k < j; ++k)
                sum -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = sum / root;
        }
    }
    return true;
}

void cholesky_solve(const std::vector<double>& l, uint32_t n, std::vector<double>& x) {
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

namespace {

struct Body {
    uint32_t offset;
    uint32_t dofs;
    std::vector<double> factor; // Cholesky factor of the body's H
};

Block random_block(std::mt19937_64& rng, const Body& body) {
    Block block;
    block.offset = body.offset;
    block.jacobian.resize(body.dofs);
    for (double& value : block.jacobian)
        value = normal01(rng);
    block.response = block.jacobian;
    cholesky_solve(body.factor, body.dofs, block.response);
    return block;
}

} // namespace

void add_random_world(RowsBuilder& builder, std::mt19937_64& rng, const RandomWorldSpec& spec) {
    std::vector<Body> bodies(spec.body_count);
    uint32_t dofs = 0;
    const uint32_t spread = spec.max_body_dofs - spec.min_body_dofs + 1;
    for (Body& body : bodies) {
        body.offset = dofs;
        body.dofs = spec.min_body_dofs + uint32_t(rng() % spread);
        dofs += body.dofs;
        // H = B B^T + n I: symmetric positive definite with a moderate condition number.
        const uint32_t n = body.dofs;
        std::vector<double> b(size_t(n) * n);
        for (double& value : b)
            value = normal01(rng);
        body.factor.assign(size_t(n) * n, 0.0);
        for (uint32_t i = 0; i < n; ++i)
            for (uint32_t j = 0; j < n; ++j) {
                double sum = i == j ? double(n) : 0.0;
                for (uint32_t k = 0; k < n; ++k)
                    sum += b[i * n + k] * b[j * n + k];
                body.factor[i * n + j] = sum;
            }
        if (!cholesky_factor(body.factor, n)) throw std::logic_error("random H is not SPD");
    }
    std::vector<double> v_hat(dofs);
    for (double& value : v_hat)
        value = normal01(rng);
    builder.begin_world(v_hat);

    int32_t last_normal = -1;
    for (uint32_t i = 0; i < spec.row_count; ++i) {
        Row row;
        const uint32_t a = uint32_t(rng() % spec.body_count);
        row.blocks[0] = random_block(rng, bodies[a]);
        if (spec.body_count > 1 && uniform01(rng) < spec.two_body_fraction) {
            const uint32_t b = (a + 1 + uint32_t(rng() % (spec.body_count - 1))) % spec.body_count;
            row.blocks[1] = random_block(rng, bodies[b]);
        }
        row.bias = normal01(rng);
        if (spec.mixed_kinds) {
            const uint32_t pick = uint32_t(rng() % 4);
            if (pick == 1) {
                row.kind = STEEL_ROW_BOUNDED;
                row.lower = -0.5 - uniform01(rng);
                row.upper = 0.5 + uniform01(rng);
            } else if (pick == 2 || (pick == 3 && last_normal < 0)) {
                row.kind = STEEL_ROW_CONTACT_NORMAL;
            } else if (pick == 3) {
                row.kind = STEEL_ROW_FRICTION_BOX;
                row.normal_row = last_normal;
                row.friction = 0.2 + uniform01(rng);
            }
        }
        const uint32_t index = builder.add_row(row);
        if (row.kind == STEEL_ROW_CONTACT_NORMAL) last_normal = int32_t(index);
    }
}

// A closed loop of `links` bodies (3 DOFs each, random SPD mass) joined by bilateral rows, every
// other body pressed onto the ground by a contact normal and held by a bounded (limit) row. No
// friction here: box friction makes the problem non-symmetric, and projected Gauss-Seidel may
// then cycle instead of converging, with or without pre-elimination.
void add_loop_world(RowsBuilder& builder, std::mt19937_64& rng, uint32_t links) {
    const uint32_t dofs = 3;
    std::vector<std::vector<double>> factors(links);
    for (auto& factor : factors) {
        factor.assign(dofs * dofs, 0.0);
        std::vector<double> b(dofs * dofs);
        for (double& value : b)
            value = normal01(rng);
        for (uint32_t i = 0; i < dofs; ++i)
            for (uint32_t j = 0; j < dofs; ++j) {
                double sum = i == j ? 1.0 : 0.0;
                for (uint32_t k = 0; k < dofs; ++k)
                    sum += b[i * dofs + k] * b[j * dofs + k];
                factor[i * dofs + j] = sum;
            }
        if (!cholesky_factor(factor, dofs)) throw std::logic_error("random H is not SPD");
    }
    const auto block = [&](uint32_t body) {
        Block result;
        result.offset = body * dofs;
        result.jacobian.resize(dofs);
        for (double& value : result.jacobian)
            value = normal01(rng);
        result.response = result.jacobian;
        cholesky_solve(factors[body], dofs, result.response);
        return result;
    };
    std::vector<double> v_hat(links * dofs);
    for (double& value : v_hat)
        value = normal01(rng);
    builder.begin_world(v_hat);
    for (uint32_t k = 0; k < links; ++k) { // chain rows, the last one closing the loop
        Row row;
        row.blocks[0] = block(k);
        row.blocks[1] = block((k + 1) % links);
        if (row.blocks[0].offset > row.blocks[1].offset) std::swap(row.blocks[0], row.blocks[1]);
        row.bias = 0.1 * normal01(rng);
        builder.add_row(row);
    }
    for (uint32_t k = 0; k < links; k += 2) {
        Row normal;
        normal.kind = STEEL_ROW_CONTACT_NORMAL;
        normal.blocks[0] = block(k);
        normal.bias = -1.0; // pressed in: the contact must push
        builder.add_row(normal);
        Row limit;
        limit.kind = STEEL_ROW_BOUNDED;
        limit.lower = -0.5;
        limit.upper = 0.5;
        limit.blocks[0] = block(k);
        limit.bias = 0.3 * normal01(rng);
        builder.add_row(limit);
    }
}

} // namespace scenes
