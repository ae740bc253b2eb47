// The host emulation of warps (tests/simt/host_simt.hpp) against what a GPU does, and its
// checks against the mistakes it is there to catch: a test of the test tool, so that a clean
// emulated run of the CUDA kernels means something.
#include "simt/host_simt.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#include <sys/wait.h>
#include <unistd.h>
#endif

TEST_CASE("simt: shuffles, votes and thread indices behave as on a GPU") {
    std::atomic<int> wrong{0};
    simt::launch({3, 1, 1}, {64, 1, 1}, 0, [&] {
        const uint32_t lane = threadIdx.x % 32;
        const double mine = double(blockIdx.x * 100 + threadIdx.x);
        // A butterfly sum gives every lane the warp's total.
        double sum = mine;
        for (int offset = 16; offset > 0; offset >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        const double first = double(blockIdx.x * 100 + (threadIdx.x / 32) * 32);
        if (sum != 32 * first + 496) ++wrong;
        if (__shfl_sync(0xffffffffu, mine, 5) != first + 5) ++wrong;
        if (__all_sync(0xffffffffu, lane < 32) != 1 || __all_sync(0xffffffffu, lane != 7) != 0)
            ++wrong;
        if (blockDim.x != 64 || gridDim.x != 3) ++wrong;
    });
    CHECK(wrong == 0);
    CHECK(simt::take_problems().empty());
}

TEST_CASE("simt: catches a divergent shuffle, a partial mask, a full mask in a short warp and a "
          "shared-memory overrun") {
    simt::launch({1, 1, 1}, {32, 1, 1}, 0, [] {
        if (threadIdx.x == 0)
            (void)__shfl_sync(0xffffffffu, 1.0, 0);
        else
            __syncwarp();
    });
    CHECK(simt::take_problems().size() == 1);

    simt::launch({1, 1, 1}, {32, 1, 1}, 0, [] { (void)__shfl_sync(0xffffu, 1, 0); });
    CHECK(simt::take_problems().size() == 1);
    // Only lane 9's mask is partial: every lane's is checked, not lane 0's alone.
    simt::launch({1, 1, 1}, {32, 1, 1}, 0,
                 [] { (void)__shfl_sync(threadIdx.x == 9 ? 0x7fffffffu : 0xffffffffu, 1, 0); });
    CHECK(simt::take_problems().size() == 1);
    // A full mask in a last warp of 16 lanes names 16 lanes that do not exist.
    simt::launch({1, 1, 1}, {48, 1, 1}, 0, [] { (void)__shfl_sync(0xffffffffu, 1, 0); });
    const std::vector<std::string> short_warp = simt::take_problems();
    REQUIRE(short_warp.size() == 1);
    CHECK(short_warp[0].find("warp of 16 lanes") != std::string::npos);

#if !defined(__SANITIZE_ADDRESS__) // under ASan the overrun is ASan's to report
    simt::launch({2, 1, 1}, {32, 1, 1}, 64, [] {
        if (threadIdx.x == 0) simt::shared_memory()[64] = 0;
    });
    CHECK(simt::take_problems().size() == 2); // once a block
#endif
    simt::launch({1, 1, 1}, {32, 1, 1}, 64 * 1024, [] {});
    CHECK(simt::take_problems().size() == 1); // more than 48 KB without opting in
}

TEST_CASE("simt: shared memory starts as NaNs, one region per block") {
    std::atomic<int> nan_reads{0};
    simt::launch({2, 1, 1}, {32, 1, 1}, 32 * sizeof(double), [&] {
        double* values = reinterpret_cast<double*>(simt::shared_memory());
        if (std::isnan(values[threadIdx.x])) ++nan_reads;
        values[threadIdx.x] = 1.0;
    });
    CHECK(nan_reads == 64);
    CHECK(simt::take_problems().empty());
}

namespace {

// What lane 5 of each warp of each block reads, under `schedule`, from a kernel with three
// races: lane 5 reads a shared value lane 0 writes with no __syncwarp between; warp 1 reads a
// shared value warp 0 writes (warps meet nowhere); block 1 reads a global value block 0 writes.
// With `synchronized` the first race is closed by a __syncwarp and the others are absent.
std::vector<double> racy_reads(simt::Schedule schedule, bool synchronized) {
    const simt::ScopedSchedule scoped(schedule);
    std::vector<double> global(2, -1.0), seen(3 * 2 * 2, 0.0);
    simt::launch({2, 1, 1}, {64, 1, 1}, 4 * sizeof(double), [&] {
        double* shared = reinterpret_cast<double*>(simt::shared_memory());
        const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        if (lane == 0) shared[warp] = 1.0 + warp;
        if (synchronized) __syncwarp();
        const size_t at = 3 * (2 * blockIdx.x + warp);
        if (lane == 5) {
            seen[at] = shared[warp];
            seen[at + 1] = synchronized ? 0.0 : shared[0];
            seen[at + 2] = synchronized ? 0.0 : global[0];
        }
        if (threadIdx.x == 0 && blockIdx.x == 0) global[0] = 7.0;
        __syncwarp();
    });
    return seen;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

} // namespace

TEST_CASE("simt: running a launch in two opposite orders shows races within a warp, between "
          "warps and between blocks") {
    const std::vector<double> in_order = racy_reads(simt::Schedule::in_order, false);
    const std::vector<double> shuffled = racy_reads(simt::Schedule::shuffled, false);
    CHECK(simt::take_problems().empty());
    // In order, every write lands before the read that races with it.
    CHECK(in_order[3 * 0] == 1.0);     // block 0 warp 0: lane 0's shared value
    CHECK(in_order[3 * 1 + 1] == 1.0); // block 0 warp 1: warp 0's shared value
    CHECK(in_order[3 * 2 + 2] == 7.0); // block 1 warp 0: block 0's global value
    // Shuffled, every read comes first: the shared NaNs and the global's old value.
    CHECK(std::isnan(shuffled[3 * 0]));
    CHECK(std::isnan(shuffled[3 * 1 + 1]));
    CHECK(shuffled[3 * 2 + 2] == -1.0);
    CHECK(!same_bits(in_order, shuffled));

    // With the race closed, both orders agree.
    CHECK(same_bits(racy_reads(simt::Schedule::in_order, true),
                    racy_reads(simt::Schedule::shuffled, true)));
    CHECK(simt::take_problems().empty());
}

#if defined(__SANITIZE_THREAD__)
// Under ThreadSanitizer the emulation orders a warp's lanes by __syncwarp alone (host_simt.cpp).
// A race makes TSan end the program, so the racy kernel runs in a second copy of this program,
// started by the test below; alone it does nothing.

TEST_CASE("simt under ThreadSanitizer: the kernel of the test below") {
    const char* ordering = std::getenv("STEEL_SIMT_ORDERING");
    if (!ordering) return;
    const bool sync = std::strcmp(ordering, "syncwarp") == 0;
    std::vector<double> value(1, 0.0), seen(1, 0.0);
    simt::launch({1, 1, 1}, {32, 1, 1}, 0, [&] {
        const uint32_t lane = threadIdx.x % 32;
        if (lane == 0) value[0] = 42.0;
        if (sync)
            __syncwarp();
        else
            (void)__shfl_sync(0xffffffffu, lane, 0); // meets, but orders no memory
        if (lane == 5) seen[0] = value[0];
    });
    CHECK(seen[0] == 42.0); // in order, the emulation hands lane 5 the value either way
}

TEST_CASE("simt under ThreadSanitizer: a lane reading what another wrote is a race unless a "
          "__syncwarp is between them") {
    char self[4096] = {};
    REQUIRE(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0); // (in the shell, the shell)
    const auto run = [&](const char* ordering, std::string& output) {
        const std::string command =
            std::string("STEEL_SIMT_ORDERING=") + ordering +
            " TSAN_OPTIONS='halt_on_error=1 exitcode=66' '" + self +
            "' --test-case='simt under ThreadSanitizer: the kernel of the test below' 2>&1";
        FILE* child = popen(command.c_str(), "r");
        REQUIRE(child != nullptr);
        char buffer[4096];
        while (size_t got = fread(buffer, 1, sizeof(buffer), child))
            output.append(buffer, got);
        const int status = pclose(child);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    std::string shuffled, synchronized;
    CHECK(run("shuffle", shuffled) == 66);
    CHECK(shuffled.find("ThreadSanitizer: data race") != std::string::npos);
    CHECK(shuffled.find("test_simt.cpp") != std::string::npos);
    CHECK(run("syncwarp", synchronized) == 0);
    CHECK(synchronized.find("ThreadSanitizer") == std::string::npos);
}
#endif
