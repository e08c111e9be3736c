"""The capacity LP on an adaptive time grid (issue 43, item 2; formulations/BOUND.md §2, "Any
grid"): slots between any increasing edges and per-job windows against an independent dense
build, below real schedules for random grids, and the rounds of `gpuaas.bounds._adaptive`."""

from __future__ import annotations

import math

import highspy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bound import MIXED, SINGLE_GPU, SMALL, below, random_instance, traces

from gpuaas.bounds import bound
from gpuaas.capacity_lp import capacity_lp, refine_grid, solve_capacity, solve_point
from gpuaas.instance import Instance, load_instance
from gpuaas.per_job import effective_release, per_job_plan
from gpuaas.simulator import simulate


def dense_columns(inst: Instance, edges: np.ndarray, until: np.ndarray):
    """The columns (j, c, k) of a dense build of BOUND.md's LP on the slots between `edges`:
    job j's slots from the one holding its release to min(until_j, K) (the last open-ended),
    every runnable configuration; with each configuration's node share and price."""
    cat = inst.catalog
    J, C, K = inst.n_jobs, cat.n_configs, len(edges) - 1
    r = effective_release(inst)
    share = cat.cfg_gpus / cat.gpus[cat.cfg_vm]
    price = cat.cost[cat.cfg_vm] * share
    first = [min(int(np.searchsorted(edges, r[j], side="right")) - 1, K) for j in range(J)]
    u = [max(first[j], min(int(until[j]), K)) for j in range(J)]
    cols = [
        (j, c, k)
        for j in range(J)
        for c in range(C)
        for k in range(first[j], u[j] + 1)
        if math.isfinite(inst.times[j, c])
    ]
    return cols, share, price, first, u


def dense_grid_lp(inst: Instance, nodes: int, edges: np.ndarray, until: np.ndarray) -> float:
    """BOUND.md's LP on the slots between `edges`, job j's regular slots first_j .. until_j - 1
    and its open-ended column at until_j, written out row by row with every runnable
    configuration and every per-slot time row."""
    J, K = inst.n_jobs, len(edges) - 1
    r = effective_release(inst)
    cols, share, price, first, u = dense_columns(inst, edges, until)
    nx, n = len(cols), len(cols) + J
    cost = np.zeros(n)
    for i, (j, c, _k) in enumerate(cols):
        cost[i] = inst.times[j, c] * price[c]
    cost[nx:] = 1.0
    rows: list[tuple[np.ndarray, float, float]] = []
    for j in range(J):
        mine = [i for i, col in enumerate(cols) if col[0] == j]
        row = np.zeros(n)
        row[mine] = 1.0
        rows.append((row, 1.0, 1.0))
        row = np.zeros(n)  # ω Σ x t − T <= ω D
        for i in mine:
            row[i] = inst.weight[j] * inst.times[j, cols[i][1]]
        row[nx + j] = -1.0
        rows.append((row, -np.inf, inst.weight[j] * (inst.due[j] - r[j])))
        row = np.zeros(n)  # ω Σ x max(0, max(s_k, r_j) − due_j) − T <= 0
        for i in mine:
            row[i] = inst.weight[j] * max(0.0, max(edges[cols[i][2]], r[j]) - inst.due[j])
        row[nx + j] = -1.0
        rows.append((row, -np.inf, 0.0))
        for k in range(first[j], u[j]):  # time in a regular slot, after the release
            row = np.zeros(n)
            for i in mine:
                if cols[i][2] == k:
                    row[i] = inst.times[j, cols[i][1]]
            rows.append((row, -np.inf, edges[k + 1] - max(edges[k], r[j])))
    for k in range(K):  # node-seconds of the jobs whose regular slots hold k
        row = np.zeros(n)
        for i, (j, c, kk) in enumerate(cols):
            if kk == k and k < u[j]:
                row[i] = inst.times[j, c] * share[c]
        rows.append((row, -np.inf, nodes * (edges[k + 1] - edges[k])))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(n, np.zeros(n), np.full(n, np.inf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
    for row, lo, hi in rows:
        nz = np.flatnonzero(row).astype(np.int32)
        h.addRow(lo, hi, len(nz), nz, row[nz])
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(h.getInfo().objective_function_value)


def random_grid(rng: np.random.Generator, inst: Instance, n_edges: int) -> np.ndarray:
    """Increasing edges from the earliest release over the releases and a day beyond."""
    r = effective_release(inst)
    inner = rng.uniform(r.min(), r.max() + 86_400.0, size=n_edges)
    return np.unique(np.concatenate(([r.min()], inner)))


@pytest.mark.parametrize("seed", range(6))
def test_any_grid_and_windows_equal_an_independent_dense_build(seed):
    """Slots of any lengths and per-job open-ended columns (`until`): the same optimum as the
    rows written out densely, and never below the per-job bound."""
    rng = np.random.default_rng(100 + seed)
    catalog = ["azure-2021", SINGLE_GPU, MIXED][seed % 3]
    inst = random_instance(rng, catalog, int(rng.integers(1, 5)), nodes=1)
    edges = random_grid(rng, inst, int(rng.integers(1, 8)))
    until = rng.integers(0, len(edges), size=inst.n_jobs) if seed % 2 else None
    lp = capacity_lp(inst, 1, edges=edges, until=until)
    value, status = solve_capacity(lp, 60.0)
    assert status == "optimal"
    dense = dense_grid_lp(inst, 1, edges, lp.until)
    assert value == pytest.approx(dense, rel=1e-7, abs=1e-7)
    assert below(per_job_plan(inst).total, value)


def test_uniform_edges_give_the_uniform_lp_bit_for_bit():
    """The edges of a uniform grid build the very arrays of that grid (so no result moves)."""
    trace = load_instance(SMALL)
    lp = capacity_lp(trace, 2, 7200.0)
    again = capacity_lp(trace, 2, edges=lp.edges)
    for name in ("col_cost", "row_lower", "row_upper", "indptr", "indices", "data"):
        assert np.array_equal(getattr(lp, name), getattr(again, name)), name


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(max_jobs=5, max_nodes=2), st.integers(0, 2**32 - 1))
def test_any_grid_stays_below_real_schedules(trace, seed):
    """Random slot boundaries and windows: per-job <= the LP <= a simulated schedule (greedy
    and EDF, no restart cost and 600 s) — every grid is a relaxation."""
    rng = np.random.default_rng(seed)
    edges = random_grid(rng, trace, int(rng.integers(1, 10)))
    until = rng.integers(0, len(edges), size=trace.n_jobs)
    value, status = solve_capacity(capacity_lp(trace, trace.nodes, edges=edges, until=until), 60)
    assert status == "optimal" and below(per_job_plan(trace).total, value)
    for method, overhead in (("greedy", 0.0), ("greedy", 600.0), ("edf", 0.0)):
        sim = simulate(trace, method, seed=1, overhead=overhead, bound=False)
        assert below(value, sim.total_cost), (method, overhead, value, sim.total_cost)


def test_refine_grid_cuts_only_where_the_grid_constrains_within_the_budget():
    """Cuts fall inside slots of the last grid, at whole units from their starts; no slot of one
    unit is cut; the next LP keeps within the column budget; None when nothing is left."""
    trace = load_instance(SMALL)
    lp = capacity_lp(trace, 1, 8 * 3600.0)
    value, status, x, y = solve_point(lp, 60.0)
    assert status == "optimal"
    edges, until = refine_grid(trace, lp, x, y, 3600.0, 30_000, shrink=True)
    assert set(lp.edges.tolist()) <= set(edges.tolist()) and len(edges) > len(lp.edges)
    k = np.searchsorted(lp.edges, edges, side="right") - 1
    assert np.allclose((edges - lp.edges[k]) % 3600.0, 0.0)
    nxt = capacity_lp(trace, 1, edges=edges, until=until)
    assert nxt.n_x <= 30_000
    assert refine_grid(trace, lp, x, y, 8 * 3600.0, 10**9) is None  # one unit: nothing to cut


@pytest.mark.parametrize("nodes", [1, 2])
def test_adaptive_grid_at_least_the_uniform_lp_and_below_schedules(monkeypatch, nodes):
    """`adaptive` refines the first (uniform) LP: never below it, finer where the load is, and
    still below a simulated schedule; without it the uniform LP alone is the bound."""
    monkeypatch.setattr("gpuaas.capacity_lp.MAX_COLUMNS", 10_000)
    trace = load_instance(SMALL)
    result = bound(trace, nodes=nodes, adaptive=True)
    plain = bound(trace, nodes=nodes)
    first, _ = solve_capacity(capacity_lp(trace, nodes), 60.0)
    assert result.rounds > 1 and result.slots > 0 and result.status == "optimal"
    assert below(first, result.bound) and result.bound > first * (1 + 1e-6)
    assert plain.rounds == 1 and plain.bound == pytest.approx(max(first, plain.per_job), rel=1e-9)
    assert result.columns <= 10_000 + trace.n_jobs and result.slot % 3600.0 == 0  # x and T_j
    assert "adaptive grid" in result.summary() and result.to_dict()["rounds"] == result.rounds
    sim = simulate(trace, "greedy", seed=1, nodes=nodes, bound=False)
    assert below(result.bound, sim.total_cost)


def test_explicit_slot_never_an_empty_lp_and_not_looser_than_the_automatic_one(monkeypatch):
    """Issue 43: `--slot 3600` on a trace cut into groups solves the whole trace's LP refined
    down to that slot where the load is (rows > 0), at least as tight as the automatic bound
    when both refine to one hour."""
    monkeypatch.setattr("gpuaas.capacity_lp.MAX_COLUMNS", 8_000)
    trace = load_instance(SMALL)
    explicit = bound(trace, nodes=2, slot=3600.0)
    assert explicit.rows > 0 and explicit.columns > 0 and explicit.solved >= 1
    assert explicit.rounds > 1 and explicit.slot == 3600.0
    assert below(bound(trace, nodes=2).bound, explicit.bound * (1 + 1e-9))
    sim = simulate(trace, "greedy", seed=1, nodes=2, bound=False)
    assert below(explicit.bound, sim.total_cost)


def test_edges_must_increase_from_the_earliest_release():
    trace = load_instance(SMALL)
    start = float(effective_release(trace).min())
    for bad in ([start], [start, start], [start + 1.0, start + 3600.0]):
        with pytest.raises(ValueError, match="edges"):
            capacity_lp(trace, 1, edges=np.array(bad))
