// Failure paths of the batch's life: a worker thread the system refuses, thread_count = 0 on a
// host with more hardware threads than the limit, a solve refused for want of memory, and no
// memory left even for the error message. Each must end in a status and a message, with nothing
// changed, never a hang or an abort.
//
// Allocations are made to fail by replacing the global operator new for this test program
// (which links the library statically): a thread can ask that one of its next allocations fail,
// or all of them. Other threads, and this thread while unarmed, allocate as usual.
#include "../impl/thread_pool.hpp"
#include "rows_scenes.hpp"
#include "scene_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

// Under the sanitizers their allocators own operator new, so only the plain builds replace it.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define STEEL_TEST_FAILING_NEW 1

namespace {
thread_local long allocations_before_failure = -1; // then one fails; -1: none fails
thread_local bool out_of_memory = false;           // every allocation fails
thread_local long allocations_made = 0;            // this thread's allocations so far
} // namespace

void* operator new(std::size_t size) {
    if (out_of_memory) throw std::bad_alloc();
    if (allocations_before_failure == 0) {
        allocations_before_failure = -1;
        throw std::bad_alloc();
    }
    if (allocations_before_failure > 0) --allocations_before_failure;
    ++allocations_made;
    void* data = std::malloc(size ? size : 1);
    if (!data) throw std::bad_alloc();
    return data;
}
void* operator new[](std::size_t size) {
    return ::operator new(size);
}
void operator delete(void* data) noexcept {
    std::free(data);
}
void operator delete[](void* data) noexcept {
    std::free(data);
}
void operator delete(void* data, std::size_t) noexcept {
    std::free(data);
}
void operator delete[](void* data, std::size_t) noexcept {
    std::free(data);
}
#endif

namespace {

using scenes::ContactSpec;
using scenes::SceneBuilder;

size_t process_threads() {
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator("/proc/self/task"))
        ++count;
    return count;
}

// Whether this process (Linux) is down to at most `expected` threads, waiting a little: a joined
// thread's entry can outlive the join by a moment.
bool threads_settle_at(size_t expected) {
    for (int attempt = 0; attempt < 200; ++attempt) {
        if (process_threads() <= expected) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

// The process's threads once the entries of threads joined a moment ago are gone: the fewest
// seen over 100 ms.
size_t settled_threads() {
    size_t fewest = process_threads();
    for (int attempt = 0; attempt < 20; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        fewest = std::min(fewest, process_threads());
    }
    return fewest;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::vector<unsigned char> saved(steel_batch batch) {
    uint64_t bytes = 0;
    REQUIRE_OK(steel_batch_save_memory(batch, nullptr, 0, &bytes));
    std::vector<unsigned char> snapshot(bytes);
    REQUIRE_OK(steel_batch_save_memory(batch, snapshot.data(), bytes, &bytes));
    return snapshot;
}

} // namespace

TEST_CASE("a worker thread the system refuses fails the create and stops the workers started") {
    const size_t threads_before = process_threads();
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.thread_count = 8; // 7 workers
    for (uint32_t refused : {1u, 4u, 7u}) {
        CAPTURE(refused);
        steel::testing::fail_worker_start = refused;
        steel_batch batch{};
        const steel_status status = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
        steel::testing::fail_worker_start = 0;
        const std::string message = steel_last_error_message();
        INFO(message);
        CHECK(status == STEEL_ERROR_OUT_OF_MEMORY);
        CHECK(batch.id == 0);
        CHECK(contains(message, "cannot start worker thread " + std::to_string(refused) + " of 7"));
        CHECK(threads_settle_at(threads_before));
    }
    // And then it works. (Measured from a settled count, not threads_before: an earlier test's
    // joined thread can still be listed when threads_before is read.)
    const size_t idle = settled_threads();
    steel_batch batch{};
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    CHECK(process_threads() == idle + 7);
    REQUIRE_OK(steel_batch_destroy(batch));
}

TEST_CASE("a snapshot whose worker threads the system refuses fails to load, cleanly") {
    scenes::RowsBuilder builder;
    scenes::StackSpec spec;
    scenes::add_stack_world(builder, spec);
    test::SolveSetup setup;
    setup.threads = 6;
    const steel_batch batch = test::solved_batch(builder, setup, test::options_for(setup));
    const std::vector<unsigned char> snapshot = saved(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    const size_t threads_before = process_threads();

    steel::testing::fail_worker_start = 3;
    steel_batch loaded{};
    const steel_status status =
        steel_batch_load_memory(STEEL_ABI_VERSION, snapshot.data(), snapshot.size(), &loaded);
    steel::testing::fail_worker_start = 0;
    const std::string message = steel_last_error_message();
    INFO(message);
    CHECK(status == STEEL_ERROR_OUT_OF_MEMORY);
    CHECK(loaded.id == 0);
    CHECK(contains(message, "cannot start worker thread 3 of 5"));
    CHECK(threads_settle_at(threads_before));
    REQUIRE_OK(
        steel_batch_load_memory(STEEL_ABI_VERSION, snapshot.data(), snapshot.size(), &loaded));
    REQUIRE_OK(steel_batch_destroy(loaded));
}

TEST_CASE("thread_count = 0 on more hardware threads than the limit resolves to the limit, and "
          "the batch's snapshot loads") {
    steel::testing::hardware_threads = 512; // a 2-socket, 128-core host with SMT
    steel_batch_desc desc;
    steel_batch_desc_default(&desc);
    desc.thread_count = 0;
    steel_batch batch{};
    const steel_status created = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
    steel::testing::hardware_threads = 0;
    REQUIRE_OK(created);
    steel_batch_desc resolved;
    steel_batch_desc_default(&resolved);
    REQUIRE_OK(steel_batch_get_desc(batch, &resolved));
    CHECK(resolved.thread_count == 256);
    const std::vector<unsigned char> snapshot = saved(batch);
    REQUIRE_OK(steel_batch_destroy(batch));
    steel_batch loaded{};
    REQUIRE_OK(
        steel_batch_load_memory(STEEL_ABI_VERSION, snapshot.data(), snapshot.size(), &loaded));
    REQUIRE_OK(steel_batch_get_desc(loaded, &resolved));
    CHECK(resolved.thread_count == 256);
    REQUIRE_OK(steel_batch_destroy(loaded));

    // And on this host, one per hardware thread.
    REQUIRE_OK(steel_batch_create(STEEL_ABI_VERSION, &desc, &batch));
    REQUIRE_OK(steel_batch_get_desc(batch, &resolved));
    CHECK(resolved.thread_count == std::clamp(std::thread::hardware_concurrency(), 1u, 256u));
    REQUIRE_OK(steel_batch_destroy(batch));
}

#ifdef STEEL_TEST_FAILING_NEW

namespace {

// Everything a reader can see of the last solve, the residual history included.
struct Readable {
    test::Solved solved;
    std::vector<std::vector<double>> history;
};

Readable read_readable(steel_batch batch) {
    Readable out{test::read_all(batch), {}};
    for (uint32_t w = 0; w < out.solved.stats.size(); ++w) {
        uint32_t count = 0;
        REQUIRE_OK(steel_batch_read_residual_history(batch, w, nullptr, 0, &count));
        std::vector<double> history(count);
        REQUIRE_OK(steel_batch_read_residual_history(batch, w, history.data(), count, &count));
        out.history.push_back(history);
    }
    return out;
}

bool same(const Readable& a, const Readable& b) {
    return a.solved.impulses == b.solved.impulses && a.solved.velocities == b.solved.velocities &&
           a.solved.stats.size() == b.solved.stats.size() &&
           std::memcmp(a.solved.stats.data(), b.solved.stats.data(),
                       a.solved.stats.size() * sizeof(steel_world_stats)) == 0 &&
           a.history == b.history;
}

// Solves a batch `setup` made (solved once, then given options for a solve with other numbers
// and another history stride) with each of the allocations of that second solve failing in
// turn: a refused solve leaves everything readable as the first solve left it.
template <class Setup> void check_refused_solves_change_nothing(const Setup& setup) {
    const steel_batch counted = setup();
    allocations_made = 0;
    REQUIRE_OK(steel_batch_solve(counted));
    const long allocations = allocations_made;
    REQUIRE_OK(steel_batch_destroy(counted));
    CHECK(allocations >= 1); // the history's room, at least
    for (long allowed = 0; allowed <= allocations; ++allowed) {
        CAPTURE(allowed);
        const steel_batch batch = setup();
        const Readable before = read_readable(batch);
        allocations_before_failure = allowed;
        const steel_status status = steel_batch_solve(batch);
        allocations_before_failure = -1;
        if (allowed == allocations) {
            CHECK(status == STEEL_OK);
        } else {
            CHECK(status == STEEL_ERROR_OUT_OF_MEMORY);
            CHECK(std::string(steel_last_error_message()) ==
                  "steel_batch_solve: out of memory; nothing was changed");
            CHECK(same(read_readable(batch), before));
        }
        REQUIRE_OK(steel_batch_destroy(batch));
    }
}

} // namespace

TEST_CASE("a solve refused for want of memory changes nothing: rows on the pool") {
    std::mt19937_64 rng(1);
    scenes::RowsBuilder builder;
    for (int w = 0; w < 50; ++w)
        scenes::add_random_world(builder, rng, scenes::RandomWorldSpec{});
    for (uint32_t threads : {1u, 2u}) {
        CAPTURE(threads);
        check_refused_solves_change_nothing([&] {
            test::SolveSetup setup;
            setup.threads = threads;
            setup.iterations = 5;
            steel_solve_options options = test::options_for(setup);
            options.record_residual_history = 1;
            const steel_batch batch = test::solved_batch(builder, setup, options);
            options.iterations = 6;
            REQUIRE_OK(steel_batch_set_options(batch, &options));
            return batch;
        });
    }
}

TEST_CASE("a solve refused for want of memory changes nothing: a colored world split over the "
          "pool") {
    // One world, two threads: its colors of at least 256 packs are split over the pool. 2,100
    // boxes on the ground make one color of 2,100 contacts (263 packs in float64).
    SceneBuilder builder;
    builder.begin_world();
    constexpr int32_t boxes = 2100;
    for (int32_t box = 0; box < boxes; ++box)
        builder.add_body(scenes::free_box(1.0 + 0.001 * box, {0.5, 0.5, 0.5}, {1.1 * box, 0, 0.5}));
    for (int32_t box = 0; box < boxes; ++box)
        builder.add_contact(ContactSpec{box, -1, {1.1 * box, 0.2, 0}, {0, 0, 1}, -0.001, 0.5, 0});
    for (int32_t box = 0; box + 1 < boxes; box += 3)
        builder.add_contact(
            ContactSpec{box, box + 1, {1.1 * box + 0.55, 0, 0.5}, {1, 0, 0}, -0.002, 0.4, 0});
    const steel_scene_desc scene = builder.desc();
    check_refused_solves_change_nothing([&] {
        test::SceneMode mode;
        mode.response = STEEL_RESPONSE_PROPAGATION;
        mode.solve_mode = STEEL_SOLVE_COLORED;
        mode.threads = 2;
        mode.iterations = 3;
        const steel_batch batch = test::make_scene_batch(1, mode);
        steel_solve_options options;
        steel_solve_options_default(&options);
        options.iterations = 3;
        options.articulated_contact_response = mode.response;
        options.solve_mode = mode.solve_mode;
        options.record_residual_history = 1;
        REQUIRE_OK(steel_batch_set_options(batch, &options));
        REQUIRE_OK(steel_batch_upload_scene(batch, &scene));
        REQUIRE_OK(steel_batch_solve(batch));
        options.iterations = 4;
        REQUIRE_OK(steel_batch_set_options(batch, &options));
        return batch;
    });
}

TEST_CASE("no memory even for the error message: a status and a static message, no abort") {
    // On a thread of its own, so that its message has only the string's small buffer.
    steel_status fresh_status = STEEL_OK, roomy_status = STEEL_OK;
    std::string fresh_message, roomy_message;
    std::thread([&] {
        steel_batch_desc desc;
        steel_batch_desc_default(&desc);
        steel_batch batch{};
        out_of_memory = true;
        fresh_status = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
        out_of_memory = false;
        fresh_message = steel_last_error_message();
        // A longer message first: the next one then fits in the room it left.
        desc.thread_count = 1000000;
        (void)steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
        desc.thread_count = 1;
        out_of_memory = true;
        roomy_status = steel_batch_create(STEEL_ABI_VERSION, &desc, &batch);
        out_of_memory = false;
        roomy_message = steel_last_error_message();
    }).join();
    CHECK(fresh_status == STEEL_ERROR_OUT_OF_MEMORY);
    CHECK(fresh_message == "out of memory");
    CHECK(roomy_status == STEEL_ERROR_OUT_OF_MEMORY);
    CHECK(roomy_message == "steel_batch_create: out of memory; nothing was changed");
}

#endif
