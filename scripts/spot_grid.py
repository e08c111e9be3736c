#!/usr/bin/env python
"""Issue 41's grid: the default with spot against the default without it, trace by trace.

Generated aws-us-east-1 traces (N nodes, 10 N jobs, per seed and arrival pattern) are simulated
by the default method without spot, then with each spot source given (`--source NAME=SPEC`:
an availability, `model[...]` or replayed files; paths may name `$GPUAAS_SPOT_TRACES`), and
with each of `--methods` (the spot baselines under the same source). Per trace and source: total
cost over the run without spot, the spot-aware bound over it, the share of the possible saving
taken, (on demand - cost) / (on demand - bound), tardiness and late jobs beside it.

    GPUAAS_SPOT_TRACES=/path/to/spot-traces python scripts/spot_grid.py --seeds 81 82 83 84 \\
        --source replay=p3.2xlarge=...,p3.16xlarge=... --source model=model -o out.jsonl --md out.md

Rows are JSON lines (`-o`, appended: a rerun resumes); `--md` writes the tables (below the
page's hand-written text, `gpuaas.files.write_below_marker`), and where
traces ran at two or more solver seeds (`--solver-seed 0 1 2 3 4`), each trace's mean cost with
spot over its mean without: the default's cost varies between seeds (up to 13 % under high
arrivals), so one seed's ratio mixes spot's effect with that variation. Beside each ratio of
means, its 90 % interval by a paired bootstrap over the solver seeds (a seed's two runs drawn
together): a trace is dearer with spot beyond noise where the whole interval is above 1.
`--means-only` writes those means alone (a grid run at many solver seeds).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from multiprocessing import Pool
from pathlib import Path

import numpy as np

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
    "late_jobs",
    "interruptions",
    "spot_cost",
    "events",
    "migrations",
    "bound",
)


def run(cell: tuple) -> dict:
    """One simulation of the grid (a `cell` tuple: seed, arrivals, nodes, source, spec, method,
    settings, solver seed)."""
    seed, arrivals, nodes, source, spec, method, settings, solver_seed = cell
    trace = generate_trace(nodes, seed=seed, arrivals=arrivals, catalog="aws-us-east-1")
    kw = dict(settings, seed=solver_seed)
    if spec is not None:
        kw.update(spot=True, availability=os.path.expandvars(spec))
    t0 = time.process_time()
    r = simulate(Instance.from_dict(trace), method, **kw).to_dict()
    row = {k: r.get(k) for k in KEYS}
    row.update(seed=seed, arrivals=arrivals, nodes=nodes, source=source, method=method)
    row.update(settings=dict(settings), cpu_seconds=time.process_time() - t0)
    if solver_seed:
        row["solver_seed"] = solver_seed
    return row


def key(r: dict) -> tuple:
    return (
        r["seed"],
        r["arrivals"],
        r["nodes"],
        r["source"],
        r["method"],
        json.dumps(r["settings"]),
        r.get("solver_seed", 0),
    )


def tables(rows: list[dict]) -> str:
    """The markdown tables of the rows: per source and method, trace by trace."""

    def trace(r: dict) -> tuple:
        return r["seed"], r["arrivals"], r["nodes"], r.get("solver_seed", 0)

    od = {trace(r): r for r in rows if r["source"] == "none"}
    by: dict[tuple, list] = defaultdict(list)
    for r in rows:
        base = od.get(trace(r))
        if r["source"] != "none" and base is not None:
            group = (r.get("solver_seed", 0), r["source"], r["method"], json.dumps(r["settings"]))
            by[group].append((r, base))
    out = []
    for (solver_seed, source, method, settings), pairs in sorted(by.items()):
        pairs.sort(key=lambda p: (p[0]["arrivals"], p[0]["seed"]))
        ratios = [r["total_cost"] / b["total_cost"] for r, b in pairs]
        total = sum(r["total_cost"] for r, _ in pairs) / sum(b["total_cost"] for _, b in pairs)
        tard = (
            sum(r["tardiness_cost"] for r, _ in pairs),
            sum(b["tardiness_cost"] for _, b in pairs),
        )
        late = sum(r["late_jobs"] for r, _ in pairs), sum(b["late_jobs"] for _, b in pairs)
        extra = "" if settings == "{}" else f", {settings}"
        extra += f", solver seed {solver_seed}" if solver_seed else ""
        out += [
            f"### {method}, {source}{extra}",
            "",
            f"Summed over {len(pairs)} traces: {total:.4f} x without spot (per trace "
            f"{min(ratios):.4f}-{max(ratios):.4f}; above 1.005 on {sum(x > 1.005 for x in ratios)}); "
            f"tardiness {tard[0]:.0f} $ against {tard[1]:.0f} $, late jobs {late[0]} against "
            f"{late[1]}.",
            "",
            "| trace | without spot $ | with spot $ | ratio | bound / without | share of the possible saving | tardiness $ (without) | late (without) | interruptions |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r, b in pairs:
            gap = b["total_cost"] - r["bound"]
            share = (b["total_cost"] - r["total_cost"]) / gap if gap > 0 else float("nan")
            out.append(
                f"| {r['arrivals']}-{r['seed']} N={r['nodes']} | {b['total_cost']:.2f} | "
                f"{r['total_cost']:.2f} | {r['total_cost'] / b['total_cost']:.4f} | "
                f"{r['bound'] / b['total_cost']:.3f} | {share:.3f} | {r['tardiness_cost']:.0f} "
                f"({b['tardiness_cost']:.0f}) | {r['late_jobs']} ({b['late_jobs']}) | "
                f"{r['interruptions']} |"
            )
        out.append("")
    return "\n".join(out + seed_means(rows))


def seed_means(rows: list[dict]) -> list[str]:
    """Per source, method and settings, where traces were run at two or more solver seeds: each
    trace's mean cost with spot over its mean cost without, beside the per-seed ratios and the
    spread of the runs without spot (the default's own variation between seeds, which a
    single-seed ratio cannot tell from spot's effect). Markdown lines; none without such runs."""
    runs: dict[tuple, dict[int, float]] = defaultdict(dict)
    for r in rows:
        group = (
            ("none", "", "")
            if r["source"] == "none"
            else (
                r["source"],
                r["method"],
                json.dumps(r["settings"]),
            )
        )
        runs[(group, r["arrivals"], r["seed"], r["nodes"])][r.get("solver_seed", 0)] = r[
            "total_cost"
        ]
    by: dict[tuple, list] = defaultdict(list)
    for (group, arrivals, seed, nodes), costs in runs.items():
        base = runs.get((("none", "", ""), arrivals, seed, nodes), {})
        both = sorted(set(costs) & set(base))
        if group[0] != "none" and len(both) >= 2:
            by[group].append((arrivals, seed, nodes, [(costs[s], base[s]) for s in both], both))
    out = []
    for (source, method, settings), traces in sorted(by.items()):
        traces.sort()
        draws = [bootstrap_means(p) for *_, p, _ in traces]  # (B, 2) each
        bounds = [percentile_interval(d[:, 0] / d[:, 1]) for d in draws]
        means = [
            (sum(c for c, _ in p) / len(p), sum(b for _, b in p) / len(p)) for *_, p, _ in traces
        ]
        ratios = [m / b for m, b in means]
        total = sum(m for m, _ in means) / sum(b for _, b in means)
        summed = np.sum(draws, axis=0)
        beyond = sum(lo > 1 for lo, _ in bounds)
        extra = "" if settings == "{}" else f", {settings}"
        out += [
            f"### {method}, {source}{extra}: mean over solver seeds",
            "",
            f"Summed over {len(traces)} traces: {total:.4f} x without spot "
            f"({interval(*percentile_interval(summed[:, 0] / summed[:, 1]))}; per trace "
            f"{min(ratios):.4f}-{max(ratios):.4f}; above 1.005 on {sum(x > 1.005 for x in ratios)}; "
            f"dearer beyond noise, the interval above 1, on {beyond}).",
            "",
            "| trace | solver seeds | mean without spot $ | mean with spot $ | ratio of means | 90 % interval | ratio per seed | without spot: least / most over mean |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for (arrivals, seed, nodes, pairs, seeds), (m, b), bound in zip(traces, means, bounds):
            per = " ".join(f"{c / w:.3f}" for c, w in pairs)
            lo, hi = min(w for _, w in pairs) / b, max(w for _, w in pairs) / b
            out.append(
                f"| {arrivals}-{seed} N={nodes} | {seeds_label(seeds)} | {b:.2f} | "
                f"{m:.2f} | {m / b:.4f} | {interval(*bound)} | {per} | "
                f"{lo:.3f} / {hi:.3f} |"
            )
        out.append("")
    return out


def interval(lo: float, hi: float) -> str:
    return f"{lo:.3f}-{hi:.3f}"


def seeds_label(seeds: list[int]) -> str:
    """0,1,2 or, for a consecutive run of more than five, 0-14."""
    consecutive = seeds == list(range(seeds[0], seeds[-1] + 1))
    return (
        f"{seeds[0]}-{seeds[-1]}" if consecutive and len(seeds) > 5 else ",".join(map(str, seeds))
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[81, 82, 83, 84])
    ap.add_argument("--arrivals", nargs="+", default=["exponential", "high", "low"])
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--source", action="append", default=[], help="NAME=SPEC (repeatable)")
    ap.add_argument("--methods", nargs="+", default=["incremental"])
    ap.add_argument("--settings", default="{}", help="JSON run settings for the spot runs")
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
    ap.add_argument("--means-only", action="store_true", help="--md: the means over seeds alone")
    args = ap.parse_args()
    try:
        if args.md:
            page_head(args.md)  # a page that would lose its text: refused before any run
    except InputError as exc:
        ap.exit(2, f"error: {exc}\n")
    settings = tuple(sorted(json.loads(args.settings).items()))
    sources = [("none", None)] + [tuple(s.split("=", 1)) for s in args.source]
    cells = [
        (
            seed,
            arrivals,
            args.nodes,
            name,
            spec,
            method,
            () if spec is None else settings,
            solver_seed,
        )
        for solver_seed in args.solver_seed
        for seed in args.seeds
        for arrivals in args.arrivals
        for name, spec in sources
        for method in (["incremental"] if spec is None else args.methods)
    ]
    path = Path(args.output)
    done = (
        {key(json.loads(line)) for line in path.read_text().splitlines()}
        if path.exists()
        else set()
    )
    todo = [
        c for c in cells if (c[0], c[1], c[2], c[3], c[5], json.dumps(dict(c[6])), c[7]) not in done
    ]
    with Pool(args.jobs) as pool, path.open("a") as out:
        for row in pool.imap_unordered(run, todo):
            out.write(json.dumps(row) + "\n")
            out.flush()
    if args.md:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        text = "\n".join(seed_means(rows)) if args.means_only else tables(rows)
        write_below_marker(args.md, text)


if __name__ == "__main__":
    main()
