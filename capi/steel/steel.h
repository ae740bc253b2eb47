/*
 * steel.h: the C ABI of Steel, a constraint solver for rigid bodies and articulations.
 *
 * What Steel computes and how to use it are in docs/guide.md (scene mode: docs/scene-mode.md).
 * In short: create a batch of independent worlds, upload their constraint rows, set options,
 * solve, read back impulses, velocities and per-world statistics.
 *
 * Rules of this interface (they hold for every function below):
 *  - Every fallible function returns a steel_status: 0 (STEEL_OK) on success, a negative
 *    value on failure. steel_last_error_message() then gives a message naming what was wrong
 *    and where (world, row, field). A failed call changes nothing (the one exception:
 *    steel_batch_update_values_device, below).
 *  - Handles are 64-bit ids checked on every call: a null, destroyed or made-up handle gives
 *    STEEL_ERROR_INVALID_HANDLE, never undefined behaviour. Destroying a null handle is a no-op.
 *  - Input arrays are copied during the call; the caller keeps ownership of everything it
 *    passes. Outputs go to caller arrays with an explicit capacity: too small gives
 *    STEEL_ERROR_BUFFER_TOO_SMALL and writes nothing; *out_count (when given) tells the size.
 *  - Structs that may grow start with struct_size; fill it with sizeof(struct) (the *_default
 *    functions do: they are inline, so the size is your header's, never the library's). The
 *    library reads struct_size bytes and defaults the rest; a struct from a newer header is
 *    accepted only if its unknown tail is all zero. A struct_size above 4096
 *    (no Steel struct comes near it: an unset field, most likely) is refused unread.
 *  - Threads: a batch is used by one thread at a time; different batches may be used from
 *    different threads concurrently. Functions that take no batch are thread-safe. The
 *    library's own worker threads (thread_count) are internal and never call back.
 *  - Only fixed-width types cross this boundary; enums are passed as int32_t with explicit,
 *    never reused values.
 */
#ifndef STEEL_STEEL_H
#define STEEL_STEEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#if defined(STEEL_BUILDING_LIBRARY)
#define STEEL_API __declspec(dllexport)
#else
#define STEEL_API __declspec(dllimport)
#endif
#else
#define STEEL_API __attribute__((visibility("default")))
#endif

/* The ABI version of this header. Pass it to steel_batch_create: a library built with another
 * ABI version answers STEEL_ERROR_ABI_MISMATCH instead of misreading your structs. */
#define STEEL_ABI_VERSION 1u

/* ---------------------------------------------------------------------------------------- */
/* Status codes                                                                             */

typedef int32_t steel_status;

#define STEEL_OK 0
#define STEEL_ERROR_INVALID_ARGUMENT (-1) /* a value, size or index is out of its range */
#define STEEL_ERROR_INVALID_HANDLE (-2)   /* null, destroyed or unknown batch handle */
#define STEEL_ERROR_ABI_MISMATCH (-3)     /* header and library ABI versions differ */
#define STEEL_ERROR_BUFFER_TOO_SMALL (-4) /* an output capacity is too small; nothing written */
#define STEEL_ERROR_UNSUPPORTED (-5)      /* backend or feature not available in this build */
#define STEEL_ERROR_OUT_OF_MEMORY (-6)    /* an allocation failed; nothing changed */
#define STEEL_ERROR_STRUCT_VERSION (-7)   /* struct_size too small, or unknown nonzero fields */
#define STEEL_ERROR_NO_DATA (-8)          /* nothing uploaded or solved yet to read */
#define STEEL_ERROR_INTERNAL (-9)         /* a bug, or a CUDA context in an error state */
#define STEEL_ERROR_NO_DEVICE (-10)       /* CUDA backend built, but no usable device or driver */

/* Static, never NULL text for a status ("invalid argument", ...). Thread-safe. */
STEEL_API const char* steel_status_string(steel_status status);

/* The detailed message of the calling thread's last failed call, or "" if the last call that
 * returns a steel_status succeeded (steel_status_string, steel_version, steel_abi_version and
 * steel_build_features leave it as it was). Never NULL; valid until the calling thread's next
 * Steel call. Thread-safe. */
STEEL_API const char* steel_last_error_message(void);

/* ---------------------------------------------------------------------------------------- */
/* Version and build features                                                               */

/* "MAJOR.MINOR.PATCH" of the library. Static string. */
STEEL_API const char* steel_version(void);
/* STEEL_ABI_VERSION of the library as built. Compare with the header's at run time. */
STEEL_API uint32_t steel_abi_version(void);

#define STEEL_FEATURE_FLOAT32 (1u << 0)
#define STEEL_FEATURE_FLOAT64 (1u << 1)
#define STEEL_FEATURE_CUDA (1u << 2) /* CUDA backend compiled in (a device may still be absent) */

/* Bit set of STEEL_FEATURE_* this library was built with. */
STEEL_API uint32_t steel_build_features(void);

/* ---------------------------------------------------------------------------------------- */
/* Batches                                                                                  */

/* A batch of independent worlds. Zero is the null handle. */
typedef struct steel_batch {
    uint64_t id;
} steel_batch;

#define STEEL_BACKEND_CPU 0
#define STEEL_BACKEND_CUDA 1

#define STEEL_PRECISION_FLOAT32 1
#define STEEL_PRECISION_FLOAT64 2

typedef struct steel_batch_desc {
    uint32_t struct_size;  /* sizeof(steel_batch_desc) */
    int32_t backend;       /* STEEL_BACKEND_*; default CPU */
    int32_t precision;     /* STEEL_PRECISION_*; default FLOAT64 */
    uint32_t world_count;  /* number of worlds, >= 1; default 1 */
    uint32_t thread_count; /* threads for solves and uploads, the caller's included, at most
                            * 256; 0 = one per hardware thread, at most 256; default 1 */
    uint32_t reserved0;    /* must be 0 */
} steel_batch_desc;

/* Fills the first struct_size bytes of *out: the defaults above, zeros past the fields this
 * library knows, and out->struct_size = struct_size. Pass your sizeof(steel_batch_desc).
 * Returns OK, INVALID_ARGUMENT (out is NULL), STRUCT_VERSION (struct_size smaller than this
 * struct in ABI version 1, or above 4096); on failure nothing is written. */
STEEL_API steel_status steel_batch_desc_init(steel_batch_desc* out, uint32_t struct_size);
/* steel_batch_desc_init with your sizeof: inline, so it never writes more than your struct
 * holds, whatever library version it runs against. */
static inline void steel_batch_desc_default(steel_batch_desc* out) {
    (void)steel_batch_desc_init(out, (uint32_t)sizeof(*out));
}

/* Creates a batch. abi_version must be STEEL_ABI_VERSION (of the header you compiled with). On
 * success *out is the new handle; on failure *out is the null handle. Returns OK, INVALID_ARGUMENT
 * (null pointers, zero worlds, unknown backend or precision, thread_count above 256, reserved0 not
 * 0; for a CUDA batch, an unknown value in one of the STEEL_CUDA_* environment variables of
 * docs/cuda.md), ABI_MISMATCH, STRUCT_VERSION, UNSUPPORTED (CUDA backend not built into this
 * library), NO_DEVICE (CUDA built, but no device, no or too old a driver, or no code in this build
 * for the device: the message gives the CUDA runtime's words), INTERNAL (a device was seen but its
 * CUDA context is in an error state: restart the process), OUT_OF_MEMORY (also when the system
 * refuses one of the thread_count - 1 worker threads; the ones already started are stopped). A CUDA
 * batch solves on the device and mirrors its results to the host, so every function of this header
 * works on it; see also the device-pointer functions at the end and docs/cuda.md. It lives on the
 * GPU current on the calling thread at creation (cudaSetDevice); later calls use that GPU and leave
 * the caller's current device as it was. */
STEEL_API steel_status steel_batch_create(uint32_t abi_version, const steel_batch_desc* desc,
                                          steel_batch* out);

/* Destroys a batch and frees everything it holds. A null handle is a no-op that returns OK;
 * a destroyed or unknown handle returns INVALID_HANDLE. */
STEEL_API steel_status steel_batch_destroy(steel_batch batch);

/* The desc the batch was created with (thread_count as resolved, never 0). Writes the whole
 * steel_batch_desc of this library's header, struct_size included; the caller's struct_size is
 * not read (unlike steel_batch_get_options). Returns OK, INVALID_HANDLE, INVALID_ARGUMENT (out
 * is NULL). */
STEEL_API steel_status steel_batch_get_desc(steel_batch batch, steel_batch_desc* out);

/* ---------------------------------------------------------------------------------------- */
/* Rows upload                                                                              */

/* Row kinds and their projection sets (docs/guide.md, "The rows format"). */
#define STEEL_ROW_BILATERAL 0      /* lambda free in R */
#define STEEL_ROW_BOUNDED 1        /* lambda in [lower, upper] */
#define STEEL_ROW_CONTACT_NORMAL 2 /* lambda in [0, inf) */
#define STEEL_ROW_FRICTION_BOX 3   /* lambda in [-mu*ln, mu*ln], ln normal_row's live impulse */
/* Coupled (cone) friction: two consecutive FRICTION_CONE rows are one contact's two tangent
 * directions, solved as one block with their 2x2 part of A, exactly within the disk
 * |lambda_t| <= mu*ln (a sliding contact's friction ends opposite its slip, on any body). Both
 * rows name the same normal_row and the same friction; cfm is left out of the block. */
#define STEEL_ROW_FRICTION_CONE 4

/*
 * Constraint rows for every world of a batch, in one call. All arrays are concatenated over
 * worlds in world order; "total_dofs" is the sum of world_dof_counts and "total_rows" the sum
 * of world_row_counts.
 *
 * Each row touches at most two contiguous DOF blocks of its world: block k of row r covers
 * DOFs [block_offset[2r+k], block_offset[2r+k] + block_length[2r+k]) (offsets local to the
 * world). A length of 0 means the block is unused. The row's values are stored back to back
 * in jacobian (and likewise in response, Y = H^-1 J^T): block 0's values, then block 1's.
 * value_count is the total length of jacobian and of response and must equal the sum of all
 * block lengths. The two blocks of a row must not overlap.
 *
 * Rows are solved in the order given. Values of a float32 batch are rounded on upload.
 */
typedef struct steel_rows_desc {
    uint32_t struct_size;                 /* sizeof(steel_rows_desc) */
    uint32_t world_count;                 /* must equal the batch's world count */
    const uint32_t* world_dof_counts;     /* [world_count] n per world */
    const uint32_t* world_row_counts;     /* [world_count] m per world */
    const double* unconstrained_velocity; /* [total_dofs] v-hat */
    const uint32_t* block_offset;         /* [2 * total_rows] */
    const uint32_t* block_length;         /* [2 * total_rows] */
    uint64_t value_count;                 /* length of jacobian and response */
    const double* jacobian;               /* [value_count] J values */
    const double* response;               /* [value_count] Y values */
    const double* bias;                   /* [total_rows] b */
    const int32_t* kind;                  /* [total_rows] STEEL_ROW_* */
    const double* lower;           /* [total_rows] BOUNDED rows' lower bound; NULL ok if none */
    const double* upper;           /* [total_rows] BOUNDED rows' upper bound; NULL ok if none */
    const int32_t* normal_row;     /* [total_rows] FRICTION_BOX / _CONE: index of its
                                      CONTACT_NORMAL row in the same world; NULL ok if none */
    const double* friction;        /* [total_rows] FRICTION_BOX / _CONE: mu >= 0; NULL ok */
    const double* regularization;  /* [total_rows] c >= 0 (0 = none: hard); NULL = all 0 */
    const double* initial_impulse; /* [total_rows] warm-start lambda; NULL = all 0 */
} steel_rows_desc;

/* Fills the first struct_size bytes of *out: the defaults above, zeros past the fields this
 * library knows, and out->struct_size = struct_size. Pass your sizeof(steel_rows_desc).
 * Returns OK, INVALID_ARGUMENT (out is NULL), STRUCT_VERSION (struct_size smaller than this
 * struct in ABI version 1, or above 4096); on failure nothing is written. */
STEEL_API steel_status steel_rows_desc_init(steel_rows_desc* out, uint32_t struct_size);
/* steel_rows_desc_init with your sizeof: inline, so it never writes more than your struct
 * holds, whatever library version it runs against. */
static inline void steel_rows_desc_default(steel_rows_desc* out) {
    (void)steel_rows_desc_init(out, (uint32_t)sizeof(*out));
}

/* Validates every array in full, then replaces the batch's rows and clears its results.
 * Checked: counts, block ranges inside the world, blocks not overlapping, value_count,
 * kinds, lower <= upper (either may be infinite, neither NaN), normal_row inside the world and
 * pointing at a CONTACT_NORMAL row, mu finite and >= 0, regularization finite and >= 0, every
 * other number finite, and J.Y + c (or + cfm for unregularized rows) > 0 and finite with the
 * batch's current options. On failure the message names world, row and field, then every
 * refused world when there are several (the first 16), and the batch keeps its previous rows
 * and results untouched.
 * Returns OK, INVALID_HANDLE, INVALID_ARGUMENT, STRUCT_VERSION, OUT_OF_MEMORY. */
STEEL_API steel_status steel_batch_upload_rows(steel_batch batch, const steel_rows_desc* rows);

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                  */

/* Which solver path a world takes (reported in steel_world_stats.path; also a forcing option).
 * Under STEEL_RESPONSE_PROPAGATION every world takes the general path, whatever is forced. */
#define STEEL_PATH_AUTO 0    /* option only: classify each world by its counts and sweeps */
#define STEEL_PATH_GENERAL 1 /* the matrix-free sweep (docs/guide.md) */
#define STEEL_PATH_DENSE 2   /* the small-world dense path (docs/guide.md) */

/* Largest row count the dense path takes, even when forced; bigger worlds run the general
 * sweep and report STEEL_PATH_GENERAL. A CUDA batch's dense kernel holds A in shared memory and
 * takes at most 32 rows: there a world forced onto DENSE with more runs the general sweep and
 * reports so (docs/cuda.md, "Classification"). */
#define STEEL_DENSE_MAX_ROWS 1024u

typedef struct steel_solve_options {
    uint32_t struct_size; /* sizeof(steel_solve_options) */
    uint32_t iterations;  /* most sweeps per solve; default 50 */
    double tolerance;     /* stop a world once its sweep residual <= tolerance; 0 = never;
                             default 0. The residual is defined in steel_world_stats. */
    double cfm;           /* >= 0, added to unregularized rows' J.Y (docs/guide.md); default 0 */
    int32_t path;         /* STEEL_PATH_*; default AUTO */
    uint32_t warm_start;  /* 1: start from the rows' initial_impulse; 0: from zero; default 1 */
    /* c >= 0 given to every CONTACT_NORMAL row whose own regularization is 0: soft
     * contacts. 0 = none; default 0. */
    double contact_regularization;
    /* 1: Nesterov extrapolation between sweeps (docs/guide.md); default 0. After each sweep but
     * the last it restarts (drops the momentum) when the step turns against the momentum
     * direction or the residual grew, and holds off (drops it too) while plain sweeps cut the
     * residual below 0.9 of the previous sweep's; momentum_restarts counts both. */
    uint32_t nesterov_momentum;
    /* 1: eliminate each world's bilateral rows exactly before the sweep and recover their
     * impulses after it (docs/guide.md). The elimination regularizes each bilateral row by its
     * own regularization c when it has one (a soft row stays soft), else by cfm, each raised to
     * a floor of 1e-5 (float32) or 1e-10 (float64) times that row's own J.Y (its diagonal
     * entry of J_B Y_B^T), so that redundant rows still factor; default 0. */
    uint32_t enable_bilateral_preelimination;
    /* 1: keep one residual per sweep per world, read with steel_batch_read_residual_history;
     * default 0. */
    uint32_t record_residual_history;
    /* STEEL_SOLVE_*: SERIAL sweeps each world's rows in order; COLORED solves a world's
     * contacts color by color, the contacts of one color in parallel (SIMD lanes, threads),
     * and needs the PROPAGATION response (docs/propagation-and-colored.md). Default SERIAL. */
    int32_t solve_mode;
    /* STEEL_RESPONSE_*: how contacts (and every other row) of a scene upload respond
     * (docs/propagation-and-colored.md). IMMEDIATE uses the uploaded rows, Y = H~^-1 J^T over
     * the articulation's coordinates. PROPAGATION solves the same problem with rows at the
     * touched bodies (6 values a side), each body's 6x6 response from the articulated-body
     * factorization of H~, and the impulses propagated through each tree; it needs a scene
     * upload and excludes Nesterov momentum, cone friction and bilateral pre-elimination.
     * Default IMMEDIATE. */
    int32_t articulated_contact_response;
    uint32_t reserved0; /* must be 0 */
} steel_solve_options;

#define STEEL_SOLVE_SERIAL 0
#define STEEL_SOLVE_COLORED 1

#define STEEL_RESPONSE_IMMEDIATE 0
#define STEEL_RESPONSE_PROPAGATION 1

/* Fills the first struct_size bytes of *out: the defaults above, zeros past the fields this
 * library knows, and out->struct_size = struct_size. Pass your sizeof(steel_solve_options).
 * Returns OK, INVALID_ARGUMENT (out is NULL), STRUCT_VERSION (struct_size smaller than this
 * struct in ABI version 1, or above 4096); on failure nothing is written. */
STEEL_API steel_status steel_solve_options_init(steel_solve_options* out, uint32_t struct_size);
/* steel_solve_options_init with your sizeof: inline, so it never writes more than your struct
 * holds, whatever library version it runs against. */
static inline void steel_solve_options_default(steel_solve_options* out) {
    (void)steel_solve_options_init(out, (uint32_t)sizeof(*out));
}

/* Sets the batch's options (used by every later solve). Checked: iterations >= 1; tolerance
 * finite and >= 0; cfm and contact_regularization finite and >= 0 and keeping every uploaded
 * row's denominator > 0; path, solve_mode and articulated_contact_response known values;
 * warm_start and the other flags 0 or 1; reserved0 0; STEEL_SOLVE_COLORED only with
 * STEEL_RESPONSE_PROPAGATION, which takes neither nesterov_momentum nor
 * enable_bilateral_preelimination. Returns OK, INVALID_HANDLE, INVALID_ARGUMENT,
 * STRUCT_VERSION, and for a CUDA batch, whose device buffers are sized here so that a solve
 * never allocates, OUT_OF_MEMORY or INTERNAL. */
STEEL_API steel_status steel_batch_set_options(steel_batch batch,
                                               const steel_solve_options* options);
/* The batch's current options. out->struct_size must be set by the caller; that many bytes
 * are written. */
STEEL_API steel_status steel_batch_get_options(steel_batch batch, steel_solve_options* out);

/* ---------------------------------------------------------------------------------------- */
/* Solve and read                                                                           */

/* Solves every world with the current options. Each world is classified first, then swept up
 * to `iterations` times. Solver health is data, not an error: a world whose numbers turn
 * non-finite is flagged (STEEL_WORLD_NONFINITE), its impulses reset to zero and its velocity
 * to v-hat, and no other world is affected. Results are bit-identical for any thread count.
 * A refused solve leaves the batch's last results readable as they were.
 * Returns OK, INVALID_HANDLE, NO_DATA (no rows uploaded), INVALID_ARGUMENT (the first solve
 * under STEEL_RESPONSE_PROPAGATION after an upload builds the trees' data and can refuse the
 * rows: rows from steel_batch_upload_rows or a snapshot rather than steel_batch_upload_scene,
 * FRICTION_CONE rows, an articulation whose articulated inertia is not positive definite; the
 * message says which),
 * OUT_OF_MEMORY; and for a CUDA batch UNSUPPORTED, or INTERNAL with CUDA's words when the
 * device reports an error (docs/cuda.md). */
STEEL_API steel_status steel_batch_solve(steel_batch batch);

/* Impulses lambda of every row, concatenated over worlds like the upload ([total_rows]).
 * out may be NULL to query the count. Returns OK, INVALID_HANDLE, NO_DATA (not solved since the
 * last upload), BUFFER_TOO_SMALL (capacity < total_rows; *out_count still set). */
STEEL_API steel_status steel_batch_read_impulses(steel_batch batch, double* out, uint64_t capacity,
                                                 uint64_t* out_count);

/* Velocities v = v-hat + Y lambda of every world, concatenated ([total_dofs]). Same rules. */
STEEL_API steel_status steel_batch_read_velocities(steel_batch batch, double* out,
                                                   uint64_t capacity, uint64_t* out_count);

/* The residual of every sweep the last solve ran in one world (record_residual_history must
 * have been 1 for that solve), oldest first; *out_count is the world's sweep count. out may be
 * NULL to query. Returns OK, INVALID_HANDLE, INVALID_ARGUMENT (world out of range), NO_DATA (not
 * solved, or solved without history), BUFFER_TOO_SMALL. */
STEEL_API steel_status steel_batch_read_residual_history(steel_batch batch, uint32_t world,
                                                         double* out, uint32_t capacity,
                                                         uint32_t* out_count);

#define STEEL_WORLD_NONFINITE (1u << 0) /* a non-finite number appeared; results reset */
#define STEEL_WORLD_CONVERGED (1u << 1) /* residual reached the tolerance (tolerance > 0) */

/* Per-world statistics of the last solve. */
typedef struct steel_world_stats {
    uint32_t struct_size; /* written by the library: the size it filled */
    int32_t path;         /* STEEL_PATH_GENERAL or STEEL_PATH_DENSE */
    uint32_t sweeps;      /* sweeps run */
    uint32_t flags;       /* STEEL_WORLD_* bits */
    /* The sweep residual: the largest |d_i * (lambda_i' - lambda_i)| over the rows of one sweep,
     * d_i the row's denominator (a cone pair counts each component of |A_tt * its change|).
     * For a row that does not clamp this is exactly its constraint velocity error
     * |J_i.v + b_i (+ c_i lambda_i)| before its update; for a clamped row it is the part of that
     * error the projection lets it fix. It is zero exactly at a fixed point and has the units of
     * J.v. */
    double residual;       /* after the last sweep run */
    double first_residual; /* after the first sweep (for relative tolerances) */
    /* sweeps after which nesterov_momentum dropped the momentum: restarts (the step turned
     * against it, or the residual grew) and holds (plain sweeps cut the residual below 0.9 of
     * the previous sweep's, so a fast-converging world counts nearly every sweep); 0 without
     * momentum */
    uint32_t momentum_restarts;
    uint32_t reserved0; /* 0 */
} steel_world_stats;

/* Statistics of every world. element_size is the caller's sizeof(steel_world_stats), at least
 * 40 (this struct's size in ABI version 1): elements are written with that stride, our fields
 * first and zeros after them, so a caller built against a newer header keeps working.
 * Returns OK, INVALID_HANDLE, INVALID_ARGUMENT (element_size < 40), NO_DATA, BUFFER_TOO_SMALL. */
STEEL_API steel_status steel_batch_read_world_stats(steel_batch batch, uint32_t element_size,
                                                    steel_world_stats* out, uint32_t capacity,
                                                    uint32_t* out_count);

/* ---------------------------------------------------------------------------------------- */
/* Snapshots and capture (docs/snapshots.md)                                                */

/* A snapshot is one batch at one moment, as one FlatBuffers buffer (file identifier "STEL",
 * file extension .steel): its desc, its options, its rows and, if it was solved since its last
 * upload, the impulses, velocities, per-world statistics and residual history of that solve.
 * Results are saved only with the options and rows they were solved from: after a
 * steel_batch_set_options that changed an option, or a steel_batch_update_values_device, the
 * batch still reads its last results, but a snapshot of it holds none until it is solved again.
 * Every number is stored as float64 (a float32 batch's values widen exactly). Loading a
 * snapshot gives a new batch that solves to the same numbers as the original and, until then,
 * reads the recorded outputs. A batch whose rows came from steel_batch_upload_scene is saved with
 * that scene, and loads as the batch that scene's upload makes: the scene readers and the
 * propagation response work as on the original. A snapshot without a scene (rows uploaded as
 * rows, or changed by steel_batch_update_values_device since the scene upload) loads as a rows
 * batch; if its options ask for STEEL_RESPONSE_PROPAGATION (or colored sweeps) it reads its
 * recorded outputs and refuses to solve until its options change or a scene is uploaded
 * (docs/snapshots.md, "Scene batches"). */

/* Writes the batch's snapshot to caller memory. Call it with out NULL to learn the size
 * (*out_size), then with a buffer of at least that many bytes; the size stays the same while
 * the batch is unchanged. out_size may be NULL when out is not.
 * Returns OK, INVALID_HANDLE, INVALID_ARGUMENT (out and out_size both NULL), BUFFER_TOO_SMALL
 * (capacity < size: nothing written, *out_size still set), UNSUPPORTED (the snapshot could pass
 * the format's 2 GiB limit: checked from the batch's counts before anything is built),
 * OUT_OF_MEMORY. */
STEEL_API steel_status steel_batch_save_memory(steel_batch batch, void* out, uint64_t capacity,
                                               uint64_t* out_size);

/* Writes the batch's snapshot to the file at path, replacing it. The bytes go to a temporary
 * file beside it that is then renamed, so a failed save leaves an existing file as it was. A
 * replaced file keeps its permissions; a new one gets 0666 less the umask.
 * Returns OK, INVALID_HANDLE, INVALID_ARGUMENT (path NULL, or the file cannot be written: the
 * message gives the system's reason), UNSUPPORTED (as steel_batch_save_memory), OUT_OF_MEMORY. */
STEEL_API steel_status steel_batch_save_file(steel_batch batch, const char* path);

/* Creates a batch from a snapshot of `size` bytes at data (read during the call; no alignment
 * needed). abi_version must be STEEL_ABI_VERSION. Before anything is built it checks the size,
 * the file identifier, the FlatBuffers verifier (with depth, table and size limits), the format
 * version (a newer one is refused), the checksum (CRC-32: a damaged file is refused), every
 * array's length against its counts, then the desc,
 * options and rows with exactly the checks of steel_batch_create, steel_batch_set_options and
 * steel_batch_upload_rows (a scene with those of steel_batch_upload_scene, and it must build rows
 * of the recorded counts), and the recorded outputs (finite, one per row / DOF / world).
 * The new batch has the snapshot's desc (thread_count included), options, rows (built from the
 * scene when it has one), scene and, if any, recorded results; capture is off (STEEL_CAPTURE does
 * not apply). A capture stream is not a snapshot: split it into its records first (see
 * steel_batch_set_capture). On failure *out is the null handle and the message says what is wrong
 * and where. Returns OK, ABI_MISMATCH, INVALID_ARGUMENT (NULL pointers or a bad snapshot; for a
 * CUDA snapshot, an unknown STEEL_CUDA_* environment value, as steel_batch_create), UNSUPPORTED
 * (the snapshot's backend is not built into this library), NO_DEVICE (a CUDA snapshot, CUDA
 * built but no usable device found), INTERNAL (a CUDA snapshot in a process whose CUDA context is
 * in an error state), OUT_OF_MEMORY (also: the rows do not fit on the device). */
STEEL_API steel_status steel_batch_load_memory(uint32_t abi_version, const void* data,
                                               uint64_t size, steel_batch* out);

/* steel_batch_load_memory on the whole content of the file at path. Also INVALID_ARGUMENT when
 * the file cannot be read (the message gives the system's reason) or is not a regular file (a
 * FIFO is refused at once, never waited on). */
STEEL_API steel_status steel_batch_load_file(uint32_t abi_version, const char* path,
                                             steel_batch* out);

/* Capture for bug reports. With a path, every later successful steel_batch_solve of this batch
 * appends the batch's snapshot (after the solve) to that file as one record of a capture
 * stream: a little-endian uint32 byte count, then that many bytes of snapshot. The file is
 * created if missing (0666 less the umask) and never truncated; it must be a regular file (a
 * FIFO or device is refused, never waited on), and is opened here once to check it. A later
 * append that fails (disk full, say) is removed again, so the file holds whole records only, is
 * reported on stderr, and turns capture off; the solve itself still succeeds. path NULL or ""
 * stops capturing. steel-replay replays a capture solve by solve.
 *
 * The environment variable STEEL_CAPTURE=path turns capture on for every batch that
 * steel_batch_create makes, without recompiling the program. It is read when the batch is
 * created; a path that cannot be opened is reported on stderr and never fails the create.
 * Returns OK, INVALID_HANDLE, INVALID_ARGUMENT (the file cannot be opened for appending, or is
 * not a regular file). */
STEEL_API steel_status steel_batch_set_capture(steel_batch batch, const char* path);

/* ---------------------------------------------------------------------------------------- */
/* Scene mode (docs/scene-mode.md): Steel builds the rows from bodies, joints and contacts     */

/* Joint types. Joint i moves body i relative to its parent body (or the world). Velocity
 * coordinates are in world axes; position coordinates as listed (quaternions are w, x, y, z):
 *   FIXED 0 DOF, 0 q;  REVOLUTE 1 DOF (rate about axis), q = angle;
 *   PRISMATIC 1 DOF (rate along axis), q = distance;
 *   BALL 3 DOF (relative angular velocity), q = quaternion of the child joint frame in the
 *     parent joint frame;
 *   FREE 6 DOF (velocity of the child joint-frame origin, then angular velocity), q = position
 *     (3) and quaternion (4) of the child joint frame in the parent joint frame.
 * A free body can be given two ways with identical results: as a FREE joint to the world with
 * its joint frame at the com, or as a standalone body (joint type NONE) whose state is
 * body_pose and body_velocity. */
#define STEEL_JOINT_FIXED 0
#define STEEL_JOINT_REVOLUTE 1
#define STEEL_JOINT_PRISMATIC 2
#define STEEL_JOINT_BALL 3
#define STEEL_JOINT_FREE 4
/* A standalone body, not part of any articulation (joint_parent -1, no joint_position
 * coordinates): its pose is body_pose, its velocity body_velocity, and body_flags says how it
 * moves: DYNAMIC (6 DOFs, com velocity then angular velocity: exactly a FREE joint to the
 * world at its com, so a body spinning torque-free keeps its com still), STATIC (0 DOFs, never
 * moves) or KINEMATIC (0 DOFs, moves at body_velocity whatever touches it: contacts and connects
 * on it see that motion). */
#define STEEL_JOINT_NONE 5

#define STEEL_BODY_DYNAMIC 0
#define STEEL_BODY_STATIC 1
#define STEEL_BODY_KINEMATIC 2

#define STEEL_FRICTION_MODEL_BOX 0  /* two FRICTION_BOX rows per contact */
#define STEEL_FRICTION_MODEL_CONE 1 /* one FRICTION_CONE pair per contact */

#define STEEL_DRIVE_MODE_AUGMENTED 0 /* drives folded into H~, implicit; no effort limit */
/* One regularized drive row per driven DOF, bounded by the effort limit (cfm is left out of these
 * rows). */
#define STEEL_DRIVE_MODE_ROWS 1

/*
 * One step of every world's scene, in bulk. Arrays are concatenated over worlds in world order;
 * indices of bodies and joints are local to their world. Per body b (B = total bodies):
 * body_mass[b] > 0, body_com[3b..] (body frame), body_inertia[6b..] = Ixx Iyy Izz Ixy Ixz Iyz
 * about the com in body axes (positive definite, and a rigid body's: no principal moment above
 * the sum of the other two, within 1e-6 of the trace); joint_type[b], joint_parent[b] (a body of
 * the same world with a smaller index, or -1 for the world), joint_axis[3b..] (unit, in the joint
 * frame; revolute and prismatic), joint_parent_frame[7b..] and joint_child_frame[7b..] (position
 * then quaternion: the joint frame in the parent's and in the child's body frame; the parent
 * frame of a root joint is in world coordinates). Per DOF (in body order, then the joint's
 * DOFs): joint_velocity, and the optional armature, damping, limits and drive arrays. Per
 * position coordinate: joint_position.
 *
 * Contacts come from the caller's collision detection: body_a, body_b (-1: the static world),
 * a world point, a unit normal pointing from b to a, the signed distance along it (negative
 * when penetrating), friction mu and restitution. Each contact makes a normal row (lambda >= 0)
 * and two friction rows. Connect constraints hold a point of body a (body-frame) on a point of
 * body b (-1: a world point): three bilateral rows; they close loops. Mimic constraints keep
 * q_a = ratio * q_b + offset for two 1-DOF joints: one bilateral row.
 *
 * Drives apply the implicit PD force f = kp (target_q - q - dt qd') +
 * kd (target_qd - qd') at the step's new velocity qd', stable at any gain. drive_mode AUGMENTED
 * folds it into H~ += dt kd + dt^2 kp (default); ROWS makes it one soft row per driven DOF,
 * lambda = dt f, with regularization c = 1 / (dt (dt kp + kd)), bounded by +-dt * effort limit.
 * Both give the same motion when the solve converges. Joint damping d and armature a enter as
 * H~ += a + dt d and the force -d qd. Velocity limits |qd'| <= limit make two [0, inf) rows.
 */
typedef struct steel_scene_desc {
    uint32_t struct_size;
    uint32_t world_count;                /* must equal the batch's */
    double dt;                           /* step, > 0 */
    double baumgarte;                    /* beta in [0, 1]: fraction of penetration / limit / loop
                                            error corrected per step; default 0.2 */
    double restitution_threshold;        /* approach speed above which restitution applies; 0.5 */
    int32_t friction_model;              /* STEEL_FRICTION_MODEL_*; default BOX */
    int32_t drive_mode;                  /* STEEL_DRIVE_MODE_*; default AUGMENTED */
    const double* gravity;               /* [3 * world_count] */
    const uint32_t* world_body_count;    /* [world_count] */
    const uint32_t* world_contact_count; /* [world_count]; NULL = none */
    const uint32_t* world_connect_count; /* [world_count]; NULL = none */
    const uint32_t* world_mimic_count;   /* [world_count]; NULL = none */
    /* bodies and joints */
    const double* body_mass;             /* [B] */
    const double* body_com;              /* [3B] */
    const double* body_inertia;          /* [6B] */
    const int32_t* joint_type;           /* [B] */
    const int32_t* joint_parent;         /* [B] */
    const double* joint_axis;            /* [3B]; NULL ok without revolute/prismatic joints */
    const double* joint_parent_frame;    /* [7B] */
    const double* joint_child_frame;     /* [7B] */
    const double* joint_position;        /* [total position coordinates] q */
    const double* joint_velocity;        /* [total DOFs] qd */
    const double* joint_armature;        /* [total DOFs] >= 0; NULL = 0 */
    const double* joint_damping;         /* [total DOFs] >= 0; NULL = 0 */
    const double* joint_lower;           /* [total DOFs] position limit (1-DOF joints); -inf = none;
                                            NULL = none */
    const double* joint_upper;           /* [total DOFs] +inf = none; NULL = none */
    const double* drive_stiffness;       /* [total DOFs] kp >= 0 (1-DOF joints); NULL = no drives */
    const double* drive_damping;         /* [total DOFs] kd >= 0 */
    const double* drive_target_position; /* [total DOFs] */
    const double* drive_target_velocity; /* [total DOFs] */
    const double* drive_effort_limit;    /* [total DOFs] > 0, +inf = none; finite only with
                                            drive_mode ROWS; NULL = none */
    const double* joint_velocity_limit;  /* [total DOFs] > 0, +inf = none; NULL = none */
    const double* external_force;        /* [6B] world force then torque, applied at the com;
                                            NULL = none */
    /* standalone bodies (joint type NONE); each may be NULL when no body needs it */
    const double* body_pose;     /* [7B] world position of the body frame, then quaternion */
    const double* body_velocity; /* [6B] world velocity of the com, then angular velocity */
    const int32_t* body_flags;   /* [B] STEEL_BODY_*; NULL = all DYNAMIC */
    /* contacts */
    const int32_t* contact_body_a;     /* [C] */
    const int32_t* contact_body_b;     /* [C] -1 = static world */
    const double* contact_point;       /* [3C] world */
    const double* contact_normal;      /* [3C] world, unit, from b to a */
    const double* contact_distance;    /* [C] */
    const double* contact_friction;    /* [C] mu >= 0 */
    const double* contact_restitution; /* [C] in [0, 1]; NULL = 0 */
    /* connect constraints */
    const int32_t* connect_body_a; /* [K] */
    const int32_t* connect_body_b; /* [K] -1 = world */
    const double* connect_point_a; /* [3K] body a's frame */
    const double* connect_point_b; /* [3K] body b's frame (world for -1) */
    /* mimic constraints */
    const int32_t* mimic_joint_a; /* [Mi] body index of a 1-DOF joint */
    const int32_t* mimic_joint_b; /* [Mi] */
    const double* mimic_ratio;    /* [Mi] */
    const double* mimic_offset;   /* [Mi] */
} steel_scene_desc;

/* Fills the first struct_size bytes of *out: the defaults above, zeros past the fields this
 * library knows, and out->struct_size = struct_size. Pass your sizeof(steel_scene_desc).
 * Returns OK, INVALID_ARGUMENT (out is NULL), STRUCT_VERSION (struct_size smaller than this
 * struct in ABI version 1, or above 4096); on failure nothing is written. */
STEEL_API steel_status steel_scene_desc_init(steel_scene_desc* out, uint32_t struct_size);
/* steel_scene_desc_init with your sizeof: inline, so it never writes more than your struct
 * holds, whatever library version it runs against. */
static inline void steel_scene_desc_default(steel_scene_desc* out) {
    (void)steel_scene_desc_init(out, (uint32_t)sizeof(*out));
}

/* Validates the scene in full, builds every world's rows (forward kinematics, mass matrices by
 * CRBA, H~ and its factorization, v-hat, contact / friction / limit / connect / mimic rows with
 * their biases, Y = H~^-1 J^T) and replaces the batch's rows with them. The world's DOFs are
 * ordered articulation by articulation (an articulation is a root joint and its descendants),
 * each in body order. Failure leaves the batch unchanged; the message names world, item, field
 * of the first bad world, then every refused world when there are several (the first 16).
 * Returns OK, INVALID_HANDLE, INVALID_ARGUMENT, STRUCT_VERSION, OUT_OF_MEMORY. */
STEEL_API steel_status steel_batch_upload_scene(steel_batch batch, const steel_scene_desc* scene);

/* Per contact of the last scene solve: 6 doubles, (normal impulse, friction impulse along
 * tangent 1, along tangent 2, then the total impulse on body a as a world vector). [6 * C].
 * Returns like steel_batch_read_impulses; NO_DATA if the rows did not come from a scene. */
STEEL_API steel_status steel_batch_read_contact_impulses(steel_batch batch, double* out,
                                                         uint64_t capacity, uint64_t* out_count);

/* Per DOF of the last scene solve, in the scene's DOF order: the new joint velocities qd. */
STEEL_API steel_status steel_batch_read_joint_velocities(steel_batch batch, double* out,
                                                         uint64_t capacity, uint64_t* out_count);

/* Per DOF: the joint-limit impulse of the last solve (lower limit positive, upper negative). */
/* (Drive rows' impulses, with drive_mode ROWS, are read with steel_batch_read_drive_impulses.) */
STEEL_API steel_status steel_batch_read_limit_impulses(steel_batch batch, double* out,
                                                       uint64_t capacity, uint64_t* out_count);

/* Per DOF: the drive impulse dt * f of the last solve (drive_mode ROWS; 0 for undriven DOFs and
 * in AUGMENTED mode, where the drive is inside H~ and has no row). */
STEEL_API steel_status steel_batch_read_drive_impulses(steel_batch batch, double* out,
                                                       uint64_t capacity, uint64_t* out_count);

/* Per connect constraint then per mimic constraint of the last scene solve, in upload order
 * (all worlds' connects first, then all worlds' mimics): 3 doubles per connect, the impulse on
 * body a's point as a world vector; 1 double per mimic, the impulse along q_a. */
STEEL_API steel_status steel_batch_read_constraint_impulses(steel_batch batch, double* out,
                                                            uint64_t capacity, uint64_t* out_count);

/* Per body: 6 doubles, the world velocity of its centre of mass then its angular velocity, at
 * the pose the step started from. For a standalone body this is the next step's body_velocity. */
STEEL_API steel_status steel_batch_read_body_velocities(steel_batch batch, double* out,
                                                        uint64_t capacity, uint64_t* out_count);

/* Per body: 7 doubles, its world pose after the step (position of the body frame, then its
 * quaternion): the integrated positions pushed through forward kinematics. For a standalone
 * body this is the next step's body_pose (a kinematic body moves at body_velocity). */
STEEL_API steel_status steel_batch_read_body_poses(steel_batch batch, double* out,
                                                   uint64_t capacity, uint64_t* out_count);

/* Per position coordinate: q advanced by the new velocities over dt (quaternions on the unit
 * sphere), ready to be the next step's joint_position. */
STEEL_API steel_status steel_batch_read_integrated_positions(steel_batch batch, double* out,
                                                             uint64_t capacity,
                                                             uint64_t* out_count);

/* ---------------------------------------------------------------------------------------- */
/* CUDA device-pointer interop (docs/cuda.md)                                               */
/*
 * For a STEEL_BACKEND_CUDA batch whose data already lives on the GPU. `stream` is always a
 * cudaStream_t cast to void* (NULL = the legacy default stream); the work is ordered on it like
 * the caller's own kernels. On a CPU batch every function here returns INVALID_ARGUMENT; in a
 * library built without CUDA, UNSUPPORTED. The host readers (steel_batch_read_impulses, stats,
 * snapshots, ...) keep working after any of these: they first wait for the device work they
 * need and copy its results to the host. The batch's other calls (uploads, set_options,
 * steel_batch_solve) wait for it too, so the caller may destroy `stream` right after a call.
 * Once a call has been captured in a CUDA graph, the batch cannot see the replays: it then
 * waits for the whole device (cudaDeviceSynchronize, which CUDA forbids while another thread
 * captures in cudaStreamCaptureModeGlobal), and each host read copies the results back again.
 */

/* steel_batch_upload_rows with every array of *rows a device pointer (rows itself is host
 * memory). The rows are validated exactly like steel_batch_upload_rows, which reads them to
 * the host once; the call returns when the upload is complete. For the per-step numbers use
 * steel_batch_update_values_device, which never leaves the device.
 * Returns like steel_batch_upload_rows, plus UNSUPPORTED / INVALID_ARGUMENT as above. */
STEEL_API steel_status steel_batch_upload_rows_device(steel_batch batch,
                                                      const steel_rows_desc* rows, void* stream);

/* New numbers for the batch's current rows (same counts, blocks, kinds), as device arrays laid
 * out as in steel_rows_desc. NULL keeps that array's current values. */
typedef struct steel_row_values_desc {
    uint32_t struct_size;                 /* sizeof(steel_row_values_desc) */
    uint32_t reserved0;                   /* must be 0 */
    const double* unconstrained_velocity; /* [total_dofs] v-hat */
    const double* jacobian;               /* [value_count] J */
    const double* response;               /* [value_count] Y */
    const double* bias;                   /* [total_rows] b */
    const double* initial_impulse;        /* [total_rows] warm start */
} steel_row_values_desc;

/* Fills the first struct_size bytes of *out: the defaults above, zeros past the fields this
 * library knows, and out->struct_size = struct_size. Pass your sizeof(steel_row_values_desc).
 * Returns OK, INVALID_ARGUMENT (out is NULL), STRUCT_VERSION (struct_size smaller than this
 * struct in ABI version 1, or above 4096); on failure nothing is written. */
STEEL_API steel_status steel_row_values_desc_init(steel_row_values_desc* out, uint32_t struct_size);
/* steel_row_values_desc_init with your sizeof: inline, so it never writes more than your struct
 * holds, whatever library version it runs against. */
static inline void steel_row_values_desc_default(steel_row_values_desc* out) {
    (void)steel_row_values_desc_init(out, (uint32_t)sizeof(*out));
}

/* Copies the given device arrays into the batch (rounded to its precision) and recomputes J.Y
 * and the cone blocks on the device, all on `stream`, without synchronizing or allocating: it
 * can be captured in a CUDA graph. The numbers are not validated (that would need the host):
 * a world whose numbers are, or become, non-finite is flagged STEEL_WORLD_NONFINITE by the
 * next solve and isolated as always; keeping J.Y + cfm (or + c) > 0 is the caller's duty.
 * Returns OK, INVALID_HANDLE, INVALID_ARGUMENT, NO_DATA (no rows uploaded), STRUCT_VERSION,
 * UNSUPPORTED, OUT_OF_MEMORY or INTERNAL. The one exception to "a failed call changes nothing":
 * an INTERNAL from a launch that failed after the first copy was enqueued may leave the values
 * partly replaced, and the batch's snapshots then hold no results until its next solve. */
STEEL_API steel_status steel_batch_update_values_device(steel_batch batch,
                                                        const steel_row_values_desc* values,
                                                        void* stream);

/* steel_batch_solve on `stream`, returning before the device finishes: no host
 * synchronization and no allocation (buffers are sized at upload and set_options), so it can
 * be captured in a CUDA graph. The graph keeps the options of its capture and the batch's
 * buffers, which stay valid until an upload or set_options that needs bigger buffers (one
 * refused with OUT_OF_MEMORY, and an update_values_device, keep them).
 * Capture (steel_batch_set_capture) does not record async solves.
 * The first propagation solve after an upload builds and mirrors its trees and colors, so it
 * allocates and waits; inside a capture it is refused with UNSUPPORTED (nothing enqueued):
 * solve synchronously once before capturing one.
 * Returns OK, INVALID_HANDLE, NO_DATA, INVALID_ARGUMENT, UNSUPPORTED (also for a propagation
 * solve after steel_batch_update_values_device: upload the scene again). */
STEEL_API steel_status steel_batch_solve_async(steel_batch batch, void* stream);

/* The last solve's impulses ([total_rows]), widened to double, written into the device array
 * out on `stream` (asynchronously). out may be NULL to query the count.
 * Returns OK, INVALID_HANDLE, NO_DATA, BUFFER_TOO_SMALL, INVALID_ARGUMENT, UNSUPPORTED. */
STEEL_API steel_status steel_batch_read_impulses_device(steel_batch batch, double* out,
                                                        uint64_t capacity, uint64_t* out_count,
                                                        void* stream);

/* The last solve's velocities ([total_dofs]) into a device array; same rules. */
STEEL_API steel_status steel_batch_read_velocities_device(steel_batch batch, double* out,
                                                          uint64_t capacity, uint64_t* out_count,
                                                          void* stream);

#ifdef __cplusplus
}
#endif

#endif /* STEEL_STEEL_H */
