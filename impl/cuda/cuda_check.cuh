// CUDA runtime errors become steel::Error with the runtime's own name and words, so the caller's
// steel_last_error_message() says what CUDA said. Nothing CUDA-shaped leaves impl/cuda/.
#pragma once

#include "../error.hpp"

#include <cuda_runtime.h>

namespace steel::cuda {

inline std::string cuda_words(cudaError_t error) {
    return format("%s: %s", cudaGetErrorName(error), cudaGetErrorString(error));
}

// Throws for any error: OUT_OF_MEMORY for an allocation failure, INTERNAL otherwise (a kernel
// fault or a launch that should not fail is a bug in Steel, or a broken device).
inline void check_cuda(cudaError_t error, const char* what) {
    if (error == cudaSuccess) return;
    (void)cudaGetLastError(); // clear a non-sticky error so the next call starts clean
    fail(error == cudaErrorMemoryAllocation ? STEEL_ERROR_OUT_OF_MEMORY : STEEL_ERROR_INTERNAL,
         format("%s: CUDA error %s", what, cuda_words(error).c_str()));
}

} // namespace steel::cuda
