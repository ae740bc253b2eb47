// Arithmetic shared by the CPU and CUDA backends is written once, in headers, as functions
// marked STEEL_HOST_DEVICE: the CPU tests then exercise the same code the GPU runs.
#pragma once

#if defined(__CUDACC__)
#define STEEL_HOST_DEVICE __host__ __device__
#else
#define STEEL_HOST_DEVICE
#endif
