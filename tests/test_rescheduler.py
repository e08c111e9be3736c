"""Tests of the online Rescheduler: accounting by hand, plans, matching, errors, state/restore."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuaas.errors import InputError, SolverError, StateError
from gpuaas.limits import MIN_SECONDS
from gpuaas.methods import METHODS, Method
from gpuaas.rescheduler import (
    MAX_PROGRESS,
    PAPER_COSTS,
    Rescheduler,
    accounting,
    assign_max,
    match_nodes,
)
from gpuaas.solution import Solution

ROOT = Path(__file__).resolve().parents[1]

# Two VM types: A has 1 GPU at 3.6 $/h (0.001 $/s), B has 2 GPUs at 7.2 $/h (0.002 $/s).
CATALOG = {
    "vm_types": [
        {"name": "A", "gpu": "K80", "gpus": 1, "cost_per_hour": 3.6},
        {"name": "B", "gpu": "K80", "gpus": 2, "cost_per_hour": 7.2},
    ]
}

#: job id -> (VM name, GPUs) or None (postpone): what the "test-scripted" solver does
SCRIPT: dict[str, tuple[str, int] | None] = {}


def scripted(instance, *, seed=0, time_limit=None, **options):
    """Test-only solver: each job on its own node as SCRIPT says, numbering nodes from the
    last-submitted job (so its node numbers shift as jobs arrive)."""
    cat = instance.catalog
    node_vm = np.full(instance.nodes, -1)
    job_node = np.full(instance.n_jobs, -1)
    job_cfg = np.full(instance.n_jobs, -1)
    k = 0
    for j in reversed(range(instance.n_jobs)):
        choice = SCRIPT.get(instance.job_ids[j])
        if choice is not None and k < instance.nodes:
            v = cat.vm_index(choice[0])
            node_vm[k], job_node[j], job_cfg[j] = v, k, cat.config(v, choice[1])
            k += 1
    return Solution(
        instance, node_vm, job_node, job_cfg, "test-scripted", {"seconds": 0.0, "seed": seed}
    )


def overfull(instance, *, seed=0, time_limit=None, **options):
    """Test-only broken solver: every job on node 0 with an A VM (over capacity from 2 jobs)."""
    cat = instance.catalog
    return Solution(
        instance,
        [0] + [-1] * (instance.nodes - 1),
        np.zeros(instance.n_jobs),
        np.full(instance.n_jobs, cat.config(0, 1)),
        "test-overfull",
    )


@pytest.fixture(autouse=True)
def _methods(monkeypatch):
    monkeypatch.setitem(
        METHODS, "test-scripted", Method("test-scripted", __name__, "scripted", "test only", "test")
    )
    monkeypatch.setitem(
        METHODS, "test-overfull", Method("test-overfull", __name__, "overfull", "test only", "test")
    )
    SCRIPT.clear()


def status(r):
    """Job id -> `JobStatus` of each unfinished job."""
    return {j.id: j for j in r.unfinished()}


def job(jid, due=10_000.0, weight=0.01, **extra):
    """A job runnable on A (1000 s) and on B (800 s with 1 GPU, 500 s with 2)."""
    return {
        "id": jid,
        "due": due,
        "weight": weight,
        "times": {"A": [1000.0], "B": [800.0, 500.0]},
        **extra,
    }


def test_costs_and_progress_by_hand():
    """VM cost is price x open time, progress elapsed / whole-job time, tardiness w x lateness."""
    SCRIPT["j1"] = ("B", 2)
    r = Rescheduler(CATALOG, 2, "test-scripted", **PAPER_COSTS)
    plan = r.submit(job("j1", due=400.0, weight=0.01), at=0.0)
    assert plan.open == [{"node": 0, "vm": "B"}]
    assert plan.start == [{"id": "j1", "node": 0, "vm": "B", "gpus": 2, "progress": 0.0}]
    r.tick(200.0)
    assert status(r)["j1"].progress == pytest.approx(200 / 500)  # 0.4 of the work done
    assert r.vm_cost == pytest.approx(0.002 * 200)
    plan = r.complete("j1", at=500.0)
    assert plan.close == [{"node": 0, "vm": "B"}] and plan.completed == ["j1"]
    assert r.vm_cost == pytest.approx(0.002 * 500)  # 1.0 $
    assert r.tardiness_cost == pytest.approx(0.01 * (500 - 400))  # 1.0 $
    done = r.completions()["j1"]
    assert (done["start"], done["completion"], done["jct"], done["waiting"]) == (
        0.0,
        500.0,
        500.0,
        0.0,
    )


def test_instance_carries_remaining_times_and_placement():
    """The event's Instance has remaining times, relative due dates and where each job runs."""
    SCRIPT.update(j1=("B", 2), j2=None)
    r = Rescheduler(CATALOG, 2, "test-scripted", **PAPER_COSTS)
    r.submit(job("j1", due=2000.0), at=0.0)
    r.submit(job("j2", due=3000.0), at=100.0)
    inst = r.instance()
    assert inst.job_ids == ("j1", "j2") and inst.time == 100.0
    assert inst.progress[0] == pytest.approx(100 / 500)
    assert inst.times[0, 2] == pytest.approx(400.0)  # B x2: 500 s of which 100 done
    assert list(inst.rel_due) == [1900.0, 2900.0]
    assert list(inst.current_node) == [0, -1] and list(inst.current_cfg) == [2, -1]


def test_matching_keeps_running_jobs_in_place():
    """A solver renumbering its nodes causes no migration: physical nodes keep their jobs."""
    SCRIPT.update(j1=("A", 1), j2=("B", 1))
    r = Rescheduler(CATALOG, 3, "test-scripted")
    r.submit(job("j1"), at=0.0)  # j1 on node 0
    SCRIPT.update(j0=("B", 2), j3=None)
    plan = r.submit(job("j0"), at=10.0)  # the solver's node 0 is now j0's, j1 is on its node 1
    assert status(r)["j1"].node == 0 and status(r)["j0"].node == 1
    plan = r.submit([job("j2"), job("j3")], at=20.0)  # solver: j2 0, j0 1, j1 2
    assert r.migrations == 0 and plan.migrate == [] and plan.resize == []
    assert status(r)["j1"].node == 0
    assert [a["id"] for a in plan.start] == ["j2"] and status(r)["j3"].cfg == -1


def test_migration_resize_preemption_and_overhead():
    """A configuration change is a migration (resizing the node), a postponement a preemption;
    each loses `overhead` seconds of work on the old configuration."""
    SCRIPT.update(j1=("B", 2))
    r = Rescheduler(CATALOG, 1, "test-scripted", overhead=50.0, startup=0.0)
    r.submit(job("j1"), at=0.0)
    SCRIPT.update(j1=("A", 1))
    plan = r.tick(200.0)  # 0.4 done on B x2, lose 50/500 = 0.1
    assert plan.resize == [{"node": 0, "from": "B", "to": "A"}]
    assert plan.migrate[0]["from"]["vm"] == "B" and plan.migrate[0]["to"] == {
        "node": 0,
        "vm": "A",
        "gpus": 1,
    }
    assert plan.migrate[0]["lost_work"] == pytest.approx(0.1)
    assert status(r)["j1"].progress == pytest.approx(0.3)
    SCRIPT.update(j1=None)
    plan = r.tick(300.0)  # +100/1000 on A = 0.4, lose 50/1000 = 0.05
    assert plan.preempt[0]["id"] == "j1" and plan.close == [{"node": 0, "vm": "A"}]
    assert status(r)["j1"].progress == pytest.approx(0.35)
    assert (r.migrations, r.preemptions) == (1, 1)
    SCRIPT.update(j1=("A", 1))
    plan = r.tick(400.0)
    assert plan.start[0]["progress"] == pytest.approx(0.35) and status(r)["j1"].start == 0.0


def test_startup_delays_work_and_lost_work_is_charged():
    """A VM opened or resized works only `startup` s after the event; lost work is charged at
    the old configuration's share of its VM's price."""
    SCRIPT.update(j1=("B", 2))
    r = Rescheduler(CATALOG, 1, "test-scripted", overhead=50.0, startup=100.0)
    r.submit(job("j1"), at=0.0)
    r.tick(300.0)  # B x2 (500 s) ready at 100: 200 s of work = 0.4
    assert status(r)["j1"].progress == pytest.approx(0.4) and r.vm_cost == pytest.approx(
        0.002 * 300
    )
    assert r.startup_cost == pytest.approx(0.002 * 100)
    SCRIPT.update(j1=("A", 1))
    r.tick(400.0)  # 0.4 + 100/500, then resized to A (ready 500), losing 50/500 of B x2
    assert status(r)["j1"].progress == pytest.approx(0.5) and [n.ready for n in r.open_nodes()] == [
        500.0
    ]
    assert r.lost_work_cost == pytest.approx(50.0 * 0.002)  # B x2 is the whole B VM
    r.tick(600.0)  # A (1000 s) works from 500 only
    assert status(r)["j1"].progress == pytest.approx(0.5 + 100 / 1000)


def test_predicted_finish_without_completion_is_held():
    """A job predicted finished but not reported complete stays unfinished at MAX_PROGRESS."""
    SCRIPT.update(j1=("B", 2))
    r = Rescheduler(CATALOG, 1, "test-scripted")
    r.submit(job("j1"), at=0.0)
    r.tick(900.0)
    assert "j1" in status(r) and status(r)["j1"].progress == MAX_PROGRESS


def test_progress_reports_override_predictions():
    """Measured progress passed with an event replaces the predicted one; bad reports raise."""
    SCRIPT.update(j1=("B", 2))
    r = Rescheduler(CATALOG, 1, "test-scripted")
    r.submit(job("j1"), at=0.0)
    r.tick(100.0, progress={"j1": 0.05})
    assert status(r)["j1"].progress == 0.05
    with pytest.raises(InputError, match="must be < 1"):
        r.tick(200.0, progress={"j1": 1.0})
    with pytest.raises(StateError, match="unknown or completed job 'zz'"):
        r.tick(200.0, progress={"zz": 0.5})


def test_read_api_reports_jobs_nodes_and_completions():
    """unfinished(), open_nodes() and completions() describe the state; changing what they
    return changes nothing."""
    SCRIPT.update(j1=("B", 1), j2=None)
    r = Rescheduler(CATALOG, 2, "test-scripted", overhead=0.0, startup=100.0)
    r.submit([job("j1"), job("j2")], at=0.0)
    r.tick(300.0)  # j1 on B x1 (800 s) since 100: 0.25 done
    j1, j2 = r.unfinished()
    assert (j1.id, j1.node, j1.vm, j1.gpus, j1.ready, j1.start) == ("j1", 0, "B", 1, 100.0, 0.0)
    assert j1.cfg == r.catalog.config(r.catalog.vm_index("B"), 1)
    assert j1.progress == pytest.approx(200 / 800)
    assert (j2.node, j2.cfg, j2.vm, j2.gpus, j2.ready, j2.start) == (-1, -1, None, None, None, None)
    assert [tuple(n) for n in r.open_nodes()] == [(0, "B", 100.0)]
    before = json.dumps(r.state())
    with pytest.raises(TypeError):
        r.completions()["j1"] = {}  # type: ignore[index]
    r.unfinished().clear()
    assert json.dumps(r.state()) == before and r.completions() == {}
    r.complete("j1", at=900.0)
    assert list(r.completions()) == ["j1"] and r.completions()["j1"]["completion"] == 900.0
    assert [j.id for j in r.unfinished()] == ["j2"] and r.open_nodes() == []


def test_checked_job_spec_submits_like_its_dict():
    """A `JobSpec` (what the simulator passes from a checked trace) gives the same plans and
    state as the job object it was parsed from; one for another catalog is refused."""
    from gpuaas.instance import parse_job

    SCRIPT.update(j1=("B", 2), j2=("A", 1))
    runs = []
    for as_spec in (False, True):
        r = Rescheduler(CATALOG, 2, "test-scripted", seed=2)
        jobs = [job("j1", release=10.0, progress=0.25), job("j2")]
        if as_spec:
            jobs = [parse_job(d, r.catalog, None, "job", release=20.0) for d in jobs]
        plan = r.submit(jobs, at=20.0)
        runs.append((plan.to_dict() | {"solver_seconds": 0, "solver_cpu_seconds": 0}, r.state()))
    assert runs[0] == runs[1]
    spec = parse_job(job("j3"), Rescheduler(CATALOG, 1, "test-scripted").catalog, None, "job")
    r = Rescheduler("azure-2021", 1, "test-scripted")
    with pytest.raises(InputError, match=r"job\[0\] \(j3\)\.work: has 3 entries"):
        r.submit(spec, at=0.0)


def test_errors_are_clear_and_leave_state_unchanged():
    """Out-of-order times, unknown ids, duplicate and invalid jobs raise; state is untouched."""
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 1, "test-scripted")
    r.submit(job("j1"), at=100.0)
    before = json.dumps(r.state())
    with pytest.raises(StateError, match="before the previous event"):
        r.tick(50.0)
    with pytest.raises(StateError, match="unknown job 'nope'"):
        r.complete("nope", at=150.0)
    with pytest.raises(StateError, match="already submitted"):
        r.submit(job("j1"), at=150.0)
    with pytest.raises(InputError, match="unknown VM type"):
        r.submit({"id": "x", "due": 1.0, "weight": 0.1, "times": {"Z": [1.0]}}, at=150.0)
    with pytest.raises(InputError, match="needs 'times'"):
        r.submit({"id": "x", "due": 1.0, "weight": 0.1}, at=150.0)
    with pytest.raises(InputError, match="after the submission time"):
        r.submit(job("x", release=500.0), at=150.0)
    with pytest.raises(InputError, match="unknown field"):
        r.submit(job("x", colour="red"), at=150.0)
    with pytest.raises(InputError, match="unknown method"):
        Rescheduler(CATALOG, 1, "no-such-method")
    assert json.dumps(r.state()) == before


@pytest.mark.parametrize("where", ["method", "apply"])
def test_failed_event_leaves_state_unchanged_and_can_be_fed_again(monkeypatch, where):
    """An event whose method fails (or that fails while the plan is applied, after some jobs
    moved) leaves the state as it was: the same event fed again gives what a twin that never
    failed gives."""
    SCRIPT.update(j1=("B", 2), j2=("A", 1), j3=("A", 1))
    twins = [
        Rescheduler(CATALOG, 3, "test-scripted", overhead=30.0, startup=20.0) for _ in range(2)
    ]
    for r in twins:
        r.submit([job("j1", due=400.0), job("j2")], at=0.0)
        r.tick(300.0, progress={"j2": 0.25})
    a, b = twins
    before = json.dumps(a.state())
    SCRIPT.update(j1=("A", 1), j2=None, j3=("B", 1))  # j1 migrates, j2 is preempted, j3 starts

    def fail(*args, **kwargs):
        raise SolverError("no solution within the time limit")

    with monkeypatch.context() as m:
        if where == "method":
            m.setattr("gpuaas.rescheduler.apply.solve", fail)
        else:  # the first restart's lost work is charged, then the second one fails
            real, calls = accounting.lose_work, []

            def lose_once(s, j):
                calls.append(j.id)
                return real(s, j) if len(calls) == 1 else fail()

            m.setattr(accounting, "lose_work", lose_once)
        with pytest.raises(SolverError):
            a.update(600.0, submit=[job("j3")], progress={"j1": 0.5})
        assert where == "method" or calls == ["j1", "j2"]
    assert json.dumps(a.state()) == before
    timing = ("solver_seconds", "solver_cpu_seconds")
    plans = [
        {
            k: v
            for k, v in r.update(600.0, submit=[job("j3")], progress={"j1": 0.5}).to_dict().items()
            if k not in timing
        }
        for r in (a, b)
    ]
    assert plans[0] == plans[1] and plans[0]["migrate"] and plans[0]["preempt"]
    assert a.state() == b.state()


def test_duplicate_completion_is_ignored_with_a_warning():
    """Completing a job twice warns and changes nothing."""
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 1, "test-scripted")
    r.submit(job("j1"), at=0.0)
    r.complete("j1", at=1000.0)
    cost = r.vm_cost + r.tardiness_cost
    with pytest.warns(UserWarning, match="already completed"):
        plan = r.complete("j1", at=1000.0)
    assert plan.completed == [] and r.vm_cost + r.tardiness_cost == cost


def test_invalid_solver_solution_raises():
    """A solver whose Solution breaks capacity is reported, not applied."""
    r = Rescheduler(CATALOG, 2, "test-overfull")
    r.submit(job("j1"), at=0.0)
    before = r.state()
    with pytest.raises(SolverError, match="more GPUs"):
        r.submit(job("j2"), at=1.0)
    assert r.state() == before


def test_state_restore_continues_exactly():
    """state() survives JSON and restore() continues with the same plans, costs and state."""
    SCRIPT.update(j1=("B", 1), j2=("B", 1), j3=("A", 1))
    a = Rescheduler(CATALOG, 2, "test-scripted", seed=3, overhead=7.5, H=1800)
    a.submit(job("j1", due=300.0), at=0.0)
    a.submit([job("j2"), job("j3")], at=123.456)
    b = Rescheduler.restore(json.loads(json.dumps(a.state())))
    SCRIPT.update(j2=("A", 1), j3=None)
    for r in (a, b):
        plans = [r.tick(1000.0 / 3.0 + 200), r.complete("j1", at=900.0), r.tick(2000.0)]
        timing = ("solver_seconds", "solver_cpu_seconds")
        r.plans = [{k: v for k, v in p.to_dict().items() if k not in timing} for p in plans]  # type: ignore[attr-defined]
    assert a.plans == b.plans  # type: ignore[attr-defined]
    assert a.state() == b.state()
    with pytest.raises(StateError, match="version 99 was written by a newer gpuaas"):
        Rescheduler.restore({"version": 99})


def test_plan_objective_is_the_solutions_p1_dollars(monkeypatch):
    """A plan's objective (computed when first read) is P1$ of the solution the method
    returned at that point, in the plan's JSON too."""
    from gpuaas import methods
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance

    seen = []
    solve = methods.solve

    def spy(inst, method, **kw):
        sol = solve(inst, method, **kw)
        seen.append(sol)
        return sol

    monkeypatch.setattr("gpuaas.rescheduler.apply.solve", spy)
    trace = Instance.from_dict(generate_trace(2, 5, 1))
    r = Rescheduler(trace.catalog, 2, "incremental")
    for j in range(trace.n_jobs):
        spec = trace.job_spec(j)
        plan = r.submit(spec, at=float(trace.release[j]))
        assert plan.objective == pytest.approx(seen[-1].objective, rel=1e-12)
        assert plan.to_dict()["objective"] == plan.objective


def test_plan_is_json_and_readable():
    """Plan.to_dict() is JSON-able and str(plan) names every action."""
    SCRIPT.update(j1=("B", 2))
    plan = Rescheduler(CATALOG, 1, "test-scripted").submit(job("j1"), at=0.0)
    assert json.loads(json.dumps(plan.to_dict()))["start"][0]["id"] == "j1"
    assert "open    node 0 B" in str(plan) and "start   j1 on node 0 B x2" in str(plan)


def test_assignment_is_optimal_against_enumeration():
    """assign_max finds the best permutation on random integer matrices (brute force n <= 6)."""
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = int(rng.integers(1, 7))
        w = rng.integers(0, 5, size=(n, n)).astype(float)
        perm = assign_max(w)
        assert sorted(perm) == list(range(n))
        best = max(sum(w[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
        assert sum(w[i, perm[i]] for i in range(n)) == best


def _matching_weights(old_vm, new_vm, cur_node, cur_cfg, job_node, job_cfg):
    """W[s, p]: the matching step's objective over every node slot, written out from its
    definition (gpuaas.rescheduler.matching): kept jobs, VM types kept, open nodes reused,
    s == p, each level above all lower ones together."""
    n = len(old_vm)
    A, B, C = (n + 1.0) ** 3, (n + 1.0) ** 2, n + 1.0
    W = np.zeros((n, n))
    for s in range(n):
        for p in range(n):
            kept = (job_node == s) & (cur_node == p) & (job_cfg == cur_cfg)
            W[s, p] = A * kept.sum() + (s == p)
            if new_vm[s] >= 0:
                W[s, p] += B * (new_vm[s] == old_vm[p]) + C * (old_vm[p] >= 0)
    return W


def test_node_matching_is_optimal_with_its_forced_pairs():
    """match_nodes, which solves only the nodes its forced pairs leave, reaches the optimum of
    the whole assignment (the Hungarian algorithm on every slot) on random incumbents and
    solutions: some nodes kept as they are, renumbered, resized, opened or closed."""
    rng = np.random.default_rng(3)
    for _ in range(150):
        n, V = int(rng.integers(1, 8)), 3
        old_vm = np.where(rng.random(n) < 0.7, rng.integers(0, V, n), -1)
        new_vm = np.where(rng.random(n) < 0.7, rng.integers(0, V, n), -1)
        J = int(rng.integers(0, 12))
        open_old, open_new = np.flatnonzero(old_vm >= 0), np.flatnonzero(new_vm >= 0)
        cur_node = np.where(
            (rng.random(J) < 0.8) & bool(len(open_old)),
            rng.choice(open_old, J) if len(open_old) else -1,
            -1,
        )
        job_node = np.where(
            (rng.random(J) < 0.8) & bool(len(open_new)),
            rng.choice(open_new, J) if len(open_new) else -1,
            -1,
        )
        if len(open_old) and len(open_new) and rng.random() < 0.5:  # solver kept the numbering
            stay = rng.random(J) < 0.7
            ok = stay & (cur_node >= 0) & (new_vm[np.maximum(cur_node, 0)] >= 0)
            job_node = np.where(ok, cur_node, job_node)
        cur_cfg = np.where(cur_node >= 0, rng.integers(0, 2, J), -1)
        job_cfg = np.where(
            job_node >= 0, np.where(rng.random(J) < 0.6, cur_cfg, rng.integers(0, 2, J)), -1
        )
        job_cfg = np.where((job_node >= 0) & (job_cfg < 0), 0, job_cfg)
        args = (old_vm, new_vm, cur_node, cur_cfg, job_node, job_cfg)
        perm = match_nodes(*args)
        assert sorted(perm) == list(range(n))
        W = _matching_weights(*args)
        every = np.array(list(itertools.permutations(range(n))))
        best = W[np.arange(n), every].sum(axis=1).max()
        assert W[np.arange(n), perm].sum() == best


def test_readme_example_runs(tmp_path, checkout_env):
    """The README's orchestration example runs and prints its plans."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- rescheduler-example -->\s*```python\n(.*?)```", text, re.DOTALL)
    assert m, "README has no rescheduler example block"
    out = subprocess.run(
        [sys.executable, "-c", m.group(1)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=checkout_env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "open" in out.stdout and "start" in out.stdout and "restored" in out.stdout


# -- events, state format, idempotency ---------------------------------------------------------

DATA = ROOT / "tests" / "data"


def without_timing(plan):
    return {
        k: v for k, v in plan.to_dict().items() if k not in ("solver_seconds", "solver_cpu_seconds")
    }


@pytest.mark.parametrize("version", [2])
def test_state_of_the_previous_version_restores_and_continues_as_it_did(version):
    """A state saved by the releases of format version 2 (tests/data/README.md) restores
    through both migrations, and the event that came next gets the plan and leaves the costs
    that release gave (the version 3 sample, an interruption: tests/test_spot.py)."""
    from gpuaas.instance import JobSpec
    from gpuaas.rescheduler import STATE_VERSION

    sample = json.loads((DATA / f"rescheduler-state-v{version}.json").read_text())
    assert sample["state"]["version"] == version
    # that release's default method did not polish (the default's polish step): the same decisions
    # are asked of it without
    sample["state"]["solver_options"] = {"polish": 0.0}
    r = Rescheduler.restore(sample["state"])
    assert r.state()["version"] == STATE_VERSION == 7
    ev = sample["event"]
    submit = [
        JobSpec(
            d["id"],
            d["release"],
            d["due"],
            d["weight"],
            np.array([np.inf if w is None else w for w in d["work"]]),
            d["progress"],
        )
        for d in ev["submit"]
    ]
    plan = r.update(ev["at"], submit=submit, complete=ev["complete"], progress=ev["progress"])
    # the same decisions; a plan's objective is P1$ since issue 27 (that release stated f_OBJ)
    got, want = without_timing(plan), dict(sample["plan"])
    got.pop("objective"), want.pop("objective")
    assert got == want
    old = sample["state_after"]
    for k in (
        "vm_cost",
        "tardiness_cost",
        "lost_work_cost",
        "startup_cost",
        "migrations",
        "preemptions",
        "time",
        "events",
    ):
        assert getattr(r, k) == old[k], k
    assert [d["id"] for d in r.completion_log()] == [d["id"] for d in old["completed"]]
    live = r.live_state()
    assert [d["id"] for d in live["jobs"]] == [d["id"] for d in old["jobs"]]
    assert [d["progress"] for d in live["jobs"]] == [d["progress"] for d in old["jobs"]]


def test_unknown_versions_are_refused_clearly():
    r = Rescheduler(CATALOG, 1, "test-scripted")
    state = r.state()
    for version, message in [
        (
            8,
            "Rescheduler state version 8 was written by a newer gpuaas; this one reads versions 2 to 7: upgrade gpuaas",
        ),
        (1, "not a Rescheduler state of a known version (2 to 7), got version 1"),
        ("3", "not a Rescheduler state of a known version (2 to 7), got version '3'"),
    ]:
        with pytest.raises(StateError) as err:
            Rescheduler.restore(state | {"version": version})
        assert str(err.value) == message
    with pytest.raises(StateError, match="not a Rescheduler state"):
        Rescheduler.restore([])


def test_redelivered_events_return_the_same_plan_and_change_nothing():
    """An event whose id was applied is answered with its plan (even after a restore) and
    changes nothing; its id on another event, or mixed with new events, is refused."""
    from gpuaas.rescheduler import Completion, Submission, Tick

    SCRIPT.update(j1=("B", 2), j2=("A", 1))
    r = Rescheduler(CATALOG, 2, "test-scripted", overhead=30.0)
    first = r.handle([Submission(0.0, job("j1"), id="e1"), Submission(0.0, job("j2"), id="e2")])
    second = r.handle(Tick(100.0, id="e3"))
    before = json.dumps(r.state())
    for again, plan in (
        (Tick(100.0, id="e3"), second),
        (Submission(0.0, job("j2"), id="e2"), first),
    ):
        assert r.handle(again).to_dict() == plan.to_dict()
        assert json.dumps(r.state()) == before
    restored = Rescheduler.restore(json.loads(before))
    assert restored.handle(Tick(100.0, id="e3")).to_dict() == second.to_dict()
    with pytest.raises(StateError, match="^event id 'e3' was applied already, to another event$"):
        r.handle(Tick(200.0, id="e3"))
    with pytest.raises(
        StateError,
        match="^event 'e3' was applied already but the batch has new events; send them apart$",
    ):
        r.handle([Tick(100.0, id="e3"), Completion(100.0, "j1", id="e4")])
    assert json.dumps(r.state()) == before


def test_old_ids_are_never_applied_twice():
    """Beyond the plans kept (PLAN_MEMORY), an old event is refused, never applied again."""
    from gpuaas.rescheduler import PLAN_MEMORY, Tick

    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 1, "test-scripted")
    r.submit(job("j1"), at=0.0)
    for k in range(PLAN_MEMORY + 2):
        r.handle(Tick(10.0 + k, id=f"t{k}"))
    assert (
        r.handle(Tick(10.0 + PLAN_MEMORY + 1, id=f"t{PLAN_MEMORY + 1}")).time == 11.0 + PLAN_MEMORY
    )
    with pytest.raises(StateError, match="'t0' was applied already; its plan is no longer kept"):
        r.handle(Tick(10.0, id="t0"))  # every id is remembered (issue 39)
    with pytest.raises(StateError, match="before the previous event"):
        r.handle(Tick(10.0, id="new"))
    for k in range(PLAN_MEMORY + 2):  # all at one instant: their ids stay known
        r.handle(Tick(100.0, id=f"n{k}"))
    with pytest.raises(
        StateError,
        match=r"^event 'n0' was applied already; its plan is no longer kept \(the last 8 are\)$",
    ):
        r.handle(Tick(100.0, id="n0"))
    assert r.events == 2 * PLAN_MEMORY + 5


def test_a_batch_is_one_instant_and_one_point():
    from gpuaas.rescheduler import Completion, ProgressReport, Submission, Tick

    SCRIPT.update(j1=("A", 1), j2=("A", 1))
    r = Rescheduler(CATALOG, 2, "test-scripted", **PAPER_COSTS)
    r.handle(Submission(0.0, job("j1")))
    plan = r.handle([Submission(500.0, job("j2")), ProgressReport(500.0, "j1", 0.4), Tick(500.0)])
    assert r.events == 2 and plan.submitted == ["j2"] and status(r)["j1"].progress == 0.4
    for batch, message in [
        ([Tick(600.0), Completion(700.0, "j1")], "a batch is one instant; got t=600.0 and t=700.0"),
        ([], "is empty: send a Tick when nothing happened"),
    ]:
        with pytest.raises(InputError) as err:
            r.handle(batch)
        assert str(err.value) == f"events: {message}"  # instances/README.md, event-batch


def test_completion_or_progress_of_a_job_that_never_started_is_refused():
    """A waiting job never ran here: it cannot complete, nor be measured (even one submitted
    with progress, made elsewhere)."""
    SCRIPT.update(j1=None)
    r = Rescheduler(CATALOG, 1, "test-scripted")
    r.submit(job("j1", progress=0.3), at=0.0)
    with pytest.raises(StateError, match="cannot complete job 'j1': it never started"):
        r.complete("j1", at=10.0)
    with pytest.raises(StateError, match="progress reported for job 'j1', which never started"):
        r.tick(10.0, progress={"j1": 0.3})
    assert r.time == 0.0


def test_interruption_loses_work_and_the_job_is_replanned():
    """A lost VM: its jobs lose the work since their last checkpoint (every `checkpoint` s of
    running) and `overhead` s (the restart rule), wait, and are re-planned at once; the node is
    billed up to the interruption only; the loss is an involuntary move, apart from the rest."""
    from gpuaas.rescheduler import Interruption

    SCRIPT.update(j1=("B", 2))
    r = Rescheduler(CATALOG, 2, "test-scripted", overhead=50.0, startup=0.0, checkpoint=150.0)
    r.submit(job("j1"), at=0.0)
    SCRIPT.update(j1=("A", 1))
    plan = r.handle(Interruption(200.0, node=0))  # 0.4 done on B x2: loses (50 + 50) / 500
    assert [a.to_dict() for a in plan.interrupted] == [
        {"id": "j1", "node": 0, "vm": "B", "gpus": 2, "lost_work": pytest.approx(0.2)}
    ]
    assert plan.close == [] and plan.open == [{"node": 0, "vm": "A"}] and plan.migrate == []
    assert plan.start[0]["progress"] == pytest.approx(0.2)
    assert (r.interruptions, r.migrations, r.preemptions) == (1, 0, 0)
    assert r.interruption_cost == pytest.approx(r.lost_work_cost) and r.interruption_cost > 0
    assert r.run_state.jobs["j1"].interrupted_work == pytest.approx(0.2)
    assert r.vm_cost == pytest.approx(0.002 * 200) and "lost" in str(plan)
    with pytest.raises(StateError, match="^node 1 was interrupted but it is not open$"):
        r.handle(Interruption(300.0, node=1))
    r2 = Rescheduler.restore(json.loads(json.dumps(r.state())))
    assert r2.interruptions == 1 and r2.state() == r.state()


def test_capacity_limits_new_vms_of_a_type():
    """A VM type at its capacity is offered to no job (running jobs stay); a plan holding more
    VMs of it than the capacity allows is refused; capacity back, the type is offered again."""
    from gpuaas.rescheduler import CapacityChange

    r = Rescheduler(CATALOG, 2, "greedy", **PAPER_COSTS)
    r.submit(job("j1"), at=0.0)
    running = status(r)["j1"]
    r.handle(CapacityChange(10.0, vm=running.vm, count=1))
    cat = r.catalog
    same = [c for c in range(cat.n_configs) if cat.vm_names[cat.cfg_vm[c]] == running.vm]
    inst = r.instance()
    assert np.isinf(inst.work[0, [c for c in same if c != running.cfg]]).all()
    assert inst.work[0, running.cfg] < np.inf and r.capacity() == {running.vm: 1}
    plan = r.submit(job("j2"), at=20.0)
    assert np.isinf(r.instance().work[1, same]).all() or status(r)["j2"].vm != running.vm
    assert all(a.vm != running.vm for a in plan.open)
    r.handle(CapacityChange(30.0, vm=running.vm, count=None))
    assert r.capacity() == {} and np.isfinite(r.instance().work[:, same]).all()
    with pytest.raises(InputError, match="unknown VM type"):
        r.handle(CapacityChange(40.0, vm="Z", count=0))
    with pytest.raises(InputError, match="capacity.count: must be an integer >= 0"):
        r.handle(CapacityChange(40.0, vm="A", count=-1))
    SCRIPT.update(j1=("A", 1), j2=("A", 1))
    s = Rescheduler(CATALOG, 2, "test-scripted", **PAPER_COSTS)
    s.handle(CapacityChange(0.0, vm="A", count=1))
    with pytest.raises(
        SolverError, match="^test-scripted: holds 2 A VMs, more than the 1 its capacity allows$"
    ):
        s.submit([job("j1"), job("j2")], at=0.0)
    restored = Rescheduler.restore(json.loads(json.dumps(r.state())))
    assert restored.capacity() == r.capacity()


def test_throughput_report_replaces_the_time_on_the_running_configuration():
    from gpuaas.rescheduler import ThroughputReport

    SCRIPT.update(j1=("B", 2))
    r = Rescheduler(CATALOG, 1, "test-scripted", **PAPER_COSTS)
    r.submit(job("j1"), at=0.0)
    r.handle(ThroughputReport(100.0, "j1", seconds=1000.0))  # twice the predicted 500 s
    assert status(r)["j1"].progress == pytest.approx(0.2)
    r.tick(600.0)
    assert status(r)["j1"].progress == pytest.approx(0.2 + 500 / 1000)
    assert r.instance().work[0, status(r)["j1"].cfg] == 1000.0


def test_events_round_trip_as_json():
    from gpuaas.rescheduler import (
        CapacityChange,
        Completion,
        Interruption,
        ProgressReport,
        Submission,
        ThroughputReport,
        Tick,
        event_from_dict,
    )

    for e in (
        Submission(1.0, job("j1"), id="a"),
        Completion(2.0, "j1"),
        Tick(3.0),
        ProgressReport(4.0, "j1", 0.5),
        ThroughputReport(5.0, "j1", 100.0),
        Interruption(6.0, 1),
        CapacityChange(7.0, "A", 0),
    ):
        assert event_from_dict(json.loads(json.dumps(e.to_dict()))) == e
    with pytest.raises(InputError, match="kind: must be one of"):
        event_from_dict({"kind": "party", "at": 1.0})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    jobs=st.lists(
        st.tuples(
            st.floats(MIN_SECONDS, 1e9),  # time on A (the least whole-job time accepted ...)
            st.floats(MIN_SECONDS, 1e9),  # time on B x2 (... gpuaas.limits)
            st.floats(-1e9, 1e9),  # due
            st.floats(0.0, 1e6),  # weight
            st.floats(0.0, 1.0, exclude_max=True),  # progress at submission
            st.floats(0.0, 1e4),  # how long before the event it was released
        ),
        min_size=1,
        max_size=4,
    ),
    at=st.floats(1e4, 1e8),
    overhead=st.sampled_from([0.0, 600.0]),
)
def test_what_submit_accepts_is_saved_and_restored(jobs, at, overhead):
    """Any job `submit` accepts survives state() -> JSON -> restore(), and the restored
    Rescheduler continues exactly as the original (restore checks each job as submit did)."""
    r = Rescheduler(CATALOG, 2, "greedy", overhead=overhead)
    objs = [
        {
            "id": f"j{i}",
            "release": at - back,
            "due": due,
            "weight": w,
            "progress": p,
            "times": {"A": [a], "B": [None, b]},
        }
        for i, (a, b, due, w, p, back) in enumerate(jobs)
    ]
    r.submit(objs, at=at)
    r.tick(at + 3600.0)
    b = Rescheduler.restore(json.loads(json.dumps(r.state())))
    assert b.state() == r.state()
    later = [without_timing(x.tick(at + 7200.0)) for x in (r, b)]
    assert later[0] == later[1] and b.state() == r.state()
