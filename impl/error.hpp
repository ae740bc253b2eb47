// Errors inside the library: every failure is a steel::Error thrown with its status and a
// message naming what was wrong and where. capi/ catches it at the boundary and turns it into
// a status plus the thread's last-error message; nothing else ever leaves the library.
#pragma once

#include <steel/steel.h>

#include <string>

namespace steel {

struct Error {
    steel_status status;
    std::string message;
};

// printf-style formatting into a std::string (messages only, never hot paths).
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

[[noreturn]] void fail(steel_status status, std::string message);

} // namespace steel
