// GrowableBuffer and BufferGrowth (impl/cuda/growable_buffer.hpp) on counted host memory that
// can be told to run out: the all-or-nothing rule that keeps a CUDA graph's pointers valid
// through an upload that does not fit, checked without a GPU.
#include "../impl/cuda/growable_buffer.hpp"
#include "../impl/error.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

namespace {

// Host memory whose allocations are counted, and that refuses every one after `room` more.
struct CountedMemory {
    using Stream = int; // copies are immediate
    static inline std::set<void*> live;
    static inline long room = -1; // allocations still allowed; -1: no limit
    static inline long made = 0;

    static void* allocate(size_t bytes) {
        if (room == 0) steel::fail(STEEL_ERROR_OUT_OF_MEMORY, "test memory: no room");
        if (room > 0) --room;
        ++made;
        void* data = std::malloc(bytes);
        live.insert(data);
        return data;
    }
    static void release(void* data) {
        if (!data) return;
        CHECK(live.erase(data) == 1); // freed once, and only what was allocated
        std::free(data);
    }
    static void copy_in(void* to, const void* from, size_t bytes, Stream) {
        std::memcpy(to, from, bytes);
    }
    static void copy_out(void* to, const void* from, size_t bytes, Stream) {
        std::memcpy(to, from, bytes);
    }
};

template <class T> using Buffer = steel::cuda::GrowableBuffer<T, CountedMemory>;
using Growth = steel::cuda::BufferGrowth<CountedMemory>;

template <class T> std::vector<T> contents(const Buffer<T>& buffer) {
    std::vector<T> host;
    buffer.download(host, 0);
    return host;
}

// Three buffers of three types with known contents, and what they looked like.
struct Three {
    Buffer<int32_t> ints;
    Buffer<double> doubles;
    Buffer<uint8_t> bytes;

    Three() {
        ints.upload({1, 2, 3, 4}, 0);
        doubles.upload({0.5, -1.5, 2.25, 8, 9, 10, 11, 12}, 0);
        bytes.upload({7, 9}, 0);
    }
};

struct Seen {
    const void* data[3];
    size_t size[3], capacity[3];
    std::vector<int32_t> ints;
    std::vector<double> doubles;
    std::vector<uint8_t> bytes;

    explicit Seen(const Three& t)
        : data{t.ints.data(), t.doubles.data(), t.bytes.data()},
          size{t.ints.size(), t.doubles.size(), t.bytes.size()}, capacity{t.ints.capacity(),
                                                                          t.doubles.capacity(),
                                                                          t.bytes.capacity()},
          ints(contents(t.ints)), doubles(contents(t.doubles)), bytes(contents(t.bytes)) {}

    bool operator==(const Seen& o) const {
        for (int k = 0; k < 3; ++k)
            if (data[k] != o.data[k] || size[k] != o.size[k] || capacity[k] != o.capacity[k])
                return false;
        return ints == o.ints && doubles == o.doubles && bytes == o.bytes;
    }
};

// Grows ints twice and bytes once, shrinks doubles: three allocations in all.
void grow(Growth& growth, Three& t) {
    growth.resize(t.ints, 100);
    growth.resize(t.doubles, 3);
    growth.resize(t.bytes, 50);
    growth.resize(t.ints, 200);
}
constexpr long kGrowAllocations = 3;

} // namespace

TEST_CASE("device buffers: a growth that runs out of room part way leaves every buffer as it was") {
    for (long room = 0; room < kGrowAllocations; ++room) {
        CAPTURE(room);
        Three t;
        const Seen before(t);
        const size_t live_before = CountedMemory::live.size();
        CountedMemory::room = room;
        bool refused = false;
        try {
            Growth growth;
            grow(growth, t);
            growth.commit();
        } catch (const steel::Error& error) {
            refused = error.status == STEEL_ERROR_OUT_OF_MEMORY;
        }
        CountedMemory::room = -1;
        CHECK(refused);
        CHECK(Seen(t) == before);                         // pointers, sizes, contents
        CHECK(CountedMemory::live.size() == live_before); // what it allocated, it freed
    }
}

TEST_CASE(
    "device buffers: a committed growth frees what the grown buffers held and keeps the rest") {
    Three t;
    const Seen before(t);
    const size_t live_before = CountedMemory::live.size();
    const long made_before = CountedMemory::made;
    {
        Growth growth;
        grow(growth, t);
        growth.commit();
    }
    CHECK(CountedMemory::made - made_before == kGrowAllocations);
    // ints' first new allocation and the two old ones are gone: one buffer each, as before.
    CHECK(CountedMemory::live.size() == live_before);
    CHECK(CountedMemory::live.count(t.ints.data()) == 1);
    CHECK(CountedMemory::live.count(t.bytes.data()) == 1);
    CHECK(CountedMemory::live.count(const_cast<void*>(before.data[0])) == 0);
    CHECK(t.ints.size() == 200);
    CHECK(t.ints.capacity() == 200);
    CHECK(t.bytes.size() == 50);
    // A buffer that did not grow keeps its memory and its first values.
    CHECK(t.doubles.data() == before.data[1]);
    CHECK(t.doubles.size() == 3);
    CHECK(t.doubles.capacity() == 8);
    CHECK(contents(t.doubles) == std::vector<double>{0.5, -1.5, 2.25});
}

TEST_CASE("device buffers: a growth that ends without commit puts everything back") {
    Three t;
    const Seen before(t);
    const size_t live_before = CountedMemory::live.size();
    {
        Growth growth;
        grow(growth, t);
    }
    CHECK(Seen(t) == before);
    CHECK(CountedMemory::live.size() == live_before);
}

TEST_CASE("device buffers: one that cannot grow keeps its memory and contents") {
    Buffer<double> buffer;
    buffer.upload({1.0, 2.0}, 0);
    const void* data = buffer.data();
    CountedMemory::room = 0;
    bool refused = false;
    try {
        buffer.resize(3);
    } catch (const steel::Error& error) {
        refused = error.status == STEEL_ERROR_OUT_OF_MEMORY;
    }
    CountedMemory::room = -1;
    CHECK(refused);
    CHECK(buffer.data() == data);
    CHECK(contents(buffer) == std::vector<double>{1.0, 2.0});
}

TEST_CASE("device buffers: upload_all_or_nothing copies only after all the room is made") {
    const std::vector<int32_t> ints(64, 5);
    const std::vector<double> doubles = {1, 2, 3};
    for (long room : {0L, 1L, -1L}) {
        CAPTURE(room);
        Three t;
        const Seen before(t);
        int sized_calls = 0;
        const auto fill = [&](auto& pass) {
            pass(t.ints, ints);       // grows
            pass(t.doubles, doubles); // fits
            pass.size(t.bytes, 10);   // grows, room only
        };
        CountedMemory::room = room;
        bool refused = false;
        try {
            steel::cuda::upload_all_or_nothing<CountedMemory>(
                fill, [&] { ++sized_calls; }, 0);
        } catch (const steel::Error& error) {
            refused = error.status == STEEL_ERROR_OUT_OF_MEMORY;
        }
        CountedMemory::room = -1;
        if (room == -1) {
            CHECK_FALSE(refused);
            CHECK(sized_calls == 1);
            CHECK(contents(t.ints) == ints);
            CHECK(contents(t.doubles) == doubles);
            CHECK(t.bytes.size() == 10);
        } else {
            CHECK(refused);
            CHECK(sized_calls == 0);
            CHECK(Seen(t) == before);
        }
    }
}

TEST_CASE("device buffers: a copy into a buffer sized for another count is refused") {
    Buffer<double> buffer;
    buffer.upload({1.0, 2.0}, 0);
    steel_status status = STEEL_OK;
    try {
        buffer.copy_in({1.0, 2.0, 3.0}, 0); // would run past the allocation
    } catch (const steel::Error& error) {
        status = error.status;
    }
    CHECK(status == STEEL_ERROR_INTERNAL);
    CHECK(contents(buffer) == std::vector<double>{1.0, 2.0});
}
