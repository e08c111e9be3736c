"""The bound's tail rows and its windowed LP (issue 43, item 2; formulations/BOUND.md §2 "The
tail rows" and §3 step 5): the rows against an independent dense build and a case worked by
hand, the LP with them below brute-force optima and simulated schedules (moves free and the
default costs), the windowed parts exact where they do not overlap, and `gpuaas.bound` with the
windowed LP below schedules."""

from __future__ import annotations

import math

import highspy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedule_bruteforce import cheapest_one_node_schedule
from test_adaptive_grid import dense_columns, random_grid
from test_bound import MIXED, SINGLE_GPU, SMALL, below, random_instance, traces

import gpuaas.bounds as bounds_mod
from gpuaas.bounds import _windowed, bound, window_parts
from gpuaas.capacity_lp import (
    TAIL_RHOS,
    capacity_lp,
    solve_capacity,
)
from gpuaas.instance import Instance, load_instance
from gpuaas.per_job import effective_release, per_job_plan
from gpuaas.simulator import simulate


def dense_tail_lp(inst: Instance, nodes: int, edges: np.ndarray, until: np.ndarray) -> float:
    """BOUND.md §2's LP on the slots between `edges` with windows `until` and the tail rows,
    row by row with every runnable configuration (the formulas of BOUND.md, not the code's)."""
    J, K = inst.n_jobs, len(edges) - 1
    r = effective_release(inst)
    cols, share, price, first, u = dense_columns(inst, edges, until)
    nx, n = len(cols), len(cols) + J
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    cost = [inst.times[j, c] * price[c] for j, c, _ in cols] + [1.0] * J
    h.addVars(n, np.zeros(n), np.full(n, np.inf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(cost))

    def add(coef: dict[int, float], lo: float, hi: float) -> None:
        idx = np.array(sorted(coef), dtype=np.int32)
        h.addRow(lo, hi, len(idx), idx, np.array([coef[i] for i in idx]))

    for j in range(J):
        mine = [i for i, col in enumerate(cols) if col[0] == j]
        w, d = inst.weight[j], inst.due[j]
        tmin = min(t for t in inst.times[j] if math.isfinite(t))
        at = {i: max(edges[cols[i][2]], r[j]) for i in mine}
        add({i: 1.0 for i in mine}, 1.0, 1.0)
        # T >= ω (Σ x t + r − d), T >= ω Σ x max(0, at − d)
        add(
            {nx + j: 1.0, **{i: -w * inst.times[j, cols[i][1]] for i in mine}},
            w * (r[j] - d),
            math.inf,
        )
        add({nx + j: 1.0, **{i: -w * max(0.0, at[i] - d) for i in mine}}, 0.0, math.inf)
        # mean busy time: T >= ω (Σ x at + tmin / 2 − d)
        add({nx + j: 1.0, **{i: -w * at[i] for i in mine}}, w * (tmin / 2 - d), math.inf)
        for rho in TAIL_RHOS:  # T >= ω (Σ x max(0, at − d) + tmin (ρ R − ρ² / 2))
            row = {nx + j: 1.0}
            for i in mine:
                row[i] = -w * (max(0.0, at[i] - d) + (rho * tmin if at[i] >= d else 0.0))
            add(row, -w * tmin * rho * rho / 2, math.inf)
        for k in range(first[j], u[j]):
            add(
                {i: inst.times[j, cols[i][1]] for i in mine if cols[i][2] == k} or {nx + j: 0.0},
                -math.inf,
                edges[k + 1] - max(edges[k], r[j]),
            )
    for k in range(K):
        row = {
            i: inst.times[j, c] * share[c] for i, (j, c, kk) in enumerate(cols) if kk == k < u[j]
        }
        if row:
            add(row, -math.inf, nodes * (edges[k + 1] - edges[k]))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(h.getInfo().objective_function_value)


@pytest.mark.parametrize("seed", range(6))
def test_tail_rows_equal_an_independent_dense_build(seed):
    rng = np.random.default_rng(300 + seed)
    catalog = ["azure-2021", SINGLE_GPU, MIXED][seed % 3]
    inst = random_instance(rng, catalog, int(rng.integers(1, 5)), nodes=1)
    edges = random_grid(rng, inst, int(rng.integers(1, 8)))
    until = rng.integers(0, len(edges), size=inst.n_jobs)
    lp = capacity_lp(inst, 1, edges=edges, until=until, tail=True)
    value, status = solve_capacity(lp, 60.0)
    assert status == "optimal"
    assert value == pytest.approx(dense_tail_lp(inst, 1, edges, lp.until), rel=1e-7, abs=1e-7)
    plain, _ = solve_capacity(capacity_lp(inst, 1, edges=edges, until=until), 60.0)
    assert below(plain, value) and below(per_job_plan(inst).total, value)


def two_jobs_one_node() -> Instance:
    """Two 2-hour jobs on one 1-GPU node, both released and due at 0, 1 $/h of tardiness."""
    return Instance.from_dict(
        {
            "catalog": SINGLE_GPU,
            "nodes": 1,
            "jobs": [
                {"id": i, "release": 0, "due": 0, "weight": 1 / 3600, "times": {"A": [7200]}}
                for i in "ab"
            ],
        }
    )


def test_tail_rows_charge_the_queue_a_slot_start_does_not():
    """By hand, hour slots: one job runs 0-2 h, the other 2-4 h, so any schedule pays 6 $ of
    tardiness (brute force agrees). Without the tail rows the LP spreads both jobs over the
    four slots and charges each its running time, 2 $ (the slot rows charge work from its
    slot's start: 1.5 $ each), 4 $ in all; with them each job's mean busy time is at least
    1.5 h and it needs 1 h more after it (half its 2 h): 2.5 $ each, 5 $ in all."""
    trace = two_jobs_one_node()
    vm = 2 * 2 * 0.9  # 4 h of the 0.9 $/h VM
    edges = np.arange(0.0, 5 * 3600.0, 3600.0)
    plain, _ = solve_capacity(capacity_lp(trace, 1, edges=edges), 60.0)
    tail, _ = solve_capacity(capacity_lp(trace, 1, edges=edges, tail=True), 60.0)
    assert plain == pytest.approx(vm + 4.0, rel=1e-9)
    assert tail == pytest.approx(vm + 5.0, rel=1e-9)
    assert cheapest_one_node_schedule(trace) == pytest.approx(vm + 6.0, rel=1e-9)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(max_jobs=3, max_nodes=1), st.sampled_from([600.0, 3600.0]))
def test_tail_rows_never_exceed_brute_force_on_one_node(trace, slot):
    value, status = solve_capacity(capacity_lp(trace, 1, slot, tail=True), 60.0)
    assert status == "optimal" and below(value, cheapest_one_node_schedule(trace))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(max_jobs=5, max_nodes=2), st.integers(0, 2**32 - 1))
def test_tail_rows_stay_below_real_schedules(trace, seed):
    """Random grids and windows with the tail rows: per-job <= the LP <= a simulated schedule
    (greedy and EDF with moves free, greedy at 600 s, the default at its default costs)."""
    rng = np.random.default_rng(seed)
    edges = random_grid(rng, trace, int(rng.integers(1, 10)))
    until = rng.integers(0, len(edges), size=trace.n_jobs)
    lp = capacity_lp(trace, trace.nodes, edges=edges, until=until, tail=True)
    value, status = solve_capacity(lp, 60)
    assert status == "optimal" and below(per_job_plan(trace).total, value)
    runs = (("greedy", 0.0, 0.0), ("greedy", 600.0, 0.0), ("edf", 0.0, 0.0))
    if (trace.weight > 0).all():  # the default may leave a job of weight 0 waiting forever
        runs += (("incremental", 600.0, 120.0),)
    for method, overhead, startup in runs:
        sim = simulate(trace, method, seed=1, overhead=overhead, startup=startup, bound=False)
        assert below(value, sim.total_cost), (method, overhead, value, sim.total_cost)


# -- the windowed LP -----------------------------------------------------------------------------


def test_window_parts_partition_the_jobs_and_cut_only_over_the_budget():
    rng = np.random.default_rng(7)
    J = 200
    first = np.sort(rng.integers(0, 300, J))
    until = first + rng.integers(1, 30, J)
    release = first * 3600.0 + rng.uniform(0, 3600, J)
    columns = rng.integers(5, 50, J)
    whole = window_parts(first, until, columns, release, 10**9)
    assert sorted(np.concatenate(whole).tolist()) == list(range(J))
    for a in whole:  # exact parts: no two overlap in their regular slots
        for b in whole:
            if a is not b:
                assert until[a].max() <= first[b].min() or until[b].max() <= first[a].min()
    cut = window_parts(first, until, columns, release, 300)
    assert sorted(np.concatenate(cut).tolist()) == list(range(J))
    assert len(cut) > len(whole)
    assert all(columns[p].sum() <= 300 or len(p) == 1 for p in cut)
    # every cut part lies inside one exact part, as a run of it
    owner = {int(j): i for i, p in enumerate(whole) for j in p}
    assert all(len({owner[int(j)] for j in p}) == 1 for p in cut)


def windowed(trace: Instance, nodes: int, **patch) -> bounds_mod._Relaxation:
    with pytest.MonkeyPatch.context() as mp:
        for name, value in patch.items():
            mp.setattr(bounds_mod, name, value)
        return _windowed(trace, nodes, per_job_plan(trace), math.inf, lambda s: None)


@pytest.mark.parametrize("nodes", [1, 2])
def test_windowed_parts_sum_to_the_whole_windowed_lp(nodes):
    """Where no part is cut, the parts' LPs are the whole windowed LP split along windows
    that do not overlap: the same optimum; cut by a small budget, at most it."""
    trace = load_instance(SMALL)
    exact = windowed(trace, nodes, WINDOW=4 * 3600.0, WINDOW_ROUNDS=1)
    cut = windowed(trace, nodes, WINDOW=4 * 3600.0, WINDOW_ROUNDS=1, MAX_COLUMNS_WINDOW=3_000)
    r = effective_release(trace)
    L = exact.slot
    K = int(np.ceil((bounds_mod._lp._grid(trace, nodes)[5] - r.min()) / L - 1e-9))
    edges = r.min() + np.arange(K + 1) * L
    first = np.searchsorted(edges, r, side="right") - 1
    until = np.searchsorted(edges, np.maximum(trace.due, r + 4 * 3600.0), side="left")
    until = np.clip(until, np.minimum(first + 1, K), K)
    whole, status = solve_capacity(
        capacity_lp(trace, nodes, edges=edges, until=until, tail=True), 60.0
    )
    assert status == "optimal" and exact.groups > 1 and cut.groups > exact.groups
    assert exact.value == pytest.approx(max(whole, per_job_plan(trace).total), rel=1e-7)
    assert below(cut.value, exact.value)


def test_longer_windows_after_spilt_work_only_raise_the_bound():
    """Short windows push work into the open-ended columns; the rounds that lengthen them
    never lower the value, which stays below a schedule."""
    trace = load_instance(SMALL)
    one = windowed(trace, 1, WINDOW=600.0, WINDOW_ROUNDS=1)
    more = windowed(trace, 1, WINDOW=600.0, WINDOW_ROUNDS=3)
    assert more.rounds > 1 and below(one.value, more.value)
    sim = simulate(trace, "greedy", seed=1, nodes=1, bound=False)
    assert below(more.value, sim.total_cost)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(max_jobs=6, max_nodes=2), st.sampled_from([40, 150]))
def test_bound_with_the_windowed_lp_stays_below_schedules(trace, budget):
    """A column budget small enough to cut the trace into groups brings in the windowed LP;
    the bound is at least the groups' and below simulated schedules with moves free and at
    the default costs, and at most the brute force's optimum on one node."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("gpuaas.capacity_lp.MAX_COLUMNS", budget)
        result = bound(trace, windowed=True)
    runs = (("greedy", 0.0, 0.0), ("greedy", 600.0, 120.0))
    if (trace.weight > 0).all():  # the default may leave a job of weight 0 waiting forever
        runs += (("incremental", 600.0, 120.0),)
    for method, overhead, startup in runs:
        sim = simulate(trace, method, seed=1, overhead=overhead, startup=startup, bound=False)
        assert below(result.bound, sim.total_cost), (method, result.bound, sim.total_cost)
    if trace.nodes == 1 and trace.n_jobs <= 3:
        assert below(result.bound, cheapest_one_node_schedule(trace))


def test_bound_reports_the_windowed_lp_where_it_is_higher(monkeypatch):
    """The bundled trace on one node, cut into groups: the windowed LP (hour slots, tail rows)
    is above the groups' and the whole coarse LP's bound and is the one reported; by default
    it is not solved there (the jobs' median slack is over WINDOW)."""
    monkeypatch.setattr("gpuaas.capacity_lp.MAX_COLUMNS", 5_000)
    trace = load_instance(SMALL)
    steps: list[str] = []
    result = bound(trace, nodes=1, progress=steps.append, windowed=True)
    assert bound(trace, nodes=1).bound == bound(trace, nodes=1, windowed=False).bound
    monkeypatch.setattr(bounds_mod, "_windowed", lambda *a, **k: None)
    before = bound(trace, nodes=1, windowed=True)
    assert result.bound > before.bound and result.slot == 3600.0 and result.windowed
    assert any("windowed" in s for s in steps)
    sim = simulate(trace, "greedy", seed=1, nodes=1, bound=False)
    assert below(result.bound, sim.total_cost)
