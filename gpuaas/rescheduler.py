"""Online rescheduling [§2.1, docs/design.md §6]: the state of a running system, driven by events.

Orchestration code tells a `Rescheduler` what happens — a job is submitted, a job completes, the
clock ticks — and gets back a `Plan`: the VMs to open, resize or close and the jobs to start,
migrate or preempt. At every event the rescheduler

1. advances the clock: every open VM is charged price x elapsed, every running job gains
   elapsed / work[j, c] of progress (work = the whole-job time on its configuration c);
2. records completions (tardiness cost omega_j * max(0, completion - due_j));
3. builds the `Instance` of all unfinished jobs (remaining times from their progress, relative
   due dates, `current_node` / `current_cfg` = where each job runs now, -1 waiting);
4. calls the solver (`gpuaas.methods.solve`), checks its `Solution`, maps its abstract nodes
   onto the physical ones (the *matching step*, below) and applies the difference as a Plan.

**Matching step.** A solver numbers its nodes freely, but a physical node keeps its identity
while open. Solver node s is assigned to physical node p by a maximum-weight assignment
(Hungarian algorithm) whose weights rank, lexicographically: (1) jobs that stay where they are
(same physical node and configuration: no migration), (2) nodes that keep their VM type (no
resize), (3) open nodes reused rather than one closed and another opened, (4) s = p. So a node
whose VM type is unchanged keeps its jobs without a spurious migration.

**Restart overhead** (`overhead`, seconds) is modelled as *lost work*: a job migrated or
preempted restarts from a checkpoint `overhead` seconds old, i.e. it loses
overhead / work[j, c_old] of progress (never below 0). Plans and results report the loss.
**VM start-up** (`startup`, seconds): a VM opened or resized at time t is billed from t but its
jobs make progress only from t + startup (`node_ready`). Both costs are on by default
(`DEFAULT_OVERHEAD`, `DEFAULT_STARTUP`; `PAPER_COSTS` switches them off) and are passed to the
method in the `Instance` (`overhead`, `startup`, `current_node` / `current_cfg`), so methods
that price moves keep a running job in place unless moving pays.

**Progress reports.** Progress is predicted from the configurations' times. Orchestration code
that measures real progress (training iterations) passes `progress={id: fraction}` with any
event; the simulator does so when actual durations differ from predicted ones (noise). A job
predicted finished but not reported complete is kept at progress `MAX_PROGRESS`. A report
below the job's previous report (or its submitted progress) is refused, unless the job was
restarted in between (migrated or preempted with a restart overhead, which may lose more work
than predicted): each job keeps its last measured progress (`reported`, also in `state()`).

**Checks.** Arguments are checked before anything changes (`submit` of a non-job, `complete`
of a non-id, an unknown solver option at construction: InputError); `restore` checks every
field of a state (`check_state`) and names the first bad one (StateError).

Times are seconds; `at` must never decrease. An event that raises leaves the state unchanged.
"""

from __future__ import annotations

import json
import logging
import math
import time as _time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from gpuaas.catalog import Catalog, load_catalog
from gpuaas.errors import InputError, SolverError, StateError, brief
from gpuaas.instance import DEFAULT_PARAMS, Instance, JobSpec, _number, parse_job
from gpuaas.limits import HORIZON, MAX_JOBS, MAX_SECONDS, MAX_WEIGHT, check_nodes, check_seed
from gpuaas.limits import MIN_SECONDS as MIN_WORK  # whole-job times, as check_job's
from gpuaas.methods import DEFAULT_METHOD, check_options, get_method, solve
from gpuaas.solution import Solution

log = logging.getLogger(__name__)

#: seconds: events closer than this are simultaneous; a job with less remaining time is complete
TIME_TOL = 1e-6
#: progress a job is held at when predicted finished but not (yet) reported complete
MAX_PROGRESS = 1.0 - 1e-9
#: a progress report this far below the previous one is rounding, not going backwards
PROGRESS_TOL = 1e-9
STATE_VERSION = 2
#: Reconfiguration costs applied by default (seconds), see docs/reconfiguration.md: work a
#: migrated or preempted job loses, and the time a VM opened or resized is billed before it
#: can run jobs. `PAPER_COSTS` switches both off, the paper's setting [§3.1].
DEFAULT_OVERHEAD = 600.0
DEFAULT_STARTUP = 120.0
PAPER_COSTS = {"overhead": 0.0, "startup": 0.0}


@dataclass
class _Job:
    """An unfinished job: its data, its progress and where it runs (-1: waiting)."""

    id: str
    release: float
    due: float
    weight: float
    work: np.ndarray  # (C,) whole-job seconds per configuration, inf = cannot run
    progress: float = 0.0
    node: int = -1
    cfg: int = -1
    start: float | None = None  # first start
    running: float = 0.0  # seconds spent running so far
    migrations: int = 0
    preemptions: int = 0
    lost: float = 0.0  # fraction of work lost to restart overhead
    reported: float | None = None  # last measured progress (submitted or reported): a floor


class JobStatus(NamedTuple):
    """An unfinished job as the rescheduler sees it now (a copy: changing it changes nothing).

    `progress` is the predicted fraction of its work done (the measured one when reported).
    A waiting job has `node` = `cfg` = -1 and `vm`, `gpus`, `ready` None; a running one runs on
    physical node `node` with catalog configuration `cfg` (VM type `vm`, `gpus` GPUs) and makes
    progress from `ready` on (when its node's VM finished starting up, see `startup`).
    """

    id: str
    progress: float
    node: int
    cfg: int
    vm: str | None
    gpus: int | None
    ready: float | None
    start: float | None  # first start, None if never started


class NodeStatus(NamedTuple):
    """An open physical node: its VM type and the time from which it can run jobs (start-up)."""

    node: int
    vm: str
    ready: float


def lost_work(progress: float, work: float, overhead: float) -> float:
    """The restart rule (module docstring): the fraction of its work a job migrated or
    preempted loses, restarting from a checkpoint `overhead` seconds old; `work` is its
    whole-job time on the configuration it left, `progress` the fraction done (never below 0)."""
    return min(progress, overhead / work) if overhead > 0 else 0.0


@dataclass
class Plan:
    """What to do at one rescheduling point, and the target state after doing it.

    Apply in this order: preempt, then close / resize VMs, open VMs, then start and migrate
    jobs. `nodes` and `jobs` give the whole target state (open nodes; placement of every
    unfinished job, `node: null` = waiting), so a plan can also be applied idempotently.
    """

    time: float
    submitted: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    open: list[dict[str, Any]] = field(default_factory=list)  # {"node", "vm"}
    resize: list[dict[str, Any]] = field(default_factory=list)  # {"node", "from", "to"}
    close: list[dict[str, Any]] = field(default_factory=list)  # {"node", "vm"}
    start: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"id", "node", "vm", "gpus", "progress"}
    migrate: list[dict[str, Any]] = field(default_factory=list)  # {"id", "from", "to", "lost_work"}
    preempt: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"id", "node", "vm", "gpus", "lost_work"}
    nodes: list[dict[str, Any]] = field(default_factory=list)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    objective: float = 0.0  # f_OBJ (P1a) of the solver's solution at this point
    method: str = ""
    solver_seconds: float = 0.0  # the method's own stats["seconds"]
    solver_cpu_seconds: float = 0.0  # process CPU time of the whole solve call
    next_tick: float = math.inf  # when to call tick() if nothing else happens (time + H)

    @property
    def changes(self) -> int:
        """Number of actions (VM and job changes) in the plan."""
        return sum(
            map(len, (self.open, self.resize, self.close, self.start, self.migrate, self.preempt))
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dictionary of the plan."""
        return {
            "time": self.time,
            "submitted": list(self.submitted),
            "completed": list(self.completed),
            "open": self.open,
            "resize": self.resize,
            "close": self.close,
            "start": self.start,
            "migrate": self.migrate,
            "preempt": self.preempt,
            "nodes": self.nodes,
            "jobs": self.jobs,
            "objective": self.objective,
            "method": self.method,
            "solver_seconds": self.solver_seconds,
            "solver_cpu_seconds": self.solver_cpu_seconds,
            "next_tick": self.next_tick,
        }

    def __str__(self) -> str:
        running = sum(j["node"] is not None for j in self.jobs)
        waiting = len(self.jobs) - running
        lines = [
            f"t={self.time:g}: {len(self.nodes)} node(s) open, {running} job(s) running, {waiting} waiting"
        ]
        lines += [f"  open    node {a['node']} {a['vm']}" for a in self.open]
        lines += [f"  resize  node {a['node']} {a['from']} -> {a['to']}" for a in self.resize]
        lines += [f"  close   node {a['node']} {a['vm']}" for a in self.close]
        lines += [
            f"  start   {a['id']} on node {a['node']} {a['vm']} x{a['gpus']}" for a in self.start
        ]
        lines += [
            f"  migrate {a['id']} node {a['from']['node']} {a['from']['vm']} x{a['from']['gpus']}"
            f" -> node {a['to']['node']} {a['to']['vm']} x{a['to']['gpus']}"
            for a in self.migrate
        ]
        lines += [f"  preempt {a['id']} from node {a['node']}" for a in self.preempt]
        return "\n".join(lines)


class Rescheduler:
    """Online scheduler: feed it events, apply the Plans it returns.

    Parameters
    ----------
    catalog : Catalog, str or dict
        The VM catalog (a `Catalog`, a bundled catalog name, a YAML path or an inline mapping).
    nodes : int
        N, the number of node slots that may be open at once.
    method : str
        A registered solution method (`gpuaas.methods.METHODS`), called at every event.
    seed : int
        Base seed; event k solves with a seed derived from (seed, k), so runs are reproducible.
    H, mu, rho : float
        Parameters of P1 (formulations/P1.md).
    overhead : float
        Seconds of work lost per migration or preemption (restart from an older checkpoint).
    startup : float
        Seconds a VM opened or resized is billed before its jobs can run.
    **solver_options
        Passed to the method at every event (e.g. ``time_limit``). Must be JSON-able for
        `state()`.

    Reading the state (between events; never change it but through events): the attributes
    `time` (of the last event, None before the first), `events`, the constructor's arguments
    (`catalog`, `nodes`, `method`, `seed`, `H`, `mu`, `rho`, `overhead`, `startup`), the running
    totals `vm_cost`, `tardiness_cost`, `lost_work_cost`, `startup_cost`, `migrations`,
    `preemptions`; `unfinished()` (a `JobStatus` per unfinished job), `open_nodes()` (a
    `NodeStatus` per open node) and `completions()` (a record per completed job).
    """

    def __init__(
        self,
        catalog: Catalog | str | dict[str, Any],
        nodes: int,
        method: str = DEFAULT_METHOD,
        *,
        seed: int = 0,
        H: float = DEFAULT_PARAMS["H"],
        mu: float = DEFAULT_PARAMS["mu"],
        rho: float = DEFAULT_PARAMS["rho"],
        overhead: float = DEFAULT_OVERHEAD,
        startup: float = DEFAULT_STARTUP,
        **solver_options: Any,
    ) -> None:
        self.catalog = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
        self.nodes = check_nodes(nodes)
        if not isinstance(method, str):
            raise InputError(None, "method", f"must be a method name, got {method!r}")
        get_method(method)  # unknown method or option: InputError now, not at the first event
        check_options(method, solver_options)
        self.method = method
        self.seed = check_seed(seed)
        self.H = _number(H, None, "H", minimum=0.0, maximum=MAX_SECONDS)
        if self.H <= 0:
            raise InputError(None, "H", "must be > 0")
        self.mu = _number(mu, None, "mu", minimum=0.0, maximum=MAX_WEIGHT)
        self.rho = _number(rho, None, "rho", minimum=0.0, maximum=MAX_WEIGHT)
        self.overhead = _number(overhead, None, "overhead", minimum=0.0, maximum=MAX_SECONDS)
        self.startup = _number(startup, None, "startup", minimum=0.0, maximum=MAX_SECONDS)
        self.solver_options = dict(solver_options)
        cat = self.catalog
        self._cfg_vm = [cat.vm_names[v] for v in cat.cfg_vm]  # plain lists: fast per-job lookups
        self._cfg_gpus = [int(g) for g in cat.cfg_gpus]
        self._price = [float(c) for c in cat.cost]
        self.time: float | None = None  # clock: time of the last event
        self.events = 0
        self._node_vm = np.full(self.nodes, -1, dtype=np.int64)
        self._node_ready = np.zeros(self.nodes)  # time each node's VM can run jobs (start-up)
        self._jobs: dict[str, _Job] = {}  # unfinished, in submission order
        self._completed: dict[str, dict[str, Any]] = {}
        self.vm_cost = 0.0
        self.tardiness_cost = 0.0
        self.migrations = 0
        self.preemptions = 0
        self.lost_work_cost = 0.0  # $: work lost to restarts, at the old configuration's GPU share
        self.startup_cost = 0.0  # $: VMs billed while starting up

    # -- events -----------------------------------------------------------------------------
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
        """Periodic rescheduling at `at` (H after the last event when nothing else happens)."""
        return self.update(at, progress=progress)

    def update(
        self,
        at: float,
        *,
        submit: Iterable[Mapping[str, Any] | JobSpec] = (),
        complete: Iterable[str] = (),
        progress: Mapping[str, float] | None = None,
    ) -> Plan:
        """One rescheduling point with any number of simultaneous submissions and completions.

        Checks everything first, then advances the clock, finishes the completed jobs, adds the
        submitted ones, solves and applies. An error leaves the state as it was, including one
        raised by the method (e.g. a MILP that found no solution in its time limit): the same
        event can be fed again, to this method or, after `restore`, to another.
        """
        at = _number(at, None, "at", minimum=0.0, maximum=HORIZON)
        if self.time is not None and at < self.time:
            raise StateError(
                f"event at t={at:g} is before the previous event at t={self.time:g}; "
                "events must come in time order"
            )
        new = self._parse_submissions(submit, at)
        done = self._check_completions(complete)
        reports = self._check_progress(progress, set(done))
        saved = self._savepoint()
        try:
            self._advance(at, set(done))
            for jid, p in reports.items():
                self._jobs[jid].progress = self._jobs[jid].reported = p
            for jid in done:
                self._finish(jid, at)
            for job in new:
                self._jobs[job.id] = job
            plan = self._reschedule(at)
        except BaseException:
            self._rollback(saved)
            raise
        plan.submitted = [j.id for j in new]
        plan.completed = done
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

    # -- reading the state ------------------------------------------------------------------
    def unfinished(self) -> list[JobStatus]:
        """The submitted jobs not completed yet, in submission order."""
        ready = self._node_ready.tolist()
        vm, gpus = self._cfg_vm, self._cfg_gpus
        return [
            JobStatus(
                j.id, j.progress, j.node, j.cfg, vm[j.cfg], gpus[j.cfg], ready[j.node], j.start
            )
            if j.cfg >= 0
            else JobStatus(j.id, j.progress, -1, -1, None, None, None, j.start)
            for j in self._jobs.values()
        ]

    def open_nodes(self) -> list[NodeStatus]:
        """The open physical nodes, in node order."""
        names = self.catalog.vm_names
        return [
            NodeStatus(p, names[self._node_vm[p]], float(self._node_ready[p]))
            for p in np.flatnonzero(self._node_vm >= 0).tolist()
        ]

    def completions(self) -> Mapping[str, Mapping[str, Any]]:
        """Completed job id -> its record, in completion order (a read-only view): release,
        start (first), completion, due, weight, tardiness_cost, jct (completion - release),
        waiting (jct - running), running (seconds), migrations, preemptions, lost_work (the
        fraction of its work lost to restarts)."""
        return MappingProxyType(self._completed)

    # -- checks -----------------------------------------------------------------------------
    def _parse_submissions(
        self, jobs: Iterable[Mapping[str, Any] | JobSpec], at: float
    ) -> list[_Job]:
        out: list[_Job] = []
        seen: set[str] = set()
        for i, job in enumerate(jobs):
            parsed = submitted_job(job, self.catalog, at, f"job[{i}]")
            if parsed.id in self._jobs or parsed.id in self._completed or parsed.id in seen:
                raise StateError(f"job {parsed.id!r} was already submitted")
            seen.add(parsed.id)
            out.append(parsed)
        if len(self._jobs) + len(out) > MAX_JOBS:
            raise InputError(
                None,
                "job",
                f"{len(self._jobs) + len(out)} unfinished jobs; at most {MAX_JOBS} (gpuaas.limits)",
            )
        return out

    def _check_completions(self, ids: Iterable[str]) -> list[str]:
        done: list[str] = []
        for jid in ids:
            if not isinstance(jid, str):
                raise InputError(None, "job_id", f"must be a job id (a string), got {brief(jid)}")
            if jid in self._completed or jid in done:
                msg = f"job {jid!r} already completed; duplicate completion ignored"
                warnings.warn(msg, stacklevel=4)
                log.warning(msg)
            elif jid not in self._jobs:
                raise StateError(f"cannot complete unknown job {jid!r}")
            else:
                done.append(jid)
        return done

    def _check_progress(
        self, progress: Mapping[str, float] | None, done: set[str]
    ) -> dict[str, float]:
        if progress is None:
            return {}
        if not isinstance(progress, Mapping):
            raise InputError(
                None,
                "progress",
                f"must be a mapping job id -> fraction done, got {brief(progress)}",
            )
        out = {}
        for jid, p in progress.items():
            if not isinstance(jid, str) or jid not in self._jobs:
                raise StateError(f"progress reported for unknown or completed job {brief(jid)}")
            if jid in done:
                continue
            p = _number(p, None, f"progress[{jid!r}]", minimum=0.0)
            if p >= 1.0:
                raise InputError(
                    None,
                    f"progress[{jid!r}]",
                    f"must be < 1 for an unfinished job (complete it instead), got {p!r}",
                )
            floor = self._jobs[jid].reported
            if floor is not None and p < floor - PROGRESS_TOL:
                raise InputError(
                    None,
                    f"progress[{jid!r}]",
                    f"{p!r} is below the {floor!r} reported "
                    "before; progress only goes back when the job is migrated or "
                    "preempted with a restart overhead",
                )
            out[jid] = p
        return out

    # -- state changes ----------------------------------------------------------------------
    def _savepoint(self) -> tuple[Any, ...]:
        """What an event changes, copied so that `_rollback` can undo it: O(J + N) plain values."""
        jobs = dict(self._jobs)
        fields = [tuple(getattr(j, f) for f in _JOB_STATE) for j in jobs.values()]
        totals = tuple(getattr(self, k) for k in _TOTALS)
        return (
            jobs,
            fields,
            totals,
            self._node_vm.copy(),
            self._node_ready.copy(),
            len(self._completed),
        )

    def _rollback(self, saved: tuple[Any, ...]) -> None:
        jobs, fields, totals, self._node_vm, self._node_ready, completed = saved
        for job, values in zip(jobs.values(), fields):
            for f, v in zip(_JOB_STATE, values):
                setattr(job, f, v)
        self._jobs = jobs
        for k, v in zip(_TOTALS, totals):
            setattr(self, k, v)
        for jid in list(self._completed)[completed:]:
            del self._completed[jid]

    def _advance(self, at: float, completing: set[str]) -> None:
        """Charge open VMs and progress running jobs from the last event to `at`."""
        if self.time is None:
            return
        dt = at - self.time
        if dt <= 0:
            return
        for v in self._node_vm[self._node_vm >= 0].tolist():  # open nodes, in node order
            self.vm_cost += self._price[v] * dt
        ready = self._node_ready.tolist()
        for job in self._jobs.values():
            if job.cfg >= 0:
                run = at - max(self.time, ready[job.node])
                if run <= 0:
                    continue
                job.progress += run / float(job.work[job.cfg])
                job.running += run
                if job.progress > MAX_PROGRESS and job.id not in completing:
                    job.progress = MAX_PROGRESS

    def _finish(self, jid: str, at: float) -> None:
        job = self._jobs.pop(jid)
        tard = job.weight * max(0.0, at - job.due)
        self.tardiness_cost += tard
        start = job.start if job.start is not None else at
        self._completed[jid] = {
            "id": jid,
            "release": job.release,
            "start": start,
            "completion": at,
            "due": job.due,
            "weight": job.weight,
            "tardiness_cost": tard,
            "jct": at - job.release,
            "waiting": at - job.release - job.running,
            "running": job.running,
            "migrations": job.migrations,
            "preemptions": job.preemptions,
            "lost_work": job.lost,
        }

    def instance(self, at: float | None = None) -> Instance:
        """The P1 instance of all unfinished jobs at time `at` (default: the clock)."""
        at = (self.time or 0.0) if at is None else at
        jobs = list(self._jobs.values())
        C = self.catalog.n_configs
        scalars = np.array(
            [(j.release, j.due, j.weight, j.progress, j.node, j.cfg) for j in jobs],
            dtype=np.float64,
        ).reshape(len(jobs), 6)
        return Instance(
            catalog=self.catalog,
            nodes=self.nodes,
            job_ids=tuple(j.id for j in jobs),
            release=scalars[:, 0],
            due=scalars[:, 1],
            weight=scalars[:, 2],
            work=np.stack([j.work for j in jobs]) if jobs else np.zeros((0, C)),
            progress=scalars[:, 3],
            time=at,
            H=self.H,
            mu=self.mu,
            rho=self.rho,
            overhead=self.overhead,
            startup=self.startup,
            current_node=scalars[:, 4].astype(np.int64),
            current_cfg=scalars[:, 5].astype(np.int64),
        )

    def _reschedule(self, at: float) -> Plan:
        inst = self.instance(at)
        seconds = cpu = 0.0
        if inst.n_jobs:
            seed = int(np.random.SeedSequence([self.seed, self.events]).generate_state(1)[0])
            t0, c0 = _time.perf_counter(), _time.process_time()
            sol = solve(inst, self.method, seed=seed, **self.solver_options)
            cpu = _time.process_time() - c0
            seconds = float(sol.stats.get("seconds", _time.perf_counter() - t0))
            check_solution(sol)
        else:
            sol = Solution.empty(inst, self.method)
        plan = self._apply(sol, at)
        plan.solver_seconds, plan.solver_cpu_seconds = seconds, cpu
        self.time = at
        self.events += 1
        return plan

    def _apply(self, sol: Solution, at: float) -> Plan:
        """Map solver nodes onto physical ones, apply the solution, return the differences."""
        cat = self.catalog
        names = cat.vm_names
        jobs = list(self._jobs.values())
        cur_node = np.array([j.node for j in jobs], dtype=np.int64)
        cur_cfg = np.array([j.cfg for j in jobs], dtype=np.int64)
        perm = match_nodes(self._node_vm, sol.node_vm, cur_node, cur_cfg, sol.job_node, sol.job_cfg)
        new_vm = np.full(self.nodes, -1, dtype=np.int64)
        new_vm[perm] = sol.node_vm
        plan = Plan(time=at, method=self.method, objective=sol.objective, next_tick=at + self.H)
        for p in np.flatnonzero((self._node_vm >= 0) | (new_vm >= 0)).tolist():  # O(open), not O(N)
            old, new = int(self._node_vm[p]), int(new_vm[p])
            if old < 0 <= new:
                plan.open.append({"node": p, "vm": names[new]})
            elif new < 0 <= old:
                plan.close.append({"node": p, "vm": names[old]})
            elif old >= 0 and old != new:
                plan.resize.append({"node": p, "from": names[old], "to": names[new]})
            if new >= 0 and old != new and self.startup > 0:
                self._node_ready[p] = at + self.startup
                self.startup_cost += self._price[new] * self.startup
        self._node_vm = new_vm

        cfg_vm, cfg_gpus = self._cfg_vm, self._cfg_gpus

        def where(n: int, c: int) -> dict[str, Any]:
            return {"node": n, "vm": cfg_vm[c], "gpus": cfg_gpus[c]}

        new_node = np.where(sol.job_node >= 0, perm[np.maximum(sol.job_node, 0)], -1).tolist()
        new_cfg = sol.job_cfg.tolist()
        for i, job in enumerate(jobs):
            n, c = new_node[i], new_cfg[i]
            if (n, c) == (job.node, job.cfg):
                continue
            if job.cfg < 0:
                plan.start.append({"id": job.id, **where(n, c), "progress": job.progress})
                if job.start is None:
                    job.start = at
            else:
                lost = self._lose_work(job)
                if c < 0:
                    job.preemptions += 1
                    self.preemptions += 1
                    plan.preempt.append(
                        {"id": job.id, **where(job.node, job.cfg), "lost_work": lost}
                    )
                else:
                    job.migrations += 1
                    self.migrations += 1
                    plan.migrate.append(
                        {
                            "id": job.id,
                            "from": where(job.node, job.cfg),
                            "to": where(n, c),
                            "lost_work": lost,
                        }
                    )
            job.node, job.cfg = n, c
        plan.nodes = [
            {"node": p, "vm": names[self._node_vm[p]]}
            for p in np.flatnonzero(self._node_vm >= 0).tolist()
        ]
        plan.jobs = [
            (
                {"id": j.id, **where(j.node, j.cfg)}
                if j.cfg >= 0
                else {"id": j.id, "node": None, "vm": None, "gpus": None}
            )
            for j in jobs
        ]
        return plan

    def _lose_work(self, job: _Job) -> float:
        """Restart overhead: the job loses `overhead` seconds of work on its old configuration."""
        if self.overhead <= 0:
            return 0.0
        lost = lost_work(job.progress, float(job.work[job.cfg]), self.overhead)
        job.progress -= lost
        job.reported = None  # the real restart may lose more than predicted
        job.lost += lost
        c = job.cfg
        v = int(self.catalog.cfg_vm[c])
        share = self._price[v] * self._cfg_gpus[c] / int(self.catalog.gpus[v])
        self.lost_work_cost += lost * float(job.work[c]) * share
        return lost

    # -- persistence ------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything needed to continue exactly, as a JSON-able dict (see `restore`)."""
        names = self.catalog.vm_names
        cat = self.catalog

        def place(j: _Job) -> dict[str, Any] | None:
            if j.cfg < 0:
                return None
            return {
                "node": j.node,
                "vm": names[cat.cfg_vm[j.cfg]],
                "gpus": int(cat.cfg_gpus[j.cfg]),
            }

        state = {
            "version": STATE_VERSION,
            "catalog": self.catalog.to_dict(),
            "nodes": self.nodes,
            "method": self.method,
            "seed": self.seed,
            "params": {"H": self.H, "mu": self.mu, "rho": self.rho},
            "overhead": self.overhead,
            "startup": self.startup,
            "solver_options": self.solver_options,
            "node_ready": self._node_ready.tolist(),
            "time": self.time,
            "events": self.events,
            "node_vm": [names[v] if v >= 0 else None for v in self._node_vm],
            "jobs": [
                {
                    "id": j.id,
                    "release": j.release,
                    "due": j.due,
                    "weight": j.weight,
                    "work": [float(w) if math.isfinite(w) else None for w in j.work],
                    "progress": j.progress,
                    "placement": place(j),
                    "start": j.start,
                    "running": j.running,
                    "migrations": j.migrations,
                    "preemptions": j.preemptions,
                    "lost": j.lost,
                    "reported": j.reported,
                }
                for j in self._jobs.values()
            ],
            "completed": list(self._completed.values()),
            "vm_cost": self.vm_cost,
            "tardiness_cost": self.tardiness_cost,
            "migrations": self.migrations,
            "preemptions": self.preemptions,
            "lost_work_cost": self.lost_work_cost,
            "startup_cost": self.startup_cost,
        }
        try:
            json.dumps(state, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise StateError(f"state is not JSON-able (solver_options?): {exc}") from None
        return state

    @classmethod
    def restore(cls, state: Mapping[str, Any]) -> Rescheduler:
        """A Rescheduler continuing exactly where the one that produced `state` stopped."""
        if not isinstance(state, Mapping) or state.get("version") != STATE_VERSION:
            raise StateError(f"not a Rescheduler state of version {STATE_VERSION}")
        check_state(state)
        try:
            p = state["params"]
            r = cls(
                state["catalog"],
                state["nodes"],
                state["method"],
                seed=state["seed"],
                H=p["H"],
                mu=p["mu"],
                rho=p["rho"],
                overhead=state["overhead"],
                startup=state["startup"],
                **state["solver_options"],
            )
            cat = r.catalog
            r.time = state["time"]
            r.events = int(state["events"])
            r._node_vm = np.array(
                [-1 if v is None else cat.vm_index(v) for v in state["node_vm"]], dtype=np.int64
            )
            for d in state["jobs"]:
                pl = d["placement"]
                job = _Job(
                    id=d["id"],
                    release=d["release"],
                    due=d["due"],
                    weight=d["weight"],
                    work=np.array([math.inf if w is None else w for w in d["work"]]),
                    progress=d["progress"],
                    start=d["start"],
                    running=d["running"],
                    migrations=d["migrations"],
                    preemptions=d["preemptions"],
                    lost=d["lost"],
                    reported=d.get("reported"),
                )
                if pl is not None:
                    job.node, job.cfg = pl["node"], cat.config(cat.vm_index(pl["vm"]), pl["gpus"])
                r._jobs[job.id] = job
            r._completed = {d["id"]: dict(d) for d in state["completed"]}
            r.vm_cost, r.tardiness_cost = state["vm_cost"], state["tardiness_cost"]
            r.migrations, r.preemptions = state["migrations"], state["preemptions"]
            r.lost_work_cost, r.startup_cost = state["lost_work_cost"], state["startup_cost"]
            r._node_ready = np.array(state["node_ready"], dtype=np.float64).reshape(r.nodes)
        except (KeyError, TypeError, ValueError) as exc:
            raise StateError(f"corrupt Rescheduler state: {exc!r}") from None
        if len(r._node_vm) != r.nodes:
            raise StateError("corrupt Rescheduler state: node_vm does not have `nodes` entries")
        return r


#: what an event changes in a `_Job` and in the Rescheduler (`Rescheduler._savepoint`)
_JOB_STATE = (
    "progress",
    "node",
    "cfg",
    "start",
    "running",
    "migrations",
    "preemptions",
    "lost",
    "reported",
)
_TOTALS = (
    "time",
    "events",
    "vm_cost",
    "tardiness_cost",
    "migrations",
    "preemptions",
    "lost_work_cost",
    "startup_cost",
)
_STATE_FIELDS = (
    "catalog",
    "nodes",
    "method",
    "seed",
    "params",
    "overhead",
    "startup",
    "solver_options",
    "time",
    "events",
    "node_vm",
    "node_ready",
    "jobs",
    "completed",
    "vm_cost",
    "tardiness_cost",
    "migrations",
    "preemptions",
    "lost_work_cost",
    "startup_cost",
)
_COMPLETED_NUMBERS = (
    "release",
    "start",
    "completion",
    "due",
    "weight",
    "tardiness_cost",
    "jct",
    "waiting",
    "running",
    "lost_work",
)


def check_state(state: Mapping[str, Any]) -> None:
    """Check every field `Rescheduler.restore` reads; StateError naming the first bad one.

    Types and ranges are those of the constructor and the instance format (gpuaas.limits);
    besides, job ids are unique, each placement names an open node of the job's VM type with
    GPUs to spare and a configuration the job can run, and a state without a clock has no jobs.
    """
    try:
        _check_state(state)
    except InputError as exc:
        raise StateError(f"corrupt Rescheduler state: {exc}") from None


def _check_state(state: Mapping[str, Any]) -> None:
    def fail(where: str, problem: str) -> None:
        raise InputError(None, where, problem)

    def integer(where: str, value: Any, low: int = 0, high: int | None = None) -> int:
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < low
            or (high is not None and value > high)
        ):
            bounds = f">= {low}" if high is None else f"in {low}..{high}"
            fail(where, f"must be an integer {bounds}, got {brief(value)}")
        return int(value)

    def mapping(where: str, value: Any) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            fail(where, f"must be an object, got {brief(value)}")
        return value

    def listing(where: str, value: Any) -> list[Any]:
        if not isinstance(value, list):
            fail(where, f"must be a list, got {brief(value)}")
        return value

    for key in _STATE_FIELDS:
        if key not in state:
            fail(key, "missing required field")
    try:
        cat = load_catalog(state["catalog"])
    except InputError as exc:
        fail("catalog", exc.problem if exc.field is None else f"{exc.field}: {exc.problem}")
    nodes = check_nodes(state["nodes"])
    if not isinstance(state["method"], str):
        fail("method", f"must be a method name, got {brief(state['method'])}")
    get_method(state["method"])
    check_seed(state["seed"])
    params = mapping("params", state["params"])
    for k in ("H", "mu", "rho"):
        if k not in params:
            fail(f"params.{k}", "missing required field")
        _number(
            params[k],
            None,
            f"params.{k}",
            minimum=0.0,
            maximum=MAX_SECONDS if k == "H" else MAX_WEIGHT,
        )
    if params["H"] <= 0:
        fail("params.H", "must be > 0")
    for k in ("overhead", "startup"):
        _number(state[k], None, k, minimum=0.0, maximum=MAX_SECONDS)
    options = mapping("solver_options", state["solver_options"])
    try:
        check_options(state["method"], options)
    except InputError as exc:
        fail("solver_options", exc.problem)
    clock = state["time"]
    if clock is not None:
        _number(clock, None, "time", minimum=0.0, maximum=HORIZON)
    integer("events", state["events"])
    node_vm = listing("node_vm", state["node_vm"])
    if len(node_vm) != nodes:
        fail("node_vm", f"must have one entry per node ({nodes}), got {len(node_vm)}")
    for n, v in enumerate(node_vm):
        if v is not None and v not in cat.vm_names:
            fail(f"node_vm[{n}]", f"must be null or a VM type of the catalog, got {brief(v)}")
    ready = listing("node_ready", state["node_ready"])
    if len(ready) != nodes:
        fail("node_ready", f"must have one entry per node ({nodes}), got {len(ready)}")
    for n, t in enumerate(ready):
        _number(t, None, f"node_ready[{n}]", minimum=0.0, maximum=HORIZON + MAX_SECONDS)
    for k in ("vm_cost", "tardiness_cost", "lost_work_cost", "startup_cost"):
        _number(state[k], None, k, minimum=0.0)
    for k in ("migrations", "preemptions"):
        integer(k, state[k])
    jobs = listing("jobs", state["jobs"])
    completed = listing("completed", state["completed"])
    if clock is None and (jobs or completed):
        fail("time", "is null (no event yet) but the state has jobs")
    if len(jobs) > MAX_JOBS:
        fail("jobs", f"{len(jobs)} unfinished jobs; at most {MAX_JOBS} (gpuaas.limits)")
    ids: set[str] = set()
    for i, d in enumerate(completed):
        at = f"completed[{i}]"
        d = mapping(at, d)
        jid = d.get("id")
        if not isinstance(jid, str) or not jid or jid in ids:
            fail(f"{at}.id", f"must be a unique non-empty string, got {brief(jid)}")
        ids.add(jid)
        for k in _COMPLETED_NUMBERS:
            if k not in d:
                fail(f"{at}.{k}", "missing required field")
            _number(d[k], None, f"{at}.{k}")
        for k in ("migrations", "preemptions"):
            integer(f"{at}.{k}", d.get(k))
    used = [0] * nodes
    for i, d in enumerate(jobs):
        at = f"jobs[{i}]"
        d = mapping(at, d)
        for k in (
            "id",
            "release",
            "due",
            "weight",
            "work",
            "progress",
            "placement",
            "start",
            "running",
            "migrations",
            "preemptions",
            "lost",
        ):
            if k not in d:
                fail(f"{at}.{k}", "missing required field")
        jid = d["id"]
        if not isinstance(jid, str) or not jid or jid in ids:
            fail(f"{at}.id", f"must be a unique non-empty string, got {brief(jid)}")
        ids.add(jid)
        _number(d["release"], None, f"{at}.release", minimum=0.0, maximum=HORIZON)
        _number(d["due"], None, f"{at}.due", minimum=-MAX_SECONDS, maximum=MAX_SECONDS)
        _number(d["weight"], None, f"{at}.weight", minimum=0.0, maximum=MAX_WEIGHT)
        work = listing(f"{at}.work", d["work"])
        if len(work) != cat.n_configs:
            fail(
                f"{at}.work",
                f"must have one entry per configuration ({cat.n_configs}), got {len(work)}",
            )
        for c, w in enumerate(work):
            if w is not None:
                _number(w, None, f"{at}.work[{c}]", minimum=MIN_WORK, maximum=MAX_SECONDS)
        if all(w is None for w in work):
            fail(f"{at}.work", "no configuration can run the job")
        for k in ("progress", "reported"):
            if d.get(k) is not None:
                p = _number(d[k], None, f"{at}.{k}", minimum=0.0)
                if p >= 1.0:
                    fail(f"{at}.{k}", f"must be in [0, 1), got {p!r}")
        if d["progress"] is None:
            fail(f"{at}.progress", "must be a number, got None")
        if d["start"] is not None:
            _number(d["start"], None, f"{at}.start", minimum=0.0, maximum=HORIZON)
        _number(d["running"], None, f"{at}.running", minimum=0.0, maximum=HORIZON)
        _number(d["lost"], None, f"{at}.lost", minimum=0.0)
        for k in ("migrations", "preemptions"):
            integer(f"{at}.{k}", d[k])
        pl = d["placement"]
        if pl is None:
            continue
        pl = mapping(f"{at}.placement", pl)
        n = integer(f"{at}.placement.node", pl.get("node"), 0, nodes - 1)
        vm = pl.get("vm")
        if vm not in cat.vm_names:
            fail(f"{at}.placement.vm", f"must be a VM type of the catalog, got {brief(vm)}")
        v = cat.vm_index(vm)
        g = integer(f"{at}.placement.gpus", pl.get("gpus"), 1, int(cat.gpus[v]))
        if node_vm[n] != vm:
            fail(f"{at}.placement", f"node {n} runs {node_vm[n]}, not {vm}")
        if work[cat.config(v, g)] is None:
            fail(f"{at}.placement", f"the job cannot run on {vm} with {g} GPU(s)")
        used[n] += g
        if used[n] > int(cat.gpus[v]):
            fail(
                f"{at}.placement",
                f"node {n} ({vm}) would hold {used[n]} GPUs, more than {int(cat.gpus[v])}",
            )


def submitted_job(job: Any, catalog: Catalog, at: float, where: str = "job") -> _Job:
    """The record of a job submitted at `at` (released then unless it says earlier): a job
    object of the instance format, checked by `gpuaas.instance.parse_job`, or a `JobSpec`
    already checked (e.g. from a trace); a placement it gives is ignored (it waits)."""
    if isinstance(job, JobSpec):
        spec = job
        if len(spec.work) != catalog.n_configs:
            raise InputError(
                None,
                f"{where} ({spec.id}).work",
                f"has {len(spec.work)} entries, the catalog {catalog.n_configs} configurations",
            )
    else:
        spec = parse_job(job, catalog, None, where, release=at)
    if spec.release > at + TIME_TOL:
        raise InputError(
            None,
            f"{where} ({spec.id}).release",
            f"{spec.release:g} is after the submission time {at:g}",
        )
    return _Job(
        id=spec.id,
        release=min(spec.release, at),
        due=spec.due,
        weight=spec.weight,
        work=spec.work,
        progress=spec.progress,
        reported=spec.progress,
    )


def check_solution(sol: Solution) -> None:
    """Raise SolverError unless `sol` is feasible for its instance (vectorised P1 checks)."""
    inst, cat = sol.instance, sol.instance.catalog
    N, V, C = inst.nodes, cat.n_vms, cat.n_configs
    nv, jn, jc = sol.node_vm, sol.job_node, sol.job_cfg
    name = sol.method or "solver"
    if ((nv < -1) | (nv >= V)).any():
        raise SolverError(f"{name}: node VM type out of range")
    if ((jn < 0) != (jc < 0)).any() or (jn >= N).any() or (jc >= C).any() or (jn < -1).any():
        raise SolverError(f"{name}: job node/configuration out of range or set inconsistently")
    run = np.flatnonzero(jc >= 0)
    if (nv[jn[run]] != cat.cfg_vm[jc[run]]).any():
        j = run[np.flatnonzero(nv[jn[run]] != cat.cfg_vm[jc[run]])[0]]
        raise SolverError(
            f"{name}: job {inst.job_ids[j]} has a configuration of another VM type than its node"
        )
    if not np.isfinite(inst.times[run, jc[run]]).all():
        raise SolverError(f"{name}: a job was given a configuration it cannot run on")
    used = np.bincount(jn[run], weights=cat.cfg_gpus[jc[run]], minlength=N)
    hosted = np.bincount(jn[run], minlength=N)
    is_open = nv >= 0
    if (used[is_open] > cat.gpus[nv[is_open]]).any():
        raise SolverError(f"{name}: a node holds more GPUs than its VM type has")
    if (is_open & (hosted == 0)).any():
        raise SolverError(f"{name}: an open node hosts no job")


def match_nodes(
    old_vm: np.ndarray,
    new_vm: np.ndarray,
    cur_node: np.ndarray,
    cur_cfg: np.ndarray,
    job_node: np.ndarray,
    job_cfg: np.ndarray,
) -> np.ndarray:
    """The physical node `perm[s]` of each solver node s (the matching step, module docstring).

    A node closed both before and after has weight only on s == p, so every optimal assignment
    keeps it there: the assignment is solved among the nodes open before or after only (at most
    2 min(N, J)), on the weights of `match_weights`.
    """
    perm = np.arange(len(old_vm), dtype=np.int64)
    act, w = match_weights(old_vm, new_vm, cur_node, cur_cfg, job_node, job_cfg)
    if len(act):
        perm[act] = act[assign_max(w)]
    return perm


def match_weights(
    old_vm: np.ndarray,
    new_vm: np.ndarray,
    cur_node: np.ndarray,
    cur_cfg: np.ndarray,
    job_node: np.ndarray,
    job_cfg: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The nodes `act` open before or after, and the weight w[s, p] of solver node act[s] on
    physical node act[p]. Lexicographic, each level weighing more than all lower ones together:
    jobs kept in place (same physical node and configuration), VM type kept, an open node
    reused, s == p (scaled to the number of nodes)."""
    N = len(old_vm)
    act = np.flatnonzero((old_vm >= 0) | (new_vm >= 0))
    n = len(act)
    local = np.full(N, -1, dtype=np.int64)
    local[act] = np.arange(n)
    old, new = old_vm[act], new_vm[act]
    D = 1.0
    Cw = n + 1.0
    B = (n + 1.0) ** 2
    A = (n + 1.0) ** 3
    w = np.zeros((n, n))
    keep = (job_node >= 0) & (cur_node >= 0) & (job_cfg == cur_cfg)
    np.add.at(w, (local[job_node[keep]], local[cur_node[keep]]), A)
    s_open = (new >= 0)[:, None]
    w += B * (s_open & (new[:, None] == old[None, :]))
    w += Cw * (s_open & (old >= 0)[None, :])
    w += D * np.eye(n)
    return act, w


def assign_max(weight: np.ndarray) -> np.ndarray:
    """Maximum-weight perfect assignment of a square matrix: `perm[row] = column`.

    Hand-written rather than scipy's `linear_sum_assignment` (same assignments on the matching
    step's matrices): on those it takes half the time from 100 nodes up (0.09 against 0.17 ms
    at 200, 0.33 against 0.65 ms at 400) and spares every process importing scipy.optimize;
    `scripts/bench_assignment.py` measures both.
    """
    w = np.ascontiguousarray(weight, dtype=np.float64)
    return _hungarian(w.max() - w if w.size else w)


@njit(cache=True)
def _hungarian(cost):  # pragma: no cover - compiled
    """Minimum-cost assignment (Hungarian algorithm with potentials, O(n^3)); returns row -> col."""
    n = cost.shape[0]
    INF = np.inf
    u = np.zeros(n + 1)
    v = np.zeros(n + 1)
    p = np.zeros(n + 1, dtype=np.int64)  # p[col] = row matched to col (1-based, 0 = none)
    way = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = np.full(n + 1, INF)
        used = np.zeros(n + 1, dtype=np.bool_)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = INF
            j1 = 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1, j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    perm = np.zeros(n, dtype=np.int64)
    for j in range(1, n + 1):
        perm[p[j] - 1] = j - 1
    return perm
