#!/usr/bin/env python
"""The default method against the P1$ optimum at rescheduling points taken from simulations.

For each N in --nodes, arrival pattern and restart overhead, one generated trace (J = 10 N,
seed --seed, outside the tests' seeds) is simulated with the default method (the package's
default 120 s start-up); the instance the method saw at --per-cell events spread over the run
(quantiles of the events with at least two jobs) is kept. At each point the default method
(with the seed it had in the run) and the MILP on P1$ (gap 0, one thread, --time-limit) solve
it; the table gives both objectives, the MILP's status and proven bound, and the default's
excess over the optimum (over the bound where the MILP stopped at its time limit). The bundled
example comes first. Where the default is more than --fork-above % above the optimum, the run
is simulated again with the MILP's plan imposed at that event: whether the bill rewards the
P1$ optimum there.

    python scripts/objective_points.py --fork-above -1 -o objective-points.md

(its last run, frozen at 38b27ef: scripts/results/archive/objective-points-38b27ef.md)

The instances are taken by wrapping the Rescheduler's call of `gpuaas.methods.solve`
(`gpuaas.rescheduler.apply.solve`, only in this script's process).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def run(
    nodes: int,
    arrivals: str,
    overhead: float,
    seed: int,
    impose: int = -1,
    time_limit: float | None = None,
) -> tuple[list, float]:
    """The default's run of the cell's trace: ((instance, solver seed) at each event, total cost
    $). At event `impose` the MILP's P1$ optimum replaces the default's plan (the fork)."""
    import gpuaas.rescheduler.apply as apply
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance
    from gpuaas.simulator import simulate

    seen: list = []
    original = apply.solve

    def spy(instance, method, *, seed, **options):
        seen.append((instance, seed))
        if len(seen) - 1 == impose:
            return original(instance, "milp", seed=1, gap=0.0, threads=1, time_limit=time_limit)
        return original(instance, method, seed=seed, **options)

    apply.solve = spy
    try:
        trace = Instance.from_dict(
            generate_trace(nodes, 10 * nodes, seed=seed, arrivals=arrivals), "trace"
        )
        result = simulate(trace, "incremental", seed=1, overhead=overhead, bound=False)
    finally:
        apply.solve = original
    return seen, result.total_cost


def points(seen: list, per_cell: int) -> list:
    """(event index, instance, solver seed) of `per_cell` rescheduling points of a run."""
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
    ap.add_argument(
        "--fork-above",
        type=float,
        default=2.0,
        help="fork the run at every point where the default is more than this %% above the MILP",
    )
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
    rows, forks = [], []

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
                seen, total = run(n, arr, ov, args.seed)
                for k, inst, seed in points(seen, args.per_cell):
                    add((n, arr, f"{ov:g}", k), compare(inst, seed, args.time_limit))
                    if rows[-1]["excess"] > args.fork_above:
                        forked = run(n, arr, ov, args.seed, k, args.time_limit)[1]
                        forks.append((n, arr, f"{ov:g}", k, rows[-1]["excess"], total, forked))
    ex = np.array([r["excess"] for r in rows])
    lines += [
        "",
        f"{len(rows)} points: default excess over the optimum (or bound) median "
        f"{np.median(ex):+.3f} %, max {ex.max():+.3f} %; within 2 %: {int((ex <= 2).sum())} of "
        f"{len(rows)}; MILP optimal at {sum(r['status'] == 'optimal' for r in rows)}.",
    ]
    if forks:
        lines += [
            "",
            "## Every point: the run forked there"
            if args.fork_above < 0
            else f"## Points more than {args.fork_above:g} % above the optimum: the run forked there",
            "",
            "The same simulation with the MILP's P1$ optimum in place of the default's plan at that "
            "event and the default at every other: what the bill says of the two plans (the "
            "difference includes every later decision that the fork changes).",
            "",
            "| N | arrivals | restart s | event | default excess % | default run $ | forked run $ "
            "| forked − default % |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for *label, excess, total, forked in forks:
            lines.append(
                "| " + " | ".join(str(x) for x in label) + f" | {excess:+.3f} | {total:.2f} | "
                f"{forked:.2f} | {(forked - total) / total * 100:+.3f} |"
            )
    text = "\n".join(lines) + "\n"
    if args.output:
        from gpuaas.files import write_atomic

        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
