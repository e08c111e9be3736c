"""The independent validator: feasibility rules and f_OBJ worked out by hand."""

import math

import numpy as np
import pytest

from gpuaas import Instance, Solution, load_catalog, validate

CAT = {
    "vm_types": [
        {"name": "S", "gpu": "K80", "gpus": 1, "cost_per_hour": 3.6},  # 0.001 $/s
        {"name": "L", "gpu": "K80", "gpus": 2, "cost_per_hour": 7.2},  # 0.002 $/s
    ]
}
# configurations: 0 = (S, 1), 1 = (L, 1), 2 = (L, 2)


def make(jobs, nodes=2, time=0.0):
    return Instance.from_dict({"catalog": CAT, "nodes": nodes, "time": time, "jobs": jobs}, "t")


JOBS = [
    {"id": "a", "due": 1000.0, "weight": 0.01, "times": {"S": [800.0], "L": [800.0, 500.0]}},
    {"id": "b", "due": 100.0, "weight": 0.02, "times": {"L": [300.0, 200.0]}},
]


def test_objective_by_hand():
    """Two jobs on one L node: tardiness, idle GPUs and first-ending node cost add up as P1a says."""
    inst = make(JOBS)
    sol = Solution(inst, [1, -1], [0, 0], [1, 1])  # both on node 0 (L), one GPU each
    rep = validate(sol)
    assert rep.ok, rep.errors
    # a: t=800 <= 1000 no tardiness; b: t=300, d=100 -> 0.02*200 = 4
    # node 0: idle 2-2 = 0; first-ending job b: 0.002 * 300 = 0.6
    assert rep.f_obj == pytest.approx(4.6)
    assert sol.f_obj == pytest.approx(4.6)


def test_postponed_and_idle_by_hand():
    """A postponed job pays rho*w*(H + M - d); an open node pays mu per idle GPU."""
    inst = make(JOBS)
    sol = Solution(inst, [1, -1], [0, -1], [1, -1])  # a alone on L with 1 GPU, b waits
    rep = validate(sol)
    assert rep.ok
    # a: 0 tardiness; node: idle 1 -> 1.0, cost 0.002*800 = 1.6; b: 100*0.02*(3600+300-100) = 7600
    assert rep.f_obj == pytest.approx(1.0 + 1.6 + 7600.0)


def test_late_job_pays_only_its_own_decision():
    """A job already past due pays w*(t - d) when run, rho*w*(H + M - d) when postponed."""
    inst = make(
        [{"id": "x", "due": 50.0, "weight": 0.01, "times": {"S": [100.0]}}], nodes=1, time=100.0
    )
    run = validate(Solution(inst, [0], [0], [0]))
    assert run.f_obj == pytest.approx(0.01 * (100 + 50) + 0.001 * 100)
    wait = validate(Solution(inst, [-1], [-1], [-1]))
    assert wait.f_obj == pytest.approx(100 * 0.01 * (3600 + 100 + 50))


@pytest.mark.parametrize(
    "node_vm, job_node, job_cfg, message",
    [
        ([0, -1], [0, 0], [0, 0], "job b: cannot run on S with 1 GPU(s)"),  # b has no S times
        ([0, -1], [0, -1], [0, -1], None),  # feasible
        ([0, -1], [0, 0], [0, 1], "needs L but node 0 is S"),
        ([1, -1], [0, 0], [2, 2], "4 GPUs assigned but L has 2"),
        ([1, 1], [0, -1], [1, -1], "node 1: open (L) but hosts no job"),
        ([-1, -1], [0, -1], [0, -1], "needs S but node 0 is closed"),
        ([1, -1], [0, -1], [-1, -1], "must both be set or both be -1"),
        ([1, -1], [5, -1], [1, -1], "node 5 out of range"),
    ],
)
def test_infeasible_solutions_are_named(node_vm, job_node, job_cfg, message):
    """Each broken rule is reported in words."""
    rep = validate(Solution(make(JOBS), node_vm, job_node, job_cfg))
    if message is None:
        assert rep.ok, rep.errors
    else:
        assert not rep.ok and any(message in e for e in rep.errors), rep.errors


def test_unrunnable_configuration():
    """A job placed on a configuration it cannot run (null time) is infeasible."""
    jobs = [{"id": "a", "due": 10.0, "weight": 0.01, "times": {"L": [None, 50.0]}}]
    rep = validate(Solution(make(jobs), [1, -1], [0], [1]))
    assert any("cannot run on L with 1 GPU" in e for e in rep.errors)


def test_p1n_only_when_asked():
    """P1n (exactly min(N, J) open nodes) is checked only with p1n=True."""
    sol = Solution(make(JOBS), [1, -1], [0, 0], [1, 1])
    assert validate(sol).ok
    rep = validate(sol, p1n=True)
    assert not rep.ok and "P1n" in rep.errors[0]
    two = Solution(make(JOBS), [1, 1], [0, 1], [1, 1])
    assert validate(two, p1n=True).ok


def test_progress_shortens_remaining_time():
    """Remaining time is the whole-job time scaled by (1 - progress)."""
    jobs = [{"id": "a", "due": 1e6, "weight": 0.01, "times": {"S": [1000.0]}, "progress": 0.75}]
    inst = make(jobs, nodes=1)
    assert inst.times[0, 0] == pytest.approx(250.0)
    assert validate(Solution(inst, [0], [0], [0])).f_obj == pytest.approx(0.001 * 250)
    assert math.isinf(inst.times[0, 1]) and np.isinf(inst.times[0, 2])
    assert load_catalog(CAT).n_configs == 3
