#!/bin/sh
# Builds the Rust example with cargo (offline, locked: it has no dependencies) against a libsteel
# directory, then runs its unit tests (`test`) or the example binary (`run`).
#
#   run_example.sh test|run CARGO SOURCE_DIR TARGET_DIR LIBSTEEL_DIR
#
# Exits 77 (ctest: SKIP) when cargo is missing. STEEL_EXAMPLE_PRELOAD (set by the sanitizer
# build) is preloaded into the example's executables only, never into cargo or rustc.
set -eu
step="$1" cargo="$2" source_dir="$3" target_dir="$4" library_dir="$5"
if ! command -v "$cargo" >/dev/null 2>&1; then
    echo "SKIP: cargo not found (looked for $cargo); install Rust (rustup) to build the Rust example"
    exit 77
fi
export CARGO_TARGET_DIR="$target_dir" STEEL_LIB_DIR="$library_dir"
manifest="$source_dir/Cargo.toml"
case "$step" in
test) "$cargo" test --offline --locked --manifest-path "$manifest" --no-run ;;
run) "$cargo" build --offline --locked --manifest-path "$manifest" ;;
*) echo "run_example.sh: unknown step $step" >&2; exit 2 ;;
esac
export LD_LIBRARY_PATH="$library_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -n "${STEEL_EXAMPLE_PRELOAD:-}" ]; then
    export ASAN_OPTIONS=detect_leaks=0
    preload="$STEEL_EXAMPLE_PRELOAD"
else
    preload=""
fi
if [ "$step" = test ]; then
    # The unit-test executables cargo just built, run directly so only they get the preload.
    status=0
    binaries=$("$cargo" test --offline --locked --manifest-path "$manifest" --no-run --message-format=json 2>/dev/null |
               grep -o '"executable":"[^"]*"' | sed 's/^"executable":"\(.*\)"$/\1/' | sort -u)
    [ -n "$binaries" ] || { echo "run_example.sh: cargo built no test executables"; exit 1; }
    for binary in $binaries; do
        LD_PRELOAD="$preload" "$binary" || status=1
    done
    exit $status
fi
LD_PRELOAD="$preload" exec "$target_dir/debug/steel-stack"
