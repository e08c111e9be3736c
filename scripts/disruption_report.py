"""Markdown report of the disruption-limits campaign (scripts/campaigns/disruption.yaml).

Per arrival pattern and run (a method with its limits: "cap K" voluntary moves per job, "B/h"
per hour), the mean over the traces of cost / bound, moves per job and what the limits add to
the same method's cost without them (paired by trace), the most moves of one job in any run,
and whether every run kept its limit per job.

    python scripts/disruption_report.py scripts/results/disruption.csv -o scripts/results/disruption.md
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

from gpuaas.experiments.analysis import ok_rows, order, row_run
from gpuaas.experiments.store import read_results
from gpuaas.files import write_atomic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    all_rows = read_results(args.results)
    rows = ok_rows(all_rows)
    free = {
        (r["arrivals"], r["trace_seed"], r["method"]): r["total_cost"]
        for r in rows
        if r["max_moves"] is None and r["moves_per_hour"] is None
    }
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["arrivals"], row_run(r))].append(r)
    held = all(r["max_moves"] is None or r["max_job_moves"] <= r["max_moves"] for r in rows)
    failed = len(all_rows) - len(rows)
    out = [
        f"# Disruption limits: cost / bound and moves per job ({args.results})",
        "",
        "cap K: at most K voluntary moves (migrations and preemptions the method chooses) per "
        "job; B/h: at most B in any hour. Each row: the mean over the traces, cost / bound, "
        "moves per job, the most moves of one job in any of the runs, and the cost the limit "
        "adds to the same method without it (mean of the per-trace ratios). "
        f"{len(rows)} simulations ({failed} failed); every run kept its limit per job: "
        f"{'yes' if held else 'NO'}.",
        "",
    ]
    for arrivals in sorted({a for a, _ in groups}):
        out += [
            f"## {arrivals} arrivals, N = {rows[0]['nodes']}",
            "",
            "| run | traces | cost / bound | moves per job | most moves of a job | limit adds |",
            "|---|---|---|---|---|---|",
        ]
        for run in order(r for a, r in groups if a == arrivals):
            rs = groups[(arrivals, run)]
            added = [
                r["total_cost"] / free[(arrivals, r["trace_seed"], r["method"])] - 1
                for r in rs
                if (arrivals, r["trace_seed"], r["method"]) in free
            ]
            limited = rs[0]["max_moves"] is not None or rs[0]["moves_per_hour"] is not None
            out.append(
                f"| {run} | {len(rs)} | {statistics.fmean(r['cost_over_bound'] for r in rs):.3f} "
                f"| {statistics.fmean(r['moves_per_job'] for r in rs):.2f} "
                f"| {max(r['max_job_moves'] for r in rs)} | "
                + (f"{100 * statistics.fmean(added):+.1f} %" if limited and added else "-")
                + " |"
            )
        out.append("")
    text = "\n".join(out) + "\n"
    if args.output:
        write_atomic(args.output, text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
