"""Migrations of saved Rescheduler states from earlier formats to `STATE_VERSION`.

Each `_from_vN` turns a version-N state into version N + 1, checking the objects it reads so
that a corrupt earlier state is a StateError naming the field; `ADDED` lists the fields each
format added, so that a state labelled an earlier version than its fields is refused rather
than migrated (migrating it would wipe them). `persistence.restore` calls `migrate` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuaas import checks
from gpuaas.errors import InputError, StateError, brief
from gpuaas.run_config import RunConfig

STATE_VERSION = 7

#: the fields each format added, by the object they are in (a state labelled an earlier
#: version that has one was written in a later format: migrating it would wipe them, so it is
#: refused; issue 39)
ADDED = {
    3: {
        "state": ("config", "live"),
        "live": ("interruptions",),
        "job": ("interruptions",),
        "completed": ("interruptions",),
    },
    4: {
        "live": (
            "interruption_cost",
            "spot_cost",
            "spot_held",
            "outages",
            "recent_moves",
            "speed_pool",
        ),
        "job": ("interrupted_work", "checkpoint", "segment", "observed", "measured", "anchor"),
        "completed": ("interrupted_work",),
    },
    5: {"state": ("ids",), "live": ("ids",)},
    6: {"live": ("market", "spot_waiting", "seen")},
    7: {"live": ("egress_cost", "transfers"), "job": ("data_ready",)},
}


def _object(version: int, where: str, value: Any) -> Mapping[str, Any]:
    """`value`, an object of a version-`version` state (StateError naming `where` otherwise)."""
    if not isinstance(value, Mapping):
        raise StateError(
            f"corrupt Rescheduler state of version {version}: {where} must be an object, "
            f"got {brief(value)}"
        )
    return value


def _objects(version: int, where: str, value: Any) -> list[Mapping[str, Any]]:
    """`value`, a list of objects of a version-`version` state."""
    if not isinstance(value, list):
        raise StateError(
            f"corrupt Rescheduler state of version {version}: {where} must be a list, "
            f"got {brief(value)}"
        )
    return [_object(version, f"{where}[{i}]", d) for i, d in enumerate(value)]


def _not_later(version: int, kinds: tuple[str, ...], where: str, value: Mapping[str, Any]) -> None:
    """StateError when `value`, an object (of `kinds`: "state", "live", "job", "completed") of
    a state labelled `version`, has a field that a later format added."""
    for later in range(version + 1, STATE_VERSION + 1):
        for name in (n for k in kinds for n in ADDED[later].get(k, ())):
            if name in value:
                at = f"{where}.{name}" if where else name
                raise StateError(
                    f"Rescheduler state labelled version {version} has {at}, a field of "
                    f"version {later}: it was written in a later format than the version it "
                    "claims"
                )


def _entries(version: int, where: str, value: Any, kind: str) -> list[Mapping[str, Any]]:
    """The objects of list `value` (jobs or completion records), none of a later format."""
    out = _objects(version, where, value)
    for i, d in enumerate(out):
        _not_later(version, (kind,), f"{where}[{i}]", d)
    return out


def _from_v2(s: Mapping[str, Any]) -> dict[str, Any]:
    """Version 2 (one flat object; N-long node lists; no ids, interruptions or availability)."""
    _not_later(2, ("state", "live"), "", s)
    jobs = _entries(2, "jobs", s["jobs"], "job")
    done = _entries(2, "completed", s["completed"], "completed")
    run = {
        "method": s["method"],
        "seed": s["seed"],
        "nodes": s["nodes"],
        "overhead": s["overhead"],
        "startup": s["startup"],
        "options": s["solver_options"],
    }
    node_vm, ready = s["node_vm"], s["node_ready"]
    if not isinstance(node_vm, list) or not isinstance(ready, list) or len(node_vm) != len(ready):
        raise InputError(None, "node_vm", "must be a list as long as node_ready")
    money = ("vm_cost", "tardiness_cost", "lost_work_cost", "startup_cost")
    live = {k: s[k] for k in ("time", "events", *money, "migrations", "preemptions")}
    live["interruptions"] = 0
    live["nodes"] = [
        {"node": p, "vm": v, "ready": ready[p]} for p, v in enumerate(node_vm) if v is not None
    ]
    live["capacity"] = {}
    live["jobs"] = [dict(d, interruptions=0) for d in jobs]
    live["plans"] = []
    live["applied_now"] = {}
    live["completed"] = len(done)
    completed = [dict(d, interruptions=0) for d in done]
    return {
        "version": 3,
        "config": {"catalog": s["catalog"], "params": s["params"], "run": run},
        "live": live,
        "completed": completed,
    }


def _from_v3(s: Mapping[str, Any]) -> dict[str, Any]:
    """Version 3 (no spot capacity: no checkpoints, interruption losses or spot totals; no
    speed evidence, no record of recent moves): none yet, and the run's checkpoint interval."""
    config = _object(3, "config", s["config"])
    run = _object(3, "config.run", config["run"])
    live = _object(3, "live", s["live"])
    _not_later(3, ("live",), "live", live)
    jobs = _entries(3, "live.jobs", live["jobs"], "job")
    done = _entries(3, "completed", s["completed"], "completed")
    checkpoint = run.get("checkpoint", RunConfig().checkpoint)
    live = dict(
        live,
        interruption_cost=0.0,
        spot_cost=0.0,
        spot_held={},
        outages={},
        recent_moves=[],
        speed_pool=[0, 0.0, 0, 0.0],
    )
    live["jobs"] = [
        dict(
            d,
            interrupted_work=0.0,
            checkpoint=checkpoint,
            segment=0.0,
            observed=[],
            measured=[],
            anchor=None,
        )
        for d in jobs
    ]
    completed = [dict(d, interrupted_work=0.0) for d in done]
    return {"version": 4, "config": config, "live": live, "completed": completed}


def _from_v4(s: Mapping[str, Any]) -> dict[str, Any]:
    """Version 4 (the ids of the kept plans and of the clock's instant only): those ids begin
    the id log."""
    _not_later(4, ("state",), "", s)
    live = _object(4, "live", s["live"])
    _not_later(4, ("live",), "live", live)
    ids: dict[str, Any] = {}
    for i, p in enumerate(_objects(4, "live.plans", live["plans"])):
        ids.update(_object(4, f"live.plans[{i}].ids", p["ids"]))
    ids.update(_object(4, "live.applied_now", live["applied_now"]))
    live = {k: v for k, v in live.items() if k != "applied_now"}
    live["ids"] = len(ids)
    return {**s, "version": 5, "live": live, "ids": [[i, d] for i, d in ids.items()]}


def _from_v5(s: Mapping[str, Any]) -> dict[str, Any]:
    """Version 5 (no record of what each type's capacity did, nor of jobs waiting for spot):
    none yet, so the capacity-drop rates start from the model's (`spot_estimates.market_rate`),
    and the next change of capacity is a rescheduling point (`apply.reschedule`)."""
    live = _object(5, "live", s["live"])
    _not_later(5, ("live",), "live", live)
    market = {"market": {}, "spot_waiting": 1, "seen": live["time"]}
    return {**s, "version": 6, "live": {**live, **market}}


def _from_v6(s: Mapping[str, Any]) -> dict[str, Any]:
    """Version 6 (no locations: no data moved between them): none moved, none on its way."""
    live = _object(6, "live", s["live"])
    _not_later(6, ("live",), "live", live)
    jobs = _entries(6, "live.jobs", live["jobs"], "job")
    live = dict(live, egress_cost=0.0, transfers=0, jobs=[dict(d, data_ready=0.0) for d in jobs])
    return {**s, "version": 7, "live": live}


#: version -> the function turning a state of that version into one of the next
MIGRATIONS = {2: _from_v2, 3: _from_v3, 4: _from_v4, 5: _from_v5, 6: _from_v6}


def migrate(state: Any) -> Mapping[str, Any]:
    """`state` in the current format (StateError for an unknown version, a corrupt state of an
    earlier one, or one whose fields are of a later format than its version says)."""
    if not isinstance(state, Mapping):
        raise StateError(f"not a Rescheduler state (a JSON object), got {brief(state)}")
    version = state.get("version")
    if version == STATE_VERSION:
        return state
    if checks.is_int(version) and version > STATE_VERSION:
        raise StateError(
            f"Rescheduler state version {version} was written by a newer gpuaas; this one reads "
            f"versions {min(MIGRATIONS)} to {STATE_VERSION}: upgrade gpuaas"
        )
    if not checks.is_int(version) or version not in MIGRATIONS:
        raise StateError(
            f"not a Rescheduler state of a known version ({min(MIGRATIONS)} to {STATE_VERSION}), "
            f"got version {brief(version)}"
        )
    while version != STATE_VERSION:
        try:
            state = MIGRATIONS[version](state)
        except StateError:
            raise
        except KeyError as exc:
            raise StateError(
                f"corrupt Rescheduler state of version {version}: missing field {exc}"
            ) from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise StateError(f"corrupt Rescheduler state of version {version}: {exc}") from None
        version = state["version"]
    return state
