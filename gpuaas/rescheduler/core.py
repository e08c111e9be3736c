"""Online rescheduling [§2.1, docs/design.md §6]: the state of a running system, driven by events.

Orchestration code tells a `Rescheduler` what happens (`gpuaas.rescheduler.events`: a job is
submitted or completes, the clock ticks, progress is measured, a VM is lost) and gets back a
`Plan`: the VMs to open, resize or close and the jobs to start, migrate or preempt. At every
rescheduling point (one event, or a batch of events at one instant) the rescheduler

1. advances the clock: every open VM is charged price x elapsed, every running job gains
   elapsed / work[j, c] of progress (work = the whole-job time on its configuration c);
2. applies the events: measured progress and times, completions (tardiness cost
   omega_j * max(0, completion - due_j)), lost VMs, capacity, submissions;
3. builds the `Instance` of all unfinished jobs (`instance`: remaining times from their
   progress, relative due dates, `current_node` / `current_cfg` = where each job runs now);
4. calls the method (`gpuaas.methods.solve`), checks its `Solution`, maps its abstract nodes
   onto the physical ones (`gpuaas.rescheduler.matching`) and applies the difference as a Plan.

**Reconfiguration costs** (`gpuaas.reconfiguration`, docs/reconfiguration.md): a job migrated,
preempted or whose VM is lost restarts from a checkpoint `overhead` seconds old; a VM opened or
resized at t is billed from t but runs jobs from t + `startup`. They are passed to the method in
the `Instance`, so methods that price moves keep a running job in place unless moving pays.

**Spot capacity** (`RunConfig.spot`, docs/spot.md): the catalog gets its spot variants, VM
types at the spot price that `Interruption` events take away. A job on an interrupted VM loses,
besides the restart overhead, the work since its last checkpoint (`checkpoint` seconds apart,
the job's own or the run's); interruptions are counted apart from the voluntary moves
(`interruptions`, `interrupted_work`, `interruption_cost`). Methods see each spot type's
interruption rate (`Instance.hazard`), estimated from the VM-hours held and the interruptions
seen, from the availability model's default rate as a prior (`spot_hazard`).

**Progress reports.** Progress is predicted from the configurations' times, times the job's
estimated actual / predicted ratio (the speed model, `gpuaas.rescheduler.speed`, learned from
the progress measured between consecutive reports and from throughput reports; a spot variant's
configuration counts as its on-demand type's, the same hardware); a measured
fraction (`ProgressReport`) replaces it. A job predicted finished but not reported complete is
held at `MAX_PROGRESS`. A report below the job's previous report (or its submitted progress) is refused
unless the job was restarted in between (a restart may lose more than predicted): each job keeps
its last measured progress (`reported`). A job that never ran here (`start` None, even with
progress at submission, which it made elsewhere) can be neither reported on nor completed.

**Idempotent events.** An event with an `id` that was already applied is answered with the plan
it got and changes nothing, as long as the plan is among the last `PLAN_MEMORY` rescheduling
points' (plans are saved with the state); an older one is refused. Every id applied is kept
with its event's digest (the state's append-only id log, `id_log`), so an id reused for another
event (another content: any field of the event) is refused however long ago it was applied.

**Disruption limits** (`RunConfig.max_moves`, `moves_per_hour`). A migration or preemption the
method chooses is a voluntary move (a lost VM, `Interruption`, is not). A running job moved
`max_moves` times is pinned in the Instance the method gets (`Instance.pinned`: every method
keeps it where it is), and so is every running job once the last hour's voluntary moves reach
`moves_per_hour`. When a plan would move more jobs than the hour has left, the jobs it moves of
least slack (due date - remaining time where they run) keep their moves, every other running
job is pinned and the method plans again. A plan that still moves a pinned job, or more than
the budget, is refused (SolverError): nothing is applied.

**Checks.** Everything is checked before anything changes; an event that raises (bad input,
or a method that fails) leaves the state as it was, so it can be fed again.

Times are seconds; events come in time order.
"""

from __future__ import annotations

import dataclasses
import logging
import time as _time
from collections import deque
from collections.abc import Iterable, Mapping
from operator import attrgetter
from types import MappingProxyType
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.catalog import Catalog, load_catalog
from gpuaas.errors import InputError, SolverError, brief
from gpuaas.instance import DEFAULT_PARAMS, Instance, JobSpec
from gpuaas.limits import MAX_SECONDS, MAX_WEIGHT
from gpuaas.methods import solve
from gpuaas.reconfiguration import (
    gpu_share_price,
    lost_work,
    lost_work_cost,
    moved,
    ready_time,
    since_checkpoint,
    startup_cost,
)
from gpuaas.rescheduler import intake, persistence, speed
from gpuaas.rescheduler.events import (
    Completion,
    Event,
    ProgressReport,
    Submission,
    Tick,
    batch,
)
from gpuaas.rescheduler.intake import PLAN_MEMORY
from gpuaas.rescheduler.matching import check_solution, match_nodes
from gpuaas.rescheduler.records import (
    INSTANCE_VIEW,
    JOB_FIELDS,
    CloseVM,
    InterruptedJob,
    Job,
    JobStatus,
    MigrateJob,
    Node,
    NodeStatus,
    OpenVM,
    Place,
    Plan,
    PlannedJob,
    PlannedNode,
    PreemptJob,
    ResizeVM,
    StartJob,
    completed_record,
)
from gpuaas.run_config import RunConfig
from gpuaas.solution import Solution

log = logging.getLogger(__name__)

#: progress a job is held at when predicted finished but not (yet) reported complete
MAX_PROGRESS = 1.0 - 1e-9
#: seconds over which `RunConfig.moves_per_hour` counts voluntary moves
HOUR = 3600.0
#: the running totals an event changes (`_savepoint`)
TOTALS = (
    "time",
    "events",
    "vm_cost",
    "tardiness_cost",
    "migrations",
    "preemptions",
    "interruptions",
    "lost_work_cost",
    "startup_cost",
    "interruption_cost",
    "spot_cost",
    "_spot_held",
    "_spot_lost",
    "_outage",
)
#: the prior of the interruption-rate estimate: this many VM-hours at the model's default rate
PRIOR_HOURS = 10.0


#: a job's fields, in `JOB_FIELDS` order, as one tuple (`_savepoint`)
_JOB_VALUES = attrgetter(*JOB_FIELDS)


class Rescheduler:
    """Online scheduler: feed it events, apply the Plans it returns.

    Parameters
    ----------
    catalog : Catalog, str or dict
        The VM catalog (a `Catalog`, a bundled catalog name, a YAML path or an inline mapping).
    nodes : int
        N, the number of node slots that may be open at once (or `config.nodes`).
    method : str
        A registered solution method (`gpuaas.methods.METHODS`), called at every event.
    config : RunConfig, optional
        The run's configuration (`gpuaas.run_config`); the keywords below replace its values.
    H, mu, rho : float
        Parameters of P1 (formulations/P1.md).
    **settings
        `seed`, `overhead`, `startup`, `tick` (fields of `RunConfig`) and solver options
        passed to the method at every event (e.g. ``time_limit``; JSON-able, for `state()`).

    Reading the state (between events; never change it but through events): the attributes
    `time` (of the last event, None before the first), `events`, `config` and its fields
    (`method`, `seed`, `overhead`, `startup`, `solver_options`), `catalog`, `nodes`, `H`, `mu`,
    `rho`, the running totals `vm_cost`, `tardiness_cost`, `lost_work_cost`, `startup_cost`,
    `migrations`, `preemptions`, `interruptions`; `unfinished()` (a `JobStatus` per unfinished
    job), `open_nodes()` (a `NodeStatus` per open node), `completions()` (a record per
    completed job) and `instance()`.
    """

    def __init__(
        self,
        catalog: Catalog | str | dict[str, Any],
        nodes: int | None = None,
        method: str | None = None,
        *,
        config: RunConfig | None = None,
        H: float = DEFAULT_PARAMS["H"],
        mu: float = DEFAULT_PARAMS["mu"],
        rho: float = DEFAULT_PARAMS["rho"],
        **settings: Any,
    ) -> None:
        if nodes is not None:
            settings["nodes"] = nodes
        self.config = RunConfig.build(config, method, **settings)
        if self.config.nodes is None:
            raise InputError(None, "nodes", "missing: the number of node slots N")
        self.catalog = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
        if self.config.spot:
            self.catalog = self.catalog.with_spot()
        self.H = checks.number(H, "H", minimum=0.0, maximum=MAX_SECONDS, positive=True)
        self.mu = checks.number(mu, "mu", minimum=0.0, maximum=MAX_WEIGHT)
        self.rho = checks.number(rho, "rho", minimum=0.0, maximum=MAX_WEIGHT)
        cat = self.catalog
        self._cfg_vm = [cat.vm_names[v] for v in cat.cfg_vm]  # plain lists: fast per-job lookups
        self._cfg_gpus = [int(g) for g in cat.cfg_gpus]
        self._price = [float(c) for c in cat.cost]
        # each configuration's hardware (a spot variant's: its on-demand type's), what the speed
        # model keys its evidence by: a job runs as fast on either
        self._hardware = cat.spot_configs() if cat.has_spot else None
        self.time: float | None = None  # clock: time of the last event
        self.events = 0
        self._nodes: dict[int, Node] = {}  # open nodes, in node order
        self._capacity: dict[int, int] = {}  # VM type -> VMs that can be held (absent: any)
        self._jobs: dict[str, Job] = {}  # unfinished, in submission order
        self._completed: dict[str, dict[str, Any]] = {}  # id -> completion record
        self._log: list[str] = []  # completed ids in completion order: the append-only log
        self._plans: deque[dict[str, Any]] = deque(maxlen=PLAN_MEMORY)  # {"ids", "plan"}
        self._ids: dict[str, str] = {}  # every event id applied -> its event's digest
        self._id_log: list[str] = []  # those ids in the order applied: the append-only id log
        self.vm_cost = 0.0
        self.tardiness_cost = 0.0
        self.migrations = 0
        self.preemptions = 0
        self.interruptions = 0
        self.lost_work_cost = 0.0  # $: work lost to restarts, at the old configuration's GPU share
        self.startup_cost = 0.0  # $: VMs billed while starting up
        # (time, count) of the voluntary moves at each of the last hour's events that had some
        self._recent_moves: tuple[tuple[float, int], ...] = ()
        # the completed jobs' speed evidence (`speed.pool`): how much of an error is the job's
        self._speed_pool: speed.Pool = speed.EMPTY_POOL
        # job id -> (observed, measured, share, estimated ratios): `_estimate`'s cache (not state)
        self._speed: dict[str, tuple[Any, Any, float, np.ndarray | None]] = {}
        self.interruption_cost = 0.0  # $: the part of lost_work_cost that interruptions lost
        self.spot_cost = 0.0  # $: the part of vm_cost billed for spot VMs
        self._spot = cat.spot.tolist()
        self._spot_held = np.zeros(cat.n_vms)  # VM-seconds held per type (replaced, not changed)
        self._spot_lost = np.zeros(cat.n_vms)  # interruptions seen per type
        # per type: [seconds of the outages seen, outages seen, start of the one now or None]
        self._outage: dict[int, tuple[float, int, float | None]] = {}
        # the last plan's target: node -> (vm, PlannedNode), job id -> (node, cfg, PlannedJob)
        # (`_target`; not state)
        self._planned: tuple[dict[int, Any], dict[str, Any]] = ({}, {})

    # -- the configuration ------------------------------------------------------------------
    nodes = property(lambda self: self.config.nodes, doc="N, node slots that may be open at once")
    method = property(lambda self: self.config.method, doc="the method solving every point")
    seed = property(lambda self: self.config.seed, doc="the base seed")
    overhead = property(lambda self: self.config.overhead, doc="seconds of work a restart loses")
    startup = property(lambda self: self.config.startup, doc="seconds a new VM is billed idle")
    solver_options = property(lambda self: dict(self.config.options), doc="the method's options")

    # -- events -----------------------------------------------------------------------------
    def handle(self, events: Event | Iterable[Event]) -> Plan:
        """One rescheduling point: an event, or a batch of events at one instant.

        Checks everything first, then advances the clock, applies the events (in the order of
        `gpuaas.rescheduler.events`), solves and applies. An error leaves the state as it was,
        including one raised by the method (e.g. a MILP that found no solution in its time
        limit): the same events can be fed again, to this method or, after `restore`, to
        another. Redelivered events (ids already applied) get their plan back (module
        docstring).
        """
        evs = batch(events)
        if not evs:
            raise InputError(None, "events", "is empty: send a Tick when nothing happened")
        for e in evs[1:]:
            if e.at != evs[0].at:
                raise InputError(
                    None,
                    "events",
                    f"a batch is one instant; got t={brief(evs[0].at)} and t={brief(e.at)}",
                )
        again = intake.redelivered(self, evs)
        if again is not None:
            return again
        at, reports, speeds, done, lost, capacity, new = intake.check(self, evs)
        saved = self._savepoint()
        try:
            self._advance(at, set(done))
            for jid, p in reports.items():
                self._report(self._jobs[jid], p)
            for jid, seconds in speeds.items():
                job = self._jobs[jid]
                c = self._hardware_of(job.cfg)
                job.measured = speed.measure(job.measured, c, seconds / job.work[job.cfg])
            for jid in done:
                self._finish(jid, at)
            interrupted = [a for p in lost for a in self._interrupt(p)]
            if capacity:
                self._outages(at, capacity)
                limits = {**self._capacity, **capacity}
                self._capacity = {v: k for v, k in sorted(limits.items()) if k is not None}
            for job in new:
                self._jobs[job.id] = job
            plan = self._reschedule(at)
            plan.submitted = [j.id for j in new]
            plan.completed = done
            plan.interrupted = interrupted
            intake.remember(self, evs, plan)
        except BaseException:
            self._rollback(saved)
            raise
        log.debug(
            "t=%g event %d: +%d -%d jobs, %d unfinished, %d changes, solver %.3f s",
            at,
            self.events,
            len(new),
            len(done),
            len(self._jobs),
            plan.changes,
            plan.solver_seconds,
        )
        return plan

    def submit(
        self,
        job: Mapping[str, Any] | JobSpec | Iterable[Mapping[str, Any] | JobSpec],
        at: float,
        *,
        progress: Mapping[str, float] | None = None,
    ) -> Plan:
        """A job (dict in the instance job format, `release` defaulting to `at`, or a checked
        `gpuaas.instance.JobSpec`) or a list of jobs is submitted at time `at`."""
        if isinstance(job, (Mapping, JobSpec)):
            jobs = [job]
        elif isinstance(job, (list, tuple)):
            jobs = list(job)
        else:
            raise InputError(
                None, "job", f"must be a job object (a mapping) or a list of them, got {brief(job)}"
            )
        return self.update(at, submit=jobs, progress=progress)

    def complete(
        self, job_id: str | Iterable[str], at: float, *, progress: Mapping[str, float] | None = None
    ) -> Plan:
        """Job `job_id` (or each of a list of ids) completed at `at`. A job already completed
        is ignored with a warning."""
        if isinstance(job_id, str):
            ids = [job_id]
        elif isinstance(job_id, (list, tuple)):
            ids = list(job_id)
        else:
            raise InputError(
                None,
                "job_id",
                f"must be a job id (a string) or a list of them, got {brief(job_id)}",
            )
        return self.update(at, complete=ids, progress=progress)

    def tick(self, at: float, *, progress: Mapping[str, float] | None = None) -> Plan:
        """Periodic rescheduling at `at` (the last plan's `next_tick` when nothing happens)."""
        return self.update(at, progress=progress)

    def update(
        self,
        at: float,
        *,
        submit: Iterable[Mapping[str, Any] | JobSpec] = (),
        complete: Iterable[str] = (),
        progress: Mapping[str, float] | None = None,
    ) -> Plan:
        """One rescheduling point with any number of simultaneous submissions, completions and
        progress reports (`progress`: job id -> fraction done): `handle` of their events."""
        if progress is not None and not isinstance(progress, Mapping):
            raise InputError(
                None,
                "progress",
                f"must be a mapping job id -> fraction done, got {brief(progress)}",
            )
        evs: list[Event] = [ProgressReport(at, jid, p) for jid, p in (progress or {}).items()]
        evs += [Completion(at, jid) for jid in complete]
        evs += [Submission(at, job) for job in submit]
        return self.handle(evs or [Tick(at)])

    # -- reading the state ------------------------------------------------------------------
    def unfinished(self) -> list[JobStatus]:
        """The submitted jobs not completed yet, in submission order; a running job's `eta` is
        when it ends at its estimated speed where it runs (`speed`: its estimated actual /
        predicted time there, `gpuaas.rescheduler.speed`)."""
        vm, gpus, nodes = self._cfg_vm, self._cfg_gpus, self._nodes
        now = self.time or 0.0
        out = []
        make = JobStatus._make
        for j in self._jobs.values():
            c = j.cfg
            if c < 0:
                out.append(make((j.id, j.progress, -1, -1, None, None, None, j.start, None, None)))
                continue
            ready = nodes[j.node].ready
            r = self._ratio(j, c) if j.observed or j.measured else 1.0  # `_estimate`'s None
            eta = max(now, ready) + float(j.work[c]) * r * (1.0 - j.progress)
            out.append(make((j.id, j.progress, j.node, c, vm[c], gpus[c], ready, j.start, eta, r)))
        return out

    def open_nodes(self) -> list[NodeStatus]:
        """The open physical nodes, in node order."""
        names = self.catalog.vm_names
        return [NodeStatus(p, names[n.vm], n.ready) for p, n in self._nodes.items()]

    def completions(self) -> Mapping[str, Mapping[str, Any]]:
        """Completed job id -> its record, in completion order (a read-only view): release,
        start (first), completion, due, weight, tardiness_cost, jct (completion - release),
        waiting (jct - running), running (seconds), migrations, preemptions, lost_work (the
        fraction of its work lost to restarts), interruptions (VMs lost under it)."""
        return MappingProxyType(self._completed)

    def capacity(self) -> dict[str, int]:
        """VM type -> how many VMs of it can be held (`CapacityChange`); a type not listed has
        no limit."""
        return {self.catalog.vm_names[v]: k for v, k in self._capacity.items()}

    def _full(self) -> list[int]:
        """The VM types at their capacity: no new VM of them can open now."""
        held = np.bincount([n.vm for n in self._nodes.values()], minlength=self.catalog.n_vms)
        return [v for v, k in self._capacity.items() if held[v] >= k]

    def instance(self, at: float | None = None, full: Iterable[int] = ()) -> Instance:
        """The P1 instance of all unfinished jobs at time `at` (default: the clock): the fields
        of `records.INSTANCE_VIEW`, whole-job times at each job's estimated speed (`_work`),
        the running jobs the disruption limits pin (`_pinned`); configurations of VM types at
        their capacity (and of the types `full`) are left out (inf), except each running job's
        own; `room` says how many more VMs of each type may open."""
        at = (self.time or 0.0) if at is None else at
        jobs, nodes = list(self._jobs.values()), self._nodes
        C = self.catalog.n_configs
        arrays: dict[str, Any] = {
            k: np.fromiter(
                map(attrgetter(field), jobs),
                np.int64 if k in ("current_node", "current_cfg") else np.float64,
                len(jobs),
            )
            for k, field in INSTANCE_VIEW.items()
            if k != "work"
        }
        arrays["pinned"] = self._pinned(jobs, at)
        work = (
            np.array([self._work(j) if j.observed or j.measured else j.work for j in jobs])
            if jobs
            else np.zeros((0, C))
        )
        full = sorted({*self._full(), *full}) if self._capacity else sorted(full)
        if full and jobs:
            work = work.copy()
            off = np.isin(self.catalog.cfg_vm, full)
            own = arrays["current_cfg"]
            keep = work[np.arange(len(jobs)), np.maximum(own, 0)]
            work[:, off] = np.inf
            work[own >= 0, own[own >= 0]] = keep[own >= 0]
        return Instance(
            catalog=self.catalog,
            nodes=self.nodes,
            job_ids=tuple(self._jobs),
            work=work,
            time=at,
            H=self.H,
            mu=self.mu,
            rho=self.rho,
            overhead=self.overhead,
            startup=self.startup,
            hazard=self.spot_hazard() if self.catalog.has_spot else None,
            outage=self.spot_outage() if self.catalog.has_spot else None,
            room=self._room(full),
            ready=[nodes[j.node].ready if j.cfg >= 0 else -np.inf for j in jobs],
            **arrays,
        )

    def _room(self, full: list[int]) -> np.ndarray | None:
        """(V,) VMs of each type that may still open (inf: no limit); None: no limit at all."""
        if not self._capacity and not full:
            return None
        held = np.bincount([n.vm for n in self._nodes.values()], minlength=self.catalog.n_vms)
        room = np.full(self.catalog.n_vms, np.inf)
        for v, k in self._capacity.items():
            room[v] = max(0, k - int(held[v]))
        room[full] = 0.0
        return room

    # -- persistence (gpuaas.rescheduler.persistence) ---------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything needed to continue exactly, JSON-able: {"version", "config", "live",
        "completed", "ids"} (`restore`; the parts: `config_state`, `live_state`,
        `completion_log`, `id_log`)."""
        return persistence.state(self)

    def config_state(self) -> dict[str, Any]:
        """The static part of the state: catalog, N, P1's parameters, the run configuration."""
        return persistence.config_state(self)

    def live_state(self) -> dict[str, Any]:
        """What events change, but the completion log: O(unfinished jobs + open nodes)."""
        return persistence.live_state(self)

    def completion_log(self, start: int = 0) -> list[dict[str, Any]]:
        """The completion records from the `start`-th on (the log only grows: a service
        appends `completion_log(n)` to what it saved, n = the records it has)."""
        return persistence.completion_log(self, start)

    def id_log(self, start: int = 0) -> list[list[str]]:
        """[event id, digest] of every event id applied, from the `start`-th on (the log only
        grows: a service appends `id_log(n)` to what it saved, as `completion_log`)."""
        return persistence.id_log(self, start)

    @classmethod
    def restore(cls, state: Mapping[str, Any]) -> Rescheduler:
        """A Rescheduler continuing exactly where the one that produced `state` stopped (a
        state of an earlier format version is migrated first; StateError names a bad field)."""
        return persistence.restore(cls, state)

    # -- state changes ----------------------------------------------------------------------
    def _savepoint(self) -> tuple[Any, ...]:
        """What an event changes, copied so that `_rollback` can undo it: O(J + N) references
        (no value is changed in place, records.py)."""
        jobs = dict(self._jobs)
        fields = list(map(_JOB_VALUES, jobs.values()))
        totals = tuple(getattr(self, k) for k in TOTALS)
        rest = (
            dict(self._nodes),
            self._capacity,
            list(self._plans),
            self._recent_moves,
            self._speed_pool,
        )
        return jobs, fields, totals, rest, len(self._completed), len(self._id_log)

    def _rollback(self, saved: tuple[Any, ...]) -> None:
        jobs, fields, totals, rest, completed, ids = saved
        for job, values in zip(jobs.values(), fields):
            for f, v in zip(JOB_FIELDS, values):
                setattr(job, f, v)
        self._jobs = jobs
        for k, v in zip(TOTALS, totals):
            setattr(self, k, v)
        (
            self._nodes,
            self._capacity,
            plans,
            self._recent_moves,
            self._speed_pool,
        ) = rest
        self._plans = deque(plans, maxlen=PLAN_MEMORY)
        for jid in self._log[completed:]:
            del self._completed[jid]
        del self._log[completed:]
        for i in self._id_log[ids:]:
            del self._ids[i]
        del self._id_log[ids:]

    def _advance(self, at: float, completing: set[str]) -> None:
        """Charge open VMs and progress running jobs from the last event to `at`."""
        if self.time is None:
            return
        dt = at - self.time
        if dt <= 0:
            return
        held = np.zeros(len(self._spot))
        for n in self._nodes.values():  # open nodes, in node order
            self.vm_cost += self._price[n.vm] * dt
            if self._spot[n.vm]:
                self.spot_cost += self._price[n.vm] * dt
                held[n.vm] += dt
        if held.any():
            self._spot_held = self._spot_held + held
        since = self.time
        ready = {p: n.ready for p, n in self._nodes.items()}
        for job in self._jobs.values():
            c = job.cfg
            if c >= 0:
                run = at - max(since, ready[job.node])
                if run <= 0:
                    continue
                r = self._ratio(job, c) if job.observed or job.measured else 1.0
                job.progress += run / (float(job.work[c]) * r)
                job.running += run
                job.segment += run
                if job.progress > MAX_PROGRESS and job.id not in completing:
                    job.progress = MAX_PROGRESS

    def _finish(self, jid: str, at: float) -> None:
        job = self._jobs.pop(jid)
        self._speed.pop(jid, None)
        if job.observed:
            self._speed_pool = speed.pool(self._speed_pool, job.observed)
        tard = job.weight * max(0.0, at - job.due)
        self.tardiness_cost += tard
        self._completed[jid] = completed_record(job, at, tard)
        self._log.append(jid)

    def _interrupt(self, p: int) -> list[InterruptedJob]:
        """Node p's VM is gone: its jobs lose the work since their last checkpoint and the
        restart's, and wait; it closes."""
        out = []
        for job in self._jobs.values():
            if job.node == p and job.cfg >= 0:
                c = job.cfg
                extra = since_checkpoint(
                    job.segment, job.checkpoint, self.config.notice, self.catalog.warning
                )
                before = self.lost_work_cost
                lost = self._lose_work(job, extra)
                job.interrupted_work += lost
                self.interruption_cost += self.lost_work_cost - before
                job.interruptions += 1
                self.interruptions += 1
                job.anchor = None
                out.append(InterruptedJob(job.id, p, self._cfg_vm[c], self._cfg_gpus[c], lost))
                job.node, job.cfg = -1, -1
        v = self._nodes.pop(p).vm
        if self._spot[v]:
            lost_vms = self._spot_lost.copy()
            lost_vms[v] += 1
            self._spot_lost = lost_vms
        return out

    def _outages(self, at: float, capacity: dict[int, int | None]) -> None:
        """Count the outages of spot types (capacity 0) as capacity changes say they begin and
        end (`spot_outage`)."""
        out = dict(self._outage)
        for v, k in capacity.items():
            seconds, n, since = out.get(v, (0.0, 0, None))
            if k == 0 and since is None:
                out[v] = (seconds, n, at)
            elif k != 0 and since is not None:
                out[v] = (seconds + at - since, n + 1, None)
        self._outage = out

    def spot_outage(self) -> np.ndarray:
        """(V,) seconds a spot type out of capacity now is expected to stay out (0 for the
        others): the mean outage seen, from the availability model's mean spell as a prior of
        one outage (outages taken as memoryless)."""
        from gpuaas.availability.model import SPELL_MEAN

        out = np.zeros(self.catalog.n_vms)
        for v, (seconds, n, since) in self._outage.items():
            if since is not None:
                out[v] = (SPELL_MEAN * 3600.0 + seconds) / (1 + n)
        return out

    def spot_hazard(self) -> np.ndarray:
        """(V,) interruptions per second of a VM held, per spot type (0 for on-demand types):
        (PRIOR_HOURS x the model's default rate + interruptions seen) / (PRIOR_HOURS + hours
        held), a Gamma-Poisson estimate that starts at the default rate
        (`gpuaas.availability.model.default_rate`) and follows what this run sees."""
        from gpuaas.availability.model import default_rate

        cat = self.catalog
        out = np.zeros(cat.n_vms)
        for v in np.flatnonzero(cat.spot):
            prior = default_rate(cat.vm_names[cat.base[v]])  # per hour
            hours = PRIOR_HOURS + self._spot_held[v] / 3600.0
            out[v] = (PRIOR_HOURS * prior + self._spot_lost[v]) / hours / 3600.0
        return out

    def _pinned(self, jobs: list[Job], at: float) -> np.ndarray:
        """(J,) the running jobs that must stay (the disruption limits): those moved
        `max_moves` times, and every one when the hour's budget of moves is spent."""
        cap, spent = self.config.max_moves, self._moves_left(at) == 0
        if cap is None and not spent:
            return np.zeros(len(jobs), dtype=bool)
        return np.array(
            [
                j.cfg >= 0 and (spent or (cap is not None and j.migrations + j.preemptions >= cap))
                for j in jobs
            ],
            dtype=bool,
        )

    def _reschedule(self, at: float) -> Plan:
        inst = self.instance(at)
        seconds = cpu = 0.0
        left = self._moves_left(at)
        if inst.n_jobs:
            seed = int(np.random.SeedSequence([self.seed, self.events]).generate_state(1)[0])
            sol, seconds, cpu = self._solve(inst, at, seed)
            running = inst.current_cfg >= 0
            moving = np.flatnonzero(moved(inst, sol.job_node, sol.job_cfg) & running)
            if left is not None and len(moving) > left:
                # over the hourly budget: the `left` moving jobs of least slack may move, the
                # method plans again around every other running job
                slack = inst.rel_due[moving] - inst.times[moving, inst.current_cfg[moving]]
                pinned = inst.pinned | running
                pinned[moving[np.argsort(slack, kind="stable")[:left]]] = False
                inst = dataclasses.replace(inst, pinned=pinned)
                sol, more, more_cpu = self._solve(inst, at, seed)
                seconds, cpu = seconds + more, cpu + more_cpu
        else:
            sol = Solution.empty(inst, self.method)
        plan = self._apply(sol, at, inst)
        voluntary = len(plan.migrate) + len(plan.preempt)
        if left is not None and voluntary > left:
            raise SolverError(
                f"{sol.method or self.method}: {voluntary} voluntary moves, more than the "
                f"{left} left of the hour's budget ({self.config.moves_per_hour})"
            )
        recent = [m for m in self._recent_moves if m[0] > at - HOUR]
        if voluntary and recent and recent[-1][0] == at:  # another point at the same instant
            recent[-1] = (at, recent[-1][1] + voluntary)
        elif voluntary:
            recent.append((at, voluntary))
        self._recent_moves = tuple(recent)
        plan.solver_seconds, plan.solver_cpu_seconds = seconds, cpu
        self.time = at
        self.events += 1
        return plan

    def _solve(self, inst: Instance, at: float, seed: int) -> tuple[Solution, float, float]:
        """The method's checked Solution, its own seconds and the process CPU seconds. A method
        blind to VM counts: the types it overfilled are left out, until it solves within them;
        one that overfills a type already left out keeps its first solution, which `_apply`
        refuses."""
        t0, c0 = _time.perf_counter(), _time.process_time()
        sol = solve(inst, self.method, seed=seed, **self.config.options)
        over, out = self._over_capacity(sol), set()
        while over and not over <= out:
            out |= over | set(np.flatnonzero(inst.room == 0).tolist())
            retry = dataclasses.replace(self.instance(at, full=out), pinned=inst.pinned)
            retry = solve(retry, self.method, seed=seed, **self.config.options)
            over = self._over_capacity(retry)
            sol = sol if over else retry
        cpu = _time.process_time() - c0
        seconds = float(sol.stats.get("seconds", _time.perf_counter() - t0))
        check_solution(sol)
        return sol, seconds, cpu

    def _moves_left(self, at: float) -> int | None:
        """Voluntary moves the hourly budget allows at `at` (None: no budget)."""
        budget = self.config.moves_per_hour
        if budget is None:
            return None
        return max(0, budget - sum(k for t, k in self._recent_moves if t > at - HOUR))

    def _over_capacity(self, sol: Solution) -> set[int]:
        """The VM types of which `sol` opens more VMs than their capacity lets open."""
        if not self._capacity:
            return set()
        held = np.bincount([n.vm for n in self._nodes.values()], minlength=self.catalog.n_vms)
        opened = np.bincount(sol.node_vm[sol.node_vm >= 0], minlength=self.catalog.n_vms)
        return {v for v, k in self._capacity.items() if opened[v] > max(k, held[v])}

    def _node_vm(self) -> np.ndarray:
        """(N,) VM type of every node slot, -1: closed."""
        vm = np.full(self.nodes, -1, dtype=np.int64)
        vm[list(self._nodes)] = [n.vm for n in self._nodes.values()]
        return vm

    def _apply(self, sol: Solution, at: float, inst: Instance) -> Plan:
        """Map solver nodes onto physical ones, apply the solution, return the differences;
        `inst` is the instance solved (the jobs' places, in `_jobs` order); the nodes of its
        pinned jobs stay where they are, and so must the jobs."""
        names = self.catalog.vm_names
        jobs = list(self._jobs.values())
        cur_node, cur_cfg, pinned = inst.current_node, inst.current_cfg, inst.pinned
        old_vm = self._node_vm()
        fixed = np.unique(cur_node[pinned]) if pinned.any() else None
        perm = match_nodes(old_vm, sol.node_vm, cur_node, cur_cfg, sol.job_node, sol.job_cfg, fixed)
        new_vm = np.full(self.nodes, -1, dtype=np.int64)
        new_vm[perm] = sol.node_vm
        plan = Plan(
            time=at,
            method=self.method,
            objective=lambda: sol.objective,  # P1$ of a whole plan: computed if read
            next_tick=at + self.config.interval(self.H),
        )
        changed = np.flatnonzero((old_vm >= 0) | (new_vm >= 0)).tolist()  # O(open), not O(N)
        for v, k in self._capacity.items():
            kept = int(np.count_nonzero((old_vm == v) & (new_vm == v)))
            if np.count_nonzero(new_vm == v) > max(k, kept):
                raise SolverError(
                    f"{sol.method or self.method}: holds {np.count_nonzero(new_vm == v)} "
                    f"{names[v]} VMs, more than the {k} its capacity allows"
                )
        nodes: dict[int, Node] = {}
        for p in changed:
            old, new = int(old_vm[p]), int(new_vm[p])
            if old < 0 <= new:
                plan.open.append(OpenVM(p, names[new]))
            elif new < 0 <= old:
                plan.close.append(CloseVM(p, names[old]))
            elif old >= 0 and old != new:
                plan.resize.append(ResizeVM(p, names[old], names[new]))
            if new >= 0 and old != new:
                nodes[p] = Node(new, ready_time(at, self.startup))
                if self.startup > 0:
                    self.startup_cost += startup_cost(self._price[new], self.startup)
            elif new >= 0:
                nodes[p] = self._nodes[p]
        self._nodes = nodes

        cfg_vm, cfg_gpus = self._cfg_vm, self._cfg_gpus

        def place(n: int, c: int) -> Place:
            return Place(n, cfg_vm[c], cfg_gpus[c])

        new_node = np.where(sol.job_node >= 0, perm[np.maximum(sol.job_node, 0)], -1)
        changed = np.flatnonzero((new_node != cur_node) | (sol.job_cfg != cur_cfg)).tolist()
        for i, n, c in zip(changed, new_node[changed].tolist(), sol.job_cfg[changed].tolist()):
            job = jobs[i]
            if pinned[i]:
                raise SolverError(
                    f"{sol.method or self.method}: moves job {job.id}, pinned by the "
                    f"disruption limit of {self.config.max_moves} moves per job"
                )
            job.segment = 0.0  # it (re)starts: its checkpoint clock too
            if job.cfg < 0:
                plan.start.append(StartJob(job.id, n, cfg_vm[c], cfg_gpus[c], job.progress))
                if job.start is None:
                    job.start = at
                # a measured progress (not one predicted since) anchors the evidence
                measured = job.reported is not None and job.progress == job.reported
                job.anchor = (job.progress, job.running) if measured else None
            else:
                job.anchor = None  # a new placement: its speed is counted from the next report
                lost = self._lose_work(job)
                old = place(job.node, job.cfg)
                if c < 0:
                    job.preemptions += 1
                    self.preemptions += 1
                    plan.preempt.append(PreemptJob(job.id, old.node, old.vm, old.gpus, lost))
                else:
                    job.migrations += 1
                    self.migrations += 1
                    plan.migrate.append(MigrateJob(job.id, old, place(n, c), lost))
            job.node, job.cfg = n, c
        plan.nodes, plan.jobs = self._target(jobs)
        return plan

    # -- the speed model (gpuaas.rescheduler.speed) --------------------------------------------
    def _report(self, job: Job, p: float) -> None:
        """Measured progress p: the evidence of its speed since the last measurement on this
        placement, then p replaces the predicted progress."""
        if self.config.learn_speed and job.anchor is not None and job.cfg >= 0:
            p0, run0 = job.anchor
            seconds = job.running - run0
            if seconds > 0.0:
                made = max(0.0, p - p0) * float(job.work[job.cfg])
                job.observed = speed.observe(
                    job.observed, self._hardware_of(job.cfg), seconds, made
                )
        job.progress = job.reported = p
        job.anchor = (p, job.running) if job.cfg >= 0 else None

    def _estimate(self, job: Job) -> np.ndarray | None:
        """(C,) the job's estimated actual / predicted times (None: the predictions), cached
        while its evidence is the same."""
        if not job.observed and not job.measured:
            return None
        share = speed.pooled_share(self._speed_pool)
        hit = self._speed.get(job.id)
        if (
            hit is None
            or hit[0] is not job.observed
            or hit[1] is not job.measured
            or hit[2] != share
        ):
            r = speed.ratios(
                job.observed,
                job.measured,
                self.catalog.n_configs,
                self.config.learn_speed,
                job_share=share,
            )
            if r is not None and self._hardware is not None:
                r = r[self._hardware]
            hit = self._speed[job.id] = (job.observed, job.measured, share, r)
        return hit[3]

    def _hardware_of(self, c: int) -> int:
        """Configuration c's hardware: its own, or a spot variant's on-demand configuration."""
        return c if self._hardware is None else int(self._hardware[c])

    def _ratio(self, job: Job, c: int) -> float:
        r = self._estimate(job)
        return 1.0 if r is None else float(r[c])

    def _work(self, job: Job) -> np.ndarray:
        """(C,) the job's whole-job times at its estimated speed."""
        r = self._estimate(job)
        return job.work if r is None else job.work * r

    def _target(self, jobs: list[Job]) -> tuple[list[PlannedNode], list[PlannedJob]]:
        """A plan's target state: a `PlannedNode` per open node and a `PlannedJob` per job, the
        last plan's where nothing changed (they are immutable): a plan lists every open node
        and unfinished job, an event changes a few."""
        names, cfg_vm, cfg_gpus = self.catalog.vm_names, self._cfg_vm, self._cfg_gpus
        last_nodes, last_jobs = self._planned
        nodes: dict[int, tuple[int, PlannedNode]] = {}
        for p, n in self._nodes.items():
            hit = last_nodes.get(p)
            nodes[p] = (
                hit if hit is not None and hit[0] == n.vm else (n.vm, PlannedNode(p, names[n.vm]))
            )
        now: dict[str, tuple[int, int, PlannedJob]] = {}
        for j in jobs:
            hit = last_jobs.get(j.id)
            if hit is None or hit[0] != j.node or hit[1] != j.cfg:
                planned = (
                    PlannedJob(j.id, j.node, cfg_vm[j.cfg], cfg_gpus[j.cfg])
                    if j.cfg >= 0
                    else PlannedJob(j.id, None, None, None)
                )
                hit = (j.node, j.cfg, planned)
            now[j.id] = hit
        self._planned = (nodes, now)
        return [hit[1] for hit in nodes.values()], [hit[2] for hit in now.values()]

    def _lose_work(self, job: Job, extra: float = 0.0) -> float:
        """The restart rule (`gpuaas.reconfiguration`) on a running job leaving its place;
        `extra`: seconds of work it loses besides the restart's (an interruption's)."""
        if self.overhead + extra <= 0:
            return 0.0
        c = job.cfg
        work = float(job.work[c]) * self._ratio(job, c)
        lost = lost_work(job.progress, work, self.overhead + extra)
        job.progress -= lost
        job.reported = None  # the real restart may lose more than predicted
        job.lost += lost
        v = int(self.catalog.cfg_vm[c])
        share = gpu_share_price(self._price[v], self._cfg_gpus[c], int(self.catalog.gpus[v]))
        self.lost_work_cost += lost_work_cost(lost, work, share)
        return lost


def check_state(state: Mapping[str, Any]) -> None:
    """Check every field `Rescheduler.restore` reads (StateError naming the first bad one)."""
    Rescheduler.restore(state)
