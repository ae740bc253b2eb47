#!/usr/bin/env bash
# The CUDA backend's device check, for a session lent a GPU (docs/cuda.md). One run, about 3 to 7
# minutes on a 16-core machine with an H200, never more than STEEL_GPU_DEADLINE (default 420 s,
# the build included), and no network needed:
#   0. with STEEL_GPU_PREBUILT, list any library the staged programs need and the machine lacks
#      (ldd's "not found" lines);
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
#   4. best effort, where the tools work and time is left before STEEL_GPU_DEADLINE:
#      compute-sanitizer's memcheck, racecheck and synccheck on a few GPU tests and the example,
#      then Nsight Compute (ncu) on one launch each of the general sweep (plain and bounded, on
#      the pile: the arm and the legged robot take the dense path), the dense kernel, the colored
#      propagation kernel and the thread-per-world one; their findings are reported
#      (sanitizer.log, ncu.log), never fail the check;
#   5. print a compact summary (summary.log), and exit non-zero if a test failed, was skipped,
#      timed out or was not run.
# Every step, the build included, runs under a timeout that ends it before the deadline, with
# time kept for the summary: a step that hangs is reported TIMED OUT and the ones after it get
# what is left (NOT RUN when under 15 s is). After a GPU-test timeout (a kernel that hangs, or a
# device that stopped answering) the example and the demo get 30 s each and bench_cuda is not
# run.
#
#   bash scripts/gpu_check.sh            # from anywhere
#
# Environment: STEEL_GPU_BUILD_DIR (default build-gpu, recreated), STEEL_JOBS (default nproc),
# STEEL_GPU_PREBUILT=DIR to skip step 1 and use what scripts/gpu_prebuild.sh staged elsewhere
# (for a machine without cmake, doctest or flatbuffers: the device image has no doctest or
# flatbuffers headers), STEEL_GPU_BENCH_ARGS (default "--quick"; "" for the full timing loops,
# about 30 s more), STEEL_GPU_DEADLINE (seconds, default 420). Where $OUT is set (the device
# tool), each log is copied there as soon as its step ends, so that a check cut short still
# brings back what it did.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
build="${STEEL_GPU_PREBUILT:-${STEEL_GPU_BUILD_DIR:-build-gpu}}"
jobs="${STEEL_JOBS:-$(nproc)}"
log_dir="$build/gpu-check"
started=$SECONDS
step() { echo "== [$(( SECONDS - started ))s] $*"; }
keep() { if [ -n "${OUT:-}" ] && [ -d "${OUT}" ]; then cp "$log_dir/$1" "$OUT"/; fi; }

# The deadline holds every step, the build included (default 420 s: the device tool gives a run
# 480 s, so the summary is written and copied to $OUT with a minute to spare). It does not leave
# room for a second full run in a 15-minute lease: the machine takes a minute or two to start,
# and the transfers count too, so a rerun must be a short, targeted one (one test case, say).
deadline="${STEEL_GPU_DEADLINE:-420}"
reserve=10 # seconds kept at the end: a timed-out step's 5 s to die after its TERM, the summary
within() { # the seconds a run may take: at most $1, never past the deadline, 0 if under 15 left
    local left=$(( deadline - reserve - (SECONDS - started) ))
    (( left > $1 )) && left=$1
    (( left < 15 )) && left=0
    echo "$left"
}
# What a step that never ran reports (verdict below), beside its program's own exit status.
not_run_deadline=250 # the deadline came first
not_run_gpu_hang=251 # the GPU tests timed out before it
not_run_build=252    # the build failed
# seconds, command...: runs it under a timeout inside the deadline and returns its status (124 or
# 137 when the timeout ended it), or not_run_deadline without running it when under 15 s are left.
required() {
    local seconds
    seconds=$(within "$1")
    shift
    if [ "$seconds" -eq 0 ]; then
        echo "not run: the check is at its deadline (STEEL_GPU_DEADLINE=${deadline}s)"
        return $not_run_deadline
    fi
    timeout -k 5 "$seconds" "$@"
}
bounded() { # seconds, command...: as required, for the best-effort runs: says how each ended
    local seconds
    seconds=$(within "$1")
    shift
    if [ "$seconds" -eq 0 ]; then echo "not run: the check is near its deadline"; return 0; fi
    timeout -k 5 "$seconds" "$@"
    echo "rc $? (timeout ${seconds}s)"
}
gpu_rc=$not_run_build cpu_rc=$not_run_build example_rc=$not_run_build demo_rc=$not_run_build
exports_rc=$not_run_build bench_rc=$not_run_build
libraries_line="not checked (built here)"

verdict() {
    case "$1" in
    0) echo pass ;;
    77) echo "SKIPPED (no device seen)" ;;
    124 | 137) echo "TIMED OUT" ;;
    "$not_run_deadline") echo "NOT RUN (deadline)" ;;
    "$not_run_gpu_hang") echo "NOT RUN (the GPU tests timed out)" ;;
    "$not_run_build") echo "NOT RUN (no build)" ;;
    *) echo "FAIL ($1)" ;;
    esac
}
write_summary() {
    {
        echo
        echo "== summary after $(( SECONDS - started ))s of ${deadline}s (logs in $log_dir)"
        echo "device:           $device_line"
        echo "programs:         $stage_line"
        echo "libraries:        $libraries_line"
        echo "GPU tests:        $(verdict $gpu_rc)   $(grep -sE '^\[doctest\] (test cases|assertions)' "$log_dir/steel_cuda_tests.log" | tr '\n' ' ')"
        echo "CPU CUDA tests:   $(verdict $cpu_rc)"
        echo "CUDA example:     $(verdict $example_rc)"
        echo "demo on the GPU:  $(verdict $demo_rc)"
        echo "exports:          $(verdict $exports_rc)"
        echo "bench_cuda:       $(verdict $bench_rc)"
        # The 65,536-copy lines (the serial propagation's two layouts among them: legged/p, legged/pw).
        grep -sE '^(gpu|GPU:|total )|^ *world +copies|^[a-z0-9/]+ +65536 ' "$log_dir/bench_cuda.log" | sed 's/^/  /'
    } | tee "$log_dir/summary.log"
    keep summary.log
}

step "device"
if command -v nvidia-smi >/dev/null; then
    device_line=$(timeout -k 5 20 nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap \
        --format=csv,noheader 2>&1) || device_line="nvidia-smi failed (rc $?): $device_line"
else
    device_line="nvidia-smi not found"
fi
echo "$device_line"

# The example and the demo link libsteel.so.0, which lies in $build (a staged one too).
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# A stage carried from another machine may need a library this one lacks: say which, first.
if [ -n "${STEEL_GPU_PREBUILT:-}" ]; then
    step "libraries of the prebuilt programs (ldd)"
    missing=""
    for program in "$build"/libsteel.so.* "$build"/tests/steel_tests "$build"/tests/steel_cuda_tests \
        "$build"/bench/bench_cuda "$build"/examples/steel_example_cuda_falling_boxes \
        "$build"/examples/steel_demo; do
        if [ ! -e "$program" ]; then
            echo "$program: missing from the stage"
            missing+=" ${program#"$build"/}(missing)"
        elif command -v ldd >/dev/null; then
            lines=$(timeout 20 ldd "$program" 2>&1 | grep 'not found')
            if [ -n "$lines" ]; then
                echo "$program:"
                echo "$lines"
                missing+=" ${program#"$build"/}:$(echo "$lines" | awk '{ printf " %s", $1 }')"
            fi
        fi
    done
    if ! command -v ldd >/dev/null; then
        libraries_line="not checked (no ldd)${missing}"
    elif [ -z "$missing" ]; then
        libraries_line="every one found"
    else
        libraries_line="NOT FOUND:$missing"
    fi
    echo "$libraries_line"
fi

if [ -z "${STEEL_GPU_PREBUILT:-}" ]; then
    for tool in cmake make g++; do
        command -v "$tool" >/dev/null || { echo "gpu_check: $tool is missing; see STEEL_GPU_PREBUILT"; exit 2; }
    done
    step "configure $build (Release, STEEL_CUDA=ON)"
    rm -rf "$build"
    mkdir -p "$build"
    required 120 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTEEL_CUDA=ON \
        -DSTEEL_BUILD_TESTS=ON -DSTEEL_BUILD_BENCH=ON -DSTEEL_BUILD_EXAMPLES=ON \
        -DSTEEL_BUILD_LUA=OFF >"$build/configure.log" 2>&1
    build_rc=$?
    if [ $build_rc -eq 0 ]; then
        step "build (-j $jobs)"
        required "$deadline" cmake --build "$build" -j "$jobs" --target steel steel_tests \
            steel_cuda_tests bench_cuda steel_example_cuda_falling_boxes steel_demo \
            >/dev/null 2>"$build/build.err"
        build_rc=$?
        [ $build_rc -eq 0 ] || tail -40 "$build/build.err"
    else
        tail -40 "$build/configure.log"
    fi
    if [ $build_rc -ne 0 ]; then
        mkdir -p "$log_dir"
        stage_line="build FAILED (rc $build_rc; 124 or 137: timed out, $not_run_deadline: no time left)"
        write_summary
        exit 2
    fi
fi
mkdir -p "$log_dir"
# A stage built from other sources still runs (the device's time is not wasted twice), but says so.
if [ -n "${STEEL_GPU_PREBUILT:-}" ]; then
    if [ "$(cat "$build/SOURCES" 2>/dev/null)" = "$(timeout 60 bash scripts/source_fingerprint.sh)" ]; then
        stage_line="built from these sources"
    else
        stage_line="STALE: built from other sources than these (rerun scripts/gpu_prebuild.sh)"
    fi
    step "prebuilt stage $build: $stage_line"
else
    stage_line="built here"
fi

step "GPU tests (steel_cuda_tests)"
# The cases in the order they run, then the run, line-buffered, each case's time printed as it
# ends: a case that hangs is the one after the last one timed. Listing makes a CUDA batch first,
# so it can hang too, on a device that does not answer: then the tests are not started.
required 30 "$build/tests/steel_cuda_tests" --list-test-cases >"$log_dir/steel_cuda_tests.log" 2>&1
gpu_rc=$?
if [ $gpu_rc -eq 124 ] || [ $gpu_rc -eq 137 ]; then
    echo "listing the GPU tests timed out (rc $gpu_rc): the tests were not started" \
        >>"$log_dir/steel_cuda_tests.log"
else
    required 240 stdbuf -oL "$build/tests/steel_cuda_tests" --duration=true \
        >>"$log_dir/steel_cuda_tests.log" 2>&1
    gpu_rc=$?
fi
keep steel_cuda_tests.log
tail -25 "$log_dir/steel_cuda_tests.log"
gpu_hung=0
if [ $gpu_rc -eq 124 ] || [ $gpu_rc -eq 137 ]; then
    gpu_hung=1
    echo "the GPU tests timed out: the example and the demo get 30 s each, bench_cuda is not run"
fi

step "CUDA-related CPU tests (steel_tests)"
required 120 "$build/tests/steel_tests" -tc='*CUDA*,*dense_entry*,*device-pointer*,*default structs*,simt*,device buffers*' \
    >"$log_dir/steel_tests.log" 2>&1
cpu_rc=$?
keep steel_tests.log
tail -4 "$log_dir/steel_tests.log"

step "CUDA example (falling_boxes)"
required $(( gpu_hung ? 30 : 60 )) "$build/examples/steel_example_cuda_falling_boxes" \
    >"$log_dir/example.log" 2>&1
example_rc=$?
keep example.log
tail -8 "$log_dir/example.log"

step "steel_demo --backend cuda (the README's demo on the GPU)"
required $(( gpu_hung ? 30 : 120 )) "$build/examples/steel_demo" --backend cuda --worlds 1000 \
    >"$log_dir/demo.log" 2>&1
demo_rc=$?
keep demo.log
grep -E '^(Steel|options|  1 thread|  forced|demo finished|not run)|SKIP|failed|error while loading' "$log_dir/demo.log" | head -12

step "exported symbols"
library="$build/libsteel.so"
[ -e "$library" ] || library=$(ls "$build"/libsteel.so.* | head -1) # a carried link may not survive
required 30 sh tests/check_exports.sh "$library" >"$log_dir/exports.log" 2>&1
exports_rc=$?
cat "$log_dir/exports.log" # not kept in $OUT: the device tool brings back 8 files at most

step "bench_cuda"
if [ $gpu_hung -eq 1 ]; then
    echo "not run: the GPU tests timed out" | tee "$log_dir/bench_cuda.log"
    bench_rc=$not_run_gpu_hang
else
    # shellcheck disable=SC2086
    required 240 "$build/bench/bench_cuda" ${STEEL_GPU_BENCH_ARGS---quick} >"$log_dir/bench_cuda.log" 2>&1
    bench_rc=$?
    cat "$log_dir/bench_cuda.log"
fi
keep bench_cuda.log

# What only a device can show beyond speed, where the tools work (on some device runtimes
# neither reads the hardware): best effort, each run bounded by the deadline as above.
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
    # About 145 s on an H200 (2026-12-04): the trees test alone takes 111 s under memcheck.
    echo "## memcheck: every path's kernels, pre-elimination, the propagation kernels"
    bounded 160 "$sanitizer" --tool memcheck --error-exitcode 9 "$build/tests/steel_cuda_tests" \
        -tc='GPU general sweep and dense path*,GPU bilateral pre-elimination*,GPU propagation solve*'
    echo "## memcheck: the example (values update, async solve, device reads, a graph)"
    bounded 40 "$sanitizer" --tool memcheck --error-exitcode 9 \
        "$build/examples/steel_example_cuda_falling_boxes"
    # The colored kernel's racecheck (-tc='GPU propagation solve*free bodies*') takes 99 s on an
    # H200, more than this check can spare before ncu: docs/cuda.md gives it as a command of its own.
    echo "## racecheck (shared memory): the general and dense kernels"
    bounded 45 "$sanitizer" --tool racecheck --error-exitcode 9 "$build/tests/steel_cuda_tests" \
        -tc='GPU isolates a world*'
    echo "## synccheck (warp synchronization)"
    bounded 45 "$sanitizer" --tool synccheck --error-exitcode 9 "$build/tests/steel_cuda_tests" \
        -tc='GPU isolates a world*,GPU propagation solve*free bodies*,GPU bilateral pre-elimination*'
}
if [ $gpu_rc -eq 77 ] || [ $gpu_rc -eq 124 ] || [ $gpu_rc -eq 137 ] || [ $gpu_rc -ge 250 ] ||
    [ -z "$sanitizer" ] || [ "$(within 60)" -lt 60 ]; then
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
        profile pile8 65536 general_sweep_kernel
        profile pile8/lb 65536 general_sweep_kernel_bounded
        profile legged 65536 dense_path_kernel
        profile pile8/c 16384 propagation_kernel
        profile legged/p 65536 propagation_thread_kernel
    } >"$log_dir/ncu.log" 2>&1
    keep ncu.log
    grep -E '^## |^rc |^not run|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Duration|Memory Throughput|Compute \(SM\) Throughput|==ERROR==' "$log_dir/ncu.log" | head -60
fi

write_summary
[ $gpu_rc -eq 0 ] && [ $cpu_rc -eq 0 ] && [ $example_rc -eq 0 ] && [ $demo_rc -eq 0 ] && [ $exports_rc -eq 0 ] && [ $bench_rc -eq 0 ]
