"""Bound values and times: per-job vs capacity LP, on the bundled trace and generated traces.

For each trace (instances/trace-small.json, then §4.1 traces from `gpuaas generate` for every
node count x arrival pattern) and each slot setting ("auto": the default rule; a number of
seconds; or "cols=K": the automatic slot for a budget of K x-columns) and node count (the
trace's N times each --node-factors), prints a markdown row:
per-job bound, capacity bound, its gain over per-job, which one binds, the LP status, slot,
columns, rows and seconds (the whole `gpuaas.bound` call; the per-job bound alone is timed
separately). With --simulate METHOD it also simulates the trace and prints cost / bound.

    python scripts/bench_bound.py                         # the table of formulations/BOUND.md
    python scripts/bench_bound.py --nodes 10 --arrivals high --slots auto 28800 14400 3600
    python scripts/bench_bound.py --nodes 10 20 --simulate greedy --node-factors 1 0.5 0.25
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from gpuaas import bounds, capacity_lp
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance, load_instance
from gpuaas.per_job import per_job_plan
from gpuaas.simulator import simulate

ROOT = Path(__file__).resolve().parents[1]


def traces(nodes: list[int], arrivals: list[str], seed: int, bundled: bool):
    """(name, Instance) pairs: the bundled trace, then one generated trace per (arrivals, N)."""
    if bundled:
        yield "trace-small.json", load_instance(ROOT / "instances" / "trace-small.json")
    for arr in arrivals:
        for n in nodes:
            yield f"{arr} N={n}", Instance.from_dict(generate_trace(n, seed=seed, arrivals=arr))


def run(trace: Instance, nodes: int, setting: str, time_limit: float) -> bounds.Bound:
    """gpuaas.bound with one slot setting."""
    if setting == "auto":
        return bounds.bound(trace, nodes=nodes, time_limit=time_limit)
    if setting.startswith("cols="):
        saved = capacity_lp.MAX_COLUMNS
        capacity_lp.MAX_COLUMNS = int(setting.removeprefix("cols="))
        try:
            return bounds.bound(trace, nodes=nodes, time_limit=time_limit)
        finally:
            capacity_lp.MAX_COLUMNS = saved
    return bounds.bound(trace, nodes=nodes, slot=float(setting), time_limit=time_limit)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", nargs="+", type=int, default=[10, 20, 50, 100])
    ap.add_argument("--arrivals", nargs="+", default=["exponential", "high", "low"])
    ap.add_argument("--seed", type=int, default=1, help="trace seed")
    ap.add_argument("--slots", nargs="+", default=["auto"], help="auto, seconds, or cols=K")
    ap.add_argument(
        "--node-factors",
        nargs="+",
        type=float,
        default=[1.0],
        help="bound on round(f x N) nodes too (capacity binds as nodes get scarce)",
    )
    ap.add_argument("--time-limit", type=float, default=bounds.DEFAULT_TIME_LIMIT)
    ap.add_argument("--no-bundled", action="store_true", help="skip instances/trace-small.json")
    ap.add_argument("--simulate", metavar="METHOD", help="also simulate and print cost / bound")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args()

    warm = Instance.from_dict(generate_trace(2, 6, seed=0, arrivals="high"))
    bounds.bound(warm, nodes=1)  # compile / load the per-job kernel
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} (shared machine: timings are under load)\n"
    )
    sim_head = f" {args.simulate} cost / bound |" if args.simulate else ""
    print(
        "| trace | N | J | per-job $ | per-job s | capacity $ | gain % | binds | LP status | slot "
        f"| columns | rows | bound s |{sim_head}"
    )
    print(
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if args.simulate else "")
    )
    rows = []
    for name, trace in traces(args.nodes, args.arrivals, args.seed, not args.no_bundled):
        t0 = time.perf_counter()
        per_job = per_job_plan(trace).total
        per_job_s = time.perf_counter() - t0
        for factor, setting in [(f, s) for f in args.node_factors for s in args.slots]:
            nodes = max(1, round(factor * trace.nodes))
            sim = (
                simulate(trace, args.simulate, seed=1, nodes=nodes, bound=False)
                if args.simulate
                else None
            )
            b = run(trace, nodes, setting, args.time_limit)
            assert abs(b.per_job - per_job) <= 1e-9 * per_job
            gain = 100 * (b.capacity - b.per_job) / b.per_job if b.per_job else 0.0
            slot = (
                "-"
                if b.slot is None
                else (f"{b.slot / 3600:g} h" if b.slot % 3600 == 0 else f"{b.slot:g} s")
            )
            row = {
                "trace": name,
                "nodes": nodes,
                "jobs": trace.n_jobs,
                "setting": setting,
                "per_job_seconds": per_job_s,
                **b.to_dict(),
            }
            extra = ""
            if sim is not None:
                row["simulated_cost"] = sim.total_cost
                extra = f" {sim.total_cost / b.bound:.3f} |"
            rows.append(row)
            print(
                f"| {name} | {nodes} | {trace.n_jobs} | {b.per_job:.1f} | {per_job_s:.3f} "
                f"| {b.capacity:.1f} | {gain:+.2f} | {b.binding.replace('_', '-')} | {b.status} "
                f"| {slot} | {b.columns} | {b.rows} | {b.seconds:.2f} |{extra}",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
