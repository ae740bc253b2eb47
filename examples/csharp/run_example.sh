#!/bin/sh
# Builds the C# example with mcs and runs it with mono against a libsteel directory.
#
#   run_example.sh SOURCE_DIR OUTPUT_DIR LIBSTEEL_DIR
#
# Exits 77 (ctest: SKIP) when mcs or mono is missing. STEEL_EXAMPLE_PRELOAD (set by the
# sanitizer build) is preloaded into mono only, not into the compiler.
set -eu
source_dir="$1" output_dir="$2" library_dir="$3"
for tool in mcs mono; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIP: $tool not found; apt-get install mono-mcs mono-runtime to build and run the C# example"
        exit 77
    fi
done
mkdir -p "$output_dir"
mcs -warn:4 -warnaserror+ -out:"$output_dir/SteelExample.exe" "$source_dir/Steel.cs" "$source_dir/Program.cs"
if [ -n "${STEEL_EXAMPLE_PRELOAD:-}" ]; then
    export LD_PRELOAD="$STEEL_EXAMPLE_PRELOAD" ASAN_OPTIONS=detect_leaks=0
fi
LD_LIBRARY_PATH="$library_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec mono "$output_dir/SteelExample.exe"
