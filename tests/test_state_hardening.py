"""The Rescheduler's state and events under attack (issue 39, cases 1-4, 8 and 13): every state
the package writes restores, a migration refuses content of another version, an event id names
one content for good, a batch says one thing per job or VM type, and a corrupt state is a
StateError naming its field."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpuaas import Rescheduler
from gpuaas.errors import InputError, StateError
from gpuaas.instance import JobSpec
from gpuaas.rescheduler import PLAN_MEMORY, STATE_VERSION
from gpuaas.rescheduler.events import (
    CapacityChange,
    Completion,
    ProgressReport,
    Submission,
    ThroughputReport,
    Tick,
    event_from_dict,
)
from gpuaas.rescheduler.migrations import ADDED


def _copy(state):
    return json.loads(json.dumps(state))


def _plain(plan):
    """A plan's JSON without its timings."""
    return {
        k: v for k, v in plan.to_dict().items() if k not in ("solver_seconds", "solver_cpu_seconds")
    }


def _state(r: Rescheduler):
    """`r.state()` without the timings of its remembered plans (they differ run to run)."""
    state = _copy(r.state())
    for p in state["live"]["plans"]:
        p["plan"] = {k: v for k, v in p["plan"].items() if not k.startswith("solver_")}
    return state


# -- case 1: two points at one instant, each moving a job ------------------------------------

#: (time, job) submitted one at a time to the default method at N = 1 (found by a search):
#: j5 and j6, both at t = 4200, each move a job
SAME_INSTANT = [
    (3600.0, {"id": "j0", "due": 17781, "weight": 10, "times": {"NC6": [27324], "NC12": [30000, 3709]}}),
    (3600.0, {"id": "j1", "due": 53434, "weight": 0.1, "times": {"NC6": [12414], "NC12": [30000, 16397]}}),
    (3600.0, {"id": "j2", "due": 31951, "weight": 10, "times": {"NC6": [25721], "NC12": [30000, 19583]}}),
    (4200.0, {"id": "j3", "due": 13151, "weight": 0.001, "times": {"NC6": [4235], "NC12": [30000, 16558]}}),
    (4200.0, {"id": "j4", "due": 30362, "weight": 0.1, "times": {"NC6": [27895], "NC12": [30000, 16160]}}),
    (4200.0, {"id": "j5", "due": 6112, "weight": 0.001, "times": {"NC6": [33147], "NC12": [30000, 13579]}}),
    (4200.0, {"id": "j6", "due": 9658, "weight": 0.1, "times": {"NC6": [37975], "NC12": [30000, 3138]}}),
]  # fmt: skip


def test_two_points_at_one_instant_that_move_jobs_restore():
    """Case 1: the moves of two points at one instant are one entry of `recent_moves` (was
    two of the same time, which restore refused); a state listing them apart still restores."""
    r = Rescheduler("azure-2021", nodes=1)
    moved = []
    for t, job in SAME_INSTANT:
        plan = r.submit(job, at=t)
        moved.append(len(plan.migrate) + len(plan.preempt))
    assert moved[-2:] == [1, 1]
    state = _copy(r.state())
    assert state["live"]["recent_moves"] == [[4200.0, 2]]
    b = Rescheduler.restore(state)
    assert b.state() == state
    state["live"]["recent_moves"] = [[4200.0, 1], [4200.0, 1]]
    assert Rescheduler.restore(state).state() == r.state()


#: one step of an event sequence: (seconds since the last event, 0 most often: the same
#: instant; what happens; applied as one batch or one event at a time; a choice in [0, 1))
STEP = st.tuples(
    st.sampled_from([0.0, 0.0, 0.0, 60.0, 1800.0, 7200.0]),
    st.lists(
        st.sampled_from(["submit", "complete", "progress", "throughput", "tick"]),
        min_size=1,
        max_size=3,
    ),
    st.booleans(),
    st.floats(0.0, 0.999),
)


def _event(r: Rescheduler, at: float, kind: str, u: float, name: str, busy: set[str]):
    """An event of `kind` at `at`, valid for `r`'s state (a tick where none is possible);
    `busy`: jobs the batch already has an event for."""
    eid = name if len(name) % 2 else None
    running = [j for j in r.unfinished() if j.node >= 0 and j.id not in busy]
    pick = running[int(u * len(running))] if running else None
    if kind == "submit":
        job = {
            "id": f"j{name}",
            "due": at + 2000.0 + 40000.0 * u,
            "weight": [0.001, 0.1, 10.0][len(r.unfinished()) % 3],
            "times": {"NC6": [3000.0 + 30000.0 * u], "NC12": [30000.0, 2000.0 + 15000 * u]},
        }
        if len(name) % 3 == 0:
            job["checkpoint"] = 600.0
        return Submission(at, job, id=eid)
    if pick is None or kind == "tick":
        return Tick(at, id=eid)
    busy.add(pick.id)
    if kind == "complete":  # a job that started before this instant (one that has run)
        done = [j for j in running if j.start < at]
        if not done:
            busy.discard(pick.id)
            return Tick(at, id=eid)
        busy.add(done[0].id)
        return Completion(at, done[0].id, id=eid)
    if kind == "progress":
        p = min(0.99, pick.progress + (1.0 - pick.progress) * u / 4)
        return ProgressReport(at, pick.id, p, id=eid)
    return ThroughputReport(at, pick.id, 5000.0 + 20000.0 * u, id=eid)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@example(steps=[(0.0, ["submit"] * 3, False, 0.0)], nodes=1)  # case 1 (the moves at one instant)
@example(
    steps=[(0.0, ["submit", "complete"], False, 0.0), (60.0, ["complete"], True, 0.0)], nodes=1
)
@example(  # a progress of 5.6e-314 made the speed pool inf: the state was not JSON
    steps=[
        (0.0, ["submit"], False, 0.0),
        (1800.0, ["progress"], False, 2.2250738585e-313),
        (0.0, ["complete"], False, 0.0),
    ],
    nodes=1,
)
@given(steps=st.lists(STEP, min_size=1, max_size=8), nodes=st.sampled_from([1, 2]))
def test_every_state_written_restores_and_continues_alike(steps, nodes):
    """Case 1: save and restore after every event of a sequence with same-instant events
    (submissions, completions, ticks, progress and throughput reports; batches, and one event
    at a time at one instant): the restored Rescheduler has the same state and gives the same
    next plan."""
    r = Rescheduler("azure-2021", nodes=nodes)
    at = 0.0
    for k, (dt, kinds, together, u) in enumerate(steps):
        at += dt
        groups = [kinds] if together else [[kind] for kind in kinds]
        for i, group in enumerate(groups):
            busy: set[str] = set()
            evs = [_event(r, at, kind, u, f"{k}.{i}.{n}", busy) for n, kind in enumerate(group)]
            ticks = [e for e in evs if isinstance(e, Tick)]
            group = [e for e in evs if not isinstance(e, Tick)] + ticks[:1]
            b = Rescheduler.restore(_copy(r.state()))
            assert b.state() == r.state()
            assert _plain(b.handle(group)) == _plain(r.handle(group))
            assert _state(b) == _state(r)
    assert Rescheduler.restore(_copy(r.state())).state() == r.state()


# -- case 2: a state of one format labelled another ------------------------------------------

DATA = Path(__file__).resolve().parent / "data"


def _sample(version: int):
    return json.loads((DATA / f"rescheduler-state-v{version}.json").read_text())["state"]


def test_a_later_format_labelled_earlier_is_refused():
    """Case 2: a format-4 state labelled version 3 was "migrated", wiping its speed evidence
    and resetting a job's checkpoint (60 -> 600 s); now StateError names the first field of
    the later format. The states of versions 2 and 3 still migrate."""
    r = Rescheduler("azure-2021", nodes=2)
    job = {"id": "a", "due": 3e4, "weight": 0.01, "times": {"NC6": [36000.0]}, "checkpoint": 60}
    r.submit(job, at=0.0)
    r.tick(3600.0, progress={"a": 0.05})
    r.tick(7200.0, progress={"a": 0.07})
    state = _copy(r.state())
    assert state["live"]["jobs"][0]["observed"] and state["live"]["jobs"][0]["checkpoint"] == 60
    state["version"] = 3
    with pytest.raises(StateError) as err:
        Rescheduler.restore(state)
    assert str(err.value) == (
        "Rescheduler state labelled version 3 has live.interruption_cost, a field of version 4: "
        "it was written in a later format than the version it claims"
    )
    # every field a later format added, alone in a state of an earlier version
    for version, later in ((2, 3), (2, 4), (3, 4)):
        for kind, names in ADDED[later].items():
            for name in names:
                s = _sample(version)
                path = {
                    ("state", 2): (),
                    ("live", 2): (),
                    ("job", 2): ("jobs", 0),
                    ("completed", 2): ("completed", 0),
                    ("live", 3): ("live",),
                    ("job", 3): ("live", "jobs", 0),
                    ("completed", 3): ("completed", 0),
                }[kind, version]
                obj = s
                for p in path:
                    obj = obj[p]
                where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) + "."
                where = (obj, where.lstrip("."))
                where[0][name] = 0
                with pytest.raises(StateError, match=rf"has {re.escape(where[1] + name)}, a field"):
                    Rescheduler.restore(s)
    for version in (2, 3):
        assert Rescheduler.restore(_sample(version)).state()["version"] == STATE_VERSION


# -- case 13: corrupt states of earlier formats ----------------------------------------------

CORRUPT_EARLIER = [
    (3, ("live",), "x", "live must be an object, got 'x'"),
    (3, ("config", "run"), [], "config.run must be an object, got []"),
    (3, ("config",), "x", "config must be an object, got 'x'"),
    (3, ("live", "jobs"), ["ab"], "live.jobs[0] must be an object, got 'ab'"),
    (3, ("live", "jobs"), "ab", "live.jobs must be a list, got 'ab'"),
    (3, ("completed",), "ab", "completed must be a list, got 'ab'"),
    (3, ("completed",), ["ab"], "completed[0] must be an object, got 'ab'"),
    (3, ("live", "time"), None, None),  # no event yet, but jobs: refused after migrating
    (2, ("jobs",), ["ab"], "jobs[0] must be an object, got 'ab'"),
    (2, ("completed",), "ab", "completed must be a list, got 'ab'"),
    (2, ("node_vm",), "x", "node_vm: must be a list as long as node_ready"),
]


@pytest.mark.parametrize(("version", "path", "value", "message"), CORRUPT_EARLIER)
def test_corrupt_states_of_earlier_formats_are_state_errors(version, path, value, message):
    """Case 13: corrupt format-2/3 states raised ValueError / AttributeError in the migration;
    now StateError naming the field."""
    s = _sample(version)
    obj = s
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value
    with pytest.raises(StateError) as err:
        Rescheduler.restore(s)
    if message is not None:
        assert str(err.value) == f"corrupt Rescheduler state of version {version}: {message}"


# -- case 4: two reports on one job or two capacities of one type in one batch -----------------


def test_one_batch_says_one_thing_per_job_and_vm_type():
    """Case 4: two `ThroughputReport`s for one job, or two `CapacityChange`s for one VM type,
    in one batch: the last won silently; now refused like two `ProgressReport`s, and nothing
    changes."""
    r = Rescheduler("azure-2021", nodes=2)
    r.submit({"id": "a", "due": 3e4, "weight": 0.01, "times": {"NC6": [36000.0]}}, at=0.0)
    before = r.state()
    cases = [
        (
            [ThroughputReport(60.0, "a", 40000.0), ThroughputReport(60.0, "a", 30000.0)],
            "throughput['a']: reported twice in one batch",
        ),
        (
            [CapacityChange(60.0, "NC6", 1), CapacityChange(60.0, "NC6", 3)],
            "capacity['NC6']: changed twice in one batch",
        ),
        (
            [ProgressReport(60.0, "a", 0.1), ProgressReport(60.0, "a", 0.2)],
            "progress['a']: reported twice in one batch",
        ),
    ]
    for batch, message in cases:
        with pytest.raises(InputError) as err:
            r.handle(batch)
        assert str(err.value) == message
        assert r.state() == before
    r.handle([CapacityChange(60.0, "NC6", 1), CapacityChange(60.0, "NC12", 0)])  # two types
    assert r.capacity() == {"NC6": 1, "NC12": 0}


# -- case 3: one serialiser of a job, and an id names one content for good ---------------------

JOB_FIELDS = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=20),
        "release": st.floats(0.0, 1e9),
        "due": st.floats(-1e9, 1e9),
        "weight": st.floats(0.0, 1e6),
        "work": st.lists(st.one_of(st.none(), st.floats(1.0, 1e9)), min_size=3, max_size=3),
        "progress": st.floats(0.0, 1.0, exclude_max=True),
        "placement": st.one_of(st.none(), st.tuples(st.integers(0, 10**6 - 1), st.integers(0, 2))),
        "pinned": st.booleans(),
        "checkpoint": st.one_of(st.none(), st.floats(0.0, 1e9)),
    }
)


@settings(max_examples=60, deadline=None)
@given(fields=JOB_FIELDS, at=st.floats(0.0, 1e9))
def test_a_submission_round_trips_every_jobspec_field(fields, at):
    """Issue 40 item 5: `event_from_dict(Submission(t, spec).to_dict())` gives back every field
    of the JobSpec (was: "unknown field(s) ['work']" and `checkpoint` dropped)."""
    work = [1e4 if w is None and i == 0 else w for i, w in enumerate(fields.pop("work"))]
    place = fields.pop("placement")
    node, cfg = (-1, -1) if place is None or work[place[1]] is None else place
    spec = JobSpec(
        work=np.array([np.inf if w is None else w for w in work]), node=node, cfg=cfg, **fields
    )
    event = Submission(at, spec, id="s")
    back = event_from_dict(json.loads(json.dumps(event.to_dict())))
    assert isinstance(back.job, JobSpec)
    for f in dataclasses.fields(JobSpec):
        got, want = getattr(back.job, f.name), getattr(spec, f.name)
        if f.name == "work":
            assert np.array_equal(got, want)
        else:
            assert got == want and type(got) is type(want), f.name
    assert back.digest() == event.digest()


def test_the_digest_covers_every_field_of_a_submission():
    """Each JobSpec field changed alone changes the submission's digest (was: `checkpoint`
    left out, so another checkpoint under the same id got the old plan)."""
    base = JobSpec("a", 5.0, 100.0, 0.5, np.array([100.0, np.inf, 200.0]), 0.25)
    other = {
        "id": "b",
        "release": 6.0,
        "due": 101.0,
        "weight": 0.6,
        "work": np.array([100.0, 300.0, 200.0]),
        "progress": 0.5,
        "node": 2,
        "cfg": 0,
        "pinned": True,
        "checkpoint": 60.0,
        "cpus": 4.0,
        "memory": 16.0,
        "data_gb": 3.5,
        "data_at": 1,
        "workload": "resnet18",
    }
    assert set(other) == {f.name for f in dataclasses.fields(JobSpec)}
    digest = Submission(0.0, base, id="x").digest()
    for name, value in other.items():
        changed = dataclasses.replace(base, **{name: value})
        assert Submission(0.0, changed, id="x").digest() != digest, name


def test_an_id_is_refused_with_another_content_however_long_ago():
    """Case 3: the same id with another checkpoint was answered with the old plan; an id reused
    after `PLAN_MEMORY` points with new content was applied (progress 0.05 -> 0.5). Both are
    refused, also after a save and restore, and nothing changes."""
    cat = {"NC6": [36000.0], "NC12": [36000.0, 20000.0]}
    r = Rescheduler("azure-2021", nodes=2)
    spec = {"id": "a", "due": 9e4, "weight": 0.01, "times": cat, "checkpoint": 60.0}
    plan = r.handle(Submission(0.0, spec, id="s"))
    again = Submission(0.0, spec, id="s")
    assert _plain(r.handle(again)) == _plain(plan)  # a redelivery: the same plan
    with pytest.raises(StateError, match="event id 's' was applied already, to another event"):
        r.handle(Submission(0.0, {**spec, "checkpoint": 600.0}, id="s"))
    r.handle(ProgressReport(600.0, "a", 0.05, id="p"))
    for k in range(PLAN_MEMORY + 1):
        r.handle(Tick(1200.0 + k, id=f"t{k}"))
    for s in (r, Rescheduler.restore(_copy(r.state()))):
        before = _state(s)
        with pytest.raises(StateError, match="event id 'p' was applied already, to another"):
            s.handle(ProgressReport(1300.0, "a", 0.5, id="p"))
        with pytest.raises(StateError, match="'p' was applied already; its plan is no longer"):
            s.handle(ProgressReport(600.0, "a", 0.05, id="p"))
        assert _state(s) == before


def test_the_id_log_is_append_only_and_the_live_part_stays_small():
    """Every id is kept, but in the append-only id log: the live part counts them and does not
    grow with them (an event's save costs the same however many came before)."""
    r = Rescheduler("azure-2021", nodes=2)
    sizes = []
    saved: list = []
    for k in range(40):
        r.handle(Tick(60.0 * k, id=f"tick-{k}"))
        saved += r.id_log(len(saved))
        sizes.append(len(json.dumps(r.live_state())))
    assert saved == r.state()["ids"] and len(saved) == 40
    assert r.live_state()["ids"] == 40
    assert max(sizes[PLAN_MEMORY + 2 :]) - min(sizes[PLAN_MEMORY + 2 :]) <= 40  # digits only


def test_a_format_4_state_migrates_its_ids():
    """A format-4 state (tests/data/README.md) gets the ids of its kept plans and of the
    clock's instant as its id log: the next redelivery gets the plan that release answered,
    an id of a kept plan with another content is refused."""
    sample = json.loads((DATA / "rescheduler-state-v4.json").read_text())
    r = Rescheduler.restore(sample["state"])
    state = r.state()
    assert state["version"] == STATE_VERSION == 7
    assert [i for i, _ in state["ids"]] == [f"e{k}" for k in range(4, 12)]
    plan = r.handle(event_from_dict(sample["event"]))
    want = {k: v for k, v in sample["plan"].items() if k != "objective"}
    assert {k: v for k, v in _plain(plan).items() if k != "objective"} == want
    with pytest.raises(StateError, match="event id 'e4' was applied already, to another"):
        r.handle(Submission(8000.0, {"id": "x", "due": 1e5, "weight": 1, "times": {}}, id="e4"))


# -- case 8: what restore still accepted -----------------------------------------------------

RESTORE_CASES = [
    (
        lambda s: s["live"]["nodes"][0].update(ready=1e9),
        "live.nodes (node 0).ready: 1000000000.0 is later than the clock plus the start-up (120 s)",
    ),
    (
        lambda s: s["live"]["nodes"].append({"node": 2, "vm": "NC6", "ready": 120.0}),
        "live.nodes (node 2): is open but hosts no job",
    ),
    (
        lambda s: s["completed"][0].update(colour=1),
        "completed[0].colour: unknown field of a completion record",
    ),
    (
        lambda s: s["live"].update(vm_cost=1e308),
        "live.vm_cost: must be <= 1e+30 (gpuaas.limits), got 1e+308",
    ),
    (
        lambda s: s["live"]["jobs"][0].update(id="x" * 10**7),
        "live.jobs[0].id: 10000000 characters; at most 1000 (gpuaas.limits)",
    ),
    (
        lambda s: s["completed"][0].update(id="x" * 10**7),
        "completed[0].id: 10000000 characters; at most 1000 (gpuaas.limits)",
    ),
    (
        lambda s: s["completed"][0].update(completion=0.0, jct=0.0, waiting=0.0, running=0.0),
        "completed[0].completion: is not after its start: a job runs before it completes",
    ),
]


def test_restore_refuses_what_the_package_never_writes():
    """Case 8: a node ready at 1e9, an open node with no job, an extra key in a completion
    record, `vm_cost` 1e308, a 10 MB job id and a completion at the submission instant were
    restored; each is a StateError naming the field. None is written by the package: a node is
    ready at most `startup` after the event that opened it, every plan closes a node left
    without jobs (`matching.check_solution` refuses an open node that hosts none), and a job
    cannot complete at the instant it started (refused by `handle` too)."""
    r = Rescheduler("azure-2021", nodes=3)
    r.submit({"id": "a", "due": 3e4, "weight": 0.01, "times": {"NC6": [36000.0]}}, at=0.0)
    r.submit({"id": "b", "due": 3e4, "weight": 0.01, "times": {"NC6": [7200.0]}}, at=0.0)
    r.complete("b", at=7300.0)
    state = _copy(r.state())
    assert Rescheduler.restore(_copy(state)).state() == state
    for change, message in RESTORE_CASES:
        bad = _copy(state)
        change(bad)
        with pytest.raises(StateError) as err:
            Rescheduler.restore(bad)
        assert str(err.value) == f"corrupt Rescheduler state: {message}"
    r.submit({"id": "c", "due": 3e4, "weight": 0.01, "times": {"NC6": [7200.0]}}, at=8000.0)
    with pytest.raises(StateError, match="cannot complete job 'c': it started at this instant"):
        r.complete("c", at=8000.0)
    with pytest.raises(InputError, match="id: 10000000 characters; at most 1000"):
        r.submit({"id": "x" * 10**7, "due": 3e4, "weight": 0.01, "times": {"NC6": [1e4]}}, at=9e3)
