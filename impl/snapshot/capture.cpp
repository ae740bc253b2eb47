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
#include <string>
#include <sys/stat.h>
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

constexpr const char* kNotRegular =
    "it is not a regular file (a FIFO, device, socket or directory)";

// Opens path for appending, creating it (0666 less the umask) if it is missing. Only a regular
// file will do: O_NONBLOCK keeps open(2) from waiting for a FIFO's reader (without one it fails
// with ENXIO), and fstat refuses whatever opened. A regular file ignores O_NONBLOCK. Returns the
// descriptor, or -1 with the reason in `reason`.
int open_for_append(const char* path, std::string& reason) {
    const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666);
    struct stat info;
    if (fd < 0) {
        const int error = errno;
        const bool special = error == ENXIO || (::stat(path, &info) == 0 && !S_ISREG(info.st_mode));
        reason = special ? kNotRegular : std::strerror(error);
        return -1;
    }
    if (::fstat(fd, &info) != 0)
        reason = std::strerror(errno);
    else if (!S_ISREG(info.st_mode))
        reason = kNotRegular;
    if (!reason.empty()) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Appends one whole record to path, or nothing: a write that fails part way (disk full, file
// too large) is cut off again, so the stream never holds a torn record that would swallow the
// records after it. The caller holds capture_mutex(), so no append of this process lands
// between the size taken here and the truncation. Returns "", or the reason of the failure.
std::string append(const char* path, const std::vector<uint8_t>& bytes) {
    std::string reason;
    const int fd = open_for_append(path, reason);
    if (fd < 0) return reason;
    struct stat info;
    if (::fstat(fd, &info) != 0) {
        reason = std::strerror(errno);
        ::close(fd);
        return reason;
    }
    const off_t start = info.st_size; // O_APPEND: the record starts at the end
    uint64_t done = 0;
    while (done < bytes.size()) {
        const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
            reason = std::strerror(put < 0 ? errno : EIO);
            break;
        }
        done += uint64_t(put);
    }
    if (!reason.empty() && done > 0 && ::ftruncate(fd, start) != 0)
        reason += format(
            "; removing the %llu bytes of the partial record also failed (%s), so the capture "
            "ends in a torn record",
            (unsigned long long)done, std::strerror(errno));
    if (::close(fd) != 0 && reason.empty()) reason = std::strerror(errno);
    return reason;
}

} // namespace

void set_capture(Batch& batch, const char* path, const char* where) {
    if (path == nullptr || path[0] == '\0') {
        batch.capture_path.clear();
        return;
    }
    std::string chosen = path; // allocate before anything changes
    std::string reason;
    const int fd = open_for_append(path, reason);
    if (fd < 0)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: cannot open capture file '%s' for appending: %s", where, path,
                    reason.c_str()));
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
        reason = append(batch.capture_path.c_str(), record);
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
