"""An upper value of the optimum of a trace: the cheapest of several complete schedules.

`upper(trace)` simulates the runs of `PORTFOLIO` in order, every duration known (noise 0: the
actual durations are the predicted ones), while its time limit lasts, and keeps the cheapest.
Every run is a complete, feasible schedule of the trace on N nodes (the Rescheduler checks each
plan; its event log reconciles with its costs, `tests/eventlog.py`), billed with the run's
restart overhead and VM start-up, so no optimal schedule with those costs costs more: the
optimum lies between `gpuaas.bound` and `upper`.

`default_seeds=K` (`gpuaas bound --upper --default-seeds K`) also runs the default at seeds
1..K (after the portfolio): its randomized constructions draw differently per seed, and on the
generated high-load traces at 600 s restart its seeds 1-8 spread by 4-8 %, so more of them
lower the upper value.

`search=D` (`--search D`) then searches around the cheapest run in hindsight
(`suffix_search`): a large-neighbourhood search whose neighbourhoods are the run's decisions
from 7 points in time on (the 1/8 .. 7/8 quantiles of the releases), each re-drawn D times by
continuing a fork of the simulation there with another seed, a cheaper complete run replacing
the incumbent. Each candidate is still a simulated run of the trace, billed at its own due
dates and weights, its event log reconciling; what hindsight adds is which decisions are kept.
scripts/results/upper.md gives the rows run with K = 8 and D = 3 and what each bought.

`admission=True` (`--admission`) also replays the default (seed 1) on copies of the trace
whose releases are replaced by clairvoyant admission times (`gpuaas.admission`): a list
schedule in hindsight, every release and duration known, starts each job, non-preemptively at
one configuration of the largest VM types, at the earliest time >= its release at which
`scale` x the N nodes' GPUs hold it (jobs by latest start, heavier first), for each scale of
`ADMISSION_SCALES` (a scale admitting every job at its release, or as an earlier scale did, is
not run again). The runs come after the portfolio's and before the search, which then starts
from the cheapest run, admitted or not. A run on the admitted copy is a complete schedule of the
original trace: no job runs before its admission, so before its release, and nothing billed
depends on the release (VM time, ω_j·max(0, C_j - due_j) at the unchanged due dates and weights,
egress); its event log reconciles against the original trace (`tests/test_upper.py`). The
method still decides online among the jobs admitted so far; hindsight chooses when each is let
in. On ITP cluster 5 at 600 s, admitting at 2 x N costs 23 696 $ against the default's 28 557 $
(17 % less, of it tardiness 7 952 -> 3 631 $; its moves and lost work hardly change); where
the list schedule admits every job at its release (ITP clusters 8 and 10 at 1.25-2 x N)
nothing is run (scripts/results/upper.md, "Clairvoyant admission").

`vm_schedule=True` (`--vm-schedule`) also runs a schedule that never moves a job, computed
in hindsight (`gpuaas.vm_schedule`): a serial schedule generation over VM instances on the N
slots (each job once, on an open VM of its type with free GPUs or a new one in a free slot,
by the VM dollars it adds and its tardiness), the cheapest of `gpuaas.vm_schedule.best_plan`'s
58 plans by its own cost replayed through the simulator by a method that follows it (the
trace's copy released at the planned placements; noise 0): a complete schedule of the
original trace, its plans checked and its event log reconciling like every run. It comes after
the admission runs; the search, which re-draws a method's decisions, starts from the cheapest
run of a method, never from it. On ITP clusters 9 and 8 at 600 s it is the cheapest run
(45 158 $ and 73 948 $ against 60 614 $ and 95 528 $: scripts/results/upper.md, "A schedule
that never moves"); where moving pays (cluster 5, the generated traces) it is dearer than the
runs.

What it is not: the optimum, nor a clairvoyant method in the strong sense. Every decision is
made online (a job seen at its release, its duration exactly); the portfolio's choice among
runs and the search's choice among suffixes are made in hindsight. A large `upper / bound`
therefore says that the bound, the methods, or both are short, not which.
Tried and not kept (issue 43; `scripts/clairvoyant_probe.py`, upper.md "Clairvoyant members,
tried"): the default run on the trace with due dates from the capacity LP's plan (each job's
completion there), and squeaky-wheel rounds moving late jobs' due dates earlier, both billed
at the true due dates: at the LP's automatic slot (9 h to a day on these traces) the capacity
rows do not bind, its plan is the per-job bound's and says nothing about when to run what
(0.998-1.77 x the default's cost); at 1-hour slots the LP has a million columns and HiGHS does
not finish in 300 s; the rounds are no cheaper than as many seeds. Not tried: a look-ahead
method (the methods plan every job of an Instance as released, and the Rescheduler refuses a
submission before its release) and a MILP over time windows (the MILP models one
rescheduling point, not a schedule over time).
"""

from __future__ import annotations

import copy
import io
import json
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuaas import checks
from gpuaas.errors import InputError
from gpuaas.files import open_output
from gpuaas.instance import Instance

if TYPE_CHECKING:
    from gpuaas.simulation_result import SimulationResult

#: the runs tried, in order (method, seed): the default first (so `upper` is never above the
#: default's cost once it has run), then what finishes fast, then more seeds and slower methods
PORTFOLIO: tuple[tuple[str, int], ...] = (
    ("incremental", 1),
    ("greedy", 1),
    ("incremental", 2),
    ("randomized-greedy", 1),
    ("incremental", 3),
    ("path-relinking", 1),
)
#: the admission runs' capacity scales (`admission`): each replays the default on the trace
#: admitted by a list schedule on this many times the N nodes' GPUs (`gpuaas.admission`)
ADMISSION_SCALES = (1.25, 1.5, 1.75, 2.0)
#: seconds for the runs when no time limit is given (the first run always completes)
DEFAULT_TIME_LIMIT = 600.0
#: the search's windows (`search`): it re-decides from the 1/W, 2/W, ... quantiles of the
#: releases on
SEARCH_WINDOWS = 8
#: the seeds of the search's re-drawn suffixes start here (far from any portfolio seed)
SEARCH_SEED = 100_000


@dataclass
class Upper:
    """The upper value of one trace (`to_dict`: `gpuaas bound --upper --json`'s `upper_run`).

    `upper` is the cheapest run's total cost (VM + tardiness, restart and start-up included),
    `method` and `seed` name it, `runs` lists every run tried as (method, seed, total cost) in
    order, `log` is the cheapest run's event log (JSON lines) when asked for and `result` its
    `SimulationResult`. When the suffix search found a cheaper run, `upper`, `log` and
    `result` are that run's, `method` and `seed` the run it started from (its `config` says
    so too; its later seeds are in `search["redrawn"]`).
    """

    upper: float
    method: str
    seed: int
    nodes: int
    overhead: float
    startup: float
    seconds: float
    runs: list[tuple[str, int, float]] = field(default_factory=list)
    log: str | None = None
    result: SimulationResult | None = field(default=None, repr=False)  # the cheapest run's
    #: with `search`: {"draws", "windows", "tried", "improved", "from", "redrawn"}: suffixes
    #: tried and kept, the run it started from (its cost) and the cheapest run's re-drawn
    #: suffixes as [window, time it re-decided from, seed]; None: no search
    search: dict[str, Any] | None = None
    #: the cheapest run's admission scale (`admission`: the default replayed on the trace
    #: admitted by the list schedule on that many times N nodes); None: the trace's releases
    admission: float | None = None
    #: with `vm_schedule`: the plan replayed ({"configs", "order", "vm_weight", "plan_cost",
    #: "vms", "seconds", "later", "earlier"}: how it was built, its own cost, its VM
    #: instances, the seconds of the plans and the replay, jobs that ended later / earlier than
    #: planned); None: not run
    vm_plan: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "upper": self.upper,
            "method": self.method,
            "seed": self.seed,
            "nodes": self.nodes,
            "overhead": self.overhead,
            "startup": self.startup,
            "seconds": self.seconds,
            "runs": [{"method": m, "seed": s, "total_cost": c} for m, s, c in self.runs],
            "search": self.search,
            "admission": self.admission,
            "vm_schedule": self.vm_plan,
        }

    def summary(self) -> str:
        tried = ", ".join(f"{m} seed {s}: {c:.4f}" for m, s, c in self.runs)
        found = ""
        if self.search is not None:
            sr = self.search
            found = (
                f"\nsearch        {sr['tried']} suffixes re-drawn from {sr['windows']} times, "
                f"{sr['improved']} kept (from {sr['from']['cost']:.4f} $)"
            )
        if self.vm_plan is not None:
            vp = self.vm_plan
            found += (
                f"\nvm-schedule   a never-moving schedule of {vp['vms']} VMs ({vp['configs']}, "
                f"{vp['order']} order, VM weight {vp['vm_weight']:g}): plan {vp['plan_cost']:.4f} $"
            )
        return (
            f"upper         {self.upper:.4f} $  (a schedule on {self.nodes} nodes costs this: "
            f"{self.method} seed {self.seed}"
            + ("" if self.admission is None else f" admitted at {self.admission:g} x N")
            + (" with re-drawn suffixes" if self.search and self.search["improved"] else "")
            + f", the cheapest of {len(self.runs)} runs; "
            f"restart {self.overhead:g} s, start-up {self.startup:g} s)\n"
            f"runs          {tried}" + found
        )


def upper(
    trace: Instance,
    nodes: int | None = None,
    overhead: float | None = None,
    startup: float | None = None,
    time_limit: float | None = None,
    portfolio: tuple[tuple[str, int], ...] | None = None,
    log: bool = False,
    progress: Callable[[str], None] | None = None,
    default_seeds: int | None = None,
    search: int | None = None,
    admission: bool = False,
    vm_schedule: bool = False,
) -> Upper:
    """The cheapest run of `portfolio` on `trace` (module docstring).

    Parameters
    ----------
    trace : Instance
        All jobs with their releases (the simulator replays it from its first release).
    nodes : int, optional
        N; default the trace's.
    overhead, startup : float, optional
        Restart overhead and VM start-up (s) of every run (default: the simulator's, 600 and 120).
    time_limit : float, optional
        Seconds for the runs (default `DEFAULT_TIME_LIMIT`): a run starts only while time is
        left; the first always runs, and a run started is never cut short.
    portfolio : tuple of (method, seed), optional
        The runs, in order (default `PORTFOLIO`).
    log : bool
        Keep the cheapest run's event log (`Upper.log`).
    progress : callable, optional
        Called with each run's description.
    default_seeds : int, optional
        Also the default method at seeds 1 .. K: the ones `portfolio` lacks are appended to it,
        after its runs (so the time limit cuts them first). Off by default; see
        `scripts/results/upper.md` for what more seeds buy.
    search : int, optional
        After the runs, while time is left: the suffix search from the cheapest run with this
        many draws per window (`suffix_search`, module docstring). Off by default.
    admission : bool
        Also, after the runs above, the default (seed 1) replayed on the trace admitted by a
        clairvoyant list schedule at each scale of `ADMISSION_SCALES` (`gpuaas.admission`;
        module docstring), a scale whose admission is the trace's own releases or an earlier
        scale's skipped. Its runs are listed as ("admission x<scale>", 1, cost). Off by default.
    vm_schedule : bool
        Also, after those, while time is left: the cheapest never-moving schedule on VMs of
        `gpuaas.vm_schedule` replayed through the simulator, listed as ("vm-schedule", 1,
        cost); the search does not start from it. Off by default.

    Returns
    -------
    Upper
    """
    from gpuaas.methods import METHODS
    from gpuaas.simulator import Simulator

    t0 = _time.perf_counter()
    if not isinstance(trace, Instance):
        raise InputError(None, "trace", "must be an Instance (see gpuaas.load_instance)")
    checks.optional_number(time_limit, "time_limit", positive=True)
    portfolio = PORTFOLIO if portfolio is None else portfolio
    if search is not None:
        search = checks.integer(search, "search", minimum=1, maximum=1000)
    if default_seeds is not None:
        k = checks.integer(default_seeds, "default_seeds", minimum=1, maximum=1000)
        portfolio = tuple(portfolio) + extra_seeds(tuple(portfolio), k)
    if not portfolio:
        raise InputError(None, "portfolio", "must name at least one (method, seed) run")
    for method, _ in portfolio:
        if method not in METHODS:
            raise InputError(None, "portfolio", f"unknown method {method!r}")
    settings: dict[str, Any] = {"noise": 0.0}
    for name, value in (("nodes", nodes), ("overhead", overhead), ("startup", startup)):
        if value is not None:
            settings[name] = value
    say = progress or (lambda step: None)
    deadline = t0 + (DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit))
    best: Upper | None = None
    best_trace = trace
    runs: list[tuple[str, int, float]] = []
    # the runs: (label, method, seed, trace simulated, admission scale)
    plan: list[tuple[str, str, int, Instance, float | None]] = [
        (method, method, seed, trace, None) for method, seed in portfolio
    ]
    for method, seed, on, scale in _admission_runs(trace, settings.get("nodes"), admission):
        plan.append((f"admission x{scale:g}", method, seed, on, scale))
    for label, method, seed, on, scale in plan:
        if best is not None and _time.perf_counter() >= deadline:
            break
        say(f"upper: simulating {label} seed {seed}")
        sim = Simulator(on, method, seed=seed, **settings)
        lines = io.StringIO() if log else None
        sim.log_lines = lines
        result = sim.run()
        sim.log_lines = None
        if on is not trace:
            _true_releases(result, trace)
        runs.append((label, seed, result.total_cost))
        if best is None or result.total_cost < best.upper:
            best = Upper(
                upper=result.total_cost,
                method=method,
                seed=seed,
                nodes=result.nodes,
                overhead=sim.config.overhead,
                startup=sim.config.startup,
                seconds=0.0,
                log=None if lines is None else lines.getvalue(),
                result=result,
                admission=scale,
            )
            best_trace = on
    assert best is not None  # the first run always runs
    best.runs = runs
    # the search re-draws a method's decisions: it starts from the cheapest run of a method
    start = best
    plan_info = None
    if vm_schedule and _time.perf_counter() < deadline:
        say("upper: a schedule on VMs that never moves a job (vm-schedule)")
        cost, ran, lines, plan_info = _vm_schedule_run(trace, settings, log)
        runs.append(("vm-schedule", 1, cost))
        if cost < best.upper:
            best = Upper(
                upper=cost,
                method="vm-schedule",
                seed=1,
                nodes=ran.nodes,
                overhead=ran.config.overhead,
                startup=ran.config.startup,
                seconds=0.0,
                runs=runs,
                log=lines,
                result=ran,
            )
        best.vm_plan = plan_info
    if search is not None and _time.perf_counter() < deadline:
        say(f"upper: suffix search from {start.method} seed {start.seed}")
        found = suffix_search(
            best_trace, start.method, start.seed, settings, search, deadline, log, start.upper
        )
        best.search = found.info
        if found.result is not None and best_trace is not trace:
            _true_releases(found.result, trace)
        if found.cost < best.upper:
            best = start
            best.upper = found.cost
            best.result = found.result
            best.log = found.log
            best.vm_plan = plan_info
    best.seconds = _time.perf_counter() - t0
    return best


@dataclass
class _Found:
    """What `suffix_search` found: the cheapest run's cost, result and log, and its record."""

    cost: float
    result: SimulationResult | None
    log: str | None
    info: dict[str, Any]


def suffix_search(
    trace: Instance,
    method: str,
    seed: int,
    settings: dict[str, Any],
    draws: int,
    deadline: float,
    log: bool = False,
    known: float | None = None,
) -> _Found:
    """A large-neighbourhood search over the decisions of the run (`method`, `seed`): the
    neighbourhood of window w is every decision from the first rescheduling point at or after
    t_w on, t_w the w/W quantile of the releases (W = `SEARCH_WINDOWS`); its moves re-draw them.

    The run is replayed, its simulation forked at each t_w (the Rescheduler through its saved
    state, `Rescheduler.state` / `restore`, which continues exactly; the producers copied).
    For w = 1 .. W-1 in order, `draws` times: the fork at t_w continues with the method's seed
    changed (every later rescheduling point solves with a seed derived from the new one, as
    `RunConfig.seed` says), to the end; a cheaper complete run replaces the incumbent, its
    forks after t_w too. Every candidate is a whole simulated run of the trace (the prefix the
    incumbent's, the rest decided online as usual), billed by the simulation at the trace's own
    due dates and weights, its event log the prefix's and its own. Hindsight enters only in
    which runs are kept. Stops when `deadline` (perf_counter) passes, after the run under way.
    `known`: the run's cost, if known (reported in `info["from"]`).
    """
    from gpuaas.simulator import Simulator

    config = dict(settings)
    rel = np.sort(trace.release)
    times = [float(rel[min(len(rel) - 1, (len(rel) * w) // SEARCH_WINDOWS)])
             for w in range(1, SEARCH_WINDOWS)]  # fmt: skip
    info: dict[str, Any] = {
        "draws": draws,
        "windows": len(times),
        "tried": 0,
        "improved": 0,
        "from": {"method": method, "seed": seed, "cost": known},
        "redrawn": [],
    }

    def finish(sim: Simulator, first: int) -> tuple[float, dict[int, Simulator]]:
        """Run `sim` to its end, forking it at every t_w from window `first` on."""
        forks: dict[int, Simulator] = {}
        w = first
        while True:
            while w < len(times) and sim.clock is not None and sim.clock >= times[w]:
                forks[w] = _fork(sim)
                w += 1
            if sim.step() is None:
                break
        return sim.result().total_cost, forks

    base = Simulator(trace, method, seed=seed, **config)
    base.log_lines = io.StringIO() if log else None
    cost, forks = finish(base, 0)
    info["from"]["cost"] = cost
    best = _Found(cost, base.result(), _log_text(base), info)
    for w in range(len(times)):
        if w not in forks:
            continue  # the run ended before t_w: nothing left to re-decide
        for k in range(draws):
            if _time.perf_counter() >= deadline:
                return best
            sim = _fork(forks[w], seed=SEARCH_SEED + 1000 * w + k)
            cost, later = finish(sim, w + 1)
            info["tried"] += 1
            if cost < best.cost:
                info["improved"] += 1
                # the incumbent's suffixes: those of earlier windows, then this one
                kept = [r for r in info["redrawn"] if r[0] < w]
                info["redrawn"] = [*kept, [w, times[w], SEARCH_SEED + 1000 * w + k]]
                forks = {**{v: f for v, f in forks.items() if v <= w}, **later}
                best = _Found(cost, sim.result(), _log_text(sim), info)
    return best


def _fork(sim: Any, seed: int | None = None) -> Any:
    """An independent copy of the simulation `sim` at its current point (`seed`: its
    Rescheduler's method seed from here on). The Rescheduler is copied through its saved state
    (`Rescheduler.restore` continues exactly), the rest of the simulation by deepcopy (the
    traces, immutable, shared); the event log so far is carried into a new buffer."""
    from gpuaas.rescheduler import Rescheduler

    state = json.loads(json.dumps(sim.rescheduler.state()))
    if seed is not None:
        state["config"]["run"]["seed"] = int(seed)
    keep, lines = sim.rescheduler, sim.log_lines
    memo = {id(x): x for x in (sim.trace, sim.actual, sim.predicted_trace)}
    sim.rescheduler, sim.log_lines = None, None
    try:
        new = copy.deepcopy(sim, memo)
    finally:
        sim.rescheduler, sim.log_lines = keep, lines
    new.rescheduler = Rescheduler.restore(state)
    if lines is not None:
        new.log_lines = io.StringIO()
        new.log_lines.write(lines.getvalue())
    return new


def _log_text(sim: Any) -> str | None:
    return None if sim.log_lines is None else sim.log_lines.getvalue()


def _admission_runs(
    trace: Instance, nodes: int | None, on: bool
) -> list[tuple[str, int, Instance, float]]:
    """The admission runs (`upper(..., admission=True)`): per scale of `ADMISSION_SCALES`,
    (the default method, seed 1, the trace admitted by the list schedule on scale x N nodes,
    the scale), the scales whose admission times are the releases or an earlier scale's left
    out (the same run)."""
    from gpuaas.admission import admission_times, admitted
    from gpuaas.methods import DEFAULT_METHOD

    if not on:
        return []
    out: list[tuple[str, int, Instance, float]] = []
    seen = [np.asarray(trace.release, dtype=float)]
    for scale in ADMISSION_SCALES:
        start = admission_times(trace, scale=scale, nodes=nodes)
        if any(np.array_equal(start, s) for s in seen):
            continue
        seen.append(start)
        out.append((DEFAULT_METHOD, 1, admitted(trace, start), scale))
    return out


def _vm_schedule_run(
    trace: Instance, settings: dict[str, Any], log: bool
) -> tuple[float, SimulationResult, str | None, dict[str, Any]]:
    """The `vm_schedule` member: the plans of `gpuaas.vm_schedule.VARIANTS`, the cheapest by
    its own cost replayed (its cost, result at the trace's releases, event log, record)."""
    from gpuaas import vm_schedule as vs
    from gpuaas.reconfiguration import DEFAULT_STARTUP

    t0 = _time.perf_counter()
    startup = float(settings.get("startup", DEFAULT_STARTUP))
    plan, built = vs.best_plan(trace, settings.get("nodes"), startup)
    lines = io.StringIO() if log else None
    run_settings = {k: v for k, v in settings.items() if k != "noise"}
    result, _ = vs.replay(trace, plan, log=lines, **run_settings)
    _true_releases(result, trace)
    info = {
        "configs": plan.configs,
        "order": plan.order,
        "vm_weight": plan.vm_weight,
        "margin": plan.margin,
        "rounds": plan.rounds,
        "plans": built,
        "plan_cost": plan.cost,
        "vms": plan.instances,
        **vs.deviations(plan, trace, result),
        "seconds": _time.perf_counter() - t0,
    }
    return result.total_cost, result, None if lines is None else lines.getvalue(), info


def _true_releases(result: SimulationResult, trace: Instance) -> None:
    """A run of an admitted copy of `trace` reported at the trace's own releases: each job
    record's `release` the original one, its `jct` and `waiting` from it (the time it was held
    back counts as waiting); costs, which the release does not enter, unchanged."""
    release = dict(zip(trace.job_ids, trace.release.tolist(), strict=True))
    for d in result.jobs:
        held = d["release"] - release[d["id"]]
        d["release"] = release[d["id"]]
        d["jct"] += held
        d["waiting"] += held


def extra_seeds(portfolio: tuple[tuple[str, int], ...], k: int) -> tuple[tuple[str, int], ...]:
    """The runs of the default method at seeds 1 .. `k` that `portfolio` lacks, in seed order."""
    from gpuaas.methods import DEFAULT_METHOD

    have = set(portfolio)
    return tuple((DEFAULT_METHOD, s) for s in range(1, k + 1) if (DEFAULT_METHOD, s) not in have)


def write_log(result: Upper, path: str | Path) -> None:
    """Write the cheapest run's event log (`upper(..., log=True)`) to `path`."""
    if result.log is None:
        raise InputError(None, "log", "the upper value was computed without its event log")
    with open_output(Path(path)) as fh:
        fh.write(result.log)
