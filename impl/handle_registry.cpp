#include "handle_registry.hpp"

#include "error.hpp"

#include <cinttypes>
#include <mutex>
#include <vector>

namespace steel {

namespace {

struct Slot {
    uint32_t generation = 1;
    std::unique_ptr<Batch> batch;
};

struct Registry {
    std::mutex mutex;
    std::vector<Slot> slots;
    std::vector<uint32_t> free_slots;
};

Registry& registry() {
    static Registry* instance = new Registry(); // never destroyed: handles may outlive statics
    return *instance;
}

Slot& live_slot(Registry& reg, uint64_t id, const char* where) {
    if (id == 0) fail(STEEL_ERROR_INVALID_HANDLE, format("%s: the batch handle is null", where));
    const uint64_t slot = (id & 0xffffffffu) - 1;
    const uint32_t generation = uint32_t(id >> 32);
    if (slot >= reg.slots.size() || reg.slots[slot].generation != generation ||
        !reg.slots[slot].batch)
        fail(STEEL_ERROR_INVALID_HANDLE,
             format("%s: batch handle 0x%016" PRIx64
                    " is not a live batch (destroyed, or never created)",
                    where, id));
    return reg.slots[slot];
}

} // namespace

uint64_t register_batch(std::unique_ptr<Batch> batch) {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    uint32_t slot;
    if (!reg.free_slots.empty()) {
        slot = reg.free_slots.back();
        reg.free_slots.pop_back();
    } else {
        reg.slots.emplace_back();
        slot = uint32_t(reg.slots.size() - 1);
    }
    reg.slots[slot].batch = std::move(batch);
    return (uint64_t(reg.slots[slot].generation) << 32) | (uint64_t(slot) + 1);
}

Batch& lookup_batch(uint64_t id, const char* where) {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    return *live_slot(reg, id, where).batch;
}

std::unique_ptr<Batch> unregister_batch(uint64_t id, const char* where) {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    Slot& slot = live_slot(reg, id, where);
    std::unique_ptr<Batch> batch = std::move(slot.batch);
    if (++slot.generation == 0) slot.generation = 1; // keep ids nonzero
    reg.free_slots.push_back(uint32_t(&slot - reg.slots.data()));
    return batch;
}

} // namespace steel
