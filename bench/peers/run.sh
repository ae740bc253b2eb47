#!/usr/bin/env bash
# Steel side by side with ODE, Bullet and MuJoCo (bench/RESULTS.md, "Steel vs ODE, Bullet and
# MuJoCo"): installs the Debian packages, configures and builds bench/peers in build-peers/, runs
# every engine (CSV in build-peers/peers.csv), prints the tables and draws the plot.
#
#   bash bench/peers/run.sh            # everything (about 15 minutes on 2 vCPUs)
#   bash bench/peers/run.sh --quick    # 1 and 64 copies, short timing loops (a smoke run)
set -euo pipefail
cd "$(dirname "$0")/../.."
script_name=bench/peers/run.sh
source scripts/packages.sh
ensure_packages cmake g++ make pkg-config flatbuffers-compiler libflatbuffers-dev \
    libode-dev libbullet-dev libmujoco-dev gnuplot-nox python3

build=${BUILD_DIR:-build-peers}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSTEEL_BUILD_PEER_BENCH=ON \
    -DSTEEL_BUILD_TESTS=OFF -DSTEEL_BUILD_EXAMPLES=OFF -DSTEEL_BUILD_LUA=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target peer_steel peer_ode peer_bullet peer_mujoco

peers="$build/bench/peers"
csv="$build/peers.csv"
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(lscpu | grep 'Model name' | tr -s ' ')," \
         "$(nproc) CPUs; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# packages: $(dpkg-query -W -f '${Package} ${Version}; ' libode-dev libbullet-dev libmujoco-dev)"
    "$peers/peer_steel" "$@"
    for variant in propagation colored colored-float32; do "$peers/peer_steel" --variant "$variant" --threads 1 --sweeps 20 "$@" | grep -v '^peer,engine'; done
    "$peers/peer_ode" "$@" | grep -v '^peer,engine'
    "$peers/peer_bullet" "$@" | grep -v '^peer,engine'
    "$peers/peer_mujoco" "$@" | grep -v '^peer,engine'
    echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$csv"
python3 bench/peers/tables.py "$csv"
python3 bench/peers/tables.py --plot-data "$csv" > "$build/peers_plot.dat"
gnuplot -e "data='$build/peers_plot.dat'; out='bench/peers/cost_vs_row_dofs.png'" bench/peers/cost_vs_row_dofs.gp
echo "plot: bench/peers/cost_vs_row_dofs.png"
