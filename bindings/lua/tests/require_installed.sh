#!/bin/sh
# `require "steel"` after install: installs the build into a scratch prefix, then loads the
# module from there with a package.cpath of that prefix only, and solves a one-row problem.
#
#   require_installed.sh BUILD_DIR PREFIX LUA_MODULE_DIR LUA_INTERPRETER
set -eu
build="$1" prefix="$2" module_dir="$3" lua="$4"
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/$module_dir/steel.so" || { echo "no $prefix/$module_dir/steel.so after install"; exit 1; }
script="$prefix/require_installed.lua"
cat > "$script" <<'LUA'
local steel = require "steel"
local batch <close> = steel.batch()
batch:upload_rows{ world_dof_counts = {1}, world_row_counts = {1}, unconstrained_velocity = {-1},
                   block_offset = {0, 0}, block_length = {1, 0}, jacobian = {1}, response = {0.5},
                   bias = {0}, kind = {"contact_normal"} }
local impulses = batch:solve():impulses()
assert(impulses[1] == 2, "impulse " .. tostring(impulses[1]))
print("steel " .. steel.version() .. " loaded from " .. package.searchpath("steel", package.cpath))
LUA
# Only the installed tree: the build tree's steel.so must not be what loads. STEEL_LUA_PRELOAD
# (the sanitizer build) goes to the interpreter only, not to cmake above.
if [ -n "${STEEL_LUA_PRELOAD:-}" ]; then
    export LD_PRELOAD="$STEEL_LUA_PRELOAD" ASAN_OPTIONS=detect_leaks=0
fi
LUA_CPATH="$prefix/$module_dir/?.so" LUA_CPATH_5_4="$prefix/$module_dir/?.so" LD_LIBRARY_PATH= "$lua" "$script"
