"""The polish (gpuaas.milp.polish): a plan's neighbourhood re-optimised by the P1$ MILP."""

from __future__ import annotations

import numpy as np
from bruteforce import brute_force_dollars
from test_milp import close, tiny_instance, with_incumbent

from gpuaas.generator import generate_instance
from gpuaas.heuristics.incremental import incremental
from gpuaas.milp.polish import neighbourhood, polish
from gpuaas.validator import validate


def test_polish_of_a_whole_small_point_is_the_optimum():
    """With N <= its node count the polish frees everything: on 20 tiny instances (half with an
    incumbent and costs) it turns the default's plan into a P1$ optimum (brute force), never
    worse than the plan, always feasible."""
    gained = 0
    for k in range(20):
        inst = tiny_instance(k)
        inst = with_incumbent(inst, k) if k % 2 else inst
        plan = incremental(inst, seed=k)
        best, _ = brute_force_dollars(inst)
        sol = polish(plan, time_limit=30.0)
        assert validate(sol).ok
        assert close(sol.objective, best), (k, sol.objective, best)
        assert close(plan.objective - sol.objective, sol.stats["polish"]["saved"])
        gained += sol.objective < plan.objective - 1e-9
    assert gained >= 3


def test_polish_keeps_the_jobs_outside_its_neighbourhood():
    """On larger points (N = 12) the jobs of the nodes it does not free keep their node and
    configuration; the result is feasible and no dearer than the plan in P1$."""
    for seed in range(3):
        inst = generate_instance(12, 60, seed=seed)
        plan = incremental(inst, seed=seed)
        free, jobs = neighbourhood(plan, nodes=3)
        assert free.sum() <= 6 and jobs[plan.job_cfg < 0].all()
        sol = polish(plan, time_limit=2.0, nodes=3)
        assert validate(sol).ok and sol.objective <= plan.objective + 1e-9
        kept = ~jobs
        assert np.array_equal(sol.job_node[kept], plan.job_node[kept])
        assert np.array_equal(sol.job_cfg[kept], plan.job_cfg[kept])


def test_incremental_polish_option():
    """`incremental(..., polish=s)` returns the polished plan with its stats; 0 leaves the plan
    as it was."""
    inst = generate_instance(3, 12, seed=4)
    plain = incremental(inst, seed=1)
    same = incremental(inst, seed=1, polish=0.0)
    assert np.array_equal(plain.job_cfg, same.job_cfg) and "polish" not in same.stats
    sol = incremental(inst, seed=1, polish=10.0)
    assert validate(sol).ok and sol.objective <= plain.objective + 1e-9
    assert sol.stats["polish"]["status"] in ("optimal", "time_limit")
