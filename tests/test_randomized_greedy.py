"""Randomized Greedy: randomisation rules, elite set, validity, reproducibility, vs Greedy."""

from __future__ import annotations

import numpy as np
import pytest

from gpuaas.errors import InputError
from gpuaas.generator import generate_instance
from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.randomized_greedy import randomized_greedy
from gpuaas.heuristics.state import kernel_data, rng_state
from gpuaas.validator import validate
from tests.heuristic_cases import random_instance

DRAWS = 20000


def test_configuration_drawn_inversely_to_cost():
    """Among the 3 cheapest on-time configurations, frequencies follow 1/cost."""
    from tests.heuristic_cases import tiny_instance

    # NC6 x1: cost 100*0.56, NC12 x1: 100*1.13 (~2x), NC24 x1: 100*2.25 (~4x), NV6 late
    row = {("NC6", 1): 100.0, ("NC12", 1): 100.0, ("NC24", 1): 100.0, ("NV6", 1): 5000.0}
    inst = tiny_instance([row], [1000.0], nodes=1)
    D = kernel_data(inst)
    C = inst.n_configs
    rng = rng_state(4)
    counts: dict[int, int] = {}
    for _ in range(DRAWS):
        c = K.select_config(D, 0, True, 3, rng, np.empty(C), np.empty(C, dtype=np.int64))
        counts[c] = counts.get(c, 0) + 1
    costs = {c: 100.0 * inst.catalog.cost[inst.catalog.cfg_vm[c]] for c in counts}
    assert len(counts) == 3  # the late NV6 is never drawn
    expect = {c: (1 / costs[c]) / sum(1 / x for x in costs.values()) for c in costs}
    for c, n in counts.items():
        assert n / DRAWS == pytest.approx(expect[c], abs=0.015)


def test_node_drawn_inversely_to_idle_left():
    """Among fitting nodes, a node leaving k idle GPUs is drawn with weight 1/(1+k)."""
    inst = random_instance(0, nodes=4, jobs=1)
    D = kernel_data(inst)
    nc24 = inst.catalog.vm_index("NC24")
    node_vm = np.array([nc24, nc24, nc24, -1])
    node_used = np.array([3, 1, 0, 0])  # left after 1 GPU: 0, 2, 3
    rng = rng_state(9)
    counts = np.zeros(4)
    for _ in range(DRAWS):
        counts[
            K.best_fit_node(
                D,
                K.OPEN_CONFIG,
                node_vm,
                node_used,
                0,
                nc24,
                1,
                True,
                rng,
                np.empty(4),
                np.empty(4, dtype=np.int64),
            )
        ] += 1
    w = np.array([1.0, 1 / 3, 1 / 4, 0.0])
    np.testing.assert_allclose(counts / DRAWS, w / w.sum(), atol=0.015)
    assert (
        K.best_fit_node(
            D,
            K.OPEN_CONFIG,
            node_vm,
            node_used,
            0,
            nc24,
            1,
            False,
            rng,
            np.empty(4),
            np.empty(4, dtype=np.int64),
        )
        == 0
    )


def test_swaps_inversely_to_weight():
    """A job swaps with its successor with probability swap_prob * w_min / w_j."""
    weight = np.array([0.01, 0.005, 0.02])
    rng = rng_state(2)
    swapped = np.zeros(2)
    for _ in range(DRAWS):
        for first in (0, 2):  # job 0 (w = 2 w_min), job 2 (w = 4 w_min) at position 0
            seq = np.array([first, 1])
            K.swap_pass(seq, weight, 0.4, rng)
            swapped[first // 2] += seq[0] == 1
    np.testing.assert_allclose(swapped / DRAWS, [0.4 / 2, 0.4 / 4], atol=0.015)


def test_without_randomness_it_is_greedy():
    """With one node, no swaps and one configuration candidate, every iteration is Greedy."""
    inst = random_instance(5, nodes=1, jobs=30)
    rg = randomized_greedy(inst, max_it_rg=20, swap_prob=0.0, candidates=1)
    g = greedy(inst)
    assert np.array_equal(rg.job_cfg, g.job_cfg) and rg.f_obj == g.f_obj
    assert rg.stats["elite"] == 1  # all later iterations were duplicates


def _check(seeds, max_it, open_rule="largest"):
    for seed in seeds:
        inst = random_instance(seed)
        sol = randomized_greedy(inst, seed=seed, max_it_rg=max_it, open_rule=open_rule)
        rep = validate(sol)
        assert rep.ok, (seed, rep.errors[:3])
        assert rep.f_obj == pytest.approx(sol.f_obj, rel=1e-9)
        steps = sol.stats["steps"]
        assert steps["best_elite"]["f_obj"] <= steps["greedy"]["f_obj"]
        assert sol.f_obj <= greedy(inst, open_rule=open_rule).f_obj * (1 + 1e-12)
        assert steps["postprocessed"]["f_obj"] <= steps["best_elite"]["f_obj"] * (1 + 1e-12)


def test_valid_and_never_worse_than_greedy():
    """On 30 random instances (N 1..100, J 1..500) RG is valid and never worse than Greedy."""
    _check(range(200, 230), max_it=40)
    _check(range(230, 240), max_it=40, open_rule="config")


@pytest.mark.slow
def test_valid_and_never_worse_than_greedy_paper_parameters():
    """On 150 random instances with MaxItRG = 1000 RG is valid and never worse than Greedy."""
    _check(range(2000, 2150), max_it=1000)
    _check(range(2150, 2200), max_it=1000, open_rule="config")


def test_same_seed_same_solution():
    """Same seed gives the identical solution; another seed explores differently."""
    inst = generate_instance(20, 90, seed=3)
    a = randomized_greedy(inst, seed=7, max_it_rg=200)
    b = randomized_greedy(inst, seed=7, max_it_rg=200)
    assert np.array_equal(a.node_vm, b.node_vm) and np.array_equal(a.job_node, b.job_node)
    assert np.array_equal(a.job_cfg, b.job_cfg) and a.stats["steps"] == b.stats["steps"]
    others = [randomized_greedy(inst, seed=s, max_it_rg=200).job_cfg for s in range(8, 12)]
    assert any(not np.array_equal(a.job_cfg, o) for o in others)


def test_stopping_criteria():
    """Time limit and no-improvement limit stop the construction; iteration 0 always runs."""
    inst = generate_instance(30, 135, seed=1)
    sol = randomized_greedy(inst, time_limit=1e-9)
    assert sol.stats["iterations"] == 1 and validate(sol).ok
    sol = randomized_greedy(inst, max_it_rg=1000, max_no_improve=5)
    assert sol.stats["iterations"] < 1000


def test_proxy_f_bar_ranks_elite():
    """With proxy f_bar the best elite maximises eq. 1 and is never below Greedy's value."""
    inst = generate_instance(10, 45, seed=2)
    sol = randomized_greedy(inst, proxy="f_bar", max_it_rg=100)
    steps = sol.stats["steps"]
    assert steps["best_elite"]["proxy"] >= steps["greedy"]["proxy"]
    assert steps["postprocessed"]["proxy"] >= steps["best_elite"]["proxy"] * (1 - 1e-12)
    assert sol.stats["proxy"] == "f_bar"


def test_bad_options():
    """Out-of-range options are clear InputErrors."""
    inst = random_instance(1, nodes=2, jobs=3)
    for bad in (
        {"max_it_rg": 0},
        {"elite_size": 1.5},
        {"swap_prob": 2},
        {"candidates": 0},
        {"max_no_improve": 0},
        {"proxy": "x"},
        {"elite": 3},
    ):
        with pytest.raises(InputError):
            randomized_greedy(inst, **bad)
