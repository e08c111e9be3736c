#!/usr/bin/env python
"""Convert result files of the retired row formats into the row schema (gpuaas.experiments.rows).

Before the one experiment pipeline, `gpuaas compare -o x.csv` and scripts/reproduce_paper.py
wrote their own columns. This rewrites such a file in place (atomically) as result rows, so that
`gpuaas plot`, the analysis and a resumed campaign read it; campaign files of any version need
no conversion (`read_results` reads them).

- ``compare``: the old comparison rows (method, seed, total_cost, ..., multiplier, nodes =
  simulated nodes, seed_independent); a seed-independent method's repeated rows become its one
  simulation (the first seed). The trace is named by ``--trace`` (its J by ``--jobs``, its
  catalog by ``--catalog``); ``--overhead`` / ``--startup`` fill files older than those columns.
- ``reproduction``: the old reproduce_paper rows (nodes_base, arrivals, trace_seed, jobs,
  method, multiplier, ...; the paper's costs 0 and 0, options as a Python dict): they become
  the cells of scripts/campaigns/reproduction.yaml, so that the campaign resumes the file.

    python scripts/convert_results.py reproduction scripts/results/reproduction.csv
    python scripts/convert_results.py compare scripts/results/archive/real-trace-aws.csv --trace philly-aws.json \\
        --jobs 533 --catalog aws-us-east-1 --overhead 0 --startup 0
"""

from __future__ import annotations

import argparse
import ast
import csv
from typing import Any

from gpuaas.errors import InputError
from gpuaas.experiments.cell import Cell
from gpuaas.experiments.rows import COLUMNS
from gpuaas.experiments.store import write_csv

COMPARE = [
    "method",
    "seed",
    "total_cost",
    "vm_cost",
    "tardiness_cost",
    "multiplier",
    "nodes",
    "tick",
]
REPRODUCTION = [
    "nodes_base",
    "arrivals",
    "trace_seed",
    "jobs",
    "method",
    "multiplier",
    "seed",
    "nodes",
]
METRICS = (
    "total_cost",
    "vm_cost",
    "tardiness_cost",
    "events",
    "migrations",
    "preemptions",
    "moves_per_job",
    "lost_work_cost",
    "startup_cost",
    "solver_seconds_mean",
    "wall_seconds",
    "tick",
    "bound",
    "cost_over_bound",
)
_INTS = {"events", "migrations", "preemptions"}


def _number(column: str, text: str | None) -> Any:
    if text in (None, ""):
        return None
    return int(text) if column in _INTS else float(text)


def _row(cell: Cell, old: dict[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(cell.params())
    row.update({k: _number(k, old.get(k)) for k in METRICS if k in old})
    row["status"] = "ok"
    return row


def convert_compare(rows: list[dict[str, str]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Old comparison rows -> result rows (one per simulation)."""
    out, seen = [], set()
    for r in rows:
        mult = int(r["multiplier"])
        if r.get("seed_independent") == "True":
            if (r["method"], mult) in seen:
                continue  # the same simulation, repeated for the other seeds
            seen.add((r["method"], mult))
        overhead = float(r["overhead"]) if r.get("overhead") not in (None, "") else args.overhead
        startup = float(r["startup"]) if r.get("startup") not in (None, "") else args.startup
        if overhead is None or startup is None:
            raise InputError(
                args.file,
                "overhead",
                "the file has no overhead / startup column: give --overhead and --startup",
            )
        cell = Cell.of(
            None,
            int(r["nodes"]) // mult,
            args.jobs,
            None,
            r["method"],
            int(r["seed"]),
            mult,
            overhead=overhead,
            startup=startup,
            catalog=args.catalog,
            trace=args.trace,
        )
        out.append(_row(cell, r))
    return out


def convert_reproduction(
    rows: list[dict[str, str]], args: argparse.Namespace
) -> list[dict[str, Any]]:
    """Old reproduce_paper rows -> the rows of scripts/campaigns/reproduction.yaml's cells."""
    out = []
    for r in rows:
        options = ast.literal_eval(r["options"]) if r.get("options") else {}
        cell = Cell.of(
            r["arrivals"],
            int(r["nodes_base"]),
            int(r["jobs"]),
            int(r["trace_seed"]),
            r["method"],
            int(r["seed"]),
            int(r["multiplier"]),
            overhead=0.0,
            startup=0.0,
            options=options,
        )
        out.append(_row(cell, r))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["compare", "reproduction"])
    ap.add_argument("file")
    ap.add_argument("--trace", help="compare: the compared trace's file name")
    ap.add_argument("--jobs", type=int, help="compare: the trace's number of jobs")
    ap.add_argument("--catalog", default="azure-2021", help="compare: the trace's catalog")
    ap.add_argument(
        "--overhead", type=float, help="compare: the restart overhead of a file without that column"
    )
    ap.add_argument(
        "--startup", type=float, help="compare: the VM start-up of a file without that column"
    )
    args = ap.parse_args()
    with open(args.file, newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = reader.fieldnames or [], list(reader)
    need = COMPARE if args.kind == "compare" else REPRODUCTION
    if header == COLUMNS or not set(need) <= set(header):
        raise SystemExit(
            f"{args.file}: not a file of the old {args.kind} rows (columns {', '.join(header[:5])} ...)"
        )
    if args.kind == "compare" and (args.trace is None or args.jobs is None):
        raise SystemExit("compare rows need --trace and --jobs")
    new = (
        convert_compare(rows, args) if args.kind == "compare" else convert_reproduction(rows, args)
    )
    write_csv(args.file, new)
    print(f"{args.file}: {len(rows)} old rows -> {len(new)} result rows")


if __name__ == "__main__":
    main()
