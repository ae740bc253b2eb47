#!/usr/bin/env python3
"""Turns the peer runners' CSV (bench/peers/run.sh) into the markdown tables of bench/RESULTS.md,
or, with --plot-data, into gnuplot blocks for cost_vs_row_dofs.gp.

  tables.py peers.csv               # headline tables, goals, then every measurement
  tables.py --plot-data peers.csv   # one block per engine: row_dofs, us per world (20 sweeps, 1 thread, 1 copy)
"""
import csv
import sys
from collections import defaultdict

PEERS = ["ode", "bullet", "mujoco"]
SCENES = ["stack 5", "stack 10", "stack 20", "pile 100", "pile 1000", "chain 10", "arm+box"]


def load(path):
    rows, skips, comments = [], [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                comments.append(line.strip())
            elif line.startswith("skip,"):
                skips.append(line.strip().split(",", 4))
            elif line.startswith("peer,") and not line.startswith("peer,engine"):
                r = next(csv.reader([line]))
                rows.append(dict(engine=r[1], variant=r[2], scene=r[3], copies=int(r[4]), sweeps=int(r[5]),
                                 threads=int(r[6]), rows=int(r[7]), row_dofs=float(r[8]), setup=float(r[9]),
                                 batch=float(r[10]), world=float(r[11]), ns=float(r[12]), residual=float(r[13])))
    return rows, skips, comments


def index(rows):
    return {(r["engine"], r["variant"], r["scene"], r["copies"], r["sweeps"], r["threads"]): r for r in rows}


def marginal_ns(by, key10, key50):
    """ns per row update from the slope between 10 and 50 sweeps: fixed per-solve costs drop out."""
    a, b = by.get(key10), by.get(key50)
    if not a or not b or a["rows"] == 0:
        return None
    return (b["batch"] - a["batch"]) * 1e3 / (a["rows"] * a["copies"] * 40)


def fmt(x, spec=".1f"):
    return "n/a" if x is None else format(x, spec)


def engines_of(rows):
    seen = []
    for r in rows:
        if (r["engine"], r["variant"]) not in seen:
            seen.append((r["engine"], r["variant"]))
    return seen


def headline(rows, by):
    print("### Cost per row update, 1 thread (ns)\n")
    print("`ns/update` = solve time / (rows x sweeps) at 20 sweeps; `slope` = the extra time per row update "
          "from 10 to 50 sweeps, with the fixed per-solve work taken out. 1 copy except where the copies column "
          "says otherwise.\n")
    print("| scene | copies | engine | rows/world | ns/update (20 sweeps) | slope ns/update | us per world (20 sweeps) |")
    print("|---|---|---|---|---|---|---|")
    for scene in SCENES:
        for copies in (1, 1024):
            for eng, var in engines_of(rows):
                r = by.get((eng, var, scene, copies, 20, 1))
                if not r:
                    continue
                slope = marginal_ns(by, (eng, var, scene, copies, 10, 1), (eng, var, scene, copies, 50, 1))
                print(f"| {scene} | {copies} | {eng} {var} | {r['rows']} | {r['ns']:.1f} | {fmt(slope)} | {r['world']:.2f} |")
    print()


def goals(rows, by):
    print("### The issue's goals, read from these numbers\n")
    print("Stacks and piles: Steel's ns per row update against the fastest peer's (goal: at least 5x fewer), "
          "1 thread, each sweep count, 1 copy and 1,024 copies.\n")
    print("| scene | copies | sweeps | Steel ns | fastest peer | its ns | ratio (peer / Steel) | Steel residual | best peer residual |")
    print("|---|---|---|---|---|---|---|---|---|")
    for scene in SCENES[:5]:
        for copies in (1, 1024):
            for sweeps in (10, 20, 50):
                s = by.get(("steel", "default", scene, copies, sweeps, 1))
                peers = [r for r in rows if r["engine"] in PEERS and r["scene"] == scene and r["copies"] == copies
                         and r["sweeps"] == sweeps and r["threads"] == 1]
                if not s or not peers:
                    continue
                best = min(peers, key=lambda r: r["ns"])
                res = min(r["residual"] for r in peers)
                print(f"| {scene} | {copies} | {sweeps} | {s['ns']:.1f} | {best['engine']} | {best['ns']:.1f} | "
                      f"{best['ns'] / s['ns']:.2f} | {s['residual']:.2e} | {res:.2e} |")
    print()
    print("Arm holding a box: time per world against ODE (goal: at least 3x faster) and Bullet's multibody "
          "solver (goal: at least 10x faster). ODE's figure is its whole dWorldQuickStep; Bullet's is its sweeps "
          "plus finish; Steel's is steel_batch_solve.\n")
    print("| copies | threads | sweeps | Steel us/world | ODE us/world | ODE / Steel | Bullet mb us/world | Bullet / Steel | Steel residual | ODE residual | Bullet residual |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for copies in (1, 64, 1024):
        for threads in (1, 2):
            for sweeps in (10, 20, 50):
                s = by.get(("steel", "default", "arm+box", copies, sweeps, threads))
                o = by.get(("ode", "quickstep", "arm+box", copies, sweeps, threads))
                b = by.get(("bullet", "multibody", "arm+box", copies, sweeps, threads))
                if not s or not o or not b:
                    continue
                print(f"| {copies} | {threads} | {sweeps} | {s['world']:.2f} | {o['world']:.2f} | {o['world'] / s['world']:.2f} | "
                      f"{b['world']:.2f} | {b['world'] / s['world']:.2f} | {s['residual']:.1e} | {o['residual']:.1e} | {b['residual']:.1e} |")
    print()


def full(rows, by, skips):
    print("### Every measurement\n")
    print("Per batch of `copies` worlds. `setup` is what the engine does before its sweeps that could be timed "
          "apart (Steel: the scene upload; Bullet: solveGroupCacheFriendlySetup; MuJoCo: mj_projectConstraint; "
          "ODE: none, it is inside the step). Two threads: Steel's own; the peers' copies split over two threads.\n")
    print("| scene | copies | engine | sweeps | rows/world | row DOFs/world | setup us | 1 thr: solve us | 1 thr: ns/update | 2 thr: solve us | 2 thr: ns/update | residual |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for scene in SCENES:
        for copies in (1, 64, 1024):
            for eng, var in engines_of(rows):
                for sweeps in (10, 20, 50):
                    one = by.get((eng, var, scene, copies, sweeps, 1))
                    two = by.get((eng, var, scene, copies, sweeps, 2))
                    r = one or two
                    if not r:
                        continue
                    print(f"| {scene} | {copies} | {eng} {var} | {sweeps} | {r['rows']} | {r['row_dofs']:.0f} | {r['setup']:.1f} | "
                          f"{fmt(one and one['batch'])} | {fmt(one and one['ns'])} | {fmt(two and two['batch'])} | "
                          f"{fmt(two and two['ns'])} | {r['residual']:.2e} |")
    if skips:
        print("\nNot run:\n")
        for s in skips:
            print(f"- {s[1]} {s[2]}, {s[3]}: {s[4]}")
    print()


def plot_data(rows):
    groups = [("steel", ("default",)), ("ode", ("quickstep",)), ("bullet", ("sequential-impulse", "multibody")),
              ("mujoco", ("pgs",))]
    for eng, variants in groups:
        print(f"# {eng}: row_dofs_per_world us_per_world scene (20 sweeps, 1 thread, 1 copy)")
        pts = sorted((r["row_dofs"], r["world"], r["scene"]) for r in rows if r["engine"] == eng
                     and r["variant"] in variants and r["sweeps"] == 20 and r["threads"] == 1 and r["copies"] == 1)
        for x, y, scene in pts:
            print(f"{x:.0f} {y:.3f} \"{scene}\"")
        print("\n")


def main():
    args = sys.argv[1:]
    rows, skips, comments = load(args[-1])
    if "--plot-data" in args:
        plot_data(rows)
        return
    by = index(rows)
    for c in comments:
        print(c)
    print()
    headline(rows, by)
    goals(rows, by)
    full(rows, by, skips)


if __name__ == "__main__":
    main()
