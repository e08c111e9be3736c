"""Clairvoyant admission: start times of a list schedule, to replay a trace with (issue 43).

`admission_times(trace, ...)` computes in hindsight, every release and duration known, a start
time s_j >= release_j for every job: a serial list schedule (serial schedule generation) on the
trace's N nodes, each job at one configuration (its duration t_jc and node share g/G_v there,
`gpuaas.per_job.capacity_gpus`; `job_configs`), jobs in order of a priority key (`priority`: the
latest start due_j - t_jc, heavier jobs earlier), each started at the earliest time >= its release at which the nodes' capacity
profile holds it for its whole duration (non-preemptive). `admitted(trace, s)` is a copy of the
trace whose releases are s (due dates, weights and work unchanged).

Running a method on the admitted copy gives a complete schedule of the ORIGINAL trace: no job
starts before its admission, so before its true release, and the simulator bills VM time and
ω_j·max(0, C_j - due_j) (and egress), none of which depends on the release; so the run's total
cost is the cost of that schedule of the original trace (`tests/test_upper.py` checks it
against the original trace's due dates and weights).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit

from gpuaas.instance import Instance
from gpuaas.per_job import capacity_gpus, per_job_plan, share_price, single_costs


def job_configs(trace: Instance, how: str = "packed") -> np.ndarray:
    """(J,) the configuration each job is scheduled at. "packed": the per-job optimum (its VM
    share plus its tardiness run alone from its release) among the configurations of the
    largest VM types, where a job's node share is g/G (a job alone on a 1-GPU type holds a
    whole node of the N, and the runs pack jobs onto the large types); a job that cannot run
    on them, its cheapest configuration. "plan": the per-job bound's main configuration
    (`gpuaas.per_job`), which on the ITP traces is mostly a 1-GPU type, a whole node each: its
    list schedule delays jobs by days (ITP cluster 5: 50 h on average), not kept."""
    times = trace.times
    if how == "plan":
        plan = per_job_plan(trace)
        a, b = plan.cfg[:, 0], plan.cfg[:, 1]
        return np.where((b >= 0) & (plan.fraction[:, 0] < 0.5), b, a)
    if how != "packed":
        raise ValueError(f"unknown configuration rule {how!r}")
    cat = trace.catalog
    big = cat.gpus[cat.cfg_vm] == cat.gpus.max()
    alone = np.where(np.isfinite(times), times * share_price(trace), np.inf)
    cost = np.where(big, single_costs(trace), np.inf)
    some = np.isfinite(cost).any(axis=1)
    return np.where(some, np.argmin(cost, axis=1), np.argmin(alone, axis=1))


def admission_times(
    trace: Instance,
    scale: float = 1.0,
    configs: str = "packed",
    key: np.ndarray | None = None,
    nodes: int | None = None,
) -> np.ndarray:
    """(J,) start times s_j >= release_j of the list schedule (module docstring) on `scale` x
    N nodes (`nodes`, default the trace's), each job at its configuration of `job_configs`
    (`configs`); `key`: the jobs' priority, smallest first (default `priority`)."""
    cfg = job_configs(trace, configs)
    J = trace.n_jobs
    rows = np.arange(J)
    dur = trace.times[rows, cfg]
    share = capacity_gpus(trace)
    need = share[cfg] if share.ndim == 1 else share[rows, cfg]
    n = trace.nodes if nodes is None else nodes
    cap = float(scale) * n * float(max(1, trace.catalog.gpus.max()))
    need = np.minimum(need, cap)  # a job larger than the scaled capacity runs alone
    rel = np.maximum(trace.release, trace.time)
    key = priority(trace, dur) if key is None else key
    order = np.lexsort((np.arange(J), rel, key))
    return _serial(rel[order], dur[order], need[order], cap, order, J)


def priority(trace: Instance, duration: np.ndarray) -> np.ndarray:
    """The list schedule's default priority (smallest first): the latest start due_j - t_j,
    an hour earlier per factor e of weight above the median (heavier jobs first)."""
    w = np.maximum(trace.weight, 1e-300)
    mid = max(float(np.median(w)), 1e-300)
    return trace.due - duration - 3600.0 * np.log(w / mid)


@njit(cache=True)
def _after(T, K, x):  # pragma: no cover - compiled
    """The last breakpoint index i < K with T[i] <= x (T[0] <= x)."""
    lo, hi = 0, K - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if T[mid] <= x:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True)
def _serial(rel, dur, need, cap, order, J):  # pragma: no cover - compiled
    """Serial schedule generation: jobs in the given order, each at the earliest t >= its
    release where the usage profile plus its need stays within `cap` on [t, t + duration).
    The profile: breakpoints T[0 .. K-1] (T[0] = 0), usage U[i] on [T[i], T[i+1]); U[K-1] = 0
    (the last breakpoint is some job's end)."""
    T = np.zeros(2 * J + 2)
    U = np.zeros(2 * J + 2)
    K = 1
    out = np.empty(J)
    for k in range(J):
        r, p, d = rel[k], dur[k], need[k]
        i = _after(T, K, r)
        t = r
        j = i
        while j < K and T[j] < t + p:  # an interval too full: start at its end instead
            if U[j] + d > cap + 1e-9:
                i = j + 1  # exists: U[K-1] = 0 and d <= cap
                t = T[i]
                j = i
            else:
                j += 1
        out[order[k]] = t
        for x in (t, t + p):  # both become breakpoints
            lo = _after(T, K, x)
            if T[lo] != x:
                for m in range(K, lo + 1, -1):
                    T[m] = T[m - 1]
                    U[m] = U[m - 1]
                T[lo + 1] = x
                U[lo + 1] = U[lo]
                K += 1
        m = _after(T, K, t)
        while m < K and T[m] < t + p:
            U[m] += d
            m += 1
    return out


def admitted(trace: Instance, start: np.ndarray) -> Instance:
    """A copy of `trace` whose releases are `start` (each at least the job's release)."""
    start = np.asarray(start, dtype=float)
    if start.shape != trace.release.shape or np.any(start < trace.release):
        raise ValueError("an admission time before its job's release")
    return dataclasses.replace(trace, release=start)
