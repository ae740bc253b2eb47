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
#   4. print a compact summary, and exit non-zero if a test failed or was skipped.
#
#   bash scripts/gpu_check.sh            # from anywhere
#
# Environment: STEEL_GPU_BUILD_DIR (default build-gpu, recreated), STEEL_JOBS (default nproc),
# STEEL_GPU_PREBUILT=DIR to skip step 1 and use what scripts/gpu_prebuild.sh staged elsewhere
# (for a machine without cmake, doctest or flatbuffers: the device image has no doctest or
# flatbuffers headers), STEEL_GPU_BENCH_ARGS (default "--quick"; "" for the full timing loops,
# about 30 s more). Where $OUT is set (the device tool), the logs are copied there too.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${STEEL_GPU_PREBUILT:-${STEEL_GPU_BUILD_DIR:-build-gpu}}"
jobs="${STEEL_JOBS:-$(nproc)}"
log_dir="$build/gpu-check"
started=$SECONDS
step() { echo "== [$(( SECONDS - started ))s] $*"; }

step "device"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader
else
    echo "nvidia-smi not found"
fi

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
        steel_example_cuda_falling_boxes >/dev/null 2>"$build/build.err" ||
        { tail -40 "$build/build.err"; exit 2; }
fi
mkdir -p "$log_dir"

step "GPU tests (steel_cuda_tests)"
timeout 300 "$build/tests/steel_cuda_tests" >"$log_dir/steel_cuda_tests.log" 2>&1
gpu_rc=$?
tail -25 "$log_dir/steel_cuda_tests.log"

step "CUDA-related CPU tests (steel_tests)"
timeout 120 "$build/tests/steel_tests" -tc='*CUDA*,*dense_entry*,*device-pointer*,*default structs*,simt*' \
    >"$log_dir/steel_tests.log" 2>&1
cpu_rc=$?
tail -4 "$log_dir/steel_tests.log"

step "CUDA example (falling_boxes)"
LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 60 \
    "$build/examples/steel_example_cuda_falling_boxes" >"$log_dir/example.log" 2>&1
example_rc=$?
tail -8 "$log_dir/example.log"

step "exported symbols"
library="$build/libsteel.so"
[ -e "$library" ] || library=$(ls "$build"/libsteel.so.* | head -1) # a carried link may not survive
sh tests/check_exports.sh "$library" >"$log_dir/exports.log" 2>&1
exports_rc=$?
cat "$log_dir/exports.log"

step "bench_cuda"
# shellcheck disable=SC2086
timeout 240 "$build/bench/bench_cuda" ${STEEL_GPU_BENCH_ARGS---quick} >"$log_dir/bench_cuda.log" 2>&1
bench_rc=$?
cat "$log_dir/bench_cuda.log"

verdict() { case "$1" in 0) echo pass ;; 77) echo "SKIPPED (no device seen)" ;; 124) echo "TIMED OUT" ;; *) echo "FAIL ($1)" ;; esac; }
echo
echo "== summary after $(( SECONDS - started ))s (logs in $log_dir)"
echo "GPU tests:        $(verdict $gpu_rc)   $(grep -E '^\[doctest\] (test cases|assertions)' "$log_dir/steel_cuda_tests.log" | tr '\n' ' ')"
echo "CPU CUDA tests:   $(verdict $cpu_rc)"
echo "CUDA example:     $(verdict $example_rc)"
echo "exports:          $(verdict $exports_rc)"
echo "bench_cuda:       $(verdict $bench_rc)"
# The 65,536-copy lines (the serial propagation's two layouts among them: legged/p, legged/pw).
grep -E '^(gpu|GPU:|total )|^ *world +copies|^[a-z0-9/]+ +65536 ' "$log_dir/bench_cuda.log" | sed 's/^/  /'
if [ -n "${OUT:-}" ] && [ -d "${OUT}" ]; then cp "$log_dir"/*.log "$OUT"/; fi
[ $gpu_rc -eq 0 ] && [ $cpu_rc -eq 0 ] && [ $example_rc -eq 0 ] && [ $exports_rc -eq 0 ] && [ $bench_rc -eq 0 ]
