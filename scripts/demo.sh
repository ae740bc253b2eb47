#!/usr/bin/env bash
# Builds the Steel demo (examples/demo/steel_demo.cpp) in a Release build and runs it.
#
#   bash scripts/demo.sh                  # from anywhere; installs missing Debian packages first
#   bash scripts/demo.sh --threads 4      # arguments go to steel_demo (try --help)
#   bash scripts/demo.sh --backend cuda   # the same on the GPU (a build with nvcc, and a device)
#
# Environment: STEEL_BUILD_DIR (default build), STEEL_JOBS (parallel build jobs, default 2).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build_dir="${STEEL_BUILD_DIR:-build}"
jobs="${STEEL_JOBS:-2}"

script_name=demo.sh
# shellcheck source=scripts/packages.sh
source scripts/packages.sh

# flatbuffers-compiler (flatc) and libflatbuffers-dev: the snapshot code is generated from its schema
# at build time; the configure step needs them (and doctest-dev, for the tests it also configures).
ensure_packages cmake g++ make doctest-dev pkg-config flatbuffers-compiler libflatbuffers-dev

echo "== configuring $build_dir (Release)"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSTEEL_SANITIZE=OFF -DSTEEL_BUILD_EXAMPLES=ON
echo "== building steel_demo"
cmake --build "$build_dir" --target steel_demo -j "$jobs"
echo "== running steel_demo $*"
"$build_dir/examples/steel_demo" "$@"
