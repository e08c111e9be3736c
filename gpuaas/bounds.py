"""Lower bounds on the total cost (VM + tardiness) of ANY schedule of a trace.

`bound(trace)` returns the best of two bounds (`formulations/BOUND.md` writes out every row
with the argument why any real schedule satisfies it):

1. **Per job** (`gpuaas.per_job`): each job alone on the cloud, free to mix configurations;
   closed form, node-independent.
2. **Capacity** (`gpuaas.capacity_lp`, whose docstring states its rows and slots): a
   time-indexed LP solved by HiGHS. The LP is skipped when the per-job plans never need more
   than N nodes at once (`peak_nodes`): they then satisfy every row, and its optimum is the
   per-job bound. A trace too large for one LP at slots of a day is cut into groups of
   consecutive jobs (`capacity_groups`) whose LPs' sum is a relaxation of the whole LP's; the
   whole trace's coarse LP is kept when small, and solved in any case when no group needed
   its LP (BOUND.md §3, step 4); and the windowed LP (`_windowed`: hour slots where each job's
   work is, with the tail rows of `capacity_lp.tail_rows`) is solved too (step 5).

**Spot capacity** (`availability=`, formulations/BOUND.md §4). On a catalog with spot variants
every spot configuration is priced at the spot price; with the availability a simulation
replayed, known in hindsight, a job cannot use a spot type that has no capacity from its
release on (its columns are left out, in the per-job bound too: `spot_capacity`), and the
capacity LP bounds the node-seconds of each spot type in each slot by its count's integral.
The spells (times a type's count is 0) force every schedule to pay too: a job's time on a type
is at most the type's usable time in each slot, and work beyond the longest stretch costs
restarts at the run's overhead (`capacity_lp.spell_rows`, which argues each row). Other
interruptions only add cost, so they are not modelled.

What it bounds: every schedule in which job j runs no earlier than r_j = max(release_j, T_c)
at one configuration at a time (migrating freely and at no cost), taking the instance's
*predicted* times — `gpuaas simulate` with noise 0 can never cost less (restart overhead and
idle VMs only add cost); with noise, actual durations differ and a run can fall below it.

**Quotas** (`gpuaas.catalog.Quota`): the per-job bound ignores them (valid, looser); the
capacity LP has a row per quota and slot (`capacity_lp`) and is solved whenever the per-job
plans use a type under a quota (`limits`).
"""

from __future__ import annotations

import dataclasses
import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import gpuaas.capacity_lp as _lp
from gpuaas import checks
from gpuaas.availability import UNLIMITED, Availability, Capacity
from gpuaas.capacity_lp import (
    SLOT_UNIT,
    capacity_groups,
    capacity_lp,
    check_slot,
    refine_grid,
    solve_capacity,
    solve_point,
    whole_slot,
)
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.per_job import PerJobPlan, bound_share, effective_release, per_job_plan
from gpuaas.per_job import at as job_at
from gpuaas.reconfiguration import DEFAULT_OVERHEAD, DEFAULT_STARTUP

#: the whole trace's LP with the slot of `auto_slot` is solved too, beside its groups', when it
#: has at most this many x-columns: the larger of the two bounds is reported
WHOLE_COLUMNS = 500_000
#: time limit (s) of the capacity LP when none is given
DEFAULT_TIME_LIMIT = 120.0
#: the most LPs of an adaptive grid (`_adaptive`): the first on the uniform grid, each next one
#: cut finer where the last one's optimum is constrained by the grid
MAX_ROUNDS = 8
#: the windowed LP (`_windowed`): each job's regular slots cover [r_j, max(due_j, r_j + WINDOW))
#: at first, and 4 x longer after a round in which its work reached its open-ended column, for
#: at most WINDOW_ROUNDS rounds, while that work is more than SPILL of the jobs' (in jobs) ...
WINDOW = 12 * 3600.0
SPILL = 0.01
#: ... its slot is the smallest multiple of 1 h for which all its LPs have at most
#: WINDOW_COLUMNS x-columns together, each LP at most MAX_COLUMNS_WINDOW
WINDOW_ROUNDS = 4
WINDOW_COLUMNS = 1_000_000
MAX_COLUMNS_WINDOW = 150_000


@dataclass
class Bound:
    """The bounds of one trace for one node count (`to_dict` is `gpuaas bound --json`).

    `capacity` = max(the LP's dual bound, per_job) — the LP holds the per-job rows, so this only
    matters at a time limit — and `bound` = max(per_job, capacity). `status` is the capacity
    LP's: "optimal", "time_limit" (capacity is then a valid dual bound, possibly the per-job
    one) or "fits" (the per-job plans never need more than N nodes at once, so the LP's optimum
    is the per-job bound: not solved). `slot`, `columns`, `rows` describe the LPs solved: one,
    or `solved` of the `groups` of consecutive jobs a large trace is split into
    (`capacity_groups`). `kind` names the bound: "spot" (the trace on its catalog's spot
    variants, within the availability given) or "on-demand" (on-demand VMs only); a cost is
    compared with the bound of its own kind (`gpuaas compare --spot`).
    """

    bound: float
    per_job: float
    capacity: float
    status: str
    seconds: float
    slot: float | None  # None: the LP was not needed ("fits")
    nodes: int
    columns: int = 0
    rows: int = 0
    groups: int = 1
    solved: int = 0
    kind: str = "on-demand"
    slots: int = 0
    rounds: int = 1
    windowed: bool = False  # the windowed LP (`_windowed`; `groups`: its parts)

    @property
    def binding(self) -> str:
        """Which bound is the larger: "capacity" or "per_job"."""
        return "capacity" if self.capacity > self.per_job else "per_job"

    def to_dict(self) -> dict[str, Any]:
        return {
            "bound": self.bound,
            "kind": self.kind,
            "bounds": {"per_job": self.per_job, "capacity": self.capacity},
            "binding": self.binding,
            "status": self.status,
            "seconds": self.seconds,
            "slot": self.slot,
            "nodes": self.nodes,
            "columns": self.columns,
            "rows": self.rows,
            "groups": self.groups,
            "slots": self.slots,
            "rounds": self.rounds,
            "windowed": self.windowed,
        }

    def summary(self) -> str:
        """A few human-readable lines."""
        if self.status == "fits":
            cap = (
                "= per-job (the per-job plans never need more than N nodes at once: LP not needed)"
            )
        else:
            gap = 100.0 * (self.capacity - self.per_job) / self.per_job if self.per_job > 0 else 0.0
            if self.windowed:
                split = (
                    f" windowed, in {self.groups} parts ({self.solved} needing the LP), "
                    f"{self.rounds} round{'s' if self.rounds > 1 else ''}"
                )
            elif self.groups > 1:
                split = (
                    f" in {self.groups} groups of consecutive jobs ({self.solved} needing the LP)"
                )
            else:
                split = ""
            grid = (
                f"adaptive grid of {self.slots} slots from {_duration(self.slot or 0.0)}, "
                f"best of {self.rounds} LPs"
                if self.rounds > 1 and not self.windowed
                else f"slot {_duration(self.slot or 0.0)}"
            )
            cap = (
                f"{self.capacity:.4f} $  ({gap:+.2f} % over per-job; LP {self.status}{split}, "
                f"{self.columns} columns, {self.rows} rows, {grid})"
            )
        return "\n".join(
            [
                f"bound         {self.bound:.4f} $  ("
                + ("spot bound: " if self.kind == "spot" else "")
                + f"no schedule on {self.nodes} nodes costs less; "
                f"the {self.binding.replace('_', '-')} bound binds)",
                f"per-job       {self.per_job:.4f} $  (each job alone, cheapest mix of configurations)",
                f"capacity      {cap}",
                f"seconds       {self.seconds:.2f}",
            ]
        )


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds % 3600 == 0 else f"{seconds:g} s"


def bound(
    trace: Instance,
    nodes: int | None = None,
    slot: float | None = None,
    time_limit: float | None = None,
    progress: Callable[[str], None] | None = None,
    availability: Availability | None = None,
    overhead: float | None = None,
    startup: float | None = None,
    adaptive: bool = False,
    windowed: bool | None = None,
) -> Bound:
    """The lowest total cost any schedule of `trace` on `nodes` nodes could reach (module docstring).

    Parameters
    ----------
    trace : Instance
        A trace (all jobs with their releases) or a rescheduling point; jobs run from
        max(release, trace.time) on, with their remaining (predicted) times.
    nodes : int, optional
        N; default the trace's. The per-job bound does not depend on it.
    slot : float, optional
        Slot length (s) of the capacity LP; default the smallest multiple of 1 h for which it
        has at most `MAX_COLUMNS` x-columns, but at most `GROUP_SLOT` (`capacity_groups`).
    time_limit : float, optional
        Seconds for the capacity LPs (default `DEFAULT_TIME_LIMIT`); when it runs out the
        capacity bound is a valid dual bound, never a primal estimate.
    progress : callable, optional
        Called with each step's description (`gpuaas.progress.Progress` prints them).
    availability : Availability, optional
        The spot capacity of the run, in hindsight (its VM types are the on-demand types; the
        trace is put on its catalog's spot variants, `Instance.with_spot`).
    overhead, startup : float, optional
        With `availability`: the run's restart overhead and VM start-up (s; default a run's,
        `DEFAULT_OVERHEAD` and `DEFAULT_STARTUP`), which every schedule pays for the
        capacity's spells (`capacity_lp.spell_rows`). Give the run's own (0 and 0 for the
        paper's costs): a bound with a larger overhead than the run's is no bound of it.
    adaptive : bool
        Without spot capacity: after the uniform LP, up to `MAX_ROUNDS` LPs on grids cut finer
        where the last one's capacity binds (`_adaptive`), the best reported. Off by default:
        on congested N = 10 traces it gains up to 1.1 % for about 10 x the time, and every
        campaign cell computes a bound (formulations/BOUND.md §2). An explicit `slot` that
        cuts the trace into groups always refines the whole trace's LP down to it.
    windowed : bool, optional
        With the automatic slot, without spot capacity, on a trace cut into groups: also solve
        the windowed LP (`_windowed`: hour slots where each job's work is, with the tail rows;
        BOUND.md §3, step 5) and report the larger. Default (None): when the jobs' median
        slack, due − r_j, is at most `WINDOW` (ITP clusters: 2-5 h; the generated traces'
        18-20 h, where it gained at most 0.4 % for 10-40 x the time).

    Returns
    -------
    Bound
    """
    t0 = _time.perf_counter()
    if not isinstance(trace, Instance):
        raise InputError(None, "trace", "must be an Instance (see gpuaas.load_instance)")
    spot = None
    for name, value in (("overhead", overhead), ("startup", startup)):
        checks.optional_number(value, name, minimum=0.0)
    restart = {
        "overhead": DEFAULT_OVERHEAD if overhead is None else float(overhead),
        "startup": DEFAULT_STARTUP if startup is None else float(startup),
    }
    if availability is not None:
        trace, spot = spot_capacity(trace, availability)
    nodes = checks.nodes(trace.nodes if nodes is None else nodes)
    for name, value in (("slot", slot), ("time_limit", time_limit)):
        checks.optional_number(value, name, positive=True)
    if slot is not None and trace.n_jobs:
        check_slot(trace, int(nodes), float(slot), spot)
    kind = "spot" if trace.catalog.has_spot else "on-demand"
    say = progress or (lambda step: None)
    say(f"per-job bound of {trace.n_jobs} jobs")
    plan = per_job_plan(trace)
    per_job = plan.total
    if trace.n_jobs == 0 or (peak_nodes(trace, plan) <= nodes and not limits(trace, spot, plan)):
        return Bound(
            per_job,
            per_job,
            per_job,
            "fits",
            _time.perf_counter() - t0,
            None,
            int(nodes),
            kind=kind,
        )
    deadline = t0 + (DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit))
    say("capacity LP: choosing the slot")
    L, start, groups = capacity_groups(trace, int(nodes), slot, spot)
    if adaptive and len(groups) == 1 and slot is None and not spot:
        best = _adaptive(trace, int(nodes), L, SLOT_UNIT, per_job, deadline, say, restart)
    else:
        best = _grouped(trace, int(nodes), L, start, groups, plan, deadline, say, spot, restart)
    if len(groups) > 1:
        # the groups may all fit N nodes alone (fine slots: few jobs each) while the trace does
        # not: the whole trace's coarse LP is then solved whatever its size, never none at all
        say("capacity LP: the whole trace with one coarse slot")
        unit = SLOT_UNIT if slot is None else float(slot)
        whole = _whole(
            trace,
            int(nodes),
            deadline,
            plan.total,
            spot,
            unit,
            best.solved == 0,
            restart,
            refine=adaptive or slot is not None,
        )
        if whole is not None and (whole.value > best.value or best.solved == 0):
            best = whole
        if windowed is None:
            windowed = bool(np.median(trace.due - effective_release(trace)) <= WINDOW)
        if slot is None and not spot and windowed:
            # hour slots where each job's work is, with the tail rows (BOUND.md §3, step 5)
            say("capacity LP: windowed, 1-hour slots")
            win = _windowed(trace, int(nodes), plan, deadline, say)
            if win is not None and win.value > best.value:
                best = win
    return Bound(
        bound=max(per_job, best.value),
        per_job=per_job,
        capacity=max(best.value, per_job),
        status=best.status,
        seconds=_time.perf_counter() - t0,
        slot=best.slot,
        nodes=int(nodes),
        columns=best.columns,
        rows=best.rows,
        groups=best.groups,
        solved=best.solved,
        kind=kind,
        slots=best.slots,
        rounds=best.rounds,
        windowed=best.windowed,
    )


@dataclass
class _Relaxation:
    """The capacity bound of one way of solving the LP, and what was solved."""

    value: float
    status: str
    slot: float
    columns: int
    rows: int
    groups: int
    solved: int
    slots: int = 0  # regular slots of the LP behind the value (0: several or none)
    rounds: int = 1  # LPs of an adaptive grid solved (`_adaptive`), rounds of `_windowed`
    windowed: bool = False


def _adaptive(
    trace: Instance,
    nodes: int,
    slot: float,
    unit: float,
    per_job: float,
    deadline: float,
    say: Callable[[str], None],
    restart: dict[str, float] | None = None,
) -> _Relaxation:
    """The best dual bound of up to MAX_ROUNDS capacity LPs of the whole trace: the first on
    the uniform grid of `slot`, each next one on `refine_grid`'s grid from the last optimum
    (slots cut towards `unit` where capacity binds or work runs late; each job's columns
    where its work is; at most MAX_COLUMNS x-columns). Every grid's LP is a relaxation
    (BOUND.md §2), so the best of them is a bound. Stops when two rounds in a row gain nothing,
    nothing is left to cut, or the time runs out (the bound so far stands)."""
    best = _Relaxation(per_job, "optimal", slot, 0, 0, 1, 0)
    edges = until = None
    idle = 0
    for n in range(MAX_ROUNDS):
        left = deadline - _time.perf_counter()
        if n and left <= 0:
            break
        which = f" (adaptive grid, round {n + 1})" if n else ""
        say(f"capacity LP{which}: building")
        if edges is None:
            lp = capacity_lp(trace, nodes, slot, **(restart or {}))
        else:
            lp = capacity_lp(trace, nodes, edges=edges, until=until, **(restart or {}))
        say(f"capacity LP{which}: HiGHS on {lp.n_cols} columns, {lp.n_rows} rows")
        value, status, x, y = solve_point(lp, max(left, 0.0))
        if n == 0 or (value is not None and value > best.value):
            gain = value is not None and value > best.value * (1 + 1e-9)
            best = _Relaxation(
                per_job if value is None else max(value, per_job),
                status,
                lp.slot,
                lp.n_cols,
                lp.n_rows,
                1,
                1,
                lp.n_slots,
            )
        else:
            gain = False
        best.rounds = n + 1
        idle = 0 if gain or n == 0 else idle + 1
        if status != "optimal" or x is None or y is None or idle >= 2:
            break
        grid = refine_grid(trace, lp, x, y, unit, _lp.MAX_COLUMNS, shrink=n == 0)
        if grid is None:
            break
        edges, until = grid
    return best


def window_parts(
    first: np.ndarray,
    until: np.ndarray,
    columns: np.ndarray,
    release: np.ndarray,
    max_columns: int,
) -> list[np.ndarray]:
    """Jobs (indices) in parts whose LPs `_windowed` solves apart: the sets whose regular slots
    (first_j .. until_j - 1) overlap no other set's (the windowed LP is then the sum of theirs
    exactly: no row holds columns of two), each cut in release order into consecutive parts
    of at most `max_columns` x-columns (`columns` per job; one job alone may have more), which
    relaxes the capacity they share as the groups of §3 do."""
    order = np.lexsort((release, first))
    reach = np.maximum.accumulate(until[order])
    new = np.ones(len(order), dtype=bool)
    new[1:] = first[order][1:] >= reach[:-1]
    parts: list[np.ndarray] = []
    for part in np.split(order, np.flatnonzero(new)[1:]):
        total = np.concatenate(([0], np.cumsum(columns[part])))
        if total[-1] <= max_columns:
            parts.append(part)
            continue
        # windows crossing the first slot of part[i]: those of the jobs before it (the part is
        # in order of first slots) not ended by then; later jobs' windows start after
        ends = np.sort(until[part])
        crossing = np.arange(len(part)) - np.searchsorted(ends, first[part], side="right")
        cuts, a = [], 0
        while a < len(part) - 1 and total[-1] - total[a] > max_columns:
            # the most jobs from a within the budget (at least one), cut in their later half
            # where the fewest windows cross, the latest such place
            b = max(a + 1, int(np.searchsorted(total, total[a] + max_columns, side="right")) - 1)
            lo = max(a + 1, (a + b + 1) // 2)
            c = b - int(np.argmin(crossing[lo : b + 1][::-1]))
            cuts.append(c)
            a = c
        parts += np.split(part, cuts)
    return parts


def _windowed(
    trace: Instance,
    nodes: int,
    plan: PerJobPlan,
    deadline: float,
    say: Callable[[str], None],
    unit: float = SLOT_UNIT,
) -> _Relaxation | None:
    """The capacity LP of the whole trace on slots of a multiple of `unit` (the smallest for
    which it has at most WINDOW_COLUMNS x-columns), each job's regular slots ending at its
    window, max(due_j, r_j + WINDOW) (its later work in its open-ended column: a relaxation
    for any windows, BOUND.md §2 "Per-job windows"), with the tail rows; solved as
    `window_parts`' parts (exact where the windows do not overlap, a relaxation where a part
    is cut by its size). While the work in the open-ended columns of jobs whose window ends
    before the last slot is more than SPILL of the jobs' (in jobs), those jobs get a 4 x
    longer window and the LP is solved again, WINDOW_ROUNDS times at most; the best value is
    kept (each is a bound). Parts whose per-job plans fit N nodes count their per-job bound (their
    LP's optimum). None when nothing was solved."""
    _, _, _, n_cfg, start, end = _lp._grid(trace, nodes)
    r = effective_release(trace)
    window = np.full(trace.n_jobs, WINDOW)

    def grid(L: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        K = max(1, int(np.ceil((end - start) / L - 1e-9)))
        edges = start + np.arange(K + 1) * L
        first = np.minimum(np.searchsorted(edges, r, side="right") - 1, K)
        until = np.searchsorted(edges, np.maximum(trace.due, r + window), side="left")
        return edges, first, np.clip(until, np.minimum(first + 1, K), K)

    L = unit
    while True:
        edges, first, until = grid(L)
        if int((n_cfg * (until - first + 1)).sum()) <= WINDOW_COLUMNS or L >= end - start:
            break
        L += unit
    best: _Relaxation | None = None
    solved: dict[tuple[bytes, bytes], tuple[float, str, int, int, np.ndarray]] = {}
    # per part: (value, status, columns, rows, each job's work in its open-ended column)
    for n in range(WINDOW_ROUNDS):
        edges, first, until = grid(L)
        parts = window_parts(first, until, n_cfg * (until - first + 1), r, MAX_COLUMNS_WINDOW)
        out = _Relaxation(0.0, "optimal", L, 0, 0, len(parts), 0, len(edges) - 1, n + 1, True)
        spill = np.zeros(trace.n_jobs)
        for idx in parts:
            key = (idx.tobytes(), until[idx].tobytes())
            floor = float(plan.cost[idx].sum())
            if key not in solved:
                sub = trace.subset(idx)
                if peak_nodes(sub, per_job_plan(sub)) <= nodes:
                    solved[key] = (floor, "optimal", 0, 0, np.zeros(len(idx)))
                elif deadline - _time.perf_counter() <= 0:
                    out.value += floor
                    out.status = "time_limit"
                    continue
                else:
                    f0, u0 = int(first[idx].min()), int(until[idx].max())
                    lp = capacity_lp(
                        sub, nodes, edges=edges[f0 : u0 + 1], until=until[idx] - f0, tail=True
                    )
                    value, status, x, _ = solve_point(lp, deadline - _time.perf_counter())
                    late = np.zeros(len(idx))
                    if x is not None:
                        spilt = lp.col_slot == lp.until[lp.col_job]
                        np.add.at(late, lp.col_job[spilt], np.maximum(x[: lp.n_x][spilt], 0.0))
                    value = floor if value is None else max(value, floor)
                    solved[key] = (value, status, lp.n_cols, lp.n_rows, late)
            value, status, cols, rows, late = solved[key]
            out.value += value
            if status != "optimal":
                out.status = status
            out.columns += cols
            out.rows += rows
            out.solved += cols > 0
            spill[idx] = np.where(until[idx] < len(edges) - 1, late, 0.0)
        if best is None or out.value > best.value:
            best = out
        say(f"capacity LP, windowed (round {n + 1}): {out.value:.2f} $ in {len(parts)} parts")
        if spill.sum() <= SPILL * trace.n_jobs or out.status != "optimal":
            break
        window[spill > 1e-6] *= 4.0
    return best


def _grouped(
    trace: Instance,
    nodes: int,
    slot: float,
    start: float,
    groups: list[np.ndarray],
    plan: PerJobPlan,
    deadline: float,
    say: Callable[[str], None],
    spot: dict[int, Capacity] | None = None,
    restart: dict[str, float] | None = None,
) -> _Relaxation:
    """Σ over the groups of their LP's dual bound (at least their per-job bound)."""
    out = _Relaxation(0.0, "optimal", slot, 0, 0, len(groups), 0)
    for n, idx in enumerate(groups):
        sub = trace.subset(idx) if len(groups) > 1 else trace
        sub_plan = per_job_plan(sub) if len(groups) > 1 else plan
        if (
            len(groups) > 1
            and peak_nodes(sub, sub_plan) <= nodes
            and not limits(sub, spot, sub_plan)
        ):
            out.value += sub_plan.total  # this group's LP optimum is its per-job bound
            continue
        left = deadline - _time.perf_counter()
        if left <= 0:
            out.value += sub_plan.total  # out of time: a valid bound of this group
            out.status = "time_limit"
            continue
        which = f" (group {n + 1} of {len(groups)})" if len(groups) > 1 else ""
        say(f"capacity LP{which}: building")
        lp = capacity_lp(sub, nodes, slot, start=start, spot=spot, **(restart or {}))
        say(f"capacity LP{which}: HiGHS on {lp.n_cols} columns, {lp.n_rows} rows")
        value, status = solve_capacity(lp, left)
        out.value += sub_plan.total if value is None else max(value, sub_plan.total)
        if status != "optimal":
            out.status = status
        out.columns += lp.n_cols
        out.rows += lp.n_rows
        out.solved += 1
    return out


def _whole(
    trace: Instance,
    nodes: int,
    deadline: float,
    per_job: float,
    spot: dict[int, Capacity] | None = None,
    unit: float = SLOT_UNIT,
    needed: bool = False,
    restart: dict[str, float] | None = None,
    refine: bool = False,
) -> _Relaxation | None:
    """The whole trace's LP at `auto_slot`'s slot in multiples of `unit` (one slot over the
    horizon, at most), if it has at most WHOLE_COLUMNS x-columns and time is left, or in any
    case when `needed` (no group needed its LP): coarse, but it sees the capacity of the whole
    horizon, which groups of consecutive jobs do not share; with `refine` and without spot
    capacity its grid is then refined towards `unit` where the load is (`_adaptive`). Its
    value is at least `per_job`."""
    L, columns = whole_slot(trace, nodes, spot, unit)
    left = deadline - _time.perf_counter()
    if not needed and (columns > WHOLE_COLUMNS or left <= 0):
        return None
    if refine and not spot:
        return _adaptive(trace, nodes, L, unit, per_job, deadline, lambda step: None, restart)
    lp = capacity_lp(trace, nodes, L, spot=spot, **(restart or {}))
    value, status = solve_capacity(lp, max(left, 0.0))
    if value is None and not needed:
        return None
    value = per_job if value is None else max(value, per_job)
    return _Relaxation(value, status, L, lp.n_cols, lp.n_rows, 1, 1)


def spot_capacity(
    trace: Instance, availability: Availability
) -> tuple[Instance, dict[int, Capacity]]:
    """`trace` on its catalog's spot variants, without the spot configurations a job cannot use
    (its type has no capacity from the job's release on), and each spot type's capacity
    (variant index -> `Capacity` of its on-demand type; a type the availability does not list
    has none)."""

    trace = trace.with_spot()
    cat = trace.catalog
    none = Capacity(np.zeros(1), np.zeros(1, dtype=np.int64))
    spot = {
        int(v): availability.capacity.get(cat.vm_names[cat.base[v]], none)
        for v in np.flatnonzero(cat.spot)
    }
    r = effective_release(trace)
    work = trace.work.copy()
    for v, cap in spot.items():
        # the most VMs of v any time from each job's release on
        later = np.maximum.accumulate(cap.counts[::-1])[::-1]
        most = later[np.maximum(np.searchsorted(cap.times, r, side="right") - 1, 0)]
        work[np.ix_(most == 0, cat.cfg_vm == v)] = np.inf
    return dataclasses.replace(trace, work=work), spot


def limits(instance: Instance, spot: dict[int, Capacity] | None, plan: PerJobPlan) -> bool:
    """Whether the per-job plans use a spot type whose capacity is ever finite, or a type under
    a quota (the LP's spot or quota rows may then bind, so its optimum need not be the per-job
    bound)."""
    cat = instance.catalog
    used = plan.cfg[plan.cfg >= 0]
    if cat.quotas and cat.quota_members[:, cat.cfg_vm[used]].any():
        return True
    if not spot:
        return False
    types = set(cat.cfg_vm[used].tolist())
    return any((cap.counts < UNLIMITED).any() for v, cap in spot.items() if v in types)


def peak_nodes(instance: Instance, plan: PerJobPlan) -> float:
    """The most nodes the per-job plans occupy at once, each job running its plan from r_j on
    (first configuration, then the second), a configuration (v, g) filling g/G_v of a node.

    When it is at most N these plans satisfy every row of the capacity LP at any slot length,
    with the per-job cost: the capacity LP's optimum is then exactly the per-job bound.
    """
    J = instance.n_jobs
    if J == 0:
        return 0.0
    share = bound_share(instance)  # (C,), or (J, C) with GPU-less types
    rows = np.arange(J)
    r = effective_release(instance)
    times, rates = [r], []
    for i in range(2):
        c = plan.cfg[:, i]
        used = c >= 0
        span = np.zeros(J)
        span[used] = plan.fraction[used, i] * instance.times[rows[used], c[used]]
        times.append(times[-1] + span)
        rates.append(np.where(used, job_at(share, rows, np.maximum(c, 0)), 0.0))
    # +rate at each segment's start, -rate at its end; ends sort before starts at equal times
    at = np.concatenate([times[0], times[1], times[1], times[2]])
    delta = np.concatenate([rates[0], -rates[0], rates[1], -rates[1]])
    order = np.lexsort((delta, at))
    return float(np.cumsum(delta[order]).max(initial=0.0))
