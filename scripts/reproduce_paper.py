#!/usr/bin/env python
"""Reproduce the paper's comparison (§4.3, Figs. 3-4, and §4.5) at a size two cores can run.

Scenarios: N = 10 and 20 nodes, J = 10 N jobs, exponential / high / low arrivals (§4.1), three
generated traces (seeds) each. Every trace is simulated with every method (method seed 1);
EDF and the DP baselines also with 2N and 4N nodes (§4.5). Rows stream into a CSV (an
interrupted run resumes: rows already in the CSV are skipped); the markdown report is written
from the CSV, side by side with the paper's reported ranges, followed by the hand-written
reading of the figures in `<md stem>-notes.md` when that file exists.

Usage::

    python scripts/reproduce_paper.py                      # the default grid, 2 processes
    python scripts/reproduce_paper.py --report-only        # rebuild the markdown from the CSV
    python scripts/reproduce_paper.py --sizes 10 --seeds 1 --methods edf,path-relinking
"""

from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
METHODS = ("path-relinking,randomized-greedy,greedy,edf,fifo,ps,dp-adjwct,dp-fastb,dp-fastwct,"
           "dp-wct,hierarchical")
#: Methods that §4.5 also runs with more nodes.
LARGER_POOLS = ("edf", "dp-adjwct", "dp-fastb")
FIELDS = ("nodes_base", "arrivals", "trace_seed", "jobs", "method", "multiplier", "seed", "nodes",
          "total_cost", "vm_cost", "tardiness_cost", "events", "migrations", "preemptions",
          "solver_seconds_mean", "wall_seconds", "options")  # fmt: skip
#: The paper's reported average cost reductions of Path Relinking (§4.3, Fig. 4).
PAPER = {"edf": "23-97 %", "dp": "43-95 %", "hierarchical": "7-20 %"}


def key(r: dict[str, Any]) -> tuple:
    """Identity of a row (for resuming)."""
    return (int(r["nodes_base"]), r["arrivals"], int(r["trace_seed"]), r["method"],
            int(r["multiplier"]))  # fmt: skip


def run_scenario(nodes: int, arrivals: str, trace_seed: int, method: str, multiplier: int,
                 options: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """Generate the trace and simulate one method on it (one process task)."""
    from gpuaas.compare import compare
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance
    from gpuaas.rescheduler import PAPER_COSTS

    trace = Instance.from_dict(generate_trace(nodes, 10 * nodes, trace_seed, arrivals=arrivals))
    (row,) = compare(trace, [method], [1], multipliers={method: multiplier},
                     options={method: options} if options else None, **PAPER_COSTS)  # the paper's setting
    return {**row, "nodes_base": nodes, "arrivals": arrivals, "trace_seed": trace_seed,
            "jobs": trace.n_jobs, "options": repr(options) if options else ""}  # fmt: skip


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of the results CSV with numbers parsed."""
    if not path.exists():
        return []
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for k in ("nodes_base", "trace_seed", "jobs", "multiplier", "seed", "nodes"):
            r[k] = int(r[k])
        for k in ("total_cost", "vm_cost", "tardiness_cost", "solver_seconds_mean", "wall_seconds"):
            r[k] = float(r[k]) if r[k] not in ("", None) else None
    return rows


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10,20", help="Node counts N (J = 10 N).")
    ap.add_argument("--arrivals", default="exponential,high,low")
    ap.add_argument("--seeds", default="1,2,3", help="Trace seeds.")
    ap.add_argument("--methods", default=METHODS)
    ap.add_argument("--multipliers", default="2,4", help="Extra node multipliers for EDF and DP (§4.5).")
    ap.add_argument("--hierarchical-sizes", default="10",
                    help="Node counts at which Hierarchical runs (it is by far the slowest).")
    ap.add_argument("--hierarchical-time-limit", type=float, default=0.25,
                    help="Time limit (s) of one controller's MILP.")
    ap.add_argument("--workers", type=int, default=2, help="Processes.")
    ap.add_argument("--csv", type=Path, default=RESULTS / "reproduction.csv")
    ap.add_argument("--md", type=Path, default=RESULTS / "reproduction.md")
    ap.add_argument("--report-only", action="store_true", help="Only rebuild the markdown.")
    args = ap.parse_args(list(argv) if argv is not None else None)
    command = "python scripts/reproduce_paper.py " + " ".join(sys.argv[1:] if argv is None else argv)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    made_by = args.csv.with_suffix(".command")  # the command that made the rows
    if not args.report_only:
        made_by.write_text(command.strip() + "\n")
        run_grid(args)
    elif made_by.exists():
        command = made_by.read_text().strip()
    rows = read_rows(args.csv)
    text = report(rows, command.strip(), args)
    notes = args.md.with_name(args.md.stem + "-notes.md")
    if notes.exists():  # the hand-written reading of the figures, kept across re-runs
        text += "\n" + notes.read_text()
    args.md.write_text(text)
    print(f"wrote {args.md} ({len(rows)} rows in {args.csv})")
    return 0


def run_grid(args: argparse.Namespace) -> None:
    """Simulate every missing (scenario, method, multiplier) cell, appending rows to the CSV."""
    sizes = [int(x) for x in args.sizes.split(",")]
    h_sizes = {int(x) for x in args.hierarchical_sizes.split(",") if x}
    methods = [m for m in args.methods.split(",") if m]
    mults = [int(x) for x in args.multipliers.split(",") if x]
    done = {key(r) for r in read_rows(args.csv)}
    tasks = []
    for n in sizes:
        for arr in args.arrivals.split(","):
            for s in (int(x) for x in args.seeds.split(",")):
                for m in methods:
                    if m == "hierarchical" and n not in h_sizes:
                        continue
                    opts = ({"controller_time_limit": args.hierarchical_time_limit}
                            if m == "hierarchical" else {})  # fmt: skip
                    for k in [1] + (mults if m in LARGER_POOLS else []):
                        if (n, arr, s, m, k) not in done:
                            tasks.append((n, arr, s, m, k, opts))
    # slow cells first, so the pool's tail is short
    tasks.sort(key=lambda t: (t[3] != "hierarchical", -t[0], t[3] != "path-relinking"))
    print(f"{len(tasks)} simulations to run ({len(done)} already in {args.csv})", flush=True)
    new = not args.csv.exists()
    start = time.perf_counter()
    with open(args.csv, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        if new:
            writer.writeheader()
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=args.workers, mp_context=ctx) as pool:
            futures = {pool.submit(run_scenario, *t): t for t in tasks}
            for i, fut in enumerate(as_completed(futures), 1):
                r = fut.result()
                writer.writerow(r)
                fh.flush()
                print(f"[{i}/{len(tasks)} {time.perf_counter() - start:7.0f} s] N={r['nodes_base']} "
                      f"{r['arrivals']} trace {r['trace_seed']} {r['method']} x{r['multiplier']}: "
                      f"{r['total_cost']:.0f} $ in {r['wall_seconds']:.1f} s", flush=True)  # fmt: skip


def _pct(algo: float, pr: float) -> float:
    return 100.0 * (algo - pr) / algo


def _mean(rows: list[dict[str, Any]], k: str) -> float:
    return sum(r[k] for r in rows) / len(rows)


def _stats(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):.1f} / {sum(values) / len(values):.1f} / {max(values):.1f}"


def report(rows: list[dict[str, Any]], command: str, args: argparse.Namespace) -> str:
    """The markdown report: per-scenario tables and the comparison with the paper's ranges."""
    by: dict[tuple, dict[tuple[str, int], float]] = {}
    for r in rows:
        by.setdefault((r["nodes_base"], r["arrivals"], r["trace_seed"]), {})[
            (r["method"], r["multiplier"])] = r["total_cost"]
    scen = sorted({(r["nodes_base"], r["arrivals"]) for r in rows},
                  key=lambda s: (s[0], ["exponential", "high", "low", "mixed"].index(s[1])))  # fmt: skip
    labels = []
    for r in rows:
        lab = (r["method"], r["multiplier"])
        if lab not in labels:
            labels.append(lab)
    order = METHODS.split(",")
    labels.sort(key=lambda x: (order.index(x[0]) if x[0] in order else 99, x[1]))
    out = [
        "# Reproduction of the paper's comparison (§4.3 Figs. 3-4, §4.5)",
        "",
        (f"Made by `{command}` with gpuaas on {platform.machine()} / Python "
        f"{platform.python_version()}, {os.cpu_count()} cores shared with other jobs "
        f"(timings are under that load). Rows: `{args.csv.name}` (one per trace x method x node "
        "multiplier, method seed 1). Traces: `gpuaas.generator.generate_trace(N, 10 N, seed, "
        "arrivals)`, seeds 1-3. Hierarchical: controllers of 5 nodes, MILP at 5 % gap, "
        f"{args.hierarchical_time_limit:g} s per controller MILP (warm start: Greedy repaired "
        "to meet P1n), run at "
        f"N = {args.hierarchical_sizes} only."),
        "",
        ("pct = (C_algo − C_PR) / C_algo · 100 (eq. 3), paired by trace; min / mean / max over the "
         "traces of a scenario. Ratio = mean cost / mean EDF cost (Fig. 3)."),
    ]
    for n, arr in scen:
        traces = sorted(s for (nn, a, s) in by if (nn, a) == (n, arr))
        out += ["", f"## N = {n}, {arr} arrivals ({len(traces)} traces, J = {10 * n})", "",
                ("| method | nodes | mean total $ | mean VM $ | mean tardiness $ | ratio to EDF | "
                 "pct vs PR % (min / mean / max) |"), "|---|---|---|---|---|---|---|"]  # fmt: skip
        edf = [by[(n, arr, s)].get(("edf", 1)) for s in traces]
        edf_mean = sum(edf) / len(edf) if edf and None not in edf else None
        for lab in labels:
            rs = [r for r in rows if (r["nodes_base"], r["arrivals"]) == (n, arr)
                  and (r["method"], r["multiplier"]) == lab]  # fmt: skip
            if not rs:
                continue
            pct = [_pct(r["total_cost"], by[(n, arr, r["trace_seed"])][("path-relinking", 1)])
                   for r in rs if ("path-relinking", 1) in by[(n, arr, r["trace_seed"])]]  # fmt: skip
            name = lab[0] if lab[1] == 1 else f"{lab[0]} ({lab[1]}N)"
            ratio = f"{_mean(rs, 'total_cost') / edf_mean:.3f}" if edf_mean else "-"
            out.append(f"| {name} | {lab[1] * n} | {_mean(rs, 'total_cost'):.0f} | {_mean(rs, 'vm_cost'):.0f} | "
                       f"{_mean(rs, 'tardiness_cost'):.0f} | {ratio} | {_stats(pct)} |")  # fmt: skip
    out += ["", "## Against the paper's ranges (average pct of Path Relinking, §4.3)", "",
            ("| scenario | vs EDF (paper 23-97 %) | vs best DP (paper 43-95 %) | "
             "vs Hierarchical (paper 7-20 %) | cheapest method (paper: PR everywhere) |"),
            "|---|---|---|---|---|"]  # fmt: skip
    for n, arr in scen:
        keyed = {s: c for (nn, a, s), c in by.items() if (nn, a) == (n, arr)}
        cells = []
        for group in (["edf"], ["dp-adjwct", "dp-fastb", "dp-fastwct", "dp-wct"], ["hierarchical"]):
            # the best of the group by mean cost over the scenario's traces (the paper: best DP)
            means = {}
            for m in group:
                cs = [c.get((m, 1)) for c in keyed.values()]
                if cs and None not in cs:
                    means[m] = sum(cs) / len(cs)
            if not means or any(("path-relinking", 1) not in c for c in keyed.values()):
                cells.append("-")
                continue
            best = min(means, key=means.get)
            pct = [_pct(c[(best, 1)], c[("path-relinking", 1)]) for c in keyed.values()]
            cells.append(f"{sum(pct) / len(pct):.1f} % ({best})")
        means = {}
        for lab in labels:
            if lab[1] != 1:
                continue
            cs = [c.get(lab) for c in keyed.values()]
            if cs and None not in cs:
                means[lab[0]] = sum(cs) / len(cs)
        cheapest = min(means, key=means.get) if means else "-"
        out.append(f"| N = {n}, {arr} | {cells[0]} | {cells[1]} | {cells[2]} | {cheapest} |")
    secs = [r["wall_seconds"] for r in rows if r["wall_seconds"] is not None]
    out += ["", (f"Total simulation wall time {sum(secs) / 60:.1f} min over {len(rows)} simulations "
                 f"(sum over processes; {math.fsum(secs) / max(1, len(secs)):.1f} s mean).")]  # fmt: skip
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
