"""Events: what orchestration code (or the simulator) tells a `Rescheduler`, one record per kind.

Every event happens at a time `at` (seconds) and may carry an `id`. A Rescheduler takes one
event or a batch of events at one instant (`Rescheduler.handle`); the batch is one rescheduling
point, applied in a fixed order whatever the order given: progress and throughput reports,
completions, interruptions, capacity changes, submissions (each kind in the order given), then
the method solves once. An event whose id was applied before is answered with the plan it got
and changes nothing (`Rescheduler.handle`, "Idempotent events").

| event | says | effect |
|---|---|---|
| `Submission` | a job arrives | it joins the unfinished jobs |
| `Completion` | a running job finished | its tardiness is charged, its GPUs are free |
| `Tick` | nothing happened for a while | the method re-plans |
| `ProgressReport` | a job's measured fraction done | replaces the predicted progress |
| `ThroughputReport` | a job's measured whole-job time on its configuration | replaces the predicted time there |
| `Interruption` | a node's VM is gone (spot reclaim, failure) | its jobs lose work as in a restart and wait |
| `CapacityChange` | how many VMs of a type can be held | a type at its limit is not offered to new jobs |

A new kind is a record here (and in `KINDS`), its check in `intake.py` and its effect in
`Rescheduler.handle`; the simulator's producers (`gpuaas/producers.py`) are where a new source
of events goes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gpuaas.errors import InputError, brief
from gpuaas.instance import JobSpec

#: seconds: events closer than this are simultaneous; a job with less remaining time is complete
TIME_TOL = 1e-6


@dataclass(frozen=True)
class Event:
    """Something that happened at time `at` (s); `id`: a unique name that makes redelivery safe."""

    at: float
    id: str | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = ""
    #: the rank of the kind in a batch (lower first)
    order: ClassVar[int] = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: {"kind", "at", "id", ...fields}."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            out[f.name] = _json(getattr(self, f.name))
        return out

    def digest(self) -> str:
        """A fingerprint of the event's content, to tell a redelivery from an id reused."""
        text = json.dumps(self.to_dict(), sort_keys=True, default=str)
        return hashlib.sha1(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ProgressReport(Event):
    """Job `job` has done fraction `progress` of its work (measured, e.g. iterations done)."""

    job: str
    progress: float
    kind: ClassVar[str] = "progress"
    order: ClassVar[int] = 0


@dataclass(frozen=True)
class ThroughputReport(Event):
    """Job `job`, running, would take `seconds` for its whole work on its current configuration
    at the speed measured (e.g. total steps / measured steps per second)."""

    job: str
    seconds: float
    kind: ClassVar[str] = "throughput"
    order: ClassVar[int] = 1


@dataclass(frozen=True)
class Completion(Event):
    """Job `job` completed."""

    job: str
    kind: ClassVar[str] = "completion"
    order: ClassVar[int] = 2


@dataclass(frozen=True)
class Interruption(Event):
    """The VM of physical node `node` is gone (reclaimed spot capacity, a failure)."""

    node: int
    kind: ClassVar[str] = "interruption"
    order: ClassVar[int] = 3


@dataclass(frozen=True)
class CapacityChange(Event):
    """At most `count` VMs of type `vm` can be held from now on (None: no limit). New VMs of
    the type open only below it; held ones beyond it stay until interrupted (`Interruption`)."""

    vm: str
    count: int | None
    kind: ClassVar[str] = "capacity"
    order: ClassVar[int] = 4


@dataclass(frozen=True)
class Submission(Event):
    """A job is submitted: a job object of the instance format (`release` defaults to `at`) or a
    checked `gpuaas.instance.JobSpec` (in JSON its `to_dict`, which has `work` where the
    instance format has `times`)."""

    job: Mapping[str, Any] | JobSpec
    kind: ClassVar[str] = "submission"
    order: ClassVar[int] = 5


@dataclass(frozen=True)
class Tick(Event):
    """Nothing happened: re-plan (the plan's `next_tick` says when)."""

    kind: ClassVar[str] = "tick"
    order: ClassVar[int] = 6


KINDS: dict[str, type[Event]] = {
    k.kind: k
    for k in (
        ProgressReport,
        ThroughputReport,
        Completion,
        Interruption,
        CapacityChange,
        Submission,
        Tick,
    )
}


def event_from_dict(data: Any, where: str = "event") -> Event:
    """The event of a `to_dict` object (e.g. read from a queue); InputError naming the field."""
    if not isinstance(data, Mapping) or data.get("kind") not in KINDS:
        raise InputError(
            None, f"{where}.kind", f"must be one of {', '.join(KINDS)}, got {brief(data)}"
        )
    cls = KINDS[data["kind"]]
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names - {"kind"})
    if unknown:
        raise InputError(None, f"{where}.{unknown[0]}", f"unknown field for a {cls.kind} event")
    missing = [n for n in names - {"id"} if n not in data]
    if missing:
        raise InputError(None, f"{where}.{sorted(missing)[0]}", "missing required field")
    fields = {k: v for k, v in data.items() if k != "kind"}
    if cls is Submission and isinstance(fields["job"], Mapping) and "work" in fields["job"]:
        fields["job"] = JobSpec.from_dict(fields["job"], f"{where}.job")  # a JobSpec's to_dict
    return cls(**fields)


def batch(events: Event | Any) -> list[Event]:
    """One event or an iterable of them, as a list (InputError for anything else)."""
    if isinstance(events, Event):
        return [events]
    if isinstance(events, (list, tuple)):
        for i, e in enumerate(events):
            if not isinstance(e, Event):
                raise InputError(None, f"events[{i}]", f"must be an event, got {brief(e)}")
        return list(events)
    raise InputError(None, "events", f"must be an event or a list of them, got {brief(events)}")


def _json(value: Any) -> Any:
    """A JSON-able form of an event field (a JobSpec: `JobSpec.to_dict`)."""
    if isinstance(value, JobSpec):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value
