// Helpers shared by the snapshot tests: scenes that use every row kind and option, and
// bit-exact comparisons of solves and of decoded snapshot content.
#pragma once

#include "rows_scenes.hpp"
#include "snapshot/snapshot.hpp"
#include "support.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <future>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace snaptest {

// A batch of varied worlds: a resting stack, random worlds with every scalar row kind, a block
// with cone friction, and a world with an infinite bound.
inline scenes::RowsBuilder varied_scene(uint64_t seed, uint32_t random_worlds) {
    scenes::RowsBuilder builder;
    scenes::StackSpec stack;
    stack.height = 4;
    stack.top_mass = 3.0;
    scenes::add_stack_world(builder, stack);
    std::mt19937_64 rng(seed);
    for (uint32_t w = 0; w < random_worlds; ++w) {
        scenes::RandomWorldSpec spec;
        spec.body_count = 1 + uint32_t(rng() % 3);
        spec.max_body_dofs = 4;
        spec.row_count = 1 + uint32_t(rng() % 8);
        scenes::add_random_world(builder, rng, spec);
    }
    // A point mass (H = 2 I) sliding on the ground: one normal row and a cone friction pair.
    builder.begin_world({1.5, -0.5, -0.0981});
    scenes::Row normal;
    normal.kind = STEEL_ROW_CONTACT_NORMAL;
    normal.blocks[0] = {2, {1.0}, {0.5}};
    const uint32_t n = builder.add_row(normal);
    for (uint32_t axis = 0; axis < 2; ++axis) {
        scenes::Row tangent;
        tangent.kind = STEEL_ROW_FRICTION_CONE;
        tangent.normal_row = int32_t(n);
        tangent.friction = 0.4;
        tangent.blocks[0] = {axis, {1.0}, {0.5}};
        builder.add_row(tangent);
    }
    // A drive-like bounded row with an infinite upper bound and a warm start.
    builder.begin_world({0.25, -1.0});
    scenes::Row drive;
    drive.kind = STEEL_ROW_BOUNDED;
    drive.lower = -2.0;
    drive.upper = INFINITY;
    drive.bias = 0.1;
    drive.initial_impulse = 0.3;
    drive.regularization = 1e-3;
    drive.blocks[0] = {0, {1.0, -1.0}, {1.0, -1.0}};
    builder.add_row(drive);
    return builder;
}

// Options with every field away from its default.
inline steel_solve_options unusual_options(int32_t path) {
    steel_solve_options options;
    steel_solve_options_default(&options);
    options.iterations = 37;
    options.tolerance = 1e-14;
    options.cfm = 1e-6;
    options.path = path;
    options.warm_start = 1;
    options.contact_regularization = 2e-4;
    options.nesterov_momentum = 1;
    options.enable_bilateral_preelimination = 1;
    options.record_residual_history = 1;
    return options;
}

struct Outputs {
    test::Solved solved;
    std::vector<std::vector<double>> history; // per world; empty when not recorded
};

inline Outputs read_outputs(steel_batch batch) {
    Outputs outputs;
    outputs.solved = test::read_all(batch);
    steel_solve_options options;
    steel_solve_options_default(&options);
    REQUIRE_OK(steel_batch_get_options(batch, &options));
    for (uint32_t w = 0; w < outputs.solved.stats.size(); ++w) {
        uint32_t count = 0;
        std::vector<double> history;
        if (steel_batch_read_residual_history(batch, w, nullptr, 0, &count) == STEEL_OK) {
            history.resize(count);
            REQUIRE_OK(steel_batch_read_residual_history(batch, w, history.data(), count, &count));
        }
        outputs.history.push_back(history);
    }
    return outputs;
}

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

inline bool same_stats(const std::vector<steel_world_stats>& a,
                       const std::vector<steel_world_stats>& b) {
    return same_bits(a, b);
}

inline bool same_outputs(const Outputs& a, const Outputs& b) {
    if (!same_bits(a.solved.impulses, b.solved.impulses) ||
        !same_bits(a.solved.velocities, b.solved.velocities) ||
        !same_stats(a.solved.stats, b.solved.stats) || a.history.size() != b.history.size())
        return false;
    for (size_t w = 0; w < a.history.size(); ++w)
        if (!same_bits(a.history[w], b.history[w])) return false;
    return true;
}

// Field by field, numbers compared by their bits.
inline bool same_content(const steel::snapshot::Snapshot& a, const steel::snapshot::Snapshot& b) {
    const auto& ra = a.rows;
    const auto& rb = b.rows;
    return a.format_version == b.format_version && a.producer_version == b.producer_version &&
           a.producer_abi_version == b.producer_abi_version &&
           a.producer_features == b.producer_features &&
           std::memcmp(&a.desc, &b.desc, sizeof(a.desc)) == 0 &&
           std::memcmp(&a.options, &b.options, sizeof(a.options)) == 0 &&
           a.has_rows == b.has_rows && same_bits(ra.world_dof_counts, rb.world_dof_counts) &&
           same_bits(ra.world_row_counts, rb.world_row_counts) &&
           same_bits(ra.unconstrained_velocity, rb.unconstrained_velocity) &&
           same_bits(ra.block_offset, rb.block_offset) &&
           same_bits(ra.block_length, rb.block_length) && same_bits(ra.jacobian, rb.jacobian) &&
           same_bits(ra.response, rb.response) && same_bits(ra.bias, rb.bias) &&
           same_bits(ra.kind, rb.kind) && same_bits(ra.lower, rb.lower) &&
           same_bits(ra.upper, rb.upper) && same_bits(ra.normal_row, rb.normal_row) &&
           same_bits(ra.friction, rb.friction) && same_bits(ra.regularization, rb.regularization) &&
           same_bits(ra.initial_impulse, rb.initial_impulse) && a.solved == b.solved &&
           same_bits(a.results.impulses, b.results.impulses) &&
           same_bits(a.results.velocities, b.results.velocities) &&
           same_stats(a.results.stats, b.results.stats) &&
           a.results.history_stride == b.results.history_stride &&
           same_bits(a.results.residual_history, b.results.residual_history) &&
           a.has_scene == b.has_scene && (!a.has_scene || a.scene.same_bits(b.scene));
}

inline std::vector<uint8_t> save_memory(steel_batch batch) {
    uint64_t size = 0;
    REQUIRE_OK(steel_batch_save_memory(batch, nullptr, 0, &size));
    std::vector<uint8_t> bytes(size);
    REQUIRE_OK(steel_batch_save_memory(batch, bytes.data(), size, &size));
    REQUIRE(size == bytes.size());
    return bytes;
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
    return steel::snapshot::read_file(path.c_str(), UINT64_MAX, "test");
}

// A fresh path in the system's temporary folder (the file does not exist yet).
inline std::string temporary_path(const char* name) {
    static int counter = 0;
    const char* folder = std::getenv("TMPDIR");
    std::string path = std::string(folder && *folder ? folder : "/tmp") + "/steel_test_" +
                       std::to_string(uint64_t(::getpid())) + "_" + std::to_string(counter++) +
                       "_" + name;
    std::remove(path.c_str());
    return path;
}

// Runs steel-replay (tools/steel-replay of the build this test program belongs to) with the
// arguments, its stdout and stderr into *output. Returns its exit status, 124 if it ran past 60
// seconds (waiting on a FIFO, say), or 128 + the signal that killed it (a crash).
inline int run_replay(const std::string& arguments, std::string* output) {
    char self[4096] = {};
    REQUIRE(::readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
    std::string folder = self;
    folder.erase(folder.rfind('/'));
    const std::string tool = folder + "/../tools/steel-replay";
    INFO("steel-replay is built beside the tests: " << tool);
    REQUIRE(::access(tool.c_str(), X_OK) == 0);
    FILE* child = ::popen(("exec timeout 60 '" + tool + "' " + arguments + " 2>&1").c_str(), "r");
    REQUIRE(child != nullptr);
    output->clear();
    char buffer[4096];
    for (size_t got; (got = std::fread(buffer, 1, sizeof(buffer), child)) > 0;)
        output->append(buffer, got);
    const int status = ::pclose(child);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    FILE* file = std::fopen(path.c_str(), "wb");
    REQUIRE(file != nullptr);
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size());
    REQUIRE(std::fclose(file) == 0);
}

// Runs call on another thread; a call that waits on the FIFO at `path` for a peer past a few
// seconds fails the test and is then released by opening the FIFO's other end (with
// peer_flags). Returns the call's status and its thread's last error message.
inline std::pair<steel_status, std::string>
without_waiting(const std::string& path, int peer_flags,
                const std::function<steel_status()>& call) {
    auto done = std::async(std::launch::async, [&] {
        const steel_status status = call();
        return std::make_pair(status, std::string(steel_last_error_message()));
    });
    if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        FAIL_CHECK("the call waits for a peer on the FIFO '" << path << "'");
        int peer = -1;
        while (done.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready)
            if (peer < 0) peer = ::open(path.c_str(), peer_flags | O_NONBLOCK | O_CLOEXEC);
        if (peer >= 0) ::close(peer);
    }
    return done.get();
}

} // namespace snaptest
