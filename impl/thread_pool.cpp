#include "thread_pool.hpp"

#include <algorithm>
#include <exception>

namespace steel {

ThreadPool::ThreadPool(uint32_t thread_count) {
    for (uint32_t t = 1; t < thread_count; ++t)
        workers_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_)
        worker.join();
}

void ThreadPool::drain(uint32_t thread) {
    for (;;) {
        const uint32_t index = next_.fetch_add(1, std::memory_order_relaxed);
        if (index >= count_) return;
        (*task_)(index, thread);
    }
}

void ThreadPool::parallel_for(uint32_t count, const std::function<void(uint32_t, uint32_t)>& task) {
    if (workers_.empty() || count <= 1) {
        for (uint32_t i = 0; i < count; ++i)
            task(i, 0);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = &task;
        count_ = count;
        next_.store(0, std::memory_order_relaxed);
        ++generation_;
    }
    wake_.notify_all();
    drain(0);
    // Every index is claimed now. Wait only for the workers that joined this job: one that wakes
    // later finds no work and stays out, so a slow wake-up never holds up the caller.
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return active_ == 0; });
    task_ = nullptr;
}

uint32_t ThreadPool::run_count(uint32_t count) const {
    // A few runs per thread, so that a slow run (larger items) does not leave threads idle.
    return std::min(count, thread_count() == 1 ? 1u : 4 * thread_count());
}

void ThreadPool::for_each_run(
    uint32_t count, const std::function<void(uint32_t run, uint32_t first, uint32_t end)>& task) {
    const uint32_t runs = run_count(count);
    if (runs <= 1) {
        if (count > 0) task(0, 0, count);
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

void ThreadPool::worker_loop(uint32_t thread) {
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_) return;
            seen = generation_;
            // Join the job only while it has unclaimed work; the caller waits for those who join.
            if (task_ == nullptr || next_.load(std::memory_order_relaxed) >= count_) continue;
            ++active_;
        }
        drain(thread);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --active_;
        }
        done_.notify_one();
    }
}

} // namespace steel
