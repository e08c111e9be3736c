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

from gpuaas.instance import DEMANDS, Instance, gpu_less_shares
from gpuaas.kernel_args import kernel_rows, readonly


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
    """p_c = price_v·g/G_v ($/s): the VM price share of configuration c = (v, g); (J, C)
    where the catalog has GPU-less types (`node_share`)."""
    return instance.catalog.cost[instance.catalog.cfg_vm] * node_share(instance)


def single_costs(instance: Instance) -> np.ndarray:
    """(J, C) what job j costs run alone on configuration c from r_j to its end: its VM price
    share for its time plus its tardiness (inf where it cannot run there)."""
    times = instance.times
    slack = (instance.due - effective_release(instance))[:, None]
    with np.errstate(invalid="ignore"):
        cost = times * share_price(instance) + instance.weight[:, None] * np.maximum(
            0.0, times - slack
        )
    return np.where(np.isfinite(times), cost, np.inf)


def node_share(instance: Instance) -> np.ndarray:
    """(C,) g/G_v: the part of a VM of type v that configuration c = (v, g) occupies.

    Where the catalog has GPU-less types, (J, C): on their configurations (v, 0) job j holds
    its largest share of v's vCPUs or memory (`gpuaas.instance.gpu_less_shares`; docs/
    design.md, "CPU-only jobs"), which is what the plans price a CPU-only job at. The bounds
    use `bound_share` instead: largest shares of two jobs may add up to more than one VM."""
    cat = instance.catalog
    if not cat.has_gpu_less:
        return cat.cfg_gpus / cat.gpus[cat.cfg_vm]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = cat.cfg_gpus / cat.gpus[cat.cfg_vm]
    out = np.repeat(share[None, :], instance.n_jobs, axis=0)
    out[:, cat.gpu_less[cat.cfg_vm]] = gpu_less_shares(cat, instance.cpus, instance.memory)
    return out


def at(a: np.ndarray, jobs: np.ndarray, cfgs: np.ndarray) -> np.ndarray:
    """Entries (jobs[i], cfgs[i]) of a per-configuration array `a`: (C,) (every job's, as
    without GPU-less types) or (J, C) (`node_share`)."""
    return a[cfgs] if a.ndim == 1 else a[jobs, cfgs]


def rows(a: np.ndarray, jobs: np.ndarray | slice) -> np.ndarray:
    """The rows of jobs `jobs` of a per-configuration array `a`, (C,) or (J, C) (`at`): `a`
    itself where it is (C,), which broadcasts against any rows."""
    return a if a.ndim == 1 else a[jobs]


def bound_share(instance: Instance) -> np.ndarray:
    """`node_share` as the bounds may charge it: on a GPU-less type's configuration job j's
    mean share of the resources the type declares (vCPUs, memory), where `node_share` has its
    largest. On a VM the jobs' shares of each resource sum to at most 1, so their mean shares
    do too: a charge of price_v x that share per job never exceeds the VM's price, and a node
    count of that share never exceeds the VMs open. (C,) g/G_v without GPU-less types."""
    cat = instance.catalog
    if not cat.has_gpu_less:
        return node_share(instance)
    out = node_share(instance).copy()
    cols = np.flatnonzero(cat.gpu_less[cat.cfg_vm])
    total, count = np.zeros((instance.n_jobs, cols.size)), np.zeros(cols.size)
    for demand, capacity in DEMANDS.items():
        cap = getattr(cat, capacity)[cat.cfg_vm[cols]]
        have = np.isfinite(cap)
        total += np.where(have, getattr(instance, demand)[:, None] / np.where(have, cap, 1.0), 0.0)
        count += have
    out[:, cols] = total / count  # a GPU-less type declares one of them at least (Catalog)
    return out


def bound_price(instance: Instance) -> np.ndarray:
    """`share_price` at `bound_share`: the VM price a bound may charge a job per second."""
    return instance.catalog.cost[instance.catalog.cfg_vm] * bound_share(instance)


def capacity_gpus(instance: Instance) -> np.ndarray:
    """(C,) the part of the N nodes' capacity configuration c = (v, g) holds, in GPUs of the
    largest VM type: g/G_v x max G. A job alone on a 1-GPU VM holds a whole node of the N.
    (J, C) where the catalog has GPU-less types (`node_share`)."""
    return node_share(instance) * float(max(1, instance.catalog.gpus.max()))


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
    share = node_share(instance)
    free = np.zeros(times.shape[1])  # moves are free in the bound
    partner = np.full(times.shape[1], -1, dtype=np.int64)  # its plan values are not read
    cost = instance.catalog.cost[instance.catalog.cfg_vm]
    shares = resource_shares(instance)
    best = None
    for lam in LAMBDAS:
        if any(w > 0 and sh is None for w, sh in zip(lam[1:], shares)):
            continue  # a resource no job declares
        price = cost * _mixed_share(instance, lam, shares)
        _, vm, tard, cfg, frac, dur = per_job_lp(times, slack, weight, price, share, free, partner)
        plan = PerJobPlan(
            cost=vm + tard, vm_cost=vm, tardiness_cost=tard, cfg=cfg, fraction=frac, duration=dur
        )
        if best is None or plan.total > best.total:
            best = plan
        if all(sh is None for sh in shares):
            break  # the GPU share alone: the bound without demands
    return best


def _mixed_share(
    instance: Instance, lam: tuple[float, float, float], shares: list[np.ndarray | None]
) -> np.ndarray:
    """λ_gpu·g/G_v + λ_cpu·cpus_j/K_v + λ_mem·mem_j/M_v, (C,) or (J, C) (module docstring). On
    a GPU-less type's configuration, which holds no GPU, λ_gpu goes to the resources the type
    declares in equal parts and the weights are scaled to sum to 1 (`bound_share` where they
    sum to 0): on one VM every job has the same weights, so the charges stay within its price."""
    cat = instance.catalog
    g_share = bound_share(instance)  # node_share where no type lacks GPUs
    if lam == LAMBDAS[0]:
        return g_share
    mixed = lam[0] * g_share + sum(w * sh for w, sh in zip(lam[1:], shares) if w)
    if not cat.has_gpu_less:
        return mixed
    cols = np.flatnonzero(cat.gpu_less[cat.cfg_vm])
    vms = cat.cfg_vm[cols]
    have = [np.isfinite(getattr(cat, c)[vms]) for c in DEMANDS.values()]
    n = sum(h.astype(float) for h in have)
    weights = [np.where(h, w + lam[0] / n, 0.0) for w, h in zip(lam[1:], have)]
    total = sum(weights)
    part = sum(
        w[None, :] * (sh[:, cols] if sh is not None else 0.0) for w, sh in zip(weights, shares)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        mixed[:, cols] = np.where(total > 0, part / total, g_share[:, cols])
    return mixed


def per_job_lp(times, slack, weight, price, share, switch, partner):
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

    `price`, `share` and `switch` are (C,), the same for every job, or (J, C), per job (where
    the catalog has GPU-less types: `node_share`).
    """
    return _per_job_lp(
        *readonly(
            times,
            slack,
            weight,
            kernel_rows(price),
            kernel_rows(share),
            kernel_rows(switch),
            partner,
        )
    )


@njit(cache=True)
def _better(cost, ns, best, best_ns):  # pragma: no cover - compiled
    tol = 1e-12 * max(1.0, abs(best)) if np.isfinite(best) else 0.0
    return cost < best - tol or (cost <= best + tol and ns < best_ns)


def plan_values_lp(times, slack, weight, price, switch, partner, twin=None):
    """`per_job_lp`'s `value` alone (the plan values `gpuaas.pricing` reads): the same
    candidates and the same arithmetic, without the per-job minimiser and its tie-breaks.
    `twin` (`gpuaas.catalog.Catalog.cfg_twin`; None: each configuration alone) names the
    configurations that may run a job equally fast: of those equally slow, a slower part
    another is no dearer in price x time and switch than never gives a least value, and is
    not tried (the values are the same bit for bit: tests/test_scale.py)."""
    if twin is None:
        twin = np.arange(times.shape[1], dtype=np.int64)
    return _plan_values(
        *readonly(times, slack, weight, kernel_rows(price), kernel_rows(switch), partner, twin)
    )


@njit(cache=True)
def _plan_values(times, slack, weight, price, switch, partner, twin):  # pragma: no cover
    """`_per_job_lp`'s `value` alone, the same candidates and arithmetic: each
    job's slow configurations' time, price x time and switch cost gathered once (not per fast
    one), and, where no configuration has a `partner` (no spot), each fast configuration's
    least candidate kept branch-free (a compare and a select: the least of the same values
    as `_per_job_lp`'s test-and-store, which none of them is NaN or -0.0 to tell apart:
    tests/test_scale.py), and, there, a slow configuration left out where a `twin` of the
    same time is no dearer in price x time and in switch (lower index on a tie): with the same
    time its mix with any fast one has the same fraction, and each candidate is made of
    monotone float operations, so it is never less than the twin's. Plan values are asked for
    at every event (`gpuaas.pricing`)."""
    J, C = times.shape
    value = np.full((J, C), np.inf)
    fast = np.empty(C, dtype=np.int64)
    slow = np.empty(C, dtype=np.int64)
    t2s = np.empty(C)
    a2s = np.empty(C)
    sw2 = np.empty(C)
    cand = np.empty(C)
    paired = False
    for c in range(C):
        if partner[c] >= 0:
            paired = True
    for j in range(J):
        D = slack[j]
        w = weight[j]
        price_j = price[j if price.shape[0] > 1 else 0]
        switch_j = switch[j if switch.shape[0] > 1 else 0]
        n_fast = n_slow = 0
        for c in range(C):
            t = times[j, c]
            if t < D:
                fast[n_fast] = c
                n_fast += 1
            elif np.isfinite(t) and t > D:
                a = t * price_j[c]
                s = switch_j[c]
                d = twin[c] if not paired else c  # a twin of the same time, no dearer
                while d != c:
                    if times[j, d] == t:
                        ad = t * price_j[d]
                        sd = switch_j[d]
                        if ad <= a and sd <= s and (ad < a or sd < s or d < c):
                            break
                    d = twin[d]
                if d == c:
                    slow[n_slow] = c
                    t2s[n_slow] = t
                    a2s[n_slow] = a
                    sw2[n_slow] = s
                    n_slow += 1
            if not np.isfinite(t):
                continue
            value[j, c] = t * price_j[c] + w * max(0.0, t - D)
        if n_fast == 0 or n_slow == 0:
            continue
        if paired:  # `_per_job_lp`'s loop as it is
            for i1 in range(n_fast):
                c1 = fast[i1]
                t1 = times[j, c1]
                a1 = t1 * price_j[c1]
                for i2 in range(n_slow):
                    c2 = slow[i2]
                    t2 = t2s[i2]
                    a2 = a2s[i2]
                    if a2 >= a1:
                        continue
                    f1 = (t2 - D) / (t2 - t1)
                    if partner[c2] == c1:
                        a = f1 * a1 + (1.0 - f1) * a2 + switch_j[c1]
                        if a < value[j, c2]:
                            value[j, c2] = a
                    else:
                        a = f1 * a1 + (1.0 - f1) * a2 + sw2[i2]
                        if a < value[j, c1]:
                            value[j, c1] = a
            continue
        for i1 in range(n_fast):
            c1 = fast[i1]
            t1 = times[j, c1]
            a1 = t1 * price_j[c1]
            for i2 in range(n_slow):  # every candidate (vectorised), then the least
                f1 = (t2s[i2] - D) / (t2s[i2] - t1)
                cand[i2] = f1 * a1 + (1.0 - f1) * a2s[i2] + sw2[i2]
            least = value[j, c1]
            for i2 in range(n_slow):
                a = cand[i2]
                least = a if (a2s[i2] < a1 and a < least) else least
            value[j, c1] = least
    return value


@njit(cache=True)
def _per_job_lp(times, slack, weight, price, share, switch, partner):  # pragma: no cover
    """`per_job_lp` (its values alone: `_plan_values`).
    `price`, `share` and `switch` are (1, C) (every job's) or (J, C) (row j job j's)."""
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
        price_j = price[j if price.shape[0] > 1 else 0]  # the job's row (or every job's)
        share_j = share[j if share.shape[0] > 1 else 0]
        switch_j = switch[j if switch.shape[0] > 1 else 0]
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
            a = t * price_j[c]
            late = w * max(0.0, t - D)
            value[j, c] = a + late
            ns = t * share_j[c]
            if _better(a + late, ns, best, best_ns):
                best, best_ns = a + late, ns
                vm[j], tard[j], dur[j] = a, late, t
                cfg[j, 0], cfg[j, 1] = c, -1
                frac[j, 0], frac[j, 1] = 1.0, 0.0
        for i1 in range(n_fast):  # fast: ends before the due date
            c1 = fast[i1]
            t1 = times[j, c1]
            a1 = t1 * price_j[c1]
            for i2 in range(n_slow):  # slow: ends after it
                c2 = slow[i2]
                t2 = times[j, c2]
                a2 = t2 * price_j[c2]
                if a2 >= a1:  # the slow one must be cheaper, or c1 alone is no worse
                    continue
                f1 = (t2 - D) / (t2 - t1)
                if partner[c2] == c1:  # spot first, then its own VM on demand
                    a = f1 * a1 + (1.0 - f1) * a2 + switch_j[c1]
                    if a < value[j, c2]:
                        value[j, c2] = a
                else:
                    a = f1 * a1 + (1.0 - f1) * a2 + switch_j[c2]
                    if a < value[j, c1]:
                        value[j, c1] = a
                ns = f1 * t1 * share_j[c1] + (1.0 - f1) * t2 * share_j[c2]
                if _better(a, ns, best, best_ns):
                    best, best_ns = a, ns
                    vm[j], tard[j], dur[j] = a, 0.0, D
                    cfg[j, 0], cfg[j, 1] = c1, c2
                    frac[j, 0], frac[j, 1] = f1, 1.0 - f1
    return value, vm, tard, cfg, frac, dur
