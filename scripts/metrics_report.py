#!/usr/bin/env python
"""The job metrics of results files as a Markdown table per file (scripts/results/real-trace.md).

One line per run (`gpuaas.experiments.analysis.summarize`: the mean over its simulations, or
over those of one method seed with ``--seed``; the runs in the file's order): total cost, deadline-miss rate (late jobs / jobs), tardiness of
all jobs p95 / p99, lateness of the late jobs p50 / p95 / p99, JCT p50 / p95 / p99 in hours, and
waiting mean / p95 in minutes (definitions: `gpuaas/metrics.py`).

    python scripts/metrics_report.py scripts/results/real-trace-default-costs.csv [...] --seed 1
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpuaas.experiments import analysis
from gpuaas.experiments.store import read_results
from gpuaas.files import write_atomic


def times(s: dict[str, Any], *names: str, unit: float = 3600.0) -> str:
    """The metrics `names` of a summary in `unit` seconds (hours), "-" where absent."""
    return " / ".join("-" if s[n] is None else f"{s[n] / unit:.2f}" for n in names)


def thousands(x: float) -> str:
    """57 272: the reports' thousands separator."""
    return f"{x:,.0f}".replace(",", " ")


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of one results file's runs."""
    summary = {s["run"]: s for s in analysis.summarize(rows)}  # in the rows' order
    lines = [
        "| method | runs | total $ | miss % (late / jobs) | tardiness p95 / p99 h "
        "| late jobs' lateness p50 / p95 / p99 h | JCT p50 / p95 / p99 h | waiting mean / p95 min |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run, s in summary.items():
        if s["deadline_miss_rate"] is None:
            sys.exit(f"{run}: no job metrics in these rows (rerun them: scripts/rerun_rows.py)")
        lines.append(
            f"| {run} | {s['runs']} | {thousands(s['total_cost'])} "
            f"| {100 * s['deadline_miss_rate']:.1f} ({s['late_jobs']:.3g} / {s['jobs_completed']:.0f}) "
            f"| {times(s, 'tardiness_p95', 'tardiness_p99')} "
            f"| {times(s, 'lateness_of_late_p50', 'lateness_of_late_p95', 'lateness_of_late_p99')} "
            f"| {times(s, 'jct_p50', 'jct_p95', 'jct_p99')} "
            f"| {times(s, 'mean_waiting', 'waiting_p95', unit=60.0)} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="results files (CSV or Parquet)")
    ap.add_argument("--seed", type=int, help="only the simulations of this method seed")
    ap.add_argument("-o", "--output", help="write the tables here (default: standard output)")
    args = ap.parse_args()
    text = "\n\n".join(
        f"{path}\n\n" + table([r for r in read_results(path) if args.seed in (None, r["seed"])])
        for path in args.results
    )
    if args.output:
        write_atomic(args.output, text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
