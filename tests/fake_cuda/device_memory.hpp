// The emulated device's memory (fake_cuda_runtime.cpp): pages of the process that the host
// cannot touch. Each allocation is mapped on its own, closed (PROT_NONE) except while device
// work runs (a kernel, a copy, a memset: between open() and close()), so host code that reads
// or writes device memory faults at once, as it would on a GPU. A guard page follows each
// allocation; under AddressSanitizer the bytes around it in its pages are poisoned too. Freed
// allocations stay closed for a while (a quarantine), so a late use faults instead of landing
// in a newer allocation. Callers hold the runtime's lock.
#pragma once

#include <cstddef>

namespace fake_cuda::memory {

// A fresh allocation of `bytes`, 256-byte aligned as cudaMalloc's, or null when the address
// space has no room. Its first 16 MiB hold 0xff bytes, as stale memory would on a GPU.
void* allocate(size_t bytes);

// Frees what allocate returned (its exact start); false for any other pointer.
bool release(void* pointer);

// Opens every allocation to the calling process for device work, and closes them again; the
// two nest (work that waits for other work runs inside).
void open();
void close();

// Scope of a host function (cudaLaunchHostFunc) run by device work: host code again, so the
// allocations are closed while it runs.
class HostSide {
  public:
    HostSide();
    ~HostSide();
    HostSide(const HostSide&) = delete;
    HostSide& operator=(const HostSide&) = delete;
};

} // namespace fake_cuda::memory
