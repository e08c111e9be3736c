"""The Hierarchical method of [11] [§3.1, §4.2.2]: controllers of 5 nodes, each solving P1 by MILP.

The N nodes are split into K = ceil(N / 5) local controllers (nodes 5k .. 5k + 4; the last one
may have fewer). Jobs are dealt to controllers round-robin: a running job stays with the
controller that owns its node (so the split does not move it), and each waiting job, in
submission order, goes to the controller with the fewest jobs per node so far (ties: lowest
index) — plain round-robin when the controllers start empty, and it keeps their loads level
as jobs end. Each controller solves P1 (with P1n, as the paper's MILP) for its jobs and nodes
with the `milp` method at a 5 % relative gap and a time limit, warm-started from Greedy's
solution of the same sub-problem repaired to meet P1n (`p1n_warm_start`). Controllers are
independent, so they run in parallel threads (highspy releases the GIL while HiGHS runs).

If HiGHS stops at the time limit without any incumbent (which the feasible warm start should
prevent), the controller falls back to the Greedy solution and the fallback is counted in
`stats["fallbacks"]`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from gpuaas.baselines.dispatch import submission_order
from gpuaas.errors import InputError, SolverError
from gpuaas.instance import Instance
from gpuaas.milp.method import milp, p1n_warm_start
from gpuaas.solution import Solution

#: The milp options hierarchical does not pass on to its controllers (it sets them itself); its
#: record in `gpuaas.methods` says that it uses all N nodes and forwards milp's other options.
NOT_FORWARDED = ("threads", "warm_start")
#: Nodes per local controller [§4.2.2].
CONTROLLER_NODES = 5
#: Relative MIP gap of every controller [§4.2.2].
GAP = 0.05
#: Default time limit (s) of one controller's MILP (the paper's controllers took 1.5-33 s).
CONTROLLER_TIME_LIMIT = 10.0

_pool_lock = threading.Lock()
_pools: dict[int, ThreadPoolExecutor] = {}


def _pool(workers: int) -> ThreadPoolExecutor:
    """A long-lived pool per size, so HiGHS's per-thread scheduler is set up once per thread."""
    with _pool_lock:
        if workers not in _pools:
            _pools[workers] = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="gpuaas-controller"
            )
        return _pools[workers]


def deal_jobs(instance: Instance, controllers: int, size: int = CONTROLLER_NODES) -> np.ndarray:
    """The controller of every job: running jobs keep their node's, waiting jobs go round-robin.

    A waiting job goes to the controller with the fewest jobs per node (ties: lowest index):
    round-robin among equal controllers, and a smaller last controller (N not a multiple of 5)
    gets a share of jobs in proportion to its nodes.

    Parameters
    ----------
    instance : Instance
        The rescheduling point (`current_node` says where jobs run).
    controllers : int
        K.
    size : int
        Nodes per controller.

    Returns
    -------
    np.ndarray
        (J,) controller index of each job.
    """
    N = instance.nodes
    owner = np.full(instance.n_jobs, -1, dtype=np.int64)
    running = np.flatnonzero(instance.current_node >= 0)
    owner[running] = np.minimum(instance.current_node[running] // size, controllers - 1)
    # an empty controller (ratio 0) always wins, the lowest first: only the controllers of
    # running jobs and the first J + 1 others can receive a job (O(J), whatever N)
    cand = np.union1d(
        owner[running], np.arange(min(controllers, instance.n_jobs + len(running) + 1))
    )
    nodes = np.minimum(size, N - cand * size).astype(np.float64)
    count = np.zeros(len(cand), dtype=np.int64)
    np.add.at(count, np.searchsorted(cand, owner[running]), 1)
    for j in submission_order(instance):
        if owner[j] < 0:
            k = int(np.argmin(count / nodes))
            owner[j] = cand[k]
            count[k] += 1
    return owner


def _controller(
    sub: Instance,
    seed: int,
    time_limit: float,
    gap: float,
    p1n: bool,
    objective: str,
    milp_options: dict[str, Any],
) -> tuple[Solution, str]:
    """Solve one controller's P1: MILP warm-started from Greedy, Greedy if HiGHS finds nothing."""
    from gpuaas.heuristics.greedy import greedy

    warm = greedy(sub, seed=seed)
    if p1n:
        warm = p1n_warm_start(warm)
    try:
        sol = milp(
            sub,
            seed=seed,
            time_limit=time_limit,
            gap=gap,
            objective=objective,
            p1n=p1n,
            warm_start=warm,
            **milp_options,
        )
    except SolverError:
        return warm, "fallback"
    return sol, str(sol.stats.get("status", ""))


def hierarchical(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    controller_nodes: int = CONTROLLER_NODES,
    gap: float = GAP,
    controller_time_limit: float = CONTROLLER_TIME_LIMIT,
    p1n: bool = True,
    objective: str = "p1a",
    workers: int | None = None,
    **milp_options: Any,
) -> Solution:
    """Solve P1 by K = ceil(N / 5) independent MILPs of 5 nodes each (module docstring).

    Parameters
    ----------
    instance : Instance
        The rescheduling point.
    seed : int
        Seed of every controller's solver.
    time_limit : float, optional
        Overall limit (s); each controller gets min(this, `controller_time_limit`), since the
        controllers run in parallel.
    controller_nodes : int
        Nodes per controller (5 in the paper).
    gap : float
        Relative MIP gap of every controller (5 % in the paper).
    controller_time_limit : float
        Time limit (s) of one controller's MILP.
    p1n : bool
        Each controller's MILP requires exactly min(nodes, jobs) open nodes (P1n).
    objective : {"p1a", "dollars"}
        The controllers' problem: P1 as the paper writes it (the method of [11], the default)
        or P1$ (`gpuaas.milp.milp`).
    workers : int, optional
        Controllers solved at once (threads); default min(K, CPU count).
    **milp_options
        Passed to `gpuaas.milp.milp` (e.g. ``symmetry``).

    Returns
    -------
    Solution
        The controllers' solutions side by side; `stats` has controllers, statuses (count per
        MILP status), fallbacks, max_gap, max_controller_seconds, seconds, seed.
    """
    if isinstance(controller_nodes, bool) or int(controller_nodes) < 1:
        raise InputError(
            None, "controller_nodes", f"must be a positive integer, got {controller_nodes!r}"
        )
    if not controller_time_limit > 0:
        raise InputError(
            None, "controller_time_limit", f"must be > 0, got {controller_time_limit!r}"
        )
    for bad in NOT_FORWARDED:
        if bad in milp_options:
            raise InputError(None, bad, "is set by the hierarchical method itself")
    t0 = time.perf_counter()
    N, size = instance.nodes, int(controller_nodes)
    K = math.ceil(N / size)
    limit = controller_time_limit if time_limit is None else min(controller_time_limit, time_limit)
    owner = deal_jobs(instance, K, size)
    tasks = []
    for k in np.unique(owner).tolist():  # the controllers that have jobs
        idx = np.flatnonzero(owner == k)
        lo, n_k = k * size, min(size, N - k * size)
        sub = instance.subset(idx)
        local = np.where(
            (sub.current_node >= lo) & (sub.current_node < lo + n_k), sub.current_node - lo, -1
        )
        sub = dataclasses.replace(
            sub,
            nodes=n_k,
            current_node=local,
            current_cfg=np.where(local >= 0, sub.current_cfg, -1),
        )
        tasks.append((k, idx, lo, sub))
    n_workers = max(1, min(len(tasks), workers or os.cpu_count() or 1))

    def run(task: tuple[int, np.ndarray, int, Instance]) -> tuple[Solution, str]:
        return _controller(task[3], seed, limit, gap, p1n, objective, milp_options)

    if n_workers == 1:
        results = [run(t) for t in tasks]
    else:
        results = list(_pool(n_workers).map(run, tasks))
    node_vm = np.full(N, -1, dtype=np.int64)
    job_node = np.full(instance.n_jobs, -1, dtype=np.int64)
    job_cfg = np.full(instance.n_jobs, -1, dtype=np.int64)
    statuses: dict[str, int] = {}
    gaps, secs = [], []
    for (_, idx, lo, sub), (sol, status) in zip(tasks, results):
        opened = sol.node_vm >= 0
        node_vm[lo : lo + sub.nodes][opened] = sol.node_vm[opened]
        on = sol.job_node >= 0
        job_node[idx[on]] = sol.job_node[on] + lo
        job_cfg[idx[on]] = sol.job_cfg[on]
        statuses[status] = statuses.get(status, 0) + 1
        if sol.stats.get("gap") is not None:
            gaps.append(float(sol.stats["gap"]))
        secs.append(float(sol.stats.get("seconds", 0.0)))
    stats = {
        "seconds": time.perf_counter() - t0,
        "seed": seed,
        "controllers": K,
        "solved": len(tasks),
        "statuses": statuses,
        "fallbacks": statuses.get("fallback", 0),
        "max_gap": max(gaps) if gaps else None,
        "max_controller_seconds": max(secs) if secs else 0.0,
        "controller_time_limit": limit,
        "workers": n_workers,
    }
    return Solution(instance, node_vm, job_node, job_cfg, "hierarchical", stats)
