// The host emulation of a GPU's grid, blocks and warps (host_simt.hpp).
//
// A warp's 32 lanes are fibers (ucontext) on the calling thread, not threads: a lane runs until
// it reaches a warp operation, then hands over to the next lane; once all 32 have arrived, the
// meeting is complete and each reads what the others handed in. Switching fibers costs well under
// a microsecond, against tens of microseconds for waking 32 threads on a small machine.
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

void report(const std::string& problem) {
    if (problems.size() < 20) problems.push_back(problem);
}

std::string where(uint32_t block, uint32_t warp) {
    return "block " + std::to_string(block) + " warp " + std::to_string(warp);
}

struct Lane {
    ucontext_t context;
    std::unique_ptr<unsigned char[]> stack;
    bool finished = false;
    int set = 0; // which set of meeting slots this lane writes next
    void* asan_fake_stack = nullptr;
};

// One warp's lanes and their meeting place. Two sets of slots are used in turn, so a lane that
// runs ahead to the next meeting never overwrites what a later lane has yet to read.
struct Warp {
    uint32_t block = 0, index = 0, lanes = 0;
    Lane lane[32];
    ucontext_t scheduler;
    const void* scheduler_stack = nullptr; // for ASan's fiber switches
    size_t scheduler_stack_size = 0;
    alignas(16) unsigned char slot[2][32][kSlotBytes] = {};
    WarpOp op[2][32] = {};
    size_t bytes[2][32] = {};
    unsigned mask[2][32] = {};
    const std::function<void()>* kernel = nullptr;
    Dim3 grid, block_dim;
};

Warp* current_warp = nullptr;
uint32_t current_lane = 0;

// ASan has to be told when the stack changes under it (sanitizer/common_interface_defs.h).
void switch_from_scheduler(Warp& warp, Lane& lane) {
#if SIMT_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, lane.stack.get(), kLaneStackBytes);
    swapcontext(&warp.scheduler, &lane.context);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    swapcontext(&warp.scheduler, &lane.context);
#endif
}

void switch_to_scheduler(Warp& warp, Lane& lane) {
#if SIMT_ASAN
    __sanitizer_start_switch_fiber(lane.finished ? nullptr : &lane.asan_fake_stack,
                                   warp.scheduler_stack, warp.scheduler_stack_size);
    swapcontext(&lane.context, &warp.scheduler);
    __sanitizer_finish_switch_fiber(lane.asan_fake_stack, nullptr, nullptr);
#else
    swapcontext(&lane.context, &warp.scheduler);
#endif
}

void lane_entry() {
    Warp& warp = *current_warp;
#if SIMT_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &warp.scheduler_stack, &warp.scheduler_stack_size);
#endif
    (*warp.kernel)();
    Lane& lane = warp.lane[current_lane];
    lane.finished = true;
    switch_to_scheduler(warp, lane); // never comes back
}

// Resumes `lane` until it reaches a warp operation or leaves the kernel.
void resume(Warp& warp, uint32_t lane) {
    threadIdx = Dim3{warp.index * 32 + lane, 0, 0};
    blockIdx = Dim3{warp.block, 0, 0};
    gridDim = warp.grid;
    blockDim = warp.block_dim;
    current_warp = &warp;
    current_lane = lane;
    switch_from_scheduler(warp, warp.lane[lane]);
}

// Checks a completed meeting of set `set`: same operation everywhere, full masks.
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
    }
    if (warp.mask[set][0] != 0xffffffffu)
        report(where(warp.block, warp.index) + ": a warp operation with a partial mask");
}

// A fresh fiber that will start in lane_entry. (getcontext returns twice, hence a function of
// its own with nothing else in it.)
void prepare_lane(Lane& lane, std::unique_ptr<unsigned char[]> stack) {
    lane.stack = std::move(stack);
    getcontext(&lane.context);
    lane.context.uc_stack.ss_sp = lane.stack.get();
    lane.context.uc_stack.ss_size = kLaneStackBytes;
    lane.context.uc_link = nullptr;
    makecontext(&lane.context, lane_entry, 0);
}

void run_warp(Warp& warp, std::vector<std::unique_ptr<unsigned char[]>>& stacks) {
    for (uint32_t l = 0; l < warp.lanes; ++l)
        prepare_lane(warp.lane[l], std::move(stacks[l]));
    for (;;) {
        uint32_t finished = 0;
        int set = 0;
        for (uint32_t l = 0; l < warp.lanes; ++l) {
            if (!warp.lane[l].finished) {
                set = warp.lane[l].set;
                resume(warp, l);
            }
            finished += warp.lane[l].finished ? 1 : 0;
        }
        if (finished == warp.lanes) break;
        check_meeting(warp, set);
        if (finished > 0) break; // the rest wait forever on a GPU; here they are dropped
    }
    for (uint32_t l = 0; l < warp.lanes; ++l)
        stacks[l] = std::move(warp.lane[l].stack);
}

} // namespace

unsigned char* shared_memory() {
    return steel::cuda::shared_bytes;
}

uint32_t lane_id() {
    return current_lane;
}

void warp_meet(WarpOp op, unsigned mask, const void* mine, size_t bytes, void* all) {
    Warp& warp = *current_warp;
    const uint32_t me = current_lane;
    Lane& lane = warp.lane[me];
    const int set = lane.set;
    lane.set ^= 1;
    if (bytes) std::memcpy(warp.slot[set][me], mine, bytes);
    warp.op[set][me] = op;
    warp.bytes[set][me] = bytes;
    warp.mask[set][me] = mask;
    switch_to_scheduler(warp, lane); // back once every lane has arrived
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
    std::vector<std::unique_ptr<unsigned char[]>> stacks(32);
    for (auto& stack : stacks)
        stack.reset(new unsigned char[kLaneStackBytes]);
    unsigned char* shared = steel::cuda::shared_bytes;
    for (uint32_t b = 0; b < grid.x; ++b) {
        // Shared memory starts as garbage on a GPU: NaNs here, so reading before writing shows.
        std::memset(shared, kSharedGuard, kSharedCapacity);
        SIMT_POISON(shared + shared_bytes, kSharedCapacity - shared_bytes);
        for (uint32_t first = 0; first < block.x; first += 32) {
            auto warp = std::make_unique<Warp>();
            warp->block = b;
            warp->index = first / 32;
            warp->lanes = std::min<uint32_t>(32, block.x - first);
            warp->kernel = &kernel;
            warp->grid = grid;
            warp->block_dim = block;
            run_warp(*warp, stacks);
        }
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

std::vector<std::string> take_problems() {
    std::vector<std::string> taken;
    taken.swap(problems);
    return taken;
}

} // namespace simt
