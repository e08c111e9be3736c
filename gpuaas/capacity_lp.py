"""The capacity LP of the lower bound (`gpuaas.bounds`, formulations/BOUND.md): its slot grid,
its arrays (`capacity_lp` -> `CapacityLP`) and its solution by HiGHS (`solve_capacity`).

x_jck = fraction of job j's remaining work done on configuration c in slot k; every job
completes; in a slot a job runs at most the slot's length after its release; the node-seconds
of a slot (a job on c = (v, g) fills g/G_v of a node) are at most N × the slot's length — which
implies the GPU-seconds row GPU-seconds ≤ N·max_v G_v·length; tardiness at least the per-job
term and at least ω_j·Σ x_jck·max(0, max(slot start, r_j) − due_j). The slots cover the horizon
up to when every job could be done (or still be running on its slowest configuration at its due
date) plus the time N nodes need for the least work; a last, open-ended slot takes whatever any
schedule does later (no capacity row there), so the LP is a relaxation whatever the horizon and
slot. Each job keeps only its non-dominated configurations (time, cost, node-seconds): a
dominated column can be replaced by its dominating one without breaking a row or raising the
cost. With spot capacity (`spot`, from `gpuaas.bounds.spot_capacity`) the node-seconds of spot
type v in slot k are at most the integral of v's count over the slot (`available_seconds`; a
row per type and slot whose integral is finite), and the spells' rows charge what the times
without capacity force on each job (`spell_rows`: time on a type at most its usable time per
slot, a restart per stretch its work outlives). With quotas (`gpuaas.catalog.Quota`) the GPUs
of the jobs on a quota's types in a regular slot, Σ x·t·g, are at most its GPUs × the slot's
length (a VM holds at least its jobs' GPUs, and the quota counts every GPU of its open VMs), and
a configuration under such a row is dominated only by those under none or the same
(`_kept`). With `tail=True` three more rows per job bound its tardiness by its mean busy time
plus half its fastest time and by its late tail (`tail_rows`; the windowed LP of
`gpuaas.bounds` has them).

At a time limit the LP's value is not reported; instead the bound is the Lagrangian value of
whatever dual vector HiGHS holds (`dual_bound`, valid for ANY multipliers once their signs
and the tardiness columns' reduced costs are repaired, because every x ≤ 1), or the per-job
bound if HiGHS holds none. The reported capacity value is that Lagrangian value even at
optimality, so solver tolerances never push it above the LP's true optimum by more than
floating-point rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import highspy
import numpy as np

from gpuaas.availability import UNLIMITED, Capacity
from gpuaas.errors import InputError, SolverError
from gpuaas.instance import Instance
from gpuaas.milp.highs import load_lp, new_highs
from gpuaas.milp.model import SparseLP
from gpuaas.per_job import bound_price, bound_share, effective_release
from gpuaas.per_job import rows as job_rows

#: the automatic slot is the smallest multiple of this (s) ...
SLOT_UNIT = 3600.0
#: ... for which the capacity LP has at most this many x-columns (BOUND.md: the trade-off); the
#: LPs of an adaptive grid after the first have at most as many (`gpuaas.bounds`, `refine_grid`)
MAX_COLUMNS = 50_000
#: a slot of an adaptive grid is cut into at most this many parts a round (`refine_grid`)
PARTS = 4
#: a given slot may not give one job more columns than this (memory, and HiGHS would not finish)
LIMIT_COLUMNS = 2_000_000
#: the longest automatic slot: a trace whose LP needs longer ones to fit MAX_COLUMNS is split
#: into groups of consecutive jobs, each group's LP on a common grid of this slot (BOUND.md)
GROUP_SLOT = 24 * 3600.0


@dataclass(eq=False)
class CapacityLP(SparseLP):
    """The capacity LP as arrays: columns x_jck (then T_j), rows as CSR, and the slot grid.

    Row families, in order: completion (J, = 1), per-job tardiness (J, >= -ω_j·D_j),
    slot tardiness (J, >= 0), node capacity (K, <= N·slot), per-slot job time (<= length).
    """

    slot: float  # the shortest slot (all of them on a uniform grid)
    start: float  # s_0 = edges[0]
    n_slots: int  # K regular slots
    edges: np.ndarray  # (K + 1,) s_0 .. s_K: slot k is [s_k, s_{k+1}), slot K = [s_K, inf)
    until: np.ndarray  # (J,) job j's open-ended column is at slot until_j <= K: [s_{until_j}, inf)
    n_x: int
    col_job: np.ndarray  # (n_x,) job of each x column
    col_cfg: np.ndarray
    col_slot: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    col_cost: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    indptr: np.ndarray  # CSR
    indices: np.ndarray
    data: np.ndarray
    n_jobs: int
    #: first rows of the later blocks of J rows holding T_j (the tail rows, `tail_rows`)
    tail_blocks: tuple[int, ...] = ()


def non_dominated(times: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """(J, C) mask of each job's configurations no other one beats on times and `others`.

    c is dominated when some c' is no worse on every criterion and better on one, or equal on
    all with a lower index; infinite times are never kept. Jobs are compared in chunks, so the
    (jobs, C, C) comparisons stay small whatever J.
    """
    J, C = times.shape
    out = np.zeros((J, C), dtype=bool)
    earlier = np.arange(C)[:, None] < np.arange(C)[None, :]
    step = max(1, 2_000_000 // max(1, C * C * (1 + len(others))))
    for a in range(0, J, step):
        crit = np.stack([x[a : a + step] for x in (times,) + others])  # (m, chunk, C)
        finite = np.isfinite(crit[0])
        # [j, c', c]: c' no worse than c on every criterion / better on one
        le = (crit[:, :, :, None] <= crit[:, :, None, :]).all(axis=0)
        lt = (crit[:, :, :, None] < crit[:, :, None, :]).any(axis=0)
        beats = le & (lt | earlier[None]) & finite[:, :, None]
        out[a : a + step] = finite & ~beats.any(axis=1)
    return out


def _horizon(instance: Instance, nodes: int, keep: np.ndarray, node_seconds: np.ndarray) -> float:
    """End of the regular slots (beyond it, only the open-ended slot): the latest time a job
    could still be running without idling — done on its fastest configuration, or still on its
    slowest one at its due date — plus the time N nodes need for every job's least node-seconds."""
    latest, load = _extent(instance, keep, node_seconds)
    return float(latest.max() + load.sum() / nodes)


def _extent(
    instance: Instance, keep: np.ndarray, node_seconds: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per job, the latest time it could still be running without idling and its least
    node-seconds (`_horizon`'s two terms)."""
    r = effective_release(instance)
    t = np.where(keep, instance.times, np.nan)
    tmin, tmax = np.nanmin(t, axis=1), np.nanmax(t, axis=1)
    latest = np.maximum(r + tmin, np.minimum(instance.due, r + tmax))
    return latest, np.where(keep, node_seconds, np.inf).min(axis=1)


def count_columns(
    first: np.ndarray, n_cfg: np.ndarray, start: float, end: float, slot: float
) -> int:
    """x-columns of the capacity LP with this slot: Σ_j n_cfg_j·(slots from r_j's to the last)."""
    K = max(1, math.ceil((end - start) / slot - 1e-9))
    kr = np.minimum(np.floor((first - start) / slot), K)
    return int((n_cfg * (K - kr + 1)).sum())


def auto_slot(
    first: np.ndarray,
    n_cfg: np.ndarray,
    start: float,
    end: float,
    max_columns: int = MAX_COLUMNS,
    unit: float = SLOT_UNIT,
) -> float:
    """The smallest multiple of `unit` for which the LP has at most `max_columns` x-columns
    (or one regular slot over the whole horizon, when even that has more)."""
    columns = lambda m: count_columns(first, n_cfg, start, end, m * unit)  # noqa: E731
    top = max(1, math.ceil((end - start) / unit))  # one regular slot: the fewest columns
    lo, hi = 1, 1
    while hi < top and columns(hi) > max_columns:
        lo, hi = hi + 1, min(hi * 2, top)
    while lo < hi:  # columns(m) is non-increasing in m
        mid = (lo + hi) // 2
        if columns(mid) <= max_columns:
            hi = mid
        else:
            lo = mid + 1
    return hi * unit


def _grid(
    instance: Instance, nodes: int, spot: dict[int, Capacity] | None = None
) -> tuple[Any, ...]:
    """(cost, node-seconds, kept configurations, their count per job) arrays and the start and
    end of the regular slots; the kept configurations are `_kept`'s."""
    t = instance.times
    with np.errstate(invalid="ignore"):
        cost, node_sec = t * bound_price(instance), t * bound_share(instance)
    limited = [v for v, cap in (spot or {}).items() if (cap.counts < UNLIMITED).any()]
    keep = _kept(instance, limited, t, cost, node_sec)
    start = float(effective_release(instance).min())
    return cost, node_sec, keep, keep.sum(axis=1), start, _horizon(instance, nodes, keep, node_sec)


def _kept(
    instance: Instance, limited: list[int], t: np.ndarray, cost: np.ndarray, node_sec: np.ndarray
) -> np.ndarray:
    """(J, C) each job's non-dominated configurations (`non_dominated` on time, cost and
    node-seconds). A configuration under rows of its own (a spot type of `limited` capacity,
    or a set of the catalog's quotas) is dominated only by those under no such row and by those
    under the same rows, so that moving work to the dominating one never breaks a row."""
    cat = instance.catalog
    key = np.concatenate(
        [np.isin(cat.cfg_vm, limited)[:, None] * (cat.cfg_vm[:, None] + 1),
         cat.quota_members.T[cat.cfg_vm]],
        axis=1,
    )  # fmt: skip
    free = ~key.any(axis=1)
    if free.all():
        return non_dominated(t, cost, node_sec)
    keep = non_dominated(np.where(free[None, :], t, np.inf), cost, node_sec)
    for row in np.unique(key[~free], axis=0):
        mine = (key == row).all(axis=1)
        group = non_dominated(np.where((free | mine)[None, :], t, np.inf), cost, node_sec)
        keep |= group & mine[None, :]
    return keep


def check_slot(
    instance: Instance, nodes: int, slot: float, spot: dict[int, Capacity] | None = None
) -> None:
    """InputError when `slot` would give one job more than LIMIT_COLUMNS columns of the capacity
    LP (a group of consecutive jobs holds at least one job, `capacity_groups`)."""
    _, _, _, n_cfg, start, end = _grid(instance, nodes, spot)
    _check_slot(effective_release(instance), n_cfg, start, end, slot)


def _check_slot(r: np.ndarray, n_cfg: np.ndarray, start: float, end: float, slot: float) -> None:
    K = max(1, math.ceil((end - start) / slot - 1e-9))
    n = int((n_cfg * (K - np.minimum(np.floor((r - start) / slot), K) + 1)).max())
    if n > LIMIT_COLUMNS:
        raise InputError(
            None,
            "slot",
            f"{slot:g} s gives a job {n} columns of the capacity LP (at most "
            f"{LIMIT_COLUMNS}); use a longer slot",
        )


def capacity_groups(
    instance: Instance,
    nodes: int,
    slot: float | None = None,
    spot: dict[int, Capacity] | None = None,
) -> tuple[float, float, list[np.ndarray]]:
    """(slot, start of the slot grid, groups of job indices) of the capacity LP.

    The slot is `slot`, else the smallest multiple of SLOT_UNIT for which the whole LP has at
    most MAX_COLUMNS x-columns, but at most GROUP_SLOT. When the whole LP has more columns at
    that slot, the jobs, in release order, are cut into consecutive groups of at most
    MAX_COLUMNS columns each (a job alone may have more), every group's LP on the same grid
    (the one of the whole trace): the sum of the groups' LP optima is then at most the whole
    LP's, and at least the per-job bound (BOUND.md, "Groups of consecutive jobs").
    """
    cost, node_sec, keep, n_cfg, start, end = _grid(instance, nodes, spot)
    r = effective_release(instance)
    if slot is None:
        L = min(auto_slot(r, n_cfg, start, end, MAX_COLUMNS), GROUP_SLOT)
    else:
        L = float(slot)
    if count_columns(r, n_cfg, start, end, L) <= MAX_COLUMNS:
        return L, start, [np.arange(instance.n_jobs)]
    latest, load = _extent(instance, keep, node_sec)
    first = np.floor((r - start) / L)
    order = np.argsort(r, kind="stable")
    cuts, hi, work, s1, s2 = [0], -math.inf, 0.0, 0, 0.0
    for at, j in enumerate(order):
        # the group's columns with j: Σ n_cfg·(K − first + 1), K its last slot (r <= latest)
        h, w = max(hi, latest[j]), work + load[j]
        K = max(1, math.ceil((h + w / nodes - start) / L - 1e-9))
        if at > cuts[-1] and (s1 + n_cfg[j]) * (K + 1) - s2 - n_cfg[j] * first[j] > MAX_COLUMNS:
            cuts.append(at)
            h, w, s1, s2 = latest[j], load[j], 0, 0.0
        hi, work, s1, s2 = h, w, s1 + n_cfg[j], s2 + n_cfg[j] * first[j]
    return L, start, np.split(order, cuts[1:])


def whole_slot(
    instance: Instance,
    nodes: int,
    spot: dict[int, Capacity] | None = None,
    unit: float = SLOT_UNIT,
) -> tuple[float, int]:
    """(`auto_slot`'s slot for the whole of `instance`, a multiple of `unit` (an explicit slot,
    so that its grid coarsens the groups'), the LP's x-columns at it): what `gpuaas.bounds`
    weighs before solving the whole trace's coarse LP beside its groups'."""
    _, _, _, n_cfg, start, end = _grid(instance, nodes, spot)
    r = effective_release(instance)
    L = auto_slot(r, n_cfg, start, end, MAX_COLUMNS, unit)
    return L, count_columns(r, n_cfg, start, end, L)


def capacity_lp(
    instance: Instance,
    nodes: int,
    slot: float | None = None,
    start: float | None = None,
    spot: dict[int, Capacity] | None = None,
    overhead: float = 0.0,
    startup: float = 0.0,
    edges: np.ndarray | None = None,
    until: np.ndarray | None = None,
    tail: bool = False,
) -> CapacityLP:
    """Build the capacity LP of `instance` on `nodes` nodes (module docstring, BOUND.md), with
    slots of `slot` seconds (default: `auto_slot`'s) on a grid that starts at `start` (default:
    the earliest release; otherwise at most it, so the grid of a whole trace serves its groups),
    or on the slots between the increasing `edges` s_0 < ... < s_K (an adaptive grid,
    `refine_grid`; s_0 at most the earliest release, s_K the start of the open-ended slot:
    every row holds for any slot boundaries), job j's regular slots ending at slot `until[j]`
    (default K; later slots are one open-ended column per configuration, as slot K: a
    relaxation, BOUND.md §2); `spot` (`spot_capacity`): a row per spot type
    and slot with finite capacity, and the spells' rows (`spell_rows`) for the run's restart
    `overhead` and VM `startup` (s); `tail`: the tail rows of each job's tardiness
    (`tail_rows`), after every other row.
    """
    J = instance.n_jobs
    t = instance.times
    r = effective_release(instance)
    d = instance.due
    w = instance.weight
    cost, node_sec, keep, n_cfg, earliest, end = _grid(instance, nodes, spot)
    if start is None:
        start = earliest
    else:  # the first slot holding a release, on the given grid
        start = float(start)
        if slot is not None:
            start += math.floor((earliest - start) / float(slot)) * float(slot)
    if edges is not None:
        s = np.asarray(edges, dtype=np.float64)
        if s.ndim != 1 or len(s) < 2 or not (np.diff(s) > 0).all() or s[0] > earliest:
            raise ValueError("edges must increase, from at most the earliest release")
        start, K = float(s[0]), len(s) - 1
        lengths = np.diff(s)
        L = float(lengths.min())
        first = np.minimum(np.searchsorted(s, r, side="right") - 1, K).astype(np.int64)
    else:
        if slot is None:
            L = auto_slot(r, n_cfg, start, end, MAX_COLUMNS)
        else:
            L = float(slot)
            _check_slot(r, n_cfg, start, end, L)
        K = max(1, math.ceil((end - start) / L - 1e-9))
        s = start + np.arange(K + 1) * L
        lengths = np.full(K, L)
        first = np.minimum(np.floor((r - start) / L), K).astype(np.int64)

    if until is None:
        u = np.full(J, K, dtype=np.int64)
    elif spot:
        raise ValueError("until is not combined with spot capacity rows")
    else:
        u = np.clip(np.asarray(until, dtype=np.int64), first, K)
    # x columns: (j, c) pairs in job order, each over slots first_j .. u_j (u_j: open-ended)
    pj, pc = np.nonzero(keep)
    owner, ck = _ranges(first[pj], u[pj] + 1)
    n_x = len(ck)
    cj, cc = pj[owner], pc[owner]
    tt = t[cj, cc]
    late = np.maximum(0.0, np.maximum(s[ck], r[cj]) - d[cj])
    regular = ck < u[cj]

    # rows: completion j, per-job tardiness J + j, slot tardiness 2J + j, capacity 3J + k,
    # then per-slot time rows, only for (j, k) whose length after r_j is below j's longest time
    ids = np.arange(n_x)
    pair_job, pair_slot = _ranges(first, u)
    cap_len = s[pair_slot + 1] - np.maximum(s[pair_slot], r[pair_job])
    tmax = np.where(keep, t, -np.inf).max(axis=1)
    need = cap_len < tmax[pair_job]
    n_pairs = np.maximum(u - first, 0)  # (j, k) pairs in job order, k = first_j .. u_j - 1
    pair_of = np.concatenate(([0], np.cumsum(n_pairs)[:-1]))[cj] + ck - first[cj]
    row_of_pair = np.where(need, 3 * J + K + np.cumsum(need) - 1, -1)
    trow = np.full(n_x, -1, dtype=np.int64)  # per-slot time row of each column, -1: none
    trow[regular] = row_of_pair[pair_of[regular]]
    has_t = trow >= 0
    has_late = late > 0

    rows = [cj, J + cj, 2 * J + cj[has_late], 3 * J + ck[regular], trow[has_t]]
    cols = [ids, ids, ids[has_late], ids[regular], ids[has_t]]
    vals = [
        np.ones(n_x),
        -w[cj] * tt,
        -w[cj[has_late]] * late[has_late],
        node_sec[cj[regular], cc[regular]],
        tt[has_t],
    ]
    n_rows = 3 * J + K + int(need.sum())
    spot_upper = []  # the upper ends of the spot types' rows, then of the quotas' rows
    cat = instance.catalog
    for v, cap in sorted((spot or {}).items()):
        of_v = cat.cfg_vm[cc] == v
        for k in range(K + 1):
            room = available_seconds(cap, s[k], math.inf if k == K else s[k + 1])
            hit = of_v & (ck == k)
            if math.isfinite(room) and hit.any():
                rows.append(np.full(int(hit.sum()), n_rows))
                cols.append(ids[hit])
                vals.append(node_sec[cj[hit], cc[hit]])
                spot_upper.append(room)
                n_rows += 1
    # each quota's GPUs in each regular slot: the jobs on its types hold at most its GPUs at
    # any time (`gpuaas.catalog.Quota`), so Σ x·t·g over them is at most Q × the slot's length
    for q, members in enumerate(cat.quota_members):
        of_q = members[cat.cfg_vm[cc]] & regular
        for k in np.unique(ck[of_q]).tolist():
            hit = of_q & (ck == k)
            rows.append(np.full(int(hit.sum()), n_rows))
            cols.append(ids[hit])
            vals.append(tt[hit] * cat.cfg_gpus[cc[hit]])
            spot_upper.append(float(cat.quotas[q].gpus) * float(lengths[k]))
            n_rows += 1
    T_cols = n_x + np.arange(J)
    rows += [J + np.arange(J), 2 * J + np.arange(J)]
    cols += [T_cols, T_cols]
    vals += [np.ones(J), np.ones(J)]
    spells = spell_rows(
        instance,
        keep,
        spot or {},
        s,
        first,
        cj,
        cc,
        ck,
        n_x + J,
        n_rows,
        overhead,
        startup,
    )
    rows += spells.rows
    cols += spells.cols
    vals += spells.vals
    n_rows += len(spells.lower)
    tail_lower: list[np.ndarray] = []
    blocks: list[int] = []
    if tail:
        at = np.maximum(s[ck], r[cj])  # work in a column happens at or after this
        for coef, lower in tail_rows(instance, cj, at):
            rows += [n_rows + cj, n_rows + np.arange(J)]
            cols += [ids, T_cols]
            vals += [coef, np.ones(J)]
            tail_lower.append(lower)
            blocks.append(n_rows)
            n_rows += J
    row_lower = np.concatenate(
        [
            np.ones(J),
            -w * (d - r),
            np.zeros(J),
            np.full(K, -np.inf),
            np.full(int(need.sum()), -np.inf),
            np.full(len(spot_upper), -np.inf),
            np.asarray(spells.lower, dtype=np.float64),
            *tail_lower,
        ]
    )
    row_upper = np.concatenate(
        [
            np.ones(J),
            np.full(2 * J, np.inf),
            nodes * lengths,
            cap_len[need],
            np.asarray(spot_upper, dtype=np.float64),
            np.asarray(spells.upper, dtype=np.float64),
            np.full(J * len(blocks), np.inf),
        ]
    )
    R = np.concatenate(rows)
    Cc = np.concatenate(cols)
    V = np.concatenate(vals)
    if tail:  # a tail row's coefficient may be 0 (work before the due date)
        nz = V != 0.0
        R, Cc, V = R[nz], Cc[nz], V[nz]
    order = np.lexsort((Cc, R))
    indptr = np.concatenate(([0], np.cumsum(np.bincount(R, minlength=n_rows)))).astype(np.int64)
    return CapacityLP(
        slot=L,
        start=start,
        n_slots=K,
        edges=s,
        until=u,
        n_x=n_x,
        col_job=cj,
        col_cfg=cc,
        col_slot=ck,
        col_lower=np.zeros(n_x + J + len(spells.col_upper)),
        col_upper=np.concatenate(
            [np.ones(n_x), np.full(J, np.inf), np.asarray(spells.col_upper, dtype=np.float64)]
        ),
        col_cost=np.concatenate(
            [cost[cj, cc], np.ones(J), np.asarray(spells.col_cost, dtype=np.float64)]
        ),
        row_lower=row_lower,
        row_upper=row_upper,
        indptr=indptr,
        indices=Cc[order].astype(np.int32),
        data=V[order].astype(np.float64),
        n_jobs=J,
        tail_blocks=tuple(blocks),
    )


#: the tangent points ρ of the late-tail rows (`tail_rows`)
TAIL_RHOS = (0.5, 1.0)


def tail_rows(
    instance: Instance, cj: np.ndarray, at: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(coefficients of the x columns, lower end) of each family of the tail rows
    T_j − Σ coef·x ≥ lower, one row per job (BOUND.md §2, "The tail rows"); column i is of job
    `cj[i]` and its work happens at or after `at[i]`.

    Let W(τ) be the part of job j's work done by time τ (the x of the columns before τ; with
    lost work, seconds / (t·F), which only slows it), C_j its completion and
    t_min = min_c t_jc. W rises at most 1/t_min a second, so after w of the work is done the
    rest takes at least (1 − w)·t_min: C_j ≥ τ(w) + (1 − w)·t_min for every w, hence
    max(0, C_j − d_j) ≥ ∫_0^1 max(0, τ(w) + (1 − w)·t_min − d_j) dw. Bounding τ(w) below by
    the `at` of the column its work is in:

    - mean busy time: C_j ≥ Σ x·at + t_min/2, so T_j ≥ ω_j·(Σ x·at + t_min/2 − d_j);
    - late tail: the columns with at ≥ d_j hold the last R = Σ of their x of the work, each
      piece late by at − d_j + (1 − w)·t_min, so
      T_j ≥ ω_j·(Σ x·max(0, at − d_j) + t_min·R²/2) ≥ ω_j·(Σ x·max(0, at − d_j)
      + t_min·(ρ·R − ρ²/2)) for each ρ of `TAIL_RHOS` (tangents of the convex R²/2).
    """
    t = instance.times
    tmin = np.where(np.isfinite(t), t, np.inf).min(axis=1)
    tmin = np.where(np.isfinite(tmin), tmin, 0.0)
    d, w = instance.due, instance.weight
    out = [(-w[cj] * at, w * (tmin / 2.0 - d))]
    late = at >= d[cj]
    for rho in TAIL_RHOS:
        coef = -w[cj] * (np.maximum(0.0, at - d[cj]) + np.where(late, rho * tmin[cj], 0.0))
        out.append((coef, -w * tmin * rho * rho / 2.0))
    return out


def _ranges(lo: np.ndarray, hi: Any) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated ranges lo_i .. hi_i - 1 (hi: one int or one per range): (owner i, value)
    of every element."""
    n = np.maximum(hi - lo, 0)
    owner = np.repeat(np.arange(len(lo)), n)
    return owner, lo[owner] + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)


def to_highs(lp: CapacityLP) -> highspy.Highs:
    """A highspy.Highs holding `lp`, output off."""
    h = new_highs()
    load_lp(h, lp)
    return h


def solve_capacity(lp: CapacityLP, time_limit: float) -> tuple[float | None, str]:
    """(valid lower bound or None, status) of the capacity LP solved by HiGHS within `time_limit`."""
    value, status, _, _ = solve_point(lp, time_limit)
    return value, status


def solve_point(
    lp: CapacityLP, time_limit: float
) -> tuple[float | None, str, np.ndarray | None, np.ndarray | None]:
    """`solve_capacity`'s (bound, status) and HiGHS's column values and row duals (None when it
    holds no dual solution), which `refine_grid` reads."""
    h = to_highs(lp)
    h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    if h.run() == highspy.HighsStatus.kError:
        raise SolverError(
            f"HiGHS failed on the capacity LP: {h.modelStatusToString(h.getModelStatus())}"
        )
    ms = h.getModelStatus()
    if ms == highspy.HighsModelStatus.kOptimal:
        status = "optimal"
    elif ms in (
        highspy.HighsModelStatus.kTimeLimit,
        highspy.HighsModelStatus.kIterationLimit,
        highspy.HighsModelStatus.kInterrupt,
    ):
        status = "time_limit"
    else:  # the LP is feasible by construction (everything may go to the last slot)
        raise SolverError(f"HiGHS: capacity LP {h.modelStatusToString(ms)}")
    info = h.getInfo()
    if info.dual_solution_status == highspy.SolutionStatus.kSolutionStatusNone:
        return None, status, None, None
    solution = h.getSolution()
    y = np.asarray(solution.row_dual, dtype=np.float64)
    if len(y) != lp.n_rows or not np.isfinite(y).all():
        return None, status, None, None
    x = np.asarray(solution.col_value, dtype=np.float64)
    return dual_bound(lp, y), status, (x if len(x) == lp.n_cols else None), y


def dual_bound(lp: CapacityLP, y: np.ndarray) -> float:
    """The Lagrangian bound of the capacity LP at row multipliers `y` (any y: repaired first).

    For min c·x, lower <= A x <= upper, col_lower <= x <= col_upper, every y gives
    c·x >= Σ_i y_i·(A x)_i + Σ_j (c − Aᵀy)_j·x_j >= Σ_i min over the row's range of y_i·(Ax)_i
    + Σ_j min over the column's range of (c − Aᵀy)_j·x_j, finite when y_i > 0 only on rows with a
    lower bound, y_i < 0 only on rows with an upper bound (else set to 0), and no column with an
    infinite upper bound has a negative reduced cost: T_j (cost 1, +1 in its two tardiness
    rows) needs y_tard1 + y_tard2 <= 1, so both are scaled down when they exceed it.
    """
    y = np.array(y, dtype=np.float64)
    y[(y > 0) & ~np.isfinite(lp.row_lower)] = 0.0
    y[(y < 0) & ~np.isfinite(lp.row_upper)] = 0.0
    J = lp.n_jobs
    # views: >= rows, so y >= 0 there already
    blocks = [y[J : 2 * J], y[2 * J : 3 * J]] + [y[b : b + J] for b in lp.tail_blocks]
    s = np.sum(blocks, axis=0)
    over = s > 1.0
    for block in blocks:
        block[over] /= s[over]
    row_of = np.repeat(np.arange(lp.n_rows), np.diff(lp.indptr))
    reduced = lp.col_cost - np.bincount(
        lp.indices, weights=lp.data * y[row_of], minlength=lp.n_cols
    )
    row_part = np.where(
        y > 0, y * np.where(y > 0, lp.row_lower, 0.0), y * np.where(y < 0, lp.row_upper, 0.0)
    )
    reduced[(reduced < 0) & ~np.isfinite(lp.col_upper)] = 0.0  # rounding only, after the repair
    neg = reduced < 0
    col_part = np.where(neg, reduced * np.where(neg, lp.col_upper, 0.0), reduced * lp.col_lower)
    return float(math.fsum(row_part) + math.fsum(col_part))


def available_seconds(cap: Capacity, a: float, b: float) -> float:
    """∫ count dt over [a, b) (inf when the count is unlimited there or b is inf and the last
    count is not 0)."""
    times, counts = cap.times, cap.counts
    if b == math.inf:
        if counts[-1] > 0:
            return math.inf
        b = max(a, float(times[-1]))
    edges = np.clip(np.append(times, math.inf), a, b)
    span = np.diff(edges)
    used = span > 0
    if (counts[used] >= UNLIMITED).any():
        return math.inf
    return float(np.sum(span[used] * counts[used]))


def stretches(cap: Capacity, since: float, startup: float) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the times a VM of the type can run jobs: each maximal interval with a
    count above 0, less the `startup` at its start when it starts after `since` (a VM that runs
    then was opened in it and runs jobs `startup` s after opening; one may already run at
    `since`); the last end is inf when the count after the data is not 0."""
    pos = np.concatenate(([0], (cap.counts > 0).astype(np.int8), [0]))
    step = np.diff(pos)
    edges = np.append(cap.times, math.inf)
    a = edges[np.flatnonzero(step == 1)]
    b = edges[np.flatnonzero(step == -1)]
    a = np.where(a > since, a + startup, a)
    usable = a < b
    return a[usable], b[usable]


def _measure(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The length of the stretches [a_i, b_i) (sorted, disjoint) before each time in `t`."""
    if len(a) == 0:
        return np.zeros_like(t)
    cum = np.concatenate(([0.0], np.cumsum(b - a)))  # only the last stretch may be endless
    i = np.searchsorted(a, t, side="left")  # stretches starting before t
    prev = np.maximum(i - 1, 0)
    return np.where(i > 0, cum[prev] + np.minimum(t, b[prev]) - a[prev], 0.0)


def _pieces(
    lam: np.ndarray, cap: float, o: float, p: float, col: int
) -> list[tuple[int, float, float]]:
    """(column, slope, constant) of each piece of `spell_rows`' (b) that N_E ≤ `cap` can
    reach, for the stretch lengths `lam` sorted down."""
    out: list[tuple[int, float, float]] = []
    g = float(lam[0]) if lam.size else 0.0
    m = 0
    while m + 1 < lam.size and g < cap and lam[m + 1] > o:
        delta = float(lam[m + 1]) - o
        slope = o * p / delta
        out.append((col, slope, o * p * m - slope * g))
        g += delta
        m += 1
    return out


@dataclass
class _Spells:
    """The rows and extra columns `spell_rows` adds to the capacity LP."""

    rows: list[np.ndarray]
    cols: list[np.ndarray]
    vals: list[np.ndarray]
    lower: list[float]
    upper: list[float]
    col_upper: list[float]
    col_cost: list[float]


def spell_rows(
    instance: Instance,
    keep: np.ndarray,
    spot: dict[int, Capacity],
    edges: np.ndarray,
    first: np.ndarray,
    cj: np.ndarray,
    cc: np.ndarray,
    ck: np.ndarray,
    col0: int,
    row0: int,
    overhead: float,
    startup: float,
) -> _Spells:
    """What any schedule pays for the spells of the spot capacity it replays (BOUND.md §4).

    A VM of spot type v exists only while v's count is above 0 (every one is lost when it
    falls to 0) and runs jobs `startup` s after it opens (`stretches`: the usable stretches).
    Job j runs on one configuration at a time, so per regular slot k

    (a) Σ_{c of v} x_jck·t_jc ≤ |usable stretches of v ∩ slot k, from r_j on|.

    Restarts. Cut job j's running on v into segments (one configuration, one VM, no break);
    each lies in one usable stretch. Every segment but the job's last ends in a restart
    (moved, preempted or its VM lost: `gpuaas.reconfiguration`), which loses
    min(progress, overhead) s of work on the segment's configuration; progress ≥ the
    segment's own d_i s, so ≥ min(d_i, o) of the segment's own seconds are lost. Count them as
    the segment's last seconds: the *net* work (the rest) still completes the job (the loss
    at the restart is at least this), costs the net columns' price, and the lost seconds cost
    ≥ min(d_i, o)·p_jv on top, p_jv the least share price of v among j's configurations
    (`bound_price`). Before a time E, with λ_1 ≥ λ_2 ≥ … the lengths of v's usable stretches
    within [r_j, E): the v-segments before E with d_i > o (m of them, each charged o·p_jv)
    and the last one before E are all the net v-time there; they fill at most m + 1
    stretches (segments sharing a stretch share its length), so the net v-time before E is

        N_E ≤ g(m) = λ_1 + Σ_{i=2}^{m+1} (λ_i − o),    hence also N_E ≤ g_max = sup_m g(m).

    g is concave (λ_i non-increasing), so the least charge o·p_jv·m with g(m) ≥ N_E is at
    least the convex piecewise-linear function through (g(m), o·p_jv·m):

    (b) R_jv ≥ o·p_jv·(m + (N_E − g(m)) / (λ_{m+2} − o))   for each m with λ_{m+2} > o,

    one row per piece that N_E ≤ min(g_max, the longest time of j on v) can reach, with
    R_jv ≥ 0 (cost 1) charged once per job and type (every E's charge is part of the same
    restarts'), and N_E (one column per boundary s_{f+1}, s_{f+2}, … of the regular slots,
    f = j's first, chained: N_{s_{k+1}} = N_{s_k} + the slot's v-time) at most that cap. A
    prefix E whose longest stretch holds the job's longest time on v constrains nothing (nor
    does any later one): the chain stops before it. Pieces and caps are written at s_{f+1},
    s_{f+2}, s_{f+4}, s_{f+8}, … and the last prefix (every one: 6 x the rows for 0.6 % more
    bound on `tests/test_spot_bound.py`'s short spells); the others' N_E only carry the sums.
    Lost work (`since_checkpoint`) beyond the overhead is not charged: a checkpoint on notice
    or continuous checkpoints avoid it. The start-up is charged only through (a)'s stretches:
    a job restarting on another type may land on a VM already up. Every x, N, R is boxed
    (N ≤ the cap, R ≤ its largest piece there), so `dual_bound` stays valid.
    """
    out = _Spells([], [], [], [], [], [], [])
    if not spot:
        return out
    t = instance.times
    r = effective_release(instance)
    share = bound_price(instance)
    cfg_vm = instance.catalog.cfg_vm
    K = len(edges) - 1  # edges: s_0 .. s_K (s_K: start of the open-ended slot)
    job_lo = np.searchsorted(cj, np.arange(instance.n_jobs), side="left")
    job_hi = np.searchsorted(cj, np.arange(instance.n_jobs), side="right")
    o = float(overhead)
    n_cols, n_rows = col0, row0

    def add_rows(n: int, row: np.ndarray, cols: np.ndarray, vals: np.ndarray, lo, hi) -> None:
        """n rows: entries (n_rows + row, cols, vals), bounds lo and hi (scalars or n each)."""
        nonlocal n_rows
        out.rows.append(n_rows + np.asarray(row, dtype=np.int64))
        out.cols.append(np.asarray(cols, dtype=np.int64))
        out.vals.append(np.asarray(vals, dtype=np.float64))
        out.lower.extend(np.broadcast_to(np.asarray(lo, dtype=np.float64), n).tolist())
        out.upper.extend(np.broadcast_to(np.asarray(hi, dtype=np.float64), n).tolist())
        n_rows += n

    for v, cap in sorted(spot.items()):
        if not (cap.counts == 0).any():
            continue  # never a spell: the slot rows say it all
        a, b = stretches(cap, float(instance.time), float(startup))
        of_v = cfg_vm == v
        mine = keep & of_v[None, :]
        tmax_v = np.where(mine, t, -np.inf).max(axis=1)  # per job; -inf: no configuration
        # (a), per job and slot from its first, where it says more than the slot's length
        # after r_j and j's longest time on v
        lo = np.maximum(edges[None, :K], r[:, None])
        hi = np.broadcast_to(edges[None, 1:], lo.shape)
        room = (_measure(a, b, hi.ravel()) - _measure(a, b, lo.ravel())).reshape(lo.shape)
        need = (np.arange(K)[None, :] >= first[:, None]) & (
            room < np.minimum(tmax_v[:, None], hi - lo)
        )
        on_v = np.flatnonzero(of_v[cc] & (ck < K))
        hit = on_v[need[cj[on_v], ck[on_v]]]
        if hit.size:
            rank = (np.cumsum(need.ravel()) - 1).reshape(need.shape)
            add_rows(
                int(need.sum()),
                rank[cj[hit], ck[hit]],
                hit,
                t[cj[hit], cc[hit]],
                -np.inf,
                room[need],
            )
        if o <= 0:
            continue
        for j in np.flatnonzero(np.isfinite(tmax_v)):
            tmax = float(tmax_v[j])
            p = float(job_rows(share, j)[np.isfinite(t[j]) & of_v].min())
            ids = np.arange(job_lo[j], job_hi[j])
            ids = ids[of_v[cc[ids]] & (ck[ids] < K)]  # j's regular columns on v
            f = int(first[j])
            slot = ck[ids] - f  # 0 .. K - f - 1
            # (b): prefixes E = s_{f+1} .. s_K while the longest stretch in [r_j, E) < tmax
            near = (b > r[j]) & (a < edges[K])
            sa, sb = np.maximum(a[near], r[j]), b[near]
            ends = edges[f + 1 : K + 1]
            if sa.size:
                longest = np.max(np.minimum(sb[None, :], ends[:, None]) - sa[None, :], axis=1)
                n_e = int(np.argmax(longest >= tmax)) if (longest >= tmax).any() else len(ends)
            else:
                n_e = len(ends)
            if n_e == 0:
                continue
            prefixes = sorted(
                {(1 << i) - 1 for i in range(n_e.bit_length()) if (1 << i) <= n_e} | {n_e - 1}
            )
            caps = np.full(n_e, tmax)
            pieces: list[tuple[int, float, float]] = []  # (prefix, slope, constant)
            for i in prefixes:
                lam = np.minimum(sb, ends[i]) - sa
                lam = -np.sort(-lam[lam > 0])
                g_max = (float(lam[0]) if lam.size else 0.0) + float(
                    np.maximum(lam[1:] - o, 0.0).sum()
                )
                caps[i] = min(tmax, g_max)
                pieces += _pieces(lam, caps[i], o, p, i)
            if not pieces:
                continue
            n_e = max(i for i, _, _ in pieces) + 1
            N = n_cols + np.arange(n_e)  # N_E per prefix, chained: N_i = N_{i-1} + slot f+i
            R = n_cols + n_e
            n_cols += n_e + 1
            inside = slot < n_e
            add_rows(
                n_e,
                np.concatenate([np.arange(n_e), np.arange(1, n_e), slot[inside]]),
                np.concatenate([N, N[:-1], ids[inside]]),
                np.concatenate([np.ones(n_e), -np.ones(n_e - 1), -t[j, cc[ids[inside]]]]),
                0.0,
                0.0,
            )
            out.col_upper.extend(caps[:n_e])
            out.col_cost.extend([0.0] * n_e)
            at = np.array([i for i, _, _ in pieces])
            slope = np.array([x for _, x, _ in pieces])
            const = np.array([c for _, _, c in pieces])
            k = np.arange(len(pieces))
            add_rows(  # R - slope·N_E >= const
                len(k),
                np.concatenate([k, k]),
                np.concatenate([np.full(len(k), R), N[at]]),
                np.concatenate([np.ones(len(k)), -slope]),
                const,
                np.inf,
            )
            out.col_upper.append(max(float(np.max(slope * caps[at] + const)), 0.0))
            out.col_cost.append(1.0)
    return out


def refine_grid(
    instance: Instance,
    lp: CapacityLP,
    x: np.ndarray,
    y: np.ndarray,
    unit: float,
    max_columns: int,
    shrink: bool = False,
) -> tuple[np.ndarray, np.ndarray] | None:
    """(edges, until) of the next LP of an adaptive grid (`capacity_lp`), from `lp`'s optimum
    `x` and row duals `y`, or None when nothing changes.

    Slots where the grid constrains that optimum are cut in two: those whose capacity row binds
    and those holding work of a job due before their end (the slot charges it tardiness from
    its start only) — more of its time there than the slot holds before that date. Slots of
    at most `unit` s stay; the others are cut into up to PARTS parts at multiples of `unit`
    from the slot's start. Each job's regular slots end one slot after its last work (its later work
    goes to its open-ended column; with `shrink` only, else they never end earlier than in
    `lp`), or at s_K when it has work in its open-ended column, so the columns go where the
    work is. Cuts are taken earliest first while the LP has at most
    `max_columns` x-columns. Any grid gives a valid bound: this only chooses where to look.
    """
    J, K, s, u = lp.n_jobs, lp.n_slots, lp.edges, lp.until
    xs = x[: lp.n_x]
    cj, ck = lp.col_job, lp.col_slot
    used = xs > 1e-9
    last = np.full(J, -1, dtype=np.int64)
    np.maximum.at(last, cj[used], ck[used])
    open_col = ck == u[cj]
    n_cfg = np.bincount(cj[open_col], minlength=J)  # one open-ended column per kept configuration
    end = np.where(last >= u, math.inf, s[np.minimum(last + 2, K)])
    if not shrink:  # windows only grow: a job's regular slots keep what it had
        end = np.maximum(end, np.where(u >= K, math.inf, s[u]))

    marked = np.abs(y[3 * J : 3 * J + K]) > 1e-9
    # (j, k): j's time in regular slot k beyond the part of k before its due date
    work = np.flatnonzero(used & ~open_col)
    pair = cj[work] * (K + 1) + ck[work]
    pairs, at = np.unique(pair, return_inverse=True)
    seconds = np.bincount(at, weights=xs[work] * instance.times[cj[work], lp.col_cfg[work]])
    pj, pk = pairs // (K + 1), pairs % (K + 1)
    r = effective_release(instance)
    before = np.maximum(instance.due[pj] - np.maximum(s[pk], r[pj]), 0.0)
    late = (seconds > before + 1e-6 * np.maximum(seconds, 1.0)) & (instance.weight[pj] > 0)
    marked[pk[late]] = True
    length = np.diff(s)
    cut = np.flatnonzero(marked & (length > unit * (1 + 1e-9)))
    units = length[cut] / unit
    parts = np.minimum(np.ceil(units - 1e-9), PARTS).astype(np.int64)
    owner, i = _ranges(np.ones(len(cut), dtype=np.int64), parts)
    mids = s[cut][owner] + unit * np.floor(units[owner] * i / parts[owner])
    mids = mids[(mids > s[cut][owner]) & (mids < s[cut + 1][owner])]

    def grid(n: int) -> tuple[np.ndarray, np.ndarray, int]:
        e = np.sort(np.concatenate((s, mids[:n])))
        k = len(e) - 1
        first = np.minimum(np.searchsorted(e, r, side="right") - 1, k)
        until = np.maximum(np.minimum(np.searchsorted(e, end, side="left"), k), first)
        return e, until, int((n_cfg * (until - first + 1)).sum())

    lo, hi = 0, len(mids)  # the most cuts within the budget (columns grow with every cut)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if grid(mid)[2] <= max_columns:
            lo = mid
        else:
            hi = mid - 1
    edges, until, columns = grid(lo)
    if columns > max_columns or (lo == 0 and np.array_equal(until, u)):
        return None
    return edges, until
