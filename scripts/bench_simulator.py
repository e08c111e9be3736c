"""Simulation wall time and the solver's share of it, per method and trace size.

Generates §4.1 traces (exponential arrivals by default), simulates each with each method and
prints a markdown table: events; wall seconds and the solver's wall seconds (sum of the
methods' own `stats["seconds"]`) with their share; process CPU seconds and the CPU seconds inside
the solve calls with their share (CPU time is what to trust on a loaded machine); the remaining
CPU per event (the rescheduler's and simulator's own cost); the total cost. A warm-up
simulation on a tiny trace compiles/loads the numba kernels first, so compilation is not counted.

    python scripts/bench_simulator.py --sizes 10x100 100x1000 --methods greedy path-relinking
"""

from __future__ import annotations

import argparse
import json
import os
import platform

from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.methods import DEFAULT_METHOD
from gpuaas.simulator import simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["10x100", "100x1000"], help="NxJ pairs")
    ap.add_argument("--methods", nargs="+", default=sorted({"greedy", DEFAULT_METHOD}))
    ap.add_argument("--arrivals", default="exponential")
    ap.add_argument("--seeds", nargs="+", type=int, default=[1])
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args()

    warm = Instance.from_dict(generate_trace(2, 6, seed=0))
    for m in args.methods:
        simulate(warm, m)
    rows = []
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} (shared machine: timings are under load)\n"
    )
    print(
        "| N | J | method | seed | events | wall s | solver s (share) | CPU s | solver CPU s (share) "
        "| rest CPU ms/event | total cost |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        n, j = (int(x) for x in size.split("x"))
        for seed in args.seeds:
            trace = Instance.from_dict(generate_trace(n, j, seed=seed, arrivals=args.arrivals))
            for m in args.methods:
                res = simulate(trace, m, seed=seed)
                cpu, solver_cpu = res.cpu_seconds, res.solver_cpu_seconds
                solver = res.solver_stats()["total"]
                rest = (cpu - solver_cpu) / max(res.events, 1) * 1e3  # rescheduler + simulator
                row = {
                    "nodes": n,
                    "jobs": j,
                    "method": m,
                    "seed": seed,
                    "events": res.events,
                    "wall_seconds": res.wall_seconds,
                    "cpu_seconds": cpu,
                    "solver_seconds": solver,
                    "solver_cpu_seconds": solver_cpu,
                    "solver_cpu_share": solver_cpu / cpu,
                    "solver_share": solver / res.wall_seconds,
                    "rest_cpu_ms_per_event": rest,
                    "total_cost": res.total_cost,
                    "solver": res.solver_stats(),
                }
                rows.append(row)
                print(
                    f"| {n} | {j} | {m} | {seed} | {res.events} | {res.wall_seconds:.2f} "
                    f"| {solver:.2f} ({100 * row['solver_share']:.0f} %) | {cpu:.2f} "
                    f"| {solver_cpu:.2f} ({100 * row['solver_cpu_share']:.0f} %) | {rest:.2f} "
                    f"| {res.total_cost:.1f} |",
                    flush=True,
                )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
