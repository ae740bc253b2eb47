#!/usr/bin/env bash
# Regenerates every figure of the convergence tutorials from the library:
# builds convergence_data, writes its CSVs to docs/tutorials/data/, plots them with gnuplot.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v gnuplot >/dev/null || { echo "needs gnuplot: apt-get install gnuplot-nox"; exit 1; }
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j2 --target convergence_data >/dev/null
mkdir -p "$here/data"
"$root/build/docs/tutorials/convergence_data" "$here/data"
(cd "$here" && gnuplot -e "data='data'" figures.gp)
echo "figures written to $here"
