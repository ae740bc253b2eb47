#!/bin/sh
# Runs one experiment script and checks the PNG it must write.
#
#   run_experiment.sh LUA SCRIPT OUTPUT_DIR PNG_NAME
#
# Exits 77 (ctest: SKIP) when gnuplot is missing.
set -eu
lua="$1" script="$2" output_dir="$3" png="$4"
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP: gnuplot not found; apt-get install gnuplot-nox to draw the experiments' plots"
    exit 77
fi
rm -rf "$output_dir"
"$lua" "$script" "$output_dir"
if [ ! -s "$output_dir/$png" ]; then
    echo "$script did not write a non-empty $output_dir/$png"
    exit 1
fi
echo "$output_dir/$png: $(wc -c < "$output_dir/$png") bytes"
