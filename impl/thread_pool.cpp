#include "thread_pool.hpp"

#include "error.hpp"

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace steel {

namespace {

// Reports the exception a worker's start threw (std::system_error when the system refuses a
// thread, std::bad_alloc for its state) as the batch's failure.
[[noreturn]] void fail_worker_start(uint32_t worker, uint32_t thread_count) {
    const char* reason = "unknown error";
    try {
        throw;
    } catch (const std::exception& error) {
        reason = error.what();
    } catch (...) {
    }
    fail(STEEL_ERROR_OUT_OF_MEMORY,
         format("thread_count = %u: cannot start worker thread %u of %u (%s); the system allows "
                "this process no more threads: ask for fewer",
                thread_count, worker, thread_count - 1, reason));
}

} // namespace

ThreadPool::ThreadPool(uint32_t thread_count) {
    uint32_t t = 1;
    try {
        workers_.reserve(thread_count > 1 ? thread_count - 1 : 0);
        for (; t < thread_count; ++t) {
            if (testing::fail_worker_start.load(std::memory_order_relaxed) == t)
                throw std::system_error(EAGAIN, std::generic_category(), "test: no thread");
            workers_.emplace_back([this, t] { worker_loop(t); });
        }
    } catch (...) {
        // The workers already started wait on wake_: stop and join them, or destroying the
        // members would block on the condition variable or terminate on a joinable thread.
        stop_workers();
        fail_worker_start(t, thread_count);
    }
}

ThreadPool::~ThreadPool() {
    stop_workers();
}

void ThreadPool::stop_workers() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_)
        worker.join();
    workers_.clear();
}

uint32_t ThreadPool::hardware_thread_count(uint32_t limit) {
    const uint32_t faked = testing::hardware_threads.load(std::memory_order_relaxed);
    const uint32_t hardware = faked ? faked : std::thread::hardware_concurrency();
    return std::clamp(hardware, 1u, std::max(limit, 1u));
}

void ThreadPool::drain(uint32_t thread) {
    for (;;) {
        const uint32_t index = next_.fetch_add(1, std::memory_order_relaxed);
        if (index >= count_) return;
        task_.call(task_.context, index, thread);
    }
}

void ThreadPool::run(TaskRef task, uint32_t count) {
    if (workers_.empty() || count <= 1) {
        for (uint32_t i = 0; i < count; ++i)
            task.call(task.context, i, 0);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = task;
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
    task_ = TaskRef{nullptr, nullptr};
}

uint32_t ThreadPool::run_count(uint32_t count) const {
    // A few runs per thread, so that a slow run (larger items) does not leave threads idle.
    return std::min(count, thread_count() == 1 ? 1u : 4 * thread_count());
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
            if (task_.call == nullptr || next_.load(std::memory_order_relaxed) >= count_) continue;
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
