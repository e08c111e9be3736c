"""Analysis of result rows (`gpuaas.experiments.rows`): names, groups, ratios, eq. 3, cost / bound.

The one place that computes what tables, plots and reports show:

- a *run* is a method with its node multiplier and its disruption limits, named ``edf``,
  ``edf x2`` or ``incremental cap 1`` (at most one voluntary move per job; ``6/h``: per hour)
  (`run_name`) and labelled in plots and reports by the method's record (`label`: ``EDF x2``),
  in the paper's order (`order`);
- a *scenario* is what a plot column or report section shows: the arrival pattern of a
  generated trace, or the name of a given trace (`scenario`);
- the percentage cost reduction of a reference method (eq. 3, Fig. 4),
  pct = (C_algo − C_ref) / C_algo · 100, pairs each simulation with the reference's simulation
  of the same trace and settings and the same seed; a method simulated once (seed independent)
  is paired with every seed of the reference (`pct_reductions`);
- the mean cost, its ratio to a baseline method's mean (Fig. 3) and the mean cost / bound per
  run (`summarize`, `cost_table`, `bound_table`);
- a ratio of mean costs over solver seeds with its interval, a paired bootstrap over the seeds
  (`bootstrap_means`, `percentile_interval`): the default's cost varies between seeds, so the
  grids of issues 41 and 42 say which ratios are beyond that variation;
- per run, the mean over its simulations of each job metric (`gpuaas.metrics`: deadline-miss
  rate, tardiness, lateness, JCT and waiting percentiles), over the rows that have it
  (`summarize`): percentiles are not pooled across simulations, whose per-job data the rows
  do not hold.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from gpuaas.errors import InputError
from gpuaas.metrics import NAMES as JOB_METRICS
from gpuaas.run_config import settings

#: The method whose cost reduction eq. (3) measures (Path Relinking, the paper's proposal).
REFERENCE = "path-relinking"
#: The method costs are divided by (the best first-principle method, §4.3).
BASELINE = "edf"


def run_name(
    method: str, multiplier: int | None = 1, limits: Mapping[str, Any] | None = None
) -> str:
    """A method with its node multiplier and the run settings that label it (`Setting.label`,
    the disruption limits, deadline_safe; `limits`: a results row or setting -> value), as
    tables name it: "edf", "edf x2", "incremental cap 1", "incremental cap 1 6/h",
    "incremental deadline-safe"."""
    m = int(multiplier or 1)
    out = method + ("" if m == 1 else f" x{m}")
    for column, fmt in _LABELS.items():
        value = (limits or {}).get(column)
        if value is not None and value is not False:  # a switch labels a run when on
            out += fmt.format(int(value))
    return out


#: the results columns of the run settings that label a run, and their formats
_LABELS = {s.column or name: s.label for name, _, s in settings() if s.label is not None}
#: the results columns of the run settings rows compared with each other share
_SHARED = tuple(s.column or name for name, _, s in settings() if s.shared)


def row_run(row: dict[str, Any]) -> str:
    """The run name of a results row."""
    return run_name(row["method"], row.get("node_multiplier"), row)


def split_run(run: str) -> tuple[str, int]:
    """(method, multiplier) of a run name (its disruption limits aside: `label` keeps them)."""
    method, *rest = run.split(" ")
    mult = [int(r[1:]) for r in rest if r.startswith("x") and r[1:].isdigit()]
    return method, mult[0] if mult else 1


def label(run: str) -> str:
    """A run's label in plots and reports: the method's record label, e.g. "EDF x2" (a method
    the registry does not know keeps its name), with its disruption limits."""
    from gpuaas.methods import METHODS

    method, _, rest = run.partition(" ")
    name = METHODS[method].label if method in METHODS else method
    return f"{name} {rest}" if rest else name


def order(runs: Iterable[str]) -> list[str]:
    """Run names in the paper's order (the registry's; unknown methods after them by name),
    each method's multipliers ascending."""
    from gpuaas.methods import METHODS

    def key(run: str) -> tuple[int, str, int, str]:
        method, mult = split_run(run)
        rank = METHODS[method].order if method in METHODS else len(METHODS)
        return rank, method, mult, run

    return sorted(set(runs), key=key)


def scenario(row: dict[str, Any]) -> str:
    """The row's scenario: its arrival pattern (generated trace) or its trace's name."""
    return row.get("arrivals") or row.get("trace") or "trace"


def trace_of(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a row's simulation shares with the rows it is compared with: the trace and the
    simulated conditions (prediction error, reconfiguration costs, speed model, disruption
    limits), not the method, seed or nodes used."""
    trace = ("trace", "arrivals", "nodes", "jobs", "trace_seed", "catalog")
    return tuple(row.get(k) for k in trace + _SHARED)


def ok_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The successful rows (status "ok" with a total cost); InputError if there is none."""
    ok = [r for r in rows if r.get("status") == "ok" and r.get("total_cost") is not None]
    if not ok:
        raise InputError(None, None, "the results hold no successful simulation")
    return ok


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean (math.fsum)."""
    vals = list(values)
    return math.fsum(vals) / len(vals)


def pct(c_algo: float, c_ref: float) -> float:
    """Eq. (3): the percentage cost reduction of the reference over a method,
    (C_algo − C_ref) / C_algo · 100."""
    return (c_algo - c_ref) / c_algo * 100.0


def pct_reductions(
    rows: Iterable[dict[str, Any]],
    reference: str = REFERENCE,
    by: Callable[[dict[str, Any]], Any] = scenario,
) -> dict[tuple[Any, str], list[float]]:
    """Eq. (3) per (by(row), run): one value per simulation and reference seed it is paired
    with: the reference's simulation (multiplier 1) of the same trace and conditions with the
    same seed; every seed of the reference for a seed-independent method (simulated once per
    trace: its cost is the one of every seed) or a seed the reference lacks. The reference's
    own runs are included (0 for itself). Empty when no reference simulation shares a trace."""
    from gpuaas.methods import METHODS

    ok = [r for r in rows if r.get("status") == "ok" and r.get("total_cost") is not None]
    ref: dict[tuple[Any, ...], dict[int, float]] = defaultdict(dict)
    for r in ok:
        if r["method"] == reference and int(r.get("node_multiplier") or 1) == 1:
            ref[trace_of(r)][r["seed"]] = r["total_cost"]
    out: dict[tuple[Any, str], list[float]] = defaultdict(list)
    for r in ok:
        by_seed = ref.get(trace_of(r), {})
        if not by_seed or r["total_cost"] <= 0:
            continue
        once = r["method"] in METHODS and METHODS[r["method"]].seed_independent
        c_refs = (
            [by_seed[r["seed"]]] if r["seed"] in by_seed and not once else list(by_seed.values())
        )
        out[(by(r), row_run(r))].extend(pct(r["total_cost"], c) for c in c_refs)
    return dict(out)


def summarize(
    rows: Iterable[dict[str, Any]], reference: str = REFERENCE, baseline: str = BASELINE
) -> list[dict[str, Any]]:
    """Per run of the successful rows (one trace, or the traces of one scenario): mean costs,
    the ratio of its mean total to the baseline's (Fig. 3) and eq. (3) min / mean / max.

    Returns
    -------
    list[dict]
        In the order the runs first appear in `rows`, one dict per run with keys run, method, multiplier, nodes
        (simulated), runs (simulations), total_cost, vm_cost, tardiness_cost,
        ratio_to_baseline, pct_min, pct_mean, pct_max, bound, cost_over_bound (mean of
        total / bound over the rows that have a bound), bound_kind (the rows' `bound_kind`,
        "+"-joined if they differ), cost_over_upper (likewise, of the rows that have an upper
        value), moves_per_job, max_job_moves (the most of one job), cap_cost (a run with disruption limits: its mean total over that
        of the same method and multiplier without them, minus 1) and each of `gpuaas.metrics.NAMES`
        (mean over the rows that have it: `lateness_of_late_*` over the simulations with a
        late job); None where the reference, the baseline, the bound or a metric is absent
        (results files older than the metric).
    """
    ok = ok_rows(rows)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in ok:
        groups[row_run(r)].append(r)
    pcts = {run: v for (_, run), v in pct_reductions(ok, reference, by=lambda r: None).items()}
    base = groups.get(baseline)
    base_mean = mean(r["total_cost"] for r in base) if base else None
    out = []
    for run, rs in groups.items():
        method, mult = split_run(run)
        total = mean(r["total_cost"] for r in rs)
        p = pcts.get(run)
        bounds = [r for r in rs if r.get("bound")]
        out.append(
            {
                "run": run,
                "method": method,
                "multiplier": mult,
                "nodes": rs[0].get("sim_nodes"),
                "runs": len(rs),
                "total_cost": total,
                "vm_cost": mean(r["vm_cost"] for r in rs),
                "tardiness_cost": mean(r["tardiness_cost"] for r in rs),
                "ratio_to_baseline": total / base_mean if base_mean else None,
                "pct_min": min(p) if p else None,
                "pct_mean": mean(p) if p else None,
                "pct_max": max(p) if p else None,
                "bound": mean(r["bound"] for r in bounds) if bounds else None,
                "cost_over_bound": mean(r["total_cost"] / r["bound"] for r in bounds)
                if bounds
                else None,
                "cost_over_upper": _mean_present(r.get("cost_over_upper") for r in rs),
                "bound_kind": "+".join(
                    sorted({r["bound_kind"] for r in bounds if r.get("bound_kind")})
                )
                or None,
                "moves_per_job": _mean_present(r.get("moves_per_job") for r in rs),
                "max_job_moves": max((r.get("max_job_moves") or 0 for r in rs), default=None),
                "cap_cost": None,
            }
            | {c: _mean_present(r.get(c) for r in rs) for c in JOB_METRICS}
        )
    free = {s["run"]: s["total_cost"] for s in out}  # runs without limits among them
    for s in out:
        base = free.get(run_name(s["method"], s["multiplier"]))
        if s["run"] != run_name(s["method"], s["multiplier"]) and base:
            s["cap_cost"] = s["total_cost"] / base - 1.0
    return out


def _mean_present(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None; None if there is none."""
    present = [v for v in values if v is not None]
    return mean(present) if present else None


def format_table(
    summary: Sequence[dict[str, Any]], reference: str = REFERENCE, baseline: str = BASELINE
) -> str:
    """The human-readable comparison table: costs in $; miss % (the deadline-miss rate), late
    p95 (the late jobs' 95th-percentile lateness, in hours), JCT p95 (hours) and moves per job
    are means over the run's simulations (`summarize`); with disruption limits, cap cost % is
    what they add to the same method's cost without them; pct in %. Where a run's bound is
    not the on-demand one, a column names each run's (`bound_kind`)."""

    def num(x: float | None, fmt: str) -> str:
        return "-" if x is None else format(x, fmt)

    def scaled(x: float | None, k: float, fmt: str) -> str:
        return num(None if x is None else x * k, fmt)

    caps = any(s.get("cap_cost") is not None for s in summary)
    uppers = any(s.get("cost_over_upper") is not None for s in summary)
    kinds = any(s.get("bound_kind") not in (None, "on-demand") for s in summary)
    head = (
        f"{'method':<22}{'nodes':>6}{'runs':>6}{'total $':>12}{'VM $':>11}{'tardiness $':>13}"
        f"{'/' + baseline:>{max(8, len(baseline) + 2)}}{'/bound':>8}"
        + (f"{'bound':>11}" if kinds else "")
        + (f"{'/upper':>8}" if uppers else "")
        + f"{'miss %':>8}{'late p95 h':>12}{'JCT p95 h':>11}"
        f"{'moves/job':>11}"
        + (f"{'cap cost %':>12}" if caps else "")
        + f"   pct vs {reference} % (min / mean / max)"
    )
    lines = [head, "-" * len(head)]
    for s in summary:
        p = (
            "-"
            if s["pct_mean"] is None
            else f"{s['pct_min']:6.1f} / {s['pct_mean']:6.1f} / {s['pct_max']:6.1f}"
        )
        lines.append(
            f"{s['run']:<22}{s['nodes']:>6}{s['runs']:>6}{s['total_cost']:>12.2f}"
            f"{s['vm_cost']:>11.2f}{s['tardiness_cost']:>13.2f}"
            f"{num(s['ratio_to_baseline'], '.3f'):>{max(8, len(baseline) + 2)}}"
            f"{num(s['cost_over_bound'], '.3f'):>8}"
            + (f"{s.get('bound_kind') or '-':>11}" if kinds else "")
            + (f"{num(s.get('cost_over_upper'), '.3f'):>8}" if uppers else "")
            + f"{scaled(s['deadline_miss_rate'], 100, '.1f'):>8}"
            f"{scaled(s['lateness_of_late_p95'], 1 / 3600, '.2f'):>12}"
            f"{scaled(s['jct_p95'], 1 / 3600, '.1f'):>11}"
            f"{num(s.get('moves_per_job'), '.2f'):>11}"
            + (f"{scaled(s.get('cap_cost'), 100, '+.1f'):>12}" if caps else "")
            + f"   {p}"
        )
    return "\n".join(lines)


def cost_table(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, int, str], float]:
    """Mean total cost per (scenario, N, run) over the successful cells (Fig. 3)."""
    acc: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for r in ok_rows(rows):
        acc[(scenario(r), r["nodes"], row_run(r))].append(r["total_cost"])
    return {k: mean(v) for k, v in acc.items()}


def bound_table(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, int, str], float]:
    """Mean of total cost / bound per (scenario, N, run) over the successful cells that have a
    bound (results files older than `gpuaas bound` have none: empty table)."""
    acc: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for r in ok_rows(rows):
        if r.get("cost_over_bound") is not None:
            acc[(scenario(r), r["nodes"], row_run(r))].append(r["cost_over_bound"])
    return {k: mean(v) for k, v in acc.items()}


def solver_time_per_event(row: dict[str, Any], clock: str = "wall") -> float | None:
    """A row's mean solver time per rescheduling event: wall clock, or process CPU time.

    CPU time (solver_cpu_seconds / solver_calls) is the better measure on a shared machine,
    where wall time also counts waiting for a core.
    """
    if clock == "wall":
        return row.get("solver_seconds_mean")
    if clock != "cpu":
        raise InputError(None, "clock", f"unknown clock {clock!r}; expected wall or cpu")
    cpu, calls = row.get("solver_cpu_seconds"), row.get("solver_calls")
    return None if cpu is None or not calls else cpu / calls


#: bootstrap resamples of a trace's solver seeds (an interval's ends move by about 0.001 with
#: the generator's seed)
RESAMPLES = 10_000


def bootstrap_means(pairs: np.ndarray) -> np.ndarray:
    """(RESAMPLES, 2): the means of `pairs`' two columns ((seeds, 2): a run's cost and its
    reference's at each solver seed) over the seeds drawn with replacement, a seed's two runs
    together; a fixed generator, so that a table regenerates to the digit."""
    pairs = np.asarray(pairs, dtype=np.float64)
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(pairs), size=(RESAMPLES, len(pairs)))
    return pairs[picks].mean(axis=1)


def percentile_interval(ratios: np.ndarray, level: float = 0.9) -> tuple[float, float]:
    """The central `level` interval of `ratios` (e.g. the columns of `bootstrap_means` divided)."""
    tail = round(50 * (1 - level), 9)  # 5, not 4.999999999999999
    lo, hi = np.percentile(ratios, [tail, 100 - tail])
    return float(lo), float(hi)
