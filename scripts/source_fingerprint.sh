#!/usr/bin/env bash
# Prints one hash of the sources the GPU check's programs are built from (the contents of
# CMakeLists.txt, cmake/, capi/, impl/, tests/, bench/ and examples/, by path), without git: the
# device machine gets a copy of the working tree, which may lack .git. gpu_prebuild.sh records it
# beside the staged programs; gpu_check.sh compares, so a stale stage is reported, not timed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
find CMakeLists.txt cmake capi impl tests bench examples -type f \
    ! -path 'examples/rust/target/*' -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
