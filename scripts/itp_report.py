#!/usr/bin/env python
"""The ITP clusters' simulations (issue 28 item 4) as a markdown table: per cluster and method,
total cost, cost / bound, deadline-miss rate, moves per job and CPU seconds, from the rows of
`gpuaas campaign scripts/campaigns/itp.yaml` (or of `gpuaas compare itpNN.json --methods
incremental,edf,greedy -o itpNN.csv`, one file per cluster); the cluster is the number in the
row's trace file name.

    python scripts/itp_report.py scripts/results/itp-campaign.csv
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from gpuaas.experiments.store import read_results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="campaign or compare rows of itpNN.json traces")
    args = ap.parse_args()
    print(
        "| cluster | N | jobs | method | total $ | cost / bound | miss % | moves / job | CPU s |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    rows = []
    for path in args.results:
        for r in read_results(path):
            if r["status"] != "ok":
                raise SystemExit(f"{path}: {r['cell']}: {r['status']} ({r['error']})")
            cluster = re.search(r"(\d+)", Path(r["trace"]).stem)
            rows.append((int(cluster.group(1)) if cluster else 0, r))
    for cluster, r in sorted(rows, key=lambda cr: cr[0]):  # stable: each file's method order
        print(
            f"| {cluster or '?'} | {r['sim_nodes']} "
            f"| {r['jobs_completed']} | {r['method']} | {r['total_cost']:,.0f} "
            f"| {r['cost_over_bound']:.3f} | {100 * r['deadline_miss_rate']:.1f} "
            f"| {r['moves_per_job']:.2f} | {r['cpu_seconds']:.0f} |"
        )


if __name__ == "__main__":
    main()
