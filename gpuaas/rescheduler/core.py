"""Online rescheduling [§2.1, docs/design.md §6]: the state of a running system, driven by events.

Orchestration code tells a `Rescheduler` what happens (`gpuaas.rescheduler.events`: a job is
submitted or completes, the clock ticks, progress is measured, a VM is lost) and gets back a
`Plan`: the VMs to open, resize or close and the jobs to start, migrate or preempt. At every
rescheduling point (one event, or a batch of events at one instant) the rescheduler

1. advances the clock: every open VM is charged price x elapsed, every running job gains
   elapsed / work[j, c] of progress (work = the whole-job time on its configuration c;
   `accounting`);
2. applies the events: measured progress and times (`speed`), completions (tardiness cost
   omega_j * max(0, completion - due_j)), lost VMs (`accounting.interrupt`), capacity
   (`spot_estimates`), submissions;
3. builds the `Instance` of all unfinished jobs (`view.instance`: remaining times from their
   progress, relative due dates, `current_node` / `current_cfg` = where each job runs now, the
   jobs the disruption limits pin, `budget`);
4. calls the method (`gpuaas.methods.solve`), checks its `Solution`, maps its abstract nodes
   onto the physical ones (`gpuaas.rescheduler.matching`) and applies the difference as a Plan
   (`apply`).

This class is the facade: its state is one record (`state.RunState`, `run_state`) that it
passes to the modules of each concern above, and to `intake` (checks) and `persistence`.

**Reconfiguration costs** (`gpuaas.reconfiguration`, docs/reconfiguration.md): a job migrated,
preempted or whose VM is lost restarts from a checkpoint `overhead` seconds old; a VM opened or
resized at t is billed from t but runs jobs from t + `startup`. They are passed to the method in
the `Instance`, so methods that price moves keep a running job in place unless moving pays.

**Progress reports.** Progress is predicted from the configurations' times, times the job's
estimated actual / predicted ratio (the speed model, `gpuaas.rescheduler.speed`, learned from
the progress measured between consecutive reports and from throughput reports; a spot variant's
configuration counts as its on-demand type's, the same hardware); a measured fraction
(`ProgressReport`) replaces it. A job predicted finished but not reported complete is held at
`MAX_PROGRESS`. A report below the job's previous report (or its submitted progress) is refused
unless the job was restarted in between (a restart may lose more than predicted): each job keeps
its last measured progress (`reported`). A job that never ran here (`start` None, even with
progress at submission, which it made elsewhere) can be neither reported on nor completed.

**Idempotent events.** An event with an `id` that was already applied is answered with the plan
it got and changes nothing, as long as the plan is among the last `PLAN_MEMORY` rescheduling
points' (plans are saved with the state); an older one is refused. Every id applied is kept
with its event's digest (the state's append-only id log, `id_log`), so an id reused for another
event (another content: any field of the event) is refused however long ago it was applied.

**Checks.** Everything is checked before anything changes; an event that raises (bad input,
or a method that fails) leaves the state as it was (`state.savepoint`), so it can be fed again.

Times are seconds; events come in time order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.catalog import Catalog, load_catalog
from gpuaas.colocation import parse_table
from gpuaas.errors import InputError, brief
from gpuaas.instance import DEFAULT_PARAMS, Instance, JobSpec
from gpuaas.limits import MAX_SECONDS, MAX_WEIGHT
from gpuaas.rescheduler import accounting, apply, intake, persistence, speed, spot_estimates, view
from gpuaas.rescheduler.accounting import MAX_PROGRESS
from gpuaas.rescheduler.events import (
    Completion,
    Event,
    ProgressReport,
    Submission,
    Tick,
    batch,
)
from gpuaas.rescheduler.records import JobStatus, NodeStatus, Plan
from gpuaas.rescheduler.state import RunState, rollback, savepoint
from gpuaas.run_config import RunConfig

__all__ = ["MAX_PROGRESS", "Rescheduler", "check_state"]

log = logging.getLogger(__name__)

#: the state record's fields a Rescheduler shows as read-only attributes (class docstring)
SHOWN = (
    "catalog",
    "config",
    "H",
    "mu",
    "rho",
    "time",
    "events",
    "vm_cost",
    "tardiness_cost",
    "lost_work_cost",
    "startup_cost",
    "egress_cost",
    "transfers",
    "migrations",
    "preemptions",
    "interruptions",
    "interruption_cost",
    "spot_cost",
)


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
    colocation : mapping, optional
        The co-location table by workload name (`gpuaas.colocation.parse_table`) the methods
        get in the Instance (with `config.colocation` "table"; the jobs name their workloads).
    **settings
        `seed`, `overhead`, `startup`, `tick` (fields of `RunConfig`) and solver options
        passed to the method at every event (e.g. ``time_limit``; JSON-able, for `state()`).

    Reading the state (between events; never change it but through events): the read-only
    attributes `time` (of the last event, None before the first), `events`, `config` and its
    fields (`method`, `seed`, `overhead`, `startup`, `solver_options`), `catalog`, `nodes`, `H`,
    `mu`, `rho`, the running totals `vm_cost`, `tardiness_cost`, `lost_work_cost`,
    `startup_cost`, `egress_cost` and `transfers` (jobs' data moved between locations,
    `gpuaas.transfer`), `migrations`, `preemptions`, `interruptions`, `interruption_cost`,
    `spot_cost`; `unfinished()` (a `JobStatus` per unfinished job), `open_nodes()` (a
    `NodeStatus` per open node), `completions()` (a record per completed job) and `instance()`;
    `run_state`, the whole record (`gpuaas.rescheduler.state.RunState`), for inspection.
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
        colocation: Mapping[str, Mapping[str, float]] | None = None,
        **settings: Any,
    ) -> None:
        if nodes is not None:
            settings["nodes"] = nodes
        config = RunConfig.build(config, method, **settings)
        if config.nodes is None:
            raise InputError(None, "nodes", "missing: the number of node slots N")
        cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
        self.run_state = RunState(
            catalog=cat.with_spot() if config.spot else cat,
            config=config,
            H=checks.number(H, "H", minimum=0.0, maximum=MAX_SECONDS, positive=True),
            mu=checks.number(mu, "mu", minimum=0.0, maximum=MAX_WEIGHT),
            rho=checks.number(rho, "rho", minimum=0.0, maximum=MAX_WEIGHT),
            colocation=None if colocation is None else parse_table(colocation),
        )

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
        s = self.run_state
        again = intake.redelivered(s, evs)
        if again is not None:
            return again
        at, reports, speeds, done, lost, capacity, new = intake.check(s, evs)
        saved = savepoint(s)
        try:
            accounting.advance(s, at, set(done))
            for jid, p in reports.items():
                speed.report(s, s.jobs[jid], p)
            for jid, seconds in speeds.items():
                speed.throughput(s, s.jobs[jid], seconds)
            for jid in done:
                accounting.finish(s, jid, at)
            drops = spot_estimates.dropping(s, capacity)
            interrupted = [a for p in lost for a in accounting.interrupt(s, p, drops)]
            if capacity:
                spot_estimates.set_capacity(s, at, capacity)
            for job in new:
                s.add(job)
            # only spot capacity changed: the jobs on on-demand VMs stay where they run, and
            # while no spot VM is held, the point is one only if spot is used
            capacity_only = bool(capacity) and len(capacity) == len(evs) and not lost
            quiet = capacity_only and not apply.holds_spot(s, s.node_vm())
            plan = apply.reschedule(s, at, quiet=quiet, capacity_only=capacity_only)
            if not plan.replanned:  # as if only the capacity had been told
                rollback(s, saved)
                spot_estimates.set_capacity(s, at, capacity)
            s.seen = at
            plan.submitted = [j.id for j in new]
            plan.completed = done
            plan.interrupted = interrupted
            intake.remember(s, evs, plan)
        except BaseException:
            rollback(s, saved)
            raise
        s.undo = None
        log.debug(
            "t=%g event %d: +%d -%d jobs, %d unfinished, %d changes, solver %.3f s",
            at,
            s.events,
            len(new),
            len(done),
            len(s.jobs),
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
        return view.unfinished(self.run_state)

    def open_nodes(self) -> list[NodeStatus]:
        """The open physical nodes, in node order."""
        return view.open_nodes(self.run_state)

    def completions(self) -> Mapping[str, Mapping[str, Any]]:
        """Completed job id -> its record, in completion order (a read-only view): release,
        start (first), completion, due, weight, tardiness_cost, jct (completion - release),
        waiting (jct - running), running (seconds), migrations, preemptions, lost_work (the
        fraction of its work lost to restarts), interruptions (VMs lost under it)."""
        return MappingProxyType(self.run_state.completed)

    def capacity(self) -> dict[str, int]:
        """VM type -> how many VMs of it can be held (`CapacityChange`); a type not listed has
        no limit."""
        return spot_estimates.named_capacity(self.run_state)

    def instance(self, at: float | None = None, full: Iterable[int] = ()) -> Instance:
        """The P1 instance of all unfinished jobs at time `at` (default: the clock), as the
        method gets it (`view.instance`); configurations of the VM types `full` left out."""
        return view.instance(self.run_state, at, full)

    def spot_outage(self) -> np.ndarray:
        """(V,) seconds an outage of each spot type is expected to last
        (`spot_estimates.outage`)."""
        return spot_estimates.outage(self.run_state)

    def spot_hazard(self) -> np.ndarray:
        """(V,) interruptions per second of a VM held, per spot type
        (`spot_estimates.hazard`)."""
        return spot_estimates.hazard(self.run_state)

    # -- persistence (gpuaas.rescheduler.persistence) ---------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything needed to continue exactly, JSON-able: {"version", "config", "live",
        "completed", "ids"} (`restore`; the parts: `config_state`, `live_state`,
        `completion_log`, `id_log`)."""
        return persistence.state(self.run_state)

    def config_state(self) -> dict[str, Any]:
        """The static part of the state: catalog, N, P1's parameters, the run configuration."""
        return persistence.config_state(self.run_state)

    def live_state(self) -> dict[str, Any]:
        """What events change, but the completion log: O(unfinished jobs + open nodes)."""
        return persistence.live_state(self.run_state)

    def completion_log(self, start: int = 0) -> list[dict[str, Any]]:
        """The completion records from the `start`-th on (the log only grows: a service
        appends `completion_log(n)` to what it saved, n = the records it has)."""
        return persistence.completion_log(self.run_state, start)

    def id_log(self, start: int = 0) -> list[list[str]]:
        """[event id, digest] of every event id applied, from the `start`-th on (the log only
        grows: a service appends `id_log(n)` to what it saved, as `completion_log`)."""
        return persistence.id_log(self.run_state, start)

    @classmethod
    def restore(cls, state: Mapping[str, Any]) -> Rescheduler:
        """A Rescheduler continuing exactly where the one that produced `state` stopped (a
        state of an earlier format version is migrated first; StateError names a bad field)."""
        return persistence.restore(cls, state)


def _shown(name: str) -> property:
    """A read-only attribute showing the state record's field `name`."""
    return property(lambda self: getattr(self.run_state, name), doc=f"`RunState.{name}`")


for _name in SHOWN:
    setattr(Rescheduler, _name, _shown(_name))


def check_state(state: Mapping[str, Any]) -> None:
    """Check every field `Rescheduler.restore` reads (StateError naming the first bad one)."""
    Rescheduler.restore(state)
