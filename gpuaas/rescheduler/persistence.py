"""How a Rescheduler's state is saved, checked, migrated and restored, and how a job enters it.

A state (format `STATE_VERSION` 7) has four parts, so that a service saves each as often as it
changes and an event costs the same however many jobs completed or events came before:

- ``config``: what never changes: the catalog, P1's parameters (H, mu, rho), the
  `RunConfig` (method and options, seed, N, reconfiguration costs, tick) and the co-location
  table the decisions get (``colocation``, only when given: a state without it has none);
- ``live``: what events change: the clock, the event count, the running totals, the voluntary
  moves of the last hour (the budget of `RunConfig.moves_per_hour`), the completed jobs' speed
  evidence (`speed.pool`), the co-location factors learned (``colocation_seen``, only when
  some are: absent, none), the open nodes, the capacity of VM types, the spot VM-seconds held
  and interruptions seen per spot type (`spot_held`, the interruption-rate estimate), the
  spot capacity outages seen per type (`outages`: seconds out, outages, the current one's
  start), what each type's capacity did (`market`: seconds with capacity, drops, the current
  stretch's start, the count; the capacity-drop rate), the jobs the last plan left waiting for
  spot (`spot_waiting`), the time of the last event, a capacity change that was no
  rescheduling point included (`seen`), the unfinished jobs (with their speed evidence and checkpoint clocks), the plans kept for
  redelivered events and the number of completion records and of event ids (so that a restore
  knows the logs it gets are whole);
- ``completed``: the completion log, append-only (`Rescheduler.completion_log(n)` gives the
  records a service has not saved yet);
- ``ids``: the id log, append-only: [event id, digest] of every event id applied
  (`Rescheduler.id_log(n)`), so that an id reused for another event is refused for good.

Restore checks every field and names the first bad one (StateError): each job through the
checks of a submitted job (`gpuaas.instance.parse_job`, on its instance-format object), every
other field through the check `records.py` declares for it, and the times in order (release
<= start <= the clock, no more running time than since the first start, completions before the
clock). A state of an earlier version is migrated first (`gpuaas.rescheduler.migrations`); a later version is
refused: it was written by a newer gpuaas; so is a state labelled an earlier version that has a
field a later format added (`ADDED`): migrating it would wipe what that field holds.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuaas import checks
from gpuaas.catalog import Catalog, load_catalog
from gpuaas.colocation import check_name, parse_table
from gpuaas.errors import InputError, StateError, brief
from gpuaas.instance import (
    DEMANDS,
    JobSpec,
    _check_placements,
    check_id,
    data_fields,
    fits_alone,
    parse_job,
    times_object,
    work_list,
)
from gpuaas.limits import HORIZON, MAX_COUNT, MAX_ID, MAX_JOBS, MAX_MONEY
from gpuaas.rescheduler import spot_estimates
from gpuaas.rescheduler.events import TIME_TOL
from gpuaas.rescheduler.records import (
    COMPLETED_FIELDS,
    JOB_SAVED,
    NODE_SAVED,
    PLAN_MEMORY,
    Job,
    Node,
    Plan,
)
from gpuaas.run_config import RunConfig

if TYPE_CHECKING:
    from gpuaas.rescheduler.core import Rescheduler
    from gpuaas.rescheduler.state import RunState

from gpuaas.rescheduler.migrations import STATE_VERSION, migrate

#: the running totals of the live part: money (>= 0) and counts (integers >= 0)
MONEY = (
    "vm_cost",
    "tardiness_cost",
    "lost_work_cost",
    "startup_cost",
    "interruption_cost",
    "spot_cost",
    "egress_cost",
)
COUNTS = ("migrations", "preemptions", "interruptions", "transfers")


# -- a job enters ---------------------------------------------------------------------------


def submitted_job(
    job: Any, catalog: Catalog, at: float, where: str = "job", checkpoint: float = 0.0
) -> Job:
    """The record of a job submitted at `at` (released then unless it says earlier): a job
    object of the instance format, checked by `gpuaas.instance.parse_job`, or a `JobSpec`
    already checked (e.g. from a trace; its times on the on-demand types only are those of
    their spot variants too); a placement it gives is ignored (it waits). `checkpoint`: the
    interval of a job that gives none."""
    if isinstance(job, JobSpec):
        spec = job
        if catalog.has_spot and len(spec.work) == int(catalog.cfg_count[~catalog.spot].sum()):
            spec = dataclasses.replace(spec, work=catalog.spot_work(spec.work))
        if len(spec.work) != catalog.n_configs:
            raise InputError(
                None,
                f"{where} ({spec.id}).work",
                f"has {len(spec.work)} entries, the catalog {catalog.n_configs} configurations",
            )
    else:
        spec = parse_job(job, catalog, None, where, release=at)
    if spec.cpus or spec.memory:  # the "alone" rule (docs/design.md), as the Instance keeps it
        work = np.where(fits_alone(catalog, spec.cpus, spec.memory)[0], spec.work, np.inf)
        if not np.isfinite(work).any():
            raise InputError(
                None,
                f"{where} ({spec.id})",
                f"needs {spec.cpus:g} vCPUs and {spec.memory:g} GiB of memory: no VM type of "
                "the catalog it can run on has them",
            )
        spec = dataclasses.replace(spec, work=work)
    if spec.release > at + TIME_TOL:
        raise InputError(
            None,
            f"{where} ({spec.id}).release",
            f"{spec.release:g} is after the submission time {at:g}",
        )
    return Job(
        id=spec.id,
        release=min(spec.release, at),
        due=spec.due,
        weight=spec.weight,
        work=spec.work,
        progress=spec.progress,
        reported=spec.progress,
        checkpoint=checkpoint if spec.checkpoint is None else spec.checkpoint,
        cpus=spec.cpus,
        memory=spec.memory,
        data_gb=spec.data_gb,
        data_at=spec.data_at,
        workload=spec.workload,
    )


# -- saving ---------------------------------------------------------------------------------


def state(s: RunState) -> dict[str, Any]:
    """The four parts (module docstring)."""
    out = {
        "version": STATE_VERSION,
        "config": config_state(s),
        "live": live_state(s),
        "completed": completion_log(s),
        "ids": id_log(s),
    }
    try:
        json.dumps(out, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StateError(f"state is not JSON-able (solver_options?): {exc}") from None
    return out


def config_state(s: RunState) -> dict[str, Any]:
    out = {
        "catalog": s.catalog.to_dict(),
        "params": {"H": s.H, "mu": s.mu, "rho": s.rho},
        "run": s.config.to_dict(),
    }
    if s.colocation is not None:
        out["colocation"] = s.colocation
    return out


def live_state(s: RunState) -> dict[str, Any]:
    names = s.catalog.vm_names
    cat = s.catalog

    def job(j: Job) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": j.id,
            "release": j.release,
            "due": j.due,
            "weight": j.weight,
            "work": work_list(j.work),
            "progress": j.progress,
            "placement": None
            if j.cfg < 0
            else {"node": j.node, "vm": names[cat.cfg_vm[j.cfg]], "gpus": int(cat.cfg_gpus[j.cfg])},
        }
        d.update({k: getattr(j, k) for k in DEMANDS if getattr(j, k)})  # declared only
        d.update(data_fields(cat, j.data_gb, j.data_at))  # as the instance format says
        if j.workload:
            d["workload"] = j.workload
        d.update({k: _lists(getattr(j, k)) for k in JOB_SAVED})
        return d

    live: dict[str, Any] = {"time": s.time, "events": s.events}
    live.update({k: getattr(s, k) for k in MONEY + COUNTS})
    live["nodes"] = [
        {"node": p, "vm": names[n.vm], **{k: getattr(n, k) for k in NODE_SAVED}}
        for p, n in s.nodes.items()
    ]
    live["capacity"] = spot_estimates.named_capacity(s)
    live["recent_moves"] = _lists(s.recent_moves)
    live["speed_pool"] = _lists(s.speed_pool)
    if s.colocation_seen:
        live["colocation_seen"] = _lists(s.colocation_seen)
    live["spot_held"] = {
        names[v]: [float(s.spot_held[v]), int(s.spot_lost[v])]
        for v in np.flatnonzero(s.spot_held + s.spot_lost)
    }
    live["outages"] = {names[v]: list(o) for v, o in s.outage.items()}
    live["market"] = {names[v]: list(m) for v, m in s.market.items()}
    live["spot_waiting"] = s.spot_waiting
    live["seen"] = s.seen
    live["jobs"] = [job(j) for j in s.jobs.values()]
    live["plans"] = list(s.plans)
    live["completed"] = len(s.completed)
    live["ids"] = len(s.id_log)
    return live


def _lists(value: Any) -> Any:
    """A saved field as JSON reads it back: tuples (the speed evidence) as lists."""
    return [_lists(v) for v in value] if isinstance(value, tuple) else value


def completion_log(s: RunState, start: int = 0) -> list[dict[str, Any]]:
    start = checks.integer(start, "start", minimum=0)
    return [dict(s.completed[jid]) for jid in s.log[start:]]


def id_log(s: RunState, start: int = 0) -> list[list[str]]:
    start = checks.integer(start, "start", minimum=0)
    return [[i, s.ids[i]] for i in s.id_log[start:]]


# -- restoring ------------------------------------------------------------------------------


def restore(cls: type[Rescheduler], state: Any) -> Rescheduler:
    state = migrate(state)
    try:
        return _restore(cls, state)
    except InputError as exc:
        raise StateError(f"corrupt Rescheduler state: {exc}") from None


def _fail(where: str, problem: str) -> None:
    raise InputError(None, where, problem)


def _per_vm(
    cat: Any, live: Mapping[str, Any], field: str, length: int, shape: str, spot: bool = False
) -> Iterator[tuple[int, list, str]]:
    """(VM index, row, field path) of each entry of `live[field]`, an object of rows by VM type
    name, each a list of `length` items (`shape` names them in the error); `spot`: spot types
    only."""
    for vm, row in _fields(f"live.{field}", live[field], ()).items():
        at = f"live.{field}.{vm}"
        if vm not in cat.vm_names or (spot and not cat.spot[cat.vm_index(vm)]):
            _fail(at, f"not a {'spot ' if spot else ''}VM type of the catalog")
        if not isinstance(row, list) or len(row) != length:
            _fail(at, f"must be {shape}, got {brief(row)}")
        yield cat.vm_index(vm), row, at


def _fields(where: str, value: Any, required: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        _fail(where, f"must be an object, got {brief(value)}")
    for k in required:
        if k not in value:
            _fail(f"{where}.{k}" if where else k, "missing required field")
    return value


def _list(where: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        _fail(where, f"must be a list, got {brief(value)}")
    return value


def _restore(cls: type[Rescheduler], state: Mapping[str, Any]) -> Rescheduler:
    _fields("", state, ("config", "live", "completed", "ids"))
    conf = _fields("config", state["config"], ("catalog", "params", "run"))
    try:
        cat = load_catalog(conf["catalog"])
    except InputError as exc:
        where = "config.catalog" + ("" if exc.field is None else f".{exc.field}")
        raise InputError(None, where, exc.problem) from None
    params = _fields("config.params", conf["params"], ("H", "mu", "rho"))
    run = RunConfig.from_dict(conf["run"], "config.run")
    try:
        r = cls(cat, config=run, H=params["H"], mu=params["mu"], rho=params["rho"])
    except InputError as exc:
        raise InputError(None, f"config.params.{exc.field}", exc.problem) from None
    if "colocation" in conf:
        r.run_state.colocation = parse_table(conf["colocation"], None, "config.colocation")
    s = r.run_state
    live = _fields(
        "live",
        state["live"],
        (
            "time",
            "events",
            *MONEY,
            *COUNTS,
            "recent_moves",
            "speed_pool",
            "nodes",
            "capacity",
            "spot_held",
            "outages",
            "market",
            "spot_waiting",
            "seen",
            "jobs",
            "plans",
        ),
    )
    _fields("live", live, ("completed", "ids"))
    clock = checks.optional_number(live["time"], "live.time", minimum=0.0, maximum=HORIZON)
    s.time = clock
    s.events = checks.integer(live["events"], "live.events", minimum=0)
    for k in MONEY:
        setattr(s, k, checks.number(live[k], f"live.{k}", minimum=0.0, maximum=MAX_MONEY))
    for k in COUNTS:
        setattr(s, k, checks.integer(live[k], f"live.{k}", minimum=0))
    s.nodes = _nodes(live["nodes"], cat, s.config.nodes)
    for p, n in s.nodes.items():
        if clock is None or n.ready > clock + s.config.startup + TIME_TOL + 1e-9 * clock:
            _fail(
                f"live.nodes (node {p}).ready",
                f"{n.ready!r} is later than the clock plus the start-up ({s.config.startup:g} s)",
            )
    capacity = _fields("live.capacity", live["capacity"], ())
    for vm, k in capacity.items():
        if vm not in cat.vm_names:
            _fail(f"live.capacity.{vm}", "not a VM type of the catalog")
        checks.integer(k, f"live.capacity.{vm}", minimum=0)
    s.capacity = {cat.vm_index(vm): k for vm, k in sorted(capacity.items())}
    s.recent_moves = _recent_moves(live["recent_moves"], clock)
    s.speed_pool = _speed_pool(live["speed_pool"])
    s.colocation_seen = _colocation_seen(live.get("colocation_seen", []))
    for v, pair, at in _per_vm(
        cat, live, "spot_held", 2, "[seconds held, interruptions]", spot=True
    ):
        s.spot_held[v] = checks.number(pair[0], f"{at}[0]", minimum=0.0)
        s.spot_lost[v] = checks.integer(pair[1], f"{at}[1]", minimum=0)
    for v, o, at in _per_vm(cat, live, "outages", 3, "[seconds, outages, start or null]"):
        s.outage[v] = (
            checks.number(o[0], f"{at}[0]", minimum=0.0),
            checks.integer(o[1], f"{at}[1]", minimum=0),
            checks.optional_number(o[2], f"{at}[2]", minimum=0.0, maximum=HORIZON),
        )
    shape = "[seconds, drops, start or null, count or null]"
    for v, m, at in _per_vm(cat, live, "market", 4, shape):
        s.market[v] = (
            checks.number(m[0], f"{at}[0]", minimum=0.0, maximum=HORIZON),
            checks.number(m[1], f"{at}[1]", minimum=0.0, maximum=float(MAX_COUNT)),
            checks.optional_number(m[2], f"{at}[2]", minimum=0.0, maximum=HORIZON),
            None if m[3] is None else checks.integer(m[3], f"{at}[3]", minimum=0),
        )
    s.spot_waiting = checks.integer(live["spot_waiting"], "live.spot_waiting", minimum=0)
    s.seen = checks.optional_number(live["seen"], "live.seen", minimum=0.0, maximum=HORIZON)
    if s.seen is not None and clock is not None and s.seen < clock:
        _fail("live.seen", f"{s.seen!r} is before the clock {clock!r}")
    jobs = _list("live.jobs", live["jobs"])
    completed = _list("completed", state["completed"])
    if clock is None and (jobs or completed or s.nodes):
        _fail("live.time", "is null (no event yet) but the state has jobs or nodes")
    if len(jobs) > MAX_JOBS:
        _fail("live.jobs", f"{len(jobs)} unfinished jobs; at most {MAX_JOBS} (gpuaas.limits)")
    if checks.integer(live["completed"], "live.completed", minimum=0) != len(completed):
        _fail(
            "completed",
            f"has {len(completed)} records but the live part counts {live['completed']}: "
            "the completion log is not whole",
        )
    tol = TIME_TOL + 1e-9 * (clock or 0.0)
    for i, d in enumerate(completed):
        d = _completed(f"completed[{i}]", d, clock, tol)
        if d["id"] in s.completed:
            _fail(f"completed[{i}].id", f"{d['id']!r} is listed twice")
        s.completed[d["id"]] = d
        s.log.append(d["id"])
    for job in _jobs(jobs, cat, s, clock, tol).values():
        s.add(job)
    hosted = {j.node: j.cfg for j in s.jobs.values() if j.cfg >= 0}
    for p, n in s.nodes.items():
        # every plan closes the nodes its jobs leave (`matching.check_solution`)
        if p not in hosted:
            _fail(f"live.nodes (node {p})", "is open but hosts no job")
        if int(cat.cfg_vm[hosted[p]]) != n.vm:
            _fail(f"live.nodes (node {p})", f"runs {cat.vm_names[n.vm]}, its jobs another VM type")
    s.ids, s.id_log = _id_log(state["ids"], live["ids"])
    plans = _list("live.plans", live["plans"])
    if len(plans) > PLAN_MEMORY:
        _fail("live.plans", f"{len(plans)} plans; at most {PLAN_MEMORY} are kept")
    for i, p in enumerate(plans):
        p = _fields(f"live.plans[{i}]", p, ("ids", "plan"))
        for eid, digest in _digests(f"live.plans[{i}].ids", p["ids"]).items():
            if s.ids.get(eid) != digest:
                _fail(f"live.plans[{i}].ids.{eid}", "is not in the id log with that digest")
        try:
            Plan.from_dict(p["plan"])
        except (KeyError, TypeError, AttributeError) as exc:
            _fail(f"live.plans[{i}].plan", f"is not a plan: {exc!r}")
    s.plans.extend(dict(p) for p in plans)
    return r


def _id_log(value: Any, count: Any) -> tuple[dict[str, str], list[str]]:
    """The id log ([[event id, digest], ...], ids once each) and the live part's count of it."""
    ids: dict[str, str] = {}
    for i, pair in enumerate(_list("ids", value)):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(v, str) and 0 < len(v) <= MAX_ID for v in pair)
        ):
            _fail(f"ids[{i}]", f"must be [event id, digest] (strings), got {brief(pair)}")
        if pair[0] in ids:
            _fail(f"ids[{i}]", f"{pair[0]!r} is listed twice")
        ids[pair[0]] = pair[1]
    if checks.integer(count, "live.ids", minimum=0) != len(ids):
        _fail(
            "ids",
            f"has {len(ids)} ids but the live part counts {count}: the id log is not whole",
        )
    return ids, list(ids)


def _colocation_seen(value: Any) -> Any:
    """The learned co-location evidence (`speed.PairEvidence`): [[workload, workload beside
    it, workload or "", number], ...]; a Gram entry (a third name) is >= 0."""
    rows = _list("live.colocation_seen", value)
    out = []
    for i, row in enumerate(rows):
        at = f"live.colocation_seen[{i}]"
        if not isinstance(row, list) or len(row) != 4:
            _fail(at, f'must be [workload, workload, workload or "", number], got {brief(row)}')
        a, b = (check_name(x, None, f"{at}[{k}]") for k, x in enumerate(row[:2]))
        c = row[2] if row[2] == "" else check_name(row[2], None, f"{at}[2]")
        v = checks.number(row[3], f"{at}[3]", minimum=0.0 if c else None, maximum=MAX_MONEY)
        out.append((a, b, c, v))
    return tuple(sorted(out))


def _speed_pool(value: Any) -> tuple[int, float, int, float]:
    """[observations, Σ y², degrees of freedom, Σ within-job squares] (`speed.pool`)."""
    if not isinstance(value, list) or len(value) != 4:
        _fail("live.speed_pool", f"must be a list of 4 numbers, got {brief(value)}")
    n, sq, dof, within = value
    return (
        checks.integer(n, "live.speed_pool[0]", minimum=0),
        checks.number(sq, "live.speed_pool[1]", minimum=0.0),
        checks.integer(dof, "live.speed_pool[2]", minimum=0),
        checks.number(within, "live.speed_pool[3]", minimum=0.0),
    )


def _recent_moves(value: Any, clock: float | None) -> tuple[tuple[float, int], ...]:
    """[[time, count], ...]: voluntary moves at times within the hour before the clock, in
    order; two entries of one time (written before issue 39, one per rescheduling point at
    that instant) are added up, as the budget counts them."""
    out: list[tuple[float, int]] = []
    for i, m in enumerate(_list("live.recent_moves", value)):
        at = f"live.recent_moves[{i}]"
        if not isinstance(m, list) or len(m) != 2:
            _fail(at, f"must be [time, count], got {brief(m)}")
        t = checks.number(m[0], f"{at}[0]", minimum=0.0, maximum=HORIZON)
        if clock is None or not clock - 3600.0 < t <= clock or (out and t < out[-1][0]):
            _fail(f"{at}[0]", f"{t!r} is not in the hour before the clock, after the previous")
        k = checks.integer(m[1], f"{at}[1]", minimum=1, maximum=MAX_COUNT)
        if out and t == out[-1][0]:
            out[-1] = (t, out[-1][1] + k)
        else:
            out.append((t, k))
    return tuple(out)


def _digests(where: str, value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        _fail(where, f"must map event ids to digests (strings), got {brief(value)}")
    return dict(value)


def _nodes(value: Any, cat: Catalog, N: int) -> dict[int, Node]:
    out: dict[int, Node] = {}
    for i, d in enumerate(_list("live.nodes", value)):
        at = f"live.nodes[{i}]"
        d = _fields(at, d, ("node", "vm", *NODE_SAVED))
        p = checks.integer(d["node"], f"{at}.node", minimum=0, maximum=N - 1)
        if p in out:
            _fail(f"{at}.node", f"node {p} is listed twice")
        if d["vm"] not in cat.vm_names:
            _fail(f"{at}.vm", f"must be a VM type of the catalog, got {brief(d['vm'])}")
        own = {k: check(d[k], f"{at}.{k}") for k, check in NODE_SAVED.items()}
        out[p] = Node(cat.vm_index(d["vm"]), **own)
    return dict(sorted(out.items()))


def _jobs(
    value: list[Any], cat: Catalog, s: RunState, clock: float | None, tol: float
) -> dict[str, Job]:
    """The unfinished jobs: each through `parse_job` (its instance-format object) and the
    declared checks of its other fields; placements on open nodes of their VM type, within
    capacity (`gpuaas.instance._check_placements`)."""
    specs: list[JobSpec] = []
    out: dict[str, Job] = {}
    for i, d in enumerate(value):
        at = f"live.jobs[{i}]"
        d = _fields(at, d, ("id", "release", "due", "weight", "work", "progress", "placement"))
        _fields(at, d, tuple(JOB_SAVED))
        work = _list(f"{at}.work", d["work"])
        if len(work) != cat.n_configs:
            _fail(
                f"{at}.work",
                f"must have one entry per configuration ({cat.n_configs}), got {len(work)}",
            )
        obj = {k: d[k] for k in ("id", "release", "due", "weight", "progress", "placement")}
        obj |= {k: d[k] for k in (*DEMANDS, "data_gb", "data_at", "workload") if k in d}
        spec = parse_job(obj | {"times": times_object(work, cat)}, cat, None, at)
        if spec.id in out or spec.id in s.completed:
            _fail(f"{at}.id", f"{spec.id!r} is listed twice")
        own = {k: check(d[k], f"{at}.{k}") for k, check in JOB_SAVED.items()}
        job = Job(
            id=spec.id,
            release=spec.release,
            due=spec.due,
            weight=spec.weight,
            work=spec.work,
            progress=spec.progress,
            node=spec.node,
            cfg=spec.cfg,
            cpus=spec.cpus,
            memory=spec.memory,
            data_gb=spec.data_gb,
            data_at=spec.data_at,
            workload=spec.workload,
            **own,
        )
        _in_order(at, job, clock, tol)
        for c in [e[0] for e in job.observed] + [m[0] for m in job.measured]:
            if c >= cat.n_configs or not math.isfinite(job.work[c]):
                _fail(f"{at}.observed", f"configuration {c} is not one the job runs on")
        if job.anchor is not None and (job.cfg < 0 or job.anchor[1] > job.running + tol):
            _fail(f"{at}.anchor", "is set for a waiting job or after its running time")
        if job.cfg >= 0 and job.node not in s.nodes:
            _fail(f"{at}.placement", f"node {job.node} is not open")
        specs.append(spec)
        out[job.id] = job
    _check_placements(specs, cat, s.config.nodes, None)
    return out


def _in_order(at: str, job: Job, clock: float | None, tol: float) -> None:
    """release <= start <= clock, running <= clock - start (no negative waiting or JCT)."""
    now = clock if clock is not None else 0.0
    if job.release > now + tol:
        _fail(f"{at}.release", f"{job.release!r} is after the clock {now!r}")
    if job.start is None:
        if job.running > 0 or job.cfg >= 0:
            _fail(f"{at}.start", "is null (never started) but the job ran")
        return
    if not job.release - tol <= job.start <= now + tol:
        _fail(f"{at}.start", f"{job.start!r} is not between its release and the clock {now!r}")
    if job.running > now - job.start + tol:
        _fail(
            f"{at}.running",
            f"{job.running!r} s is more than the {now - job.start!r} s since it started",
        )


def _completed(at: str, d: Any, clock: float | None, tol: float) -> dict[str, Any]:
    """A completion record: its fields, and release <= start <= completion <= clock."""
    d = _fields(at, d, COMPLETED_FIELDS)
    unknown = sorted(set(d) - set(COMPLETED_FIELDS), key=str)
    if unknown:
        _fail(f"{at}.{unknown[0]}", "unknown field of a completion record")
    check_id(d["id"], None, at)
    for k in COMPLETED_FIELDS[1:]:
        if k in ("migrations", "preemptions", "interruptions"):
            checks.integer(d[k], f"{at}.{k}", minimum=0)
        elif k in ("release", "start", "completion"):
            checks.number(d[k], f"{at}.{k}", minimum=0.0, maximum=HORIZON)
        elif k == "due":
            checks.number(d[k], f"{at}.{k}")
        else:
            checks.number(d[k], f"{at}.{k}", minimum=-tol, maximum=MAX_MONEY)
    now = clock if clock is not None else 0.0
    if not d["release"] - tol <= d["start"] <= d["completion"] + tol <= now + 2 * tol:
        _fail(at, "its release, start, completion and the clock are not in that order")
    if d["completion"] <= d["start"]:
        _fail(f"{at}.completion", "is not after its start: a job runs before it completes")
    if d["running"] > d["completion"] - d["start"] + tol:
        _fail(f"{at}.running", "is longer than from its start to its completion")
    return dict(d)
