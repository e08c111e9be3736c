#!/usr/bin/env python
"""Issue 42's many-job grid: one zone against every zone of a zone catalog, with replayed spot.

Generated traces on a zone catalog (`aws-v100-zones` or `gcp-h100-zones`; N nodes, 10 N jobs per
seed and arrival pattern) are simulated by the default method on demand in one zone (the
reference), with spot in that zone, with spot in every zone, and by the spot baselines
(`managed-spot`, which fails over to any zone's spot, `uniform-progress` and `skynomad`, the
paper's per-job policy moving between zones) in every zone;
spot capacity is SkyNomad's traces (`--availability skynomad:DIR`, one VM per zone while it is
available; `gpuaas.availability.skynomad`). Per trace: total cost over the one-zone on-demand
run, cost over the bound, egress dollars, moves of data between locations, late jobs.

    python scripts/zone_grid.py --catalog aws-v100-zones --zone us-east-2b \\
        --availability skynomad:$SKYNOMAD/data/converted_multi_region_aligned \\
        --seeds 91 92 93 -o scripts/results/zone-grid-v100.jsonl --md scripts/results/zone-grid-v100.md

Rows are JSON lines (`-o`, appended: a rerun resumes); `--md` writes the tables of every row
below the page's hand-written text (`gpuaas.files.write_below_marker`), and with
`--solver-seed 0 1 2 3 4` (several seeds) each trace's means over them.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from multiprocessing import Pool
from pathlib import Path

from gpuaas.errors import InputError
from gpuaas.experiments.analysis import bootstrap_means, percentile_interval
from gpuaas.files import page_head, write_below_marker
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import simulate

KEYS = (
    "total_cost",
    "vm_cost",
    "tardiness_cost",
    "egress_cost",
    "transfers",
    "late_jobs",
    "deadline_miss_rate",
    "spot_cost",
    "interruptions",
    "bound",
)
#: the runs of one trace: name -> (method, spot, one zone only)
RUNS = {
    "on-demand, one zone": ("incremental", False, True),
    "spot, one zone": ("incremental", True, True),
    "spot, every zone": ("incremental", True, False),
    "managed-spot, every zone": ("managed-spot", True, False),
    "uniform-progress, every zone": ("uniform-progress", True, False),
    "skynomad, every zone": ("skynomad", True, False),
}


def run(cell: tuple) -> dict:
    """One simulation (`cell`: catalog, zone, availability, seed, arrivals, nodes, run name,
    solver seed)."""
    catalog, zone, availability, seed, arrivals, nodes, name, solver_seed = cell
    method, spot, one = RUNS[name]
    trace = Instance.from_dict(generate_trace(nodes, seed=seed, arrivals=arrivals, catalog=catalog))
    kw = {"locations": zone, "seed": solver_seed} if one else {"seed": solver_seed}
    if spot:
        kw.update(spot=True, availability=os.path.expandvars(availability))
    t0 = time.process_time()
    r = simulate(trace, method, **kw).to_dict()
    row = {k: r.get(k) for k in KEYS}
    row.update(catalog=catalog, zone=zone, seed=seed, arrivals=arrivals, nodes=nodes, run=name)
    row["cpu_seconds"] = round(time.process_time() - t0, 1)
    if solver_seed:
        row["solver_seed"] = solver_seed
    return row


def tables(rows: list[dict]) -> str:
    """Markdown: per catalog and N, a row per trace with each run's cost over the one-zone
    on-demand run, then its cost / bound, egress and moves of data, late jobs."""
    by = defaultdict(dict)
    for r in rows:
        group = (r["catalog"], r["zone"], r["nodes"], r.get("solver_seed", 0))
        by[group][(r["arrivals"], r["seed"], r["run"])] = r
    out = []
    for (catalog, zone, nodes, solver_seed), cells in sorted(by.items()):
        extra = f", solver seed {solver_seed}" if solver_seed else ""
        out.append(f"\n### {catalog}, N = {nodes}, one zone = {zone}{extra}\n")
        head = ["trace", "on demand $"] + [f"{n} / od" for n in list(RUNS)[1:]]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        traces = sorted({(a, s) for a, s, _ in cells})
        sums = defaultdict(float)
        for a, s in traces:
            od = cells.get((a, s, "on-demand, one zone"))
            if od is None:
                continue
            line = [f"{a}-{s}", f"{od['total_cost']:.2f}"]
            sums["od"] += od["total_cost"]
            for n in list(RUNS)[1:]:
                r = cells.get((a, s, n))
                line.append("-" if r is None else f"{r['total_cost'] / od['total_cost']:.3f}")
                if r is not None:
                    sums[n] += r["total_cost"]
            out.append("| " + " | ".join(line) + " |")
        line = ["**summed**", f"{sums['od']:.2f}"]
        line += [f"**{sums[n] / sums['od']:.3f}**" if sums[n] else "-" for n in list(RUNS)[1:]]
        out.append("| " + " | ".join(line) + " |")
        out.append(
            "\nPer run, summed over the traces: cost / bound, egress $, moves of data "
            "between locations, late jobs, deadline-miss rate (mean), spot $:\n"
        )
        out.append(
            "| run | cost / bound | egress $ | data moves | late jobs | miss rate | spot $ |"
        )
        out.append("|---|---|---|---|---|---|---|")
        for n in RUNS:
            rs = [cells[k] for k in cells if k[2] == n]
            if not rs:
                continue
            cost = sum(r["total_cost"] for r in rs)
            bound = sum(r["bound"] or 0.0 for r in rs)
            out.append(
                f"| {n} | {cost / bound:.3f} | {sum(r['egress_cost'] or 0 for r in rs):.2f} | "
                f"{sum(r['transfers'] or 0 for r in rs)} | {sum(r['late_jobs'] for r in rs)} | "
                f"{sum(r['deadline_miss_rate'] for r in rs) / len(rs):.3f} | "
                f"{sum(r['spot_cost'] or 0 for r in rs):.2f} |"
            )
    return "\n".join(out + seed_means(rows)) + "\n"


def seed_means(rows: list[dict]) -> list[str]:
    """Markdown lines: where traces ran at two or more solver seeds, each run's mean cost over
    those seeds over the one-zone on-demand run's mean over the same seeds, trace by trace, in
    round brackets the least and largest ratio of a single seed and in square ones the ratio's
    90 % interval, a paired bootstrap over the seeds (the default's cost varies between seeds,
    which one seed's ratio cannot tell from spot's effect). The row names the most seeds any of
    its runs had; a run at fewer says at which."""
    costs = defaultdict(dict)  # (catalog, zone, nodes, arrivals, seed, run) -> solver seed -> $
    for r in rows:
        key = (r["catalog"], r["zone"], r["nodes"], r["arrivals"], r["seed"], r["run"])
        costs[key][r.get("solver_seed", 0)] = r["total_cost"]
    by = defaultdict(dict)
    for (catalog, zone, nodes, arrivals, seed, name), runs in costs.items():
        od = costs.get((catalog, zone, nodes, arrivals, seed, "on-demand, one zone"), {})
        both = sorted(set(runs) & set(od))
        if name != "on-demand, one zone" and len(both) >= 2:
            mean = sum(runs[k] for k in both) / len(both)
            base = sum(od[k] for k in both) / len(both)
            each = [runs[k] / od[k] for k in both]
            draws = bootstrap_means([(runs[k], od[k]) for k in both])
            lo, hi = percentile_interval(draws[:, 0] / draws[:, 1])
            by[(catalog, zone, nodes)][(arrivals, seed, name)] = (mean / base, each, both, lo, hi)
    out = []
    for (catalog, zone, nodes), cells in sorted(by.items()):
        names = [n for n in list(RUNS)[1:] if any(k[2] == n for k in cells)]
        out.append(f"\n### {catalog}, N = {nodes}, one zone = {zone}: mean over solver seeds\n")
        out.append("| trace | solver seeds | " + " | ".join(f"{n} / od" for n in names) + " |")
        out.append("|" + "---|" * (len(names) + 2))
        for a, s in sorted({(a, s) for a, s, _ in cells}):
            found = [cells[(a, s, n)] for n in names if (a, s, n) in cells]
            seeds = ",".join(map(str, max((c[2] for c in found), key=len)))
            line = []
            for n in names:
                cell = cells.get((a, s, n))
                text = (
                    "-"
                    if cell is None
                    else f"{cell[0]:.4f} ({min(cell[1]):.3f}-{max(cell[1]):.3f}) "
                    f"[{cell[3]:.3f}-{cell[4]:.3f}]"
                )
                if cell is not None and ",".join(map(str, cell[2])) != seeds:
                    text += f" at {','.join(map(str, cell[2]))}"  # fewer seeds than the row's
                line.append(text)
            out.append(f"| {a}-{s} | {seeds} | " + " | ".join(line) + " |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catalog", default="aws-v100-zones")
    ap.add_argument("--zone", required=True, help="the one zone of the one-zone runs")
    ap.add_argument("--availability", required=True, help="skynomad:DIR (or any source)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[91, 92, 93])
    ap.add_argument("--arrivals", nargs="+", default=["exponential", "high", "low"])
    ap.add_argument("--nodes", type=int, nargs="+", default=[10])
    ap.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    ap.add_argument(
        "--solver-seed",
        type=int,
        nargs="+",
        default=[0],
        help="the runs' seeds (default 0); with two or more, --md adds the means over them",
    )
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-o", "--output", required=True, help="JSON lines (appended, resumed)")
    ap.add_argument(
        "--md",
        help="markdown tables of every row of --output, below the page's hand-written text "
        "(`gpuaas.files.write_below_marker`)",
    )
    args = ap.parse_args()
    try:
        if args.md:
            page_head(args.md)  # a page that would lose its text: refused before any run
    except InputError as exc:
        ap.exit(2, f"error: {exc}\n")
    out = Path(args.output)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            key = (r["catalog"], r["zone"], r["seed"], r["arrivals"], r["nodes"], r["run"])
            done.add((*key, r.get("solver_seed", 0)))
    cells = [
        (args.catalog, args.zone, args.availability, s, a, n, name, k)
        for k in args.solver_seed
        for n in args.nodes
        for s in args.seeds
        for a in args.arrivals
        for name in args.runs
        if (args.catalog, args.zone, s, a, n, name, k) not in done
    ]
    with Pool(args.jobs) as pool, out.open("a") as fh:
        for row in pool.imap_unordered(run, cells):
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            print(row["run"], row["arrivals"], row["seed"], row["nodes"], row["total_cost"],
                  row["cpu_seconds"], flush=True)  # fmt: skip
    if args.md:
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        write_below_marker(args.md, tables(rows))


if __name__ == "__main__":
    main()
