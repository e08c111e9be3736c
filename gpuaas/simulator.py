"""Simulator: replay a trace through the `Rescheduler` and account for every second and dollar.

The simulator is a loop around the same `Rescheduler` orchestration code uses (docs/design.md §6):

- **Events**, each from its producer (`gpuaas/producers.py`): a submission at each job's
  release; a completion when a running job's *actual* remaining time reaches 0; a tick `tick`
  seconds (default: the method's own interval, else the trace's H) after the last event when
  nothing else happens and jobs are unfinished.
  Events closer than `TIME_TOL` (1e-6 s) are one rescheduling point, resolved deterministically:
  completions first, then submissions in (release, trace order); a job whose remaining time is
  below `TIME_TOL` at an event completes there (no floating-point leftovers).
- **Decision interval** (`RunConfig.decision_interval`, None: none): an orchestrator that
  polls. Each event is told at the next multiple of the interval from time 0, with whatever
  else happened by then (`decision_time`), so the method decides at most once an interval: a
  job released between two decisions waits for the next, and one that ended is completed
  there (its tardiness counted to it, its GPUs idle until it). Not with spot capacity.
- **Noise.** With `noise = a > 0`, actual durations are the predicted ones times a factor per
  job, or per job and configuration, drawn by the error model `noise_model` (`gpuaas.noise`:
  uniform 1 + U(-2a, 2a) per job, or log-normal; mean absolute relative error a, one seeded
  stream). The rescheduler decides on predictions; time runs on actuals, and at each event
  the measured progress is reported to it. The *predicted* cost is that of the predicted run,
  the same simulation with exact predictions (noise 0), simulated by `simulate` unless told
  not to (`predicted_run=False`, or its costs given as a cache): the result reports both
  (`predicted`, and `predicted_run`: whether it was simulated or given), their relative deviation and the
  error drawn (`prediction_error`); the `predicted_*` and `cost_deviation` columns of the
  results rows come from it. With `oracle` the trace is replayed with its actual
  durations as the predictions: the same method told the actual times. The bound is the one
  of the actual durations.
- **Guards.** A run that cannot end stops with a one-line `SolverError` (exit code 3):
  after ``MAX_IDLE_EVENTS`` events in a row in which no job got closer to its end than ever
  before (every job left waiting, or restarts losing all the work done) and nothing happened
  (no submission or completion; not with spot capacity, where jobs may wait for spot on
  purpose), after
  ``EVENTS_PER_JOB`` x J events, or when the clock passes ``HORIZON`` = 2^33 s (where doubles
  no longer resolve 10^-6 s; `gpuaas.limits`). A tick so short that the trace needs more than
  ``EVENTS_PER_JOB`` x J events is refused before the run (`InputError`, exit code 2), and so
  is a spot availability that changes more often than that while the jobs must still run
  (`SpotMarket.least_steps`; the error names the availability). A run stopped by the event
  limit says how many of its events were changes of the availability.
- **Spot capacity** (`spot=True`): the trace runs on its catalog's spot variants too
  (`gpuaas.catalog.Catalog.with_spot`), and the availability (`availability=`: an
  `Availability`, else `RunConfig.availability` loaded with the run's seed, default the model)
  is replayed by the `SpotMarket` producer: capacity changes and interruptions reach the
  Rescheduler as events, and the jobs on an interrupted VM lose their work since their last
  checkpoint (`Execution`).
- **Co-location slowdown** (the trace's `colocation` table, `gpuaas.colocation`): each
  running job progresses at the table's speed beside the jobs sharing its VM (`Execution`),
  and its progress is reported at every event; the Rescheduler gets the table, and what the
  decisions know of it is `RunConfig.colocation` (the table, learned online, or nothing).
- **Event log** (`log=`): one JSON line per interval between two consecutive events,
  ``{"start", "end", "nodes": [{"node", "vm", "ready"}], "jobs": [{"id", "node", "vm", "gpus"}]}``
  (`ready`: when the node's VM finished starting up; a job on it works only after that, and a
  job whose data moves between locations only from its own `ready`) and,
  when VMs are interrupted at its end, ``"interrupted": [node, ...]``; from it alone the VM
  cost, capacity, each job's work and the work each interruption lost can be recomputed.
  The file appears only when the simulation finishes (written through a temporary file).
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time as _time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from gpuaas.errors import InputError, SolverError
from gpuaas.files import open_output, to_json
from gpuaas.instance import Instance
from gpuaas.limits import EVENTS_PER_JOB, HORIZON
from gpuaas.methods import default_tick
from gpuaas.noise import actual_trace, draw_factors, error_summary
from gpuaas.producers import Execution, Releases, SpotMarket, Ticks
from gpuaas.rescheduler import (
    CapacityChange,
    Completion,
    Event,
    Interruption,
    Plan,
    Rescheduler,
    Submission,
    Tick,
)
from gpuaas.run_config import RunConfig
from gpuaas.simulation_result import SimulationResult

if TYPE_CHECKING:
    from gpuaas.availability import Availability
    from gpuaas.bounds import Bound


#: consecutive events in which no job progressed (none submitted, none completed, no job
#: closer to its end than ever before) after which a run is stopped: it cannot end
MAX_IDLE_EVENTS = 100


class Simulator:
    """One simulation, stepped rescheduling point by rescheduling point (`step`) or to the end (`run`).

    SimPy's shape: every source of events is a producer (`Releases`, `Execution`, `Ticks`)
    that says when its next event is and, at that instant, which events it has. `step` takes
    the earliest time any producer names, lets every producer add its events at that instant
    (one batch, one rescheduling point), hands the batch to the Rescheduler and shows each
    producer the Plan. A new source of events (interruptions replayed from a trace, capacity
    that comes and goes) is one more producer in `producers`, not a branch in `step`.

    It drives its `rescheduler` through the Rescheduler's public API only (events, `Plan`s,
    `completions()` and the cost attributes; `unfinished()` and `open_nodes()` for the event
    log), as orchestration code would: where jobs run it learns from the plans, as a cloud
    does (`Execution`). The attribute may be replaced between steps (e.g. by
    `Rescheduler.restore(state)`), which is how a restart mid-simulation is tested.

    Parameters: the trace, and a `RunConfig` (`config`) or the keywords that build one
    (`method`, `seed`, `nodes`, `noise`, `noise_model`, `oracle`, `overhead`, `startup`,
    `tick`, `spot`, `availability`, `checkpoint`, `notice`, `deadline_safe`, solver options);
    `availability`, an `Availability` object instead of a source, is replayed as it is (spot on). `actual` is
    the trace with its actual durations; with `oracle` it is the trace replayed (`trace`).
    """

    def __init__(
        self,
        trace: Instance,
        method: str | None = None,
        *,
        config: RunConfig | None = None,
        **settings: Any,
    ) -> None:
        if not isinstance(trace, Instance):
            raise InputError(None, "trace", "must be an Instance (see gpuaas.load_instance)")
        market = settings.pop("availability", None)
        if isinstance(market, str):
            settings["availability"] = market
            market = None
        elif market is not None:
            settings["spot"] = True
        config = RunConfig.build(config, method, **settings)
        own = config.tick is not None or default_tick(config.method) is not None
        source = "tick" if own else "tick (the trace's params.H)"
        tick = config.interval(trace.H)
        factors = draw_factors(trace, config.seed, config.noise, config.noise_model)
        self.prediction_error = None
        if config.noise > 0:
            e = error_summary(trace, factors, config.noise, config.noise_model)
            self.prediction_error = {**e, "oracle": config.oracle}
        if config.locations is not None:  # the VM types there only (`Instance.at_locations`)
            trace, keep = trace.at_locations(config.locations.split(","))
            factors = factors[:, keep]
        self.actual = actual_trace(trace, factors) if config.noise > 0 else trace
        predicted = trace  # what the availability is drawn for, told or not
        self.predicted_trace = predicted  # what the predicted run replays (`predicted_costs`)
        told = config.oracle and config.noise > 0
        if told:  # the method sees the actual durations, which nothing then departs from
            trace, factors = self.actual, np.ones_like(factors)
        # a run may take EVENTS_PER_JOB events a job and one a tick while some job is within its
        # window (a job may wait at every tick to its due date: one job riding a zone's spot to
        # a 60-h deadline); a tick is refused up front when the jobs' work alone needs more
        # than EVENTS_PER_JOB a job
        per_job = EVENTS_PER_JOB * max(trace.n_jobs, 1)
        windows = _union(trace.release, np.maximum(trace.due, trace.release))
        self.max_events = per_job + int(windows / tick)
        need = min_events(self.actual, tick)
        if need > per_job:
            raise InputError(
                None,
                source,
                f"{tick:g} s needs at least {need:.3g} rescheduling events "
                f"for this trace, more than {EVENTS_PER_JOB} per job (gpuaas.limits); "
                f"use at least {tick * need / per_job:.3g} s",
            )
        if config.nodes is None:
            config = dataclasses.replace(config, nodes=trace.nodes)
        self.config = config
        self.availability = None
        if config.spot:
            market = market if market is not None else spot_availability(predicted, config)
            self.availability = market
            trace = trace.with_spot()
        self.trace = trace
        self.noise = config.noise
        self.tick = tick
        self.rescheduler = Rescheduler(
            trace.catalog,
            config=config,
            H=trace.H,
            mu=trace.mu,
            rho=trace.rho,
            colocation=trace.colocation,
        )
        self.index = {jid: j for j, jid in enumerate(trace.job_ids)}
        self.releases = Releases(trace)
        factors = trace.catalog.spot_work(factors)  # a spot variant's are its type's
        # progress is reported where it departs from the predictions: noise, or slowdown
        report = (config.noise > 0 and not told) or trace.colocation is not None
        self.execution = Execution(trace, factors, report, config)
        self.producers: list[Any] = [self.releases, self.execution, Ticks(tick)]
        self.market = (
            None if self.availability is None else SpotMarket(self.availability, trace.catalog)
        )
        if self.market is not None:
            self.producers.append(self.market)
            least = self.market.least_steps(self.actual)
            if least > self.max_events:
                raise InputError(
                    self.availability.source,
                    None,
                    f"the spot availability changes at {least} distinct times while the "
                    f"trace's jobs are certainly running, more than the {self.max_events} "
                    f"rescheduling events a simulation of {trace.n_jobs} job(s) may take "
                    f"({EVENTS_PER_JOB} per job and one a tick within the jobs' windows, "
                    "gpuaas.limits); replay a coarser availability",
                )
        self.clock: float | None = None
        self.point: float | None = None
        self.solver_seconds: list[float] = []
        self.solver_cpu_seconds = 0.0
        self.idle = 0
        self.best_done = -1.0  # most work done so far: completed jobs + progress of the others
        self.log_lines: IO[str] | None = None

    @property
    def busy(self) -> bool:
        """A submitted job is unfinished."""
        return bool(self.execution.unfinished.any())

    @property
    def finished(self) -> bool:
        return self.releases.exhausted and not self.busy

    def step(self) -> Plan | None:
        """Advance to the next event and reschedule there; None when the simulation is over."""
        while True:
            times = [p.next_time(self) for p in self.producers]
            t = min(times)
            if t == math.inf:
                return None  # no job left, none to come
            if self.clock is not None:
                t = max(t, self.clock)
            if self.config.decision_interval is not None:  # told at the next decision
                t = decision_time(t, self.config.decision_interval)
            market = self.market
            others = [p for p in self.producers if p is not market]
            alone = all(x > t for p, x in zip(self.producers, times) if p is not market)
            if market is None or self.clock is None or not alone:
                events = [e for p in self.producers for e in p.events(self, t)]
                break
            events = market.events(self, t)  # the spot market alone
            if not events:
                continue  # a change to the count already told: nothing happened
            if all(isinstance(e, CapacityChange) for e in events):
                return self._capacity_step(t, events)
            events += [e for p in others for e in p.events(self, t)]
            break
        if self.clock is not None:
            lost = sorted({e.node for e in events if isinstance(e, Interruption)})
            self._log_interval(self.clock, t, lost)
        plan = self.rescheduler.handle(events or [Tick(t)])
        self.clock = self.point = t  # the next tick counts from this point
        return self._planned(t, events, plan)

    def _capacity_step(self, t: float, events: list[Event]) -> Plan:
        """A change of spot capacity alone. The Rescheduler makes it a rescheduling point only
        if spot is used (`Plan.replanned`; `apply.reschedule`, quiet); otherwise the jobs'
        actual progress, the clock and the next tick stay as a run without spot has them (the
        progress measured is told at the next point), so that spot that never pays leaves
        that run's bill to the last float."""
        rec = self._interval(self.clock, t, [])  # what ran until t, written if t is a point
        plan = self.rescheduler.handle(events)
        if plan.replanned:
            self.execution.events(self, t)  # progress up to t, what the plan's moves lose
            self._write_interval(rec)
            self.clock = self.point = t
        return self._planned(t, events, plan)

    def _planned(self, t: float, events: list[Event], plan: Plan) -> Plan:
        """Tell the producers the plan and guard the run."""
        if plan.jobs:
            self.solver_seconds.append(plan.solver_seconds)
            self.solver_cpu_seconds += plan.solver_cpu_seconds
        for p in self.producers:
            p.planned(self, plan)
        # a new job, a completion or a change of spot capacity is news, not idling
        news = (Submission, Completion, CapacityChange, Interruption)
        self._guard(t, any(isinstance(e, news) for e in events), plan)
        return plan

    def _guard(self, t: float, changed: bool, plan: Plan) -> None:
        """Stop a run that cannot end (module docstring, "Guards"); `plan.jobs` is the state
        after the event: every unfinished job and its node (None: waiting)."""
        r = self.rescheduler
        if not plan.jobs and self.releases.exhausted:
            return  # finished
        x = self.execution
        index = x.unfinished_jobs()  # plan.jobs' order
        # the progress summed one term after the other from 0, as `sum` over a list did
        # (`np.add.accumulate` adds in order; no pairwise rounding)
        left = x.actual_progress[index]
        done = len(r.completions()) + (float(np.add.accumulate(left)[-1]) if len(left) else 0)
        # with spot capacity, jobs may wait for it on purpose (until their due date draws near):
        # only the bound on events per job stops such a run
        if changed or self.market is not None or done > self.best_done + 1e-12:
            self.idle = 0
            self.best_done = max(self.best_done, done)
        else:
            self.idle += 1
        stop = None
        if self.idle > MAX_IDLE_EVENTS:
            if all(j.node is None for j in plan.jobs):
                stop = f"method {r.method!r} left every job waiting for {MAX_IDLE_EVENTS} events in a row"
            else:
                stop = (
                    f"no job got closer to its end in {MAX_IDLE_EVENTS} events in a row "
                    f"({r.migrations} migrations, {r.preemptions} preemptions, each losing "
                    f"{r.overhead:g} s of work)"
                )
        elif r.events > self.max_events:
            stop = (
                f"more than {EVENTS_PER_JOB} rescheduling events per job and one a tick within "
                "the jobs' windows (gpuaas.limits)"
            )
            if self.market is not None:
                stop += (
                    f", {self.market.steps} of them at changes of the spot availability "
                    f"{self.availability.source}"
                )
        elif t > HORIZON:
            stop = f"the clock passed {HORIZON:.3g} s, where doubles no longer resolve 1e-6 s (gpuaas.limits)"
        if stop is not None:
            raise SolverError(
                f"simulation stopped at t={t:g} s after {r.events} events: {stop}; it cannot end"
            )

    def _log_interval(self, start: float, end: float, interrupted: list[int]) -> None:
        if self.log_lines is not None:
            self._write_interval(self._interval(start, end, interrupted))

    def _write_interval(self, rec: dict[str, Any] | None) -> None:
        if self.log_lines is not None and rec is not None:
            self.log_lines.write(to_json(rec, indent=None) + "\n")

    def _interval(self, start: float, end: float, interrupted: list[int]) -> dict[str, Any] | None:
        """The event log's record of [start, end): what ran there (None: no log)."""
        if self.log_lines is None:
            return None
        jobs = self.rescheduler.unfinished()
        nodes = self.rescheduler.open_nodes()
        up = {n.node: n.ready for n in nodes}
        rec: dict[str, Any] = {
            "start": start,
            "end": end,
            "nodes": [n._asdict() for n in nodes],
            "jobs": [
                {"id": j.id, "node": j.node, "vm": j.vm, "gpus": j.gpus}
                # its data still on its way from another location (`gpuaas.transfer`)
                | ({"ready": j.ready} if j.ready > up[j.node] else {})
                for j in jobs
                if j.cfg >= 0
            ],
        }
        if interrupted:
            rec["interrupted"] = interrupted
        return rec

    def run(self, progress: bool = False) -> SimulationResult:
        """Step to the end and return the result (`progress`: a progress line on stderr)."""
        t0, c0 = _time.perf_counter(), _time.process_time()
        bar = _ProgressBar(self.trace.n_jobs) if progress else None
        while self.step() is not None:
            if bar is not None:
                bar.update(
                    len(self.rescheduler.completions()), self.rescheduler.events, self.clock or 0.0
                )
        if bar is not None:
            bar.update(
                len(self.rescheduler.completions()),
                self.rescheduler.events,
                self.clock or 0.0,
                force=True,
            )
            bar.close()
        result = self.result(_time.perf_counter() - t0)
        result.cpu_seconds = _time.process_time() - c0
        return result

    def result(self, wall_seconds: float = 0.0) -> SimulationResult:
        """The result so far (complete once `finished`)."""
        r = self.rescheduler
        done = r.completions()
        jobs = [dict(done[jid]) for jid in self.trace.job_ids if jid in done]
        ex = self.execution
        if ex.report:
            per_job = self.config.noise_model != "lognormal-config"
            for d in jobs:
                j = self.index[d["id"]]
                if per_job:
                    d["actual_factor"] = float(ex.factor[j, 0])
                d["lost_work"] = float(ex.actual_lost[j])
                d["interrupted_work"] = float(ex.actual_interrupted[j])
        for d in jobs:
            d["interruption_delay"] = float(ex.interruption_delay[self.index[d["id"]]])
        return SimulationResult(
            config=self.config,
            total_cost=r.vm_cost + r.tardiness_cost + r.egress_cost,
            vm_cost=r.vm_cost,
            tardiness_cost=r.tardiness_cost,
            jobs=jobs,
            events=r.events,
            migrations=r.migrations,
            preemptions=r.preemptions,
            solver_seconds=list(self.solver_seconds),
            wall_seconds=wall_seconds,
            solver_cpu_seconds=self.solver_cpu_seconds,
            lost_work_cost=r.lost_work_cost,
            startup_cost=r.startup_cost,
            egress_cost=r.egress_cost,
            transfers=r.transfers,
            interruptions=r.interruptions,
            interruption_cost=r.interruption_cost,
            spot_cost=r.spot_cost,
            spot=None if self.availability is None else self.availability.source,
            interrupted_hours=float(self.execution.interrupted_seconds.sum()) / 3600.0,
            tick=self.tick,
            prediction_error=self.prediction_error,
        )


def spot_availability(trace: Instance, config: RunConfig) -> Availability:
    """The availability `config` names (default: the model), for `trace`'s on-demand VM types,
    seeded by the run's seed; a model covers the whole run (`horizon`)."""
    from gpuaas.availability import load_availability

    cat = trace.catalog.without_spot()  # the types an availability names are the on-demand ones
    horizon = horizon_of(trace)
    return load_availability(
        config.availability or "model",
        cat,
        seed=config.seed,
        horizon=horizon,
        slots=config.nodes or trace.nodes,
    )


def horizon_of(trace: Instance) -> float:
    """How long a simulation of `trace` may take, generously: its last release, plus every job
    run one after the other on its fastest configuration, plus a week (capped at HORIZON)."""
    if not trace.n_jobs:
        return 7 * 86400.0
    work = float(np.sum(trace.min_time[np.isfinite(trace.min_time)]))
    return min(HORIZON, float(trace.release.max()) + work + 7 * 86400.0)


def min_events(trace: Instance, tick: float) -> float:
    """A lower bound on the rescheduling events a simulation of `trace` (its actual
    durations) takes with `tick`.

    While any job is unfinished, events are at most `tick` apart. Job j is unfinished at least
    from its release for its shortest remaining time, so the measure of the union of those
    intervals, divided by the tick, bounds the number of events.
    """
    return _union(trace.release, trace.release + trace.min_time) / tick


def _union(starts: np.ndarray, ends: np.ndarray) -> float:
    """The measure of the union of the intervals [starts_i, ends_i] (0 for none)."""
    order = np.argsort(starts, kind="stable")
    busy, end = 0.0, -math.inf
    for a, b in zip(starts[order].tolist(), ends[order].tolist()):
        start = max(a, end)
        end = max(end, b)
        busy += max(0.0, end - start)
    return busy


class _ProgressBar:
    """A progress line on stderr: on a terminal redrawn at most every 0.2 s; elsewhere (a log)
    a new line every 10 s, so a run of minutes is never silent and a short one prints nothing."""

    LOG_INTERVAL = 10.0  # seconds between lines off a terminal

    def __init__(self, total: int) -> None:
        self.total = max(total, 1)
        self.tty = sys.stderr.isatty()
        self.interval = 0.2 if self.tty else self.LOG_INTERVAL
        self.last = 0.0 if self.tty else _time.monotonic()
        self.shown = False

    def update(self, done: int, events: int, clock: float, force: bool = False) -> None:
        now = _time.monotonic()
        if now - self.last < self.interval and not (force and self.shown):
            return
        self.last, self.shown = now, True
        width = 30
        fill = int(width * done / self.total)
        line = (
            f"simulate [{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} jobs, "
            f"{events} events, t = {clock / 3600:.1f} h"
        )
        sys.stderr.write(f"\r{line} " if self.tty else f"{line}\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def decision_time(t: float, every: float) -> float:
    """The least multiple of `every` (> 0) that is at least `t`: when an orchestrator deciding
    every `every` seconds from time 0 learns of what happened at `t`."""
    k = math.ceil(t / every)
    while k > 0 and (k - 1) * every >= t:  # t / every rounded up past a multiple
        k -= 1
    while k * every < t:
        k += 1
    return k * every


def simulate(
    trace: Instance,
    method: str | None = None,
    *,
    config: RunConfig | None = None,
    log: str | Path | None = None,
    progress: bool = False,
    bound: bool | Bound = True,
    predicted_run: bool = True,
    predicted: dict[str, float] | None = None,
    **settings: Any,
) -> SimulationResult:
    """Replay `trace` through a `Rescheduler` using `method` and return the costs and metrics.

    With noise (and not `oracle`), a second full simulation by default: the predicted run
    (`predicted_run`), whose costs are the result's `predicted` costs.

    Parameters
    ----------
    trace : Instance
        All jobs with their release times (e.g. from `gpuaas.load_instance`).
    method : str
        A registered method, called at every rescheduling point (default: the config's).
    config : RunConfig, optional
        The run's configuration (`gpuaas.run_config`); `settings` replace its values.
    log : str or Path, optional
        Write the event log (JSON lines) to this file.
    progress : bool
        Show a progress line on stderr.
    bound : bool or Bound
        Attach the lower bound of any schedule of the trace (its actual durations) on the run's
        node count (`gpuaas.bound`, default options; with spot, the spot-aware bound of the
        availability replayed); False: none; a `Bound`: that one (a cached value).
    predicted_run : bool
        With noise (and not `oracle`): also simulate the predicted run, the same run with exact
        predictions (`predicted_costs`), so that the result reports the `predicted` costs
        and the `cost_deviation` (the results rows' `predicted_*` and `cost_deviation`
        columns); False: skip it (half the time), the result has no predicted costs.
    predicted : dict, optional
        The predicted run's costs when already known (`SimulationResult.predicted` of a run of
        the same trace and settings; a cache): used instead of simulating it.
    **settings
        Fields of `RunConfig`: ``seed`` (of the method, per event, and of the noise),
        ``nodes`` (override the trace's N), ``noise`` (mean absolute relative error of
        predicted durations; paper: 0.11) and ``noise_model`` (`gpuaas.noise`), ``oracle``
        (the method is told the actual durations), ``overhead`` and ``startup``
        (reconfiguration costs, `gpuaas.reconfiguration`; ``**gpuaas.PAPER_COSTS`` for the
        paper's 0, 0), ``tick`` (rescheduling interval when nothing happens; default the
        method's own, else the trace's H); any other keyword is a solver option passed to
        the method at every event (e.g. ``time_limit``).

    Returns
    -------
    SimulationResult
    """
    sim = Simulator(trace, method, config=config, **settings)
    if log is None:
        result = sim.run(progress)
    else:
        result = _run_logged(sim, Path(log), progress)
    if sim.config.noise > 0 and not sim.config.oracle:
        if predicted is not None:
            result.predicted, result.predicted_run = dict(predicted), "given"
        elif predicted_run:
            result.predicted, result.predicted_run = predicted_costs(sim), "simulated"
    if bound is True:
        result.bound = trace_bound(
            sim.actual,
            result.nodes,
            availability=sim.availability,
            overhead=sim.config.overhead,
            startup=sim.config.startup,
        )
    elif bound is not False:
        result.bound = bound
    return result


def predicted_costs(sim: Simulator) -> dict[str, float]:
    """The costs of the predicted run of `sim`'s simulation: the same trace, configuration and
    spot availability with exact predictions (noise 0), simulated in full."""
    exact = Simulator(
        sim.predicted_trace,
        config=dataclasses.replace(sim.config, noise=0.0),
        availability=sim.availability,
    ).run()
    return {
        "total_cost": exact.total_cost,
        "vm_cost": exact.vm_cost,
        "tardiness_cost": exact.tardiness_cost,
    }


def trace_bound(trace: Instance, nodes: int | None = None, **options: Any) -> Bound:
    """`gpuaas.bound` of `trace` as the simulator replays it: every job from its release on
    (the simulator ignores the trace's `time`)."""
    from gpuaas.bounds import bound

    if trace.time != 0.0:
        trace = dataclasses.replace(trace, time=0.0)
    return bound(trace, nodes=nodes, **options)


def _run_logged(sim: Simulator, path: Path, progress: bool) -> SimulationResult:
    """Run with the event log streamed through `gpuaas.files.open_output` (a regular file
    appears only when the run completes; a FIFO receives the lines as they come)."""
    with open_output(path) as fh:
        sim.log_lines = fh
        try:
            return sim.run(progress)
        finally:
            sim.log_lines = None
