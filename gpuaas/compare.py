"""Comparison of methods on one trace, as the paper's §4.3-§4.5: methods x seeds through the simulator.

Every (method, seed) pair is one simulation of the whole trace (`gpuaas.simulator.simulate`);
a method may get a node multiplier m (m·N nodes, §4.5) and runs with its own rescheduling tick
when it declares one (the DP baselines: Δt = 15 min). Methods that declare themselves seed
independent are simulated once and their row is repeated for every seed. The summary gives, per
method, the mean total cost over seeds with its VM and tardiness parts, the ratio of mean costs
to EDF's (Fig. 3), and the percentage cost reduction of Path Relinking (eq. 3),
pct = (C_algo − C_PR) / C_algo · 100, paired by seed, as min / mean / max (Fig. 4), and the
distance to the limit: cost / bound, with the lower bound of any schedule of the trace on the
method's own node count (`gpuaas.bound`, computed once per node count).
"""

from __future__ import annotations

import csv
import io
import logging
import math
import multiprocessing
import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from gpuaas.errors import InputError, brief
from gpuaas.instance import Instance
from gpuaas.limits import MAX_NODES, MAX_SEED, MAX_SIMULATIONS
from gpuaas.methods import METHODS, check_options, default_tick, seed_independent
from gpuaas.rescheduler import DEFAULT_OVERHEAD, DEFAULT_STARTUP

log = logging.getLogger(__name__)

#: The method whose cost reduction eq. (3) measures.
REFERENCE = "path-relinking"
#: The method costs are normalised by (the best first-principle method, §4.3).
BASELINE = "edf"
#: The columns of a comparison row (DESIGN.md §11 "Comparison rows" plus context).
ROW_FIELDS = ("method", "seed", "total_cost", "vm_cost", "tardiness_cost", "multiplier", "nodes",
              "tick", "overhead", "startup", "events", "migrations", "preemptions", "moves_per_job",
              "lost_work_cost", "startup_cost", "solver_seconds_mean", "wall_seconds",
              "seed_independent", "bound", "cost_over_bound")  # fmt: skip


@dataclass(frozen=True)
class Cell:
    """One simulation: a method with a seed, a node multiplier, a tick and solver options."""

    method: str
    seed: int
    multiplier: int
    tick: float | None
    options: tuple[tuple[str, Any], ...] = ()
    overhead: float = DEFAULT_OVERHEAD
    startup: float = DEFAULT_STARTUP


def parse_seeds(text: str) -> list[int]:
    """Seeds from "1-10", "1,3,7" or a mix ("1-3,8"); each >= 0, no duplicates.

    Parameters
    ----------
    text : str
        The seed list.

    Returns
    -------
    list[int]
    """
    seeds: list[int] = []
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*(\d{1,20})\s*(?:-\s*(\d{1,20})\s*)?", part)
        if not m:
            raise InputError(None, "seeds", f"expected e.g. '1-10' or '1,3,5', got {brief(text)}")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise InputError(None, "seeds", f"empty range {part.strip()!r}")
        if hi > MAX_SEED:
            raise InputError(None, "seeds", f"seeds are integers in 0..{MAX_SEED}, got {hi}")
        if len(seeds) + hi - lo + 1 > MAX_SIMULATIONS:
            raise InputError(None, "seeds", f"more than {MAX_SIMULATIONS} seeds (gpuaas.limits)")
        seeds.extend(range(lo, hi + 1))
    if len(set(seeds)) != len(seeds):
        raise InputError(None, "seeds", f"duplicate seeds in {text!r}")
    return seeds


def parse_multipliers(text: str | None, methods: Sequence[str]) -> dict[str, int]:
    """Node multipliers from "edf=2,dp-fastb=4" (methods must be among `methods`; m >= 1).

    Parameters
    ----------
    text : str or None
        The multiplier list; None or "" means none.
    methods : sequence of str
        The compared methods.

    Returns
    -------
    dict[str, int]
    """
    out: dict[str, int] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        m = re.fullmatch(r"\s*([\w.-]+)\s*=\s*(\d+)\s*", part)
        if not m:
            raise InputError(None, "node-multiplier", f"expected METHOD=INTEGER, got {part.strip()!r}")
        name, k = m.group(1), int(m.group(2))
        if name not in methods:
            raise InputError(None, "node-multiplier", f"{name!r} is not among the compared methods")
        if k < 1:
            raise InputError(None, "node-multiplier", f"{name}: must be >= 1, got {k}")
        out[name] = k
    return out


def parse_settings(settings: Iterable[str], methods: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Solver options from "METHOD.OPTION=VALUE" strings (VALUE read as YAML: 1, 0.5, true, text).

    Parameters
    ----------
    settings : iterable of str
        E.g. ``["hierarchical.controller_time_limit=1"]``.
    methods : sequence of str
        The compared methods (an option for another method is an error).

    Returns
    -------
    dict
        Method -> {option: value}.
    """
    import yaml

    out: dict[str, dict[str, Any]] = {}
    for item in settings:
        m = re.fullmatch(r"\s*([\w-]+)\.(\w+)\s*=\s*(.*?)\s*", item)
        if not m:
            raise InputError(None, "set", f"expected METHOD.OPTION=VALUE, got {item!r}")
        method, key, raw = m.groups()
        if method not in methods:
            raise InputError(None, "set", f"{method!r} is not among the compared methods")
        try:
            value = yaml.safe_load(raw) if raw else None
        except yaml.YAMLError:
            value = raw
        out.setdefault(method, {})[key] = value
    return out


def run_cell(trace: Instance, cell: Cell) -> dict[str, Any]:
    """Simulate one cell and return its comparison row."""
    from gpuaas.simulator import simulate

    nodes = cell.multiplier * trace.nodes
    result = simulate(trace, cell.method, seed=cell.seed, nodes=nodes, tick=cell.tick, bound=False,
                      overhead=cell.overhead, startup=cell.startup, **dict(cell.options)).to_dict()  # fmt: skip
    solver = result.get("solver_seconds") or {}
    return {
        "method": cell.method,
        "seed": cell.seed,
        "total_cost": float(result["total_cost"]),
        "vm_cost": float(result["vm_cost"]),
        "tardiness_cost": float(result["tardiness_cost"]),
        "multiplier": cell.multiplier,
        "nodes": nodes,
        "tick": cell.tick,
        "overhead": cell.overhead,
        "startup": cell.startup,
        "events": result.get("events"),
        "migrations": result.get("migrations"),
        "preemptions": result.get("preemptions"),
        "moves_per_job": result.get("moves_per_job"),
        "lost_work_cost": result.get("lost_work_cost"),
        "startup_cost": result.get("startup_cost"),
        "solver_seconds_mean": solver.get("mean"),
        "wall_seconds": result.get("wall_seconds"),
        "seed_independent": False,
    }


def _run_cell_args(args: tuple[Instance, Cell]) -> dict[str, Any]:
    return run_cell(*args)


def compare(trace: Instance, methods: Sequence[str], seeds: Sequence[int], *,
            multipliers: dict[str, int] | None = None, tick: float | None = None,
            options: dict[str, dict[str, Any]] | None = None, workers: int = 1,
            overhead: float = DEFAULT_OVERHEAD, startup: float = DEFAULT_STARTUP,
            on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Simulate every method with every seed on `trace`; one row per (method, seed).

    Parameters
    ----------
    trace : Instance
        The whole trace (all jobs, by release).
    methods : sequence of str
        Registered method names.
    seeds : sequence of int
        Seeds of the methods' randomness (the trace is fixed).
    multipliers : dict, optional
        Method -> m: simulate that method with m·N nodes (§4.5).
    tick : float, optional
        Periodic rescheduling interval for every method; default: the method's own
        (`gpuaas.methods.default_tick`), else the simulator's (the trace's H).
    options : dict, optional
        Method -> solver options passed through the simulator.
    workers : int
        Simulations run in this many processes (1: in this process).
    overhead, startup : float
        Reconfiguration costs of every simulation (see `gpuaas.simulate`).
    on_row : callable, optional
        Called with each row as it is produced (progress reporting).

    Returns
    -------
    list[dict]
        Rows with the fields of `ROW_FIELDS`, methods in the given order, then by seed;
        `bound` is the lower bound of the row's node count, `cost_over_bound` total / bound.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise InputError(None, "methods", f"unknown method(s) {unknown}; available: {', '.join(METHODS)}")
    if len(set(methods)) != len(methods):
        raise InputError(None, "methods", "a method is listed twice")
    if not seeds:
        raise InputError(None, "seeds", "at least one seed is needed")
    if workers < 1:
        raise InputError(None, "workers", f"must be >= 1, got {workers}")
    if len(methods) * len(seeds) > MAX_SIMULATIONS:
        raise InputError(None, "seeds", f"{len(methods)} methods x {len(seeds)} seeds; at most "
                         f"{MAX_SIMULATIONS} simulations (gpuaas.limits)")  # fmt: skip
    multipliers = multipliers or {}
    options = options or {}
    for m, k in multipliers.items():
        if k * trace.nodes > MAX_NODES:
            raise InputError(None, "node-multiplier", f"{m}: {k} x {trace.nodes} nodes is more than "
                             f"{MAX_NODES} (gpuaas.limits)")  # fmt: skip
    for m, opts in options.items():
        check_options(m, opts)
    cells: list[Cell] = []
    shared: dict[str, bool] = {}
    for m in methods:
        shared[m] = seed_independent(m)
        t = tick if tick is not None else default_tick(m)
        opts = tuple(sorted(options.get(m, {}).items()))
        for s in seeds[:1] if shared[m] else seeds:
            cells.append(Cell(m, int(s), int(multipliers.get(m, 1)), t, opts, float(overhead), float(startup)))
    from gpuaas.simulator import trace_bound

    bounds = {n: trace_bound(trace, n).bound for n in sorted({c.multiplier * trace.nodes for c in cells})}
    results: dict[tuple[str, int], dict[str, Any]] = {}

    def done(cell: Cell, row: dict[str, Any]) -> None:
        row["bound"] = bounds[row["nodes"]]
        row["cost_over_bound"] = row["total_cost"] / row["bound"] if row["bound"] > 0 else None
        results[(cell.method, cell.seed)] = row
        log.info("%s seed %d: total %.2f $", cell.method, cell.seed, row["total_cost"])
        if on_row is not None:
            on_row(row)

    if workers == 1 or len(cells) == 1:
        for cell in cells:
            done(cell, run_cell(trace, cell))
    else:
        ctx = multiprocessing.get_context("spawn")  # HiGHS / numba threads do not survive fork
        with ProcessPoolExecutor(max_workers=min(workers, len(cells)), mp_context=ctx) as pool:
            for cell, row in zip(cells, pool.map(_run_cell_args, [(trace, c) for c in cells])):
                done(cell, row)
    rows = []
    for m in methods:
        for s in seeds:
            if shared[m]:
                row = dict(results[(m, int(seeds[0]))], seed=int(s), seed_independent=True)
            else:
                row = results[(m, int(s))]
            rows.append(row)
    return rows


def label(method: str, multiplier: int) -> str:
    """Table name of a method with its node multiplier, e.g. "edf (2N)"."""
    return method if multiplier == 1 else f"{method} ({multiplier}N)"


def summarize(rows: Iterable[dict[str, Any]], reference: str = REFERENCE,
              baseline: str = BASELINE) -> list[dict[str, Any]]:  # fmt: skip
    """Per method: mean costs over seeds, ratio to the baseline's mean total, pct of eq. (3).

    pct (%) pairs each seed's reference cost with the method's cost on the same seed:
    pct_s = (C_algo,s − C_ref,s) / C_algo,s · 100; min / mean / max over seeds. Columns whose
    reference or baseline method is absent are None.

    Parameters
    ----------
    rows : iterable of dict
        Comparison rows (`compare`).
    reference, baseline : str
        The method of eq. (3) and the method of the cost ratio.

    Returns
    -------
    list[dict]
        One dict per method with keys method, label, multiplier, nodes, seeds, total_cost,
        vm_cost, tardiness_cost, ratio_to_baseline, pct_min, pct_mean, pct_max, bound and
        cost_over_bound (mean total / bound; None for rows without a bound).
    """
    rows = list(rows)
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["method"], int(r.get("multiplier", 1))), []).append(r)
    ref = {r["seed"]: r["total_cost"] for r in groups.get((reference, 1), [])}
    base = groups.get((baseline, 1))
    base_mean = _mean(r["total_cost"] for r in base) if base else None
    out = []
    for (m, k), rs in groups.items():
        total = _mean(r["total_cost"] for r in rs)
        pct = [100.0 * (r["total_cost"] - ref[r["seed"]]) / r["total_cost"]
               for r in rs if r["seed"] in ref and r["total_cost"] > 0]  # fmt: skip
        out.append({
            "method": m, "label": label(m, k), "multiplier": k, "nodes": rs[0].get("nodes"),
            "seeds": len(rs), "total_cost": total,
            "vm_cost": _mean(r["vm_cost"] for r in rs),
            "tardiness_cost": _mean(r["tardiness_cost"] for r in rs),
            "ratio_to_baseline": total / base_mean if base_mean else None,
            "pct_min": min(pct) if pct else None,
            "pct_mean": _mean(pct) if pct else None,
            "pct_max": max(pct) if pct else None,
            "bound": rs[0].get("bound"),
            "cost_over_bound": total / rs[0]["bound"] if rs[0].get("bound") else None,
        })  # fmt: skip
    return out


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return math.fsum(vals) / len(vals)


def format_table(summary: Sequence[dict[str, Any]], reference: str = REFERENCE,
                 baseline: str = BASELINE) -> str:  # fmt: skip
    """The human-readable comparison table (costs in $, pct in %)."""

    def num(x: float | None, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    head = (f"{'method':<22}{'nodes':>6}{'seeds':>6}{'total $':>12}{'VM $':>11}{'tardiness $':>13}"
            f"{'/' + baseline:>8}{'/bound':>8}   pct vs {reference} % (min / mean / max)")  # fmt: skip
    lines = [head, "-" * len(head)]
    for s in summary:
        pct = ("-" if s["pct_mean"] is None else
               f"{s['pct_min']:6.1f} / {s['pct_mean']:6.1f} / {s['pct_max']:6.1f}")  # fmt: skip
        lines.append(f"{s['label']:<22}{s['nodes']:>6}{s['seeds']:>6}{s['total_cost']:>12.2f}"
                     f"{s['vm_cost']:>11.2f}{s['tardiness_cost']:>13.2f}"
                     f"{num(s['ratio_to_baseline'], '.3f'):>8}{num(s.get('cost_over_bound'), '.3f'):>8}"
                     f"   {pct}")  # fmt: skip
    return "\n".join(lines)


def to_csv(records: Sequence[dict[str, Any]], fields: Sequence[str] | None = None) -> str:
    """Rows or summary records as CSV text (header first)."""
    fields = list(fields or (records[0].keys() if records else ROW_FIELDS))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return buf.getvalue()
