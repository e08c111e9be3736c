"""The P1 MILP (gpuaas.milp): model structure, optimum vs brute force, solvers, options, CLI."""

from __future__ import annotations

import dataclasses
import json
import math
import time

import highspy
import numpy as np
import pytest
from bruteforce import brute_force, brute_force_dollars, brute_force_incumbent
from click.testing import CliRunner

from gpuaas.catalog import Catalog
from gpuaas.cli import cli
from gpuaas.errors import InputError, SolverError
from gpuaas.generator import generate_instance, generate_snapshot
from gpuaas.heuristics.greedy import greedy
from gpuaas.instance import Instance
from gpuaas.methods import solve
from gpuaas.milp import build_model, decode, milp, solution_columns
from gpuaas.solution import Solution
from gpuaas.validator import validate

N_TINY = 120


def tiny_instance(seed: int) -> Instance:
    """A seeded tiny instance: J <= 5, N <= 2, 2-3 VM types of 1-3 GPUs (inline catalog), with
    late jobs (d_j < 0), jobs that run only on >= 2 GPUs (may fit nowhere), far due dates
    (free to wait), some progress, and mu, rho varied so that postponing can pay."""
    rng = np.random.default_rng(seed)
    V = int(rng.integers(2, 4))
    gpus = rng.integers(1, 4, size=V)
    cat = Catalog(
        "inline",
        tuple(f"V{v}" for v in range(V)),
        tuple("K80" if v % 2 else "M60" for v in range(V)),
        gpus,
        np.round(rng.uniform(0.3, 1.5, V) * gpus, 2),
    )
    N, J, C = int(rng.integers(1, 3)), int(rng.integers(1, 6)), cat.n_configs
    base = rng.uniform(0.5, 20, J) * 3600
    speed = rng.uniform(0.5, 2.0, V)
    g = cat.cfg_gpus
    work = base[:, None] / speed[cat.cfg_vm][None, :] / g[None, :] ** rng.uniform(0.3, 0.9)
    work[rng.random((J, C)) < 0.25] = np.inf
    work[(rng.random(J) < 0.2)[:, None] & (g[None, :] < 2)] = np.inf  # needs >= 2 GPUs
    for j in np.flatnonzero(~np.isfinite(work).any(axis=1)):
        work[j, C - 1] = base[j]
    tmin = work.min(axis=1)
    kind = rng.integers(0, 3, J)
    due = np.select(
        [kind == 0, kind == 1],
        [-rng.uniform(0, 3, J) * tmin, rng.uniform(0.5, 2, J) * tmin],
        rng.uniform(2, 10, J) * tmin + 30 * 3600,
    )
    weight = rng.uniform(0.003, 0.015, J) * rng.choice([0.001, 1.0, 1.0], J)
    return Instance(
        cat,
        N,
        tuple(f"j{i}" for i in range(J)),
        np.zeros(J),
        due,
        weight,
        work,
        progress=rng.choice([0.0, 0.5], J),
        H=3600.0,
        mu=float(rng.choice([0.0, 1.0, 5.0])),
        rho=float(rng.choice([0.0, 0.01, 1.0, 100.0])),
    )


@pytest.fixture(scope="module")
def tiny_cases() -> list[tuple[Instance, object]]:
    """The tiny instances with their brute-force enumeration (computed once)."""
    return [(inst, brute_force(inst)) for inst in map(tiny_instance, range(N_TINY))]


def close(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


# -- optimum vs brute force ------------------------------------------------------------------


def test_tiny_instances_cover_the_required_cases(tiny_cases):
    """The tiny family has late jobs, J < N, 2 and 3 VM types, and optima with postponed jobs,
    including jobs that could run only on >= 2 GPUs, and shared nodes."""
    late = jlt = postponed_big = shared = 0
    types = set()
    for inst, bf in tiny_cases:
        types.add(inst.catalog.n_vms)
        late += bool((inst.rel_due < 0).any())
        jlt += inst.n_jobs < inst.nodes
        for p1n in (True, False):
            _, sol = bf.optimum(p1n, inst)
            needs2 = ~np.isfinite(inst.times[:, inst.catalog.cfg_gpus == 1]).any(axis=1)
            postponed_big += bool((needs2 & (sol.job_cfg < 0)).any())
            on = sol.job_node[sol.job_node >= 0]
            shared += bool(on.size and np.bincount(on).max() > 1)
    assert types == {2, 3}
    assert late >= 20 and jlt >= 5 and postponed_big >= 3 and shared >= 20


@pytest.mark.parametrize("linearisation", ["bigm", "product"])
@pytest.mark.parametrize("p1n", [True, False], ids=["p1n", "no-p1n"])
def test_milp_optimum_equals_brute_force(tiny_cases, p1n, linearisation):
    """On 120 tiny instances the MILP optimum equals brute force to 1e-6 and its Solution
    passes the validator with the same objective (both linearisations of pi*alpha)."""
    bad = []
    for k, (inst, bf) in enumerate(tiny_cases):
        best, _ = bf.optimum(p1n, inst)
        sol = milp(inst, objective="p1a", gap=0.0, p1n=p1n, linearisation=linearisation)
        rep = validate(sol, p1n=p1n)
        if not (
            sol.stats["status"] == "optimal"
            and rep.ok
            and close(sol.f_obj, best)
            and close(rep.f_obj, sol.f_obj)
        ):
            bad.append((k, best, sol.f_obj, rep.errors))
    assert not bad


def with_incumbent(inst: Instance, seed: int) -> Instance:
    """`inst` with some jobs running (a feasible placement: each running job alone on its node
    with a random runnable configuration) and random restart overhead and VM start-up."""
    rng = np.random.default_rng(10_000 + seed)
    node = np.full(inst.n_jobs, -1)
    cfg = np.full(inst.n_jobs, -1)
    for n in range(inst.nodes):
        j = int(rng.integers(0, inst.n_jobs))
        ok = np.flatnonzero(np.isfinite(inst.times[j]))
        if node[j] < 0 and rng.random() < 0.8:
            node[j], cfg[j] = n, int(rng.choice(ok))
    return dataclasses.replace(
        inst,
        current_node=node,
        current_cfg=cfg,
        overhead=float(rng.choice([0.0, 600.0, 7200.0, 36000.0])),
        startup=float(rng.choice([0.0, 120.0, 3600.0])),
    )


@pytest.mark.parametrize("linearisation", ["bigm", "product"])
def test_milp_with_reconfiguration_costs_equals_brute_force(linearisation):
    """P1's reconfiguration extension (kappa per moved running job, sigma per started or resized
    VM): on 60 tiny instances with an incumbent the MILP optimum equals an independent brute
    force to 1e-6, and the validator recomputes the same objective. Costs this large make
    keeping the incumbent optimal in some cases and moving it in others."""
    bad, kept, moved = [], 0, 0
    for k in range(60):
        inst = with_incumbent(tiny_instance(k), k)
        best, bf_sol = brute_force_incumbent(inst)
        sol = milp(inst, objective="p1a", gap=0.0, p1n=False, linearisation=linearisation)
        rep = validate(sol)
        if not (
            sol.stats["status"] == "optimal"
            and rep.ok
            and close(sol.f_obj, best)
            and close(rep.f_obj, sol.f_obj)
            and close(validate(bf_sol).f_obj, best)
        ):
            bad.append((k, best, sol.f_obj, rep.f_obj, rep.errors))
        run = inst.current_cfg >= 0
        same = (sol.job_node == inst.current_node) & (sol.job_cfg == inst.current_cfg)
        kept += bool((run & same).any())
        moved += bool((run & ~same).any())
    assert not bad
    assert kept >= 10 and moved >= 5


def test_dollars_milp_optimum_equals_brute_force():
    """P1$ (formulations/P1D.md): on 80 tiny instances, half with an incumbent and restart /
    start-up costs, the MILP optimum equals an independent brute force (its values from the
    validator's plain-Python per-job LPs) to 1e-6; the validator recomputes both objectives; the
    brute-force optimum's columns satisfy every row at its cost. The optima run, postpone,
    keep and move jobs."""
    bad, seen = [], {"wait": 0, "shared": 0, "kept": 0, "moved": 0}
    for k in range(80):
        inst = tiny_instance(k)
        inst = with_incumbent(inst, k) if k % 2 else inst
        best, bf = brute_force_dollars(inst)
        sol = milp(inst, gap=0.0)
        rep = validate(sol)
        model = build_model(inst)
        x = solution_columns(model, bf)
        act = np.array(
            [
                x[model.indices[a:b]] @ model.data[a:b]
                for a, b in zip(model.indptr[:-1], model.indptr[1:])
            ]
        )
        if not (
            sol.stats["status"] == "optimal"
            and rep.ok
            and close(sol.objective, best)
            and close(rep.objective, best)
            and close(validate(bf).objective, best)
            and np.all(act >= model.row_lower - 1e-6)
            and np.all(act <= model.row_upper + 1e-6)
            and close(float(model.col_cost @ x) + model.offset, best)
        ):
            bad.append((k, best, sol.objective, rep.objective, rep.errors))
        on = sol.job_node[sol.job_node >= 0]
        seen["wait"] += bool((sol.job_cfg < 0).any())
        seen["shared"] += bool(on.size and np.bincount(on).max() > 1)
        run = inst.current_cfg >= 0
        same = (sol.job_node == inst.current_node) & (sol.job_cfg == inst.current_cfg)
        seen["kept"] += bool((run & same).any())
        seen["moved"] += bool((run & ~same).any())
    assert not bad
    assert min(seen.values()) >= 5, seen


@pytest.mark.parametrize("linearisation", ["bigm", "product"])
def test_brute_force_optimum_is_feasible_in_the_model_with_its_cost(tiny_cases, linearisation):
    """The column vector of each brute-force optimum satisfies every row of P1 and its model
    cost is its f_OBJ (the model neither cuts off nor misprices the optimum)."""
    for inst, bf in tiny_cases[:40]:
        for p1n in (True, False):
            best, sol = bf.optimum(p1n, inst)
            model = build_model(inst, objective="p1a", p1n=p1n, linearisation=linearisation)
            x = solution_columns(model, sol)
            act = np.array(
                [
                    x[model.indices[a:b]] @ model.data[a:b]
                    for a, b in zip(model.indptr[:-1], model.indptr[1:])
                ]
            )
            assert np.all(act >= model.row_lower - 1e-6) and np.all(act <= model.row_upper + 1e-6)
            assert close(float(model.col_cost @ x), best)
            back = decode(model, x)
            assert np.array_equal(back.job_cfg, sol.job_cfg) and close(back.f_obj, best)


# -- the corrected tardiness rows --------------------------------------------------------------


def late_job_instance() -> Instance:
    """One job 10^6 s past its due date, one 1-GPU VM at $1000/h, N = 1, omega = 0.001."""
    cat = Catalog("inline", ("V",), ("K80",), np.array([1]), np.array([1000.0]))
    return Instance(
        cat,
        1,
        ("late",),
        np.zeros(1),
        np.array([-1.0e6]),
        np.array([0.001]),
        np.array([[3600.0]]),
        H=3600.0,
        mu=1.0,
        rho=100.0,
    )


def test_corrected_rows_run_a_late_job_the_literal_text_postpones():
    """d_j < 0: corrected P1h/P1i run the job (cost 2003.6 = brute force); the literal text
    charges a running late job rho*w*|d| and a waiting one w*|d|, and so postpones it (P1n off)."""
    inst = late_job_instance()
    run_cost = 0.001 * (3600 + 1e6) + 1000.0  # tardiness + VM cost of the first-ending job
    wait_cost = 100 * 0.001 * (3600 + 3600 + 1e6)
    corrected = milp(inst, objective="p1a", gap=0.0, p1n=False)  # P1n would force the one node open
    literal = milp(inst, objective="p1a", gap=0.0, p1n=False, literal=True)
    assert corrected.job_node.tolist() == [0] and close(corrected.f_obj, run_cost)
    assert close(brute_force(inst).optimum(False, inst)[0], run_cost)
    assert literal.job_node.tolist() == [-1] and close(literal.f_obj, wait_cost)
    assert close(literal.stats["solver_objective"], wait_cost + 0.001 * 1e6)
    assert close(corrected.stats["solver_objective"], corrected.f_obj)


# -- model structure ---------------------------------------------------------------------------


def test_rows_are_named_by_family_and_index():
    """Every family P1b..P1n has rows named <family>_<indices>; P1n only with p1n=True."""
    inst = tiny_instance(3)
    model = build_model(inst, objective="p1a", linearisation="bigm")
    fams = [
        "P1b",
        "P1c",
        "P1d",
        "P1e",
        "P1f",
        "P1g",
        "P1h",
        "P1i",
        "P1j",
        "P1k",
        "P1l",
        "P1m",
        "P1n",
    ]
    assert list(model.families) == fams
    product = build_model(
        inst, objective="p1a"
    )  # the default adds P1jx / P1ja for beta = alpha * x
    assert list(product.families) == fams[:8] + ["P1jx", "P1ja"] + fams[8:]
    J, N = inst.n_jobs, inst.nodes
    assert model.families["P1l"].stop - model.families["P1l"].start == J * N
    assert "P1b_n0" in model.row_names and "P1h_j0" in model.row_names and "P1n" in model.row_names
    assert "P1n" not in build_model(inst, objective="p1a", p1n=False).families


def test_x_exists_only_for_runnable_configurations():
    """x_jnvg exists exactly where t_jvg is finite, on every node."""
    inst = tiny_instance(7)
    model = build_model(inst)
    runnable = np.isfinite(inst.times)
    assert np.array_equal(model.x >= 0, np.broadcast_to(runnable[:, None, :], model.x.shape))
    assert (model.x >= 0).sum() == inst.nodes * runnable.sum()


def test_p1j_row_is_the_linearised_deployment_cost():
    """With linearisation="bigm", P1j_j0_n0 reads p - sum t*c*x - Mhat*alpha >= -Mhat, Mhat = max t*c."""
    inst = tiny_instance(11)
    cat = inst.catalog
    model = build_model(inst, objective="p1a", linearisation="bigm")
    row = model.row("P1j_j0_n0")
    tc = inst.times[0] * cat.cost[cat.cfg_vm]
    mhat = tc[np.isfinite(tc)].max()
    assert row[int(model.p[0, 0])] == 1.0 and row[int(model.alpha[0, 0])] == -mhat
    for c in np.flatnonzero(np.isfinite(tc)):
        assert math.isclose(row[int(model.x[0, 0, c])], -tc[c])
    r = model.row_names.index("P1j_j0_n0")
    assert model.row_lower[r] == -mhat


# -- solvers and options -----------------------------------------------------------------------


def test_highs_and_cbc_reach_the_same_optimum(tiny_cases):
    """CBC (through PuLP, from the same model as MPS) and HiGHS agree on small instances."""
    cases = [c[0] for c in tiny_cases[:8]] + [generate_instance(2, 4, s) for s in range(2)]
    for k, inst in enumerate(cases):
        lin = "product" if k % 2 else "bigm"  # the generated ones are quicker to prove with product
        h = milp(inst, objective="p1a", gap=0.0, linearisation=lin)
        c = milp(inst, objective="p1a", gap=0.0, solver="cbc", linearisation=lin)
        assert c.stats["status"] == "optimal" and c.stats["solver"] in ("COIN_CMD", "PULP_CBC_CMD")
        assert close(h.f_obj, c.f_obj)


def test_warm_start_from_greedy_is_never_worse_than_greedy(tiny_cases):
    """A Greedy warm start (P1n off, the heuristics' problem) is the incumbent to beat, even when
    the solver is stopped almost at once. Two generated instances (catalog configurations, Greedy
    300-fold above the optimum) besides the tiny ones: one solved to optimality, one stopped at
    the gap (1.2-1.4 s each; J = 10 took 3 s)."""
    cases = [c[0] for c in tiny_cases[:30]] + [generate_instance(2, 6, s) for s in (0, 2)]
    for inst in cases:
        g = greedy(inst)
        for limit in (0.01, None):
            sol = milp(inst, objective="p1a", warm_start=g, p1n=False, time_limit=limit, gap=0.05)
            assert sol.stats["warm_start"] == g.method
            assert sol.f_obj <= g.f_obj + 1e-9 * max(1.0, abs(g.f_obj))
            assert validate(sol).ok


def test_p1_warm_start_is_never_worse_than_none():
    """P1 (issue 39, case 16): handed to HiGHS, Greedy's start (10-40 x the optimum at J = 50)
    steered it away from the optimum it found without one. It is now only the answer to beat
    (`MIP_START`): HiGHS runs as without a warm start, so the result is never worse. One
    instance shows it (J = 5: each solve costs about 0.8 CPU s)."""
    inst = generate_instance(2, 5, 0)
    a = milp(inst, objective="p1a", gap=0.05, threads=1)
    b = milp(inst, objective="p1a", gap=0.05, threads=1, warm_start=None)
    assert a.stats["warm_start"] == "greedy" and a.stats["mip_start"] is False
    assert a.stats["solver_nodes"] == b.stats["solver_nodes"]  # the same HiGHS run
    assert a.f_obj <= b.f_obj + 1e-9 * max(1.0, abs(b.f_obj)) and validate(a, p1n=True).ok
    given = milp(inst, objective="p1a", gap=0.05, threads=1, mip_start=True)
    assert given.stats["mip_start"] is True and validate(given, p1n=True).ok
    assert milp(inst, gap=0.05, threads=1).stats["mip_start"] is True  # P1$: the default's plan


def test_solver_answer_worse_than_the_warm_start_is_not_returned(monkeypatch):
    """Without a MIP start HiGHS may stop at a solution worse than the warm start: the warm
    start is returned (status "warm_start" unless the bound proves it), and says why."""
    import gpuaas.milp.method as M

    inst = generate_instance(2, 6, 1)
    g = greedy(inst)
    real = M.solve_highs

    def worse(model, **kw):
        res = real(model, **kw)
        res["values"] = solution_columns(model, Solution.empty(inst))  # every job postponed
        res["solver_objective"] = float(model.col_cost @ res["values"]) + model.offset
        res["status"] = "time_limit"
        return res

    monkeypatch.setattr(M, "solve_highs", worse)
    assert Solution.empty(inst).f_obj > g.f_obj
    sol = milp(inst, objective="p1a", gap=0.05, p1n=False, warm_start=g)
    assert sol.stats["status"] == "warm_start" and close(sol.f_obj, g.f_obj)
    assert "is worse than the warm start" in sol.stats["fallback"]


def test_warm_start_violating_p1n_is_repaired_and_an_infeasible_one_ignored():
    """A warm start with fewer than min(N, J) open nodes is repaired to meet P1n and used; an
    infeasible one is not passed on and stats say why."""
    inst = tiny_instance(0)
    while inst.nodes < 2 or inst.n_jobs < 2:
        inst = tiny_instance(inst.n_jobs * 1000 + inst.nodes + 17)
    one = brute_force(inst).best[1][1]
    assert not validate(one, p1n=True).ok
    sol = milp(inst, objective="p1a", warm_start=one, gap=0.0)
    assert sol.stats["warm_start"] == one.method and validate(sol, p1n=True).ok
    bad = greedy(inst)
    bad.node_vm[:] = -1  # jobs on closed nodes
    sol = milp(inst, objective="p1a", warm_start=bad, gap=0.0)
    assert sol.stats["warm_start"].startswith("ignored: job ")
    assert validate(sol, p1n=True).ok


def test_warm_start_for_another_instance_is_an_input_error():
    """A warm start whose jobs differ from the instance's is rejected clearly."""
    a, b = generate_instance(2, 4, 0), generate_instance(2, 5, 0)
    with pytest.raises(InputError, match="different instance"):
        milp(a, warm_start=Solution.empty(b))


def test_stats_report_status_bound_gap_and_f_obj():
    """stats: objective is f_OBJ of the Solution, bound <= objective, gap within the request;
    a stop at the requested gap above 1e-4 is "gap_reached", not "optimal" (this one stops at
    a gap of 0.047)."""
    inst = generate_instance(2, 4, 5)
    sol = solve(inst, "milp", seed=4, gap=0.05, objective="p1a")
    st = sol.stats
    assert st["status"] == "gap_reached" and st["gap"] > 1e-4
    assert st["solver"] == "highs" and st["seed"] == 4 and st["warm_start"] == "greedy"
    assert st["objective"] == sol.f_obj and st["bound"] <= st["objective"]
    assert 0.0 <= st["gap"] <= 0.05 + 1e-9 and st["seconds"] > 0
    assert json.dumps(sol.to_dict())  # stats are JSON-safe


def test_same_seed_same_solution():
    """Two runs with one seed give the same Solution (on this instance seeds 0-5 give two
    different solutions)."""
    inst = generate_instance(2, 4, 5)
    a, b = (
        milp(inst, objective="p1a", seed=3, gap=0.05),
        milp(inst, objective="p1a", seed=3, gap=0.05),
    )
    assert np.array_equal(a.job_cfg, b.job_cfg) and np.array_equal(a.node_vm, b.node_vm)


def test_thread_count_can_change_within_one_process():
    """HiGHS fixes its thread count on first use; milp resets it so threads=1 then 2 both solve."""
    inst = tiny_instance(5)
    for threads in (1, 2, 1):
        assert milp(inst, objective="p1a", gap=0.0, threads=threads).stats["status"] == "optimal"


def test_time_limit_without_incumbent_raises_solver_error():
    """A time limit that stops HiGHS before any solution: the Greedy warm start (the default)
    is returned with status "warm_start"; without a warm start it is a SolverError."""
    inst = generate_instance(10, 100, 0)
    sol = milp(inst, objective="p1a", time_limit=1e-3)
    assert sol.stats["status"] == "warm_start" and validate(sol, p1n=True).ok
    assert sol.stats["fallback"] in (
        "no time left for the solver",
        "highs: nothing better than the warm start within the time limit",
    )
    with pytest.raises(SolverError, match="no solution within the time limit of 0.001 s"):
        milp(inst, objective="p1a", time_limit=1e-3, warm_start=None)


def test_time_limit_is_a_hard_stop():
    """HiGHS overruns its own time limit in presolve; milp stops within 10 % of the limit
    anyway (HiGHS runs in a child process killed at the limit), with a valid solution."""
    inst = generate_instance(10, 100, 2)
    solve(inst, "greedy")  # kernels compiled / loaded before the clock starts
    t0 = time.perf_counter()
    sol = solve(inst, "milp", time_limit=1.0, objective="p1a")
    assert time.perf_counter() - t0 <= 1.1
    assert validate(sol, p1n=True).ok and sol.stats["status"] in (
        "warm_start",
        "time_limit",
        "optimal",
    )


def test_an_infeasible_or_inconsistent_solver_answer_is_not_returned(monkeypatch):
    """What HiGHS returns is checked: an infeasible solution (or one whose objective is not the
    one HiGHS reports) is never labelled optimal; the warm start is returned instead."""
    import gpuaas.milp.method as M

    inst = generate_instance(2, 6, 1)
    real = M.solve_highs

    def broken(model, **kw):
        res = real(model, **kw)
        res["values"] = np.ones(model.n_cols)  # every binary on: jobs on every node at once
        return res

    monkeypatch.setattr(M, "solve_highs", broken)
    sol = milp(inst, objective="p1a", gap=0.0)
    assert sol.stats["status"] == "warm_start" and "not feasible" in sol.stats["fallback"]
    assert validate(sol, p1n=True).ok
    with pytest.raises(SolverError, match="highs failed: its solution is not feasible"):
        milp(inst, objective="p1a", gap=0.0, warm_start=None)


def test_highs_returning_the_warm_start_as_optimal_is_caught():
    """HiGHS 1.16 returns this instance's Greedy warm start as "optimal" (its presolve drops
    the objective offset); milp notices the objective mismatch and solves again without it."""
    inst = tiny_instance(60)
    best, _ = brute_force(inst).optimum(True, inst)
    sol = milp(inst, objective="p1a", gap=0.0, linearisation="bigm")
    assert sol.stats["status"] == "optimal" and close(sol.f_obj, best)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"gap": -0.1}, "gap"),
        ({"threads": 0}, "threads"),
        ({"solver": "nosuch"}, "solver"),
        ({"linearisation": "x"}, "linearisation"),
    ],
)
def test_bad_options_are_input_errors(kwargs, field):
    """Negative gap, zero threads and an unknown solver name are InputErrors naming the field."""
    with pytest.raises(InputError, match=field):
        milp(tiny_instance(1), **kwargs)


def test_write_lp_and_mps_round_trip(tmp_path):
    """The exported LP and MPS files read back into HiGHS with the same size and row names."""
    inst = tiny_instance(9)
    model = build_model(inst, objective="p1a")
    lp, mps = tmp_path / "p1.lp", tmp_path / "p1.mps"
    sol = milp(inst, objective="p1a", gap=0.0, write_lp=str(lp), write_mps=str(mps))
    for path in (lp, mps):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        assert h.readModel(str(path)) == highspy.HighsStatus.kOk
        assert (h.getNumCol(), h.getNumRow()) == (model.n_cols, model.n_rows)
        assert h.getRowName(0)[1] == model.row_names[0]
        h.run()
        assert close(h.getInfo().objective_function_value, sol.stats["solver_objective"])


# -- CLI -------------------------------------------------------------------------------------


@pytest.fixture
def snapshot_file(tmp_path):
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(generate_snapshot(2, 5, 1)))
    return str(path)


def test_cli_milp_json_has_status_bound_gap(snapshot_file, tmp_path):
    """`gpuaas solve --method milp --json` puts status, bound and gap under stats; --write-lp
    writes the model."""
    lp = tmp_path / "model.lp"
    res = CliRunner().invoke(
        cli,
        [
            "solve",
            snapshot_file,
            "-m",
            "milp",
            "--gap",
            "0.05",
            "--json",
            "--write-lp",
            str(lp),
            "--no-p1n",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    st = data["stats"]
    assert st["p1n"] is False and (st["status"], st["gap"] <= 1e-4) in (
        ("optimal", True),
        ("gap_reached", False),
    )
    assert {"bound", "gap"} <= set(data["stats"]) and lp.read_text().startswith("\\")


def test_cli_milp_human_output_and_warm_start(snapshot_file):
    """Human output shows status, bound and gap; --warm-start greedy is recorded."""
    res = CliRunner().invoke(
        cli,
        [
            "solve",
            snapshot_file,
            "-m",
            "milp",
            "--warm-start",
            "greedy",
            "--no-p1n",
            "--solver",
            "cbc",
        ],
    )
    assert res.exit_code == 0, res.output
    for word in ("status", "bound", "gap", "objective"):
        assert word in res.output


def test_cli_milp_errors_are_one_line(snapshot_file, tmp_path):
    """Options of milp with another method: exit 2. A time limit reached before any solution:
    the warm start (P1$: the default method's plan) is the answer (exit 0); without a warm start, exit 3 in one line."""
    runner = CliRunner()
    res = runner.invoke(cli, ["solve", snapshot_file, "--gap", "0.1"])
    assert res.exit_code == 2 and "apply to --method milp only" in res.output
    big = tmp_path / "big.json"
    big.write_text(json.dumps(generate_snapshot(10, 100, 0)))
    res = runner.invoke(cli, ["solve", str(big), "-m", "milp", "--time-limit", "0.001", "--json"])
    assert res.exit_code == 0, res.output
    st = json.loads(res.output)["stats"]
    assert st["status"] == "warm_start" and st["warm_start"] == "incremental" and "fallback" in st
    res = runner.invoke(
        cli, ["solve", str(big), "-m", "milp", "--time-limit", "0.001", "--warm-start", "none"]
    )
    assert res.exit_code == 3
    assert res.output == (
        "gpuaas: error: highs found no solution within the time limit of 0.001 s "
        "and there is no warm start\n"
    )


def test_solve_example_default_and_milp_report_comparable_dollars():
    """`gpuaas solve instances/example.json` with the default method and with --method milp print
    P1$ within 2 % of each other (f_OBJ differed 45-fold); the file `check` reads back has the
    same P1$, and --objective p1a prints P1a."""
    from pathlib import Path

    example = str(Path(__file__).resolve().parents[1] / "instances" / "example.json")
    runner = CliRunner()
    out = {}
    for method in ("incremental", "milp"):
        res = runner.invoke(cli, ["solve", example, "-m", method, "--json"])
        assert res.exit_code == 0, res.output
        out[method] = json.loads(res.output)
        assert out[method]["objective_function"] == "dollars"
    a, b = out["incremental"]["objective"], out["milp"]["objective"]
    assert b <= a <= 1.02 * b
    assert out["milp"]["stats"]["status"] == "optimal"
    res = runner.invoke(cli, ["solve", example, "-m", "milp", "--objective", "p1a"])
    assert res.exit_code == 0 and "(f_OBJ, P1a)" in res.output


def test_cli_cbc_missing_says_how_to_get_it(snapshot_file, monkeypatch):
    """Where PuLP has no CBC (PuLP 4 drops its bundled one): exit 2, one line naming the way to
    install it, no traceback."""
    import pulp

    monkeypatch.setattr(pulp, "listSolvers", lambda onlyAvailable=False: ["GLPK_CMD"])
    res = CliRunner().invoke(cli, ["solve", snapshot_file, "-m", "milp", "--solver", "cbc"])
    assert res.exit_code == 2, res.output
    assert "pulp[cbc]" in res.output and "GLPK_CMD" in res.output
    assert "Traceback" not in res.output
