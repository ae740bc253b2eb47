#!/bin/sh
# Fails if libsteel exports a dynamic symbol that is not steel_* (hidden visibility + version
# script keep the C++ internals private), or exports none at all.
set -eu
lib="$1"
symbols=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
[ -n "$symbols" ] || { echo "no exported symbols in $lib"; exit 1; }
bad=$(printf '%s\n' "$symbols" | grep -v '^steel_' || true)
if [ -n "$bad" ]; then
    echo "symbols exported from $lib that are not steel_*:"
    printf '%s\n' "$bad"
    exit 1
fi
echo "$(printf '%s\n' "$symbols" | wc -l) exported symbols, all steel_*"
