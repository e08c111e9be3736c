"""Spot that does not pay changes nothing (issue 41, "Do no harm"), and what the default
expects of spot capacity: the share of a held VM's time a job keeps, and the capacity-drop rate
learned from `CapacityChange` events."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuaas.availability import Availability, Capacity
from gpuaas.availability.model import SPELL_RATE, type_params
from gpuaas.generator import generate_trace
from gpuaas.heuristics.default.method import incremental
from gpuaas.heuristics.default.spot import changeover, detours, efficiency, reference_configs
from gpuaas.instance import Instance
from gpuaas.rescheduler import CapacityChange, Rescheduler
from gpuaas.rescheduler.spot_estimates import PRIOR_DROPS
from gpuaas.simulator import Simulator, simulate


def flapping(vms, up, down, hours, start=0.0):
    """Capacity 1 for `up` s, 0 for `down` s, ..., of each of `vms`, over `hours`."""
    times = np.arange(start, hours * 3600.0, up + down)
    t = np.sort(np.concatenate((times, times + up)))
    counts = np.tile([1, 0], len(times))
    return Availability({vm: Capacity(t, counts) for vm in vms}, end=hours * 3600.0)


def test_spot_that_never_pays_leaves_the_run_without_spot():
    """Spot at the on-demand price, with capacity coming and going: the default's run with
    spot is the run without it (same plans, events and bill): capacity changes are no
    rescheduling points while no spot is held and none is taken."""
    base = Instance.from_dict(
        generate_trace(3, jobs=8, seed=3, arrivals="high", catalog="aws-us-east-1")
    )
    cat = base.catalog
    trace = dataclasses.replace(
        base, catalog=dataclasses.replace(cat, spot_per_hour=cat.cost_per_hour.copy())
    )
    market = flapping(["p3.2xlarge", "g4dn.xlarge", "g6.xlarge"], 1500.0, 2100.0, 400.0)
    spot = Simulator(trace, "incremental", seed=1, availability=market).run()
    plain = simulate(trace, "incremental", seed=1, bound=False)
    assert spot.spot_cost == 0 and spot.interruptions == 0
    assert spot.total_cost == pytest.approx(plain.total_cost, rel=1e-9)
    assert (spot.events, spot.migrations, spot.preemptions) == (
        plain.events,
        plain.migrations,
        plain.preemptions,
    )


def test_spot_entered_for_less_than_the_margin_leaves_the_run_without_spot():
    """Spot that pays (the catalog's spot prices, capacity for hours at a time): the default
    takes it; with `spot_margin` 1 000 (a plan must save a thousand hours of the on-demand
    fleet's spend to enter spot) it neither runs on spot nor waits for it, and the run is the
    run without spot (a job that waited for spot the plan would then refuse made it dearer)."""
    trace = Instance.from_dict(
        generate_trace(3, jobs=8, seed=3, arrivals="high", catalog="aws-us-east-1")
    )
    market = flapping(["p3.2xlarge", "g4dn.xlarge", "g6.xlarge"], 6 * 3600.0, 1800.0, 400.0)
    plain = simulate(trace, "incremental", seed=1, bound=False)
    taken = Simulator(trace, "incremental", seed=1, availability=market).run()
    assert taken.spot_cost > 0
    refused = Simulator(trace, "incremental", seed=1, availability=market, spot_margin=1e3).run()
    assert refused.spot_cost == 0
    assert refused.total_cost == pytest.approx(plain.total_cost, rel=1e-9)
    assert (refused.events, refused.migrations) == (plain.events, plain.migrations)


def test_spot_margin_is_a_share_of_the_next_hours_spend():
    """A 48-hour job with spot always there: P1$ tells its plans apart by their next H s, so
    the default margin (a share of what its spot VM would cost on demand over H) lets it take
    spot; a margin of the whole hour refuses it (spot saves about two thirds of it). On the
    whole P1$, 1 % priced Can't Be Late's single job out of spot."""
    inst = Instance.from_dict(generate_trace(1, jobs=1, seed=1, catalog="aws-us-east-1"))
    inst = inst.with_spot()
    f = 48 * 3600.0 / np.nanmin(inst.times[np.isfinite(inst.times)])
    long = dataclasses.replace(inst, work=inst.work * f, due=inst.time + (inst.due - inst.time) * f)
    spot = long.catalog.spot
    taken = incremental(long)
    assert spot[taken.node_vm[taken.node_vm >= 0]].all()
    refused = incremental(long, spot_margin=1.0)
    assert not spot[refused.node_vm[refused.node_vm >= 0]].any()
    assert refused.stats["rival"] == "on-demand"


def test_spot_margin_is_checked():
    trace = Instance.from_dict(generate_trace(1, jobs=1, seed=1, catalog="aws-us-east-1"))
    with pytest.raises(ValueError, match="spot_margin"):
        incremental(trace.with_spot(), spot_margin=-0.1)


def _monte_carlo(h, c, s, o, p, n=200_000, seed=0):
    """Kept progress per second held, stretch by stretch (`efficiency`'s docstring), a detour
    away and back after a share p of the interruptions."""
    x = np.random.default_rng(seed).exponential(1.0 / h, n)
    run = np.maximum(x - s, 0.0)
    saved = (np.floor(run / c) * c if c > 0 else run) - (o + p * (o + s))
    return saved.sum() / x.sum()


@settings(max_examples=8, deadline=None)
@given(
    h=st.floats(0.1 / 3600, 3.0 / 3600),
    c=st.sampled_from([0.0, 600.0, 1800.0]),
    o=st.sampled_from([0.0, 600.0]),
    wait=st.booleans(),
)
def test_efficiency_is_the_kept_share_of_a_held_vm(h, c, o, wait):
    trace = Instance.from_dict(generate_trace(1, jobs=1, seed=1, catalog="aws-us-east-1"))
    inst = trace.with_spot()
    v = inst.catalog.vm_index("p3.2xlarge:spot")
    hazard = np.zeros(inst.catalog.n_vms)
    hazard[v] = h
    outage = np.zeros(inst.catalog.n_vms)
    outage[v] = 1.0 if wait else 1e15  # back at once (no detour), or never within the slack
    inst = dataclasses.replace(
        inst,
        hazard=hazard,
        outage=outage,
        checkpoint=np.array([c]),
        overhead=o,
        startup=120.0,
        due=inst.due + 36000.0,  # 10 h of slack
    )
    assert detours(inst)[0, v] == pytest.approx(0.0 if wait else 1.0, abs=1e-6)
    e = efficiency(inst)
    assert e[0, v] == pytest.approx(_monte_carlo(h, c, 120.0, o, 0.0 if wait else 1.0), abs=0.02)
    assert (e[0, ~inst.catalog.spot] == 1.0).all()


def test_a_job_detours_when_the_outage_outlasts_its_slack():
    """`detours`: the chance an outage (exponential, of the expected length) outlasts the
    job's slack; 1 without slack, 0 for a type with no outage to wait out."""
    trace = Instance.from_dict(generate_trace(1, jobs=1, seed=1, catalog="aws-us-east-1"))
    inst = trace.with_spot()
    v = inst.catalog.vm_index("p3.2xlarge:spot")
    slack = float(inst.rel_due[0] - inst.work[0, reference_configs(inst)[0]] - changeover(inst)[0])
    assert slack > 0
    outage = np.zeros(inst.catalog.n_vms)
    outage[v] = slack / 2.0
    p = detours(dataclasses.replace(inst, outage=outage))[0]
    assert p[v] == pytest.approx(np.exp(-2.0))
    assert (p[np.arange(inst.catalog.n_vms) != v] == 0.0).all()
    late = dataclasses.replace(inst, outage=outage, due=inst.due - slack - 1.0)
    assert detours(late)[0, v] == 1.0


def test_the_capacity_drop_rate_is_learned_without_holding_vms():
    r = Rescheduler("aws-us-east-1", nodes=2, method="greedy", spot=True, seed=1)
    cat = r.catalog
    v = cat.vm_index("p3.2xlarge:spot")
    p = type_params(cat, v)
    prior, own = p.spell_rate, p.rate  # V100: spells; held VMs' own rate: none held, the prior
    weight = PRIOR_DROPS / SPELL_RATE
    r.handle(CapacityChange(0.0, "p3.2xlarge:spot", 16))
    assert r.spot_hazard()[v] * 3600 == pytest.approx(own + prior)  # told: the priors
    # 16 -> 12 (a quarter of the VMs held), then 12 -> 0 (all): 1.25 drops in 2 h with capacity
    r.handle(CapacityChange(3600.0, "p3.2xlarge:spot", 12))
    r.handle(CapacityChange(7200.0, "p3.2xlarge:spot", 0))
    r.handle(CapacityChange(9000.0, "p3.2xlarge:spot", 4))
    r.tick(12600.0)  # one more hour with capacity
    drops = (prior * weight + 1.25) / (weight + 3.0)
    assert r.spot_hazard()[v] * 3600 == pytest.approx(own + drops)
    again = Rescheduler.restore(json.loads(json.dumps(r.state())))
    assert again.spot_hazard() == pytest.approx(r.spot_hazard())


def test_a_change_of_capacity_moves_no_running_job(monkeypatch):
    """A point that only changes spot capacity places the waiting jobs; the running ones, on
    spot or on demand, stay until the next arrival, completion or tick (replayed capacity flaps
    within the hour: moving every job at each change cost more than the spot saved, and jobs
    on spot went back and forth between a zone flapping every 10 minutes and a stable one).
    Under high arrivals and capacity every 20 minutes, such points come while jobs run; none
    of them moves one (before: the jobs on spot moved; before that, a g6 job on demand)."""
    import gpuaas.rescheduler.apply as apply
    from gpuaas.heuristics.default.spot import on_spot

    seen, held, point = [], [], []
    real, solve = apply.reschedule, apply.solve_checked

    def recording(s, at, quiet=False, capacity_only=False):
        point[:] = [capacity_only]
        plan = real(s, at, quiet=quiet, capacity_only=capacity_only)
        if capacity_only and plan.replanned:
            seen.append([m.old.vm for m in plan.migrate])
        return plan

    def solving(s, inst, at, seed):  # what the method is given at a capacity-only point
        if point[0]:
            running = inst.current_cfg >= 0
            held.append((int(on_spot(inst).sum()), bool((inst.pinned | ~running).all())))
        return solve(s, inst, at, seed)

    monkeypatch.setattr(apply, "reschedule", recording)
    monkeypatch.setattr(apply, "solve_checked", solving)
    trace = Instance.from_dict(
        generate_trace(3, jobs=20, seed=5, arrivals="high", catalog="aws-us-east-1")
    )
    flaps = flapping(["g4dn.xlarge", "g6.xlarge"], 3 * 3600.0, 1200.0, 400.0).capacity
    market = Availability({**flaps, "p3.2xlarge": Capacity([0.0], [3])}, end=400 * 3600.0)
    result = Simulator(trace, "incremental", seed=1, availability=market).run()
    assert result.spot_cost > 0 and len(seen) >= 5  # such points came while spot was held
    assert sum(n for n, _ in held) > 0  # jobs ran on spot at them
    assert all(pinned for _, pinned in held)  # every running job pinned (before: not on spot)
    assert not any(seen)


def test_spot_margin_is_of_the_vms_that_enter_spot_not_of_the_fleet():
    """A 48-hour job beside eight jobs pinned to on-demand p3.16xlarge VMs: entering spot must
    save a share of what its own spot VM would cost on demand over H, not of the whole fleet's
    spend (eight p3.16xlarge: a margin of 39 $ an hour, which a job saving about 2 $ of it
    never beat, so a large on-demand fleet kept every newcomer off spot)."""
    inst = Instance.from_dict(generate_trace(1, jobs=1, seed=1, catalog="aws-us-east-1"))
    inst = inst.with_spot()
    cat = inst.catalog
    f = 48 * 3600.0 / np.nanmin(inst.times[np.isfinite(inst.times)])
    n = 8
    big = int(
        np.flatnonzero(
            (np.asarray(cat.vm_names)[cat.cfg_vm] == "p3.16xlarge") & (cat.cfg_gpus == 8)
        )[0]
    )
    run = np.arange(1, n + 1)
    point = dataclasses.replace(
        inst,
        nodes=n + 2,
        job_ids=tuple(f"j{i}" for i in range(n + 1)),
        release=np.repeat(inst.release, n + 1),
        due=np.repeat(inst.time + (inst.due - inst.time) * f, n + 1),
        weight=np.repeat(inst.weight, n + 1),
        work=np.repeat(inst.work * f, n + 1, axis=0),
        progress=np.where(np.arange(n + 1) > 0, 0.5, 0.0),
        current_node=np.concatenate(([-1], run - 1)),
        current_cfg=np.concatenate(([-1], np.full(n, big))),
        pinned=np.arange(n + 1) > 0,
        ready=np.full(n + 1, -np.inf),
        checkpoint=None,
        move_loss=None,
        cpus=None,
        memory=None,
        data_gb=None,
        data_at=None,
        workload=None,
    )
    sol = incremental(point)
    assert sol.job_node[0] >= 0 and cat.spot[sol.node_vm[sol.job_node[0]]]
    assert 0.2 * point.H * cat.cost[cat.vm_names.index("p3.16xlarge")] * n > 30.0
