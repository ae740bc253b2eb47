// Turns a fuzzer's bytes into choices: small integers, flags, and numbers that reach the
// interesting floating-point values (zeros, denormals, huge, NaN, infinities) often. Reading past
// the end gives zeros, so every input is a complete program. Shared by the fuzz targets.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <steel/steel.h>

namespace fuzz {

class Input {
  public:
    Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

    bool exhausted() const { return at_ >= size_; }

    uint8_t byte() { return at_ < size_ ? data_[at_++] : uint8_t(0); }

    // Multi-byte reads take their bytes in order, little-endian. (Each read is its own statement:
    // the order of evaluation of operands is unspecified, and an input must decode the same way
    // under every compiler, so that a crash found with clang replays with gcc.)
    uint16_t u16() {
        const uint16_t low = byte();
        const uint16_t high = byte();
        return uint16_t(low | (high << 8));
    }

    uint32_t u32() {
        const uint32_t low = u16();
        const uint32_t high = u16();
        return low | (high << 16);
    }

    uint64_t u64() {
        const uint64_t low = u32();
        const uint64_t high = u32();
        return low | (high << 32);
    }

    // In [0, count); count > 0.
    uint32_t below(uint32_t count) {
        return count <= 256 ? uint32_t(byte()) % count : u32() % count;
    }

    bool flag() { return (byte() & 1) != 0; }

    // A value in [-1, 1] on a grid of 1/32767: tame numbers for well-posed worlds.
    double unit() { return double(int16_t(u16())) / 32767.0; }

    // Any double, with the special ones frequent.
    double number() {
        static const double special[] = {0.0,
                                         -0.0,
                                         1.0,
                                         -1.0,
                                         0.5,
                                         2.0,
                                         1e-8,
                                         -1e-8,
                                         1e8,
                                         1e-300,
                                         1e300,
                                         -1e300,
                                         DBL_MAX,
                                         -DBL_MAX,
                                         DBL_MIN,
                                         std::numeric_limits<double>::denorm_min(),
                                         double(FLT_MAX),
                                         3e38,
                                         1e-40,
                                         std::numeric_limits<double>::infinity(),
                                         -std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::quiet_NaN()};
        constexpr uint32_t kSpecial = sizeof(special) / sizeof(special[0]);
        const uint8_t choice = byte();
        if (choice < 128) return special[choice % kSpecial];
        if (choice < 192) return double(int16_t(u16())) / 256.0; // moderate values
        uint64_t bits = u64();
        double value;
        std::memcpy(&value, &bits, sizeof(value));
        return value;
    }

  private:
    const uint8_t* data_;
    size_t size_;
    size_t at_ = 0;
};

// Fails loudly: libFuzzer (and the corpus driver) report an abort as a crash with this text.
[[noreturn]] inline void die(const char* what) {
    std::fprintf(stderr, "FUZZ TARGET FAILURE: %s\n", what);
    std::fflush(stderr);
    std::abort();
}

// All impulses of a solved batch; a failed read fails the target.
inline std::vector<double> read_impulses(steel_batch batch) {
    uint64_t count = 0;
    if (steel_batch_read_impulses(batch, nullptr, 0, &count) != STEEL_OK)
        die("impulse count unreadable");
    std::vector<double> impulses(count);
    if (steel_batch_read_impulses(batch, impulses.data(), count, &count) != STEEL_OK)
        die("impulses unreadable");
    return impulses;
}

} // namespace fuzz
