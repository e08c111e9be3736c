#!/usr/bin/env python
"""Check that two result files hold the same rows, timing columns aside (exit 0 same, 1 not).

Compares the columns both files have (a file written before a column existed lacks it) except
`gpuaas.experiments.rows.TIMING_COLUMNS`, cell by cell, values exactly (floats are written by
repr, so a rerun of the same cell on any backend gives the same text). Used to show that a
campaign regenerates its committed results:

    gpuaas campaign scripts/campaigns/small.yaml -o /tmp/small.csv
    python scripts/same_results.py scripts/results/campaign-small.csv /tmp/small.csv

With ``--filled``, a value empty in the first file and present in the second (rows converted
from a format that lacked it, then rerun: `scripts/rerun_rows.py`) is counted apart, not as a
difference.
"""

from __future__ import annotations

import csv
import sys

from gpuaas.experiments.rows import TIMING_COLUMNS
from gpuaas.experiments.store import read_results


def header(path: str) -> list[str]:
    with open(path, newline="") as fh:
        return next(csv.reader(fh), [])


def differences(a: str, b: str, filled_ok: bool = False) -> tuple[list[str], list[str], int]:
    """(the compared columns, one line per difference, the values empty in `a` that `b` has
    and `filled_ok` lets pass)."""
    shared = [c for c in header(a) if c in header(b) and c not in TIMING_COLUMNS]
    rows_a = {r["cell"]: r for r in read_results(a)}
    rows_b = {r["cell"]: r for r in read_results(b)}
    out = [f"cell {k} only in {a}" for k in rows_a.keys() - rows_b.keys()]
    out += [f"cell {k} only in {b}" for k in rows_b.keys() - rows_a.keys()]
    filled = 0
    for k in sorted(rows_a.keys() & rows_b.keys()):
        for c in shared:
            old, new = rows_a[k][c], rows_b[k][c]
            if old is None and new is not None and filled_ok:
                filled += 1
            elif old != new:
                out.append(f"{k} {c}: {old!r} != {new!r}")
    return shared, out, filled


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--filled"]
    if len(args) != 2:
        print(__doc__)
        return 2
    shared, diff, filled = differences(*args, filled_ok="--filled" in sys.argv)
    for line in diff:
        print(line)
    n = len(read_results(args[0]))
    print(
        f"{n} rows, {len(shared)} shared non-timing columns: "
        + ("identical" if not diff else f"{len(diff)} differences")
        + (f"; {filled} values empty in {args[0]} filled" if filled else "")
    )
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
