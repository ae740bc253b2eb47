// A typed allocation that only grows, and growth of many such buffers as one step that either
// happens whole or leaves every buffer as it was. The memory lives wherever the Memory policy
// puts it: the device (device_buffer.cuh) or, in the tests, counted host memory. Plain C++, so
// the CPU tests check the all-or-nothing rule that keeps captured CUDA graphs valid.
//
// Memory provides:
//   static void* allocate(size_t bytes);  // throws steel::Error when there is no room
//   static void release(void* data);      // never throws
//   using Stream;                         // what copies are ordered on
//   static void copy_in(void* to, const void* from, size_t bytes, Stream);
//   static void copy_out(void* to, const void* from, size_t bytes, Stream);
#pragma once

#include "../error.hpp"

#include <cstddef>
#include <vector>

namespace steel::cuda {

// What a buffer holds, untyped, so that a BufferGrowth can put it back.
struct BufferExtent {
    void* data = nullptr;
    size_t size = 0;     // elements in use
    size_t capacity = 0; // elements allocated
};

template <class Memory> class BufferGrowth;

template <class T, class Memory> class GrowableBuffer {
  public:
    using value_type = T;
    GrowableBuffer() = default;
    GrowableBuffer(const GrowableBuffer&) = delete;
    GrowableBuffer& operator=(const GrowableBuffer&) = delete;
    ~GrowableBuffer() { Memory::release(extent_.data); }

    T* data() const { return static_cast<T*>(extent_.data); }
    size_t size() const { return extent_.size; }
    size_t capacity() const { return extent_.capacity; }

    // Makes room for count elements; the old contents are lost if it had to grow. A failure
    // leaves the buffer as it was (the new allocation is made before the old one is freed).
    void resize(size_t count) {
        if (count > extent_.capacity) {
            void* fresh = Memory::allocate(count * sizeof(T));
            Memory::release(extent_.data);
            extent_.data = fresh;
            extent_.capacity = count;
        }
        extent_.size = count;
    }

    // Copies host in, the buffer's size becoming host's, on stream (see Memory::copy_in).
    void upload(const std::vector<T>& host, typename Memory::Stream stream) {
        resize(host.size());
        copy_in(host, stream);
    }

    // Copies host in; the buffer must already have host's size (a BufferGrowth sized it).
    void copy_in(const std::vector<T>& host, typename Memory::Stream stream) {
        if (host.size() != extent_.size)
            fail(STEEL_ERROR_INTERNAL,
                 format("copying %zu values into a device buffer sized for %zu", host.size(),
                        extent_.size));
        if (!host.empty())
            Memory::copy_in(extent_.data, host.data(), host.size() * sizeof(T), stream);
    }

    // Copies the buffer out into host, resized to match, on stream.
    void download(std::vector<T>& host, typename Memory::Stream stream) const {
        host.resize(extent_.size);
        if (extent_.size > 0)
            Memory::copy_out(host.data(), extent_.data, extent_.size * sizeof(T), stream);
    }

  private:
    friend class BufferGrowth<Memory>;
    BufferExtent extent_;
};

// Resizes any number of buffers as one step. Buffers that grow get new allocations while their
// old ones are kept; commit() frees the old ones, and a growth that ends without commit (an
// allocation failed, and the exception unwinds) frees the new ones and puts every buffer it
// touched back as it was: same pointer, size, capacity and contents. So pointers that a CUDA
// graph captured stay valid through an upload that runs out of memory.
template <class Memory> class BufferGrowth {
  public:
    BufferGrowth() = default;
    BufferGrowth(const BufferGrowth&) = delete;
    BufferGrowth& operator=(const BufferGrowth&) = delete;
    ~BufferGrowth() {
        if (!committed_) roll_back();
    }

    template <class T> void resize(GrowableBuffer<T, Memory>& buffer, size_t count) {
        BufferExtent& extent = buffer.extent_;
        const BufferExtent& before = remember(extent);
        if (count > extent.capacity) {
            void* fresh = Memory::allocate(count * sizeof(T));
            // A second growth of the same buffer frees the first's allocation, not the original.
            if (extent.data != before.data) Memory::release(extent.data);
            extent.data = fresh;
            extent.capacity = count;
        }
        extent.size = count;
    }

    // Frees what the grown buffers held before; the new sizes stay.
    void commit() {
        for (const Touched& touched : touched_)
            if (touched.extent->data != touched.before.data) Memory::release(touched.before.data);
        committed_ = true;
    }

  private:
    struct Touched {
        BufferExtent* extent;
        BufferExtent before;
    };

    const BufferExtent& remember(BufferExtent& extent) {
        for (const Touched& touched : touched_)
            if (touched.extent == &extent) return touched.before;
        touched_.push_back({&extent, extent});
        return touched_.back().before;
    }

    void roll_back() noexcept {
        for (const Touched& touched : touched_) {
            if (touched.extent->data != touched.before.data) Memory::release(touched.extent->data);
            *touched.extent = touched.before;
        }
    }

    std::vector<Touched> touched_;
    bool committed_ = false;
};

// The two passes of an all-or-nothing upload (upload_all_or_nothing). A fill function names
// every buffer and what goes in it: fill(pass) calls pass(buffer, host_vector) for a copy and
// pass.size(buffer, count) for room alone.
template <class Memory> struct SizePass {
    BufferGrowth<Memory>& growth;
    template <class T>
    void operator()(GrowableBuffer<T, Memory>& buffer, const std::vector<T>& host) {
        growth.resize(buffer, host.size());
    }
    template <class T> void size(GrowableBuffer<T, Memory>& buffer, size_t count) {
        growth.resize(buffer, count);
    }
};

template <class Memory> struct CopyPass {
    typename Memory::Stream stream;
    template <class T>
    void operator()(GrowableBuffer<T, Memory>& buffer, const std::vector<T>& host) {
        buffer.copy_in(host, stream);
    }
    template <class T> void size(GrowableBuffer<T, Memory>&, size_t) {}
};

// Sizes every buffer fill names as one BufferGrowth: if one does not fit, this throws with all
// of them as they were. Then runs sized() (where the caller marks what the copies will change)
// and enqueues fill's copies on stream.
template <class Memory, class Fill, class Sized>
void upload_all_or_nothing(Fill&& fill, Sized&& sized, typename Memory::Stream stream) {
    {
        BufferGrowth<Memory> growth;
        SizePass<Memory> size{growth};
        fill(size);
        growth.commit();
    }
    sized();
    CopyPass<Memory> copy{stream};
    fill(copy);
}

} // namespace steel::cuda
