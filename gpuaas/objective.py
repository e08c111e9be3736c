"""f_OBJ (P1a, minimise) and the proxy f̄_OBJ (eq. 1, maximise) of a whole solution, as numba kernels.

These evaluate a complete solution; the heuristics keep their own incremental deltas and are
checked against these kernels, which are in turn checked against the plain-Python validator.
The reconfiguration terms of P1's extension are `gpuaas.reconfiguration`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from gpuaas.reconfiguration import reconfiguration_cost

if TYPE_CHECKING:
    from gpuaas.instance import Instance
    from gpuaas.solution import Solution


@njit(cache=True)
def f_obj_kernel(
    times,
    rel_due,
    weight,
    max_time,
    cfg_gpus,
    vm_gpus,
    vm_cost,
    H,
    mu,
    rho,
    node_vm,
    job_node,
    job_cfg,
):
    """P1a: tardiness of run jobs + rho * worst-case tardiness of postponed ones
    + mu * idle GPUs of open nodes + each open node's price x its first-ending job's time."""
    N = node_vm.shape[0]
    used = np.zeros(N, dtype=np.int64)
    first = np.full(N, np.inf)
    total = 0.0
    for j in range(job_node.shape[0]):
        n = job_node[j]
        if n < 0:
            total += rho * weight[j] * max(0.0, H + max_time[j] - rel_due[j])
        else:
            t = times[j, job_cfg[j]]
            total += weight[j] * max(0.0, t - rel_due[j])
            used[n] += cfg_gpus[job_cfg[j]]
            if t < first[n]:
                first[n] = t
    for n in range(N):
        v = node_vm[n]
        if v >= 0:
            total += mu * (vm_gpus[v] - used[n])
            if used[n] > 0:
                total += vm_cost[v] * first[n]
    return total


@njit(cache=True)
def proxy_kernel(times, rel_due, weight, max_time, cfg_vm, vm_cost, job_cfg):
    """Eq. 1: sum over run jobs of M_j / (pi_j + omega_j tau_j); postponed jobs add 0."""
    total = 0.0
    for j in range(job_cfg.shape[0]):
        c = job_cfg[j]
        if c >= 0:
            t = times[j, c]
            total += max_time[j] / (t * vm_cost[cfg_vm[c]] + weight[j] * max(0.0, t - rel_due[j]))
    return total


def f_obj(
    instance: Instance, node_vm: np.ndarray, job_node: np.ndarray, job_cfg: np.ndarray
) -> float:
    """f_OBJ (P1a, plus the reconfiguration terms of P1's extension) of the three solution arrays."""
    cat = instance.catalog
    return float(
        f_obj_kernel(
            instance.times,
            instance.rel_due,
            instance.weight,
            instance.max_time,
            cat.cfg_gpus,
            cat.gpus,
            cat.cost,
            instance.H,
            instance.mu,
            instance.rho,
            node_vm,
            job_node,
            job_cfg,
        )
    ) + reconfiguration_cost(instance, node_vm, job_node, job_cfg)


def proxy(instance: Instance, job_cfg: np.ndarray) -> float:
    """f̄_OBJ (eq. 1) of the configurations chosen for the jobs."""
    cat = instance.catalog
    return float(
        proxy_kernel(
            instance.times,
            instance.rel_due,
            instance.weight,
            instance.max_time,
            cat.cfg_vm,
            cat.cost,
            job_cfg,
        )
    )


def evaluate(solution: Solution) -> float:
    """f_OBJ of a Solution."""
    return f_obj(solution.instance, solution.node_vm, solution.job_node, solution.job_cfg)
