#!/usr/bin/env python
"""The default method against the P1$ optimum at rescheduling points taken from simulations.

For each N in --nodes, arrival pattern and restart overhead, one generated trace (J = 10 N,
seed --seed, outside the tests' seeds) is simulated with the default method (the package's
default 120 s start-up); the instance the method saw at --per-cell events spread over the run
(quantiles of the events with at least two jobs) is kept. At each point the default method
(with the seed it had in the run) and the MILP on P1$ (gap 0, one thread, --time-limit) solve
it; the table gives both objectives, the MILP's status and proven bound, and the default's
excess over the optimum (over the bound where the MILP stopped at its time limit). The bundled
example comes first.

    python scripts/objective_points.py -o scripts/results/objective-points.md

The instances are taken by wrapping the Rescheduler's call of `gpuaas.methods.solve` (only in
this script's process).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def points(nodes: int, arrivals: str, overhead: float, seed: int, per_cell: int) -> list:
    """(event index, instance, solver seed) of `per_cell` rescheduling points of the default's run."""
    import gpuaas.rescheduler.core as core
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance
    from gpuaas.simulator import simulate

    seen: list = []
    original = core.solve

    def spy(instance, method, *, seed, **options):
        seen.append((instance, seed))
        return original(instance, method, seed=seed, **options)

    core.solve = spy
    try:
        trace = Instance.from_dict(
            generate_trace(nodes, 10 * nodes, seed=seed, arrivals=arrivals), "trace"
        )
        simulate(trace, "incremental", seed=1, overhead=overhead)
    finally:
        core.solve = original
    busy = [k for k, (inst, _) in enumerate(seen) if inst.n_jobs >= 2]
    picks = [busy[int(q * (len(busy) - 1))] for q in np.linspace(0.25, 0.75, per_cell)]
    return [(k, *seen[k]) for k in picks]


def compare(instance, seed: int, time_limit: float) -> dict:
    """The default's and the MILP's P1$ at one point."""
    from gpuaas.methods import solve

    default = solve(instance, "incremental", seed=seed)
    best = solve(instance, "milp", seed=1, gap=0.0, threads=1, time_limit=time_limit)
    st = best.stats
    bound = st["bound"] if st["bound"] is not None else float("nan")
    ref = best.objective if st["status"] == "optimal" else bound
    return {
        "J": instance.n_jobs,
        "running": int((instance.current_cfg >= 0).sum()),
        "default": default.objective,
        "milp": best.objective,
        "status": st["status"],
        "bound": bound,
        "excess": (default.objective - ref) / ref * 100.0,
        "seconds": st["seconds"],
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--arrivals", nargs="+", default=["exponential", "high", "low"])
    ap.add_argument("--overheads", type=float, nargs="+", default=[0.0, 600.0])
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--per-cell", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("-o", "--output", type=Path)
    args = ap.parse_args(argv)

    from gpuaas.instance import load_instance

    lines = [
        "# The default method against the P1$ optimum (issue 27)",
        "",
        f"`python scripts/objective_points.py{' ' + ' '.join(argv) if argv else ''}`, "
        f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores shared with other work (load "
        f"average {os.getloadavg()[0]:.1f} at start). Traces: `generate_trace(N, 10 N, "
        f"seed={args.seed}, arrivals)`, simulated with the default method (restart as given, "
        "120 s start-up); a point is the instance the method saw at that event. MILP: P1$, gap 0, "
        f"one thread, {args.time_limit:g} s. Excess: (default − optimum) / optimum, or over the "
        "proven bound where the MILP stopped at its limit.",
        "",
        "| N | arrivals | restart s | event | jobs | running | default $ | MILP $ | status | "
        "bound $ | default excess % | MILP s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = []

    def add(label: tuple, r: dict) -> None:
        rows.append(r)
        line = (
            "| "
            + " | ".join(str(x) for x in label)
            + f" | {r['J']} | {r['running']} | {r['default']:.2f} | {r['milp']:.2f} | "
            f"{r['status']} | {r['bound']:.2f} | {r['excess']:+.3f} | {r['seconds']:.1f} |"
        )
        lines.append(line)
        print(line, flush=True)

    example = load_instance(ROOT / "instances" / "example.json").released()
    add(("4", "example.json", "-", "-"), compare(example, 1, args.time_limit))
    for n in args.nodes:
        for arr in args.arrivals:
            for ov in args.overheads:
                for k, inst, seed in points(n, arr, ov, args.seed, args.per_cell):
                    add((n, arr, f"{ov:g}", k), compare(inst, seed, args.time_limit))
    ex = np.array([r["excess"] for r in rows])
    lines += [
        "",
        f"{len(rows)} points: default excess over the optimum (or bound) median "
        f"{np.median(ex):+.3f} %, max {ex.max():+.3f} %; within 2 %: {int((ex <= 2).sum())} of "
        f"{len(rows)}; MILP optimal at {sum(r['status'] == 'optimal' for r in rows)}.",
    ]
    text = "\n".join(lines) + "\n"
    if args.output:
        from gpuaas.files import write_atomic

        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
