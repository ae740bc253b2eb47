// The batch's worker pool (impl/thread_pool.hpp): every index once, and for_each_run's ordered
// runs and first-error rule, which scene uploads rely on to report the first bad world whatever
// the thread count.
#include "../impl/thread_pool.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

TEST_CASE("parallel_for calls every index once, on threads the pool has") {
    for (uint32_t threads : {1u, 2u, 5u}) {
        CAPTURE(threads);
        steel::ThreadPool pool(threads);
        for (uint32_t count : {0u, 1u, 7u, 1000u}) {
            std::vector<std::atomic<int>> calls(count);
            std::atomic<bool> thread_in_range{true};
            pool.parallel_for(count, [&](uint32_t index, uint32_t thread) {
                calls[index].fetch_add(1);
                if (thread >= threads) thread_in_range = false;
            });
            for (uint32_t k = 0; k < count; ++k)
                CHECK(calls[k].load() == 1);
            CHECK(thread_in_range);
        }
    }
}

TEST_CASE("for_each_run covers the items in contiguous runs, in order, each once") {
    for (uint32_t threads : {1u, 2u, 3u, 8u}) {
        steel::ThreadPool pool(threads);
        for (uint32_t count : {0u, 1u, 5u, 31u, 1000u}) {
            CAPTURE(threads);
            CAPTURE(count);
            const uint32_t runs = pool.run_count(count);
            CHECK(runs <= count);
            CHECK(runs <= (threads == 1 ? 1u : 4 * threads));
            if (threads == 1 && count > 0) CHECK(runs == 1);
            std::vector<uint32_t> first(runs, ~0u), end(runs, ~0u);
            std::vector<std::atomic<int>> calls(count);
            pool.for_each_run(count, [&](uint32_t run, uint32_t begin, uint32_t stop) {
                first[run] = begin;
                end[run] = stop;
                for (uint32_t k = begin; k < stop; ++k)
                    calls[k].fetch_add(1);
            });
            for (uint32_t run = 0; run < runs; ++run) {
                CHECK(first[run] < end[run]); // no empty run
                CHECK(first[run] == (run == 0 ? 0 : end[run - 1]));
            }
            if (runs > 0) CHECK(end[runs - 1] == count);
            for (uint32_t k = 0; k < count; ++k)
                CHECK(calls[k].load() == 1);
        }
    }
}

TEST_CASE("for_each_run rethrows the earliest run's error after every run finished") {
    // Items 7 and 60 are bad. Checked in order, one thread stops at 7; so must every pool.
    for (uint32_t threads : {1u, 2u, 4u, 16u}) {
        CAPTURE(threads);
        steel::ThreadPool pool(threads);
        std::atomic<uint32_t> checked{0};
        std::string message;
        try {
            pool.for_each_run(100, [&](uint32_t, uint32_t first, uint32_t end) {
                for (uint32_t k = first; k < end; ++k) {
                    if (k == 7 || k == 60) throw std::runtime_error("item " + std::to_string(k));
                    checked.fetch_add(1);
                }
            });
        } catch (const std::runtime_error& error) {
            message = error.what();
        }
        CHECK(message == "item 7");
        // Every run ran: the runs after the bad ones' stop at their own first bad item only.
        CHECK(checked.load() >= (threads == 1 ? 7u : 7u + 1u));
        // The pool is usable afterwards.
        std::atomic<uint32_t> after{0};
        pool.for_each_run(10,
                          [&](uint32_t, uint32_t first, uint32_t end) { after += end - first; });
        CHECK(after.load() == 10);
    }
}
