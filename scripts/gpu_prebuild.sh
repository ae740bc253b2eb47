#!/usr/bin/env bash
# Builds what scripts/gpu_check.sh runs on this machine (which has cmake, doctest and
# flatbuffers; a device machine's image may lack the last two) and stages it in
# build-gpu-prebuilt/: libsteel, steel_tests, steel_cuda_tests, bench_cuda, the CUDA example
# (falling_boxes) and steel_demo, about 25 MB, linked only against the C and C++ runtimes (the
# two examples against libsteel too, found there through LD_LIBRARY_PATH). Then the device check builds nothing:
#
#   bash scripts/gpu_prebuild.sh
#   # with the device tool, from the repository root:
#   #   run(command="STEEL_GPU_PREBUILT=build-gpu-prebuilt bash scripts/gpu_check.sh",
#   #       carry=["build-gpu-prebuilt"], timeout_s=480)
#
# Environment: STEEL_GPU_BUILD_DIR (default build-gpu), STEEL_JOBS (default nproc).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${STEEL_GPU_BUILD_DIR:-build-gpu}"
stage=build-gpu-prebuilt

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTEEL_CUDA=ON -DSTEEL_BUILD_TESTS=ON \
    -DSTEEL_BUILD_BENCH=ON -DSTEEL_BUILD_EXAMPLES=ON -DSTEEL_BUILD_LUA=OFF >/dev/null
cmake --build "$build" -j "${STEEL_JOBS:-$(nproc)}" \
    --target steel steel_tests steel_cuda_tests bench_cuda steel_example_cuda_falling_boxes \
    steel_demo >/dev/null

rm -rf "$stage"
mkdir -p "$stage/tests" "$stage/bench" "$stage/examples"
# Under its soname, which the example loads; libsteel.so beside it for the exported-symbols check.
soname=$(readelf -d "$build/libsteel.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
cp -L "$build/libsteel.so" "$stage/$soname"
ln -s "$soname" "$stage/libsteel.so"
cp "$build/tests/steel_tests" "$build/tests/steel_cuda_tests" "$stage/tests/"
cp "$build/bench/bench_cuda" "$stage/bench/"
cp "$build/examples/steel_example_cuda_falling_boxes" "$build/examples/steel_demo" "$stage/examples/"
# What they were built from, for gpu_check.sh to compare with the sources beside it.
bash scripts/source_fingerprint.sh >"$stage/SOURCES"
du -sh "$stage"
