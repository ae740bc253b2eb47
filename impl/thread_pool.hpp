// A small persistent pool of worker threads for one batch. parallel_for hands out indices
// dynamically; the results never depend on which thread ran an index, because every index
// (a world) writes only its own outputs. That is what makes solves bit-identical for any
// thread count.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace steel {

class ThreadPool {
  public:
    // thread_count >= 1; the calling thread counts as one, so thread_count - 1 are spawned.
    explicit ThreadPool(uint32_t thread_count);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    uint32_t thread_count() const { return uint32_t(workers_.size()) + 1; }

    // Calls task(index, thread) for every index in [0, count), thread in [0, thread_count()).
    // task must not throw.
    void parallel_for(uint32_t count, const std::function<void(uint32_t, uint32_t)>& task);

    // For work on items that must keep their order (the worlds of an upload): splits [0, count)
    // into run_count(count) contiguous runs and calls task(run, first, end) for each. task may
    // throw: once every run has finished, the exception of the earliest run that threw is
    // rethrown, so a caller that checks its items in order reports the first bad item whatever
    // the thread count. On one thread it is a single run, called directly.
    uint32_t run_count(uint32_t count) const;
    void for_each_run(uint32_t count,
                      const std::function<void(uint32_t run, uint32_t first, uint32_t end)>& task);

  private:
    void worker_loop(uint32_t thread);
    void drain(uint32_t thread);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    const std::function<void(uint32_t, uint32_t)>* task_ = nullptr;
    uint32_t count_ = 0;
    std::atomic<uint32_t> next_{0};
    uint64_t generation_ = 0;
    uint32_t active_ = 0; // workers inside drain() for the current job
    bool stopping_ = false;
};

} // namespace steel
