"""Disruption limits: pinned jobs stay under every method (validator), the Rescheduler's caps per
job and per hour hold in every simulation, involuntary moves do not count, a method that moves a
pinned job is refused, and the limits travel through the CLI, specs and saved states."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rescheduler import CATALOG, SCRIPT, _methods, job  # noqa: F401

from gpuaas.cli import cli
from gpuaas.errors import SolverError
from gpuaas.generator import generate_trace
from gpuaas.heuristics.default.spot import ON_DEMAND, spot_instance
from gpuaas.instance import Instance
from gpuaas.methods import METHODS, solve
from gpuaas.rescheduler import Interruption, Rescheduler
from gpuaas.simulator import Simulator, simulate
from gpuaas.validator import validate

#: options that keep the slow methods quick on these small instances
FAST = {"milp": {"time_limit": 5.0, "gap": 0.05}, "hierarchical": {"controller_time_limit": 1.0}}


def trace(seed: int, nodes: int = 4, jobs: int = 24, arrivals: str = "high") -> Instance:
    return Instance.from_dict(generate_trace(nodes, jobs, seed=seed, arrivals=arrivals))


def incumbent(seed: int, overhead: float) -> Instance:
    """A rescheduling point with running jobs, every other one pinned: a simulation's state
    after a third of its events."""
    sim = Simulator(trace(seed), "greedy", seed=seed, overhead=overhead, startup=0.0)
    for _ in range(12):
        sim.step()
    inst = sim.rescheduler.instance()
    running = np.flatnonzero(inst.current_cfg >= 0)
    assert running.size >= 2
    pinned = np.zeros(inst.n_jobs, dtype=bool)
    pinned[running[::2]] = True
    return dataclasses.replace(inst, pinned=pinned)


@pytest.mark.parametrize("method", [m for m in METHODS if not m.startswith("test-")])
@pytest.mark.parametrize("overhead", [0.0, 600.0])
def test_every_method_keeps_pinned_jobs(method, overhead):
    """Every registered method, with moves free (the paper's setting, where nothing else is
    kept) and with a restart cost: the validator finds the solution feasible, pinned jobs
    included (it checks they stay)."""
    for seed in (1, 2):
        inst = incumbent(seed, overhead)
        sol = solve(inst, method, seed=seed, **FAST.get(method, {}))
        report = validate(sol)
        assert report.ok, (method, report.errors)
        p = np.flatnonzero(inst.pinned)
        assert (sol.job_node[p] == inst.current_node[p]).all()
        assert (sol.job_cfg[p] == inst.current_cfg[p]).all()


def test_pins_travel_through_the_file_format_and_subsets():
    inst = incumbent(3, 600.0)
    back = Instance.from_dict(json.loads(json.dumps(inst.to_dict())))
    assert (back.pinned == inst.pinned).all() and inst.pinned.any()
    idx = np.flatnonzero(inst.pinned)[:1]
    assert inst.subset(idx).pinned.tolist() == [True]
    with pytest.raises(Exception, match="a waiting job cannot be pinned"):
        dataclasses.replace(inst, pinned=inst.current_cfg < 0)


def test_validator_reports_a_moved_pinned_job():
    inst = incumbent(3, 600.0)
    sol = solve(dataclasses.replace(inst, pinned=None), "edf")
    j = int(np.flatnonzero(inst.pinned)[0])
    moved = sol.job_node.copy()
    moved[j] = -1
    cfg = sol.job_cfg.copy()
    cfg[j] = -1
    from gpuaas.solution import Solution

    bad = Solution(inst, sol.node_vm, moved, cfg, "edf")
    assert any("pinned" in e and inst.job_ids[j] in e for e in validate(bad).errors)


def moves_of(result) -> list[int]:
    return [j["migrations"] + j["preemptions"] for j in result.jobs]


@pytest.mark.parametrize("method", ["incremental", "greedy", "path-relinking", "dp-adjwct"])
def test_cap_per_job_holds_in_simulations(method):
    """max_moves = 1 (and 0): no job is moved more than that, whatever the method; without a
    cap the same traces move some jobs more (the cap binds: max 5-216 moves at N = 3, J = 12)."""
    tr = trace(4, nodes=3, jobs=12)
    free = simulate(tr, method, seed=1, bound=False)
    assert max(moves_of(free)) > 1
    for cap in (0, 1):
        res = simulate(tr, method, seed=1, max_moves=cap, bound=False)
        assert max(moves_of(res)) <= cap and res.max_job_moves <= cap
        assert len(res.jobs) == tr.n_jobs


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(1, 10_000),
    cap=st.integers(0, 2),
    arrivals=st.sampled_from(["exponential", "high"]),
    method=st.sampled_from(["incremental", "greedy", "randomized-greedy"]),
)
def test_cap_holds_on_random_traces(seed, cap, arrivals, method):
    """Random traces with prediction noise: no job moves more than the cap (a few examples;
    test_cap_per_job_holds_in_simulations covers each method at caps 0 and 1)."""
    tr = trace(seed, nodes=3, jobs=10, arrivals=arrivals)  # uncapped: a job moves 3-10 times
    res = simulate(tr, method, seed=seed, max_moves=cap, noise=0.2, bound=False)
    assert max(moves_of(res)) <= cap and len(res.jobs) == tr.n_jobs


def test_hourly_budget_holds_in_every_hour():
    """moves_per_hour = 2: in every window of an hour the plans move at most two jobs; the
    budget binds (the run without it moves more in some hour)."""

    def windows(budget):
        # without the default's polish of small points: the budget is what is tested here
        sim = Simulator(
            trace(5, nodes=5, jobs=40), "incremental", seed=1, moves_per_hour=budget, polish=0.0
        )
        moves = []
        while (plan := sim.step()) is not None:
            k = len(plan.migrate) + len(plan.preempt)
            if k:
                moves.append((plan.time, k))
        return max(sum(k for t, k in moves if t0 - 3600.0 < t <= t0) for t0, _ in moves)

    assert windows(None) > 2
    assert windows(2) <= 2


def test_interruptions_do_not_count():
    """A job whose VM is lost twice is not pinned by a cap of 1: it was moved by nobody."""
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 2, "test-scripted", max_moves=1, overhead=60.0, startup=0.0)
    r.submit(job("j1"), at=0.0)
    for t in (100.0, 200.0):
        node = r.unfinished()[0].node
        r.handle(Interruption(t, node))
    j = r.run_state.jobs["j1"]
    assert j.interruptions == 2 and j.migrations + j.preemptions == 0
    assert not r.instance().pinned.any()


def test_a_plan_moving_a_pinned_job_is_refused_and_changes_nothing():
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 2, "test-scripted", max_moves=1, overhead=60.0, startup=0.0)
    r.submit(job("j1"), at=0.0)
    SCRIPT.update(j1=("B", 1))
    r.tick(100.0)  # the first move
    assert r.run_state.jobs["j1"].migrations == 1 and r.instance().pinned.all()
    SCRIPT.update(j1=("B", 2))
    before = r.state()
    with pytest.raises(SolverError, match="job j1 is pinned"):
        r.tick(200.0)
    assert r.state() == before


def test_limits_are_saved_and_restored():
    sim = Simulator(trace(6, nodes=4, jobs=24), "incremental", seed=1, moves_per_hour=1)
    for _ in range(30):
        sim.step()
    state = json.loads(json.dumps(sim.rescheduler.state()))
    back = Rescheduler.restore(state)
    assert back.run_state.recent_moves == sim.rescheduler.run_state.recent_moves
    assert back.config.moves_per_hour == 1
    assert (back.instance().pinned == sim.rescheduler.instance().pinned).all()


def test_cli_simulate_and_compare_show_the_cap(tmp_path):
    tr = tmp_path / "t.json"  # uncapped, the default moves a job of this trace 10 times
    tr.write_text(json.dumps(generate_trace(3, 10, seed=2, arrivals="high")))
    res = CliRunner().invoke(
        cli, ["simulate", str(tr), "--max-moves", "1", "--json", "-q", "--seed", "2"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["max_job_moves"] <= 1
    res = CliRunner().invoke(
        cli, ["compare", str(tr), "--methods", "incremental,edf", "--max-moves", "1", "-q"]
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert any(line.startswith("incremental cap 1") for line in lines)
    assert any(line.startswith("incremental ") and "cap" not in line for line in lines)
    assert "cap cost %" in res.output


@pytest.mark.parametrize("method", ["incremental", "managed-spot", "uniform-progress", "greedy"])
def test_methods_keep_pinned_jobs_on_spot_vms(method):
    """A spot run's rescheduling point (aws-us-east-1, spot capacity from the model) with every
    running job pinned, some on spot VMs: the spot decisions, the spot baselines and the paper's
    heuristics keep them (`on-demand` sees a job on spot as waiting and cannot)."""
    on_spot = 0
    for seed in (2, 3):
        data = generate_trace(4, 24, seed=seed, arrivals="high", catalog="aws-us-east-1")
        sim = Simulator(Instance.from_dict(data), "incremental", seed=seed, spot=True)
        for _ in range(12):
            sim.step()
        inst = sim.rescheduler.instance()
        inst = dataclasses.replace(inst, pinned=inst.current_cfg >= 0)
        cat, p = inst.catalog, np.flatnonzero(inst.pinned)
        on_spot += int(cat.spot[cat.cfg_vm[inst.current_cfg[p]]].sum())
        sol = solve(inst, method, seed=seed)
        assert validate(sol).ok, validate(sol).errors
        assert (sol.job_node[p] == inst.current_node[p]).all()
        assert (sol.job_cfg[p] == inst.current_cfg[p]).all()
        # every job sent on demand: the pinned ones on spot stay on spot all the same
        expected = spot_instance(inst, np.full(inst.n_jobs, ON_DEMAND))
        assert (expected.current_cfg[p] == inst.current_cfg[p]).all()
        assert np.isfinite(expected.times[p, inst.current_cfg[p]]).all()
    assert on_spot >= 2
