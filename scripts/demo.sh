#!/usr/bin/env bash
# Builds the Steel demo (examples/demo/steel_demo.cpp) in a Release build and runs it.
#
#   bash scripts/demo.sh                  # from anywhere; installs missing Debian packages first
#   bash scripts/demo.sh --threads 4      # arguments go to steel_demo (try --help)
#
# Environment: STEEL_BUILD_DIR (default build), STEEL_JOBS (parallel build jobs, default 2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${STEEL_BUILD_DIR:-build}"
jobs="${STEEL_JOBS:-2}"

# Installs the named Debian packages that are not installed yet (as root, or through sudo).
ensure_packages() {
    if ! command -v dpkg >/dev/null 2>&1; then
        echo "demo.sh: no dpkg here; assuming $* (or equivalents) are installed" >&2
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
            echo "demo.sh: need root (or sudo) to install: ${missing[*]}" >&2
            exit 1
        }
        sudo=(sudo)
    fi
    echo "== installing ${missing[*]}"
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# flatbuffers-compiler (flatc) and libflatbuffers-dev: the snapshot code is generated from its schema
# at build time; the configure step needs them (and doctest-dev, for the tests it also configures).
ensure_packages cmake g++ make doctest-dev pkg-config flatbuffers-compiler libflatbuffers-dev

echo "== configuring $build_dir (Release)"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSTEEL_SANITIZE=OFF -DSTEEL_BUILD_EXAMPLES=ON
echo "== building steel_demo"
cmake --build "$build_dir" --target steel_demo -j "$jobs"
echo "== running steel_demo $*"
"$build_dir/examples/steel_demo" "$@"
