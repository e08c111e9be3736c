"""The Rescheduler's records: a job's and a node's persistent fields, declared once, and what it
answers (`Plan` and its typed actions) or reports (`JobStatus`, `NodeStatus`).

**Declared once.** Every field of `Job` and `Node` says, in its declaration, how it is saved:
the fields of the instance format's job object (id, release, due, weight, work, progress and the
placement node / cfg) are saved as that object and read back through the checks of
`gpuaas.instance.parse_job`, so whatever `submit` accepts can be saved and restored; every other
field is saved under its name and checked on restore by the check it declares. Saving,
restoring, the savepoint that undoes a failed event (every field) and the instance view
(`INSTANCE_VIEW`) iterate over these declarations: a new field is one line here (and its use).
Values are never changed in place (an array or a mapping is replaced), so a savepoint copies
references.

**Columns.** What every event changes or reads of every unfinished job (`HOT`: progress,
running, segment, node, cfg, where its data is and until when it is on its way; and, never changed, `STATIC`, `work`) is also held as arrays, one
row per job (`Columns`, in the run's state): the clock's advance, the Instance a method gets
and the savepoint are array operations, and the Rescheduler's per-event work in Python is over
the jobs the event touches (issue 43). A job's record reads and writes its `HOT` fields in its
row; a record changed in an event is `touch`ed first, so that a failed event can be undone.

**Plans.** A `Plan`'s actions are typed records (`OpenVM`, `StartJob`, ...). Each is also a
read-only mapping of its JSON object, so `plan.start[0]["node"]`, `plan.to_dict()` and code
written against the dictionaries of earlier releases keep working.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np

from gpuaas import checks
from gpuaas.errors import InputError, brief
from gpuaas.limits import HORIZON

# -- declarations --------------------------------------------------------------------------


def _spec(instance: str | None = None) -> Any:
    """A field of the instance format's job object (saved as that object, `parse_job` checks
    it); `instance`: the Instance array it feeds."""
    return field(metadata={"saved": "job", "instance": instance})


def _saved(default: Any, check: Callable[[Any, str], Any], instance: str | None = None) -> Any:
    """A field saved under its own name, checked on restore by `check(value, where)`;
    `instance`: the Instance array it feeds."""
    return field(default=default, metadata={"saved": "own", "check": check, "instance": instance})


def _count(value: Any, where: str) -> int:
    return checks.integer(value, where, minimum=0)


def _time(value: Any, where: str) -> float | None:
    return checks.optional_number(value, where, minimum=0.0, maximum=HORIZON)


def _seconds(value: Any, where: str) -> float:
    return checks.number(value, where, minimum=0.0, maximum=HORIZON)


def _share(value: Any, where: str) -> float:
    return checks.number(value, where, minimum=0.0)


def _reported(value: Any, where: str) -> float | None:
    return None if value is None else checks.fraction(value, where)


def _entries(value: Any, where: str, size: int) -> list[list[Any]]:
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, (list, tuple)) and len(v) == size for v in value
    ):
        raise InputError(None, where, f"must be a list of {size}-element lists, got {brief(value)}")
    return [list(v) for v in value]


def _observed(value: Any, where: str) -> tuple[tuple[int, float, float], ...]:
    out = tuple(
        (
            checks.integer(c, f"{where}[{i}][0]", minimum=0),
            checks.number(e, f"{where}[{i}][1]", minimum=0.0, maximum=HORIZON),
            checks.number(w, f"{where}[{i}][2]", minimum=0.0),
        )
        for i, (c, e, w) in enumerate(_entries(value, where, 3))
    )
    if len({c for c, _, _ in out}) != len(out):
        raise InputError(None, where, "lists a configuration twice")
    return out


def _measured(value: Any, where: str) -> tuple[tuple[int, float], ...]:
    out = tuple(
        (
            checks.integer(c, f"{where}[{i}][0]", minimum=0),
            checks.number(m, f"{where}[{i}][1]", positive=True),
        )
        for i, (c, m) in enumerate(_entries(value, where, 2))
    )
    if len({c for c, _ in out}) != len(out):
        raise InputError(None, where, "lists a configuration twice")
    return out


def _anchor(value: Any, where: str) -> tuple[float, float] | None:
    if value is None:
        return None
    ((p, run),) = _entries([value], where, 2)
    return (checks.fraction(p, f"{where}[0]"), _seconds(run, f"{where}[1]"))


@dataclass(eq=False, slots=True)
class Job:
    """An unfinished job: its data, progress and place (node = cfg = -1: waiting).

    While the job is in a run's state its `HOT` fields live in that state's `Columns` (one
    row per unfinished job; `cols`, `row`): what every event changes or reads of every job is
    then an array operation, and the record reads and writes its row."""

    cols: Columns | None = field(default=None, init=False, repr=False)  # attached: its columns
    row: int = field(default=-1, init=False, repr=False)  # ... and its row in them
    id: str = _spec()
    release: float = _spec("release")
    due: float = _spec("due")
    weight: float = _spec("weight")
    work: np.ndarray = _spec("work")  # (C,) whole-job seconds per configuration, inf: cannot run
    progress: float = _spec("progress")  # fraction of the work done (predicted or measured)
    node: int = field(default=-1, metadata={"saved": "job", "instance": "current_node"})
    cfg: int = field(default=-1, metadata={"saved": "job", "instance": "current_cfg"})
    start: float | None = _saved(None, _time)  # first start; None: never ran here
    running: float = _saved(0.0, _seconds)  # seconds spent running so far
    migrations: int = _saved(0, _count)
    preemptions: int = _saved(0, _count)
    interruptions: int = _saved(0, _count)  # VMs lost under it (`Interruption` events)
    lost: float = _saved(0.0, _share)  # fraction of its work lost to restarts
    reported: float | None = _saved(None, _reported)  # last measured progress: a floor
    # the speed model (`gpuaas.rescheduler.speed`): per configuration it ran on, the seconds
    # observed and the predicted seconds of the progress made in them; per configuration, the
    # actual / predicted ratio a throughput report measured; the last measured (progress,
    # running) on its current placement, from which the next report's evidence is counted
    observed: tuple[tuple[int, float, float], ...] = _saved((), _observed)
    measured: tuple[tuple[int, float], ...] = _saved((), _measured)
    anchor: tuple[float, float] | None = _saved(None, _anchor)
    # involuntary moves apart from the voluntary ones above: the work its lost VMs cost it
    interrupted_work: float = _saved(0.0, _share)  # fraction of its work (part of `lost`)
    checkpoint: float = _saved(0.0, _seconds, "checkpoint")  # s between its checkpoints
    segment: float = _saved(0.0, _seconds)  # s run since it last (re)started: checkpoint clock
    # what it needs beside GPUs (docs/design.md): saved in its job object when declared
    cpus: float = field(default=0.0, metadata={"saved": "job", "instance": "cpus"})
    memory: float = field(default=0.0, metadata={"saved": "job", "instance": "memory"})
    # its checkpoint between locations (`gpuaas.transfer`): GB, where it is (the catalog's
    # `location_names`, -1: nowhere yet), until when it is on its way to where the job runs
    data_gb: float = field(default=0.0, metadata={"saved": "job", "instance": "data_gb"})
    data_at: int = field(default=-1, metadata={"saved": "job", "instance": "data_at"})
    data_ready: float = _saved(0.0, _seconds)
    # its workload's name (the co-location table's, `gpuaas.colocation`); saved in its job
    # object when given
    workload: str = field(default="", metadata={"saved": "job"})


@dataclass(frozen=True, slots=True)
class Node:
    """An open physical node: its VM type (catalog index) and when it can run jobs (start-up)."""

    vm: int = field(metadata={"saved": "vm"})  # saved as the VM type's name
    ready: float = _saved(0.0, _seconds)


#: the fields an event changes or reads of every unfinished job: columns of `Columns`
HOT = {"progress": np.float64, "running": np.float64, "segment": np.float64, "node": np.int64,
       "cfg": np.int64, "data_at": np.int64, "data_ready": np.float64}  # fmt: skip
#: the fields read from a job's record alone, never changed after submission (columns too)
STATIC = ("release", "due", "weight", "checkpoint", "cpus", "memory", "data_gb")


def _hot(name: str) -> property:
    """Job field `name` read from and written to its row of the columns while attached, its
    own slot otherwise."""
    slot = Job.__dict__[name]
    own_get, own_set = slot.__get__, slot.__set__

    def get(job: Job) -> Any:
        cols = job.cols
        return own_get(job) if cols is None else cols.hot[name][job.row].item()

    def set_(job: Job, value: Any) -> None:
        cols = job.cols
        if cols is None:
            own_set(job, value)
        else:
            cols.hot[name][job.row] = value

    return property(get, set_, doc=f"`Job.{name}` (its row of the columns while attached)")


_OWN = {name: Job.__dict__[name] for name in HOT}  # the records' own slots (detached jobs)
for _name in HOT:
    setattr(Job, _name, _hot(_name))


class Columns:
    """The unfinished jobs' `HOT` fields (and `STATIC` ones, their `work` rows, whether they
    have speed evidence: `evidence`) as arrays, one row per attached job; a row freed by a
    completed job is reused from the next event on (`snapshot`), so that the static columns,
    written only in free rows, need no copy to be put back. `order(jobs)` gives the rows of
    jobs in their order."""

    def __init__(self, n_configs: int) -> None:
        self.hot = {k: np.zeros(0, dtype=t) for k, t in HOT.items()}
        self.static = {k: np.zeros(0) for k in STATIC}
        self.work = np.zeros((0, n_configs))
        self.evidence = np.zeros(0, dtype=bool)  # observed or measured (`speed.ratio` applies)
        self.job: list[Job | None] = []  # row -> its job
        self.free: list[int] = []
        self.freed: list[int] = []  # rows freed in this event: free from the next one on

    def attach(self, job: Job) -> None:
        """Give `job` a row; its fields move there."""
        if not self.free:
            self._grow()
        row = self.free.pop()
        for k, own in _OWN.items():
            self.hot[k][row] = own.__get__(job)
        for k in STATIC:
            self.static[k][row] = getattr(job, k)
        self.work[row] = job.work
        self.evidence[row] = bool(job.observed or job.measured)
        self.job[row] = job
        job.cols, job.row = self, row

    def detach(self, job: Job) -> None:
        """`job` leaves (completed): its fields move back to its record, its row is free."""
        row = job.row
        for k, own in _OWN.items():
            own.__set__(job, self.hot[k][row].item())
        job.cols, job.row = None, -1
        self.job[row] = None
        self.freed.append(row)

    def _grow(self) -> None:
        n = len(self.job)
        m = max(8, 2 * n)
        grow = lambda a: np.concatenate([a, np.zeros((m - n, *a.shape[1:]), a.dtype)])  # noqa: E731
        self.hot = {k: grow(a) for k, a in self.hot.items()}
        self.static = {k: grow(a) for k, a in self.static.items()}
        self.work, self.evidence = grow(self.work), grow(self.evidence)
        self.job += [None] * (m - n)
        self.free += range(m - 1, n - 1, -1)  # popped from the end: lowest row first

    def order(self, jobs: Iterable[Job], n: int) -> np.ndarray:
        """(n,) the rows of the `n` attached `jobs`, in their order."""
        return np.fromiter(map(_ROW, jobs), np.int64, n)

    def snapshot(self) -> tuple[Any, ...]:
        """What `restore` puts back (`state.savepoint`, before an event; the rows freed before
        become free): the values are copied, the static columns (written only in free rows)
        referenced."""
        self.free += self.freed
        self.freed = []
        hot = {k: a.copy() for k, a in self.hot.items()}
        return hot, self.static, self.work, self.evidence.copy(), list(self.job), list(self.free)

    def restore(self, saved: tuple[Any, ...]) -> None:
        self.hot, self.static, self.work, self.evidence, job, free = saved
        self.job, self.free, self.freed = list(job), list(free), []


_ROW = attrgetter("row")

#: Job field names, in declaration order
JOB_FIELDS = tuple(f.name for f in dataclasses.fields(Job))
#: the fields kept in a job's record (not in the columns): what `touch` keeps
COLD = tuple(f for f in JOB_FIELDS if f not in HOT)
_COLD_VALUES = attrgetter(*COLD)


def touch(s: Any, job: Job) -> None:
    """Job `job`'s record is about to change in an event of the `state.RunState` s: keep
    what `state.rollback` puts back (`s.undo`; its columns are copied whole by the savepoint)."""
    if s.undo is not None:
        s.undo.append((job, _COLD_VALUES(job)))


#: Job fields saved under their own names, with their checks
JOB_SAVED = {
    f.name: f.metadata["check"] for f in dataclasses.fields(Job) if f.metadata.get("saved") == "own"
}
#: Node fields saved under their own names, with their checks
NODE_SAVED = {
    f.name: f.metadata["check"]
    for f in dataclasses.fields(Node)
    if f.metadata.get("saved") == "own"
}
#: Instance array -> the Job field it is made of (`Rescheduler.instance`)
INSTANCE_VIEW = {
    f.metadata["instance"]: f.name for f in dataclasses.fields(Job) if f.metadata.get("instance")
}

#: the record of a completed job (`Rescheduler.completions()`, `completed_record`)
COMPLETED_FIELDS = (
    "id",
    "release",
    "start",
    "completion",
    "due",
    "weight",
    "tardiness_cost",
    "jct",
    "waiting",
    "running",
    "migrations",
    "preemptions",
    "lost_work",
    "interruptions",
    "interrupted_work",
)


def completed_record(job: Job, at: float, tardiness_cost: float) -> dict[str, Any]:
    """What is kept of `job` completed at `at`: its times, costs and moves."""
    start = job.start if job.start is not None else at
    rec = {
        "id": job.id,
        "release": job.release,
        "start": start,
        "completion": at,
        "due": job.due,
        "weight": job.weight,
        "tardiness_cost": tardiness_cost,
        "jct": at - job.release,
        "waiting": at - job.release - job.running,
        "running": job.running,
        "migrations": job.migrations,
        "preemptions": job.preemptions,
        "lost_work": job.lost,
    }
    rec["interruptions"] = job.interruptions
    rec["interrupted_work"] = job.interrupted_work
    return rec


# -- what the Rescheduler reports ----------------------------------------------------------


class JobStatus(NamedTuple):
    """An unfinished job as the rescheduler sees it now (a copy: changing it changes nothing).

    `progress` is the predicted fraction of its work done (the measured one when reported).
    A waiting job has `node` = `cfg` = -1 and `vm`, `gpus`, `ready`, `eta`, `speed` None; a
    running one runs on physical node `node` with catalog configuration `cfg` (VM type `vm`,
    `gpus` GPUs), makes progress from `ready` on (when its node's VM finished starting up, see
    `startup`), runs `speed` times its predicted time there (the speed model's estimate) and
    ends at `eta` if it stays.
    """

    id: str
    progress: float
    node: int
    cfg: int
    vm: str | None
    gpus: int | None
    ready: float | None
    start: float | None  # first start, None if never started
    eta: float | None = None  # estimated completion where it runs
    speed: float | None = None  # estimated actual / predicted time where it runs


class NodeStatus(NamedTuple):
    """An open physical node: its VM type and the time from which it can run jobs (start-up)."""

    node: int
    vm: str
    ready: float


# -- plans ---------------------------------------------------------------------------------


class _Action(Mapping[str, Any]):
    """A typed plan record that reads as its JSON object too (keys, ``a["node"]``, ==)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return {k: _plain(getattr(self, k)) for k in _field_names(type(self))}

    def __getitem__(self, key: str) -> Any:
        # a field its JSON object names as itself: read directly, not through the whole
        # object (the simulator reads a plan's moves this way at every event)
        cls = type(self)
        if cls.to_dict is _Action.to_dict and key in _field_names(cls):
            return _plain(getattr(self, key))
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"

    __hash__ = None  # type: ignore[assignment]


@functools.cache
def _field_names(cls: type) -> dict[str, None]:
    """A plan record class's field names, in order (a dict: ordered, fast membership)."""
    return dict.fromkeys(f.name for f in dataclasses.fields(cls))


def _plain(value: Any) -> Any:
    return value.to_dict() if isinstance(value, _Action) else value


@dataclass(frozen=True, eq=False, repr=False)
class Place(_Action):
    """Where a job runs: physical node, VM type and GPUs."""

    node: int
    vm: str
    gpus: int


@dataclass(frozen=True, eq=False, repr=False)
class OpenVM(_Action):
    """Open a VM of type `vm` on node `node`."""

    node: int
    vm: str


class CloseVM(OpenVM):
    """Close node `node`'s VM (of type `vm`)."""


class PlannedNode(OpenVM):
    """An open node of the target state."""


@dataclass(frozen=True, eq=False, repr=False)
class ResizeVM(_Action):
    """Node `node` changes from VM type `old` to `new` (JSON keys "from", "to")."""

    node: int
    old: str
    new: str

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "from": self.old, "to": self.new}


@dataclass(frozen=True, eq=False, repr=False)
class StartJob(_Action):
    """A waiting job starts on `node` with `gpus` GPUs of VM type `vm`, from `progress`."""

    id: str
    node: int
    vm: str
    gpus: int
    progress: float


@dataclass(frozen=True, eq=False, repr=False)
class MigrateJob(_Action):
    """A running job moves (JSON keys "from", "to"), losing `lost_work` of its work."""

    id: str
    old: Place
    new: Place
    lost_work: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "from": self.old.to_dict(),
            "to": self.new.to_dict(),
            "lost_work": self.lost_work,
        }


@dataclass(frozen=True, eq=False, repr=False)
class PreemptJob(_Action):
    """A running job is stopped (it waits), losing `lost_work` of its work."""

    id: str
    node: int
    vm: str
    gpus: int
    lost_work: float


@dataclass(frozen=True, eq=False, repr=False)
class MoveData(_Action):
    """Job `id`'s checkpoint of `gb` GB moves from location `src` to `dst` (JSON keys "from",
    "to"; `gpuaas.transfer`) for `egress` $; the job runs there from `ready` on."""

    id: str
    src: str
    dst: str
    gb: float
    egress: float
    ready: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "from": self.src,
            "to": self.dst,
            "gb": self.gb,
            "egress": self.egress,
            "ready": self.ready,
        }


class InterruptedJob(PreemptJob):
    """A job whose node's VM was lost (`Interruption`): it waits, losing `lost_work`."""


@dataclass(frozen=True, eq=False, repr=False)
class PlannedJob(_Action):
    """An unfinished job of the target state (node, vm, gpus None: waiting)."""

    id: str
    node: int | None
    vm: str | None
    gpus: int | None


_ACTIONS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "open": lambda d: OpenVM(d["node"], d["vm"]),
    "resize": lambda d: ResizeVM(d["node"], d["from"], d["to"]),
    "close": lambda d: CloseVM(d["node"], d["vm"]),
    "start": lambda d: StartJob(d["id"], d["node"], d["vm"], d["gpus"], d["progress"]),
    "migrate": lambda d: MigrateJob(d["id"], Place(**d["from"]), Place(**d["to"]), d["lost_work"]),
    "preempt": lambda d: PreemptJob(d["id"], d["node"], d["vm"], d["gpus"], d["lost_work"]),
    "interrupted": lambda d: InterruptedJob(d["id"], d["node"], d["vm"], d["gpus"], d["lost_work"]),
    "nodes": lambda d: PlannedNode(d["node"], d["vm"]),
    "jobs": lambda d: PlannedJob(d["id"], d["node"], d["vm"], d["gpus"]),
    "transfer": lambda d: MoveData(d["id"], d["from"], d["to"], d["gb"], d["egress"], d["ready"]),
}


#: rescheduling points whose plans are kept for redelivered events: a redelivery answers the
#: last events unacknowledged, a handful; each plan lists every job (the ids themselves are all
#: kept, with their digests: `intake.redelivered`)
PLAN_MEMORY = 8


@dataclass
class Plan:
    """What to do at one rescheduling point, and the target state after doing it.

    Apply in this order: preempt, then close / resize VMs, open VMs, then move the data of
    jobs starting at another location (`transfer`), then start and migrate jobs. `nodes` and `jobs` give the whole target state (open nodes; placement of every
    unfinished job, `node: None` = waiting), so a plan can also be applied idempotently.
    `interrupted` lists the jobs whose VM was lost (their node is already gone: no action).
    """

    time: float
    submitted: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    open: list[OpenVM] = field(default_factory=list)
    resize: list[ResizeVM] = field(default_factory=list)
    close: list[CloseVM] = field(default_factory=list)
    start: list[StartJob] = field(default_factory=list)
    migrate: list[MigrateJob] = field(default_factory=list)
    preempt: list[PreemptJob] = field(default_factory=list)
    nodes: list[PlannedNode] = field(default_factory=list)
    jobs: list[PlannedJob] = field(default_factory=list)
    objective: float = 0.0  # P1$ of the solver's solution at this point (formulations/P1D.md)
    # (a zero-argument callable is evaluated at the first read: simulations never read it)
    method: str = ""
    solver_seconds: float = 0.0  # the method's own stats["seconds"]
    solver_cpu_seconds: float = 0.0  # process CPU time of the whole solve call
    next_tick: float = math.inf  # when to call tick() if nothing else happens
    interrupted: list[InterruptedJob] = field(default_factory=list)
    # False: a change of spot capacity that changed no decision (`apply.reschedule`, quiet):
    # not a rescheduling point, the plan is the last one's
    replanned: bool = True
    transfer: list[MoveData] = field(default_factory=list)  # checkpoints moving between places

    @property
    def changes(self) -> int:
        """Number of actions (VM and job changes) in the plan."""
        return sum(
            map(len, (self.open, self.resize, self.close, self.start, self.migrate, self.preempt))
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dictionary of the plan (`interrupted` only when a VM was lost, `transfer`
        when data moves, `replanned` only when False)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if (f.name in ("interrupted", "transfer") and not v) or (f.name == "replanned" and v):
                continue
            out[f.name] = [_plain(a) for a in v] if isinstance(v, list) else v
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """The plan of a `to_dict` object (a remembered plan, `Rescheduler.handle`)."""
        kw = {k: v for k, v in data.items() if k not in _ACTIONS}
        kw.update({k: [_ACTIONS[k](a) for a in data.get(k, [])] for k in _ACTIONS})
        return cls(**kw)

    def __str__(self) -> str:
        running = sum(j.node is not None for j in self.jobs)
        waiting = len(self.jobs) - running
        lines = [
            f"t={self.time:g}: {len(self.nodes)} node(s) open, {running} job(s) running, {waiting} waiting"
        ]
        lines += [f"  lost    {a.id} on node {a.node} {a.vm} (VM gone)" for a in self.interrupted]
        lines += [f"  open    node {a.node} {a.vm}" for a in self.open]
        lines += [f"  resize  node {a.node} {a.old} -> {a.new}" for a in self.resize]
        lines += [f"  close   node {a.node} {a.vm}" for a in self.close]
        lines += [f"  start   {a.id} on node {a.node} {a.vm} x{a.gpus}" for a in self.start]
        lines += [
            f"  migrate {a.id} node {a.old.node} {a.old.vm} x{a.old.gpus}"
            f" -> node {a.new.node} {a.new.vm} x{a.new.gpus}"
            for a in self.migrate
        ]
        lines += [f"  preempt {a.id} from node {a.node}" for a in self.preempt]
        lines += [f"  data    {a.id} {a.src} -> {a.dst} {a.gb:g} GB" for a in self.transfer]
        return "\n".join(lines)


def _plan_objective(plan: Plan) -> float:
    value = plan.__dict__["_objective"]
    if callable(value):
        value = plan.__dict__["_objective"] = float(value())
    return value


def _set_plan_objective(plan: Plan, value: float | Callable[[], float]) -> None:
    plan.__dict__["_objective"] = value


# P1$ costs a per-job LP over every job: the Rescheduler hands it over as a callable, computed
# when (if ever) `objective` is read, and then kept
Plan.objective = property(_plan_objective, _set_plan_objective)  # type: ignore[assignment]
