#!/usr/bin/env python
"""A campaign's results with the bound computed again by today's `gpuaas.bound`: for each
on-demand row (no spot), the bound of its trace on the row's node count (`sim_nodes`) replaces
`bound` and `cost_over_bound` (= total_cost / bound); the runs' own columns stay. For a change
of the bound alone (issue 43 item 2), which needs no simulation.

    python scripts/rebound_campaign.py scripts/results/itp-campaign.csv --traces DIR

`--traces DIR`: where the rows' trace files are (each row's `trace`, by its file name), when
the paths written in the CSV do not resolve from here. Rows whose trace is missing are kept and
listed on stderr.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from gpuaas.bounds import bound
from gpuaas.instance import load_instance


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a campaign's results (rewritten in place)")
    ap.add_argument("--traces", help="directory of the rows' trace files (by file name)")
    args = ap.parse_args(argv)
    path = Path(args.csv)
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    cache: dict[tuple[str, str], float | None] = {}
    for r in rows:
        if r.get("spot") or r.get("bound_kind", "on-demand") not in ("", "on-demand"):
            continue
        if r.get("status") != "ok" or not r.get("bound"):
            continue
        key = (r["trace"], r["sim_nodes"])
        if key not in cache:
            src = Path(r["trace"])
            if args.traces is not None:
                src = Path(args.traces) / src.name
            if not src.is_file():
                print(f"{r['trace']}: not found, row kept", file=sys.stderr)
                cache[key] = None
            else:
                low = bound(load_instance(str(src)), nodes=int(r["sim_nodes"]))
                print(
                    f"{src.name} N {r['sim_nodes']}: {float(r['bound']):.4f} -> "
                    f"{low.bound:.4f} ({low.seconds:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
                cache[key] = low.bound
        value = cache[key]
        if value is None:
            continue
        r["bound"] = repr(value)
        r["cost_over_bound"] = repr(float(r["total_cost"]) / value)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


if __name__ == "__main__":
    main()
