// The CUDA backend's host code, impl/cuda/device_batch.cu, compiled by g++ against the emulated
// runtime (cuda_runtime.h here): its kernels run in the SIMT emulation, so the CPU tests run the
// whole backend, its waits, copies and captures included (tests/CMakeLists.txt:
// steel_emulated_cuda_tests).
#include "../simt/host_simt.hpp" // first: CUDA's keywords and warp built-ins for the kernels

#include "../../impl/cuda/device_batch.cu"
