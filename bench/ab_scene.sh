#!/bin/bash
# Interleaved A/B timing of two bench_scene builds on a noisy machine: for each scene and thread
# count, runs A, B, A, B, ... five times each and prints both sets of build us/world sorted (the
# median is the third). Interleaving spreads the machine's drift over both builds alike.
#
#   bash bench/ab_scene.sh OLD/bench/bench_scene NEW/bench/bench_scene [COLUMN]
#
# COLUMN is the table column to compare (8: build us/world, the default; 9: solve us/world;
# 10: upload+solve us/world). BENCH_ARGS adds options to both runs, e.g. BENCH_ARGS=--moving.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,9p' "$0"
    exit 2
fi
a=$1 b=$2 column=${3:-8}
value() { # bench, threads, scene, worlds
    # shellcheck disable=SC2086 # BENCH_ARGS is a list of options
    "$1" --threads "$2" --only "$3" --worlds "$4" ${BENCH_ARGS:-} | tail -1 | awk -F'|' -v c="$column" '{print $c}'
}
sorted() { tr ' ' '\n' | grep . | sort -n | tr '\n' ' '; }
for scene in "legged robot:16384" "box pile 100:1024" "box stack 5:4096" "arm with box:16384"; do
    name=${scene%%:*} worlds=${scene##*:}
    for threads in 1 2; do
        va="" vb=""
        for _ in 1 2 3 4 5; do
            va="$va $(value "$a" "$threads" "$name" "$worlds")"
            vb="$vb $(value "$b" "$threads" "$name" "$worlds")"
        done
        echo "$name x $worlds, $threads thread(s): A $(echo "$va" | sorted)| B $(echo "$vb" | sorted)"
    done
done
