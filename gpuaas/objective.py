"""The objectives of a whole solution at one rescheduling point.

- **P1$** (`dollars`, minimise; formulations/P1D.md): what the plan costs in dollars, the
  package's objective. The plan holds until the next re-plan (`H` s at the latest); then every
  job follows its best plan (the per-job LP of `gpuaas.per_job` at the fill price,
  `gpuaas.pricing`). A running job pays its GPUs over those H s and its best plan from then, a waiting
  job its best plan from then, every open VM the GPUs its jobs do not pay for, and moves P1's
  reconfiguration terms (`gpuaas.reconfiguration`).
- **f_OBJ** (P1a, minimise) and the proxy **f̄_OBJ** (eq. 1, maximise): the paper's, as numba
  kernels. The heuristics keep their own incremental deltas of these and are checked against
  the kernels.

All are checked against the plain-Python validator (`gpuaas.validator`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from gpuaas.per_job import at, node_share, plan_values_lp, rows
from gpuaas.pricing import fill_price
from gpuaas.reconfiguration import (
    moves_from,
    reconfiguration_cost,
    reconfiguration_terms,
    switch_costs,
    transfer_costs,
)

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
            if first[n] < np.inf:  # it hosts a job (a GPU-less node's jobs use no GPU)
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


#: the objectives a rescheduling point can be solved and reported under: P1$ and the paper's P1a
OBJECTIVES = ("dollars", "p1a")


class DollarTerms(NamedTuple):
    """P1$'s coefficients at one rescheduling point (formulations/P1D.md)."""

    run: np.ndarray  # (J, C) $: running on c until the next re-plan, then the best plan
    wait: np.ndarray  # (J,) $: waiting until the next re-plan, then the best plan
    price: np.ndarray  # (C,) $/s: the fill price, what a job's GPUs on c cost; (J, C) per job
    # where the catalog has GPU-less types (`gpuaas.per_job.node_share`; read it with `at`)
    kappa: np.ndarray  # (J,) $: moving a running job (gpuaas.reconfiguration)
    sigma: np.ndarray  # (N, V) $: giving node n VM type v (start-up)


class _Priced(NamedTuple):
    """What P1$'s values are computed from, once per instance."""

    price: np.ndarray  # (C,) the fill price
    share: np.ndarray  # (C,) g / G_v (the per-job LP's tie-break)
    switch: np.ndarray  # (C,) a switch's cost
    partner: np.ndarray  # (C,) a spot configuration's on-demand one (-1: none; `per_job_lp`)
    wait: np.ndarray  # (J,) the wait values


@lru_cache(maxsize=1)  # an Instance is immutable and hashes by identity
def _priced(instance: Instance) -> _Priced:
    price = np.ascontiguousarray(fill_price(instance), dtype=np.float64)
    share = np.ascontiguousarray(node_share(instance), dtype=np.float64)
    switch = np.ascontiguousarray(switch_costs(instance, price), dtype=np.float64)
    slack = np.ascontiguousarray(instance.rel_due - instance.H, dtype=np.float64)
    t, w = np.ascontiguousarray(instance.times), np.ascontiguousarray(instance.weight)
    cat = instance.catalog
    partner = np.where(cat.spot[cat.cfg_vm], cat.spot_configs(), -1)
    later = plan_values_lp(t, slack, w, price, switch, partner, cat.cfg_twin)
    moving = transfer_costs(instance) if instance.catalog.places else 0.0  # data moved first
    wait = (later + instance.startup * price + moving).min(axis=1, initial=np.inf)
    wait.flags.writeable = False
    return _Priced(price, share, switch, partner, wait)


def run_values(instance: Instance, jobs: np.ndarray, cfgs: np.ndarray) -> np.ndarray:
    """P1$'s run value of each job jobs[i] on configuration cfgs[i] (inf where it cannot run):
    its GPUs at the fill price for H s, or to its end with its tardiness when it ends within
    H s, then its best plan from T_c + H for the work left (the per-job LP; a configuration
    other than cfgs[i] pays its switch, `gpuaas.reconfiguration.switch_costs`), and the move of
    its data where cfgs[i] is at another location (`gpuaas.reconfiguration.transfer_costs`)."""
    p = _priced(instance)
    H = instance.H
    t = instance.times[jobs, cfgs]
    d = instance.rel_due[jobs]
    w = instance.weight[jobs]
    with np.errstate(invalid="ignore"):
        out = t * at(p.price, jobs, cfgs) + w * np.maximum(0.0, t - d)
    out[~np.isfinite(t)] = np.inf
    k = np.flatnonzero(np.isfinite(t) & (t > H))
    if k.size:
        left = 1.0 - H / t[k]  # the fraction of its remaining work left after H s
        left_times = np.ascontiguousarray(instance.times[jobs[k]] * left[:, None])
        slack = np.ascontiguousarray(d[k] - H)
        price, switch = rows(p.price, jobs[k]), rows(p.switch, jobs[k])
        after = plan_values_lp(
            left_times,
            slack,
            np.ascontiguousarray(w[k]),
            price,
            switch,
            p.partner,
            instance.catalog.cfg_twin,
        )
        moved = after + switch
        if instance.catalog.places:  # a switch to another location moves the data there
            here = instance.catalog.location_index[instance.catalog.cfg_vm[cfgs[k]]]
            moved += moves_from(instance, jobs[k], here)
        moved[np.arange(k.size), cfgs[k]] = after[np.arange(k.size), cfgs[k]]  # staying: no switch
        out[k] = H * at(p.price, jobs[k], cfgs[k]) + moved.min(axis=1)
    if instance.catalog.places:
        out = out + transfer_costs(instance)[jobs, cfgs]
    return out


@lru_cache(maxsize=1)
def dollar_terms(instance: Instance) -> DollarTerms:
    """P1$'s per-job, per-configuration and per-node coefficients (formulations/P1D.md): the
    run value of every job on every configuration (`run_values`), the wait values (a job's best
    plan from T_c + H plus the start-up share of its first configuration: it needs a VM then,
    as now), the fill price and the reconfiguration terms."""
    J, C = instance.n_jobs, instance.catalog.n_configs
    j, c = (a.ravel() for a in np.indices((J, C)))
    run = run_values(instance, j, c).reshape(J, C)
    kappa, sigma = reconfiguration_terms(instance)
    p = _priced(instance)
    for a in (run, kappa, sigma):
        a.flags.writeable = False
    return DollarTerms(run, p.wait, p.price, kappa, sigma)


def dollars(
    instance: Instance, node_vm: np.ndarray, job_node: np.ndarray, job_cfg: np.ndarray
) -> float:
    """P1$ (formulations/P1D.md) of the three solution arrays: the run values of running jobs,
    the waiting values of the others, H x each open VM's price less its jobs' fill prices
    (never below 0), and P1's reconfiguration terms."""
    p = _priced(instance)
    cat = instance.catalog
    job_cfg = np.asarray(job_cfg)
    node_vm = np.asarray(node_vm)
    run = np.flatnonzero(job_cfg >= 0)
    total = float(run_values(instance, run, job_cfg[run]).sum()) + float(p.wait[job_cfg < 0].sum())
    paid = np.bincount(
        np.asarray(job_node)[run], weights=at(p.price, run, job_cfg[run]), minlength=instance.nodes
    )
    is_open = np.flatnonzero(node_vm >= 0)
    unfilled = np.maximum(0.0, cat.cost[node_vm[is_open]] - paid[is_open])
    return (
        total
        + instance.H * float(unfilled.sum())
        + reconfiguration_cost(instance, node_vm, job_node, job_cfg)
    )
