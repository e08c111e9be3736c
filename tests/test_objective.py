"""The f_OBJ / f̄_OBJ kernels against the independent validator on 1000+ random solutions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.state import kernel_data
from gpuaas.objective import f_obj, proxy
from gpuaas.solution import Solution
from gpuaas.validator import validate
from tests.heuristic_cases import random_instance


def random_solution(inst, rng):
    """A feasible random solution: random VM types, jobs packed at random or postponed."""
    cat = inst.catalog
    N, J = inst.nodes, inst.n_jobs
    node_vm = np.full(N, -1)
    free = np.zeros(N, dtype=int)
    job_node = np.full(J, -1)
    job_cfg = np.full(J, -1)
    p_post = rng.uniform(0, 0.6)
    for j in rng.permutation(J):
        if rng.random() < p_post:
            continue
        runnable = np.flatnonzero(np.isfinite(inst.times[j]))
        c = int(rng.choice(runnable))
        v, g = int(cat.cfg_vm[c]), int(cat.cfg_gpus[c])
        fits = [n for n in range(N) if node_vm[n] == v and free[n] >= g]
        closed = [n for n in range(N) if node_vm[n] < 0]
        if fits and (not closed or rng.random() < 0.7):
            n = int(rng.choice(fits))
        elif closed:
            n = closed[0]
            node_vm[n], free[n] = v, int(cat.gpus[v])
        else:
            continue
        free[n] -= g
        job_node[j], job_cfg[j] = n, c
    return Solution(inst, node_vm, job_node, job_cfg)


def plain_proxy(sol):
    """Eq. 1 written out in plain Python (independent of the kernels)."""
    inst, cat = sol.instance, sol.instance.catalog
    total = 0.0
    for j in range(inst.n_jobs):
        c = int(sol.job_cfg[j])
        if c < 0:
            continue
        t = float(inst.work[j, c]) * (1 - float(inst.progress[j]))
        d = float(inst.due[j]) - inst.time
        runnable = [
            float(x) * (1 - float(inst.progress[j])) for x in inst.work[j] if math.isfinite(x)
        ]
        price = float(cat.cost_per_hour[cat.cfg_vm[c]]) / 3600.0
        total += max(runnable) / (t * price + float(inst.weight[j]) * max(0.0, t - d))
    return total


def _cases(seeds, max_nodes=12, max_jobs=40):
    for seed in seeds:
        rng = np.random.default_rng(seed)
        inst = random_instance(
            seed, nodes=int(rng.integers(1, max_nodes + 1)), jobs=int(rng.integers(1, max_jobs + 1))
        )
        yield inst, random_solution(inst, rng)


def test_kernels_agree_with_validator_on_1000_solutions():
    """f_OBJ kernel, heuristic full score and validator agree; f̄ kernels match plain Python."""
    kinds = {"postponed": 0, "idle": 0, "late": 0}
    for inst, sol in _cases(range(1000)):
        rep = validate(sol)
        assert rep.ok, rep.errors
        D = kernel_data(inst)
        ref = rep.objective
        assert f_obj(inst, sol.node_vm, sol.job_node, sol.job_cfg) == pytest.approx(
            ref, rel=1e-12, abs=1e-9
        )
        assert K.full_score(
            D, K.PROXY_FOBJ, sol.node_vm, sol.job_node, sol.job_cfg
        ) == pytest.approx(ref, rel=1e-12, abs=1e-9)
        bar = plain_proxy(sol)
        assert proxy(inst, sol.job_cfg) == pytest.approx(bar, rel=1e-12, abs=1e-12)
        assert -K.full_score(
            D, K.PROXY_FBAR, sol.node_vm, sol.job_node, sol.job_cfg
        ) == pytest.approx(bar, rel=1e-12, abs=1e-12)
        run = sol.job_cfg >= 0
        kinds["postponed"] += int((~run).any())
        used = np.bincount(
            sol.job_node[run], weights=inst.catalog.cfg_gpus[sol.job_cfg[run]], minlength=inst.nodes
        )
        kinds["idle"] += int(
            any(used[n] < inst.catalog.gpus[v] for n, v in enumerate(sol.node_vm) if v >= 0)
        )
        t = inst.times[np.flatnonzero(run), sol.job_cfg[run]]
        kinds["late"] += int((t > inst.rel_due[run]).any())
    assert min(kinds.values()) >= 200, kinds  # every cost term is exercised many times


def test_objective_of_hand_solution():
    """A one-node solution with an idle GPU, a late job and a postponed one, worked by hand."""
    from tests.heuristic_cases import CATALOG, tiny_instance

    rows = [{("NC12", 1): 3600.0}, {("NC12", 1): 7200.0}]
    inst = tiny_instance(rows, [1800.0, 100.0], nodes=1, weight=0.01)
    nc12 = CATALOG.vm_index("NC12")
    sol = Solution(inst, [nc12], [0, -1], [CATALOG.config(nc12, 1), -1])
    late = 0.01 * (3600 - 1800)
    postponed = 100 * 0.01 * (3600 + 7200 - 100)
    expected = late + postponed + 1.0 * 1 + 1.13 / 3600 * 3600
    assert validate(sol).objective == pytest.approx(expected)
    D = kernel_data(inst)
    assert K.full_score(D, 0, sol.node_vm, sol.job_node, sol.job_cfg) == pytest.approx(expected)
    assert sol.proxy == pytest.approx(3600 / (3600 * 1.13 / 3600 + late))
