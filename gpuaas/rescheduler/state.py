"""The state of a running system as one record (`RunState`), and undoing a failed event.

A `Rescheduler` owns one `RunState` (`Rescheduler.run_state`) and passes it to the modules that
read or change it: `intake` (checks, redelivered events), `accounting` (the clock and what it
costs), `spot_estimates`, `budget` (disruption limits), `view` (the Instance and status views),
`apply` (solving and applying a plan) and `persistence` (saving and restoring). They read and
write its public fields; nothing else holds state. Callers outside the package read it only
(`Rescheduler`'s docstring): every change goes through events.

Undoing an event (`savepoint`, `rollback`) costs what the event touches, not what the state
holds: the unfinished jobs' per-event fields are columns (`records.Columns`: a few arrays, copied
whole), a job's record is kept as it was before the event changes it (`records.touch`), and the
totals, nodes and arrays are replaced, never changed in place, so their references are kept.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from gpuaas.catalog import Catalog
from gpuaas.rescheduler import speed
from gpuaas.rescheduler.records import COLD, PLAN_MEMORY, Columns, Job, Node, touch
from gpuaas.run_config import RunConfig

#: the running totals an event changes (`savepoint`); the first nine are reported totals
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
    "egress_cost",
    "transfers",
    "interruption_cost",
    "spot_cost",
    "spot_held",
    "spot_lost",
    "outage",
    "market",
    "spot_waiting",
    "seen",
    "colocation_seen",
)


@dataclass(eq=False)
class RunState:
    """Everything a Rescheduler knows: its configuration (never changed after construction),
    lookups derived from the catalog, what events change, and two caches (not state)."""

    # -- the configuration (the `config` part of a saved state) --------------------------------
    catalog: Catalog
    config: RunConfig
    H: float
    mu: float
    rho: float
    # the co-location table by workload name the decisions get (`gpuaas.colocation`; with
    # `config.colocation` "table"); None: none
    colocation: dict[str, dict[str, float]] | None = None
    # -- what events change (the `live` part, the completion and id logs) ----------------------
    time: float | None = None  # clock: time of the last event
    events: int = 0
    nodes: dict[int, Node] = field(default_factory=dict)  # open nodes, in node order
    capacity: dict[int, int] = field(default_factory=dict)  # VM type -> VMs (absent: any)
    jobs: dict[str, Job] = field(default_factory=dict)  # unfinished, in submission order
    completed: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> record
    log: list[str] = field(default_factory=list)  # completed ids in order: append-only
    plans: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=PLAN_MEMORY))
    ids: dict[str, str] = field(default_factory=dict)  # every event id applied -> digest
    id_log: list[str] = field(default_factory=list)  # those ids in order: append-only
    vm_cost: float = 0.0
    tardiness_cost: float = 0.0
    migrations: int = 0
    preemptions: int = 0
    interruptions: int = 0
    lost_work_cost: float = 0.0  # $: work lost to restarts, at the old configuration's GPU share
    startup_cost: float = 0.0  # $: VMs billed while starting up
    egress_cost: float = 0.0  # $: jobs' data moved between locations (`gpuaas.transfer`)
    transfers: int = 0  # moves of a job's data between locations
    interruption_cost: float = 0.0  # $: the part of lost_work_cost that interruptions lost
    spot_cost: float = 0.0  # $: the part of vm_cost billed for spot VMs
    # (time, count) of the voluntary moves at each of the last hour's events that had some
    recent_moves: tuple[tuple[float, int], ...] = ()
    # the completed jobs' speed evidence (`speed.pool`): how much of an error is the job's
    speed_pool: speed.Pool = speed.EMPTY_POOL
    # co-location factors learned from progress (`speed.learn_colocation`): each workload's
    # normal equations (`speed.PairEvidence`; replaced, never changed)
    colocation_seen: speed.PairEvidence = ()
    spot_held: np.ndarray = field(init=False)  # VM-seconds held per type (replaced)
    spot_lost: np.ndarray = field(init=False)  # interruptions seen per type (replaced)
    # per type: (seconds of the outages seen, outages seen, start of the one now or None)
    outage: dict[int, tuple[float, int, float | None]] = field(default_factory=dict)
    # per type told its capacity (`spot_estimates.set_capacity`): (seconds with capacity before
    # the last change, capacity drops seen as fractions of the count, start of the current
    # stretch with capacity or None, the count now: None no limit)
    market: dict[int, tuple[float, float, float | None, int | None]] = field(default_factory=dict)
    spot_waiting: int = 0  # jobs the last plan left waiting for spot (its `waiting_for_spot`)
    seen: float | None = None  # the last event's time, a quiet point's too (`time`: not those)
    # -- caches (not state) ----------------------------------------------------------------------
    # job id -> (observed, measured, share, estimated ratios): `speed.estimate`'s
    speed_cache: dict[str, tuple[Any, Any, float, np.ndarray | None]] = field(default_factory=dict)
    # the last plan's target: node -> PlannedNode, job id -> PlannedJob
    planned: tuple[dict[int, Any], dict[str, Any]] = field(default_factory=lambda: ({}, {}))
    # `planned` was changed in place since the savepoint (`apply.target`)
    planned_changed: bool = False
    # the open nodes as arrays (`node_arrays`): (the `nodes` dict they are of, node, vm, ready)
    node_cache: tuple[Any, ...] = (None,)
    # -- the unfinished jobs' columns (`records.Columns`; each job's row: `Job.row`), the rows
    # in `jobs` order (None: to compute), and what `touch` saved during an event (None: none)
    cols: Columns = field(init=False)
    # the jobs submitted, completed or placed anew since the last plan (`apply.target`)
    replan: dict[str, None] = field(default_factory=dict)
    renode: set[int] = field(default_factory=set)  # ... and the nodes opened, closed, resized
    rows: np.ndarray | None = None
    undo: list[tuple[Job, tuple[Any, ...]]] | None = None
    # -- lookups derived from the catalog (`__post_init__`) -----------------------------------
    cfg_vm: list[str] = field(init=False)  # configuration -> VM type name
    cfg_gpus: list[int] = field(init=False)  # configuration -> GPUs
    price: list[float] = field(init=False)  # VM type -> $/s
    spot: list[bool] = field(init=False)  # VM type -> spot or not
    price_array: np.ndarray = field(init=False)  # the same as arrays
    spot_array: np.ndarray = field(init=False)
    hardware: np.ndarray | None = field(init=False)  # configuration -> its hardware's

    def __post_init__(self) -> None:
        cat = self.catalog
        self.cfg_vm = [cat.vm_names[v] for v in cat.cfg_vm]  # plain lists: fast per-job lookups
        self.cfg_gpus = [int(g) for g in cat.cfg_gpus]
        self.price = [float(c) for c in cat.cost]
        self.spot = cat.spot.tolist()
        self.price_array = np.array(self.price)
        self.spot_array = np.array(self.spot, dtype=bool)
        # each configuration's hardware (a spot variant's: its on-demand type's), what the speed
        # model keys its evidence by: a job runs as fast on either
        self.hardware = cat.spot_configs() if cat.has_spot else None
        self.spot_held = np.zeros(cat.n_vms)
        self.spot_lost = np.zeros(cat.n_vms)
        self.cols = Columns(cat.n_configs)

    def add(self, job: Job) -> None:
        """A job joins the unfinished ones (last in their order)."""
        again = job.id in self.jobs
        self.cols.attach(job)
        self.jobs[job.id] = job
        # the rows kept up to date (a new array: a savepoint may hold the old one), not
        # rebuilt from every record at the next `order`
        self.rows = None if again or self.rows is None else np.append(self.rows, job.row)
        self.replan[job.id] = None

    def remove(self, jid: str) -> Job:
        """Job `jid` leaves the unfinished ones (its record keeps its fields)."""
        job = self.jobs.pop(jid)
        touch(self, job)
        if self.rows is not None:
            self.rows = self.rows[self.rows != job.row]
        self.cols.detach(job)
        self.replan[jid] = None
        return job

    def order(self) -> np.ndarray:
        """(J,) the unfinished jobs' rows of `cols`, in `jobs` order."""
        if self.rows is None:
            self.rows = self.cols.order(self.jobs.values(), len(self.jobs))
        return self.rows

    def node_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The open nodes (in node order), their VM types and ready times, as arrays."""
        if self.node_cache[0] is not self.nodes:
            nodes = self.nodes
            n = len(nodes)
            self.node_cache = (
                nodes,
                np.fromiter(nodes, np.int64, n),
                np.fromiter(map(_VM, nodes.values()), np.int64, n),
                np.fromiter(map(_READY, nodes.values()), np.float64, n),
            )
        return self.node_cache[1:]

    def node_vm(self) -> np.ndarray:
        """(N,) VM type of every node slot, -1: closed."""
        vm = np.full(self.config.nodes, -1, dtype=np.int64)
        nodes, vms, _ = self.node_arrays()
        vm[nodes] = vms
        return vm

    def held(self) -> np.ndarray:
        """(V,) VMs of each type open now."""
        return np.bincount(self.node_arrays()[1], minlength=self.catalog.n_vms)


_VM, _READY = attrgetter("vm"), attrgetter("ready")


def savepoint(s: RunState) -> tuple[Any, ...]:
    """What an event changes, kept so that `rollback` can undo it: the columns' values and
    references, the records an event changes as it changes them (`touch`)."""
    s.undo = []
    totals = tuple(getattr(s, k) for k in TOTALS)
    # `nodes` is replaced, never changed in place (`apply.apply`, `accounting`): referenced
    rest = (s.nodes, s.capacity, list(s.plans), s.recent_moves, s.speed_pool, s.planned)
    s.planned_changed = False
    cols = s.cols.snapshot()
    # the jobs in their order: given by their rows where known (an array an event replaces,
    # never changes) and the columns' records (`rollback` rebuilds the dict from them), not a
    # copy of the dict at every event
    jobs = None if s.rows is not None else dict(s.jobs)
    return jobs, s.rows, cols, totals, rest, len(s.completed), len(s.id_log)


def rollback(s: RunState, saved: tuple[Any, ...]) -> None:
    """Put back what `savepoint` kept: the state as it was before the event."""
    jobs, rows, cols, totals, rest, completed, ids = saved
    for job, values in reversed(s.undo or []):
        for f, v in zip(COLD, values):
            setattr(job, f, v)
    s.undo, s.replan, s.renode = None, {}, set()
    s.cols.restore(cols)
    if jobs is None:  # the dict as it was, from the rows' records in their order
        record = s.cols.job
        jobs = {j.id: j for j in map(record.__getitem__, rows.tolist())}
    s.jobs, s.rows = jobs, rows
    for k, v in zip(TOTALS, totals):
        setattr(s, k, v)
    s.nodes, s.capacity, plans, s.recent_moves, s.speed_pool, s.planned = rest
    if s.planned_changed:  # changed in place (`apply.target`): the next plan plans all anew
        s.planned, s.planned_changed = ({}, {}), False
    s.plans = deque(plans, maxlen=PLAN_MEMORY)
    for jid in s.log[completed:]:
        del s.completed[jid]
    del s.log[completed:]
    for i in s.id_log[ids:]:
        del s.ids[i]
    del s.id_log[ids:]
