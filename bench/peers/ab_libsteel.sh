#!/bin/bash
# Interleaved A/B timing of two libsteel builds with the same peer_steel program: for each scene
# and copy count, runs A, B, A, B, ... and prints both sets of ns per row update, sorted. peer_steel
# finds libsteel through its RUNPATH; LD_LIBRARY_PATH overrides it, so each run loads the copy in
# the directory named. Interleaving spreads the machine's drift over both builds alike; pin to one
# vCPU (CPU=1) where the vCPUs differ in how busy their host cores are.
#
#   bash bench/peers/ab_libsteel.sh DIR_A DIR_B        # each DIR holds a libsteel.so.0
#
# REPEATS (default 3), CPU (default: no pinning), VARIANT (peer_steel --variant, default default)
# and SCENES (a |-separated list, default the five peer scenes below) change what runs.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,11p' "$0"
    exit 2
fi
a=$1 b=$2
cd "$(dirname "$0")/../.."
peer=${PEER_STEEL:-build-peers/bench/peers/peer_steel}
pin=()
if [ -n "${CPU:-}" ]; then pin=(taskset -c "$CPU"); fi
run() { # library dir, scene: one line "copies:ns" per copy count
    LD_LIBRARY_PATH=$1 "${pin[@]}" "$peer" --variant "${VARIANT:-default}" --scene "$2" \
        --sweeps 20 --threads 1 | awk -F, '$1 == "peer" && $2 == "steel" {print $5 ":" $13}'
}
IFS='|' read -r -a scenes <<<"${SCENES:-stack 5|stack 20|pile 100|chain 10|arm+box}"
for scene in "${scenes[@]}"; do
    out_a="" out_b=""
    for _ in $(seq "${REPEATS:-3}"); do
        out_a="$out_a $(run "$a" "$scene")"
        out_b="$out_b $(run "$b" "$scene")"
    done
    for copies in $(echo "$out_a" | tr ' ' '\n' | grep . | cut -d: -f1 | sort -un); do
        pick() { echo "$1" | tr ' ' '\n' | grep "^$copies:" | cut -d: -f2 | sort -n | tr '\n' ' '; }
        echo "$scene x $copies: A $(pick "$out_a")| B $(pick "$out_b")"
    done
done
