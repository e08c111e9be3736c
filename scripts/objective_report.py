#!/usr/bin/env python
"""Tables of issue 27's online runs: methods paired by trace, cost over the lower bound.

Reads campaign result files (each row a simulation: `gpuaas campaign`), labels each row by its
method and the options that set it apart (`milp` on P1$ and on P1, `incremental` with a polish),
and prints, per arrival pattern and restart overhead, each label's mean cost / bound, mean
moves per job and its total cost against the first label's on the same traces (paired). A file
given as PATH=NAME labels its rows NAME: runs of an earlier version of the code.

    python scripts/objective_report.py scripts/results/objective-loop.csv \\
        scripts/results/archive/objective-loop-before.csv scripts/results/objective-loop-p1a.csv \\
        -o scripts/results/objective-loop.md
    python scripts/objective_report.py scripts/results/objective-loop.csv \\
        scripts/results/objective-loop-more.csv \\
        "scripts/results/archive/objective-loop-c63badd.csv=incremental at c63badd" --title \\
        "The default's polish of every point of at most 5 node slots against its polish at c63badd" \\
        -o scripts/results/objective-rule6.md

(`objective-loop.csv` from `scripts/campaigns/objective-loop.yaml`; the run before
`move_tardiness: each` is archived, frozen at 38b27ef:
`scripts/results/archive/objective-loop-38b27ef.md`, `objective-rule6-38b27ef.md`.)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from gpuaas.experiments.store import read_results
from gpuaas.files import write_atomic


def label(row: dict) -> str:
    """The method and what its options change: milp's objective, incremental's polishes."""
    options = json.loads(row["options"] or "{}")
    if row["method"] == "milp":
        obj = options.get("objective", "dollars")
        return f"milp {'P1$' if obj == 'dollars' else 'P1'} {options.get('time_limit', '')} s"
    if options.get("polish_nodes"):
        return f"{row['method']} + polish {options['polish_nodes']} nodes"
    if "polish" in options:
        p = options["polish"]
        return f"{row['method']} + polish {p} s" if p else f"{row['method']} without polish"
    return row["method"]


def table(paths: list[str], title: str) -> str:
    rows = []
    for spec in paths:
        path, _, name = spec.partition("=")
        rows += [(r, name) for r in read_results(path) if r["status"] == "ok"]
    groups: dict[tuple, dict[str, dict]] = defaultdict(dict)
    order: list[str] = []
    for r, name in rows:
        lab = name or label(r)
        if lab not in order:
            order.append(lab)
        key = (int(r["nodes"]), r["arrivals"], float(r["overhead"]), float(r["startup"]))
        groups[key].setdefault(lab, {})[int(r["trace_seed"])] = r
    out = [
        f"# {title}",
        "",
        "Per scenario: each method's mean cost / lower bound and moves per job over the traces "
        f"it ran; `vs {order[0]}` is its total cost over {order[0]}'s on the same traces "
        "(min / mean / max of the per-trace ratios). Rows: " + ", ".join(f"`{p}`" for p in paths),
        "",
        f"| N | arrivals | restart s | start-up s | method | traces | cost / bound | moves / job | "
        f"vs {order[0]} (min / mean / max) | solver s / event |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key in sorted(groups):
        by = groups[key]
        base = by.get(order[0], {})
        for lab in order:
            if lab not in by:
                continue
            runs = by[lab]
            ratio = np.mean([float(r["cost_over_bound"]) for r in runs.values()])
            moves = np.mean([float(r["moves_per_job"]) for r in runs.values()])
            rel = [
                float(r["total_cost"]) / float(base[s]["total_cost"])
                for s, r in runs.items()
                if s in base
            ]
            vs = f"{min(rel):.4f} / {np.mean(rel):.4f} / {max(rel):.4f}" if rel else ""
            secs = np.mean([float(r["solver_seconds_mean"] or "nan") for r in runs.values()])
            out.append(
                f"| {key[0]} | {key[1]} | {key[2]:g} | {key[3]:g} | {lab} | {len(runs)} | "
                f"{ratio:.4f} | {moves:.2f} | {vs} | {secs:.3f} |"
            )
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--title", default="MILP in the loop on P1$ and on P1 against the default")
    ap.add_argument("-o", "--output", type=Path)
    args = ap.parse_args(argv)
    text = table(args.files, args.title)
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
