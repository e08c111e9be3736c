#!/usr/bin/env python
"""Check that two result files hold the same rows, timing columns aside (exit 0 same, 1 not).

Compares the columns both files have (a file written before a column existed lacks it) except
`gpuaas.experiments.rows.TIMING_COLUMNS`, cell by cell, values exactly (floats are written by
repr, so a rerun of the same cell on any backend gives the same text). Used to show that a
campaign regenerates its committed results:

    gpuaas campaign scripts/campaigns/small.yaml -o /tmp/small.csv
    python scripts/same_results.py scripts/results/campaign-small.csv /tmp/small.csv
"""

from __future__ import annotations

import csv
import sys

from gpuaas.experiments.rows import TIMING_COLUMNS
from gpuaas.experiments.store import read_results


def header(path: str) -> list[str]:
    with open(path, newline="") as fh:
        return next(csv.reader(fh), [])


def differences(a: str, b: str) -> tuple[list[str], list[str]]:
    """(the compared columns, one line per difference)."""
    shared = [c for c in header(a) if c in header(b) and c not in TIMING_COLUMNS]
    rows_a = {r["cell"]: r for r in read_results(a)}
    rows_b = {r["cell"]: r for r in read_results(b)}
    out = [f"cell {k} only in {a}" for k in rows_a.keys() - rows_b.keys()]
    out += [f"cell {k} only in {b}" for k in rows_b.keys() - rows_a.keys()]
    for k in sorted(rows_a.keys() & rows_b.keys()):
        out += [
            f"{k} {c}: {rows_a[k][c]!r} != {rows_b[k][c]!r}"
            for c in shared
            if rows_a[k][c] != rows_b[k][c]
        ]
    return shared, out


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    shared, diff = differences(sys.argv[1], sys.argv[2])
    for line in diff:
        print(line)
    n = len(read_results(sys.argv[1]))
    print(
        f"{n} rows, {len(shared)} shared non-timing columns: "
        + ("identical" if not diff else f"{len(diff)} differences")
    )
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
