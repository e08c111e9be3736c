"""The objectives against the independent validator: f_OBJ / f̄_OBJ kernels on 1000+ random
solutions, P1$ on random solutions with incumbents, costs and whole-VM catalogs, and by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuaas.catalog import Catalog
from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.state import kernel_data
from gpuaas.instance import Instance
from gpuaas.milp import milp
from gpuaas.objective import dollar_terms, dollars, f_obj, proxy
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
        ref = rep.f_obj
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
    assert validate(sol).f_obj == pytest.approx(expected)
    D = kernel_data(inst)
    assert K.full_score(D, 0, sol.node_vm, sol.job_node, sol.job_cfg) == pytest.approx(expected)
    assert sol.proxy == pytest.approx(3600 / (3600 * 1.13 / 3600 + late))


def _with_costs(inst, rng, catalog):
    """`inst` on `catalog` (its times moved by GPU model and count), with a random incumbent
    (a feasible random solution), restart overhead, start-up and interval H."""
    import dataclasses

    if catalog is not None:
        old = inst.catalog
        work = np.full((inst.n_jobs, catalog.n_configs), np.inf)
        for c in range(catalog.n_configs):
            v, g = catalog.cfg_vm[c], catalog.cfg_gpus[c]
            same = [
                k
                for k in range(old.n_configs)
                if old.gpu_models[old.cfg_vm[k]] == catalog.gpu_models[v] and old.cfg_gpus[k] == g
            ]
            if same:
                work[:, c] = inst.work[:, same[0]]
        keep = np.isfinite(work).any(axis=1)
        if not keep.any():
            return None
        inst = dataclasses.replace(
            inst.subset(np.flatnonzero(keep)),
            catalog=catalog,
            work=work[keep],
            hazard=None,  # per VM type: the old catalog's
            outage=None,
            room=None,
        )
    cur = random_solution(inst, rng)
    return dataclasses.replace(
        inst,
        current_node=cur.job_node,
        current_cfg=cur.job_cfg,
        overhead=float(rng.choice([0.0, 600.0, 7200.0])),
        startup=float(rng.choice([0.0, 120.0])),
        H=float(rng.choice([600.0, 3600.0, 360000.0])),
    )


def test_dollars_agree_with_validator():
    """P1$ in numpy (`dollars`) equals the validator's plain-Python P1$ on 150 random solutions
    of instances with an incumbent, restart and start-up costs and several H, on the azure-2021
    catalog and on a copy where the M60 comes only in 8-GPU VMs (fill price above the share).
    Running jobs end within H and after it, on configurations they stay on and move to."""
    whole = Catalog(
        "whole",
        ("NC6", "NC12", "NC24", "NV48"),
        ("K80", "K80", "K80", "M60"),
        np.array([1, 2, 4, 8]),
        np.array([0.56, 1.13, 2.25, 4.96]),
    )
    seen = {"short": 0, "long": 0, "moved": 0, "above_share": 0}
    for seed in range(150):
        rng = np.random.default_rng(seed)
        base = random_instance(seed, nodes=int(rng.integers(1, 6)), jobs=int(rng.integers(1, 13)))
        inst = _with_costs(base, rng, None if seed % 2 else whole)
        if inst is None:
            continue
        sol = random_solution(inst, rng)
        rep = validate(sol)
        assert rep.ok, rep.errors
        assert dollars(inst, sol.node_vm, sol.job_node, sol.job_cfg) == pytest.approx(
            rep.objective, rel=1e-9, abs=1e-9
        )
        assert sol.objective == pytest.approx(rep.objective, rel=1e-9, abs=1e-9)
        run = np.flatnonzero(sol.job_cfg >= 0)
        t = inst.times[run, sol.job_cfg[run]]
        seen["short"] += bool((t <= inst.H).any())
        seen["long"] += bool((t > inst.H).any())
        seen["moved"] += bool(((inst.current_cfg >= 0) & (sol.job_cfg != inst.current_cfg)).any())
        cat = inst.catalog
        share = cat.cost[cat.cfg_vm] * cat.cfg_gpus / cat.gpus[cat.cfg_vm]
        seen["above_share"] += bool((dollar_terms(inst).price > share * (1 + 1e-9)).any())
    assert min(seen.values()) >= 20, seen


def test_dollars_by_hand():
    """Two 1-GPU jobs, one VM type of 2 GPUs at 7.2 $/h (0.002 $/s), H = 1 h: a (2 h, due in 3 h)
    runs, b (1 h, due in 0.5 h) waits. Demand 2 GPUs fills the VM: fill price = share = 0.001 $/s.
    a: 1 h at 0.001 $/s + the hour left = 7.2 $; b from T_c + 1 h: 3.6 $ + 0.01 x 1.5 h late =
    57.6 $; the node's unused GPU for 1 h: 3.6 $; 68.4 $ in all. Running both: 7.2 + (3.6 +
    0.01 x 1800) = 28.8 $, the MILP's optimum."""
    cat = Catalog("inline", ("A",), ("K80",), np.array([2]), np.array([7.2]))
    inst = Instance(
        cat,
        1,
        ("a", "b"),
        np.zeros(2),
        np.array([10800.0, 1800.0]),
        np.full(2, 0.01),
        np.array([[7200.0, np.inf], [3600.0, np.inf]]),
        H=3600.0,
    )
    one = Solution(inst, [0], [0, -1], [0, -1])
    assert one.objective == pytest.approx(68.4) and validate(one).objective == pytest.approx(68.4)
    both = Solution(inst, [0], [0, 0], [0, 0])
    assert both.objective == pytest.approx(28.8)
    best = milp(inst, gap=0.0)
    assert best.job_cfg.tolist() == [0, 0] and best.objective == pytest.approx(28.8)


def test_best_run_value_is_the_least_plan_value_when_moves_are_free():
    """With restart and start-up costs 0, no run value (H s on a configuration, then the best
    plan) is below the job's least plan value from now (the per-job LP at the fill price: it
    does not depend on the order of its configurations), and the least run value equals it
    when every configuration takes the job more than H s (its best plan can go on after the
    re-plan; one that would end it within H cannot switch before). formulations/P1D.md."""
    from gpuaas.pricing import fill_price, plan_values_at

    checked = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        import dataclasses

        inst = random_instance(seed, nodes=4, jobs=int(rng.integers(1, 30)))
        inst = dataclasses.replace(inst, H=float(rng.choice([600.0, 3600.0, 36000.0])))
        run = dollar_terms(inst).run
        plan = plan_values_at(inst, fill_price(inst))
        best = plan.min(axis=1)
        assert (run >= best[:, None] * (1 - 1e-9) - 1e-9).all()
        long = inst.min_time > inst.H
        assert np.allclose(run.min(axis=1)[long], best[long], rtol=1e-9, atol=1e-9)
        checked += int(long.sum())
    assert checked >= 200


def test_dollars_agree_with_validator_on_spot_variants():
    """The same on catalogs with spot variants, where the per-job LP's mixes run the spot part
    first (its value is the spot configuration's): 60 random solutions on aws-us-east-1."""
    import dataclasses

    from gpuaas.catalog import load_catalog

    cat = load_catalog("aws-us-east-1").with_spot()
    mixed = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        base = random_instance(seed, nodes=int(rng.integers(1, 5)), jobs=int(rng.integers(1, 9)))
        work = cat.spot_work(
            rng.uniform(2, 200, (base.n_jobs, cat.without_spot().n_configs)) * 3600
        )
        inst = _with_costs(
            dataclasses.replace(base, catalog=cat, work=work, hazard=None, outage=None, room=None),
            rng,
            None,
        )
        sol = random_solution(inst, rng)
        rep = validate(sol)
        assert rep.ok, rep.errors
        assert sol.objective == pytest.approx(rep.objective, rel=1e-9, abs=1e-9)
        mixed += int(
            np.any(sol.job_cfg >= 0) and cat.spot[cat.cfg_vm[sol.job_cfg[sol.job_cfg >= 0]]].any()
        )
    assert mixed >= 10
