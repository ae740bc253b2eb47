#include "capture.hpp"

#include "snapshot.hpp"

#include "../batch.hpp"
#include "../error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <unistd.h>

namespace steel {
namespace snapshot {

namespace {

// One lock for every capture append of the process: two batches capturing to the same file
// from two threads must not interleave their records.
std::mutex& capture_mutex() {
    static std::mutex* mutex = new std::mutex(); // never destroyed: batches may outlive statics
    return *mutex;
}

int open_for_append(const char* path) {
    return ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

// Appends bytes to path. Returns 0, or the errno of the failure.
int append(const char* path, const std::vector<uint8_t>& bytes) {
    const int fd = open_for_append(path);
    if (fd < 0) return errno;
    uint64_t done = 0;
    int error = 0;
    while (done < bytes.size()) {
        const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
            error = put < 0 ? errno : EIO;
            break;
        }
        done += uint64_t(put);
    }
    if (::close(fd) != 0 && error == 0) error = errno;
    return error;
}

} // namespace

void set_capture(Batch& batch, const char* path, const char* where) {
    if (path == nullptr || path[0] == '\0') {
        batch.capture_path.clear();
        return;
    }
    std::string chosen = path; // allocate before anything changes
    const int fd = open_for_append(path);
    if (fd < 0)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: cannot open capture file '%s' for appending: %s", where, path, std::strerror(errno)));
    ::close(fd);
    batch.capture_path = std::move(chosen);
}

void capture_from_environment(Batch& batch) noexcept {
    const char* path = std::getenv(kCaptureEnvironmentVariable);
    if (path == nullptr || path[0] == '\0') return;
    try {
        set_capture(batch, path, kCaptureEnvironmentVariable);
    } catch (const Error& error) {
        std::fprintf(stderr, "steel: %s; this batch runs without capture\n", error.message.c_str());
    } catch (...) {
        std::fprintf(stderr, "steel: %s=%s: out of memory; this batch runs without capture\n",
                     kCaptureEnvironmentVariable, path);
    }
}

void capture_solve(Batch& batch) noexcept {
    if (batch.capture_path.empty()) return;
    std::string reason;
    try {
        check_snapshot_fits(batch, "steel_batch_solve");
        const std::vector<uint8_t> record = encode(export_batch(batch), /*size_prefixed=*/true);
        std::lock_guard<std::mutex> lock(capture_mutex());
        const int error = append(batch.capture_path.c_str(), record);
        if (error != 0) reason = std::strerror(error);
    } catch (const Error& error) {
        reason = error.message;
    } catch (...) {
        reason = std::strerror(ENOMEM);
    }
    if (reason.empty()) return;
    std::fprintf(stderr, "steel: capture to '%s' failed: %s; capture is now off for this batch\n",
                 batch.capture_path.c_str(), reason.c_str());
    batch.capture_path.clear();
}

} // namespace snapshot
} // namespace steel
