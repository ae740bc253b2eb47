#!/usr/bin/env bash
# Formats every C, C++ and CUDA source of the repository by its .clang-format, with Debian 12's
# clang-format-14 (other versions lay some lines out differently):
#
#   bash scripts/format.sh            # rewrites the files that differ
#   bash scripts/format.sh --check    # lists them and exits 1 if any; scripts/test.sh runs this
#
# The sources are the files git tracks (or, outside a git checkout, every source below the
# repository but the build folders). CLANG_FORMAT names another formatter.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
formatter="${CLANG_FORMAT:-clang-format-14}"
check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*)
    sed -n '2,9p' "$0"
    exit 2
    ;;
esac
if ! command -v "$formatter" >/dev/null; then
    echo "format.sh: $formatter not found (apt-get install clang-format-14)" >&2
    exit 2
fi

patterns=('*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.inc')
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -- "${patterns[@]}")
else
    mapfile -t files < <(find . -path './build*' -prune -o -type f \( -name '*.c' -o -name '*.h' \
        -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.inc' \) \
        -print | sed 's|^\./||' | sort)
fi

differ=()
for file in "${files[@]}"; do
    if ! "$formatter" --dry-run -Werror "$file" >/dev/null 2>&1; then differ+=("$file"); fi
done
if [ "${#differ[@]}" -eq 0 ]; then
    echo "format.sh: ${#files[@]} files, all formatted"
    exit 0
fi
if [ "$check" -eq 1 ]; then
    echo "format.sh: ${#differ[@]} of ${#files[@]} files are not formatted by .clang-format" \
        "(bash scripts/format.sh rewrites them):" >&2
    printf '  %s\n' "${differ[@]}" >&2
    exit 1
fi
"$formatter" -i "${differ[@]}"
echo "format.sh: formatted ${#differ[@]} files"
