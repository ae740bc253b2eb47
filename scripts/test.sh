#!/usr/bin/env bash
# Checks that every source is formatted by .clang-format (scripts/format.sh --check), then builds
# Steel and runs every test twice, the doctest suite a third time, and compiles the library with
# clang:
#   1. a Release build in build/ (library, tests, benchmarks, examples), then ctest;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/, then ctest;
#   3. a ThreadSanitizer build of the library and steel_tests in build-tsan/, then steel_tests:
#      the worker pool's races, and in the emulated-GPU cases the lanes of a warp that touch the
#      same memory with no __syncwarp between (docs/cuda.md). Left out: the two tests of the
#      emulation's run orders, which TSan does not need and which deliberately race.
#   4. a clang build of the library in build-clang/, warnings as errors: the fuzzers' compiler
#      (fuzz/README.md), which rejects some code GCC takes (inline asm constraints, for one).
# Installs missing Debian packages first. Exits non-zero on the first failure.
#
# The bindings and examples run in both builds. A test whose compiler or tool is missing (mcs and
# mono, cargo, lua5.4, gnuplot) reports SKIP with the reason; the packages below make them all
# run except the Rust tests where the machine has no cargo. In the ASan build, programs Steel does
# not build (lua5.4, mono, cargo's executables) load the sanitized libsteel with libasan and
# libstdc++ preloaded and leak checks off (CMakeLists.txt, STEEL_FOREIGN_RUNTIME_ENV); the Lua
# module's leak checks run under steel_lua_host, which is built with the sanitizers.
#
#   bash scripts/test.sh                  # from anywhere; this is also what CI runs (.ci/run)
#
# Environment: STEEL_BUILD_DIR (default build), STEEL_ASAN_BUILD_DIR (default build-asan),
# STEEL_TSAN_BUILD_DIR (default build-tsan), STEEL_CLANG_BUILD_DIR (default build-clang),
# STEEL_JOBS (parallel build jobs and test processes; default: one per processor, at most one per
# 2 GiB of available memory).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${STEEL_BUILD_DIR:-build}"
asan_dir="${STEEL_ASAN_BUILD_DIR:-build-asan}"
tsan_dir="${STEEL_TSAN_BUILD_DIR:-build-tsan}"
clang_dir="${STEEL_CLANG_BUILD_DIR:-build-clang}"
# One job per processor, but no more than one per 2 GiB of available memory: the sanitized
# builds' largest translation units take over 1 GiB of compiler memory each.
default_jobs() {
    local cpus memory_kib by_memory
    cpus=$(nproc 2>/dev/null || echo 2)
    memory_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
    by_memory=$((memory_kib / (2 * 1024 * 1024)))
    if [ "$by_memory" -lt 1 ]; then by_memory=1; fi
    if [ "$cpus" -lt "$by_memory" ]; then echo "$cpus"; else echo "$by_memory"; fi
}
jobs="${STEEL_JOBS:-$(default_jobs)}"

script_name=test.sh
# shellcheck source=scripts/packages.sh
source scripts/packages.sh

# Runs ctest in a build folder, $jobs tests at a time (tests that share a file are ordered or
# locked in CMake, and none has a wall-clock threshold); says so loudly when no test is
# registered at all.
run_ctest() {
    local dir="$1"
    local count
    count=$(cd "$dir" && ctest -N | sed -n 's/^Total Tests: //p')
    if [ "${count:-0}" -eq 0 ]; then
        echo "test.sh: WARNING: no tests are registered in $dir" >&2
    fi
    (cd "$dir" && ctest --output-on-failure -j "$jobs")
}

# cmake and g++ build; make drives the build; doctest-dev is the test framework; pkg-config for
# the install checks; binutils gives nm (tests/check_exports.sh); flatbuffers-compiler (flatc) and
# libflatbuffers-dev build the snapshot code from its schema. For the bindings and examples:
# liblua5.4-dev builds the Lua module and lua5.4 runs its suite a second time under the stock
# interpreter; mono-mcs and mono-runtime build and run the C# example; gnuplot-nox draws the Lua
# experiments' PNGs. cargo is not a Debian package here: the Rust example uses the machine's
# (rustup's, found on PATH or in ~/.cargo/bin) and its tests report SKIP where there is none.
# clang-format-14 checks the formatting; clang-14 compiles the library a second time.
ensure_packages cmake g++ make doctest-dev pkg-config binutils flatbuffers-compiler libflatbuffers-dev \
    liblua5.4-dev lua5.4 mono-mcs mono-runtime gnuplot-nox clang-format-14 clang-14

# The SIMD widths this machine has, from the kernel's view of the processor: the tests that
# compare the widths fail, instead of skipping, one the library does not detect (tests/support.hpp).
isas=""
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then isas="avx2"; fi
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then isas="$isas,avx512"; fi
export STEEL_TEST_REQUIRE_ISAS="${STEEL_TEST_REQUIRE_ISAS-$isas}"

echo "== Formatting (scripts/format.sh --check)"
bash scripts/format.sh --check

echo "== [1/4] Release build in $build_dir"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSTEEL_SANITIZE=OFF \
    -DSTEEL_BUILD_TESTS=ON -DSTEEL_BUILD_BENCH=ON -DSTEEL_BUILD_EXAMPLES=ON
# Everything, the benchmarks included, so they keep compiling.
cmake --build "$build_dir" -j "$jobs"
run_ctest "$build_dir"

echo "== [2/4] AddressSanitizer + UndefinedBehaviorSanitizer build in $asan_dir"
cmake -S . -B "$asan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEEL_SANITIZE=ON \
    -DSTEEL_BUILD_TESTS=ON -DSTEEL_BUILD_BENCH=OFF -DSTEEL_BUILD_EXAMPLES=ON
cmake --build "$asan_dir" -j "$jobs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
run_ctest "$asan_dir"

echo "== [3/4] ThreadSanitizer build in $tsan_dir (libsteel and steel_tests)"
cmake -S . -B "$tsan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEEL_SANITIZE_THREAD=ON -DSTEEL_CUDA=OFF \
    -DSTEEL_BUILD_TESTS=ON -DSTEEL_BUILD_BENCH=OFF -DSTEEL_BUILD_EXAMPLES=OFF -DSTEEL_BUILD_LUA=OFF
cmake --build "$tsan_dir" -j "$jobs" --target steel_tests
TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}" \
    "$tsan_dir/tests/steel_tests" --test-case-exclude='Emulated CUDA kernels give the same bits*,simt: running a launch in two opposite orders*'

echo "== [4/4] clang build of libsteel in $clang_dir (warnings are errors)"
cmake -S . -B "$clang_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DSTEEL_CUDA=OFF -DSTEEL_BUILD_TESTS=OFF -DSTEEL_BUILD_BENCH=OFF \
    -DSTEEL_BUILD_EXAMPLES=OFF -DSTEEL_BUILD_LUA=OFF
cmake --build "$clang_dir" -j "$jobs" --target steel

echo "== all tests passed (Release, ASan+UBSan and ThreadSanitizer; the library builds with clang)"
