// The order in which the host emulation (host_simt.hpp) runs the work a GPU runs at once. Plain
// C++, so a test can change the order without including the emulation's CUDA macros.
//
// On a GPU the blocks of a grid run in any order and the lanes of a warp only agree at a warp
// operation, so a kernel whose answer changes with the order is racing. The emulation runs one
// lane at a time; running the same launch in two opposite orders and comparing the bits shows
// such a race, where one order alone would hide it.
#pragma once

namespace simt {

enum class Schedule {
    in_order, // blocks, warps and lanes in index order, each warp to its end before the next
    shuffled, // blocks last first; a block's warps take turns at each warp operation, last
              // first; lanes last first between warp operations
};

// Every launch from now on runs in this order (Schedule::in_order until set).
void set_schedule(Schedule schedule);

// Sets a schedule for a scope, then puts back the in-order one.
struct ScopedSchedule {
    explicit ScopedSchedule(Schedule schedule) { set_schedule(schedule); }
    ~ScopedSchedule() { set_schedule(Schedule::in_order); }
    ScopedSchedule(const ScopedSchedule&) = delete;
    ScopedSchedule& operator=(const ScopedSchedule&) = delete;
};

} // namespace simt
