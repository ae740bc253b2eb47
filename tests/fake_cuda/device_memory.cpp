// See device_memory.hpp.
#include "device_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAKE_CUDA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FAKE_CUDA_ASAN 1
#endif
#if defined(FAKE_CUDA_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace fake_cuda::memory {

namespace {

constexpr size_t kAlignment = 256;  // cudaMalloc's
constexpr size_t kQuarantine = 256; // freed allocations kept closed before they are unmapped
// A fresh allocation's first bytes hold this, not the zeros of new pages: on a GPU, cudaMalloc
// hands back memory with whatever it held last, so a reader of bytes no one wrote must show.
// 0xff is NaN in a float or double and all ones in an integer. Past the first kStaleBytes (a
// memory hog's pieces) the pages stay untouched, to keep them cheap.
constexpr unsigned char kStaleByte = 0xff;
constexpr size_t kStaleBytes = size_t(16) << 20;

// One mapping: `pages` bytes that hold the allocation at their end, then a guard page.
struct Mapping {
    unsigned char* region = nullptr;
    size_t pages = 0;
    size_t bytes = 0; // the allocation's
};

std::map<uintptr_t, Mapping> live; // by the allocation's start
std::deque<Mapping> quarantine;
int open_depth = 0;

size_t page_size() {
    static const size_t size = size_t(sysconf(_SC_PAGESIZE));
    return size;
}

size_t round_up(size_t value, size_t unit) {
    return (value + unit - 1) / unit * unit;
}

void protect(const Mapping& mapping, int access) {
    if (mapping.pages > 0 && mprotect(mapping.region, mapping.pages, access) != 0) {
        std::perror("fake_cuda: mprotect");
        std::abort();
    }
}

void poison(const void* start, size_t bytes) {
#if defined(FAKE_CUDA_ASAN)
    __asan_poison_memory_region(start, bytes);
#else
    (void)start;
    (void)bytes;
#endif
}

void unpoison(const void* start, size_t bytes) {
#if defined(FAKE_CUDA_ASAN)
    __asan_unpoison_memory_region(start, bytes);
#else
    (void)start;
    (void)bytes;
#endif
}

void unmap(const Mapping& mapping) {
    unpoison(mapping.region, mapping.pages); // a later mapping here starts clean
    munmap(mapping.region, mapping.pages + page_size());
}

void protect_all(int access) {
    for (const auto& [start, mapping] : live)
        protect(mapping, access);
}

} // namespace

void* allocate(size_t bytes) {
    const size_t used = round_up(bytes > 0 ? bytes : 1, kAlignment);
    if (used < bytes) return nullptr; // wrapped
    Mapping mapping;
    mapping.pages = round_up(used, page_size());
    mapping.bytes = bytes;
    void* region = mmap(nullptr, mapping.pages + page_size(), PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return nullptr;
    mapping.region = static_cast<unsigned char*>(region);
    unsigned char* start = mapping.region + (mapping.pages - used);
    poison(mapping.region, size_t(start - mapping.region));
    poison(start + bytes, used - bytes);
    protect(mapping, PROT_READ | PROT_WRITE);
    std::memset(start, kStaleByte, bytes < kStaleBytes ? bytes : kStaleBytes);
    if (open_depth == 0) protect(mapping, PROT_NONE);
    live[reinterpret_cast<uintptr_t>(start)] = mapping;
    return start;
}

bool release(void* pointer) {
    const auto it = live.find(reinterpret_cast<uintptr_t>(pointer));
    if (it == live.end()) return false;
    const Mapping mapping = it->second;
    live.erase(it);
    protect(mapping, PROT_NONE);
    madvise(mapping.region, mapping.pages, MADV_DONTNEED); // its contents are gone
    quarantine.push_back(mapping);
    if (quarantine.size() > kQuarantine) {
        unmap(quarantine.front());
        quarantine.pop_front();
    }
    return true;
}

void open() {
    if (open_depth++ == 0) protect_all(PROT_READ | PROT_WRITE);
}

void close() {
    if (--open_depth == 0) protect_all(PROT_NONE);
}

HostSide::HostSide() {
    if (open_depth > 0) protect_all(PROT_NONE);
}

HostSide::~HostSide() {
    if (open_depth > 0) protect_all(PROT_READ | PROT_WRITE);
}

} // namespace fake_cuda::memory
