"""One-job-per-node list scheduling: the mechanism shared by FIFO, EDF and PS [§4.2].

A job that already runs keeps its node and configuration until it completes (no migration,
no preemption). Every node that hosts no running job is free; waiting jobs take free nodes
one each, in the method's order, until the nodes run out; the rest wait for the next event.

The configuration is chosen by the heuristics' rule [§3.3]: the cheapest (t_jvg * c_v) among
those that meet the due date (t_jvg <= d_j), else the fastest (least t_jvg). Ties go to the
VM type with fewer GPUs, then the lower price: the job gets the smallest VM type that holds it
(e.g. 4 K80 GPUs cost the same time on NC24 and NC48*, and NC24 is chosen). With the
catalog's quotas (`gpuaas.quotas`) a job chooses among the VM types the GPUs left let open,
and waits if none.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gpuaas import quotas
from gpuaas.errors import InputError, SolverError
from gpuaas.instance import Instance
from gpuaas.solution import Solution


def _ranked(keys: tuple[np.ndarray, ...], allowed: np.ndarray) -> int:
    """Index of the lexicographically smallest `keys` (first key most significant) among `allowed`."""
    idx = np.flatnonzero(allowed)
    order = np.lexsort(tuple(k[idx] for k in reversed(keys)))
    return int(idx[order[0]])


def heuristic_config(instance: Instance, j: int, allowed: np.ndarray | None = None) -> int:
    """Configuration of job `j` by the heuristics' rule: cheapest meeting the due date, else fastest.

    Parameters
    ----------
    instance : Instance
        The rescheduling point (remaining times `times`, relative due dates `rel_due`).
    j : int
        Job index.
    allowed : (C,) bool array, optional
        Only these configurations (the catalog's quotas left, `list_schedule`); default all.

    Returns
    -------
    int
        Configuration index c (ties: fewer GPUs on the VM type, then lower price); -1 when
        `allowed` leaves the job none.
    """
    cat = instance.catalog
    t = instance.times[j]
    runnable = np.isfinite(t) if allowed is None else np.isfinite(t) & allowed
    if not runnable.any():
        return -1
    vm_gpus = cat.gpus[cat.cfg_vm].astype(np.float64)
    price = cat.cost[cat.cfg_vm]
    meets = runnable & (t <= instance.rel_due[j])
    if meets.any():
        return _ranked((t * price, vm_gpus, price, t), meets)
    return _ranked((t, vm_gpus, price), runnable)


def list_schedule(instance: Instance, order: np.ndarray, method: str, seed: int) -> Solution:
    """Keep running jobs where they are; start waiting jobs in `order` on free nodes, one per node.

    Parameters
    ----------
    instance : Instance
        The rescheduling point; `current_node` / `current_cfg` say which jobs run and where.
    order : np.ndarray
        All job indices, in the method's priority order (running jobs are skipped).
    method, seed : str, int
        Recorded in the Solution.

    Returns
    -------
    Solution
        Running jobs unchanged, the first waiting jobs of `order` started, the others postponed.
    """
    t0 = time.perf_counter()
    cat = instance.catalog
    N, J = instance.nodes, instance.n_jobs
    node_vm = np.full(N, -1, dtype=np.int64)
    job_node = np.full(J, -1, dtype=np.int64)
    job_cfg = np.full(J, -1, dtype=np.int64)
    used = np.zeros(N, dtype=np.int64)
    running = np.flatnonzero(instance.current_node >= 0)
    for j in running:
        n, c = int(instance.current_node[j]), int(instance.current_cfg[j])
        if not 0 <= n < N or not 0 <= c < cat.n_configs or not np.isfinite(instance.times[j, c]):
            raise SolverError(
                f"{method}: running job {instance.job_ids[j]!r} has node {n} / "
                f"configuration {c}, which this instance ({N} nodes) cannot keep"
            )
        v = int(cat.cfg_vm[c])
        if node_vm[n] not in (-1, v) or used[n] + cat.cfg_gpus[c] > cat.gpus[v]:
            raise SolverError(f"{method}: running jobs on node {n} do not fit one VM type")
        node_vm[n] = v
        used[n] += cat.cfg_gpus[c]
        job_node[j], job_cfg[j] = n, c
    free = iter(np.flatnonzero(node_vm < 0))
    started = 0
    # the catalog's quotas (`gpuaas.quotas`): a job takes the best configuration whose VM type
    # the GPUs left let open, else waits while later jobs of other types may start
    left = cat.quota_gpus - quotas.held(cat, node_vm) if cat.quotas else None
    n = None
    for j in np.asarray(order, dtype=np.int64):
        if job_node[j] >= 0:
            continue
        n = next(free, None) if n is None else n
        if n is None:
            break
        if left is None:
            c = heuristic_config(instance, int(j))
        else:
            c = heuristic_config(instance, int(j), quotas.openable(cat, left)[cat.cfg_vm])
            if c < 0:
                continue  # node n stays free for the next job
            left -= cat.quota_members[:, cat.cfg_vm[c]] * cat.gpus[cat.cfg_vm[c]]
        node_vm[n] = cat.cfg_vm[c]
        job_node[j], job_cfg[j] = n, c
        n = None
        started += 1
    stats: dict[str, Any] = {
        "seconds": time.perf_counter() - t0,
        "seed": seed,
        "kept": int(running.size),
        "started": started,
    }
    return Solution(instance, node_vm, job_node, job_cfg, method, stats)


def submission_order(instance: Instance) -> np.ndarray:
    """Job indices by release time, ties by position in the instance (the order of submission)."""
    return np.lexsort((np.arange(instance.n_jobs), instance.release))


def reject_options(method: str, options: dict[str, Any]) -> None:
    """A clear error for options a method does not take (instead of silently ignoring them)."""
    if options:
        raise InputError(None, "options", f"{method} takes no options, got {sorted(options)}")
