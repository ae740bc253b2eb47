// Generation-tagged 64-bit handles for batches. An id is (generation << 32) | (slot + 1), so
// zero is the null handle, a destroyed handle's generation no longer matches its slot, and a
// made-up number almost never names a live slot. Checked in every build, not by asserts.
#pragma once

#include "batch.hpp"

#include <cstdint>
#include <memory>

namespace steel {

// Takes ownership; returns the new id. Thread-safe.
uint64_t register_batch(std::unique_ptr<Batch> batch);

// The live batch of an id; throws Error(INVALID_HANDLE) naming `where` otherwise. Thread-safe.
Batch& lookup_batch(uint64_t id, const char* where);

// Removes and returns the batch of a live id (throws like lookup_batch). Thread-safe.
std::unique_ptr<Batch> unregister_batch(uint64_t id, const char* where);

} // namespace steel
