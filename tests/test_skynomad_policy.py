"""SkyNomad's policy per job (`gpuaas.baselines.skynomad`, method ``skynomad``): valid plans,
each job alone on a VM within the spot room; every due date met on replayed zone traces; a move
between locations only when it pays its egress and restart; the Safety Net's fallback (eq. 2);
the CLI on the bundled SkyNomad sample."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuaas.availability.skynomad import read_zones, zone_availability
from gpuaas.baselines.skynomad import progress_value
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.methods import solve
from gpuaas.simulator import simulate
from gpuaas.validator import validate

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "instances" / "spot" / "skynomad" / "v100"
ZONES = {"us-east-1c": "us-east-1", "us-east-2b": "us-east-2", "us-west-2a": "us-west-2"}
ZONE = {"us-west-2b": "us-west-2", **ZONES}  # a fourth zone, in us-west-2a's region


def catalog(spot=(0.95, 0.92, 0.94, 0.94), zones=ZONE):
    types = []
    for (z, _), price in zip(zones.items(), spot):
        types.append({"name": "p3.2xlarge", "location": z, "gpu": "V100", "gpus": 1,
                      "cost_per_hour": 3.06, "spot_per_hour": price})  # fmt: skip
        types.append({"name": "p3.8xlarge", "location": z, "gpu": "V100", "gpus": 4,
                      "cost_per_hour": 12.24, "spot_per_hour": 4 * price})  # fmt: skip
    return {
        "name": "zones",
        "provider": "AWS",
        "spot": True,
        "locations": {z: {"region": r} for z, r in zones.items()},
        "vm_types": types,
    }


def job(jid, work, due, release=0.0, zones=ZONE, **extra):
    times = {}
    for z in zones:
        times[f"p3.2xlarge@{z}"] = [work]
        times[f"p3.8xlarge@{z}"] = [work / 1.8, work / 2.6, work / 3.4, work / 3.7]
    return {"id": jid, "release": release, "due": due, "weight": 0.01, "times": times, **extra}


def instance(jobs, nodes=4, time=0.0, cat=None, **params):
    return Instance.from_dict(
        {"catalog": cat or catalog(), "nodes": nodes, "time": time, "jobs": jobs,
         "params": {"H": 600.0, "startup": 120.0, "overhead": 600.0, **params}}
    )  # fmt: skip


# -- one rescheduling point ---------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_every_plan_is_valid_one_job_per_vm_within_room(data):
    """Random states (progress, time, placements on whole spot or on-demand VMs, where the data
    is, room per type): the plan passes the independent validator, puts each job alone on a
    whole VM and opens no more spot VMs of a type than its room."""
    n = data.draw(st.integers(1, 5))
    base = instance([job("x", 3600.0, 7200.0)])
    cat = base.catalog
    whole = [c for c in range(cat.n_configs) if cat.cfg_gpus[c] == cat.gpus[cat.cfg_vm[c]]]
    jobs = []
    for i in range(n):
        work = data.draw(st.floats(3600.0, 40 * 3600.0))
        ratio = data.draw(st.floats(0.9, 2.5))
        extra = {"data_gb": data.draw(st.sampled_from([0.0, 50.0, 2000.0]))}
        at = data.draw(st.sampled_from([None, *ZONE]))
        if at is not None:
            extra["data_at"] = at
        if data.draw(st.booleans()):
            c = data.draw(st.sampled_from(whole))
            extra["placement"] = {"node": i, "vm": cat.vm_names[cat.cfg_vm[c]],
                                  "gpus": int(cat.cfg_gpus[c])}  # fmt: skip
            extra["progress"] = data.draw(st.floats(0.0, 0.95))
        jobs.append(job(f"j{i}", work, work * ratio, **extra))
    inst = instance(jobs, nodes=n + 1, time=data.draw(st.floats(0.0, 4 * 3600.0)))
    room = np.array([data.draw(st.sampled_from([0.0, 1.0, np.inf])) for _ in range(cat.n_vms)])
    hazard = np.where(cat.spot, data.draw(st.floats(0.0, 1e-3)), 0.0)
    inst = dataclasses.replace(inst, room=room, hazard=hazard)
    sol = solve(inst, "skynomad")
    assert validate(sol).ok
    used = sol.job_node[sol.job_node >= 0]
    assert len(set(used.tolist())) == len(used)
    cfg = sol.job_cfg[sol.job_cfg >= 0]
    assert (cat.cfg_gpus[cfg] == cat.gpus[cat.cfg_vm[cfg]]).all()
    opened = sol.node_vm[(sol.node_vm >= 0)]
    for v in np.flatnonzero(cat.spot):
        held = sum(
            1
            for j in range(inst.n_jobs)
            if inst.current_cfg[j] >= 0 and cat.cfg_vm[inst.current_cfg[j]] == v
        )
        assert (opened == v).sum() <= held + room[v]


def test_options_are_refused():
    with pytest.raises(InputError, match="skynomad takes no options"):
        solve(instance([job("a", 3600.0, 7200.0)]), "skynomad", greedy=True)


def _spot_state(data_gb, dst_price, dst_zone="us-east-2b", hazard=1 / 36000.0):
    """A job running on spot at us-west-2a (its data there), 10 h of its 30 h done, due in 40
    h more; `dst_zone`'s spot at `dst_price` (the others' 0.94) and `hazard` per second (the
    others' one in 10 h)."""
    prices = [dst_price if z == dst_zone else 0.94 for z in ZONE]
    cat = catalog(prices)
    extra = {"data_gb": data_gb, "data_at": "us-west-2a", "progress": 1 / 3,
             "placement": {"node": 0, "vm": "p3.2xlarge@us-west-2a:spot", "gpus": 1}}  # fmt: skip
    inst = instance([job("a", 30 * 3600.0, 50 * 3600.0, **extra)], nodes=2, time=10 * 3600.0,
                    cat=cat)  # fmt: skip
    cat = inst.catalog
    at_dst = np.array([n.startswith(f"p3.2xlarge@{dst_zone}:") for n in cat.vm_names])
    rate = np.where(at_dst, hazard, 1 / 36000.0)
    return dataclasses.replace(inst, hazard=np.where(cat.spot, rate, 0.0))


def moved_to(inst):
    sol = solve(inst, "skynomad")
    assert validate(sol).ok
    c = sol.job_cfg[0]
    return None if c < 0 else inst.catalog.vm_names[inst.catalog.cfg_vm[c]]


def test_a_move_happens_only_when_it_pays():
    """us-east-2b's spot 0.5 $/h below us-west-2a's: the job moves when the saving over the
    expected 10 h there beats the restart and the egress (50 GB x 0.02 $/GB = 1 $), not when
    its checkpoint costs 100 $ to move, nor for a saving below the hysteresis; to us-west-2b,
    in its own region, the egress is free: it moves even with 5 000 GB."""
    assert moved_to(_spot_state(50.0, 0.44)) == "p3.2xlarge@us-east-2b:spot"
    assert moved_to(_spot_state(5000.0, 0.44)) == "p3.2xlarge@us-west-2a:spot"
    assert moved_to(_spot_state(50.0, 0.93)) == "p3.2xlarge@us-west-2a:spot"  # 1 c/h: stays
    assert moved_to(_spot_state(5000.0, 0.44, "us-west-2b")) == "p3.2xlarge@us-west-2b:spot"
    # a short expected life there (12 min) is not worth the 2 min start-up and the restart
    assert moved_to(_spot_state(0.0, 0.44, hazard=5.0 / 3600)) == "p3.2xlarge@us-west-2a:spot"


def test_progress_value_is_the_papers_shadow_price():
    """V = C_od θ / θ̃ (eq. 8): C_od on schedule, above it when behind, at least the floor;
    the planned rate before any progress, inf past the due date."""
    inst = instance([job("a", 10 * 3600.0, 20 * 3600.0, progress=0.5)], time=10 * 3600.0)
    c_od = 3.06 / 3600
    ref = inst.catalog.config(inst.catalog.vm_index("p3.2xlarge@us-east-1c"), 1)
    assert progress_value(inst, 0, ref) == pytest.approx(c_od)
    behind = dataclasses.replace(inst, progress=np.array([0.25]))
    assert progress_value(behind, 0, ref) == pytest.approx(c_od * (7.5 / 10) / (2.5 / 10))
    ahead = dataclasses.replace(inst, progress=np.array([0.9]))
    assert progress_value(ahead, 0, ref, floor=0.5 * c_od) == pytest.approx(0.5 * c_od)
    fresh = dataclasses.replace(inst, progress=np.array([0.0]), time=5 * 3600.0)
    assert progress_value(fresh, 0, ref) == pytest.approx(c_od * 20 / 15)
    late = dataclasses.replace(inst, time=21 * 3600.0)
    assert progress_value(late, 0, ref) == np.inf


def test_safety_net_falls_back_on_demand_where_finishing_costs_least():
    """A waiting job whose due date no longer leaves one more tick off on-demand goes on demand
    now (spot available everywhere): in its data's region (free egress) when the move's egress
    costs more than the cheaper zone saves (eq. 2), else in the cheaper zone."""
    cat = catalog()
    cheaper = next(t for t in cat["vm_types"] if t["name"] == "p3.2xlarge" and t["location"] ==
                   "us-east-2b")  # fmt: skip
    cheaper["cost_per_hour"] = 2.90  # on demand
    work, now = 10 * 3600.0, 5 * 3600.0
    # work left 8 h; 2 400 s to spare, less than a start-up, a restart, a checkpoint interval
    # lost and a tick (3 120 s)
    due = now + 0.8 * work + 2400.0
    for gb, where in ((5000.0, ("us-west-2a", "us-west-2b")), (50.0, ("us-east-2b",))):
        j = job("a", work, due, progress=0.2, data_gb=gb, data_at="us-west-2a", checkpoint=1800.0)
        inst = instance([j], nodes=1, time=now, cat=cat)
        assert moved_to(inst) in [f"p3.2xlarge@{z}" for z in where]


# -- through the Simulator ----------------------------------------------------------------------


def _zone_dir(tmp_path, rng, gap=600.0, ticks=600):
    """Three zone traces that flap (spells of 1-20 ticks up, 1-12 down), per-tick prices."""
    for z in ZONES:
        data = []
        while len(data) < ticks:
            up = not data or data[-1] == 1
            data += [0 if up else 1] * int(rng.integers(1, 20 if up else 12))
        doc = {"metadata": {"gap_seconds": gap, "price_info": {"on_demand_price": 3.06}},
               "data": data[:ticks], "prices": list(rng.uniform(0.9, 1.3, ticks))}  # fmt: skip
        (tmp_path / z).mkdir()
        (tmp_path / z / "full.json").write_text(json.dumps(doc))
    return tmp_path


def _jobs(rng, n, span):
    out = []
    for i in range(n):
        work = float(rng.uniform(8, 20)) * 3600
        release = float(rng.uniform(0, span))
        ratio = float(rng.choice([1.1, 1.3, 1.6, 2.0]))
        due = release + ratio * work
        out.append(job(f"j{i}", work, due, release=release, zones=ZONES, data_gb=50.0))
    return out


def _run(jobs, avail, **kw):
    cat = {k: v for k, v in catalog(zones=ZONES).items() if k != "spot"}  # the Simulator's spot
    inst = instance(jobs, nodes=len(jobs), cat=cat)
    res = simulate(inst, "skynomad", spot=True, availability=avail, bound=False, **kw)
    due = {j["id"]: j["due"] for j in jobs}
    late = [j["id"] for j in res.jobs if j["completion"] > due[j["id"]] + 1e-6]
    return res, late


def test_every_due_date_met_on_the_replayed_sample():
    """Six jobs (work 8-20 h, deadlines 1.1-2.0 x their work) on SkyNomad's 72 h V100 sample of
    three zones, with gpuaas's default restart, start-up and 30 min checkpoints: spot is used
    and interrupted, and every job ends by its due date."""
    rng = np.random.default_rng(3)
    jobs = _jobs(rng, 6, 20 * 3600)
    cat = Instance.from_dict({"catalog": catalog(zones=ZONES), "nodes": 1, "jobs": []}).catalog
    avail = zone_availability(read_zones(SAMPLE), cat.with_spot())
    res, late = _run(jobs, avail)
    assert not late
    assert res.spot_cost > 0 and res.interruptions > 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_due_date_met_on_flapping_zones(tmp_path, seed):
    """The same on zones whose spot comes and goes every few ticks (the Safety Net's worst
    case: interruptions near the boundary lose the work since the last checkpoint)."""
    rng = np.random.default_rng(seed)
    directory = _zone_dir(tmp_path, rng)
    jobs = _jobs(rng, 5, 30 * 3600)
    res, late = _run(jobs, f"skynomad:{directory}", checkpoint=3600.0)
    assert not late
    assert res.interruptions > 0


def test_cli_simulates_skynomad_on_the_bundled_sample(tmp_path, monkeypatch):
    """`gpuaas simulate T --method skynomad --availability skynomad:DIR` on an aws-v100-zones
    trace (docs/spot.md)."""
    from click.testing import CliRunner

    from gpuaas.cli import cli

    monkeypatch.chdir(tmp_path)
    gen = ["generate", "--catalog", "aws-v100-zones", "--jobs", "4", "--nodes", "2", "-o", "t.json"]
    assert CliRunner().invoke(cli, gen).exit_code == 0
    cmd = ["simulate", "t.json", "--method", "skynomad", "--availability", f"skynomad:{SAMPLE}",
           "-o", "r.json"]  # fmt: skip
    res = CliRunner().invoke(cli, cmd)
    assert res.exit_code == 0, res.output
    out = json.loads((tmp_path / "r.json").read_text())
    assert out["method"] == "skynomad" and out["total_cost"] > 0
