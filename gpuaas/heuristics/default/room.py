"""Whether jobs queue for capacity, which can wait for a completion, and whom to free for them.

Keep rules 2 (shrink) and 3 (grow) of `gpuaas.heuristics.default.keep` free running jobs for
waiting ones, and only as many as it takes: `queued` says whether free capacity leaves waiting
jobs unseated, `patient` which of them a running job's completion seats soon enough at no cost
to them, and `make_room` which running jobs, taken cheapest first, seat the rest. Reasons and
measurements: docs/reconfiguration.md, "Making room" and "Waiting for room".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from gpuaas.instance import Instance
from gpuaas.pricing import fill_price, plan_values_at, queue_price


def largest_gpus(instance: Instance) -> np.ndarray:
    """(GPU models,) the GPUs of each GPU model's largest VM type."""
    cat = instance.catalog
    largest = np.zeros(int(cat.gpu_model_id.max()) + 1, dtype=np.int64)
    np.maximum.at(largest, cat.gpu_model_id, cat.gpus)
    return largest


def open_nodes(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(GPU model, idle GPUs) per node as the running jobs leave them; model -1: not open."""
    cat = instance.catalog
    run = np.flatnonzero(instance.current_cfg >= 0)
    node, cur = instance.current_node[run], instance.current_cfg[run]
    open_vm = np.full(instance.nodes, -1, dtype=np.int64)
    open_vm[node] = cat.cfg_vm[cur]
    idle = np.where(open_vm >= 0, cat.gpus[open_vm], 0).astype(np.int64)
    # the GPUs each node's jobs hold: integers, summed exactly in any order (`np.subtract.at`
    # costs about 50 ns a job; `np.bincount` counts in C)
    idle -= np.bincount(node, weights=cat.cfg_gpus[cur], minlength=instance.nodes).astype(np.int64)
    return np.where(open_vm >= 0, cat.gpu_model_id[open_vm], -1), idle


def unplaced(
    instance: Instance,
    configs: np.ndarray,
    model: np.ndarray,
    idle: np.ndarray,
    first: bool = False,
) -> int:
    """GPUs of `configs` that fit nowhere when placed largest first and best fit into the idle
    GPUs of open nodes of their GPU model (`model`, `idle` per node) or into a node not yet open
    (model -1: its model's largest VM). `first`: stop at the first that does not fit.

    The placement is a compiled loop (`_unplaced`): make_room bisects over it and `queued`
    asks it at every event, and in Python it cost O(nodes) numpy calls per configuration."""
    cat = instance.catalog
    configs = np.asarray(configs, dtype=np.int64)
    configs = configs[np.argsort(-cat.cfg_gpus[configs], kind="stable")]
    return int(
        _unplaced(
            np.ascontiguousarray(cat.cfg_gpus[configs], dtype=np.int64),
            np.ascontiguousarray(cat.gpu_model_id[cat.cfg_vm[configs]], dtype=np.int64),
            np.ascontiguousarray(largest_gpus(instance), dtype=np.int64),
            np.array(model, dtype=np.int64),
            np.array(idle, dtype=np.int64),
            first,
        )
    )


@njit(cache=True)
def _unplaced(gpus, models, largest, model, idle, first):  # pragma: no cover - compiled
    """`unplaced` on configurations already in placement order (`gpus`, `models` per
    configuration); `model` and `idle` (per node) are changed in place. A configuration goes
    to the open node of its model with the fewest idle GPUs that hold it (ties: the lowest
    node), else the first node not yet open whose model's largest VM holds it (ties: the
    lowest node). Each configuration looks at the open nodes of its model alone (kept per
    model, ascending) and stops at one it fills exactly (no node can have fewer idle GPUs
    left, and a later one does not win a tie); nodes open lowest first: the choices of a
    scan of every node (tests/test_scale.py), not O(nodes) per configuration."""
    N = model.shape[0]
    M = largest.shape[0]
    of = np.empty((M, N), dtype=np.int64)  # per model its open nodes, ascending
    size = np.zeros(M, dtype=np.int64)
    closed = np.empty(N, dtype=np.int64)  # the nodes not open, ascending
    n_closed = 0
    for n in range(N):
        m = model[n]
        if m >= 0:
            of[m, size[m]] = n
            size[m] += 1
        else:
            closed[n_closed] = n
            n_closed += 1
    next_closed = 0
    left = 0
    for k in range(gpus.shape[0]):
        g, m = gpus[k], models[k]
        best, key = -1, 0
        for a in range(size[m]):
            n = of[m, a]
            if idle[n] >= g and (best < 0 or idle[n] < key):
                best, key = n, idle[n]
                if key == g:
                    break
        if best < 0 and next_closed < n_closed and largest[m] >= g:
            best = closed[next_closed]
            next_closed += 1
            model[best], idle[best] = m, largest[m]
            a = size[m]  # it joins its model's open nodes, in order
            while a > 0 and of[m, a - 1] > best:
                of[m, a] = of[m, a - 1]
                a -= 1
            of[m, a] = best
            size[m] += 1
        if best < 0:
            left += g
            if first:
                break
            continue
        idle[best] -= g
    return left


def queued(instance: Instance, pref: np.ndarray) -> bool:
    """Whether jobs wait that free capacity cannot take, given each job's preferred
    configuration `pref` (J,): placed largest first and best fit, some waiting job's fits
    neither the idle GPUs of an open node of its GPU model nor a node not yet open (its model's
    largest VM). Only then may running jobs be disturbed for waiting ones (`make_room`): a job
    that free capacity takes moves nobody."""
    waiting = (instance.current_cfg < 0) & (pref >= 0)
    if not waiting.any():
        return False
    return unplaced(instance, pref[waiting], *open_nodes(instance), first=True) > 0


def patient(
    instance: Instance,
    pref: np.ndarray,
    values: np.ndarray,
    price: Callable[[Instance], np.ndarray] | None = None,
) -> np.ndarray:
    """(J,) waiting jobs that can wait for room instead of having it made now: the running jobs'
    completions free room for the job's preferred configuration `pref` on a node of its GPU
    model, or empty a node, soon enough that starting then costs the job nothing: its least
    plan value then (`values`, (J, C), are now's) is no higher.

    Waiting jobs count on completions in order of least slack (due date - remaining time on
    `pref`), each claiming its GPUs on the node it counts on (or the whole node it waits to see
    emptied), so that two jobs do not count on the same GPUs. The completion times are the
    running jobs' remaining times on their configurations. No job waits while the plans ask for
    more GPUs than the N nodes hold (`queue_price` > 0): every GPU freed then serves the queue,
    as in `make_room` (docs/reconfiguration.md, "Waiting for room"). `price`: GPU prices ($/s
    per configuration; `fill_price` by default).
    """
    cat = instance.catalog
    out = np.zeros(instance.n_jobs, dtype=bool)
    if queue_price(instance) > 0:
        return out
    waiting = np.flatnonzero((instance.current_cfg < 0) & (pref >= 0))
    run = np.flatnonzero(instance.current_cfg >= 0)
    model, idle = open_nodes(instance)
    node, cur = instance.current_node[run], instance.current_cfg[run]
    left = instance.times[run, cur]
    # per node: column 0 is now (its idle GPUs), column k its k-th completion and the GPUs free then
    o = np.lexsort((left, node))
    col = 1 + np.arange(run.size) - np.searchsorted(node[o], node[o])
    width = 1 + (int(col.max()) if run.size else 0)
    when = np.full((instance.nodes, width), np.inf)
    when[:, 0] = 0.0
    when[node[o], col] = left[o]
    freed = np.zeros((instance.nodes, width), dtype=np.int64)
    freed[:, 0] = idle
    freed[node[o], col] = cat.cfg_gpus[cur[o]]
    freed = np.cumsum(freed, axis=1)
    empty = np.zeros(instance.nodes)
    np.maximum.at(empty, node, left)
    claimed = np.zeros(instance.nodes, dtype=np.int64)
    taken = np.zeros(instance.nodes, dtype=bool)
    slack = instance.rel_due[waiting] - instance.times[waiting, pref[waiting]]
    start = np.full(instance.n_jobs, np.inf)
    for j in waiting[np.argsort(slack, kind="stable")]:
        c = pref[j]
        g, m = cat.cfg_gpus[c], cat.gpu_model_id[cat.cfg_vm[c]]
        fits = ((model == m) & ~taken)[:, None] & (freed >= (g + claimed)[:, None])
        share = np.where(fits, when, np.inf).min(axis=1)
        alone = np.where(~taken & (claimed == 0), empty, np.inf)
        n, e = int(np.argmin(share)), int(np.argmin(alone))
        if min(share[n], alone[e]) == np.inf:
            continue
        if share[n] <= alone[e]:
            claimed[n] += g
            start[j] = share[n]
        else:
            taken[e] = True
            start[j] = alone[e]
    can = np.flatnonzero(np.isfinite(start))
    if can.size:
        now = values[can].min(axis=1)
        p = (price or fill_price)(instance)
        later = plan_values_at(instance, p, can, delay=start[can]).min(axis=1)
        out[can] = later <= now + 1e-9 * np.abs(now)
    return out


class Freed(NamedTuple):
    """The running jobs `make_room` frees (masks over its `run`), by the keep rule that frees
    them: their union is what it frees."""

    shrink: np.ndarray  # keep rule 2: a job that gives back the GPUs its plan does not ask for
    grow: np.ndarray  # keep rule 3: every job of a node emptied to be re-packed and grown


def make_room(
    instance: Instance,
    pref: np.ndarray,
    run: np.ndarray,
    shrink: np.ndarray,
    small: np.ndarray,
    cost: np.ndarray,
) -> Freed:
    """Running jobs (masks over `run`) to free so that queued jobs fit: only as many as it takes.

    Two kinds of unit can make room: a job holding more GPUs than its plan asks for (`shrink`:
    it gives back the difference on its node) and a node whose jobs are all `small` (on a VM
    below its GPU model's largest, or preferring another GPU model: freed, the node can be
    re-packed and grown or re-typed; keep rule 3). Units are taken
    cheapest first (`cost`: each job's weighted move cost; a node's is the sum of its jobs'),
    and the shortest prefix (by bisection) that seats every waiting job is freed, so that one
    arriving job does not re-pack a dozen running ones. When even every unit cannot seat them
    all, capacity is short and every unit is freed: each GPU given back then serves the queue
    (docs/reconfiguration.md, "Making room", measures both). A job that can shrink on a node
    that is emptied is counted as the node's (`Freed.grow`).
    """
    cat = instance.catalog
    cur, node = instance.current_cfg[run], instance.current_node[run]
    waiting = pref[(instance.current_cfg < 0) & (pref >= 0)]
    model, idle = open_nodes(instance)
    job_cost = cost[np.arange(run.size), cur]
    units = [(job_cost[k], 0, k) for k in np.flatnonzero(shrink)]
    whole = np.bincount(node, weights=(~small).astype(np.float64), minlength=instance.nodes) == 0
    node_cost = np.bincount(node, weights=job_cost, minlength=instance.nodes)
    units += [(node_cost[n], 1, n) for n in np.flatnonzero(whole & (model >= 0))]
    units.sort()
    back = cat.cfg_gpus[cur] - cat.cfg_gpus[np.maximum(pref[run], 0)]

    def take(m: int) -> tuple[int, Freed]:
        jobs = np.zeros(run.size, dtype=bool)
        emptied = np.zeros(instance.nodes, dtype=bool)
        for _, kind, i in units[:m]:
            (emptied if kind else jobs)[i] = True
        shrunk = jobs & ~emptied[node]
        m_idle = idle.copy()
        np.add.at(m_idle, node[shrunk], back[shrunk])
        m_idle[emptied] = 0
        configs = np.concatenate([cur[emptied[node]], waiting])
        left = unplaced(instance, configs, np.where(emptied, -1, model), m_idle)
        return left, Freed(shrunk, emptied[node])

    target, every = take(len(units))
    if target > 0:
        return every
    lo, hi = 0, len(units)
    while lo < hi:
        mid = (lo + hi) // 2
        if take(mid)[0] == 0:
            hi = mid
        else:
            lo = mid + 1
    return take(lo)[1]
