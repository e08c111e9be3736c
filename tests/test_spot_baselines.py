"""The spot baselines (managed-spot, uniform-progress, on-demand) at one rescheduling point and
through the Simulator; Can't Be Late's single-job setting run by gpuaas agrees with the
independent reference (tests/cant_be_late.py) tick by tick."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.methods import solve
from gpuaas.rescheduler import CapacityChange, Rescheduler
from gpuaas.simulator import simulate
from gpuaas.validator import validate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))
import cant_be_late as cbl  # noqa: E402
from eventlog import read_log  # noqa: E402
from spot_single_job import K, gpuaas_run  # noqa: E402

USER_TRACES = os.environ.get("GPUAAS_SPOT_TRACES")
CAT = {
    "name": "two",
    "provider": "GCP",
    "spot": True,
    "vm_types": [
        {"name": "A", "gpu": "V100", "gpus": 1, "cost_per_hour": 3.6, "spot_per_hour": 1.2},
        {"name": "B", "gpu": "V100", "gpus": 4, "cost_per_hour": 14.4, "spot_per_hour": 4.8},
        {"name": "C", "gpu": "T4", "gpus": 1, "cost_per_hour": 1.0},
    ],
}


def inst(jobs, nodes=3, time=0.0):
    return Instance.from_dict({"catalog": CAT, "nodes": nodes, "time": time, "jobs": jobs})


def job(jid, due, a=3600.0, b=1000.0, release=0.0):
    return {
        "id": jid,
        "release": release,
        "due": due,
        "weight": 0.01,
        "times": {"A": [a], "B": [b * 2, b * 1.5, b * 1.2, b]},
    }


@pytest.mark.parametrize("method", ["managed-spot", "uniform-progress", "on-demand"])
def test_each_job_on_its_own_vm_valid_and_within_capacity(method):
    jobs = [job(f"j{i}", due=4000.0 + 500 * i) for i in range(5)]
    i = inst(jobs, nodes=4)
    sol = solve(i, method)
    assert validate(sol).ok
    used = sol.job_node[sol.job_node >= 0]
    if method != "on-demand":
        assert len(set(used.tolist())) == len(used)  # one job per VM
        assert (sol.job_cfg[sol.job_cfg >= 0] < 0).sum() == 0
    cat = i.catalog
    kinds = cat.spot[cat.cfg_vm[sol.job_cfg[sol.job_cfg >= 0]]]
    assert not kinds.any() if method == "on-demand" else kinds.all()
    # capacity: at most one more A:spot VM
    room = np.full(cat.n_vms, np.inf)
    room[cat.vm_index("A:spot")] = room[cat.vm_index("B:spot")] = 1
    sol = solve(dataclasses.replace(i, room=room), method)
    assert validate(sol).ok
    for v in ("A:spot", "B:spot"):
        assert (sol.node_vm == cat.vm_index(v)).sum() <= 1


def test_managed_spot_falls_back_on_demand_and_returns_to_spot():
    r = Rescheduler(CAT, 2, "managed-spot", startup=0.0, overhead=0.0)
    r.handle([CapacityChange(0.0, "B:spot", 0)])
    r.submit(job("a", due=3000.0), at=0.0)  # only B (whole) meets it
    [running] = r.unfinished()
    assert running.vm == "B"  # its own whole VM, on demand while no spot
    r.handle(CapacityChange(100.0, "B:spot", None))
    [running] = r.unfinished()
    assert running.vm == "B:spot" and r.migrations == 1


@pytest.mark.parametrize("method", ["managed-spot", "uniform-progress"])
def test_spot_baselines_take_another_type_whose_spot_has_capacity(method):
    """A job whose own type's spot has no capacity takes, by its own rule (cheapest time x
    price meeting the due date), a type whose spot has capacity (B, 4 x V100: 1000 s at 4.8 $/h
    against its own A on demand, 3600 s at 3.6 $/h) instead of its own on demand or waiting;
    it keeps that VM when A's spot comes back. Where B's spot costs more than A on demand
    (3000 s) a job stays with its own type (as one no other type serves:
    `test_managed_spot_falls_back_on_demand_and_returns_to_spot`)."""
    r = Rescheduler(CAT, 3, method, startup=0.0, overhead=0.0)
    r.handle([CapacityChange(0.0, "A:spot", 0)])
    r.submit(job("a", due=5000.0), at=0.0)
    [running] = r.unfinished()
    assert running.vm == "B:spot"
    r.handle(CapacityChange(100.0, "A:spot", None))
    [running] = r.unfinished()
    assert running.vm == "B:spot" and r.migrations == 0
    r.handle(CapacityChange(200.0, "A:spot", 0))
    r.submit(job("b", due=5000.0, b=3000.0), at=200.0)  # B's spot: 4 $, A on demand: 3.6 $
    assert {u.id: u.vm for u in r.unfinished()}["b"] in ("A", None)  # on demand or waiting


def test_on_demand_is_the_default_without_spot_variants():
    trace = Instance.from_dict(generate_trace(3, jobs=12, seed=2, catalog="aws-us-east-1"))
    a = simulate(trace, "incremental", seed=1, bound=False)
    b = simulate(trace, "on-demand", seed=1, bound=False)
    assert a.total_cost == b.total_cost and a.jobs == b.jobs
    spot = trace.with_spot()
    sol = solve(spot.subset(range(4)), "on-demand")
    assert not spot.catalog.spot[sol.node_vm[sol.node_vm >= 0]].any()


# -- Can't Be Late's single job through gpuaas ----------------------------------------------------


def reference_choices(avail, gap, work, deadline, d, policy):
    choices: list[int] = []
    run = cbl.simulate(avail, gap, work, deadline, d, policy, K, choices=choices)
    return choices, run


def gpuaas_choices(tmp_path, avail, gap, work, deadline, d, greedy):
    log = tmp_path / "ev.jsonl"
    res = gpuaas_run(avail, gap, work, deadline, d, "uniform-progress", log=log, greedy=greedy)
    lines = read_log(log)
    out = []
    for i in range(len(avail)):
        t = i * gap
        line = next((x for x in lines if x["start"] <= t < x["end"]), None)
        if line is None:
            break
        vm = next((j["vm"] for j in line["jobs"]), None)
        out.append(cbl.NONE if vm is None else cbl.SPOT if vm.endswith(":spot") else cbl.ON_DEMAND)
    return out, res


def spot_hours(res_log, gap):
    spot = od = 0.0
    for line in read_log(res_log):
        ready = {n["node"]: n["ready"] for n in line["nodes"]}
        for j in line["jobs"]:
            run = max(0.0, line["end"] - max(line["start"], ready[j["node"]]))
            if j["vm"].endswith(":spot"):
                spot += run
            else:
                od += run
    return spot / 3600, od / 3600


def _agree(tmp_path, avail, gap, work, deadline, d):
    for greedy, policy in ((False, cbl.uniform_progress), (True, cbl.greedy)):
        want, run = reference_choices(avail, gap, work, deadline, d, policy)
        got, res = gpuaas_choices(tmp_path, avail, gap, work, deadline, d, greedy)
        assert got == want, (greedy, next(i for i, (a, b) in enumerate(zip(got, want)) if a != b))
        s, o = spot_hours(tmp_path / "ev.jsonl", gap)
        assert s == pytest.approx(run.spot_hours, abs=1e-6)
        assert o == pytest.approx(run.od_hours, abs=1e-6)
        # costs: the reference bills whole ticks, gpuaas by the second
        spot_units = res.vm_cost / 0.9731
        assert run.cost - K * gap / 3600 - 1e-6 <= spot_units <= run.cost + 1e-6
        assert (res.jobs[0]["completion"] <= deadline + 1e-6) == run.met


def test_single_job_decisions_agree_tick_by_tick_on_synthetic_traces(tmp_path):
    rng = np.random.default_rng(5)
    for case in range(4):
        gap = 600.0
        ticks = []
        while len(ticks) < 1200:  # spells of availability and of none
            up = not ticks[-1] if ticks else True
            ticks += [up] * int(rng.integers(1, 40 if up else 25))
        work, deadline = 20 * 3600.0, [24.0, 30.0, 40.0, 60.0][case] * 3600
        for d in (0.0, 72.0, 720.0, 1440.0):
            _agree(tmp_path, ticks, gap, work, deadline, d)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.booleans(), min_size=60, max_size=60),
    st.sampled_from([0.0, 300.0, 1000.0]),
    st.integers(8, 14),
)
def test_single_job_decisions_agree_on_any_availability(tmp_path_factory, avail, d, slack):
    gap = 1800.0
    ticks = [a for a in avail for _ in range(2)] + [False] * 40
    _agree(tmp_path_factory.mktemp("cbl"), ticks, gap, 8 * 3600.0, (8 + slack) * 3600.0, d)


@pytest.mark.skipif(USER_TRACES is None, reason="GPUAAS_SPOT_TRACES: the user's copy of the data")
def test_single_job_decisions_agree_on_cant_be_late_traces(tmp_path):
    from gpuaas.availability.readers import read_spot_traces

    base = Path(USER_TRACES) / "availability" / "1-node" / "aws-10-26-2022"
    for name in ("us-west-2a_v100_1", "us-west-2b_k80_8"):
        cap, length = read_spot_traces(str(base / f"{name}.json"))
        gap = float(json.loads((base / f"{name}.json").read_text())["metadata"]["gap_seconds"])
        avail = [cap.at(i * gap) > 0 for i in range(int(length // gap))]
        for start, deadline_h, d_h in ((0, 52, 0.2), (300, 70, 0.02), (900, 92, 0.4)):
            _agree(tmp_path, avail[start:], gap, 48 * 3600.0, deadline_h * 3600.0, d_h * 3600.0)


@pytest.mark.parametrize(
    "seed",
    [
        pytest.param(
            2,
            marks=pytest.mark.xfail(
                strict=True,
                reason="since move_tardiness='each' became the default (2026-12-01) the default "
                "pays 63.99 $ against Uniform Progress's 61.52 $ at seed 2 (it met the deadline): "
                "a move onto spot is charged the start-up as tardiness, spot's expected time "
                "ending past the due date; a fix tried and not kept: docs/spot.md, 'A move onto "
                "spot charged its fallback's tardiness'",
            ),
        ),
        9,
    ],
)
def test_the_default_waits_for_spot_like_uniform_progress_away_from_the_safety_net(seed):
    """Can't Be Late's single job (20 h of work due in 24 h, a changeover of 0.4 h) on a
    two-state Markov availability: the default costs no more than Uniform Progress and meets
    the deadline. A waiting job's due date a VM start-up closer, applied at every decision, sent
    it on demand hours early (the Safety Net already keeps 2d in hand): 65.68 / 65.70 $ where
    Uniform Progress pays 61.52 / 59.48 $ (Can't Be Late's page: dearer in 3 of 9 cells). The
    start-up counts as time only inside the Safety Net's margin (`spot.spot_instance`)."""
    rng = np.random.default_rng(seed)
    back, end = rng.uniform(0.05, 0.4), rng.uniform(0.05, 0.5)
    ticks, up = [], True
    for _ in range(182):
        ticks.append(up)
        up = rng.random() > end if up else rng.random() < back
    work, deadline, d = 20 * 3600.0, 24 * 3600.0, 0.4 * 3600.0
    up = gpuaas_run(ticks, 600.0, work, deadline, d, "uniform-progress")
    res = gpuaas_run(ticks, 600.0, work, deadline, d, "incremental")
    assert res.jobs[0]["completion"] <= deadline + 1e-6
    assert res.vm_cost <= up.vm_cost + 1e-6
