"""The dynamic-programming baselines adapted from [9] [§4.2.1]: DP(WCT), DP(FastWCT), DP(FastB), DP(AdjWCT).

Each job gets one configuration by a proxy F1 and, with it, an execution cost and a
postponement cost by a proxy F2; a DP over (jobs in FIFO order) x (nodes used) then decides
which jobs run, one job per node, at most N nodes. The methods are invoked every Δt = 15 min as
well as at events (their records' `tick` in `gpuaas.methods`, `DP_TICK`), and re-decide
every job each time (running jobs may be migrated or preempted, as in [9]), but a pinned one
(a disruption limit) runs on, where it is.
`formulations/DP.md` writes the proxies and the recurrence out and states the choices the
paper leaves open (the horizon of τ_j, the weighting of τ̂_j, the constant B).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpuaas.baselines.dispatch import reject_options, submission_order
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.methods import DP_TICK
from gpuaas.reconfiguration import reconfiguration_terms
from gpuaas.solution import Solution

#: Default B ($), the cost of postponing a job in F_B (DP(FastB)); see formulations/DP.md.
DEFAULT_B = 1.0e6


def step_tardiness(instance: Instance, dt: float) -> np.ndarray:
    """τ_jc of eq. (4): tardiness (s) accrued by the end of the step, max(0, min(t_jc, Δt) − d_j)."""
    return np.maximum(0.0, np.minimum(instance.times, dt) - instance.rel_due[:, None])


def choose_configs(
    instance: Instance, rule: str, dt: float, move: np.ndarray | None = None
) -> np.ndarray:
    """Each job's configuration by F1: "wct" (eq. 4), "fast" (least t_jc) or "adj" (eq. 5).

    `move` (J,) adds each running job's reconfiguration cost kappa_j to every configuration but
    its current one (the cost-based rules only: "fast" ignores cost). Ties go to the faster
    configuration, then the VM type with fewer GPUs, then the cheaper one.
    """
    cat = instance.catalog
    t = instance.times
    price = cat.cost[cat.cfg_vm]
    vm_gpus = cat.gpus[cat.cfg_vm].astype(np.float64)
    w = instance.weight[:, None]
    if rule == "wct":
        score = w * step_tardiness(instance, dt) + price * dt
    elif rule == "adj":
        score = w * np.maximum(0.0, t - instance.rel_due[:, None]) + price * dt
    elif rule == "fast":
        score = t
    else:
        raise ValueError(f"unknown F1 rule {rule!r}")
    if move is not None and rule != "fast":
        other = np.arange(t.shape[1])[None, :] != instance.current_cfg[:, None]
        score = score + np.where(other, move[:, None], 0.0)
    score = np.where(np.isfinite(t), score, np.inf)
    cfg = np.empty(instance.n_jobs, dtype=np.int64)
    for j in range(instance.n_jobs):
        order = np.lexsort((price, vm_gpus, t[j], score[j]))
        cfg[j] = order[0]
    return cfg


def dp_select(run_cost: np.ndarray, wait_cost: np.ndarray, nodes: int) -> tuple[np.ndarray, float]:
    """The DP of formulations/DP.md: which jobs run (one node each, at most `nodes`).

    V_k(u) = min(V_{k-1}(u) + P_k, V_{k-1}(u-1) + E_k), V_0(0) = 0, V_0(u > 0) = inf, over jobs
    k in the given (FIFO) order; the answer is min over u <= nodes of V_J(u). Ties: a later job
    waits rather than taking a node from an earlier one; among equal totals, more nodes are used.

    Parameters
    ----------
    run_cost, wait_cost : np.ndarray
        E_k and P_k, in FIFO order.
    nodes : int
        N, the number of nodes.

    Returns
    -------
    (np.ndarray, float)
        Boolean "runs" per job (same order) and the optimal total V*.
    """
    K = run_cost.shape[0]
    U = min(nodes, K)
    V = np.full(U + 1, np.inf)
    V[0] = 0.0
    runs = np.zeros((K, U + 1), dtype=bool)
    for k in range(K):
        wait = V + wait_cost[k]
        run = np.empty(U + 1)
        run[0] = np.inf
        run[1:] = V[:-1] + run_cost[k]
        runs[k] = run < wait
        V = np.where(runs[k], run, wait)
    best = np.flatnonzero(V == V.min())[-1]
    chosen = np.zeros(K, dtype=bool)
    u = int(best)
    for k in range(K - 1, -1, -1):
        if runs[k, u]:
            chosen[k] = True
            u -= 1
    return chosen, float(V[best])


def _dp(
    instance: Instance, method: str, f1: str, f2: str, seed: int, options: dict[str, Any]
) -> Solution:
    """Configurations by F1, costs by F2 ("wct": worst-case tardiness, "b": constant B), DP, nodes."""
    dt = float(options.pop("dt", DP_TICK))
    B = float(options.pop("B", DEFAULT_B)) if f2 == "b" else 0.0
    reject_options(method, options)
    if not dt > 0:
        raise InputError(None, "dt", f"must be > 0 s, got {dt!r}")
    if not B >= 0:
        raise InputError(None, "B", f"must be >= 0 $, got {B!r}")
    t0 = time.perf_counter()
    cat = instance.catalog
    J, N = instance.n_jobs, instance.nodes
    jobs = np.arange(J)
    kappa, _ = reconfiguration_terms(instance)  # 0 in the paper's setting
    cfg = choose_configs(instance, f1, dt, kappa)
    pinned = instance.pinned  # a disruption limit: they run where they are, on their node
    cfg[pinned] = instance.current_cfg[pinned]
    vm = cat.cfg_vm[cfg]
    tau = step_tardiness(instance, dt)[jobs, cfg]
    running = instance.current_cfg >= 0
    run_cost = instance.weight * tau + cat.cost[vm] * dt  # E_j: F2's terms for running j
    run_cost += np.where(running & (cfg != instance.current_cfg), kappa, 0.0)  # migrated
    if f2 == "b":
        wait_cost = np.full(J, B)  # P_j: F_B
    else:  # F_WCT: rho * omega_j * tau_hat_j, tau_hat_j = max(0, Δt + M_j - d_j)
        wait_cost = (
            instance.rho
            * instance.weight
            * np.maximum(0.0, dt + instance.max_time - instance.rel_due)
        )
    wait_cost = wait_cost + np.where(running, kappa, 0.0)  # preempted
    wait_cost[pinned] = np.inf
    fifo = submission_order(instance)
    chosen, value = dp_select(run_cost[fifo], wait_cost[fifo], N)
    run = fifo[chosen]
    node_vm = np.full(N, -1, dtype=np.int64)
    job_node = np.full(J, -1, dtype=np.int64)
    job_cfg = np.full(J, -1, dtype=np.int64)
    job_cfg[run] = cfg[run]
    # node indices: a job keeps its current node when it can (first those keeping their
    # configuration, then those changing it), the others take the lowest free index.
    cur = instance.current_node
    for same in (True, False):
        for j in run:
            n = int(cur[j])
            if (
                job_node[j] < 0
                and 0 <= n < N
                and node_vm[n] < 0
                and (instance.current_cfg[j] == cfg[j]) == same
            ):
                job_node[j], node_vm[n] = n, vm[j]
    free = iter(np.flatnonzero(node_vm < 0))
    for j in run:
        if job_node[j] < 0:
            n = int(next(free))
            job_node[j], node_vm[n] = n, vm[j]
    stats = {
        "seconds": time.perf_counter() - t0,
        "seed": seed,
        "dt": dt,
        "F1": f1,
        "F2": "B" if f2 == "b" else "WCT",
        "dp_value": value,
        "running": int(run.size),
    }
    if f2 == "b":
        stats["B"] = B
    return Solution(instance, node_vm, job_node, job_cfg, method, stats)


_PARAMS = """

    Parameters
    ----------
    instance : Instance
        The rescheduling point (every unfinished job; running jobs may move or wait).
    seed : int
        Recorded only: the method is deterministic.
    time_limit : float, optional
        Ignored (the DP takes O(J N) operations).
    dt : float
        Δt (s) of the proxies, default 900 (also the simulator tick, `gpuaas.methods.DP_TICK`).
    B : float
        DP(FastB) only: the cost ($) of postponing a job in F_B, default 1e6.

    Returns
    -------
    Solution
    """


def dp_wct(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """DP(WCT): F1 = F2 = F_WCT (eq. 4)."""
    return _dp(instance, "dp-wct", "wct", "wct", seed, options)


def dp_fastwct(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """DP(FastWCT): F1 = fastest configuration, F2 = F_WCT (eq. 4)."""
    return _dp(instance, "dp-fastwct", "fast", "wct", seed, options)


def dp_fastb(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """DP(FastB): F1 = fastest configuration, F2 = F_B (eq. 4 with B in place of τ̂_j)."""
    return _dp(instance, "dp-fastb", "fast", "b", seed, options)


def dp_adjwct(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """DP(AdjWCT): F1 = F~ (eq. 5, adjusted tardiness), F2 = F_WCT (eq. 4)."""
    return _dp(instance, "dp-adjwct", "adj", "wct", seed, options)


for _f in (dp_wct, dp_fastwct, dp_fastb, dp_adjwct):
    _f.__doc__ = str(_f.__doc__) + _PARAMS
