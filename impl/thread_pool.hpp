// A small persistent pool of worker threads for one batch. parallel_for hands out indices
// dynamically; the results never depend on which thread ran an index, because every index
// (a world) writes only its own outputs. That is what makes solves bit-identical for any
// thread count.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace steel {

// Test seams, for the failure paths no test could reach otherwise. Zero: the real thing.
namespace testing {
// Starting worker k (1 = the first spawned) throws std::system_error(EAGAIN), as std::thread does
// when the process may start no more threads (a pids cgroup, RLIMIT_NPROC, no room for stacks).
inline std::atomic<uint32_t> fail_worker_start{0};
// What std::thread::hardware_concurrency() reports.
inline std::atomic<uint32_t> hardware_threads{0};
} // namespace testing

class ThreadPool {
  public:
    // thread_count >= 1; the calling thread counts as one, so thread_count - 1 are spawned. If one
    // cannot be started, those already started are stopped and joined, and the constructor throws
    // Error{STEEL_ERROR_OUT_OF_MEMORY} naming the thread and the system's reason.
    explicit ThreadPool(uint32_t thread_count);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    uint32_t thread_count() const { return uint32_t(workers_.size()) + 1; }

    // What thread_count = 0 asks for: one thread per hardware thread, at least 1, at most `limit`.
    static uint32_t hardware_thread_count(uint32_t limit);

    // Calls task(index, thread) for every index in [0, count), thread in [0, thread_count()).
    // task must not throw. The pool keeps only a pointer to task and allocates nothing, so a
    // caller can dispatch after the point where it may no longer fail (a solve writing results).
    template <class Task> void parallel_for(uint32_t count, const Task& task) {
        run(TaskRef{&task, &call<Task>}, count);
    }

    // For work on items that must keep their order (the worlds of an upload): splits [0, count)
    // into run_count(count) contiguous runs and calls task(run, first, end) for each. task may
    // throw: once every run has finished, the exception of the earliest run that threw is
    // rethrown, so a caller that checks its items in order reports the first bad item whatever
    // the thread count. On one thread it is a single run, called directly.
    uint32_t run_count(uint32_t count) const;
    template <class Task> void for_each_run(uint32_t count, const Task& task) {
        const uint32_t runs = run_count(count);
        if (runs <= 1) {
            if (count > 0) task(uint32_t(0), uint32_t(0), count);
            return;
        }
        const auto first = [&](uint32_t run) { return uint32_t(uint64_t(count) * run / runs); };
        std::vector<std::exception_ptr> failure(runs);
        parallel_for(runs, [&](uint32_t run, uint32_t) {
            try {
                task(run, first(run), first(run + 1));
            } catch (...) {
                failure[run] = std::current_exception();
            }
        });
        for (const std::exception_ptr& failed : failure)
            if (failed) std::rethrow_exception(failed);
    }

  private:
    // A task without its type: the caller's callable and how to call it.
    struct TaskRef {
        const void* context;
        void (*call)(const void* context, uint32_t index, uint32_t thread);
    };

    template <class Task> static void call(const void* context, uint32_t index, uint32_t thread) {
        (*static_cast<const Task*>(context))(index, thread);
    }

    void run(TaskRef task, uint32_t count);
    void worker_loop(uint32_t thread);
    void drain(uint32_t thread);
    void stop_workers() noexcept;

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    TaskRef task_{nullptr, nullptr};
    uint32_t count_ = 0;
    std::atomic<uint32_t> next_{0};
    uint64_t generation_ = 0;
    uint32_t active_ = 0; // workers inside drain() for the current job
    bool stopping_ = false;
};

} // namespace steel
