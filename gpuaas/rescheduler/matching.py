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

from gpuaas import quotas
from gpuaas.errors import SolverError
from gpuaas.kernel_args import readonly
from gpuaas.solution import Solution

_NONE = np.zeros(0, dtype=np.int64)


def check_solution(sol: Solution) -> None:
    """Raise SolverError unless `sol` is feasible for its instance (vectorised P1 checks): a
    compiled pass over the jobs and nodes says whether every check but the quotas passes
    (`_passes`), the numpy checks then name the first that fails."""
    inst, cat = sol.instance, sol.instance.catalog
    nv, jn, jc = sol.node_vm, sol.job_node, sol.job_cfg
    passes = _passes(
        *readonly(
            np.ascontiguousarray(nv, dtype=np.int64),
            np.ascontiguousarray(jn, dtype=np.int64),
            np.ascontiguousarray(jc, dtype=np.int64),
            np.ascontiguousarray(cat.cfg_vm, dtype=np.int64),
            np.ascontiguousarray(cat.cfg_gpus, dtype=np.int64),
            np.ascontiguousarray(cat.gpus, dtype=np.int64),
            np.ascontiguousarray(inst.times, dtype=np.float64),
            np.ascontiguousarray(inst.pinned, dtype=np.bool_),
            np.ascontiguousarray(inst.current_node, dtype=np.int64),
            np.ascontiguousarray(inst.current_cfg, dtype=np.int64),
        )
    )
    if not passes:
        _check_arrays(sol)
    excess = quotas.over(cat, nv)
    if excess:
        raise SolverError(f"{sol.method or 'solver'}: {excess[0]}")


@njit(cache=True)
def _passes(
    nv, jn, jc, cfg_vm, cfg_gpus, vm_gpus, times, pinned, cur_node, cur_cfg
):  # pragma: no cover
    """Whether `_check_arrays` raises nothing, in one pass over the jobs and one over the
    nodes (tests/test_scale.py)."""
    N = nv.shape[0]
    V = vm_gpus.shape[0]
    C = cfg_vm.shape[0]
    for n in range(N):
        if nv[n] < -1 or nv[n] >= V:
            return False
    used = np.zeros(N, dtype=np.int64)
    hosted = np.zeros(N, dtype=np.int64)
    for j in range(jn.shape[0]):
        n, c = jn[j], jc[j]
        if (n < 0) != (c < 0) or n >= N or c >= C or n < -1:
            return False
        if pinned[j] and (n != cur_node[j] or c != cur_cfg[j]):
            return False
        if c < 0:
            continue
        if nv[n] != cfg_vm[c] or not np.isfinite(times[j, c]):
            return False
        used[n] += cfg_gpus[c]
        hosted[n] += 1
    for n in range(N):
        if nv[n] >= 0 and (used[n] > vm_gpus[nv[n]] or hosted[n] == 0):
            return False
    return True


def _check_arrays(sol: Solution) -> None:
    """`check_solution`'s checks of the solution's arrays, in numpy (but the quotas)."""
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
    keeps it there; a solver node s whose kept jobs all come from one physical node p, the only
    source of p's kept jobs, goes to p (`forced_pairs`). The assignment is solved among the
    other nodes open before or after only, on the weights of `match_weights`: at the scale of a
    cloud, where an event changes a few nodes, it is small. The nodes `fixed` (their indices;
    those of pinned jobs) stay where they are and take no part in it.
    """
    perm = np.arange(len(old_vm), dtype=np.int64)
    old_vm, new_vm = np.asarray(old_vm), np.asarray(new_vm)
    if fixed is not None and len(fixed):
        old_vm, new_vm = old_vm.copy(), new_vm.copy()
        old_vm[fixed] = new_vm[fixed] = -1  # out of the assignment: kept at s = p
        held = np.isin(job_node, fixed)
        job_node = np.where(held, -1, job_node)
        cur_node = np.where(np.isin(cur_node, fixed), -1, cur_node)
    keep = (job_node >= 0) & (cur_node >= 0) & (job_cfg == cur_cfg)
    src, dst = forced_pairs(len(old_vm), job_node[keep], cur_node[keep])
    perm[src] = dst
    rows, cols, w = match_weights(old_vm, new_vm, cur_node, cur_cfg, job_node, job_cfg, src, dst)
    if len(rows):
        perm[rows] = cols[assign_max(w)]
    return perm


def forced_pairs(n: int, s: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (solver node, physical node) in every optimal assignment, from the kept jobs'
    (solver node `s`, current node `p`): s's kept jobs all come from p and p's kept jobs all
    go to s. Any assignment without such a pair loses at least one kept job's weight, more
    than every lower level together can give back (exchange s and p's partners)."""
    pairs = np.sort(s * n + p)  # their distinct values, ascending (np.unique, without its hash)
    pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))] if len(pairs) else pairs
    ps, pp = pairs // n, pairs % n
    out, into = np.bincount(ps, minlength=n), np.bincount(pp, minlength=n)
    only = (out[ps] == 1) & (into[pp] == 1)
    return ps[only], pp[only]


def match_weights(
    old_vm: np.ndarray,
    new_vm: np.ndarray,
    cur_node: np.ndarray,
    cur_cfg: np.ndarray,
    job_node: np.ndarray,
    job_cfg: np.ndarray,
    src: np.ndarray = _NONE,
    dst: np.ndarray = _NONE,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The solver nodes `rows` and physical nodes `cols` open before or after, but the pairs
    already matched (`src` -> `dst`), and the weight w[a, b] of rows[a] on cols[b].
    Lexicographic, each level weighing more than all lower ones together: jobs kept in place
    (same physical node and configuration), VM type kept, an open node reused, s == p (scaled
    to the number of nodes)."""
    N = len(old_vm)
    act = (old_vm >= 0) | (new_vm >= 0)
    rows, cols = act.copy(), act
    if len(src):
        rows[src] = False
        cols = act.copy()
        cols[dst] = False
    rows, cols = np.flatnonzero(rows), np.flatnonzero(cols)
    n = len(rows)
    row_of = np.full(N, -1, dtype=np.int64)
    col_of = np.full(N, -1, dtype=np.int64)
    row_of[rows], col_of[cols] = np.arange(n), np.arange(n)
    new, old = new_vm[rows], old_vm[cols]
    D = 1.0
    Cw = n + 1.0
    B = (n + 1.0) ** 2
    A = (n + 1.0) ** 3
    w = np.zeros((n, n))
    keep = (job_node >= 0) & (cur_node >= 0) & (job_cfg == cur_cfg)
    a, b = row_of[job_node[keep]], col_of[cur_node[keep]]
    both = (a >= 0) & (b >= 0)
    np.add.at(w, (a[both], b[both]), A)
    s_open = (new >= 0)[:, None]
    w += B * (s_open & (new[:, None] == old[None, :]))
    w += Cw * (s_open & (old >= 0)[None, :])
    w += D * (rows[:, None] == cols[None, :])
    return rows, cols, w


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
