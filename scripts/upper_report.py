#!/usr/bin/env python
"""The optimum bracketed under load (issue 43): per trace and restart cost, the lower bound
(`gpuaas.bound`), the upper value (`gpuaas.upper`: the cheapest of its whole portfolio, no time
limit (1e9 s), so a row does not depend on the machine's speed) and the default's cost (the
portfolio's first run: `gpuaas simulate` with its defaults), with `upper / bound` and
`default / upper`. The traces: generated high-load ones (`--nodes`, `--seeds`) and whole ITP
clusters of microsoft/elasticflow-traces from the user's copy (`--itp-dir DIR --clusters`;
`--itp`: cluster 10 from the bundled sample), imported as `gpuaas import elasticflow` does.

    python scripts/upper_report.py -o scripts/results/upper.csv --nodes 10,20
    python scripts/upper_report.py -o scripts/results/upper.csv --itp-dir DIR --clusters 1,5,7,8,9,10
    python scripts/upper_report.py --report-only -o scripts/results/upper.csv --md scripts/results/upper.md
    python scripts/upper_report.py --rebound --itp-dir DIR -o scripts/results/upper.csv --md scripts/results/upper.md

Rows already in the CSV are kept (it resumes; delete a row to rerun it); `--default-seeds K`
adds the default at seeds 1..K to the portfolio (the `runs` column lists a row's runs),
`--admission` the admission runs (`admission xS:1:cost` in `runs`), `--vm-schedule` the
never-moving schedule on VMs (`vm-schedule:1:cost`), `--search D` then the suffix search from
the cheapest run of a method (`search:D:cost` in `runs`);
`--add-vm-schedule` runs only the never-moving schedule for the rows already in the CSV
(those of `--nodes`/`--itp-dir --clusters`), adds it to their `runs` (replacing an earlier
one) and lowers `upper` (and `best`) where it is cheaper: the other runs are deterministic, so
the row is what its command with `--vm-schedule` gives (the search starts from the cheapest
run of a method, unchanged);
`--report-only` writes the table from them, `--rebound` computes every row's bound again
(the bound alone changed: the upper and default values are kept), `--redefault` the default's
run (the default alone changed: the other runs are kept, `redefault`), and
`--md` keeps the page's hand-written reading below `NOTES`.
Restart "0" is `--overhead 0 --startup 0`, "600" the simulator's defaults (600 s, 120 s).
"""

from __future__ import annotations

import argparse
import csv
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gpuaas.bounds import bound
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.upper import PORTFOLIO, _vm_schedule_run, upper

COLUMNS = [
    "nodes",
    "jobs",
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
#: the bundled sample of ITP cluster 10 (`--itp`): cluster10.csv unchanged, the same rows
ITP_SAMPLE = "instances/elasticflow-sample.csv"
ITP_PREFIX = "itp-cluster"
#: restart label -> (overhead, startup) of the runs
RESTARTS = {"0": (0.0, 0.0), "600": (600.0, 120.0)}
#: the line of `--md`'s page below which its text is hand-written and kept
NOTES = "<!-- the reading below is written by hand; upper_report.py keeps it -->"


def itp_label(cluster: int, limit: int | None = None) -> str:
    """The `arrivals` of the rows of ITP cluster `cluster`: the whole cluster, or its first
    `limit` jobs."""
    return f"{ITP_PREFIX}{cluster:02d}" + ("" if limit is None else f"-first{limit}")


def itp_name(label: str) -> str:
    """`itp_label`'s label as the table names it."""
    cluster, _, first = label[len(ITP_PREFIX) :].partition("-first")
    return f"ITP cluster {int(cluster)}" + (f", first {first} jobs" if first else "")


def itp_trace(src: str, limit: int | None = None) -> Instance:
    """An ElasticFlow cluster CSV imported with the format's defaults (N from its GPU demand:
    the 95th percentile / 8, scripts/results/itp.md), as `gpuaas import elasticflow [--limit
    LIMIT]` writes it (`limit`: its first jobs by submission, N from their own demand)."""
    from gpuaas.importers import build_trace, import_defaults, read_trace
    from gpuaas.throughputs import load_throughputs

    jobs, _ = read_trace("elasticflow", src)
    opts = import_defaults("elasticflow")
    data, _ = build_trace(
        jobs,
        src,
        catalog=opts["catalog"],
        throughputs=load_throughputs(opts["throughputs"]),
        nodes=opts["nodes"],
        measured_on=opts["measured_on"],
        limit=limit,
    )
    return Instance.from_dict(data)


def row(
    nodes: int,
    arrivals: str,
    seed: int,
    restart: str,
    source: str | None = None,
    limit: int | None = None,
    default_seeds: int | None = None,
    search: int | None = None,
    admission: bool = False,
    vm_schedule: bool = False,
) -> dict[str, str]:
    """One trace and restart cost: its bound, the upper value and the default's cost. The trace
        is generated (N `nodes`, `arrivals`, `seed`) or, with `source`, that ITP cluster CSV (its
        first `limit` jobs); `default_seeds`, `search`: `upper`'s (the default at seeds 1..K too;
    the suffix search with that many draws per window); `admission`: its admission runs;
    `vm_schedule`: its never-moving schedule on VMs."""
    if source is not None:
        trace = itp_trace(source, limit)
        nodes = trace.nodes
    else:
        trace = Instance.from_dict(generate_trace(nodes, seed=seed, arrivals=arrivals))
    low = bound(trace)
    overhead, startup = RESTARTS[restart]
    top = upper(
        trace,
        overhead=overhead,
        startup=startup,
        time_limit=1e9,
        portfolio=PORTFOLIO,
        default_seeds=default_seeds,
        search=search,
        admission=admission,
        vm_schedule=vm_schedule,
    )
    assert top.runs[0][:2] == PORTFOLIO[0]  # the default, as `gpuaas simulate` runs it
    found = top.search is not None and top.search["improved"] > 0
    # the seconds depend on the machine: printed, not kept in the rows
    print(
        f"N {nodes}, J {trace.n_jobs}, {arrivals} {seed}, restart {restart}: "
        f"bound {low.seconds:.1f} s, upper {top.seconds:.1f} s",
        file=sys.stderr,
        flush=True,
    )
    return {
        "nodes": str(nodes),
        "jobs": str(trace.n_jobs),
        "arrivals": arrivals,
        "trace_seed": str(seed),
        "restart": restart,
        "bound": repr(low.bound),
        "binding": low.binding,
        "default": repr(top.runs[0][2]),
        "best": f"{top.method} seed {top.seed}"
        + ("" if top.admission is None else f" admitted x{top.admission:g}")
        + (" + search" if found else ""),
        "runs": ";".join(f"{m}:{s}:{c:.4f}" for m, s, c in top.runs if m != "vm-schedule")
        + ("" if top.search is None else f";search:{top.search['draws']}:{top.upper:.4f}")
        + "".join(f";{m}:{s}:{c:.4f}" for m, s, c in top.runs if m == "vm-schedule"),
        "upper": repr(top.upper),
    }


def add_vm_schedule(
    rows: list[dict[str, str]], keys: set[tuple[str, ...]], itp_dir: str | None
) -> list[dict[str, str]]:
    """`rows` with the never-moving schedule on VMs (`gpuaas.upper`'s `vm_schedule` member,
    alone) run for those whose (arrivals label, restart) or (N, label, seed, restart) is in
    `keys`: `vm-schedule:1:cost` in `runs` (an earlier one replaced), `upper` and `best`
    replaced as `rerun` says (module docstring)."""
    out = []
    for r in rows:
        key = (r["arrivals"], r["restart"])
        gen = (r["nodes"], r["arrivals"], r["trace_seed"], r["restart"])
        if key not in keys and gen not in keys:
            out.append(r)
            continue
        trace = _trace_of(r, itp_dir)
        overhead, startup = RESTARTS[r["restart"]]
        settings = {"overhead": overhead, "startup": startup, "noise": 0.0}
        cost, _, _, info = _vm_schedule_run(trace, settings, False)
        print(
            f"{' '.join(gen)}: vm-schedule {cost:.4f} (plan {info['plan_cost']:.4f}, "
            f"{info['configs']} {info['order']} {info['vm_weight']:g}; {info['seconds']:.1f} s), "
            f"upper {float(r['upper']):.4f}",
            file=sys.stderr,
            flush=True,
        )
        runs = [x for x in r["runs"].split(";") if not x.startswith("vm-schedule:")]
        new = {**r, "runs": ";".join([*runs, f"vm-schedule:1:{cost:.4f}"])}
        rerun(new, r, cost, "vm-schedule")
        out.append(new)
    return out


def rebound(rows: list[dict[str, str]], itp_dir: str | None) -> list[dict[str, str]]:
    """`rows` with their `bound` and `binding` computed again by today's `gpuaas.bound` (the
    trace regenerated, or imported from `itp_dir` as `row` does), the upper and default
    values kept: a change of the bound alone needs no portfolio run. An ITP row without
    `itp_dir` keeps its bound."""
    out, cache = [], {}
    for r in rows:
        label = r["arrivals"]
        if label.startswith(ITP_PREFIX):
            if itp_dir is None:
                out.append(r)
                continue
            key: tuple[str, ...] = (label,)
        else:
            key = (r["nodes"], label, r["trace_seed"])
        if key not in cache:  # the bound does not depend on the restart cost
            low = bound(_trace_of(r, itp_dir))
            print(f"{' '.join(key)}: bound {low.bound:.4f} ({low.seconds:.1f} s)", file=sys.stderr)
            cache[key] = {"bound": repr(low.bound), "binding": low.binding}
        out.append({**r, **cache[key]})
    return out


def rerun(new: dict[str, str], r: dict[str, str], cost: float, label: str) -> None:
    """`new`'s `upper` and `best` after row `r`'s run `label` was run again at `cost`: lowered
    where it is cheaper; where that run was the cheapest and is now dearer, `best` says
    "earlier code" (its old run stays the upper value: a complete schedule all the same)."""
    if cost < float(r["upper"]):
        new.update(upper=repr(cost), best=label)
    elif r["best"] == label and cost > float(r["upper"]):
        new["best"] = f"{label}, earlier code"


def redefault(rows: list[dict[str, str]], itp_dir: str | None) -> list[dict[str, str]]:
    """`rows` with the default's run (the portfolio's first: seed 1, noise 0, the row's restart
    cost) simulated again by today's code: `default` and its entry in `runs` replaced, `upper`
    lowered (`best` "incremental seed 1") where it is cheaper; where that run was the cheapest
    and is now dearer, `best` says "earlier code" (its old run stays the upper value). The other
    runs are kept: each is a complete schedule of the trace whatever code made it, so the
    optimum still lies below the upper value, but the row is no longer what its command gives
    (the page says which code made them). An ITP row without `itp_dir` is kept as it is."""
    out = []
    for r in rows:
        if r["arrivals"].startswith(ITP_PREFIX) and itp_dir is None:
            out.append(r)
            continue
        overhead, startup = RESTARTS[r["restart"]]
        trace = _trace_of(r, itp_dir)
        cost = upper(
            trace, overhead=overhead, startup=startup, time_limit=1e9, portfolio=PORTFOLIO[:1]
        ).upper
        first, _, rest = r["runs"].partition(";")
        assert first.startswith(f"{PORTFOLIO[0][0]}:{PORTFOLIO[0][1]}:"), first
        new = {
            **r,
            "default": repr(cost),
            "runs": f"{PORTFOLIO[0][0]}:{PORTFOLIO[0][1]}:{cost:.4f}",
        }
        new["runs"] += f";{rest}" if rest else ""
        rerun(new, r, cost, f"{PORTFOLIO[0][0]} seed {PORTFOLIO[0][1]}")
        print(
            f"{r['nodes']} {r['arrivals']} {r['trace_seed']} {r['restart']}: default "
            f"{float(r['default']):.4f} -> {cost:.4f}, upper {float(new['upper']):.4f}",
            file=sys.stderr,
            flush=True,
        )
        out.append(new)
    return out


def _trace_of(r: dict[str, str], itp_dir: str | None) -> Instance:
    """The trace of row `r`: its ITP cluster imported from `itp_dir`, or generated."""
    label = r["arrivals"]
    if label.startswith(ITP_PREFIX):
        cluster, _, first = label[len(ITP_PREFIX) :].partition("-first")
        src = Path(str(itp_dir)) / f"cluster{int(cluster):02d}.csv"
        return itp_trace(str(src), int(first) if first else None)
    return Instance.from_dict(
        generate_trace(int(r["nodes"]), seed=int(r["trace_seed"]), arrivals=label)
    )


def read(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as fh:  # a column of older rows' missing: blank
        return [{k: r.get(k) or "" for k in COLUMNS} for r in csv.DictReader(fh)]


def write(path: Path, rows: list[dict[str, str]]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


def table(rows: list[dict[str, str]]) -> str:
    out = [
        "| N | J | trace | restart (s) | bound $ | upper $ | default $ "
        "| upper / bound | default / upper | cheapest run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        b, u, d = float(r["bound"]), float(r["upper"]), float(r["default"])
        if r["arrivals"].startswith(ITP_PREFIX):
            trace = itp_name(r["arrivals"])
        else:
            trace = f"{r['arrivals']} {r['trace_seed']}"
        out.append(
            f"| {r['nodes']} | {r.get('jobs') or '-'} | {trace} | {r['restart']} "
            f"| {b:,.0f} | {u:,.0f} | {d:,.0f} | {u / b:.3f} | {d / u:.3f} | {r['best']} |"
        )
    return "\n".join(out)


def tasks(args: argparse.Namespace, rows: list[dict[str, str]]) -> list[tuple]:
    """The rows asked for and not yet in `rows`, as `row`'s arguments."""
    done = {(r["nodes"], r["arrivals"], r["trace_seed"], r["restart"]) for r in rows}
    restarts = args.restarts.split(",")
    extra = (args.default_seeds, args.search, args.admission, args.vm_schedule)
    todo: list[tuple] = [
        (int(n), args.arrivals, int(s), rs, None, None, *extra)
        for n in filter(None, args.nodes.split(","))
        for s in args.seeds.split(",")
        for rs in restarts
        if (n, args.arrivals, s, rs) not in done
    ]
    sources = {(10, None): ITP_SAMPLE} if args.itp else {}
    if args.itp_dir is not None:
        for c in args.clusters:
            src = Path(args.itp_dir) / f"cluster{c:02d}.csv"
            if not src.is_file():
                raise SystemExit(f"{src}: no such file (the CSVs of microsoft/elasticflow-traces)")
            sources[c, args.itp_limit] = str(src)
    have = {(r["arrivals"], r["restart"]) for r in rows}
    todo += [
        (0, itp_label(c, limit), 0, rs, src, limit, *extra)
        for (c, limit), src in sources.items()
        for rs in restarts
        if (itp_label(c, limit), rs) not in have
    ]
    return todo


def order(r: dict[str, str]) -> tuple:
    """Generated traces by N, seed, restart; then the ITP clusters by number, restart."""
    itp = r["arrivals"].startswith(ITP_PREFIX)
    return (
        itp,
        0 if itp else int(r["nodes"]),
        r["arrivals"],
        int(r["trace_seed"]),
        int(r["restart"]),
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="scripts/results/upper.csv", help="rows (CSV)")
    ap.add_argument("--md", default=None, help="write the table to this markdown file")
    ap.add_argument("--nodes", default="", help="comma-separated N of generated traces (none)")
    ap.add_argument("--seeds", default="81,82,83", help="comma-separated trace seeds")
    ap.add_argument("--restarts", default="0,600", help=f"of {', '.join(RESTARTS)}")
    ap.add_argument("--arrivals", default="high")
    ap.add_argument("--itp", action="store_true", help=f"also {ITP_SAMPLE} (ITP cluster 10)")
    ap.add_argument(
        "--itp-dir",
        help="a directory of microsoft/elasticflow-traces' cluster01.csv .. cluster10.csv",
    )
    ap.add_argument(
        "--clusters",
        type=lambda text: [int(c) for c in text.split(",")],
        default=[1, 5, 7, 8, 9, 10],
        help="comma-separated ITP clusters of --itp-dir (default 1,5,7,8,9,10)",
    )
    ap.add_argument(
        "--itp-limit",
        type=int,
        help="only the first K jobs of each --itp-dir cluster (`gpuaas import --limit K`)",
    )
    ap.add_argument(
        "--default-seeds",
        type=int,
        default=None,
        metavar="K",
        help="the upper value also runs the default at seeds 1..K (`gpuaas.upper`); the runs "
        "column names every run of a row",
    )
    ap.add_argument(
        "--search",
        type=int,
        default=None,
        metavar="D",
        help="then the suffix search from the cheapest run, D draws per window (`gpuaas.upper`)",
    )
    ap.add_argument(
        "--admission",
        action="store_true",
        help="the upper value also runs the default on the trace admitted by the clairvoyant "
        "list schedule (`gpuaas.upper`'s admission runs: `admission xS` in the runs column)",
    )
    ap.add_argument(
        "--vm-schedule",
        action="store_true",
        help="the upper value also runs the never-moving schedule on VMs (`gpuaas.upper`'s "
        "vm-schedule member: `vm-schedule` in the runs column)",
    )
    ap.add_argument(
        "--add-vm-schedule",
        action="store_true",
        help="run only the vm-schedule member for the rows of --nodes / --itp-dir --clusters "
        "already in the CSV (again where they have it), lowering their upper value where it "
        "is cheaper; then as --report-only",
    )
    ap.add_argument("--workers", type=int, default=1, help="processes (1: this one)")
    ap.add_argument("--report-only", action="store_true", help="only the table from the rows")
    ap.add_argument(
        "--redefault",
        action="store_true",
        help="simulate the default's run of every row again (generated traces, and ITP rows "
        "with --itp-dir), keeping the other runs; then as --report-only",
    )
    ap.add_argument(
        "--rebound",
        action="store_true",
        help="compute the bound of every row again (generated traces, and ITP rows with "
        "--itp-dir), keeping the upper and default values; then as --report-only",
    )
    args = ap.parse_args(argv)
    path = Path(args.output)
    rows = read(path)
    if args.rebound:
        rows = rebound(rows, args.itp_dir)
        write(path, rows)
    elif args.redefault:
        rows = redefault(rows, args.itp_dir)
        write(path, rows)
    elif args.add_vm_schedule:
        keys: set[tuple[str, ...]] = {
            (n, args.arrivals, s, rs)
            for n in filter(None, args.nodes.split(","))
            for s in args.seeds.split(",")
            for rs in args.restarts.split(",")
        }
        if args.itp_dir is not None:
            keys |= {
                (itp_label(c, args.itp_limit), rs)
                for c in args.clusters
                for rs in args.restarts.split(",")
            }
        for i in range(len(rows)):  # one row at a time, written as it is done
            rows[i : i + 1] = add_vm_schedule(rows[i : i + 1], keys, args.itp_dir)
            write(path, rows)
    elif not args.report_only:
        todo = tasks(args, rows)
        if args.workers <= 1:
            made = map(row, *zip(*todo)) if todo else iter(())
            for new in made:
                rows.append(new)
                write(path, rows)
        else:
            with ProcessPoolExecutor(args.workers) as pool:
                for new in pool.map(row, *zip(*todo)) if todo else []:
                    rows.append(new)
                    write(path, rows)
        rows.sort(key=order)
        write(path, rows)
    rows.sort(key=order)
    text = table(rows)
    if args.md:
        md = Path(args.md)
        old = md.read_text(encoding="utf-8") if md.exists() else ""
        notes = old[old.index(NOTES) :] if NOTES in old else NOTES + "\n"
        md.write_text(PAGE.format(table=text) + "\n" + notes, encoding="utf-8")
    else:
        print(text)


PAGE = """# The optimum bracketed under load (issue 43)

Per trace and restart cost: the lower bound of any schedule (`gpuaas bound`), the upper value
(`gpuaas bound --upper`: the cheapest complete schedule of a portfolio of simulated runs, every
duration known; `gpuaas/upper.py` says what it is and is not) and the default's cost
(`gpuaas simulate` with its defaults, the portfolio's first run). The optimum lies between
bound and upper. Rows: `upper.csv`. Where the commands say `--default-seeds 8` (the generated
traces, ITP cluster 5), the portfolio also ran the default at seeds 4-8 (`gpuaas bound --upper
--default-seeds 8`), and `--search 3` then the suffix search from the cheapest run ("+ search"
where it found a cheaper schedule); the other rows are the portfolio's alone. Every row then
also ran the never-moving schedule on VMs (`--add-vm-schedule`: `gpuaas bound --upper
--vm-schedule`'s member alone, "vm-schedule" where it is the cheapest run).

    python scripts/upper_report.py -o scripts/results/upper.csv --nodes 10,20 --default-seeds 8 --search 3
    python scripts/upper_report.py -o scripts/results/upper.csv --itp-dir DIR --clusters 1,8,9,10 --restarts 600
    python scripts/upper_report.py -o scripts/results/upper.csv --itp-dir DIR --clusters 5 --restarts 600 --default-seeds 8 --search 3
    python scripts/upper_report.py -o scripts/results/upper.csv --itp-dir DIR --clusters 7 --itp-limit 4000 --restarts 600
    python scripts/upper_report.py -o scripts/results/upper.csv --add-vm-schedule --itp-dir DIR --clusters 1,5,8,9,10 --restarts 600
    python scripts/upper_report.py -o scripts/results/upper.csv --add-vm-schedule --itp-dir DIR --clusters 7 --itp-limit 4000 --restarts 600
    python scripts/upper_report.py -o scripts/results/upper.csv --add-vm-schedule --nodes 10,20 --restarts 0,600
    python scripts/upper_report.py --report-only -o scripts/results/upper.csv --md scripts/results/upper.md

Traces: generated under high arrivals (N = 10 and 20, J = 10 N, seeds 81-83), and Microsoft's
ITP clusters, whole or, where the table says "first K jobs", the first K by submission
(`--itp-limit K`), imported from `DIR`, the user's copy of microsoft/elasticflow-traces
(`itp.md`: `gpuaas import elasticflow clusterNN.csv [--limit K]` with the format's defaults,
N = the 95th percentile of the GPUs held / 8, of the jobs kept).
Restart 0: `--overhead 0 --startup 0`; 600: the default costs (600 s restart, 120 s start-up).
`upper / bound` is the interval the optimum lies in, which neither the bound nor the methods
close; `default / upper` what the default loses to the cheapest run (1: it is the cheapest).
The bound ignores the restart and start-up costs (a schedule may never move), so at 600 s the
interval holds what moving costs and what moving less loses in packing. `s`: wall seconds of
the bound and of the whole portfolio (one process on a shared 2-core machine; blank: not kept).

{table}
"""


if __name__ == "__main__":
    main()
