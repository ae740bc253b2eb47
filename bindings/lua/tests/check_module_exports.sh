#!/bin/sh
# Fails unless the Lua module exports exactly one dynamic symbol: luaopen_steel.
set -eu
module="$1"
symbols=$(nm -D --defined-only "$module" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
if [ "$symbols" != "luaopen_steel" ]; then
    echo "$module must export luaopen_steel only; it exports:"
    printf '%s\n' "$symbols"
    exit 1
fi
echo "$module exports luaopen_steel only"
