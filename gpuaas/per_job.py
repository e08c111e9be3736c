"""The per-job bound: the cheapest way each job could run if it had the cloud to itself.

A job that does fraction f_c of its remaining work on configuration c = (v, g) runs f_c·t_jc
seconds there and occupies g/G_v of a VM of type v, so it pays at least
Σ_c f_c·t_jc·p_c with p_c = price_v·g/G_v per second (sharing a VM never makes a GPU cheaper),
and it finishes no earlier than r_j + Σ_c f_c·t_jc (one configuration at a time, from its
release r_j), so its tardiness is at least ω_j·max(0, Σ_c f_c·t_jc − D_j) with D_j = due_j − r_j.
The per-job LP

    min_f  Σ_c f_c·t_jc·p_c + ω_j·max(0, Σ_c f_c·t_jc − D_j)   s.t. f ≥ 0, Σ_c f_c = 1

is a convex piecewise-linear function of the job's total running time T = Σ f_c·t_jc plus the
lower convex hull of the points (t_jc, t_jc·p_c); its minimum lies at a hull vertex (one
configuration) or at the kink T = D_j (a fast configuration with t < D_j mixed with a slow one
with t > D_j so that the job ends exactly at its due date). `per_job_plan` evaluates all those
candidates — O(C²) per job, in a cached numba kernel — and returns the minimiser: per job the
one or two configurations and their fractions. The sum over jobs is a lower bound on the
total cost (VM + tardiness) of any schedule (`gpuaas.bound`), and the plan itself is "the
cheapest configuration that still meets the due date, or the cheapest mix of two when none
does".

At a rescheduling point the instance's remaining times `times` and the due date relative to
r_j = max(release_j, T_c) are used, so the same function serves a whole trace (T_c = 0) and
one rescheduling point.

**CPU and memory** (docs/design.md). Where jobs declare vCPUs or memory, a job also holds
cpus_j/K_v of its VM's vCPUs and mem_j/M_v of its memory; on any VM at any time its jobs' shares
of each resource sum to at most 1, so for any weights λ ≥ 0 summing to 1 the price
price_v·(λ_gpu·g/G_v + λ_cpu·cpus_j/K_v + λ_mem·mem_j/M_v) charged to each job never exceeds
the VM's. Each λ of `LAMBDAS` then gives a valid per-job bound, and `per_job_plan` returns the
largest (the GPU share alone, λ = (1, 0, 0), is the bound without demands). The max share
max(g/G_v, cpus_j/K_v, mem_j/M_v) would not be one: two jobs whose largest shares are of
different resources can share a VM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from gpuaas.instance import DEMANDS, Instance


@dataclass(frozen=True, eq=False)
class PerJobPlan:
    """Per job, the minimiser of the per-job LP and its cost parts.

    `cfg[j] = (a, b)` are the configurations (b = -1: a alone), `fraction[j] = (f_a, f_b)` the
    fractions of the remaining work done on each (f_a + f_b = 1), `duration[j]` the running
    time f_a·t_ja + f_b·t_jb, `vm_cost[j]` its VM share and `tardiness_cost[j]` the tardiness
    of finishing at r_j + duration; `cost = vm_cost + tardiness_cost` is the LP's minimum.
    """

    cost: np.ndarray  # (J,) $
    vm_cost: np.ndarray  # (J,) $
    tardiness_cost: np.ndarray  # (J,) $
    cfg: np.ndarray  # (J, 2) int64, -1: unused
    fraction: np.ndarray  # (J, 2)
    duration: np.ndarray  # (J,) s

    @property
    def total(self) -> float:
        """The per-job bound: Σ_j cost_j."""
        return float(np.sum(self.cost))


def share_price(instance: Instance) -> np.ndarray:
    """p_c = price_v·g/G_v ($/s): the VM price share of configuration c = (v, g)."""
    return instance.catalog.cost[instance.catalog.cfg_vm] * node_share(instance)


def node_share(instance: Instance) -> np.ndarray:
    """g/G_v: the part of a VM of type v that configuration c = (v, g) occupies."""
    cat = instance.catalog
    return cat.cfg_gpus / cat.gpus[cat.cfg_vm]


def capacity_gpus(instance: Instance) -> np.ndarray:
    """(C,) the part of the N nodes' capacity configuration c = (v, g) holds, in GPUs of the
    largest VM type: g/G_v x max G. A job alone on a 1-GPU VM holds a whole node of the N."""
    return node_share(instance) * float(instance.catalog.gpus.max())


def effective_release(instance: Instance) -> np.ndarray:
    """r_j = max(release_j, T_c): the earliest time job j can run from this instance on."""
    return np.maximum(instance.release, instance.time)


#: the weights (GPU, vCPUs, memory) of the shares the per-job bound tries (module docstring)
LAMBDAS = (
    (1.0, 0.0, 0.0),
    (0.0, 1.0, 0.0),
    (0.0, 0.0, 1.0),
    (0.5, 0.5, 0.0),
    (0.5, 0.0, 0.5),
    (0.0, 0.5, 0.5),
    (1 / 3, 1 / 3, 1 / 3),
)


def resource_shares(instance: Instance) -> list[np.ndarray | None]:
    """Per resource of `DEMANDS` (vCPUs, memory), the (J, C) share of its VM's that job j holds
    on configuration c (0 where the type sets no limit); None where no job declares it or no
    type limits it."""
    cat = instance.catalog
    out: list[np.ndarray | None] = []
    for demand, capacity in DEMANDS.items():
        need = getattr(instance, demand)
        limit = getattr(cat, capacity)[cat.cfg_vm]
        limited = need.any() and np.isfinite(limit).any()
        out.append(
            np.where(np.isfinite(limit), need[:, None] / limit[None, :], 0.0) if limited else None
        )
    return out


def per_job_plan(instance: Instance) -> PerJobPlan:
    """The per-job LP's optimum for every job of `instance` (module docstring).

    Parameters
    ----------
    instance : Instance
        A trace (T_c = 0) or a rescheduling point; remaining times `instance.times` are used,
        with due dates relative to max(release, T_c).

    Returns
    -------
    PerJobPlan
    """
    times = np.ascontiguousarray(instance.times, dtype=np.float64)
    slack = np.ascontiguousarray(instance.due - effective_release(instance), dtype=np.float64)
    weight = np.ascontiguousarray(instance.weight, dtype=np.float64)
    price = np.ascontiguousarray(share_price(instance), dtype=np.float64)
    share = np.ascontiguousarray(node_share(instance), dtype=np.float64)
    free = np.zeros(times.shape[1])  # moves are free in the bound
    partner = np.full(times.shape[1], -1, dtype=np.int64)  # its plan values are not read
    _, vm, tard, cfg, frac, dur = per_job_lp(times, slack, weight, price, share, free, partner)
    best = PerJobPlan(
        cost=vm + tard, vm_cost=vm, tardiness_cost=tard, cfg=cfg, fraction=frac, duration=dur
    )
    shares = resource_shares(instance)
    if all(sh is None for sh in shares):
        return best
    cost = instance.catalog.cost[instance.catalog.cfg_vm]
    # jobs of equal demands share a price vector: one kernel call per group and weight
    demands = np.stack([getattr(instance, d) for d in DEMANDS], axis=1)
    _, group = np.unique(demands, axis=0, return_inverse=True)
    for lam in LAMBDAS[1:]:
        if any(w > 0 and sh is None for w, sh in zip(lam[1:], shares)):
            continue  # a resource no job declares
        plan = _plan_zeros(len(times))
        for g in np.unique(group):
            jobs = np.flatnonzero(group == g)
            j0 = jobs[0]
            mixed = lam[0] * share + sum(w * sh[j0] for w, sh in zip(lam[1:], shares) if w)
            parts = per_job_lp(
                np.ascontiguousarray(times[jobs]),
                slack[jobs],
                weight[jobs],
                np.ascontiguousarray(cost * mixed),
                share,
                free,
                partner,
            )
            for name, value in zip(
                ("vm_cost", "tardiness_cost", "cfg", "fraction", "duration"), parts[1:]
            ):
                getattr(plan, name)[jobs] = value
        plan.cost[:] = plan.vm_cost + plan.tardiness_cost
        if plan.total > best.total:
            best = plan
    return best


def _plan_zeros(J: int) -> PerJobPlan:
    return PerJobPlan(
        cost=np.zeros(J),
        vm_cost=np.zeros(J),
        tardiness_cost=np.zeros(J),
        cfg=np.full((J, 2), -1, dtype=np.int64),
        fraction=np.zeros((J, 2)),
        duration=np.zeros(J),
    )


@njit(cache=True)
def per_job_lp(times, slack, weight, price, share, switch, partner):  # pragma: no cover - compiled
    """The per-job LP of every job (module docstring), read two ways in one pass.

    Candidates, per job j with slack D_j: every single configuration c (price x time +
    tardiness), then every (fast c1, slow c2) pair with t1 < D_j < t2 and c2 cheaper, mixed so
    that the job ends at D_j, plus `switch[c2]` (the cost of changing configuration; 0 for the
    bound). Returns

    - `value` (J, C): the cheapest candidate that uses c first (c alone, or c as the fast part of
      a pair; the slow part when the fast one is its `partner`, its own VM on demand for a spot
      configuration: spot while the slack lasts, then the same VM on demand, Can't Be Late's
      order): the incumbent rules' plan value of c (`gpuaas.pricing`);
    - per job the cheapest candidate (vm, tard, cfg (J, 2), frac (J, 2), dur): among candidates
      of equal cost (to 1e-12 relative) the one with the fewest node-seconds (time x g/G_v)
      wins, then the first found (single configurations in index order, then pairs).
    """
    return _per_job_lp(times, slack, weight, price, share, switch, partner, True)


@njit(cache=True)
def _better(cost, ns, best, best_ns):  # pragma: no cover - compiled
    tol = 1e-12 * max(1.0, abs(best)) if np.isfinite(best) else 0.0
    return cost < best - tol or (cost <= best + tol and ns < best_ns)


@njit(cache=True)
def plan_values_lp(times, slack, weight, price, switch, partner):  # pragma: no cover - compiled
    """`per_job_lp`'s `value` alone (the plan values `gpuaas.pricing` reads): the same
    candidates and the same arithmetic, without the per-job minimiser and its tie-breaks."""
    return _per_job_lp(times, slack, weight, price, price, switch, partner, False)[0]


@njit(cache=True)
def _per_job_lp(times, slack, weight, price, share, switch, partner, minimise):  # pragma: no cover
    """`per_job_lp`; without `minimise` only its `value` (the other results left at zero)."""
    J, C = times.shape
    value = np.full((J, C), np.inf)
    vm = np.zeros(J)
    tard = np.zeros(J)
    cfg = np.full((J, 2), -1, dtype=np.int64)
    frac = np.zeros((J, 2))
    dur = np.zeros(J)
    fast = np.empty(C, dtype=np.int64)  # per job, the configurations ending before D ...
    slow = np.empty(C, dtype=np.int64)  # ... and after it, in index order
    for j in range(J):
        D = slack[j]
        w = weight[j]
        best = np.inf
        best_ns = np.inf
        n_fast = n_slow = 0
        for c in range(C):
            t = times[j, c]
            if t < D:
                fast[n_fast] = c
                n_fast += 1
            elif np.isfinite(t) and t > D:
                slow[n_slow] = c
                n_slow += 1
            if not np.isfinite(t):
                continue
            a = t * price[c]
            late = w * max(0.0, t - D)
            value[j, c] = a + late
            if not minimise:
                continue
            ns = t * share[c]
            if _better(a + late, ns, best, best_ns):
                best, best_ns = a + late, ns
                vm[j], tard[j], dur[j] = a, late, t
                cfg[j, 0], cfg[j, 1] = c, -1
                frac[j, 0], frac[j, 1] = 1.0, 0.0
        for i1 in range(n_fast):  # fast: ends before the due date
            c1 = fast[i1]
            t1 = times[j, c1]
            a1 = t1 * price[c1]
            for i2 in range(n_slow):  # slow: ends after it
                c2 = slow[i2]
                t2 = times[j, c2]
                a2 = t2 * price[c2]
                if a2 >= a1:  # the slow one must be cheaper, or c1 alone is no worse
                    continue
                f1 = (t2 - D) / (t2 - t1)
                if partner[c2] == c1:  # spot first, then its own VM on demand
                    a = f1 * a1 + (1.0 - f1) * a2 + switch[c1]
                    if a < value[j, c2]:
                        value[j, c2] = a
                else:
                    a = f1 * a1 + (1.0 - f1) * a2 + switch[c2]
                    if a < value[j, c1]:
                        value[j, c1] = a
                if not minimise:
                    continue
                ns = f1 * t1 * share[c1] + (1.0 - f1) * t2 * share[c2]
                if _better(a, ns, best, best_ns):
                    best, best_ns = a, ns
                    vm[j], tard[j], dur[j] = a, 0.0, D
                    cfg[j, 0], cfg[j, 1] = c1, c2
                    frac[j, 0], frac[j, 1] = f1, 1.0 - f1
    return value, vm, tard, cfg, frac, dur
