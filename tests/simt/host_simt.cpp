// The host emulation of a GPU's grid, blocks and warps (host_simt.hpp).
//
// A warp's 32 lanes are fibers on the calling thread, not threads: a lane runs until it reaches
// a warp operation, then hands over to the next lane; once all 32 have arrived, the meeting is
// complete and each reads what the others handed in. A switch is a few dozen instructions
// (switch_from_scheduler), against tens of microseconds for waking 32 threads.
//
// Under ThreadSanitizer every lane is a fiber of its own to it (the TSan fiber API), and the
// switches carry no happens-before. A lane's start comes after what the host did before its
// block, and its end before what the host does after the block; no lane's start comes after
// another's end. Only __syncwarp orders the lanes' memory, as on a GPU, where shuffles and votes
// do not: each lane releases the warp's barrier as it arrives and acquires it as it leaves. So a
// lane that reads what another lane of its warp wrote with no
// __syncwarp between the two is a data race that TSan reports, whatever the schedule. The
// emulation's own bookkeeping (the meeting slots, the thread indices it sets) is hidden from it.
#include "host_simt.hpp"

#include <ucontext.h>

#include <memory>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define SIMT_ASAN 1
#define SIMT_POISON(address, size) ASAN_POISON_MEMORY_REGION(address, size)
#define SIMT_UNPOISON(address, size) ASAN_UNPOISON_MEMORY_REGION(address, size)
#else
#define SIMT_ASAN 0
#define SIMT_POISON(address, size) ((void)(address), (void)(size))
#define SIMT_UNPOISON(address, size) ((void)(address), (void)(size))
#endif

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define SIMT_TSAN 1
// ThreadSanitizer's dynamic annotations (its runtime defines them; no header declares them).
extern "C" {
void AnnotateIgnoreReadsBegin(const char* file, int line);
void AnnotateIgnoreReadsEnd(const char* file, int line);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
}
#else
#define SIMT_TSAN 0
#endif

// clang's -fsanitize=function (in -fsanitize=undefined) checks every indirect call's target; in
// this file, with its jumps between fiber stacks, that made the emulation crash (a null read
// right after a lane came back to the scheduler; clang 14, the fuzzing build of
// fuzz/fuzz_cuda_emulated.cpp). The emulator's own functions go without that check; the kernels
// (emulated_kernels.cpp) keep it. GCC has no such check.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((no_sanitize("function"))), apply_to = function)
#endif

simt::Dim3 threadIdx, blockIdx, blockDim, gridDim;

// The kernels declare `extern __shared__ unsigned char shared_bytes[]` inside namespace
// steel::cuda; this is the one buffer behind it (warps and blocks run one at a time). As large
// as the most a Hopper block can opt in to.
namespace steel::cuda {
alignas(16) unsigned char shared_bytes[227 * 1024];
}

namespace simt {

namespace {

constexpr size_t kSharedCapacity = sizeof(steel::cuda::shared_bytes);
// What a kernel gets without cudaFuncSetAttribute; Steel's launches never opt in to more.
constexpr size_t kDefaultSharedLimit = 48 * 1024;
constexpr unsigned char kSharedGuard = 0xff; // every float and double made of it is a NaN
constexpr size_t kSlotBytes = 16;
constexpr size_t kLaneStackBytes = 256 * 1024;

std::vector<std::string> problems;
#if SIMT_TSAN
// What the host releases before a block and its lanes acquire as they start, and what the lanes
// release as they end and the host acquires after the block.
char block_start, lanes_end;
#endif
Schedule current_schedule = Schedule::in_order;

void report(const std::string& problem) {
    if (problems.size() < 20) problems.push_back(problem);
}

std::string where(uint32_t block, uint32_t warp) {
    return "block " + std::to_string(block) + " warp " + std::to_string(warp);
}

// The emulation's bookkeeping, which lanes and the scheduler share with no order TSan could see
// (it is ordered by the switches), is kept out of its sight while one of these lives.
struct Unwatched {
#if SIMT_TSAN
    Unwatched() {
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    }
    ~Unwatched() {
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    }
#else
    Unwatched() {} // user-provided: a variable of this type is not "unused"
    ~Unwatched() {}
#endif
};

// What __builtin_setjmp keeps of a fiber: its frame, resume address and stack pointer.
using JumpPoint = void* [5];

// A lane's stack, and under TSan the fiber that runs on it (kept with it, so that one TSan fiber
// only ever owns one stack).
struct LaneStack {
    std::unique_ptr<unsigned char[]> memory;
    void* tsan_fiber = nullptr;
};

struct Lane {
    ucontext_t context;     // where the lane starts
    JumpPoint resume_point; // where it waits at a warp operation
    LaneStack stack;
    bool started = false, finished = false;
    int set = 0; // which set of meeting slots this lane writes next
    void* asan_fake_stack = nullptr;
};

// One warp's lanes and their meeting place. Two sets of slots are used in turn, so a lane that
// runs ahead to the next meeting never overwrites what a later lane has yet to read.
struct Warp {
    uint32_t block = 0, index = 0, lanes = 0;
    Lane lane[32];
    JumpPoint scheduler_point;
    const void* scheduler_stack = nullptr; // for ASan's fiber switches
    size_t scheduler_stack_size = 0;
    alignas(16) unsigned char slot[2][32][kSlotBytes] = {};
    WarpOp op[2][32] = {};
    size_t bytes[2][32] = {};
    unsigned mask[2][32] = {};
    char barrier[2] = {};            // what __syncwarp releases and acquires under TSan, a set each
    void* scheduler_fiber = nullptr; // under TSan
    const std::function<void()>* kernel = nullptr;
    Dim3 grid, block_dim;
};

Warp* current_warp = nullptr;
uint32_t current_lane = 0;

// Switches between the scheduler and a lane. A lane's first entry goes through its ucontext
// (makecontext gave it a stack); every switch after that is the compiler's own setjmp/longjmp
// pair. swapcontext makes two system calls a switch, and under ASan a library longjmp clears
// the shadow of the stack it leaves: either costs more than the kernels themselves, and the
// emulation switches millions of times a test run. ASan is told of every change of stack
// (sanitizer/common_interface_defs.h).
// Kept out of line: __builtin_longjmp must not be called from the function that set the point.
// Called through a volatile pointer, so that no compiler sees a call that does not return: ASan
// calls __asan_handle_no_return before one, and that makes a system call (sigaltstack).
// Not seen by TSan either: it would push a frame on the fiber switched to that nothing pops.
__attribute__((noinline, no_sanitize_address, no_sanitize_thread)) void
jump_to_body(JumpPoint& point) {
    __builtin_longjmp(point, 1);
}
void (*volatile jump_to)(JumpPoint&) = jump_to_body;

void switch_from_scheduler(Warp& warp, Lane& lane) {
#if SIMT_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, lane.stack.memory.get(), kLaneStackBytes);
#endif
    // Everything the scheduler reads of the lane is read before the switch (TSan would count a
    // read after it as the lane's).
    const bool started = lane.started;
    lane.started = true;
    JumpPoint& resume_point = lane.resume_point;
    const ucontext_t* context = &lane.context;
#if SIMT_TSAN
    __tsan_switch_to_fiber(lane.stack.tsan_fiber, __tsan_switch_to_fiber_no_sync);
#endif
    if (__builtin_setjmp(warp.scheduler_point) == 0) {
        if (started) jump_to(resume_point);
        setcontext(context); // onto the lane's fresh stack, into lane_entry
    }
#if SIMT_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void switch_to_scheduler(Warp& warp, Lane& lane) {
#if SIMT_ASAN
    __sanitizer_start_switch_fiber(lane.finished ? nullptr : &lane.asan_fake_stack,
                                   warp.scheduler_stack, warp.scheduler_stack_size);
#endif
#if SIMT_TSAN
    __tsan_switch_to_fiber(warp.scheduler_fiber, __tsan_switch_to_fiber_no_sync);
#endif
    if (__builtin_setjmp(lane.resume_point) == 0) jump_to(warp.scheduler_point);
#if SIMT_ASAN
    __sanitizer_finish_switch_fiber(lane.asan_fake_stack, nullptr, nullptr);
#endif
}

void lane_entry() {
    Warp& warp = *current_warp;
#if SIMT_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &warp.scheduler_stack, &warp.scheduler_stack_size);
#endif
#if SIMT_TSAN
    __tsan_acquire(&block_start);
#endif
    (*warp.kernel)();
#if SIMT_TSAN
    __tsan_release(&lanes_end);
#endif
    Lane* lane = nullptr;
    {
        const Unwatched unwatched; // not across the switch: the fiber runs other lanes later
        lane = &warp.lane[current_lane];
        lane->finished = true;
    }
    switch_to_scheduler(warp, *lane); // never comes back
}

// Resumes `lane` until it reaches a warp operation or leaves the kernel.
void resume(Warp& warp, uint32_t lane) {
    const Unwatched unwatched;
    threadIdx = Dim3{warp.index * 32 + lane, 0, 0};
    blockIdx = Dim3{warp.block, 0, 0};
    gridDim = warp.grid;
    blockDim = warp.block_dim;
    current_warp = &warp;
    current_lane = lane;
    switch_from_scheduler(warp, warp.lane[lane]);
}

// Checks a completed meeting of set `set`: same operation everywhere, every lane's mask full,
// and 32 lanes to meet (a full mask names lanes that a shorter last warp does not have: on a
// GPU that is undefined).
void check_meeting(const Warp& warp, int set) {
    for (uint32_t lane = 0; lane < warp.lanes; ++lane) {
        if (warp.lane[lane].finished) {
            report(where(warp.block, warp.index) + ": lane " + std::to_string(lane) +
                   " left the kernel while other lanes waited at a warp operation");
            return;
        }
        if (warp.op[set][lane] != warp.op[set][0] || warp.bytes[set][lane] != warp.bytes[set][0]) {
            report(where(warp.block, warp.index) + ": lanes 0 and " + std::to_string(lane) +
                   " reached different warp operations (a divergent shuffle or sync)");
            return;
        }
        if (warp.mask[set][lane] != 0xffffffffu) {
            report(where(warp.block, warp.index) + ": lane " + std::to_string(lane) +
                   " passed a partial mask to a warp operation");
            return;
        }
    }
    if (warp.lanes < 32)
        report(where(warp.block, warp.index) + ": a full-mask warp operation in a warp of " +
               std::to_string(warp.lanes) + " lanes (the block's size is not a multiple of 32)");
}

// A fresh fiber that will start in lane_entry. (getcontext returns twice, hence a function of
// its own with nothing else in it.)
void prepare_lane(Lane& lane, LaneStack stack) {
    lane.stack = std::move(stack);
    // A lane dropped at its last warp's end left its frames' redzones poisoned.
    SIMT_UNPOISON(lane.stack.memory.get(), kLaneStackBytes);
    getcontext(&lane.context);
    lane.context.uc_stack.ss_sp = lane.stack.memory.get();
    lane.context.uc_stack.ss_size = kLaneStackBytes;
    lane.context.uc_link = nullptr;
    makecontext(&lane.context, lane_entry, 0);
}

// One meeting of `warp`: resumes every lane still in the kernel, in lane order or in reverse,
// until each reaches its next warp operation or leaves. Returns true once the warp is done.
bool advance_warp(Warp& warp, bool reversed) {
    // The scheduler's reads of the lanes' state; the lanes it resumes are watched again (TSan's
    // ignoring is a fiber's own).
    const Unwatched unwatched;
    uint32_t finished = 0;
    int set = 0;
    for (uint32_t k = 0; k < warp.lanes; ++k) {
        const uint32_t l = reversed ? warp.lanes - 1 - k : k;
        if (!warp.lane[l].finished) {
            set = warp.lane[l].set;
            resume(warp, l);
        }
        finished += warp.lane[l].finished ? 1 : 0;
    }
    if (finished == warp.lanes) return true;
    check_meeting(warp, set);
    return finished > 0; // the rest would wait forever on a GPU; here they are dropped
}

// Fiber stacks, kept between launches: 32 a warp, and a whole block's worth when its warps run
// together.
std::vector<LaneStack>& lane_stacks(size_t count) {
    static std::vector<LaneStack> stacks;
    while (stacks.size() < count) {
        LaneStack stack;
        stack.memory.reset(new unsigned char[kLaneStackBytes]);
#if SIMT_TSAN
        stack.tsan_fiber = __tsan_create_fiber(0);
#endif
        stacks.push_back(std::move(stack));
    }
    return stacks;
}

// Runs the warps of block `b`. In order: warp after warp, each lane to its next meeting in lane
// order. Shuffled: the block's warps take turns a meeting at a time, last warp first, and the
// lanes of each warp run last lane first.
void run_block(uint32_t b, Dim3 grid, Dim3 block, const std::function<void()>& kernel,
               Schedule schedule) {
    const uint32_t warp_count = (block.x + 31) / 32;
    const bool shuffled = schedule == Schedule::shuffled;
    auto& stacks = lane_stacks(size_t(32) * (shuffled ? warp_count : 1));
    std::vector<std::unique_ptr<Warp>> warps;
    for (uint32_t w = 0; w < warp_count; ++w) {
        auto warp = std::make_unique<Warp>();
        warp->block = b;
        warp->index = w;
        warp->lanes = std::min<uint32_t>(32, block.x - 32 * w);
        warp->kernel = &kernel;
#if SIMT_TSAN
        warp->scheduler_fiber = __tsan_get_current_fiber();
#endif
        warp->grid = grid;
        warp->block_dim = block;
        warps.push_back(std::move(warp));
    }
    auto start = [&](Warp& warp, size_t first_stack) {
        for (uint32_t l = 0; l < warp.lanes; ++l)
            prepare_lane(warp.lane[l], std::move(stacks[first_stack + l]));
#if SIMT_TSAN
        __tsan_release(&block_start); // the host's writes, these warps' set-up included
#endif
    };
    auto finish = [&](Warp& warp, size_t first_stack) {
        for (uint32_t l = 0; l < warp.lanes; ++l)
            stacks[first_stack + l] = std::move(warp.lane[l].stack);
    };
    if (!shuffled) {
        for (auto& warp : warps) {
            start(*warp, 0);
            while (!advance_warp(*warp, false)) {
            }
            finish(*warp, 0);
        }
        return;
    }
    for (uint32_t w = 0; w < warp_count; ++w)
        start(*warps[w], size_t(32) * w);
    std::vector<bool> done(warp_count, false);
    for (uint32_t left = warp_count; left > 0;)
        for (uint32_t k = 0; k < warp_count; ++k) {
            const uint32_t w = warp_count - 1 - k;
            if (done[w]) continue;
            done[w] = advance_warp(*warps[w], true);
            if (done[w]) --left;
        }
    for (uint32_t w = 0; w < warp_count; ++w)
        finish(*warps[w], size_t(32) * w);
}

} // namespace

unsigned char* shared_memory() {
    return steel::cuda::shared_bytes;
}

uint32_t lane_id() {
    return current_lane;
}

void warp_meet(WarpOp op, unsigned mask, const void* mine, size_t bytes, void* all) {
    const Unwatched unwatched;
    Warp& warp = *current_warp;
    const uint32_t me = current_lane;
    Lane& lane = warp.lane[me];
    const int set = lane.set;
    lane.set ^= 1;
    if (bytes) std::memcpy(warp.slot[set][me], mine, bytes);
    warp.op[set][me] = op;
    warp.bytes[set][me] = bytes;
    warp.mask[set][me] = mask;
#if SIMT_TSAN
    // Two barriers in turn, as the slots: a lane that runs on to the next __syncwarp before a
    // later lane has left this one releases into the other, so it orders nothing early.
    if (op == WarpOp::sync) __tsan_release(&warp.barrier[set]);
#endif
    switch_to_scheduler(warp, lane); // back once every lane has arrived
#if SIMT_TSAN
    if (op == WarpOp::sync) __tsan_acquire(&warp.barrier[set]);
#endif
    for (uint32_t l = 0; l < warp.lanes && bytes; ++l)
        std::memcpy(static_cast<unsigned char*>(all) + l * bytes, warp.slot[set][l], bytes);
}

void launch(Dim3 grid, Dim3 block, size_t shared_bytes, const std::function<void()>& kernel) {
    if (block.x == 0 || block.x > 1024 || grid.x == 0) {
        report("launch with " + std::to_string(grid.x) + " blocks of " + std::to_string(block.x) +
               " threads (a GPU takes 1 to 1,024 threads a block and at least one block)");
        return;
    }
    if (shared_bytes > kDefaultSharedLimit) {
        report("launch asks for " + std::to_string(shared_bytes) +
               " bytes of dynamic shared memory; more than 48 KB needs an opt-in "
               "(cudaFuncAttributeMaxDynamicSharedMemorySize)");
        return;
    }
    unsigned char* shared = steel::cuda::shared_bytes;
    for (uint32_t n = 0; n < grid.x; ++n) {
        const uint32_t b = current_schedule == Schedule::shuffled ? grid.x - 1 - n : n;
        // Shared memory starts as garbage on a GPU: NaNs here, so reading before writing shows.
        std::memset(shared, kSharedGuard, kSharedCapacity);
        SIMT_POISON(shared + shared_bytes, kSharedCapacity - shared_bytes);
        run_block(b, grid, block, kernel, current_schedule);
#if SIMT_TSAN
        __tsan_acquire(&lanes_end);
#endif
        SIMT_UNPOISON(shared + shared_bytes, kSharedCapacity - shared_bytes);
        for (size_t k = shared_bytes; k < kSharedCapacity; ++k)
            if (shared[k] != kSharedGuard) {
                report("block " + std::to_string(b) + " wrote shared memory byte " +
                       std::to_string(k) + ", past the " + std::to_string(shared_bytes) +
                       " bytes it was launched with");
                break;
            }
    }
}

void set_schedule(Schedule schedule) {
    current_schedule = schedule;
}

std::vector<std::string> take_problems() {
    std::vector<std::string> taken;
    taken.swap(problems);
    return taken;
}

} // namespace simt

#if defined(__clang__)
#pragma clang attribute pop
#endif
