"""The default method with one of its options changed, against its defaults: runs and table.

Each ``--option NAME=VALUE`` is one variant (`incremental(NAME=VALUE)`; ``--option "NAME=VALUE
NAME=VALUE"``: both options at once), simulated as
`gpuaas campaign` does (resumable, into one results file) on

- a tuning grid: generated traces of the quality grid's seeds 1-3, N = 10 and 20, exponential,
  high and low arrivals, restart 0 and 600 s, start-up 120 s; the default runs there too;
- the held-out normal-load grid (`scripts/campaigns/normal-load.yaml`: seeds 71-73, whose
  default and other methods' rows `--normal-load` holds);
- with ``--itp``, the ITP clusters ``--clusters`` (``itp/itpNN.json`` at the repository's
  root, imported as `scripts/campaigns/itp.yaml` says; the default costs), whose default and
  other methods' rows `--itp-rows` holds.

The table (``--md``), per cell summed over its traces: the default's cost, each variant's over
it with the range of the per-trace ratios, moves per job, and on the held-out grids the cheapest
other method with N nodes.

    python scripts/default_settings.py --option hysteresis=0 --option hysteresis=0.02 \\
        --option iterations=10 --itp --clusters 1,5,8,9,10 -o scripts/results/default-settings.csv \\
        --md scripts/results/default-settings.md
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import yaml

from gpuaas.errors import InputError
from gpuaas.experiments.analysis import ok_rows
from gpuaas.experiments.campaign import run_campaign
from gpuaas.experiments.spec import parse_spec
from gpuaas.experiments.store import read_results
from gpuaas.files import write_atomic

ROOT = Path(__file__).resolve().parents[1]
NORMAL_LOAD = ROOT / "scripts/campaigns/normal-load.yaml"
ITP_SPEC = ROOT / "scripts/campaigns/itp.yaml"  # the ITP traces are relative to it
TUNING = {
    "nodes": [10, 20],
    "arrivals": ["exponential", "high", "low"],
    "jobs_per_node": 10,
    "seeds": [1, 2, 3],
    "overhead": [0, 600],
    "startup": 120,
}
DEFAULT = "default"
#: the line that starts the page's hand-written reading, which a new table keeps
READING = "<!-- the reading below is written by hand; default_settings.py keeps it -->"


def variant(text: str) -> dict:
    """``NAME=VALUE`` as a solver option (VALUE read as YAML: a number, a bool, a string); several,
    separated by spaces, are one variant (``"put_back_rounds=3 unmove=true"``)."""
    out = {}
    for part in text.split() or [text]:
        name, sep, value = part.partition("=")
        if not sep or not name or name in out:
            raise argparse.ArgumentTypeError(f"expected NAME=VALUE [NAME=VALUE ...], got {text!r}")
        out[name] = yaml.safe_load(value)
    return out


def run_of(row: dict) -> str:
    """The row's run: the default (`incremental`, no options), a variant (``name=value``) or
    another method."""
    if row["method"] != "incremental":
        return row["method"]
    options = json.loads(row["options"] or "{}")
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items())) or DEFAULT


def name_of(row: dict) -> str:
    """A row's trace: its generated trace's seed, or its file's name."""
    return str(row["trace_seed"]) if row["trace_seed"] is not None else Path(row["trace"]).stem


def trace_of(row: dict) -> str:
    """`name_of`, and the solver seed where it is not 1."""
    return name_of(row) if row["seed"] == 1 else f"{name_of(row)} seed {row['seed']}"


def cells(rows: list[dict]) -> dict[tuple, dict[str, dict[str, dict]]]:
    """(N, arrivals or trace file, restart) -> run -> trace (`trace_of`) -> row."""
    out: dict[tuple, dict[str, dict[str, dict]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        where = r["arrivals"] or Path(r["trace"]).stem
        out[(r["nodes"], where, int(r["overhead"] or 0))][run_of(r)][trace_of(r)] = r
    return out


def _sum(runs: dict, run: str, traces: list[str], column: str) -> float:
    return sum(runs[run][t][column] for t in traces)


def table(grid: dict, variants: list[str], others: bool) -> list[str]:
    """The table's lines, then each variant's cost over the default's summed over the cells
    it ran. A variant is compared on the traces (and solver seeds) it ran of its cell, "(k of
    n)" where that is not all of the default's; "-": none."""
    head = "| N | arrivals / trace | restart s | traces | default $ (moves / job) |"
    head += "".join(f" {v}: ratio [per trace] (moves / job) |" for v in variants)
    rule = "|---|---|---|---|---|" + "---|" * len(variants)
    if others:
        head += " cheapest other / default |" + "".join(f" {v} / it |" for v in variants)
        rule += "---|" + "---|" * len(variants)
    lines = [head, rule]
    total = {v: [0.0, 0.0] for v in variants}
    for key in sorted(grid):
        runs = grid[key]
        traces = sorted(runs.get(DEFAULT, {}))
        common = {v: [t for t in traces if t in runs.get(v, {})] for v in variants}
        if not traces or not any(common.values()):
            continue
        base = _sum(runs, DEFAULT, traces, "total_cost")
        moves = _sum(runs, DEFAULT, traces, "moves_per_job") / len(traces)
        line = f"| {key[0]} | {key[1]} | {key[2]} | {len(traces)} | {base:,.0f} ({moves:.2f}) |"
        for v in variants:
            ts = common[v]
            if not ts:
                line += " - |"
                continue
            cost, mine = _sum(runs, v, ts, "total_cost"), _sum(runs, DEFAULT, ts, "total_cost")
            total[v][0] += mine
            total[v][1] += cost
            per = [runs[v][t]["total_cost"] / runs[DEFAULT][t]["total_cost"] for t in ts]
            moves = _sum(runs, v, ts, "moves_per_job") / len(ts)
            some = f" ({len(ts)} of {len(traces)})" if len(ts) < len(traces) else ""
            line += f" {cost / mine:.4f} [{min(per):.3f}-{max(per):.3f}] ({moves:.2f}){some} |"
        if others:  # on the traces every other method ran (seed 1 where theirs are)
            methods = [m for m in runs if m != DEFAULT and m not in variants]
            ts = [t for t in traces if all(t in runs[m] for m in methods)]
            rivals = {m: _sum(runs, m, ts, "total_cost") for m in methods} if ts else {}
            best = min(rivals, key=rivals.get) if rivals else None
            mine = _sum(runs, DEFAULT, ts, "total_cost")
            some = f" ({len(ts)} of {len(traces)})" if len(ts) < len(traces) else ""
            line += f" {best} {rivals[best] / mine:.4f}{some} |" if best else " - |"
            for v in variants:
                ok = best and all(t in runs.get(v, {}) for t in ts)
                line += f" {_sum(runs, v, ts, 'total_cost') / rivals[best]:.4f} |" if ok else " - |"
        lines.append(line)
    lines.append("")
    for v in variants:
        base, cost = total[v]
        lines.append(
            f"Summed: {v} costs {cost / base:.4f} x the default." if base else f"{v}: none"
        )
    return lines


def option_arg(run: str) -> str:
    """The ``--option`` argument of a variant (`run_of`'s ``a=1, b=2``: ``--option "a=1 b=2"``)."""
    parts = run.split(", ")
    return f'--option "{" ".join(parts)}"' if len(parts) > 1 else f"--option {run}"


def report(
    results: str, others: list[str], clusters: str | None = None, md: str | None = None
) -> str:
    """The markdown page: each file of `others`' traces, then the tuning grid, under the
    commands that ran its rows, one per set of ITP solver seeds its variants ran at
    (`clusters`: the ITP clusters, None: no ITP rows run)."""
    rows = ok_rows(read_results(results))
    variants = sorted({run_of(r) for r in rows} - {DEFAULT})
    seeds: dict[str, set[int]] = defaultdict(set)
    for r in rows:
        if clusters is not None and r["trace_seed"] is None:
            seeds[run_of(r)].add(int(r["seed"]))
    groups: dict[str, list[str]] = defaultdict(list)  # ITP seeds ("": none) -> variants
    for v in variants:
        groups[",".join(map(str, sorted(seeds[v])))].append(v)
    lines = []
    for s, vs in sorted(groups.items(), key=lambda g: (len(g[0]), g[0])):
        line = " ".join(["python scripts/default_settings.py", *(option_arg(v) for v in vs)])
        if s:
            line += f" --itp --clusters {clusters} --itp-seeds {s}"
        lines.append(f"    {line} -o {results}")
    lines[-1] += f" --md {md}" if md else ""
    out = [
        f"# The default method with one option changed ({results})",
        "",
        *lines,
        "",
        "(the table alone: the last with `--report-only`; a later command's variants ran at more"
        " ITP solver seeds, where the default ran too). Costs summed over each cell's traces"
        " (each ITP solver seed a trace of its own); a variant's ratio is its cost over the"
        " default's; moves: migrations and preemptions per job.",
        "",
    ]
    seen: set[str] = set()
    for path in others:
        base = ok_rows(read_results(path))
        mine = {name_of(r) for r in base}
        seen |= mine
        grid = cells([r for r in rows + base if name_of(r) in mine])
        out += [f"## Held out: the traces of `{path}` (its default and other methods)", ""]
        out += table(grid, variants, others=True) + [""]
    tuning = cells([r for r in rows if name_of(r) not in seen])
    out += ["## Tuning grid (trace seeds 1-3)", "", *table(tuning, variants, others=False)]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--option", type=variant, action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--itp", action="store_true", help="also the ITP clusters (itp/itpNN.json)")
    ap.add_argument("--clusters", default="1,5,8,9,10", help="ITP clusters (with --itp)")
    ap.add_argument(
        "--itp-seeds",
        default="1",
        help="solver seeds of the ITP runs (with --itp): the variants' at each, the default's at"
        " each but 1 (seed 1's rows are --itp-rows')",
    )
    ap.add_argument("--normal-load", default="scripts/results/normal-load.csv")
    ap.add_argument("--itp-rows", default="scripts/results/itp-campaign.csv")
    ap.add_argument("-o", "--output", required=True, help="results file (resumable)")
    ap.add_argument("--md", help="write the table here")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    specs: list[tuple[dict, dict, list[int]]] = [({"methods": ["incremental"], **TUNING}, {}, [1])]
    itp = {"traces": [f"../../itp/itp{int(c):02d}.json" for c in args.clusters.split(",")]}
    held = yaml.safe_load(NORMAL_LOAD.read_text())
    seeds = [int(x) for x in args.itp_seeds.split(",")]
    if args.itp and [x for x in seeds if x != 1]:  # the default where --itp-rows has none
        specs.append(({**itp, "methods": ["incremental"]}, {}, [x for x in seeds if x != 1]))
    for opts in args.option:
        specs.append(({"methods": ["incremental"], **TUNING}, opts, [1]))
        specs.append(({**held, "methods": ["incremental"]}, opts, [1]))
        if args.itp:  # the traces as itp.yaml names them, the default costs
            specs.append(({**itp, "methods": ["incremental"]}, opts, seeds))
    if not args.report_only:
        parsed = []
        for data, opts, solver_seeds in specs:  # all checked before any runs
            data = {**data, "solver_seeds": solver_seeds, "options": {"incremental": opts}}
            data.pop("name", None)
            try:  # an unknown option or value, a missing ITP trace: said, exit 2
                parsed.append(parse_spec(data, str(ITP_SPEC) if "traces" in data else None))
            except InputError as exc:
                ap.exit(2, f"{ap.prog}: error: {exc}\n")
        for spec in parsed:
            run_campaign(spec, args.output, backend="processes", workers=args.workers)
    if args.md:
        others = [args.normal_load] + ([args.itp_rows] if args.itp else [])
        page = report(args.output, others, args.clusters if args.itp else None, args.md)
        old = Path(args.md).read_text(encoding="utf-8") if Path(args.md).exists() else ""
        if READING in old:  # the hand-written reading is kept
            page += "\n" + old[old.index(READING) :]
        write_atomic(args.md, page)


if __name__ == "__main__":
    main()
