// Capture for bug reports (docs/snapshots.md): a batch with a capture path appends a snapshot of
// itself (inputs, options and outputs) to that file after every solve, as one size-prefixed
// record of a stream. steel-replay replays such a stream solve by solve.
//
// Capture is turned on per batch by steel_batch_set_capture, or for every batch a program
// creates with steel_batch_create by the environment variable STEEL_CAPTURE=path, read when the
// batch is created, so a user can record without recompiling the host program.
#pragma once

namespace steel {

struct Batch;

namespace snapshot {

// The environment variable read by capture_from_environment.
constexpr const char* kCaptureEnvironmentVariable = "STEEL_CAPTURE";

// Sets (path) or clears (NULL or "") the batch's capture file. A path is checked by opening it
// for appending (creating it if needed) right away; throws steel::Error (INVALID_ARGUMENT, the
// system's reason in the message, prefixed by `where`) if that fails, and then changes nothing.
void set_capture(Batch& batch, const char* path, const char* where);

// For a batch steel_batch_create just made: captures to $STEEL_CAPTURE when it is set and not
// empty. Never fails and never throws: a path that cannot be opened is reported once on stderr
// and the batch runs without capture (the variable must never break the host program).
void capture_from_environment(Batch& batch) noexcept;

// After a successful solve: appends the batch's snapshot to its capture file, if it has one.
// Appends from every batch of the process are serialized under one lock and go through
// O_APPEND, so records never interleave within a process. Never throws: a failure (disk full, file
// removed) is reported on stderr and turns the batch's capture off; the solve stays valid.
void capture_solve(Batch& batch) noexcept;

} // namespace snapshot
} // namespace steel
