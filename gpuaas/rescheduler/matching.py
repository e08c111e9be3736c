"""The matching step: from a method's Solution (abstract nodes) to physical nodes.

A solver numbers its nodes freely, but a physical node keeps its identity while open. Solver
node s is assigned to physical node p by a maximum-weight assignment (Hungarian algorithm)
whose weights rank, lexicographically: (1) jobs that stay where they are (same physical node
and configuration: no migration), (2) nodes that keep their VM type (no resize), (3) open nodes
reused rather than one closed and another opened, (4) s = p. So a node whose VM type is
unchanged keeps its jobs without a spurious migration. A node hosting a pinned job (a
disruption limit) stays where it is (s = p), so the job does. `check_solution` first makes
sure the Solution is feasible and leaves pinned jobs in place (a method's bug is reported, not
applied).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gpuaas.errors import SolverError
from gpuaas.solution import Solution


def check_solution(sol: Solution) -> None:
    """Raise SolverError unless `sol` is feasible for its instance (vectorised P1 checks)."""
    inst, cat = sol.instance, sol.instance.catalog
    N, V, C = inst.nodes, cat.n_vms, cat.n_configs
    nv, jn, jc = sol.node_vm, sol.job_node, sol.job_cfg
    name = sol.method or "solver"
    if ((nv < -1) | (nv >= V)).any():
        raise SolverError(f"{name}: node VM type out of range")
    if ((jn < 0) != (jc < 0)).any() or (jn >= N).any() or (jc >= C).any() or (jn < -1).any():
        raise SolverError(f"{name}: job node/configuration out of range or set inconsistently")
    run = np.flatnonzero(jc >= 0)
    if (nv[jn[run]] != cat.cfg_vm[jc[run]]).any():
        j = run[np.flatnonzero(nv[jn[run]] != cat.cfg_vm[jc[run]])[0]]
        raise SolverError(
            f"{name}: job {inst.job_ids[j]} has a configuration of another VM type than its node"
        )
    if not np.isfinite(inst.times[run, jc[run]]).all():
        raise SolverError(f"{name}: a job was given a configuration it cannot run on")
    moved = inst.pinned & ((jn != inst.current_node) | (jc != inst.current_cfg))
    if moved.any():
        j = int(np.flatnonzero(moved)[0])
        raise SolverError(
            f"{name}: job {inst.job_ids[j]} is pinned (a disruption limit) but the solution moves it"
        )
    used = np.bincount(jn[run], weights=cat.cfg_gpus[jc[run]], minlength=N)
    hosted = np.bincount(jn[run], minlength=N)
    is_open = nv >= 0
    if (used[is_open] > cat.gpus[nv[is_open]]).any():
        raise SolverError(f"{name}: a node holds more GPUs than its VM type has")
    if (is_open & (hosted == 0)).any():
        raise SolverError(f"{name}: an open node hosts no job")


def match_nodes(
    old_vm: np.ndarray,
    new_vm: np.ndarray,
    cur_node: np.ndarray,
    cur_cfg: np.ndarray,
    job_node: np.ndarray,
    job_cfg: np.ndarray,
    fixed: np.ndarray | None = None,
) -> np.ndarray:
    """The physical node `perm[s]` of each solver node s (module docstring).

    A node closed both before and after has weight only on s == p, so every optimal assignment
    keeps it there: the assignment is solved among the nodes open before or after only (at most
    2 min(N, J)), on the weights of `match_weights`. The nodes `fixed` (their indices; those of
    pinned jobs) stay where they are and take no part in it.
    """
    perm = np.arange(len(old_vm), dtype=np.int64)
    old_vm, new_vm = np.asarray(old_vm), np.asarray(new_vm)
    if fixed is not None and len(fixed):
        old_vm, new_vm = old_vm.copy(), new_vm.copy()
        old_vm[fixed] = new_vm[fixed] = -1  # out of the assignment: kept at s = p
        held = np.isin(job_node, fixed)
        job_node = np.where(held, -1, job_node)
        cur_node = np.where(np.isin(cur_node, fixed), -1, cur_node)
    act, w = match_weights(old_vm, new_vm, cur_node, cur_cfg, job_node, job_cfg)
    if len(act):
        perm[act] = act[assign_max(w)]
    return perm


def match_weights(
    old_vm: np.ndarray,
    new_vm: np.ndarray,
    cur_node: np.ndarray,
    cur_cfg: np.ndarray,
    job_node: np.ndarray,
    job_cfg: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The nodes `act` open before or after, and the weight w[s, p] of solver node act[s] on
    physical node act[p]. Lexicographic, each level weighing more than all lower ones together:
    jobs kept in place (same physical node and configuration), VM type kept, an open node
    reused, s == p (scaled to the number of nodes)."""
    N = len(old_vm)
    act = np.flatnonzero((old_vm >= 0) | (new_vm >= 0))
    n = len(act)
    local = np.full(N, -1, dtype=np.int64)
    local[act] = np.arange(n)
    old, new = old_vm[act], new_vm[act]
    D = 1.0
    Cw = n + 1.0
    B = (n + 1.0) ** 2
    A = (n + 1.0) ** 3
    w = np.zeros((n, n))
    keep = (job_node >= 0) & (cur_node >= 0) & (job_cfg == cur_cfg)
    np.add.at(w, (local[job_node[keep]], local[cur_node[keep]]), A)
    s_open = (new >= 0)[:, None]
    w += B * (s_open & (new[:, None] == old[None, :]))
    w += Cw * (s_open & (old >= 0)[None, :])
    w += D * np.eye(n)
    return act, w


def assign_max(weight: np.ndarray) -> np.ndarray:
    """Maximum-weight perfect assignment of a square matrix: `perm[row] = column`.

    Hand-written rather than scipy's `linear_sum_assignment` (same assignments on the matching
    step's matrices): it is faster on them from 100 nodes up and spares every process importing
    scipy.optimize (`scripts/bench_assignment.py` measures both; docs/design.md §6).
    """
    w = np.ascontiguousarray(weight, dtype=np.float64)
    return _hungarian(w.max() - w if w.size else w)


@njit(cache=True)
def _hungarian(cost):  # pragma: no cover - compiled
    """Minimum-cost assignment (Hungarian algorithm with potentials, O(n^3)); returns row -> col."""
    n = cost.shape[0]
    INF = np.inf
    u = np.zeros(n + 1)
    v = np.zeros(n + 1)
    p = np.zeros(n + 1, dtype=np.int64)  # p[col] = row matched to col (1-based, 0 = none)
    way = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = np.full(n + 1, INF)
        used = np.zeros(n + 1, dtype=np.bool_)
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = INF
            j1 = 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1, j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    perm = np.zeros(n, dtype=np.int64)
    for j in range(1, n + 1):
        perm[p[j] - 1] = j - 1
    return perm
