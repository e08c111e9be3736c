"""What a batch of events must satisfy before it changes anything, and redelivered events.

`check` reads a batch against a Rescheduler's state (`state.RunState`) and returns what it will
change (`Intake`), or raises with nothing changed: an unknown or never-started job, a report
going backwards, a node that is not open, a VM type not in the catalog, two reports on one job
or two capacities of one VM type in one batch (which would win is arbitrary). `redelivered`
answers a batch whose ids were applied already with the plan they got (`core`'s docstring,
"Idempotent events"); `remember` keeps that plan.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, NamedTuple

from gpuaas import checks
from gpuaas.errors import InputError, StateError, brief
from gpuaas.limits import HORIZON, MAX_ID, MAX_JOBS, MAX_SECONDS
from gpuaas.rescheduler.events import (
    CapacityChange,
    Completion,
    Event,
    Interruption,
    ProgressReport,
    Submission,
    ThroughputReport,
)
from gpuaas.rescheduler.persistence import submitted_job
from gpuaas.rescheduler.records import PLAN_MEMORY, Job, Plan

if TYPE_CHECKING:
    from gpuaas.rescheduler.state import RunState

#: a progress report this far below the previous one is rounding, not going backwards
PROGRESS_TOL = 1e-9


class Intake(NamedTuple):
    """A checked batch: its time and what it changes, in the order it is applied."""

    at: float
    reports: dict[str, float]  # job id -> measured progress
    speeds: dict[str, float]  # job id -> measured whole-job seconds on its configuration
    done: list[str]  # completed job ids
    lost: list[int]  # interrupted nodes
    capacity: dict[int, int | None]  # VM type -> spot VMs that can be held (None: no limit)
    new: list[Job]  # submitted jobs


def check(s: RunState, evs: list[Event]) -> Intake:
    """The batch's `Intake` (InputError or StateError, and nothing changed, otherwise).

    Checked in this order (the first problem is reported): the time, submissions,
    completions, progress and throughput reports, interruptions, capacity changes.
    """
    at = checks.number(evs[0].at, "at", minimum=0.0, maximum=HORIZON)
    last = s.time if s.seen is None else s.seen
    if last is not None and at < last:
        raise StateError(
            f"event at t={at:g} is before the previous event at t={last:g}; "
            "events must come in time order"
        )
    kinds: dict[type, list[Any]] = {}
    for e in sorted(evs, key=lambda e: e.order):
        kinds.setdefault(type(e), []).append(e)
    new = _submissions(s, [e.job for e in kinds.get(Submission, [])], at)
    done = _completions(s, [e.job for e in kinds.get(Completion, [])], at)
    reports = _progress(s, [(e.job, e.progress) for e in kinds.get(ProgressReport, [])], done)
    speeds = _throughput(s, kinds.get(ThroughputReport, []), done)
    lost = _interruptions(s, kinds.get(Interruption, []))
    capacity = _capacity(s, kinds.get(CapacityChange, []))
    return Intake(at, reports, speeds, done, lost, capacity, new)


def _submissions(s: RunState, jobs: list[Any], at: float) -> list[Job]:
    out: list[Job] = []
    seen: set[str] = set()
    for i, job in enumerate(jobs):
        parsed = submitted_job(job, s.catalog, at, f"job[{i}]", s.config.checkpoint)
        if parsed.id in s.jobs or parsed.id in s.completed or parsed.id in seen:
            raise StateError(f"job {parsed.id!r} was already submitted")
        seen.add(parsed.id)
        out.append(parsed)
    if len(s.jobs) + len(out) > MAX_JOBS:
        raise InputError(
            None,
            "job",
            f"{len(s.jobs) + len(out)} unfinished jobs; at most {MAX_JOBS} (gpuaas.limits)",
        )
    return out


def _completions(s: RunState, ids: list[Any], at: float) -> list[str]:
    done: list[str] = []
    for jid in ids:
        if not isinstance(jid, str):
            raise InputError(None, "job_id", f"must be a job id (a string), got {brief(jid)}")
        if jid in s.completed or jid in done:
            msg = f"job {jid!r} already completed; duplicate completion ignored"
            warnings.warn(msg, stacklevel=6)
        elif jid not in s.jobs:
            raise StateError(f"cannot complete unknown job {jid!r}")
        elif s.jobs[jid].start is None:
            raise StateError(f"cannot complete job {jid!r}: it never started")
        elif s.jobs[jid].start >= at:  # started at this instant: it has not run
            raise StateError(f"cannot complete job {jid!r}: it started at this instant")
        else:
            done.append(jid)
    return done


def _started(s: RunState, jid: Any, what: str) -> Job:
    """The unfinished job `jid`, which must have run here (StateError otherwise)."""
    if not isinstance(jid, str) or jid not in s.jobs:
        raise StateError(f"{what} reported for unknown or completed job {brief(jid)}")
    job = s.jobs[jid]
    if job.start is None:
        raise StateError(f"{what} reported for job {jid!r}, which never started")
    return job


def _progress(s: RunState, reports: list[tuple[Any, Any]], done: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for jid, p in reports:
        if isinstance(jid, str) and jid in done:
            continue
        job = _started(s, jid, "progress")
        if jid in out:
            raise InputError(None, f"progress[{jid!r}]", "reported twice in one batch")
        p = checks.number(p, f"progress[{jid!r}]", minimum=0.0)
        if p >= 1.0:
            raise InputError(
                None,
                f"progress[{jid!r}]",
                f"must be < 1 for an unfinished job (complete it instead), got {p!r}",
            )
        floor = job.reported
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


def _throughput(s: RunState, reports: list[ThroughputReport], done: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for e in reports:
        if isinstance(e.job, str) and e.job in done:
            continue
        job = _started(s, e.job, "throughput")
        if e.job in out:
            raise InputError(None, f"throughput[{e.job!r}]", "reported twice in one batch")
        if job.cfg < 0:
            raise StateError(f"throughput reported for job {e.job!r}, which is not running")
        out[e.job] = checks.number(
            e.seconds, f"throughput[{e.job!r}].seconds", maximum=MAX_SECONDS, positive=True
        )
    return out


def _interruptions(s: RunState, events: list[Interruption]) -> list[int]:
    out: list[int] = []
    for e in events:
        p = checks.integer(e.node, "interruption.node", minimum=0, maximum=s.config.nodes - 1)
        if p not in s.nodes:
            raise StateError(f"node {p} was interrupted but it is not open")
        if p not in out:
            out.append(p)
    return out


def _capacity(s: RunState, events: list[CapacityChange]) -> dict[int, int | None]:
    out: dict[int, int | None] = {}
    for e in events:
        if e.vm not in s.catalog.vm_names:
            raise InputError(None, "capacity.vm", f"unknown VM type {brief(e.vm)}")
        count = None if e.count is None else checks.integer(e.count, "capacity.count", minimum=0)
        if s.catalog.vm_index(e.vm) in out:
            raise InputError(None, f"capacity[{e.vm!r}]", "changed twice in one batch")
        out[s.catalog.vm_index(e.vm)] = count
    return out


# -- redelivered events -----------------------------------------------------------------------


def redelivered(s: RunState, evs: list[Event]) -> Plan | None:
    """The plan of a batch already applied, None for a new one (`core`, "Idempotent events").

    Every id applied is remembered with its event's digest (`RunState.ids`, saved as the
    append-only id log), so an id sent again with another content is refused however long ago
    it was applied; the plans of the last `PLAN_MEMORY` points are kept to answer a
    redelivery."""
    ids = [e.id for e in evs if e.id is not None]
    if not ids:
        return None
    for e in evs:
        if e.id is not None and not isinstance(e.id, str):
            raise InputError(None, "id", f"must be a string, got {brief(e.id)}")
        if e.id is not None and len(e.id) > MAX_ID:
            raise InputError(
                None, "id", f"{len(e.id)} characters; at most {MAX_ID} (gpuaas.limits)"
            )
    if len(set(ids)) != len(ids):
        raise InputError(None, "id", "two events of the batch have the same id")
    known = [e for e in evs if e.id in s.ids]
    if not known:
        return None
    if len(known) != len(evs):
        raise StateError(
            f"event {known[0].id!r} was applied already but the batch has new events; "
            "send them apart"
        )
    for e in evs:
        if s.ids[e.id] != e.digest():
            raise StateError(f"event id {e.id!r} was applied already, to another event")
    kept = {i: k for k, p in enumerate(s.plans) for i in p["ids"]}
    points = {kept.get(e.id) for e in evs}
    if len(points) != 1 or None in points:
        raise StateError(
            f"event {evs[0].id!r} was applied already; its plan is no longer kept "
            f"(the last {PLAN_MEMORY} are)"
        )
    return Plan.from_dict(s.plans[points.pop()]["plan"])


def remember(s: RunState, evs: list[Event], plan: Plan) -> None:
    """Keep the plan of a batch with ids, and each id's digest (for good)."""
    ids = {e.id: e.digest() for e in evs if e.id is not None}
    if not ids:
        return
    s.plans.append({"ids": ids, "plan": plan.to_dict()})
    s.ids.update(ids)
    s.id_log.extend(ids)
