"""Markdown report of a quality campaign (scripts/campaigns/quality.yaml): cost / bound and moves.

For every (N, arrivals, restart overhead) it gives each method's cost / bound over the traces
(mean and range) and its moves per job, and checks issue 11's bars for the default method: no
dearer than the best other method with the same N nodes, and at most 1.10 x the bound (under
high arrivals: 1.10 x the bound or half the best of greedy / randomized greedy / path relinking,
whichever is larger; `--before` gives those costs, measured on the issue's commit), and at most
1 move per job at a 600 s restart. Means are over the traces of a cell; a file with several
catalogs gets a catalog column.

    python scripts/quality_report.py scripts/results/quality.csv -o scripts/results/quality.md

With ``--previous OLD.csv`` (the same campaign run on earlier code) a second table gives, per
cell and method, the mean cost / bound and moves per job in OLD and now, and how many of the
cell's runs have the same total cost.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections import defaultdict
from pathlib import Path

from gpuaas.experiments.analysis import ok_rows, row_run
from gpuaas.experiments.store import read_results
from gpuaas.methods import DEFAULT_METHOD

PAPER_HEURISTICS = ("greedy", "randomized-greedy", "path-relinking")


def cell_order(key: tuple) -> tuple:
    """Sort key of a cell (catalog, N, arrivals, restart s): exponential, low, high arrivals
    first, any other pattern after them."""
    catalog, n, arrivals, overhead = key
    known = ("exponential", "low", "high")
    return catalog, n, known.index(arrivals) if arrivals in known else len(known), overhead


def moves(row: dict) -> float:
    """Migrations + preemptions per job."""
    return (row["migrations"] + row["preemptions"]) / max(1, row["jobs_completed"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--output")
    ap.add_argument(
        "--before",
        help="CSV rows N, trace seed, restart s, method, total cost of the paper's "
        "heuristics at the issue's commit (high arrivals), for the high-arrival bar",
    )
    ap.add_argument("--previous", help="the same campaign's results on earlier code")
    args = ap.parse_args()
    before: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    if args.before:
        for n, _seed, ov, m, cost in csv.reader(open(args.before)):
            before[(int(n), "high", float(ov))][m].append(float(cost))
    rows = ok_rows(read_results(args.results))
    cells: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cells[(r["catalog"], r["nodes"], r["arrivals"], r["overhead"])][row_run(r)].append(r)
    catalogs = len({k[0] for k in cells}) > 1  # a catalog column
    methods = sorted({row_run(r) for r in rows}, key=lambda m: (m != DEFAULT_METHOD, " x" in m, m))
    out = [
        f"# Quality: total cost / lower bound, and moves per job ({args.results})",
        "",
        "Each cell: mean cost / bound over the traces [min-max], then moves (migrations + "
        "preemptions) per job. `xK`: run with K x N nodes (its bound is for K x N nodes).",
        "",
    ]
    out.append(
        "| "
        + "catalog | " * catalogs
        + "N | arrivals | restart s | "
        + " | ".join(methods)
        + " | default meets the bar |"
    )
    out.append("|---|---|---|" + "---|" * (len(methods) + 1 + catalogs))
    verdicts = []
    for key in sorted(cells, key=cell_order):
        by = cells[key]
        catalog, key = key[0], key[1:]
        ratio = {m: [r["cost_over_bound"] for r in rs] for m, rs in by.items()}
        move = {m: statistics.mean(moves(r) for r in rs) for m, rs in by.items()}
        parts = []
        for m in methods:
            if m not in ratio:
                parts.append("")
                continue
            v = ratio[m]
            parts.append(f"{statistics.mean(v):.3f} [{min(v):.2f}-{max(v):.2f}], {move[m]:.1f}")
        verdict = ""
        if DEFAULT_METHOD in by:
            cost = {m: statistics.mean(r["total_cost"] for r in rs) for m, rs in by.items()}
            others = [cost[m] for m in cost if m != DEFAULT_METHOD and " x" not in m]
            mean_b = statistics.mean(r["bound"] for r in by[DEFAULT_METHOD])
            bar = 1.10 * mean_b
            if key[1] == "high":  # half the best paper heuristic as it was at the commit
                then = before.get((key[0], "high", float(key[2])), {})
                paper = [statistics.mean(v) for m, v in then.items() if m in PAPER_HEURISTICS]
                bar = max(bar, 0.5 * min(paper)) if paper else bar
            checks = [
                cost[DEFAULT_METHOD] <= min(others) * (1 + 1e-9) if others else True,
                cost[DEFAULT_METHOD] <= bar,
            ]
            if key[2] and key[2] >= 600:
                checks.append(move[DEFAULT_METHOD] <= 1.0)
            names = ["<= best other", "<= bar", "<= 1 move/job"]
            verdict = ", ".join(("yes " if ok else "NO ") + n for ok, n in zip(checks, names))
            verdicts.append(all(checks))
        out.append(
            "| "
            + f"{catalog} | " * catalogs
            + f"{key[0]} | {key[1]} | {key[2]:g} | "
            + " | ".join(parts)
            + f" | {verdict} |"
        )
    out += [
        "",
        f"The default method meets every bar in {sum(verdicts)} of {len(verdicts)} cells.",
        "",
    ]
    if args.previous:
        out += changes(ok_rows(read_results(args.previous)), rows, methods, args.previous)
    text = "\n".join(out)
    if args.output:
        Path(args.output).write_text(text)
    else:
        print(text)


def changes(old: list[dict], new: list[dict], methods: list[str], name: str) -> list[str]:
    """Per cell and method: mean cost / bound and moves per job in `old` -> in `new`, and the
    runs whose total cost is the same."""
    before = {r["cell"]: r for r in old}
    cells: dict[tuple, dict[str, list[tuple[dict, dict]]]] = defaultdict(lambda: defaultdict(list))
    for r in new:
        if r["cell"] in before:
            key = (r["catalog"], r["nodes"], r["arrivals"], r["overhead"])
            cells[key][row_run(r)].append((before[r["cell"]], r))
    out = [
        f"## Change from {name}",
        "",
        "Each cell: mean cost / bound before -> now, moves per job before -> now, runs with the "
        "same total cost.",
        "",
        "| N | arrivals | restart s | " + " | ".join(methods) + " |",
        "|---|---|---|" + "---|" * len(methods),
    ]
    for key in sorted(cells, key=cell_order):
        parts = []
        for m in methods:
            pairs = cells[key].get(m, [])
            if not pairs:
                parts.append("")
                continue
            a = statistics.mean(o["cost_over_bound"] for o, _ in pairs)
            b = statistics.mean(n["cost_over_bound"] for _, n in pairs)
            ma = statistics.mean(moves(o) for o, _ in pairs)
            mb = statistics.mean(moves(n) for _, n in pairs)
            same = sum(o["total_cost"] == n["total_cost"] for o, n in pairs)
            parts.append(f"{a:.3f} -> {b:.3f}, {ma:.1f} -> {mb:.1f}, {same}/{len(pairs)}")
        out.append(f"| {key[1]} | {key[2]} | {key[3]:g} | " + " | ".join(parts) + " |")
    return out + [""]


if __name__ == "__main__":
    main()
