// Arithmetic shared by the CPU and CUDA backends is written once, in headers, as functions
// marked STEEL_HOST_DEVICE: the CPU tests then exercise the same code the GPU runs.
#pragma once

#if defined(__CUDACC__)
#define STEEL_HOST_DEVICE __host__ __device__
#else
#define STEEL_HOST_DEVICE
#endif

// Inlined into every host caller: for a small function on a latency chain whose out-of-line call
// would put its arguments and results through memory (the row update between a row's rate and
// its apply). The device build leaves the choice to nvcc, whose register budget it is.
#if defined(__CUDACC__) || !defined(__GNUC__)
#define STEEL_HOST_FORCE_INLINE
#else
#define STEEL_HOST_FORCE_INLINE __attribute__((always_inline))
#endif
