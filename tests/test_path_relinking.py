"""Path Relinking: incremental move deltas, Algorithm 2's behaviour, validity, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from gpuaas.errors import InputError
from gpuaas.generator import generate_instance
from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.path_relinking import path_relinking
from gpuaas.heuristics.state import State, kernel_data
from gpuaas.methods import DEFAULT_METHOD, solve
from gpuaas.validator import validate
from tests.heuristic_cases import random_instance
from tests.test_objective import random_solution


@pytest.mark.parametrize("proxy", [K.PROXY_FOBJ, K.PROXY_FBAR])
def test_move_delta_equals_full_recomputation(proxy):
    """Every feasible move's incremental delta equals the change of the whole-solution score."""
    checked = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        inst = random_instance(seed, nodes=int(rng.integers(1, 8)), jobs=int(rng.integers(1, 25)))
        sol = random_solution(inst, rng)
        D = kernel_data(inst)
        st = State.new(inst)
        st.load(D, sol.node_vm, sol.job_node, sol.job_cfg)
        for _ in range(30):
            j = int(rng.integers(inst.n_jobs))
            runnable = np.flatnonzero(np.isfinite(inst.times[j]))
            c = -1 if rng.random() < 0.2 else int(rng.choice(runnable))
            n = -1 if c < 0 else int(rng.integers(inst.nodes))
            if not K.move_feasible(
                D, st.node_vm, st.node_used, st.node_cnt, st.job_node, st.job_cfg, j, n, c
            ):
                continue
            before = K.full_score(D, proxy, st.node_vm, st.job_node, st.job_cfg)
            d = K.move_delta(D, proxy, *st.arrays(), j, n, c)
            K.apply_move(D, *st.arrays(), j, n, c)
            after = K.full_score(D, proxy, st.node_vm, st.job_node, st.job_cfg)
            assert d == pytest.approx(after - before, rel=1e-9, abs=1e-7 * (1 + abs(before)) * 1e-3)
            assert validate(st.solution(inst, "", {})).ok
            checked += 1
    assert checked > 500


def test_relink_reaches_a_better_target():
    """From the empty schedule towards Greedy's with f̄ (every run job adds to eq. 1) the path
    reaches the target configurations."""
    inst = random_instance(4, nodes=30, jobs=12)
    g = greedy(inst, postprocess=False)
    D = kernel_data(inst)
    st = State.new(inst)
    score = K.full_score(D, K.PROXY_FBAR, st.node_vm, st.job_node, st.job_cfg)
    _it, moves, score = K.path_relinking_towards(
        D, K.PROXY_FBAR, K.OPEN_CONFIG, g.job_cfg.copy(), 100, score, *st.arrays()
    )
    assert np.array_equal(st.job_cfg, g.job_cfg)
    assert moves == (g.job_cfg >= 0).sum()
    assert score == pytest.approx(-g.proxy)


def test_relink_stops_when_no_move_improves():
    """Towards the empty schedule no move (postponing) improves f̄: nothing changes."""
    inst = random_instance(4, nodes=30, jobs=12)
    g = greedy(inst, postprocess=False)
    D = kernel_data(inst)
    st = State.new(inst)
    st.load(D, g.node_vm, g.job_node, g.job_cfg)
    score = K.full_score(D, K.PROXY_FBAR, st.node_vm, st.job_node, st.job_cfg)
    target = np.full(inst.n_jobs, -1, dtype=np.int64)
    it, moves, after = K.path_relinking_towards(
        D, K.PROXY_FBAR, K.OPEN_CONFIG, target, 100, score, *st.arrays()
    )
    assert (it, moves, after) == (1, 0, score)
    assert np.array_equal(st.job_cfg, g.job_cfg)


def test_two_level_step_accepts_a_worsening_first_move():
    """Shrinking job a is worse alone but lets job b run: two-level EXPLORE_STEP takes it."""
    from tests.heuristic_cases import CATALOG, tiny_instance

    rows = [{("NC12", 1): 2000.0, ("NC12", 2): 1200.0}, {("NC12", 1): 1000.0}]
    inst = tiny_instance(rows, [5000.0, 5000.0], nodes=1)
    nc12 = CATALOG.vm_index("NC12")
    one, two = CATALOG.config(nc12, 1), CATALOG.config(nc12, 2)
    D = kernel_data(inst)
    st = State.new(inst)
    st.load(D, np.array([nc12]), np.array([0, -1]), np.array([two, -1]))
    first = K.move_delta(D, K.PROXY_FBAR, *st.arrays(), 0, 0, one)
    assert first > 0  # a alone on one GPU: worse in f̄ (b has no feasible move yet)
    score = K.full_score(D, K.PROXY_FBAR, st.node_vm, st.job_node, st.job_cfg)
    _it, moves, score = K.path_relinking_towards(
        D, K.PROXY_FBAR, K.OPEN_CONFIG, np.array([one, one]), 10, score, *st.arrays()
    )
    assert moves == 2 and list(st.job_cfg) == [one, one]
    assert score == pytest.approx(
        K.full_score(D, K.PROXY_FBAR, st.node_vm, st.job_node, st.job_cfg)
    )
    assert score < K.full_score(
        D, K.PROXY_FBAR, np.array([nc12]), np.array([0, -1]), np.array([two, -1])
    )


def test_relink_moves_a_job_onto_a_node_of_the_same_gpu_model():
    """With 'largest' a job whose target is NC6 x1 joins the open NC24 (same K80 model, room);
    the literal rule finds no NC6 node and, with no closed node left, no move."""
    from tests.heuristic_cases import CATALOG, tiny_instance

    row = {("NC6", 1): 1000.0, ("NC24", 1): 1000.0}
    inst = tiny_instance([row, row], [5000.0, 5000.0], nodes=1)
    nc6, nc24 = CATALOG.vm_index("NC6"), CATALOG.vm_index("NC24")
    target = np.array([CATALOG.config(nc24, 1), CATALOG.config(nc6, 1)])
    D = kernel_data(inst)
    for rule, moves_expected in ((K.OPEN_LARGEST, 1), (K.OPEN_CONFIG, 0)):
        st = State.new(inst)
        st.load(D, np.array([nc24]), np.array([0, -1]), np.array([target[0], -1]))
        score = K.full_score(D, K.PROXY_FBAR, st.node_vm, st.job_node, st.job_cfg)
        _it, moves, after = K.path_relinking_towards(
            D, K.PROXY_FBAR, rule, target, 5, score, *st.arrays()
        )
        assert moves == moves_expected
        assert after == pytest.approx(
            K.full_score(D, K.PROXY_FBAR, st.node_vm, st.job_node, st.job_cfg)
        )
    assert list(st.job_cfg) == [target[0], -1]  # config rule: unchanged
    st.load(D, np.array([nc24]), np.array([0, 0]), np.array([target[0], target[0]]))
    relinked = K.path_relinking_towards(
        D, K.PROXY_FBAR, K.OPEN_LARGEST, target, 5, 0.0, *st.arrays()
    )
    assert relinked[1] == 0
    assert K.same_assignment(D, K.OPEN_LARGEST, target[0], target[1])  # footnote 2, by model
    assert not K.same_assignment(D, K.OPEN_CONFIG, target[0], target[1])


def _check(seeds, max_it_rg, open_rule="largest"):
    for seed in seeds:
        inst = random_instance(seed)
        sol = path_relinking(inst, seed=seed, max_it_rg=max_it_rg, open_rule=open_rule)
        rep = validate(sol)
        assert rep.ok, (seed, rep.errors[:3])
        assert rep.f_obj == pytest.approx(sol.f_obj, rel=1e-9)
        s = sol.stats["steps"]
        tol = 1e-9 * abs(s["best_elite"]["proxy"])
        assert s["path_relinking"]["proxy"] >= s["best_elite"]["proxy"] - tol
        assert s["postprocessed"]["proxy"] >= s["path_relinking"]["proxy"] - tol
        assert s["postprocessed"]["f_obj"] <= s["path_relinking"]["f_obj"] * (1 + 1e-12)


def test_valid_and_improving_on_generated_instances():
    """On 25 random instances (N 1..100, J 1..500): valid; PR >= best elite; postprocessing >= PR."""
    _check(range(300, 325), max_it_rg=40)
    _check(range(325, 335), max_it_rg=40, open_rule="config")


@pytest.mark.slow
def test_valid_and_improving_paper_parameters():
    """The same on 120 random instances with the paper's parameters."""
    _check(range(3000, 3120), max_it_rg=1000)
    _check(range(3120, 3160), max_it_rg=1000, open_rule="config")


def test_same_seed_same_solution():
    """Same seed, identical solution and statistics (except the time)."""
    inst = generate_instance(20, 90, seed=5)
    a = path_relinking(inst, seed=3, max_it_rg=150)
    b = path_relinking(inst, seed=3, max_it_rg=150)
    assert np.array_equal(a.node_vm, b.node_vm) and np.array_equal(a.job_node, b.job_node)
    assert np.array_equal(a.job_cfg, b.job_cfg)
    strip = lambda s: {k: v for k, v in s.items() if k != "seconds"}
    assert strip(a.stats) == strip(b.stats)


def test_default_method_and_options():
    """path-relinking is available by name (the default is incremental); max_it_pr and proxy are checked."""
    assert DEFAULT_METHOD == "incremental"
    inst = generate_instance(5, 20, seed=1)
    sol = solve(inst, "path-relinking", seed=2, max_it_rg=30, max_it_pr=2)
    assert sol.method == "path-relinking" and validate(sol).ok
    assert sol.stats["pr_iterations"] <= 2 * (sol.stats["elite"] - 1)
    with pytest.raises(InputError, match="max_it_pr"):
        path_relinking(inst, max_it_pr=0)
    with pytest.raises(InputError, match="unknown option"):
        path_relinking(inst, maxitpr=3)


def _gaps_to_optimum(seeds, max_nodes, max_jobs):
    from gpuaas.heuristics.randomized_greedy import randomized_greedy
    from gpuaas.milp import milp

    for seed in seeds:
        rng = np.random.default_rng(seed)
        inst = generate_instance(
            int(rng.integers(1, max_nodes + 1)), int(rng.integers(1, max_jobs + 1)), seed=seed
        )
        opt = milp(inst, objective="p1a", p1n=False, gap=0.0, threads=1)
        assert opt.stats["status"] == "optimal"
        for fn in (greedy, randomized_greedy, path_relinking):
            sol = fn(inst, seed=seed)
            assert validate(sol).ok
            assert sol.f_obj >= opt.f_obj * (1 - 1e-7) - 1e-7, (seed, fn.__name__)


def test_no_heuristic_beats_the_milp_optimum():
    """On 4 tiny instances every heuristic is feasible and >= the MILP optimum (P1n off)."""
    _gaps_to_optimum(range(4), max_nodes=2, max_jobs=3)


@pytest.mark.slow
def test_no_heuristic_beats_the_milp_optimum_50():
    """The same on the 50 instances of scripts/gap_heuristics.py (N <= 2, J <= 5)."""
    _gaps_to_optimum(range(50), max_nodes=2, max_jobs=5)


def test_kernel_data_has_one_numba_type():
    """`kernel_data` gives a `KernelData` whose fields have the same types for every instance
    (C-contiguous int64 / float64 arrays, writable but for the Instance's read-only times,
    floats), so every kernel compiles once."""
    from numba import typeof

    types = set()
    for inst in (generate_instance(3, seed=1), random_instance(2, nodes=1, jobs=1)):
        D = kernel_data(inst)
        assert (
            isinstance(D, K.KernelData) and D.pin_node is D[K.KernelData._fields.index("pin_node")]
        )
        for name, value in D._asdict().items():
            if isinstance(value, np.ndarray):
                assert value.flags.c_contiguous, name
                assert value.flags.writeable == (name != "times"), name
                assert value.dtype in (np.int64, np.float64), name
        types.add(typeof(D))
    assert len(types) == 1


@pytest.mark.slow
def test_kernels_compiled_for_kernel_data_are_reused_by_the_next_process(tmp_path):
    """numba caches the kernels compiled for `KernelData`: the first process compiles (and
    says so), the second loads them all from the cache and compiles nothing."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from gpuaas.cli import COMPILE_NOTICE

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    example = Path(__file__).resolve().parents[1] / "instances" / "example.json"
    runs = []
    for _ in range(2):
        out = [
            subprocess.run(
                [sys.executable, "-m", "gpuaas", "solve", str(example), "-m", m],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            for m in ("path-relinking", "incremental")
        ]
        assert all(o.returncode == 0 for o in out), [o.stderr for o in out]
        runs.append([o.stderr for o in out])
    assert runs[0][0] == COMPILE_NOTICE + "\n" and runs[1] == ["", ""]
