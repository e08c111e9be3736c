#!/usr/bin/env python
"""The ITP clusters' simulations (issue 28 item 4) as a markdown table: per cluster and method,
total cost, cost / bound, deadline-miss rate, moves per job and CPU seconds, from the rows of
`gpuaas compare itpNN.json --methods incremental,edf,greedy -o itpNN.csv`.

    python scripts/itp_report.py scripts/results/itp-sims/itp*.csv
"""

from __future__ import annotations

import argparse
import re

from gpuaas.experiments.store import read_results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="compare rows of one cluster each (itpNN.csv)")
    args = ap.parse_args()
    print(
        "| cluster | N | jobs | method | total $ | cost / bound | miss % | moves / job | CPU s |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    for path in sorted(args.results):
        cluster = re.search(r"(\d+)", path.rsplit("/", 1)[-1])
        for r in read_results(path):
            if r["status"] != "ok":
                raise SystemExit(f"{path}: {r['cell']}: {r['status']} ({r['error']})")
            print(
                f"| {int(cluster.group(1)) if cluster else '?'} | {r['sim_nodes']} "
                f"| {r['jobs_completed']} | {r['method']} | {r['total_cost']:,.0f} "
                f"| {r['cost_over_bound']:.3f} | {100 * r['deadline_miss_rate']:.1f} "
                f"| {r['moves_per_job']:.2f} | {r['cpu_seconds']:.0f} |"
            )


if __name__ == "__main__":
    main()
