// The extern "C" boundary: every public function body runs inside call_guarded, which turns
// any C++ exception into a status and the thread's last-error message. Also the struct_size
// rules for versioned input structs.
#pragma once

#include "../impl/error.hpp"

#include <steel/steel.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>

namespace steel {

// The calling thread's message. It never throws: with no memory to copy the message it keeps a
// static one ("out of memory").
void set_last_error(const char* message) noexcept;
void clear_last_error();

// "<where><what><detail>", built on the stack: a handler in call_guarded must not allocate, since
// an exception leaving it would leave a noexcept function (std::terminate). A message past the
// buffer is cut short.
inline void set_last_error(const char* where, const char* what, const char* detail = "") noexcept {
    char message[1024];
    std::snprintf(message, sizeof(message), "%s%s%s", where, what, detail);
    set_last_error(message);
}

template <class Body> steel_status call_guarded(const char* where, Body&& body) noexcept {
    try {
        body();
        clear_last_error();
        return STEEL_OK;
    } catch (const Error& error) {
        set_last_error(error.message.c_str());
        return error.status;
    } catch (const std::bad_alloc&) {
        set_last_error(where, ": out of memory; nothing was changed");
        return STEEL_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception& exception) {
        set_last_error(where, ": internal error: ", exception.what());
        return STEEL_ERROR_INTERNAL;
    } catch (...) {
        set_last_error(where, ": internal error: unknown exception");
        return STEEL_ERROR_INTERNAL;
    }
}

// The largest struct_size accepted. Past it struct_size is garbage (an unset field): reading the
// tail for non-zero bytes, or zeroing it on output, would run off the caller's memory.
constexpr uint32_t kMaxStructSize = 4096;

// Reads a caller's versioned struct: starts from `defaults`, copies struct_size bytes over it.
// A smaller struct than this version's first release is refused; a bigger one (a newer header)
// is accepted only if every byte this library does not know is zero.
template <class T>
T read_versioned(const T* in, const T& defaults, const char* where, const char* name) {
    if (in == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: %s is NULL", where, name));
    const uint32_t size = in->struct_size;
    static_assert(sizeof(T) * 4 <= kMaxStructSize, "room for every struct to grow");
    if (size > kMaxStructSize)
        fail(STEEL_ERROR_STRUCT_VERSION,
             format("%s: %s.struct_size = %u is larger than any Steel struct (at most %u); set it "
                    "to sizeof(%s)",
                    where, name, size, kMaxStructSize, name));
    if (size < sizeof(T))
        fail(STEEL_ERROR_STRUCT_VERSION,
             format(
                 "%s: %s.struct_size = %u is smaller than this library's %zu; set it to sizeof(%s)",
                 where, name, size, sizeof(T), name));
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(in);
    for (uint32_t k = sizeof(T); k < size; ++k)
        if (bytes[k] != 0)
            fail(STEEL_ERROR_STRUCT_VERSION,
                 format(
                     "%s: %s.struct_size = %u is from a newer Steel and byte %u sets a field this "
                     "library (%zu bytes) does not know",
                     where, name, size, k, sizeof(T)));
    T out = defaults;
    std::memcpy(&out, in, sizeof(T));
    out.struct_size = sizeof(T);
    return out;
}

// Writes `value` into a caller's versioned struct of `size` bytes (the caller's sizeof): our
// fields first, zeros after them, struct_size = size. A caller built against an older header
// (smaller than this version's struct) or passing garbage (above kMaxStructSize) is refused
// before a byte is written.
template <class T>
void write_versioned(T* out, uint32_t size, const T& value, const char* where, const char* name) {
    if (out == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: out is NULL", where));
    if (size < sizeof(T))
        fail(STEEL_ERROR_STRUCT_VERSION,
             format("%s: struct_size = %u is smaller than this library's sizeof(%s) = %zu", where,
                    size, name, sizeof(T)));
    if (size > kMaxStructSize)
        fail(STEEL_ERROR_STRUCT_VERSION,
             format("%s: struct_size = %u is larger than any Steel struct (at most %u); pass "
                    "sizeof(%s)",
                    where, size, kMaxStructSize, name));
    std::memset(reinterpret_cast<unsigned char*>(out) + sizeof(T), 0, size - sizeof(T));
    *out = value;
    out->struct_size = size;
}

} // namespace steel
