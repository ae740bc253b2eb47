#!/usr/bin/env bash
# The CUDA backend's device check, for a session lent a GPU (docs/cuda.md). One run, about 3 to 8
# minutes on a 16-core machine with an H200, and no network needed:
#   1. configure a fresh Release build with STEEL_CUDA=ON and build only what the check needs
#      (libsteel, steel_tests, steel_cuda_tests, bench_cuda, the CUDA example);
#   2. run the GPU tests (they must run, not skip), the CUDA-related CPU tests and the CUDA
#      example (examples/cuda/falling_boxes.cu: a user's program with its own CUDA runtime
#      stepping a batch through a CUDA graph, checked against closed forms);
#   3. run bench_cuda --quick (GPU beside CPU on 1,024 / 16,384 / 65,536 copies of the 1D stack,
#      the arm with a box, the legged robot and an 8-box pile, each also with the general sweep
#      built under __launch_bounds__(128, 4) on the GPU alone, then the legged robot (serial, a
#      thread per world and, GPU only, a warp per world) to 65,536 copies and the pile (colored)
#      to 16,384 under the propagation response; about 2 to 3 minutes);
#   4. best effort, where the tools work and time is left before STEEL_GPU_DEADLINE (default
#      420 s): compute-sanitizer's memcheck, racecheck and synccheck on a few GPU tests and the
#      example, then Nsight Compute (ncu) on one launch each of the general sweep (plain and
#      bounded), the colored propagation kernel and the thread-per-world one; their findings are
#      reported (sanitizer.log, ncu.log), never fail the check;
#   5. print a compact summary, and exit non-zero if a test failed or was skipped.
#
#   bash scripts/gpu_check.sh            # from anywhere
#
# Environment: STEEL_GPU_BUILD_DIR (default build-gpu, recreated), STEEL_JOBS (default nproc),
# STEEL_GPU_PREBUILT=DIR to skip step 1 and use what scripts/gpu_prebuild.sh staged elsewhere
# (for a machine without cmake, doctest or flatbuffers: the device image has no doctest or
# flatbuffers headers), STEEL_GPU_BENCH_ARGS (default "--quick"; "" for the full timing loops,
# about 30 s more). Where $OUT is set (the device tool), each log is copied there as soon as its
# step ends, so that a check cut short still brings back what it did.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${STEEL_GPU_PREBUILT:-${STEEL_GPU_BUILD_DIR:-build-gpu}}"
jobs="${STEEL_JOBS:-$(nproc)}"
log_dir="$build/gpu-check"
started=$SECONDS
step() { echo "== [$(( SECONDS - started ))s] $*"; }
keep() { if [ -n "${OUT:-}" ] && [ -d "${OUT}" ]; then cp "$log_dir/$1" "$OUT"/; fi; }

step "device"
if command -v nvidia-smi >/dev/null; then
    device_line=$(nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1)
else
    device_line="nvidia-smi not found"
fi
echo "$device_line"

if [ -z "${STEEL_GPU_PREBUILT:-}" ]; then
    for tool in cmake make g++; do
        command -v "$tool" >/dev/null || { echo "gpu_check: $tool is missing; see STEEL_GPU_PREBUILT"; exit 2; }
    done
    step "configure $build (Release, STEEL_CUDA=ON)"
    rm -rf "$build"
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTEEL_CUDA=ON -DSTEEL_BUILD_TESTS=ON \
        -DSTEEL_BUILD_BENCH=ON -DSTEEL_BUILD_EXAMPLES=ON -DSTEEL_BUILD_LUA=OFF >/dev/null || exit 2
    step "build (-j $jobs)"
    cmake --build "$build" -j "$jobs" --target steel steel_tests steel_cuda_tests bench_cuda \
        steel_example_cuda_falling_boxes steel_demo >/dev/null 2>"$build/build.err" ||
        { tail -40 "$build/build.err"; exit 2; }
fi
mkdir -p "$log_dir"
# A stage built from other sources still runs (the device's time is not wasted twice), but says so.
if [ -n "${STEEL_GPU_PREBUILT:-}" ]; then
    if [ "$(cat "$build/SOURCES" 2>/dev/null)" = "$(bash scripts/source_fingerprint.sh)" ]; then
        stage_line="built from these sources"
    else
        stage_line="STALE: built from other sources than these (rerun scripts/gpu_prebuild.sh)"
    fi
    step "prebuilt stage $build: $stage_line"
else
    stage_line="built here"
fi
# The example and the demo link libsteel.so.0, which lies in $build (a staged one too).
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "GPU tests (steel_cuda_tests)"
# The cases in the order they run, then the run, line-buffered, each case's time printed as it
# ends: a case that hangs is the one after the last one timed.
"$build/tests/steel_cuda_tests" --list-test-cases >"$log_dir/steel_cuda_tests.log" 2>&1
timeout -k 10 240 stdbuf -oL "$build/tests/steel_cuda_tests" --duration=true \
    >>"$log_dir/steel_cuda_tests.log" 2>&1
gpu_rc=$?
keep steel_cuda_tests.log
tail -25 "$log_dir/steel_cuda_tests.log"

step "CUDA-related CPU tests (steel_tests)"
timeout 120 "$build/tests/steel_tests" -tc='*CUDA*,*dense_entry*,*device-pointer*,*default structs*,simt*,device buffers*' \
    >"$log_dir/steel_tests.log" 2>&1
cpu_rc=$?
keep steel_tests.log
tail -4 "$log_dir/steel_tests.log"

step "CUDA example (falling_boxes)"
timeout 60 "$build/examples/steel_example_cuda_falling_boxes" >"$log_dir/example.log" 2>&1
example_rc=$?
keep example.log
tail -8 "$log_dir/example.log"

step "steel_demo --backend cuda (the README's demo on the GPU)"
timeout 120 "$build/examples/steel_demo" --backend cuda --worlds 1000 >"$log_dir/demo.log" 2>&1
demo_rc=$?
keep demo.log
grep -E '^(Steel|options|  1 thread|  forced|demo finished)|SKIP|failed' "$log_dir/demo.log" | head -12

step "exported symbols"
library="$build/libsteel.so"
[ -e "$library" ] || library=$(ls "$build"/libsteel.so.* | head -1) # a carried link may not survive
sh tests/check_exports.sh "$library" >"$log_dir/exports.log" 2>&1
exports_rc=$?
cat "$log_dir/exports.log" # not kept in $OUT: the device tool brings back 8 files at most

step "bench_cuda"
# shellcheck disable=SC2086
timeout 240 "$build/bench/bench_cuda" ${STEEL_GPU_BENCH_ARGS---quick} >"$log_dir/bench_cuda.log" 2>&1
bench_rc=$?
keep bench_cuda.log
cat "$log_dir/bench_cuda.log"

# What only a device can show beyond speed, where the tools work (on some device runtimes
# neither reads the hardware): best effort, each run under a timeout that also keeps the whole
# check inside STEEL_GPU_DEADLINE seconds (default 420: with a 480 s timeout on the device tool
# and a minute or two to start the machine, a 15-minute lease keeps room for a second run).
deadline="${STEEL_GPU_DEADLINE:-420}"
within() { # the seconds a run may take: at most $1, never past the deadline, 0 if under 15 left
    local left=$(( deadline - (SECONDS - started) ))
    (( left > $1 )) && left=$1
    (( left < 15 )) && left=0
    echo "$left"
}
bounded() { # seconds, command...: runs it under that timeout, or says it did not fit
    local seconds
    seconds=$(within "$1")
    shift
    if [ "$seconds" -eq 0 ]; then echo "not run: the check is near its deadline"; return 0; fi
    timeout "$seconds" "$@"
    echo "rc $? (timeout ${seconds}s)"
}
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
sanitizer_runs() {
    if [ $gpu_rc -ne 0 ]; then
        # A GPU test failed: memcheck over all of them says first whether a kernel went out of
        # bounds. All but the test whose allocations are meant to fail (the tool counts those).
        echo "## memcheck: steel_cuda_tests, all cases but the out-of-memory one"
        bounded 200 "$sanitizer" --tool memcheck --error-exitcode 9 "$build/tests/steel_cuda_tests" \
            -tce='out of device memory*'
        return
    fi
    echo "## memcheck: every path's kernels, pre-elimination, the propagation kernels"
    bounded 100 "$sanitizer" --tool memcheck --error-exitcode 9 "$build/tests/steel_cuda_tests" \
        -tc='GPU general sweep and dense path*,GPU bilateral pre-elimination*,GPU propagation solve*'
    echo "## memcheck: the example (values update, async solve, device reads, a graph)"
    bounded 40 "$sanitizer" --tool memcheck --error-exitcode 9 \
        "$build/examples/steel_example_cuda_falling_boxes"
    echo "## racecheck (shared memory): the general and dense kernels, the colored kernel"
    bounded 45 "$sanitizer" --tool racecheck --error-exitcode 9 "$build/tests/steel_cuda_tests" \
        -tc='GPU isolates a world*,GPU propagation solve*free bodies*'
    echo "## synccheck (warp synchronization)"
    bounded 45 "$sanitizer" --tool synccheck --error-exitcode 9 "$build/tests/steel_cuda_tests" \
        -tc='GPU isolates a world*,GPU propagation solve*free bodies*,GPU bilateral pre-elimination*'
}
if [ $gpu_rc -eq 77 ] || [ $gpu_rc -eq 124 ] || [ $gpu_rc -eq 137 ] || [ -z "$sanitizer" ] ||
    [ "$(within 60)" -lt 60 ]; then
    step "compute-sanitizer: skipped (GPU tests rc $gpu_rc, tool '${sanitizer:-none}', $(( SECONDS - started ))s in)"
else
    step "compute-sanitizer (GPU tests rc $gpu_rc: $([ $gpu_rc -eq 0 ] && echo "memcheck, racecheck, synccheck" || echo "memcheck on all of them"))"
    sanitizer_runs >"$log_dir/sanitizer.log" 2>&1
    keep sanitizer.log
    grep -E '^(## |rc |not run)|ERROR SUMMARY|^=+ (Invalid|Race|Barrier|Error)|^=+ +at |TEST CASE|ERROR:' \
        "$log_dir/sanitizer.log" | head -40
fi

ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
if [ $bench_rc -ne 0 ] || [ -z "$ncu" ] || [ "$(within 60)" -lt 60 ]; then
    step "ncu: skipped (bench rc $bench_rc, tool '${ncu:-none}', $(( SECONDS - started ))s in)"
else
    step "ncu (one launch each, float32)"
    profile() { # world, copies, kernel (its name, with or without namespace and template)
        echo "## $1 x $2: $3"
        bounded 50 "$ncu" --clock-control none --kernel-name-base function \
            --kernel-name "regex:(^|:)$3(<|\$)" --launch-count 1 \
            --section SpeedOfLight --section LaunchStats --section Occupancy \
            --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats \
            "$build/bench/bench_cuda" --quick --gpu-only --only "$1" --min-copies "$2" --max-copies "$2"
    }
    {
        profile legged 65536 general_sweep_kernel
        profile legged/lb 65536 general_sweep_kernel_bounded
        profile pile8/c 16384 propagation_kernel
        profile legged/p 65536 propagation_thread_kernel
    } >"$log_dir/ncu.log" 2>&1
    keep ncu.log
    grep -E '^## |^rc |^not run|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Duration|Memory Throughput|Compute \(SM\) Throughput|==ERROR==' "$log_dir/ncu.log" | head -60
fi

verdict() { case "$1" in 0) echo pass ;; 77) echo "SKIPPED (no device seen)" ;; 124|137) echo "TIMED OUT" ;; *) echo "FAIL ($1)" ;; esac; }
{
    echo
    echo "== summary after $(( SECONDS - started ))s (logs in $log_dir)"
    echo "device:           $device_line"
    echo "programs:         $stage_line"
    echo "GPU tests:        $(verdict $gpu_rc)   $(grep -E '^\[doctest\] (test cases|assertions)' "$log_dir/steel_cuda_tests.log" | tr '\n' ' ')"
    echo "CPU CUDA tests:   $(verdict $cpu_rc)"
    echo "CUDA example:     $(verdict $example_rc)"
    echo "demo on the GPU:  $(verdict $demo_rc)"
    echo "exports:          $(verdict $exports_rc)"
    echo "bench_cuda:       $(verdict $bench_rc)"
    # The 65,536-copy lines (the serial propagation's two layouts among them: legged/p, legged/pw).
    grep -E '^(gpu|GPU:|total )|^ *world +copies|^[a-z0-9/]+ +65536 ' "$log_dir/bench_cuda.log" | sed 's/^/  /'
} | tee "$log_dir/summary.log"
keep summary.log
[ $gpu_rc -eq 0 ] && [ $cpu_rc -eq 0 ] && [ $example_rc -eq 0 ] && [ $demo_rc -eq 0 ] && [ $exports_rc -eq 0 ] && [ $bench_rc -eq 0 ]
