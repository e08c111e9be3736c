#!/usr/bin/env python
"""The optimum bracketed on high-load traces (issue 43): per generated trace and restart cost,
the lower bound (`gpuaas.bound`), the upper value (`gpuaas.upper`: the cheapest of its whole
portfolio, no time limit (1e9 s), so a row does not depend on the machine's speed) and the default's
cost (the portfolio's first run: `gpuaas simulate` with its defaults), with `upper / bound`
and `default / upper`.

    python scripts/upper_report.py -o scripts/results/upper.csv --nodes 10,20
    python scripts/upper_report.py --report-only -o scripts/results/upper.csv --md scripts/results/upper.md

Rows already in the CSV are kept (it resumes); `--report-only` writes the table from them.
Restart "0" is `--overhead 0 --startup 0`, "600" the simulator's defaults (600 s, 120 s).
"""

from __future__ import annotations

import argparse
import csv
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gpuaas.bounds import bound
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.upper import PORTFOLIO, upper

COLUMNS = [
    "nodes",
    "arrivals",
    "trace_seed",
    "restart",
    "bound",
    "binding",
    "default",
    "best",
    "runs",
    "upper",
]
#: the `arrivals` of the rows of ITP cluster 10 (`--itp`), the bundled sample
ITP = "itp-cluster10"
ITP_SAMPLE = "instances/elasticflow-sample.csv"
#: restart label -> (overhead, startup) of the runs
RESTARTS = {"0": (0.0, 0.0), "600": (600.0, 120.0)}


def itp_sample() -> Instance:
    """ElasticFlow's ITP cluster 10 (the bundled sample), imported with the format's defaults
    (N from its GPU demand), as `gpuaas import elasticflow` writes it."""
    from gpuaas.importers import build_trace, import_defaults, read_trace
    from gpuaas.throughputs import load_throughputs

    jobs, _ = read_trace("elasticflow", ITP_SAMPLE)
    opts = import_defaults("elasticflow")
    data, _ = build_trace(
        jobs,
        ITP_SAMPLE,
        catalog=opts["catalog"],
        throughputs=load_throughputs(opts["throughputs"]),
        nodes=opts["nodes"],
        measured_on=opts["measured_on"],
    )
    return Instance.from_dict(data)


def row(nodes: int, arrivals: str, seed: int, restart: str) -> dict[str, str]:
    """One trace and restart cost: its bound, the upper value and the default's cost."""
    if arrivals == ITP:
        trace = itp_sample()
        nodes = trace.nodes
    else:
        trace = Instance.from_dict(generate_trace(nodes, seed=seed, arrivals=arrivals))
    low = bound(trace)
    overhead, startup = RESTARTS[restart]
    top = upper(trace, overhead=overhead, startup=startup, time_limit=1e9)
    assert top.runs[0][:2] == PORTFOLIO[0]  # the default, as `gpuaas simulate` runs it
    return {
        "nodes": str(nodes),
        "arrivals": arrivals,
        "trace_seed": str(seed),
        "restart": restart,
        "bound": repr(low.bound),
        "binding": low.binding,
        "default": repr(top.runs[0][2]),
        "best": f"{top.method} seed {top.seed}",
        "runs": ";".join(f"{m}:{s}:{c:.4f}" for m, s, c in top.runs),
        "upper": repr(top.upper),
    }


def read(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def write(path: Path, rows: list[dict[str, str]]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


def table(rows: list[dict[str, str]]) -> str:
    out = [
        "| N | arrivals | trace | restart (s) | bound $ | upper $ | default $ "
        "| upper / bound | default / upper | cheapest run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        b, u, d = float(r["bound"]), float(r["upper"]), float(r["default"])
        out.append(
            f"| {r['nodes']} | {r['arrivals']} | {r['trace_seed']} | {r['restart']} "
            f"| {b:,.0f} | {u:,.0f} | {d:,.0f} | {u / b:.3f} | {d / u:.3f} | {r['best']} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="scripts/results/upper.csv", help="rows (CSV)")
    ap.add_argument("--md", default=None, help="write the table to this markdown file")
    ap.add_argument("--nodes", default="10", help="comma-separated N")
    ap.add_argument("--seeds", default="81,82,83", help="comma-separated trace seeds")
    ap.add_argument("--restarts", default="0,600", help=f"of {', '.join(RESTARTS)}")
    ap.add_argument("--arrivals", default="high")
    ap.add_argument("--itp", action="store_true", help=f"also {ITP_SAMPLE} (ITP cluster 10)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--report-only", action="store_true", help="only the table from the rows")
    args = ap.parse_args()
    path = Path(args.output)
    rows = read(path)
    if not args.report_only:
        done = {(r["nodes"], r["arrivals"], r["trace_seed"], r["restart"]) for r in rows}
        todo = [
            (int(n), args.arrivals, int(s), rs)
            for n in args.nodes.split(",")
            for s in args.seeds.split(",")
            for rs in args.restarts.split(",")
            if (n, args.arrivals, s, rs) not in done
        ]
        if args.itp:
            have = {(r["arrivals"], r["restart"]) for r in rows}
            todo += [(0, ITP, 0, rs) for rs in args.restarts.split(",") if (ITP, rs) not in have]
        with ProcessPoolExecutor(max(1, args.workers)) as pool:
            for new in pool.map(row, *zip(*todo)) if todo else []:
                rows.append(new)
                write(path, rows)
    key = lambda r: (int(r["nodes"]), r["arrivals"], int(r["trace_seed"]), int(r["restart"]))  # noqa: E731
    rows.sort(key=key)
    if not args.report_only:
        write(path, rows)
    text = table(rows)
    if args.md:
        Path(args.md).write_text(PAGE.format(table=text), encoding="utf-8")
    else:
        print(text)


PAGE = """# The optimum bracketed under load (issue 43)

Per generated high-load trace and restart cost: the lower bound of any schedule
(`gpuaas bound`), the upper value (`gpuaas bound --upper`: the cheapest complete schedule of
a portfolio of simulated runs, every duration known; `gpuaas/upper.py` says what it is and is
not) and the default's cost (`gpuaas simulate` with its defaults, the portfolio's first run).
The optimum lies between bound and upper. Rows: `upper.csv`.

    python scripts/upper_report.py -o scripts/results/upper.csv --nodes 10,20
    python scripts/upper_report.py --report-only -o scripts/results/upper.csv --md scripts/results/upper.md

Restart 0: `--overhead 0 --startup 0`; 600: the default costs (600 s restart, 120 s start-up).
`upper / bound` is the interval the optimum lies in, which neither the bound nor the methods
close; `default / upper` what the default loses to the cheapest run (1: it is the cheapest).
The bound ignores the restart and start-up costs (a schedule may never move), so at 600 s the
interval holds what moving costs and what moving less loses in packing.

{table}
"""


if __name__ == "__main__":
    main()
