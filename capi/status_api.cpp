// Status strings, the thread-local last-error message, and version queries.
#include "boundary.hpp"
#include "steel_version.h"

#include "../impl/cuda/device_backend.hpp"

#include <string>

namespace steel {

namespace {
thread_local std::string last_error;
}

void set_last_error(const char* message) noexcept {
    try {
        last_error = message;
    } catch (...) {
        // No memory for the message itself. A string of up to 15 characters fits in the string's
        // own small buffer (libstdc++, libc++, MSVC), so this one needs none.
        last_error = "out of memory";
    }
}

void clear_last_error() {
    last_error.clear();
}

} // namespace steel

extern "C" {

const char* steel_status_string(steel_status status) {
    switch (status) {
    case STEEL_OK:
        return "ok";
    case STEEL_ERROR_INVALID_ARGUMENT:
        return "invalid argument";
    case STEEL_ERROR_INVALID_HANDLE:
        return "invalid handle";
    case STEEL_ERROR_ABI_MISMATCH:
        return "ABI version mismatch";
    case STEEL_ERROR_BUFFER_TOO_SMALL:
        return "buffer too small";
    case STEEL_ERROR_UNSUPPORTED:
        return "unsupported";
    case STEEL_ERROR_OUT_OF_MEMORY:
        return "out of memory";
    case STEEL_ERROR_STRUCT_VERSION:
        return "struct version mismatch";
    case STEEL_ERROR_NO_DATA:
        return "no data";
    case STEEL_ERROR_INTERNAL:
        return "internal error";
    case STEEL_ERROR_NO_DEVICE:
        return "no CUDA device";
    default:
        return "unknown status";
    }
}

const char* steel_last_error_message(void) {
    return steel::last_error.c_str();
}

const char* steel_version(void) {
    return STEEL_VERSION_STRING;
}

uint32_t steel_abi_version(void) {
    return STEEL_ABI_VERSION;
}

uint32_t steel_build_features(void) {
    return STEEL_FEATURE_FLOAT32 | STEEL_FEATURE_FLOAT64 |
           (steel::cuda::compiled_in() ? STEEL_FEATURE_CUDA : 0u);
}

} // extern "C"
