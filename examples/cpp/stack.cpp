// stack.cpp: Steel from C++17 with nothing but the C header. A tiny RAII wrapper (a batch that
// destroys itself, an exception carrying Steel's message), then the resting 1D stack: box k
// rests on box k-1, box 0 on the ground; each box has one DOF (its vertical velocity) and contact
// k has J = [-1, +1] over boxes k-1 and k. Contact k carries the weight of every box above it for
// one step, g*dt*sum(m), which the solve must reproduce.
//
//   c++ -std=c++17 stack.cpp $(pkg-config --cflags --libs steel) -o stack && ./stack
//
// Runs as a test (ctest: example_cpp_stack).
#include <steel/steel.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

// A failed Steel call, with the library's message ("steel_batch_upload_rows: world 0, ...").
struct SteelError : std::runtime_error {
    steel_status status;
    SteelError(steel_status s, const char* message) : std::runtime_error(message), status(s) {}
};

void check(steel_status status) {
    if (status != STEEL_OK) throw SteelError(status, steel_last_error_message());
}

// Owns one batch handle; moves, never copies; destroys in its destructor.
class Batch {
  public:
    explicit Batch(uint32_t world_count) {
        steel_batch_desc desc;
        steel_batch_desc_default(&desc);
        desc.world_count = world_count;
        check(steel_batch_create(STEEL_ABI_VERSION, &desc, &handle_));
    }
    Batch(Batch&& other) noexcept : handle_(std::exchange(other.handle_, steel_batch{0})) {}
    Batch& operator=(Batch&& other) noexcept {
        std::swap(handle_, other.handle_);
        return *this;
    }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;
    ~Batch() { steel_batch_destroy(handle_); } // the null handle is a no-op

    void upload(const steel_rows_desc& rows) { check(steel_batch_upload_rows(handle_, &rows)); }
    void set_options(const steel_solve_options& options) {
        check(steel_batch_set_options(handle_, &options));
    }
    void solve() { check(steel_batch_solve(handle_)); }
    std::vector<double> impulses() const {
        uint64_t count = 0;
        check(steel_batch_read_impulses(handle_, nullptr, 0, &count));
        std::vector<double> out(count);
        check(steel_batch_read_impulses(handle_, out.data(), out.size(), nullptr));
        return out;
    }
    steel_world_stats stats(uint32_t world) const {
        uint32_t count = 0;
        check(steel_batch_read_world_stats(handle_, sizeof(steel_world_stats), nullptr, 0, &count));
        std::vector<steel_world_stats> all(count);
        check(steel_batch_read_world_stats(handle_, sizeof(steel_world_stats), all.data(), count,
                                           nullptr));
        return all.at(world);
    }

  private:
    steel_batch handle_{0};
};

} // namespace

int main() try {
    const uint32_t height = 10;
    const double g_dt = 9.81 / 60.0;
    std::vector<double> mass(height);
    for (uint32_t k = 0; k < height; ++k)
        mass[k] = 1.0 + k; // heavier towards the top

    // Rows of the stack: contact 0 over box 0 alone, contact k over boxes k-1 and k (one block).
    std::vector<uint32_t> block_offset, block_length;
    std::vector<double> jacobian, response, bias(height, 0.0), v_hat(height, -g_dt);
    std::vector<int32_t> kind(height, STEEL_ROW_CONTACT_NORMAL);
    for (uint32_t k = 0; k < height; ++k) {
        if (k == 0) {
            block_offset.insert(block_offset.end(), {0, 0});
            block_length.insert(block_length.end(), {1, 0});
            jacobian.push_back(1.0);
            response.push_back(1.0 / mass[0]);
        } else {
            block_offset.insert(block_offset.end(), {k - 1, 0});
            block_length.insert(block_length.end(), {2, 0});
            jacobian.insert(jacobian.end(), {-1.0, 1.0});
            response.insert(response.end(), {-1.0 / mass[k - 1], 1.0 / mass[k]});
        }
    }
    const uint32_t dof_counts[1] = {height}, row_counts[1] = {height};
    steel_rows_desc rows;
    steel_rows_desc_default(&rows);
    rows.world_count = 1;
    rows.world_dof_counts = dof_counts;
    rows.world_row_counts = row_counts;
    rows.unconstrained_velocity = v_hat.data();
    rows.block_offset = block_offset.data();
    rows.block_length = block_length.data();
    rows.value_count = jacobian.size();
    rows.jacobian = jacobian.data();
    rows.response = response.data();
    rows.bias = bias.data();
    rows.kind = kind.data();

    Batch batch(1);
    batch.upload(rows);
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 5000;
    options.tolerance = 1e-12;
    options.nesterov_momentum = 1;
    batch.set_options(options);
    batch.solve();

    const std::vector<double> impulses = batch.impulses();
    const steel_world_stats stats = batch.stats(0);
    double above = 0, worst = 0;
    for (uint32_t k = height; k-- > 0;) {
        above += mass[k];
        worst = std::fmax(worst, std::fabs(impulses[k] - g_dt * above));
    }
    std::printf(
        "%u-box stack: %u sweeps (%s), bottom impulse %.9f (exact %.9f), worst error %.2e\n",
        height, stats.sweeps, (stats.flags & STEEL_WORLD_CONVERGED) ? "converged" : "not converged",
        impulses[0], g_dt * above, worst);

    // A misuse shows Steel's message through the exception.
    try {
        options.iterations = 0;
        batch.set_options(options);
    } catch (const SteelError& error) {
        std::printf("as expected: %s (%s)\n", error.what(), steel_status_string(error.status));
    }
    return worst < 1e-9 ? 0 : 1;
} catch (const SteelError& error) {
    std::fprintf(stderr, "Steel error: %s\n", error.what());
    return 1;
}
