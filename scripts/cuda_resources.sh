#!/usr/bin/env bash
# What ptxas gives each kernel of the CUDA backend: registers per thread, stack, spills. No GPU
# needed, only nvcc. A kernel that spills, or whose registers cap the warps an SM can hold,
# shows here before any device run (docs/cuda.md, "Registers and occupancy"):
#
#   bash scripts/cuda_resources.sh      # about 1 minute: one Release compile of device_batch.cu
#
# Environment: STEEL_RESOURCES_BUILD_DIR (default build-cuda-resources, recreated).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${STEEL_RESOURCES_BUILD_DIR:-build-cuda-resources}"
command -v c++filt >/dev/null || { echo "cuda_resources: c++filt (binutils) is missing"; exit 2; }

rm -rf "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTEEL_CUDA=ON -DSTEEL_BUILD_TESTS=OFF \
    -DSTEEL_BUILD_BENCH=OFF -DSTEEL_BUILD_EXAMPLES=OFF -DSTEEL_BUILD_LUA=OFF \
    -DCMAKE_CUDA_FLAGS=-Xptxas=-v >/dev/null
# The library's own flags (--fmad=false, the architectures) plus ptxas's report.
make -C "$build" impl/cuda/device_batch.cu.o 2>&1 | grep -E '^ptxas (info|warning)|bytes stack frame' >"$build/ptxas.txt"

# Occupancy from registers alone: an SM has 65,536 registers in four quarters, one a scheduler;
# each quarter hands its 16,384 to warps in units of 256 (ncu on an H200 counted 20 warps of 96
# registers, not 65,536 / 3,072 = 21). At most 64 warps, in whole blocks. Blocks are 4 warps
# but for the thread-per-world propagation kernel's 1 (kThreadKernelBlock) and the precision
# conversions' 8 (kGridStrideThreads; kernel_launches.cuh).
echo "| kernel | registers | stack bytes | spill stores / loads | warps per SM (registers, whole blocks) |"
echo "|---|---|---|---|---|"
awk '
    /Compiling entry function/ { name = $0; sub(/.*function .\047?/, "", name); sub(/\047 for.*/, "", name) }
    /bytes stack frame/ { stack = $1; spill = $5 " / " $9 }
    /Used [0-9]+ registers/ {
        for (i = 1; i <= NF; ++i) if ($(i + 1) == "registers,") regs = $i
        unit = int((regs * 32 + 255) / 256) * 256
        block = name ~ /propagation_thread_kernel/ ? 1 : name ~ /convert_kernel/ ? 8 : 4
        warps = int(4 * int(16384 / unit) / block) * block; if (warps > 64) warps = 64
        print name ";" regs ";" stack ";" spill ";" warps
    }' "$build/ptxas.txt" |
    while IFS=';' read -r name regs stack spill warps; do
        pretty=$(echo "$name" | c++filt | sed -E 's/^void steel::cuda::([a-z_]+)<([a-z, ]+)>.*/\1<\2>/')
        echo "| \`$pretty\` | $regs | $stack | $spill | $warps |"
    done | sort
