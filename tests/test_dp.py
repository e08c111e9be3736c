"""The DP baselines (formulations/DP.md): proxies, the recurrence, and hand-worked instances."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from gpuaas.baselines.dp import choose_configs, dp_select
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.methods import DP_TICK as TICK
from gpuaas.methods import default_tick, seed_independent, solve
from gpuaas.rescheduler import PAPER_COSTS
from gpuaas.validator import validate

# S: 1 GPU of model A, 0.001 $/s (0.9 $ per Δt = 900 s); L: 2 GPUs of model A, 0.002 $/s
# (1.8 $ per Δt). Configurations: 0 = S/1, 1 = L/1, 2 = L/2.
CATALOG = {
    "vm_types": [
        {"name": "S", "gpu": "A", "gpus": 1, "cost_per_hour": 3.6},
        {"name": "L", "gpu": "A", "gpus": 2, "cost_per_hour": 7.2},
    ]
}
S1, L1, L2 = 0, 1, 2


def instance(jobs: list[tuple[str, float, float, float]], nodes: int) -> Instance:
    """Jobs (id, release, due, weight), each 2000 s on 1 GPU and 1200 s on 2 GPUs, at T_c = 0."""
    return Instance.from_dict(
        {
            "catalog": CATALOG,
            "nodes": nodes,
            "jobs": [
                {
                    "id": i,
                    "release": r,
                    "due": d,
                    "weight": w,
                    "times": {"S": [2000.0], "L": [2000.0, 1200.0]},
                }
                for i, r, d, w in jobs
            ],
        }
    )


# a: far due date (d = 5000): tau_hat = max(0, 900 + 2000 - 5000) = 0, so waiting costs 0.
# b: d = 1500: tau_hat = 900 + 2000 - 1500 = 1400 -> wait cost rho*w*tau_hat = 100*0.01*1400 = 1400.
# c: already tight (d = 100), weight 0.005: wait cost 100 * 0.005 * (900 + 2000 - 100) = 1400.
JOBS = [("a", 0.0, 5000.0, 0.01), ("b", 1.0, 1500.0, 0.01), ("c", 2.0, 100.0, 0.005)]


def running(sol) -> dict[str, int]:
    """Job id -> configuration, for the jobs that run."""
    ids = sol.instance.job_ids
    return {ids[j]: int(sol.job_cfg[j]) for j in range(len(ids)) if sol.job_cfg[j] >= 0}


def test_f1_rules_on_a_long_job():
    """d = 1500 s, t = 2000 / 1200 s: WCT takes S/1 (no tardiness within Δt, 0.9 $), Fast and
    Adj take L/2 (adjusted: S/1 pays 0.01 * 500 + 0.9 = 5.9 $ > L/2's 0 + 1.8 $)."""
    inst = instance([("b", 0.0, 1500.0, 0.01)], 1)
    assert choose_configs(inst, "wct", TICK).tolist() == [S1]
    assert choose_configs(inst, "fast", TICK).tolist() == [L2]
    assert choose_configs(inst, "adj", TICK).tolist() == [L2]


def test_dp_wct_postpones_the_job_with_a_far_due_date():
    """DP(WCT), 2 nodes: a waits (run 0.9 $ > wait 0 $); b (0.9 vs 1400) and c (run: S/1 pays
    0.005 * (900 - 100) + 0.9 = 4.9 vs 1400) run on S/1, each on its own node."""
    sol = solve(instance(JOBS, 2), "dp-wct")
    assert running(sol) == {"b": S1, "c": S1}
    assert sorted(sol.job_node[sol.job_node >= 0].tolist()) == [0, 1]
    assert sol.stats["dp_value"] == pytest.approx(0.0 + 0.9 + 4.9)
    assert validate(sol).ok


def test_dp_wct_one_node_takes_the_largest_saving():
    """DP(WCT), 1 node: savings P - E are b 1400 - 0.9 = 1399.1 and c 1400 - 4.9 = 1395.1: b runs."""
    assert running(solve(instance(JOBS, 1), "dp-wct")) == {"b": S1}


def test_dp_fastb_runs_every_job_it_can_and_prefers_cheap_runs():
    """DP(FastB), 2 nodes, B = 1e6: everything on L/2; E = a 1.8, b 1.8, c 0.005*800 + 1.8 = 5.8;
    savings B - E: a = b > c, so a and b run and the late c waits (F_B's blind spot)."""
    sol = solve(instance(JOBS, 2), "dp-fastb")
    assert running(sol) == {"a": L2, "b": L2}
    assert sol.stats["dp_value"] == pytest.approx(1.8 + 1.8 + 1.0e6)
    # with B = 1 $ running c (5.8) costs more than waiting (1), and a, b still save 1 - 1.8 < 0:
    assert running(solve(instance(JOBS, 2), "dp-fastb", B=1.0)) == {}


def test_dp_fastwct_and_adjwct():
    """FastWCT: L/2 for all, a still waits (tau_hat = 0). AdjWCT: a on S/1 would cost 0.9 > 0 so
    waits; b takes L/2 (adj: 1.8 < S/1 5.9) and c L/2 (0.005*1100 + 1.8 = 7.3 < S/1 10.4)."""
    assert running(solve(instance(JOBS, 2), "dp-fastwct")) == {"b": L2, "c": L2}
    assert running(solve(instance(JOBS, 3), "dp-adjwct")) == {"b": L2, "c": L2}


def test_running_job_keeps_its_node_index():
    """b runs on node 1 with S/1 and keeps S/1 under DP(WCT): it stays on node 1, c takes node 0."""
    inst = dataclasses.replace(
        instance(JOBS, 2), current_node=np.array([-1, 1, -1]), current_cfg=np.array([-1, S1, -1])
    )
    sol = solve(inst, "dp-wct")
    assert sol.job_node.tolist() == [-1, 1, 0]


def test_running_job_may_be_preempted():
    """DP re-decides running jobs: a running with a far due date is preempted (wait cost 0)."""
    inst = dataclasses.replace(
        instance(JOBS, 2), current_node=np.array([0, -1, -1]), current_cfg=np.array([S1, -1, -1])
    )
    assert "a" not in running(solve(inst, "dp-wct"))


def brute_force(E: np.ndarray, P: np.ndarray, N: int) -> float:
    """min over subsets S with |S| <= N of sum_{S} E + sum_{not S} P."""
    K = len(E)
    return min(
        sum(E[k] if k in S else P[k] for k in range(K))
        for r in range(min(N, K) + 1)
        for S in map(set, itertools.combinations(range(K), r))
    )


@pytest.mark.parametrize("seed", range(60))
def test_dp_select_matches_enumeration(seed):
    """On random costs (K <= 7 jobs, N <= 4) the DP value equals enumeration and its choice attains it."""
    rng = np.random.default_rng(seed)
    K, N = int(rng.integers(1, 8)), int(rng.integers(1, 5))
    E, P = rng.uniform(0, 10, K), rng.uniform(0, 10, K)
    chosen, value = dp_select(E, P, N)
    assert value == pytest.approx(brute_force(E, P, N))
    assert chosen.sum() <= N
    assert E[chosen].sum() + P[~chosen].sum() == pytest.approx(value)


def test_dp_select_ties_follow_fifo():
    """Equal costs, 2 nodes, 4 jobs: the first two (FIFO) run, not later ones."""
    chosen, _ = dp_select(np.ones(4), np.full(4, 5.0), 2)
    assert chosen.tolist() == [True, True, False, False]


def test_dp_select_uses_more_nodes_on_equal_totals():
    """A job whose run and wait costs are equal runs when a node is free."""
    chosen, value = dp_select(np.array([2.0]), np.array([2.0]), 1)
    assert chosen.tolist() == [True] and value == 2.0


def test_dp_declares_its_tick():
    """The DP methods declare Δt = 900 s for the simulator and are seed independent."""
    for m in ("dp-wct", "dp-fastwct", "dp-fastb", "dp-adjwct"):
        assert default_tick(m) == 900.0 and seed_independent(m)
    assert default_tick("edf") is None


@pytest.mark.parametrize(
    ("method", "options", "match"),
    [
        ("dp-wct", {"dt": 0.0}, "dt"),
        ("dp-wct", {"B": 5.0}, "takes no options"),  # B belongs to DP(FastB) only
        ("dp-fastb", {"B": -1.0}, "B"),
        ("dp-adjwct", {"gap": 0.05}, "takes no options"),
    ],
)
def test_bad_options_are_clear_errors(method, options, match):
    """Bad or foreign options raise InputError naming them."""
    with pytest.raises(InputError, match=match):
        solve(instance(JOBS, 2), method, **options)


def test_online_dp_waits_until_the_worst_case_bites(tmp_path):
    """One node, one job (d = 5000 s, 2000 s on S/1, 1200 s on L/2), rescheduled every 900 s.
    DP(WCT) waits while tau_hat = max(0, 900 + 2000 - (5000 - T)) = 0, i.e. at T = 0, 900, 1800;
    at T = 2700 tau_hat = 600 > 0: it runs on S/1 (0.9 $ per step, the cheapest), 2700..4700,
    on time: VM 2000 s x 0.001 = 2.0 $. DP(FastB) runs it at once on L/2, 0..1200: 2.4 $."""
    from eventlog import check_against, recompute

    from gpuaas.simulator import simulate

    trace = instance([("a", 0.0, 5000.0, 0.01)], 1)
    for method, start, end, vm in (("dp-wct", 2700.0, 4700.0, 2.0), ("dp-fastb", 0.0, 1200.0, 2.4)):
        log = tmp_path / f"{method}.jsonl"
        res = simulate(trace, method, log=log, **PAPER_COSTS).to_dict()
        assert check_against(recompute(log, trace), res, trace) == []
        (job,) = res["jobs"]
        assert (job["start"], job["completion"]) == pytest.approx((start, end))
        assert (res["vm_cost"], res["tardiness_cost"]) == pytest.approx((vm, 0.0))
