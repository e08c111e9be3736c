"""FIFO, EDF and PS at one rescheduling point, on hand-made instances worked out in comments."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpuaas.baselines.dispatch import heuristic_config
from gpuaas.errors import InputError, SolverError
from gpuaas.instance import Instance
from gpuaas.methods import seed_independent, solve
from gpuaas.rescheduler import PAPER_COSTS
from gpuaas.validator import validate

# Two VM types with the same GPU model: S (1 GPU, 3.6 $/h = 0.001 $/s), L (2 GPUs, 0.002 $/s),
# and one with another model: X (1 GPU, 0.0005 $/s). Configurations: 0 = S/1, 1 = L/1, 2 = L/2,
# 3 = X/1.
CATALOG = {
    "vm_types": [
        {"name": "S", "gpu": "A", "gpus": 1, "cost_per_hour": 3.6},
        {"name": "L", "gpu": "A", "gpus": 2, "cost_per_hour": 7.2},
        {"name": "X", "gpu": "B", "gpus": 1, "cost_per_hour": 1.8},
    ]
}
S1, L1, L2, X1 = 0, 1, 2, 3


def job(
    jid: str,
    due: float,
    weight: float = 0.01,
    release: float = 0.0,
    s: float = 100.0,
    l2: float = 60.0,
) -> dict:
    """A job running s seconds on 1 GPU of model A and l2 seconds on 2 (no model-B times)."""
    return {
        "id": jid,
        "release": release,
        "due": due,
        "weight": weight,
        "times": {"S": [s], "L": [s, l2]},
    }


def instance(jobs: list[dict], nodes: int, time: float = 0.0) -> Instance:
    """Instance at `time` with the test catalog."""
    return Instance.from_dict({"catalog": CATALOG, "nodes": nodes, "time": time, "jobs": jobs})


def test_config_rule_cheapest_meeting_due_date():
    """Due 100: S/1 (cost 100 x 0.001 = 0.10) beats L/2 (60 x 0.002 = 0.12) and L/1 (0.20)."""
    assert heuristic_config(instance([job("a", due=100)], 1), 0) == S1


def test_config_rule_only_fast_config_meets_due_date():
    """Due 80: only L/2 (60 s) meets it, so it is chosen although S/1 is cheaper."""
    assert heuristic_config(instance([job("a", due=80)], 1), 0) == L2


def test_config_rule_fastest_when_nothing_meets_due_date():
    """Due 50: no configuration ends by then (fastest is 60 s), so the fastest, L/2, is chosen."""
    assert heuristic_config(instance([job("a", due=50)], 1), 0) == L2


def test_config_rule_relative_due_date():
    """At T_c = 30 a due date of 110 leaves d_j = 80 s: only L/2 meets it."""
    assert heuristic_config(instance([job("a", due=110)], 1, time=30.0), 0) == L2


def test_config_rule_smallest_vm_type_on_ties():
    """4 K80 GPUs run equally fast on NC24 and NC48*; the fastest rule takes NC24 (smaller)."""
    k80 = {
        "NC6": [800.0],
        "NC12": [800.0, 500.0],
        "NC24": [800.0, 500.0, 400.0, 300.0],
        "NC48*": [800.0, 500.0, 400.0, 300.0, 300.0, 300.0, 300.0, 300.0],
    }
    inst = Instance.from_dict(
        {
            "catalog": "azure-2021",
            "nodes": 1,
            "jobs": [{"id": "a", "due": 10.0, "weight": 0.01, "times": k80}],
        }
    )
    c = heuristic_config(inst, 0)
    cat = inst.catalog
    assert (cat.vm_names[cat.cfg_vm[c]], int(cat.cfg_gpus[c])) == ("NC24", 4)


def three_jobs() -> list[dict]:
    """a: released 0, due 500, weight 0.005; b: released 20, due 80, 0.01; c: released 10, due 300, 0.02."""
    return [
        job("a", due=500, weight=0.005, release=0),
        job("b", due=80, weight=0.01, release=20),
        job("c", due=300, weight=0.02, release=10),
    ]


@pytest.mark.parametrize(
    ("method", "started"),
    [
        ("fifo", ["a", "c"]),  # releases 0 < 10 < 20: a, c start; b waits
        ("edf", ["b", "c"]),  # dues 80 < 300 < 500: b, c start; a waits
        ("ps", ["c", "b"]),  # weights 0.02 > 0.01 > 0.005: c, b start; a waits
    ],
)
def test_two_free_nodes_take_the_first_two_jobs_of_the_order(method, started):
    """With 2 nodes and 3 waiting jobs, the first two of the method's order start, one per node."""
    inst = instance(three_jobs(), nodes=2, time=20.0)
    sol = solve(inst, method, seed=3)
    on = {inst.job_ids[j]: int(sol.job_node[j]) for j in range(3) if sol.job_node[j] >= 0}
    assert [k for k, _ in sorted(on.items(), key=lambda kv: kv[1])] == started
    assert sorted(on.values()) == [0, 1]  # one job per node
    for j in range(3):  # each node's VM is its job's configuration's VM type
        if sol.job_node[j] >= 0:
            assert sol.node_vm[sol.job_node[j]] == inst.catalog.cfg_vm[sol.job_cfg[j]]
    assert validate(sol).ok
    assert sol.stats["seed"] == 3 and sol.stats["seconds"] >= 0


def test_edf_configurations_follow_the_rule():
    """At T_c = 20: b (d = 60 s) is met only by L/2 (60 s); c (d = 280 s) -> cheapest S/1."""
    inst = instance(three_jobs(), nodes=2, time=20.0)
    sol = solve(inst, "edf")
    cfg = dict(zip(inst.job_ids, sol.job_cfg.tolist()))
    assert cfg == {"a": -1, "b": L2, "c": S1}
    # f_OBJ: a postponed: rho * w * (H + M - d) = 100 * 0.005 * (3600 + 100 - 480) = 1610;
    # b: tardiness 0.01 * (60 - 60) = 0, node L: price 0.002 x 60 s = 0.12, no idle GPU;
    # c: tardiness 0, node S: 0.001 x 100 = 0.10.
    assert sol.f_obj == pytest.approx(1610 + 0.12 + 0.10)


@pytest.mark.parametrize("method", ["fifo", "edf", "ps"])
def test_running_jobs_keep_node_and_configuration(method):
    """A job running on node 1 with L/1 stays there with L/1, though the rule would now pick S/1."""
    inst = instance(three_jobs(), nodes=2, time=20.0)
    inst = dataclasses.replace(
        inst, current_node=np.array([1, -1, -1]), current_cfg=np.array([L1, -1, -1])
    )
    sol = solve(inst, method)
    assert (sol.job_node[0], sol.job_cfg[0], sol.node_vm[1]) == (1, L1, 1)
    # node 0 is the only free one: FIFO gives it to c (released 10 < 20), EDF to b (due 80),
    # PS to c (weight 0.02).
    first = {"fifo": 2, "edf": 1, "ps": 2}[method]
    assert sol.job_node[first] == 0 and (sol.job_node >= 0).sum() == 2
    assert sol.stats["kept"] == 1 and sol.stats["started"] == 1
    assert validate(sol).ok


def test_no_free_node_starts_nothing():
    """When every node hosts a running job, waiting jobs stay postponed (no preemption)."""
    inst = instance(three_jobs(), nodes=1, time=20.0)
    inst = dataclasses.replace(
        inst, current_node=np.array([0, -1, -1]), current_cfg=np.array([S1, -1, -1])
    )
    sol = solve(inst, "edf")  # b is more urgent than the running a, yet waits
    assert sol.job_node.tolist() == [0, -1, -1]


def test_job_without_runnable_fast_config_gets_its_only_model():
    """A job with times only on model B runs on X/1 (the only configuration it can use)."""
    jb = {"id": "x", "due": 10.0, "weight": 0.01, "times": {"X": [500.0]}}
    sol = solve(instance([jb], nodes=1), "fifo")
    assert sol.job_cfg.tolist() == [X1] and sol.node_vm.tolist() == [2]


def test_running_job_on_missing_node_is_a_clear_error():
    """A running job on node 3 of a 2-node instance cannot be kept: SolverError naming the job."""
    inst = instance(three_jobs(), nodes=2)
    inst = dataclasses.replace(
        inst, current_node=np.array([3, -1, -1]), current_cfg=np.array([S1, -1, -1])
    )
    with pytest.raises(SolverError, match="'a'"):
        solve(inst, "fifo")


def test_unknown_option_is_rejected():
    """Baselines take no options: a misspelt option is an InputError, not silently ignored."""
    with pytest.raises(InputError, match="takes no options"):
        solve(instance(three_jobs(), 2), "edf", gap=0.1)


def test_first_principle_methods_are_seed_independent():
    """Same instance, different seeds: identical solutions (and the methods declare it)."""
    inst = instance(three_jobs(), nodes=2, time=20.0)
    for m in ("fifo", "edf", "ps"):
        a, b = solve(inst, m, seed=1), solve(inst, m, seed=2)
        assert a.job_cfg.tolist() == b.job_cfg.tolist() and seed_independent(m)


# -- online: the baselines inside the simulator ----------------------------------------------


def simulate_logged(trace: Instance, method: str, tmp_path, **kw) -> dict:
    """Simulate with an event log and check it with the independent recomputation."""
    from eventlog import check_against, recompute

    from gpuaas.simulator import simulate

    path = tmp_path / f"{method}.jsonl"
    result = simulate(trace, method, seed=1, log=path, **kw).to_dict()
    assert check_against(recompute(path, trace), result, trace) == []
    return result


# One node. a (released 0, due 1000) starts at once on S/1 (cheapest meeting the due date) and
# ends at 100. Meanwhile b (released 10, due 400, weight 0.05) and c (released 20, due 250,
# weight 0.03) arrive and wait. At 100 the node is free again:
# - FIFO and PS take b (released first / heavier): d_b = 300 -> S/1, runs 100..200. Then c has
#   d_c = 50: no configuration ends in time, the fastest L/2 runs 200..260, 10 s late.
#   VM: S 0..200 (0.2 $) + L 200..260 (0.12 $); tardiness 0.03 x 10 = 0.3 $; total 0.62 $.
# - EDF takes c (due 250): d_c = 150 -> S/1, 100..200, on time; then b, d_b = 200 -> S/1,
#   200..300, on time. VM: S 0..300 = 0.3 $; no tardiness; total 0.30 $.
ONLINE = [
    job("a", due=1000, weight=0.01, release=0),
    job("b", due=400, weight=0.05, release=10),
    job("c", due=250, weight=0.03, release=20),
]


@pytest.mark.parametrize(
    ("method", "vm", "tardiness", "completion"),
    [
        ("fifo", 0.32, 0.30, {"a": 100, "b": 200, "c": 260}),
        ("ps", 0.32, 0.30, {"a": 100, "b": 200, "c": 260}),
        ("edf", 0.30, 0.0, {"a": 100, "b": 300, "c": 200}),
    ],
)
def test_online_hand_worked_trace(method, vm, tardiness, completion, tmp_path):
    """The three first-principle methods on a one-node trace, costs worked out above."""
    res = simulate_logged(instance(ONLINE, nodes=1), method, tmp_path, **PAPER_COSTS)
    assert res["vm_cost"] == pytest.approx(vm)
    assert res["tardiness_cost"] == pytest.approx(tardiness)
    assert res["total_cost"] == pytest.approx(vm + tardiness)
    assert {j["id"]: j["completion"] for j in res["jobs"]} == pytest.approx(completion)
    assert res["migrations"] == 0 and res["preemptions"] == 0


@pytest.mark.parametrize(
    "method",
    [
        "fifo",
        "edf",
        "ps",
        "dp-wct",
        "dp-fastwct",
        "dp-fastb",
        "dp-adjwct",
        "hierarchical",
        "greedy",
        "randomized-greedy",
        "path-relinking",
    ],
)
def test_every_baseline_passes_the_event_log_checks(method, tmp_path):
    """On a short generated trace (N = 10, J = 14, jobs 50x shorter than the paper's, so the
    hourly ticks are few) every compared method's log reproduces its costs, capacity and work.
    Hierarchical's controllers stop at 0.25 s, as in the paper-like test (at 1 s: the same
    costs in twice the time)."""
    from gpuaas.generator import generate_trace

    trace = Instance.from_dict(generate_trace(10, 14, seed=4, arrivals="high"))
    trace = dataclasses.replace(
        trace, work=trace.work / 50, due=trace.release + (trace.due - trace.release) / 50
    )
    kw = {"controller_time_limit": 0.25} if method == "hierarchical" else {}
    res = simulate_logged(trace, method, tmp_path, **kw)
    assert len(res["jobs"]) == 14


@pytest.mark.slow
@pytest.mark.parametrize("arrivals", ["exponential", "high", "low", "mixed"])
@pytest.mark.parametrize(
    "method", ["fifo", "edf", "ps", "dp-wct", "dp-fastwct", "dp-fastb", "dp-adjwct", "hierarchical"]
)
def test_event_log_checks_on_paper_like_traces(method, arrivals, tmp_path):
    """N = 10, J = 100 (the paper's J = 10 N; Hierarchical: J = 30, its MILPs are slow) for each
    arrival pattern, EDF and DP(AdjWCT) also with 2N nodes."""
    from gpuaas.generator import generate_trace

    jobs = 30 if method == "hierarchical" else 100
    trace = Instance.from_dict(generate_trace(10, jobs, seed=2, arrivals=arrivals))
    kw = {"controller_time_limit": 0.25} if method == "hierarchical" else {}
    simulate_logged(trace, method, tmp_path, **kw)
    if method in ("edf", "dp-adjwct"):
        res = simulate_logged(trace, method, tmp_path, nodes=20, **kw)
        assert res["nodes"] == 20
