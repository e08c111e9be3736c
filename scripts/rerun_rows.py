#!/usr/bin/env python
"""Simulate the cells of a results file again with the current code: every column, and the JSON.

For a results file written before a column existed (e.g. the job metrics of `gpuaas.metrics`):
each row's cell is rebuilt from its parameter columns (a given trace read from the file that
``--trace NAME=FILE`` maps its `trace` column to; a generated trace from its parameters) and
must have the row's key; it is simulated again and its new row written to OUT, in the input's
order (a simulation that raises gives a "failed" row with its error, as in a campaign). With ``--json-dir`` each simulation's result (the JSON of `gpuaas simulate --json`, per-job
records included: what `gpuaas plot cdf` reads) is kept there as ``<cell>.json``, and a cell
whose JSON is there already is not simulated again (its row is rebuilt from it), so an
interrupted rerun resumes. `scripts/same_results.py OLD OUT` then shows what moved.

    python scripts/rerun_rows.py scripts/results/real-trace-restart600.csv \\
        --trace philly.json=philly.json -o new.csv --json-dir sims/
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from gpuaas.experiments.cell import Cell, cell_simulation, failed_row, result_row, with_bounds
from gpuaas.experiments.store import read_results, write_csv
from gpuaas.files import to_json, write_atomic
from gpuaas.instance import load_instance


def row_cell(row: dict[str, Any], traces: dict[str, Any]) -> Cell:
    """The cell of a results row (the tick from its key, the only parameter not in a column; a
    parameter newer than the file, empty in its rows, at its default)."""
    given: dict[str, Any] = {}
    if row["trace"] is not None:
        if row["trace"] not in traces:
            sys.exit(f"{row['cell']}: no --trace for {row['trace']!r}")
        given["instance"] = traces[row["trace"]]
    tick = re.search(r"-tick([0-9.e+]+)", row["cell"])
    cell = Cell.from_params(row, tick=float(tick.group(1)) if tick else None, **given)
    if cell.key != row["cell"]:
        sys.exit(f"{row['cell']}: its parameters give the cell {cell.key!r}")
    return cell


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="the results file whose cells are simulated again")
    ap.add_argument("-o", "--output", required=True, help="the new results CSV")
    ap.add_argument(
        "--trace", action="append", default=[], metavar="NAME=FILE", help="a given trace's file"
    )
    ap.add_argument("--json-dir", help="keep (and resume from) each simulation's result JSON")
    args = ap.parse_args()
    traces = {}
    for item in args.trace:
        name, _, file = item.partition("=")
        traces[name] = load_instance(file)
    rows = read_results(args.results)
    cells = with_bounds(row_cell(r, traces) for r in rows)
    out_dir = Path(args.json_dir) if args.json_dir else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    new = []
    for i, cell in enumerate(cells, start=1):
        saved = out_dir / f"{cell.key}.json" if out_dir is not None else None
        t0 = time.perf_counter()
        if saved is not None and saved.exists():
            result = json.loads(saved.read_text())
            how = "from " + str(saved)
        else:
            try:
                result = cell_simulation(cell).to_dict()
            except Exception as exc:  # noqa: BLE001 - a failing cell is a row, as in a campaign
                new.append(failed_row(cell, f"{type(exc).__name__}: {exc}"))
                print(f"[{i}/{len(cells)}] {cell.key}: failed: {exc}", flush=True)
                continue
            if saved is not None:
                write_atomic(saved, to_json(result))
            how = f"simulated in {time.perf_counter() - t0:.1f} s"
        row = result_row(cell, result)
        if how.startswith("simulated"):
            row["cell_seconds"] = time.perf_counter() - t0
        new.append(row)
        print(f"[{i}/{len(cells)}] {cell.key}: {row['total_cost']:.2f} $ ({how})", flush=True)
    write_csv(args.output, new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
