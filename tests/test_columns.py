"""The Rescheduler's jobs as columns (`gpuaas.rescheduler.records.Columns`, issue 43 item 4):
records and columns agree, a failed event puts both back, rows are reused, and the plans built
from what an event changed list every job and node as a rebuild would."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpuaas.errors import SolverError
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.rescheduler import (
    Completion,
    Interruption,
    ProgressReport,
    Rescheduler,
    Submission,
)
from gpuaas.rescheduler.records import HOT
from gpuaas.simulator import Simulator

CATALOG = {
    "vm_types": [
        {"name": "A", "gpu": "K80", "gpus": 1, "cost_per_hour": 3.6},
        {"name": "B", "gpu": "K80", "gpus": 2, "cost_per_hour": 7.2},
    ]
}


def job(jid, due=10_000.0, weight=0.01):
    return {"id": jid, "due": due, "weight": weight, "times": {"A": [1000.0], "B": [800.0, 500.0]}}


def check_columns(r: Rescheduler) -> None:
    """Every unfinished job's record reads its own row; the plan's view of every job and node
    is the state's."""
    s = r.run_state
    assert sorted(j.row for j in s.jobs.values()) == sorted(
        i for i, j in enumerate(s.cols.job) if j is not None
    )
    for j in s.jobs.values():
        assert j.cols is s.cols and s.cols.job[j.row] is j
        for k in HOT:
            assert getattr(j, k) == s.cols.hot[k][j.row]
    assert list(s.order()) == [j.row for j in s.jobs.values()]


def plan_view(plan):
    """(jobs, nodes) of a plan's target state, as plain tuples."""
    return (
        [(a.id, a.node, a.vm, a.gpus) for a in plan.jobs],
        [(a.node, a.vm) for a in plan.nodes],
    )


def state_view(r: Rescheduler):
    """The same, from the Rescheduler's read API (built from every record)."""
    return (
        [(j.id, j.node if j.cfg >= 0 else None, j.vm, j.gpus) for j in r.unfinished()],
        [(n.node, n.vm) for n in r.open_nodes()],
    )


def test_failed_event_with_completion_lost_vm_and_submission_puts_columns_back(monkeypatch):
    """A batch completing a job, losing a VM, reporting progress and submitting jobs whose
    method then fails leaves records, columns and plans as they were: fed again, it gives what
    a twin that never failed gives, and a completed job's record keeps its fields."""
    twins = [Rescheduler(CATALOG, 4, "greedy", overhead=30.0, startup=20.0) for _ in range(2)]
    for r in twins:
        r.submit([job("j1", due=900.0), job("j2"), job("j3")], at=0.0)
        r.tick(300.0)
    a, b = twins
    before, inst = json.dumps(a.state()), a.instance()
    running = [j for j in a.unfinished() if j.cfg >= 0]
    done, lost = running[0].id, running[-1].node
    batch = [
        Completion(400.0, done),
        Interruption(400.0, lost),
        ProgressReport(400.0, running[1].id, 0.5),
        Submission(400.0, job("j4")),
        Submission(400.0, job("j5")),
    ]

    def fail(*args, **kwargs):
        raise SolverError("no solution within the time limit")

    with monkeypatch.context() as m:
        m.setattr("gpuaas.rescheduler.apply.solve", fail)
        with pytest.raises(SolverError):
            a.handle(batch)
    assert json.dumps(a.state()) == before
    again = a.instance()
    for k in ("progress", "current_node", "current_cfg", "work", "ready", "release"):
        assert np.array_equal(getattr(again, k), getattr(inst, k)), k
    check_columns(a)
    plans = [r.handle(batch) for r in (a, b)]
    assert plan_view(plans[0]) == plan_view(plans[1]) == state_view(a)
    assert a.state() == b.state()
    check_columns(a)
    record = a.completions()[done]
    assert record["running"] == pytest.approx(400.0 - 20.0) and done not in a.run_state.jobs


def test_plans_and_columns_agree_with_the_records_through_a_run_and_a_restore():
    """Through a simulation with spot capacity (lost VMs) and a restore midway: each plan lists
    every unfinished job and open node as the records say, records read their rows, and the
    columns' rows are reused (their number stays near the most jobs unfinished at once)."""
    trace = Instance.from_dict(generate_trace(4, 40, seed=3, catalog="aws-us-east-1"))
    sim = Simulator(trace, method="greedy", spot=True, seed=2)
    most, steps = 0, 0
    while (plan := sim.step()) is not None:
        steps += 1
        r = sim.rescheduler
        assert plan_view(plan) == state_view(r)
        check_columns(r)
        most = max(most, len(r.run_state.jobs))
        if steps == 60:
            sim.rescheduler = Rescheduler.restore(json.loads(json.dumps(r.state())))
    assert sim.rescheduler.interruptions > 0 and steps > 60
    assert len(sim.rescheduler.run_state.cols.job) <= max(8, 2 * most)
