// A refused upload names every world to fix, not only the first: a batch of thousands of
// environments with a few broken ones (a world that diverged and sent NaN) learns all of them
// from one refusal. Both uploads (rows_upload.cpp, scene/scene_rows.cpp) stop at the first bad
// world as before; only then, on the failure path, they look at the other worlds with these.
#pragma once

#include "error.hpp"
#include "thread_pool.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace steel {

// The worlds of [first, end) whose check_world(w) throws an INVALID_ARGUMENT Error, in world
// order, whatever the thread count: checked in runs on the pool when there is one. check_world
// looks at world w alone; any other error propagates.
template <class CheckWorld>
std::vector<uint32_t> find_refused_worlds(ThreadPool* pool, uint32_t first, uint32_t end,
                                          const CheckWorld& check_world) {
    const uint32_t count = end > first ? end - first : 0;
    std::vector<std::vector<uint32_t>> found(pool ? std::max(pool->run_count(count), 1u) : 1u);
    const auto check = [&](uint32_t run, uint32_t begin, uint32_t stop) {
        for (uint32_t w = first + begin; w < first + stop; ++w) {
            try {
                check_world(w);
            } catch (const Error& error) {
                if (error.status != STEEL_ERROR_INVALID_ARGUMENT) throw;
                found[run].push_back(w);
            }
        }
    };
    if (pool && found.size() > 1) {
        pool->for_each_run(count, check);
    } else {
        check(0, 0, count);
    }
    std::vector<uint32_t> worlds;
    for (const std::vector<uint32_t>& some : found)
        worlds.insert(worlds.end(), some.begin(), some.end());
    return worlds;
}

// What a refused upload's message adds when several worlds are refused: "; 3 of the 4096
// worlds are refused: 2, 517, 4000", at most kListed named ("... and 12 more"). Empty for one
// world or none: the first world's reason, already in the message, says it all.
inline std::string refused_worlds_text(const std::vector<uint32_t>& worlds, uint32_t world_count) {
    constexpr size_t kListed = 16;
    if (worlds.size() < 2) return {};
    std::string list;
    for (size_t k = 0; k < worlds.size() && k < kListed; ++k)
        list += format("%s%u", k ? ", " : "", worlds[k]);
    if (worlds.size() > kListed) list += format(" and %zu more", worlds.size() - kListed);
    return format("; %zu of the %u worlds are refused: %s", worlds.size(), world_count,
                  list.c_str());
}

} // namespace steel
