// Between batches and snapshots: export a batch's state (widened to double), put decoded results
// back into a batch, cut one world out of a snapshot; and whole-file reads and writes.
#include "snapshot.hpp"

#include "../batch.hpp"
#include "../error.hpp"

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace steel {
namespace snapshot {

namespace {

template <class Real> std::vector<double> widen(const std::vector<Real>& values) {
    return std::vector<double>(values.begin(), values.end());
}

template <class Real> Rows export_rows(const RowSet<Real>& set) {
    Rows rows;
    for (uint32_t w = 0; w < set.world_count; ++w) {
        rows.world_dof_counts.push_back(set.dof_count(w));
        rows.world_row_counts.push_back(set.row_count(w));
    }
    rows.unconstrained_velocity = widen(set.unconstrained_velocity);
    rows.block_offset = set.block_offset;
    rows.block_length = set.block_length;
    rows.jacobian = widen(set.jacobian);
    rows.response = widen(set.response);
    rows.bias = widen(set.bias);
    rows.kind = set.kind;
    rows.lower = widen(set.lower);
    rows.upper = widen(set.upper);
    rows.normal_row = set.normal_row;
    rows.friction = widen(set.friction);
    rows.regularization = widen(set.regularization);
    rows.initial_impulse = widen(set.initial_impulse);
    return rows;
}

template <class T>
std::vector<T> slice(const std::vector<T>& values, uint64_t begin, uint64_t count) {
    if (values.empty()) return {}; // an absent optional array stays absent
    return std::vector<T>(values.begin() + int64_t(begin), values.begin() + int64_t(begin + count));
}

[[noreturn]] void system_failure(const char* where, const char* what, const char* path) {
    fail(STEEL_ERROR_INVALID_ARGUMENT,
         format("%s: cannot %s '%s': %s", where, what, path, std::strerror(errno)));
}

void write_all(int fd, const uint8_t* bytes, uint64_t size, const char* where, const char* path) {
    uint64_t done = 0;
    while (done < size) {
        const ssize_t put = ::write(fd, bytes + done, size - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) system_failure(where, "write", path);
        done += uint64_t(put);
    }
}

template <class T> bool same_bits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Every field a snapshot holds; numbers bit for bit (a cfm of -0.0 is not the 0.0 a solve used).
bool same_options(const steel_solve_options& a, const steel_solve_options& b) {
    static_assert(sizeof(steel_solve_options) == 64,
                  "steel_solve_options changed: compare the new field here");
    return a.iterations == b.iterations && same_bits(a.tolerance, b.tolerance) &&
           same_bits(a.cfm, b.cfm) && a.path == b.path && a.warm_start == b.warm_start &&
           same_bits(a.contact_regularization, b.contact_regularization) &&
           a.nesterov_momentum == b.nesterov_momentum &&
           a.enable_bilateral_preelimination == b.enable_bilateral_preelimination &&
           a.record_residual_history == b.record_residual_history && a.solve_mode == b.solve_mode &&
           a.articulated_contact_response == b.articulated_contact_response;
}

// Whether the batch's readable results came from its current options and rows. A solve records
// its options (Batch::results_options); steel_batch_set_options may change them afterwards, and
// a device values update the rows, while the results stay readable.
bool results_match_inputs(const Batch& batch) {
    return !batch.rows_updated_since_solve && same_options(batch.results_options, batch.options);
}

// The scene a snapshot of the batch holds: the last scene upload's, unless the rows came from
// elsewhere since (a rows upload drops batch.scene; a device values update keeps it but edits
// the rows, which then no longer follow from it).
const scene::SceneInputs* scene_of(const Batch& batch) {
    if (!batch.scene || batch.rows_edited_since_upload) return nullptr;
    return &batch.scene_inputs;
}

} // namespace

uint64_t snapshot_size_bound(const Batch& batch) {
    // Each array as FlatBuffers lays it out: a 4-byte length, at most 8 bytes of padding, then
    // its elements, numbers widened to double; optional arrays counted as present, a world's
    // stats as 64 bytes (its struct has 32), and 4 KiB for the tables, strings and header.
    uint64_t bytes = 4096;
    const auto array = [&](uint64_t count, uint64_t element) { bytes += 12 + count * element; };
    std::visit(
        [&](const auto& state) {
            if (!state.has_rows) return;
            const uint64_t worlds = batch.desc.world_count, m = state.rows.total_rows(),
                           n = state.rows.total_dofs(), values = state.rows.jacobian.size();
            array(worlds, 4); // world_dof_counts, world_row_counts
            array(worlds, 4);
            array(n, 8);     // unconstrained_velocity
            array(2 * m, 4); // block_offset, block_length
            array(2 * m, 4);
            array(values, 8); // jacobian, response
            array(values, 8);
            for (int k = 0; k < 6; ++k) // bias, lower, upper, friction, regularization, initial
                array(m, 8);
            array(m, 4); // kind, normal_row
            array(m, 4);
            if (const scene::SceneInputs* scene = scene_of(batch))
                bytes += 512 + scene->snapshot_bytes(); // + its table
            if (!state.solved) return;
            array(m, 8); // impulses, velocities
            array(n, 8);
            array(worlds, 64);
            array(worlds * state.history_stride, 8);
        },
        batch.state);
    return bytes;
}

void check_snapshot_fits(const Batch& batch, const char* where, uint64_t limit) {
    const uint64_t bound = snapshot_size_bound(batch);
    if (bound > limit)
        fail(
            STEEL_ERROR_UNSUPPORTED,
            format("%s: the batch's snapshot would take up to %" PRIu64
                   " bytes, more than the %" PRIu64
                   " a snapshot can hold (FlatBuffers' 2 GiB limit); nothing was written. Save the "
                   "worlds in smaller batches, or solve without the residual history",
                   where, bound, limit));
}

Snapshot export_batch(const Batch& batch) {
    Snapshot snapshot;
    snapshot.producer_version = steel_version();
    snapshot.producer_abi_version = steel_abi_version();
    snapshot.producer_features = steel_build_features();
    snapshot.desc = batch.desc;
    snapshot.options = batch.options;
    std::visit(
        [&](const auto& state) {
            snapshot.has_rows = state.has_rows;
            if (state.has_rows) snapshot.rows = export_rows(state.rows);
            if (const scene::SceneInputs* scene = scene_of(batch); scene && state.has_rows) {
                snapshot.has_scene = true;
                snapshot.scene = *scene;
            }
            // Results only next to the options and rows that made them: a replay must not
            // compare a solve under other inputs with them (docs/snapshots.md).
            snapshot.solved = state.has_rows && state.solved && results_match_inputs(batch);
            if (!snapshot.solved) return;
            Results& results = snapshot.results;
            results.impulses = widen(state.results.impulse);
            results.velocities = widen(state.results.velocity);
            results.stats = state.stats;
            results.history_stride = state.history_stride;
            if (state.history_stride) results.residual_history = state.history;
        },
        batch.state);
    return snapshot;
}

void restore_results(Batch& batch, const Results& results) {
    std::visit(
        [&](auto& state) {
            using Real = typename std::decay_t<decltype(state.rows.jy)>::value_type;
            // decode() checked every value finite and, for float32, in range: these narrow exactly
            // back to what the producer held.
            state.results.impulse.assign(results.impulses.begin(), results.impulses.end());
            state.results.velocity.assign(results.velocities.begin(), results.velocities.end());
            static_assert(sizeof(Real) <= sizeof(double));
            state.stats = results.stats;
            state.world_path.clear();
            for (const steel_world_stats& stats : results.stats)
                state.world_path.push_back(stats.path);
            state.history_stride = results.history_stride;
            state.history = results.residual_history;
            state.solved = true;
        },
        batch.state);
    batch.results_options = batch.options; // the loader set the snapshot's options first
    batch.rows_updated_since_solve = false;
}

Snapshot extract_world(const Snapshot& snapshot, uint32_t world) {
    if (world >= snapshot.desc.world_count)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("extract_world: world %u is outside the snapshot's %u worlds", world,
                    snapshot.desc.world_count));
    Snapshot out;
    out.format_version = snapshot.format_version;
    out.producer_version = snapshot.producer_version;
    out.producer_abi_version = snapshot.producer_abi_version;
    out.producer_features = snapshot.producer_features;
    out.desc = snapshot.desc;
    out.desc.world_count = 1;
    out.options = snapshot.options;
    out.has_rows = snapshot.has_rows;
    if (!snapshot.has_rows) return out;

    const Rows& in = snapshot.rows;
    uint64_t dof0 = 0, row0 = 0, value0 = 0;
    for (uint32_t w = 0; w < world; ++w) {
        dof0 += in.world_dof_counts[w];
        row0 += in.world_row_counts[w];
    }
    for (uint64_t k = 0; k < 2 * row0; ++k)
        value0 += in.block_length[k];
    const uint32_t n = in.world_dof_counts[world], m = in.world_row_counts[world];
    uint64_t values = 0;
    for (uint64_t k = 2 * row0; k < 2 * (row0 + m); ++k)
        values += in.block_length[k];
    if (value0 + values > in.jacobian.size()) // decode() refuses such a snapshot; never read past J
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("extract_world: world %u's blocks end at J value %" PRIu64
                    ", past the %zu J values",
                    world, value0 + values, in.jacobian.size()));

    Rows& rows = out.rows;
    rows.world_dof_counts = {n};
    rows.world_row_counts = {m};
    rows.unconstrained_velocity = slice(in.unconstrained_velocity, dof0, n);
    rows.block_offset = slice(in.block_offset, 2 * row0, 2 * uint64_t(m)); // world-local already
    rows.block_length = slice(in.block_length, 2 * row0, 2 * uint64_t(m));
    rows.jacobian = slice(in.jacobian, value0, values);
    rows.response = slice(in.response, value0, values);
    rows.bias = slice(in.bias, row0, m);
    rows.kind = slice(in.kind, row0, m);
    rows.lower = slice(in.lower, row0, m);
    rows.upper = slice(in.upper, row0, m);
    rows.normal_row = slice(in.normal_row, row0, m); // world-local already
    rows.friction = slice(in.friction, row0, m);
    rows.regularization = slice(in.regularization, row0, m);
    rows.initial_impulse = slice(in.initial_impulse, row0, m);

    out.has_scene = snapshot.has_scene;
    if (snapshot.has_scene) out.scene = snapshot.scene.world(world, "extract_world");

    out.solved = snapshot.solved;
    if (!snapshot.solved) return out;
    const Results& results = snapshot.results;
    out.results.impulses = slice(results.impulses, row0, m);
    out.results.velocities = slice(results.velocities, dof0, n);
    out.results.stats = {results.stats[world]};
    out.results.history_stride = results.history_stride;
    out.results.residual_history = slice(
        results.residual_history, uint64_t(world) * results.history_stride, results.history_stride);
    return out;
}

std::vector<uint8_t> read_file(const char* path, uint64_t max_bytes, const char* where) {
    if (path == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: path is NULL", where));
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before the check below could
    // refuse it. A regular file ignores the flag.
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) system_failure(where, "open", path);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat info;
    if (::fstat(fd, &info) != 0) system_failure(where, "stat", path);
    if (!S_ISREG(info.st_mode))
        fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: '%s' is not a regular file (a FIFO, device, "
                                                  "socket or directory); a snapshot is read "
                                                  "from a file",
                                                  where, path));
    const uint64_t size = uint64_t(info.st_size);
    if (size > max_bytes)
        fail(STEEL_ERROR_INVALID_ARGUMENT,
             format("%s: '%s' has %" PRIu64 " bytes, more than the %" PRIu64 " a snapshot may have",
                    where, path, size, max_bytes));
    std::vector<uint8_t> bytes(size);
    uint64_t done = 0;
    while (done < size) {
        const ssize_t got = ::read(fd, bytes.data() + done, size - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) system_failure(where, "read", path);
        if (got == 0)
            fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: '%s' ended after %" PRIu64 " of %" PRIu64
                                                      " bytes (changed while read?)",
                                                      where, path, done, size));
        done += uint64_t(got);
    }
    return bytes;
}

void write_file_atomically(const char* path, const std::vector<uint8_t>& bytes, const char* where) {
    if (path == nullptr) fail(STEEL_ERROR_INVALID_ARGUMENT, format("%s: path is NULL", where));
    // The new file gets the mode of the file it replaces or, for a new file, 0666 less the umask,
    // as any file a program creates. (Not mkstemp, whose 0600 ignores the umask.)
    struct stat replaced;
    const bool keep_mode = ::stat(path, &replaced) == 0 && S_ISREG(replaced.st_mode);
    std::string temporary;
    int fd = -1;
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
        temporary = format("%s.tmp-%ld-%" PRIu64, path, long(::getpid()), counter.fetch_add(1));
        fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break; // EEXIST: a stale temporary file; take the next name
    }
    if (fd < 0) system_failure(where, "create a temporary file next to", path);
    try {
        write_all(fd, bytes.data(), bytes.size(), where, temporary.c_str());
        if (keep_mode && ::fchmod(fd, replaced.st_mode & 0777) != 0)
            system_failure(where, "set the permissions of", temporary.c_str());
    } catch (...) {
        ::close(fd);
        ::unlink(temporary.c_str());
        throw;
    }
    if (::close(fd) != 0 || ::rename(temporary.c_str(), path) != 0) {
        const int saved = errno;
        ::unlink(temporary.c_str());
        errno = saved;
        system_failure(where, "write", path);
    }
}

} // namespace snapshot
} // namespace steel
