"""The polish (gpuaas.milp.polish): a plan's neighbourhood re-optimised by the P1$ MILP."""

from __future__ import annotations

import numpy as np
import pytest
from bruteforce import brute_force_dollars
from test_milp import close, tiny_instance, with_incumbent

from gpuaas.generator import generate_instance
from gpuaas.heuristics.default.method import incremental
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
        plan = incremental(inst, seed=k, polish=0.0)
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
    inst = generate_instance(6, 12, seed=4)  # N > POLISH_NODES: no polish by default
    plain = incremental(inst, seed=1)
    same = incremental(inst, seed=1, polish=0.0)
    assert np.array_equal(plain.job_cfg, same.job_cfg) and "polish" not in same.stats
    sol = incremental(inst, seed=1, polish=10.0)
    assert validate(sol).ok and sol.objective <= plain.objective + 1e-9
    assert sol.stats["polish"]["status"] in ("optimal", "time_limit")


def test_the_default_polishes_small_points_the_same_on_any_machine():
    """By default (the polish step) every point of N <= POLISH_NODES is polished within a node limit, not
    a time limit. With a move charged once (`move_weight=1`) its P1$ is the optimum (brute
    force) on tiny instances, with free node slots or not; with the default's weight on a
    move it is never dearer than the construction, and the optimum where no move costs
    anything (κ = 0); the same plan twice. Points of N above the limit are left as the
    construction made them."""
    from gpuaas.milp.polish import POLISH_NODES
    from gpuaas.reconfiguration import reconfiguration_terms

    slots = free = 0
    for k in range(12):
        inst = with_incumbent(tiny_instance(k), k) if k % 2 else tiny_instance(k)
        best, _ = brute_force_dollars(inst)
        once = incremental(inst, seed=k, move_weight=1.0)
        assert validate(once).ok and "polish" in once.stats
        assert close(once.objective, best), (k, once.objective, best)
        sol = incremental(inst, seed=k)
        assert validate(sol).ok and "polish" in sol.stats
        assert sol.objective <= incremental(inst, seed=k, polish=0.0).objective + 1e-9
        if not reconfiguration_terms(inst)[0].any():
            free += 1
            assert close(sol.objective, best), (k, sol.objective, best)
        again = incremental(inst, seed=k)
        assert np.array_equal(again.job_cfg, sol.job_cfg)
        assert np.array_equal(again.job_node, sol.job_node)
        slots += inst.n_jobs <= inst.nodes
    assert slots >= 2 and free >= 6
    big = generate_instance(POLISH_NODES + 1, 20, seed=2)
    assert "polish" not in incremental(big, seed=1).stats


def test_incremental_polish_nodes_acts_where_no_job_queues():
    """`polish_nodes=K` polishes the plan within K branch-and-bound nodes at points above rule
    6's size where no job queues: never dearer in P1$, feasible, the same plan twice, and
    strictly cheaper at some; where jobs queue (P1$ has no queue price) the plan is left as
    the construction made it."""
    from gpuaas.heuristics.default.room import queued
    from gpuaas.pricing import plan_values, preferred_configs

    gained = 0
    for seed in (1, 3, 5):
        inst = generate_instance(8, 12, seed=seed)
        assert not queued(inst, preferred_configs(inst, plan_values(inst)))
        plain = incremental(inst, seed=1)
        sol = incremental(inst, seed=1, polish_nodes=20)
        assert validate(sol).ok and sol.objective <= plain.objective + 1e-9
        assert sol.stats["polish"]["status"] in ("optimal", "time_limit")  # a limit: time or nodes
        again = incremental(inst, seed=1, polish_nodes=20)
        assert np.array_equal(again.job_node, sol.job_node)
        assert np.array_equal(again.job_cfg, sol.job_cfg)
        gained += sol.objective < plain.objective - 1e-6
    assert gained >= 2
    busy = generate_instance(8, 40, seed=1)
    assert queued(busy, preferred_configs(busy, plan_values(busy)))
    sol = incremental(busy, seed=1, polish_nodes=20)
    assert "polish" not in sol.stats
    assert np.array_equal(sol.job_cfg, incremental(busy, seed=1).job_cfg)


def test_incremental_refuses_a_polish_with_spot_variants():
    """The MILP plans on-demand VMs only, so neither polish option is taken with spot."""
    inst = generate_instance(8, 12, seed=1, catalog="aws-us-east-1").with_spot()
    assert inst.catalog.has_spot
    for option in ({"polish": 1.0}, {"polish_nodes": 20}):
        with pytest.raises(ValueError, match="spot variants"):
            incremental(inst, seed=1, **option)


def test_the_model_counts_each_moved_jobs_lost_work_move_weight_times():
    """`build_model(move_weight=W)` prices a plan at its P1$ plus (W - 1) x the κ_j of the jobs
    it moves: the objective the default's polish minimises."""
    from gpuaas.methods import solve
    from gpuaas.milp.model import build_model, solution_columns
    from gpuaas.reconfiguration import moved, reconfiguration_terms

    priced = 0
    for k in range(1, 20, 2):
        inst = with_incumbent(tiny_instance(k), k)
        sol = solve(inst, "greedy")
        kappa = reconfiguration_terms(inst)[0][moved(inst, sol.job_node, sol.job_cfg)].sum()
        priced += kappa > 0
        for w in (1.0, 4.0):
            model = build_model(inst, objective="dollars", move_weight=w)
            x = solution_columns(model, sol)
            value = float(model.col_cost @ x) + model.offset
            assert close(value, sol.objective + (w - 1.0) * kappa), (k, w, value)
    assert priced >= 2


def test_a_jobs_own_move_loss_replaces_the_overhead_in_the_move_terms():
    """`Instance.move_loss` (a job's own seconds lost per move, nan: `overhead`): kappa and the
    keep rules' move costs scale by each job's own; all nan is the instance as before, bit for
    bit; `subset` carries it; a loss alone (overhead 0) still makes moves cost."""
    import dataclasses

    from gpuaas.reconfiguration import move_costs, reconfiguration_terms

    for seed in range(40):
        inst = with_incumbent(tiny_instance(seed), seed)
        run = inst.current_cfg >= 0
        if not run.any() or inst.overhead == 0:
            continue
        price = np.ones(inst.catalog.n_configs) / 3600.0
        same = dataclasses.replace(inst, move_loss=np.full(inst.n_jobs, np.nan))
        assert np.array_equal(reconfiguration_terms(same)[0], reconfiguration_terms(inst)[0])
        assert np.array_equal(move_costs(same, price), move_costs(inst, price))
        loss = np.arange(1.0, inst.n_jobs + 1) * 60.0
        own = dataclasses.replace(inst, move_loss=loss)
        unit = dataclasses.replace(inst, overhead=1.0)
        assert np.allclose(reconfiguration_terms(own)[0], reconfiguration_terms(unit)[0] * loss)
        assert own.subset([inst.n_jobs - 1]).move_loss.tolist() == [loss[-1]]
        alone = dataclasses.replace(inst, overhead=0.0, startup=0.0, move_loss=loss)
        assert alone.moves_cost and reconfiguration_terms(alone)[0][run].all()
        break
    else:
        raise AssertionError("no seed with a running job and an overhead")
