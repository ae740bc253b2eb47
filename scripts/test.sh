#!/usr/bin/env bash
# Builds Steel and runs every test twice:
#   1. a Release build in build/ (library, tests, benchmarks, examples), then ctest;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/, then ctest.
# Installs missing Debian packages first. Exits non-zero on the first failure.
#
#   bash scripts/test.sh                  # from anywhere; this is also what CI runs (.ci/run)
#
# Environment: STEEL_BUILD_DIR (default build), STEEL_ASAN_BUILD_DIR (default build-asan),
# STEEL_JOBS (parallel build jobs, default 2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${STEEL_BUILD_DIR:-build}"
asan_dir="${STEEL_ASAN_BUILD_DIR:-build-asan}"
jobs="${STEEL_JOBS:-2}"

# Installs the named Debian packages that are not installed yet (as root, or through sudo).
ensure_packages() {
    if ! command -v dpkg >/dev/null 2>&1; then
        echo "test.sh: no dpkg here; assuming $* (or equivalents) are installed" >&2
        return 0
    fi
    local missing=() package status
    for package in "$@"; do
        status=$(dpkg -s "$package" 2>/dev/null || true)
        [[ "$status" == *"Status: install ok installed"* ]] || missing+=("$package")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || {
            echo "test.sh: need root (or sudo) to install: ${missing[*]}" >&2
            exit 1
        }
        sudo=(sudo)
    fi
    echo "== installing ${missing[*]}"
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# Runs ctest in a build folder; says so loudly when no test is registered at all.
run_ctest() {
    local dir="$1"
    local count
    count=$(cd "$dir" && ctest -N | sed -n 's/^Total Tests: //p')
    if [ "${count:-0}" -eq 0 ]; then
        echo "test.sh: WARNING: no tests are registered in $dir" >&2
    fi
    (cd "$dir" && ctest --output-on-failure)
}

# cmake and g++ build; make drives the build; doctest-dev is the test framework; pkg-config for
# the install checks; binutils gives nm (tests/check_exports.sh); flatbuffers-compiler (flatc) and
# libflatbuffers-dev build the snapshot code from its schema.
ensure_packages cmake g++ make doctest-dev pkg-config binutils flatbuffers-compiler libflatbuffers-dev

echo "== [1/2] Release build in $build_dir"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSTEEL_SANITIZE=OFF \
    -DSTEEL_BUILD_TESTS=ON -DSTEEL_BUILD_BENCH=ON -DSTEEL_BUILD_EXAMPLES=ON
# Everything, the benchmarks included, so they keep compiling.
cmake --build "$build_dir" -j "$jobs"
run_ctest "$build_dir"

echo "== [2/2] AddressSanitizer + UndefinedBehaviorSanitizer build in $asan_dir"
cmake -S . -B "$asan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEEL_SANITIZE=ON \
    -DSTEEL_BUILD_TESTS=ON -DSTEEL_BUILD_BENCH=OFF -DSTEEL_BUILD_EXAMPLES=ON
cmake --build "$asan_dir" -j "$jobs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
run_ctest "$asan_dir"

echo "== all tests passed (Release and ASan+UBSan)"
