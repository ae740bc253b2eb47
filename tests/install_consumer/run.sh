#!/bin/sh
# A user's view of an installed Steel (ctest: example_install_consumer, registered in
# tests/CMakeLists.txt). With the library already built in BUILD_DIR:
#
#   1. `cmake --install BUILD_DIR --prefix WORK_DIR/stage`, then the prefix is moved to
#      WORK_DIR/prefix, so any absolute path the install wrote (to the staging prefix, the build
#      tree or the sources) breaks what follows; the installed CMake and pkg-config files are
#      also searched for such paths. Checks the header, the soname links and the SONAME.
#   2. consumer.c built by CMakeLists.txt here (find_package(Steel CONFIG REQUIRED) and
#      Steel::steel) with CMAKE_PREFIX_PATH=the prefix only: with STEEL_EXPECTED_PREFIX set, that
#      project turns the package registries and the system and environment search paths off for
#      find_package, and fails its configure unless Steel_DIR, the imported library and its
#      include directory lie in the prefix. Run with no LD_LIBRARY_PATH:
#      it finds libsteel through the build RPATH CMake gives programs linked to an imported
#      library.
#   3. consumer.c built with `cc -std=c99 consumer.c $(pkg-config --cflags --libs steel)`, with
#      PKG_CONFIG_PATH (and PKG_CONFIG_LIBDIR, so no system steel.pc can answer) the prefix's
#      pkgconfig directory. steel.pc gives no rpath, so it runs with
#      LD_LIBRARY_PATH=$(pkg-config --variable=libdir steel), as a user of a non-system prefix would.
#
# Both builds compile with -Werror against the installed header, must have resolved steel/steel.h
# to the prefix (the compiler's dependency file says where it came from) and must link
# libsteel.so.SOVERSION; both programs check where libsteel was loaded from, the ABI and version
# numbers, and a solve against its closed form (consumer.c). Exit 0: passed; 1: failed; 77: skipped
# (a tool is missing, or the build installs outside any prefix).
#
# In the AddressSanitizer build (STEEL_SANITIZE) the installed libsteel is the sanitized one; the
# consumers are plain programs, like lua5.4 in that build, so they run with
# STEEL_CONSUMER_PRELOAD (the build's STEEL_FOREIGN_PRELOAD: libasan and libstdc++) in
# LD_PRELOAD. cmake, cc and pkg-config never get it.
#
#   run.sh CMAKE_COMMAND BUILD_DIR WORK_DIR VERSION SOVERSION LIBDIR INCLUDEDIR
set -eu
if [ $# -ne 7 ]; then
    echo "usage: $0 CMAKE_COMMAND BUILD_DIR WORK_DIR VERSION SOVERSION LIBDIR INCLUDEDIR" >&2
    exit 2
fi
cmake="$1" build="$2" work="$3" version="$4" soversion="$5" libdir="$6" includedir="$7"
here=$(cd "$(dirname "$0")" && pwd -P)
sources=$(cd "$here/../.." && pwd -P)
build=$(cd "$build" && pwd -P)

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
skip() {
    echo "SKIP: $*"
    exit 77
}
# Runs a command with its output in a log; shows the log and fails when the command does.
logged() {
    log="$1"
    shift
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        fail "$* (log: $log)"
    fi
}
# realpath of a path that exists, without GNU realpath: its directory's pwd -P plus its name.
real_path() {
    (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")")
}
# The steel/steel.h a compiler's dependency file (-MD) names must be the installed one.
check_header_from_prefix() {
    depfile="$1"
    [ -f "$depfile" ] || fail "no dependency file $depfile"
    header=$(tr ' \\' '\n\n' <"$depfile" | grep 'steel/steel\.h$' | head -n 1)
    [ -n "$header" ] || fail "$depfile names no steel/steel.h"
    [ "$(real_path "$header")" = "$prefix/$includedir/steel/steel.h" ] ||
        fail "compiled with $header, not the installed $prefix/$includedir/steel/steel.h"
}
check_needed_soname() {
    readelf -d "$1" | grep -q "(NEEDED).*\[libsteel\.so\.$soversion\]" ||
        fail "$1 does not link libsteel.so.$soversion: $(readelf -d "$1" | grep NEEDED | tr '\n' ' ')"
}
# run_consumer LIBRARY_PATH PROGRAM ARGS...: runs a consumer with LD_LIBRARY_PATH=LIBRARY_PATH
# (unset when empty), and with LD_PRELOAD only in the sanitizer build; it never inherits either.
run_consumer() {
    library_path="$1"
    shift
    set -- ${library_path:+"LD_LIBRARY_PATH=$library_path"} \
        ${STEEL_CONSUMER_PRELOAD:+"LD_PRELOAD=$STEEL_CONSUMER_PRELOAD"} "$@"
    env -u LD_LIBRARY_PATH -u LD_PRELOAD "$@"
}

case "$libdir" in /*) skip "CMAKE_INSTALL_LIBDIR ($libdir) is absolute: cmake --install --prefix cannot move the library" ;; esac
case "$includedir" in /*) skip "CMAKE_INSTALL_INCLUDEDIR ($includedir) is absolute: cmake --install --prefix cannot move the header" ;; esac
for tool in cc pkg-config readelf; do
    command -v "$tool" >/dev/null 2>&1 || skip "no $tool on PATH (apt-get install gcc pkg-config binutils)"
done

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
stage="$work/stage"
prefix="$work/prefix"

echo "== cmake --install $build --prefix $stage, then moved to $prefix"
logged "$work/install.log" "$cmake" --install "$build" --prefix "$stage"
mv "$stage" "$prefix"
lib="$prefix/$libdir"

[ -f "$prefix/$includedir/steel/steel.h" ] || fail "no $includedir/steel/steel.h in the prefix"
[ -f "$lib/libsteel.so.$version" ] && [ ! -L "$lib/libsteel.so.$version" ] ||
    fail "no library file $libdir/libsteel.so.$version in the prefix"
[ -L "$lib/libsteel.so.$soversion" ] && [ "$(readlink "$lib/libsteel.so.$soversion")" = "libsteel.so.$version" ] ||
    fail "$libdir/libsteel.so.$soversion is not a link to libsteel.so.$version"
[ -L "$lib/libsteel.so" ] && [ "$(readlink "$lib/libsteel.so")" = "libsteel.so.$soversion" ] ||
    fail "$libdir/libsteel.so (the link-time name) is not a link to libsteel.so.$soversion"
readelf -d "$lib/libsteel.so.$version" | grep -q "Library soname: \[libsteel\.so\.$soversion\]" ||
    fail "the SONAME of libsteel.so.$version is not libsteel.so.$soversion"
[ -f "$lib/cmake/Steel/SteelConfig.cmake" ] || fail "no $libdir/cmake/Steel/SteelConfig.cmake"
[ -f "$lib/pkgconfig/steel.pc" ] || fail "no $libdir/pkgconfig/steel.pc"
# Relocatable: nothing installed for consumers may name the staging prefix, the build tree or the
# sources (the staging prefix lies in the build tree).
for dir in "$build" "$sources"; do
    if grep -rlF "$dir" "$lib/cmake/Steel" "$lib/pkgconfig/steel.pc" >"$work/absolute.txt"; then
        fail "installed package files name $dir, so the install is not relocatable: $(tr '\n' ' ' <"$work/absolute.txt")"
    fi
done

echo "== find_package(Steel CONFIG REQUIRED) with CMAKE_PREFIX_PATH=$prefix only"
logged "$work/cmake-configure.log" env -u CMAKE_PREFIX_PATH -u Steel_DIR -u Steel_ROOT -u STEEL_ROOT \
    -u CMAKE_INCLUDE_PATH -u CMAKE_LIBRARY_PATH -u CMAKE_FRAMEWORK_PATH -u CMAKE_APPBUNDLE_PATH \
    -u LD_PRELOAD \
    "$cmake" -S "$here" -B "$work/cmake-build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" -DSTEEL_EXPECTED_PREFIX="$prefix"
grep 'Steel .* from ' "$work/cmake-configure.log" || true
logged "$work/cmake-build.log" env -u LD_PRELOAD "$cmake" --build "$work/cmake-build"
depfile=$(find "$work/cmake-build" -name 'consumer.c.o.d' | head -n 1)
check_header_from_prefix "${depfile:-$work/cmake-build/consumer.c.o.d}"
check_needed_soname "$work/cmake-build/consumer"
run_consumer "" "$work/cmake-build/consumer" "$version" "$lib" ||
    fail "the find_package(Steel) consumer"

echo "== cc \$(pkg-config --cflags --libs steel) with PKG_CONFIG_PATH=$lib/pkgconfig"
pc() {
    env -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_LIBDIR="$lib/pkgconfig" \
        pkg-config "$@"
}
pc --exists --print-errors steel || fail "pkg-config does not find steel in $lib/pkgconfig"
pc_version=$(pc --modversion steel)
pc_flags=$(pc --cflags --libs steel)
pc_libdir=$(pc --variable=libdir steel)
pc_includedir=$(pc --variable=includedir steel)
echo "pkg-config: version $pc_version; $pc_flags"
[ "$pc_version" = "$version" ] || fail "steel.pc says version $pc_version, the build is $version"
[ -d "$pc_libdir" ] && [ "$(cd "$pc_libdir" && pwd -P)" = "$lib" ] ||
    fail "steel.pc's libdir $pc_libdir is not the prefix's $lib"
[ -d "$pc_includedir" ] && [ "$(cd "$pc_includedir" && pwd -P)" = "$prefix/$includedir" ] ||
    fail "steel.pc's includedir $pc_includedir is not the prefix's $prefix/$includedir"
# $pc_flags unquoted on purpose: it is a list of options.
# shellcheck disable=SC2086
logged "$work/pkg-config-build.log" env -u LD_PRELOAD cc -std=c99 -Wall -Wextra -Wpedantic -Werror \
    "-DSTEEL_PACKAGE_VERSION=\"$pc_version\"" -MD -MF "$work/pkg-config-consumer.d" \
    "$here/consumer.c" $pc_flags -o "$work/pkg-config-consumer"
check_header_from_prefix "$work/pkg-config-consumer.d"
check_needed_soname "$work/pkg-config-consumer"
run_consumer "$pc_libdir" "$work/pkg-config-consumer" "$version" "$lib" ||
    fail "the pkg-config consumer"

echo "== the installed Steel $version works from CMake and from pkg-config"
