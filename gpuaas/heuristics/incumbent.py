"""The incumbent and the price of changing it: which running jobs stay where they are.

At a rescheduling point the running jobs (`Instance.current_node` / `current_cfg`) have a
place. Moving one costs (`Instance.overhead`, `Instance.startup`): the `overhead` seconds of
work it loses, redone at the new configuration's price (`fill_price`); when the job is late anyway,
its tardiness over those seconds; and, on a node whose VM is new or resized, `startup` seconds
of that VM billed idle (and of tardiness when late). A running job is kept in place unless the
per-job plan value of its best alternative beats staying by more than that cost.

The *plan value* of a configuration c for job j is the per-job LP of the lower bound
(`formulations/BOUND.md`) on the job's remaining work with c used first: c alone, price x time
+ tardiness, or, when c meets the due date, c followed by a slower, cheaper configuration so
that the mix ends exactly at the due date, plus the cost of that switch (the slower
configuration's lost work and a new VM's start-up; nothing in the paper's setting). The
configuration a job should run on now is the one of least plan value (`preferred_configs`).
Where the bound prices GPU time at the VM's share, plan values price it at the share the jobs
can fill (`fill_price`): a GPU model sold only in VMs larger than its demand costs its jobs the
whole VM.

While jobs wait, GPU time has a price beyond the VM's: every GPU-second a job takes, or loses to
a restart, delays the queue (`queue_price`). Plan values and move costs add it, so that under
load jobs take GPU-efficient configurations and stay where they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from gpuaas.instance import Instance
from gpuaas.per_job import share_price
from gpuaas.pricing import (
    fill_price,
    move_costs,
    plan_values,
    plan_values_at,
    preferred_configs,
    queue_price,
)

#: a running job moves for its own sake only when that saves more than this share of its plan
#: value on the current configuration (besides the move's cost): without it, jobs whose
#: configurations cost about the same (K80 vs M60 VMs) ping-pong between them at every event
HYSTERESIS = 0.05


def _largest_gpus(instance: Instance) -> np.ndarray:
    """(GPU models,) the GPUs of each GPU model's largest VM type."""
    cat = instance.catalog
    largest = np.zeros(int(cat.gpu_model_id.max()) + 1, dtype=np.int64)
    np.maximum.at(largest, cat.gpu_model_id, cat.gpus)
    return largest


def _open_nodes(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(GPU model, idle GPUs) per node as the running jobs leave them; model -1: not open."""
    cat = instance.catalog
    run = np.flatnonzero(instance.current_cfg >= 0)
    node, cur = instance.current_node[run], instance.current_cfg[run]
    open_vm = np.full(instance.nodes, -1, dtype=np.int64)
    open_vm[node] = cat.cfg_vm[cur]
    idle = np.where(open_vm >= 0, cat.gpus[open_vm], 0).astype(np.int64)
    np.subtract.at(idle, node, cat.cfg_gpus[cur])
    return np.where(open_vm >= 0, cat.gpu_model_id[open_vm], -1), idle


def _unplaced(
    instance: Instance,
    configs: np.ndarray,
    model: np.ndarray,
    idle: np.ndarray,
    first: bool = False,
) -> int:
    """GPUs of `configs` that fit nowhere when placed largest first and best fit into the idle
    GPUs of open nodes of their GPU model (`model`, `idle` per node) or into a node not yet open
    (model -1: its model's largest VM). `first`: stop at the first that does not fit."""
    cat = instance.catalog
    model, idle = model.copy(), idle.copy()
    largest = _largest_gpus(instance)
    left = 0
    for c in configs[np.argsort(-cat.cfg_gpus[configs], kind="stable")]:
        g, m = cat.cfg_gpus[c], cat.gpu_model_id[cat.cfg_vm[c]]
        fits = np.flatnonzero(((model == m) & (idle >= g)) | ((model < 0) & (largest[m] >= g)))
        if not fits.size:
            left += int(g)
            if first:
                break
            continue
        n = fits[np.argmin(np.where(model[fits] >= 0, idle[fits], np.iinfo(np.int64).max))]
        if model[n] < 0:
            model[n], idle[n] = m, largest[m]
        idle[n] -= g
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
    return _unplaced(instance, pref[waiting], *_open_nodes(instance), first=True) > 0


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
    model, idle = _open_nodes(instance)
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


def make_room(
    instance: Instance,
    pref: np.ndarray,
    run: np.ndarray,
    shrink: np.ndarray,
    small: np.ndarray,
    cost: np.ndarray,
) -> np.ndarray:
    """Running jobs (mask over `run`) to free so that queued jobs fit: only as many as it takes.

    Two kinds of unit can make room: a job holding more GPUs than its plan asks for (`shrink`:
    it gives back the difference on its node) and a node whose jobs are all `small` (on a VM
    below its GPU model's largest; freed, the node can be re-packed and grown). Units are taken
    cheapest first (`cost`: each job's weighted move cost; a node's is the sum of its jobs'),
    and the shortest prefix (by bisection) that seats every waiting job is freed, so that one
    arriving job does not re-pack a dozen running ones. When even every unit cannot seat them
    all, capacity is short and every unit is freed: each GPU given back then serves the queue
    (docs/reconfiguration.md, "Making room", measures both).
    """
    cat = instance.catalog
    cur, node = instance.current_cfg[run], instance.current_node[run]
    waiting = pref[(instance.current_cfg < 0) & (pref >= 0)]
    model, idle = _open_nodes(instance)
    job_cost = cost[np.arange(run.size), cur]
    units = [(job_cost[k], 0, k) for k in np.flatnonzero(shrink)]
    whole = np.bincount(node, weights=(~small).astype(np.float64), minlength=instance.nodes) == 0
    node_cost = np.bincount(node, weights=job_cost, minlength=instance.nodes)
    units += [(node_cost[n], 1, n) for n in np.flatnonzero(whole & (model >= 0))]
    units.sort()
    back = cat.cfg_gpus[cur] - cat.cfg_gpus[np.maximum(pref[run], 0)]

    def take(m: int) -> tuple[int, np.ndarray]:
        jobs = np.zeros(run.size, dtype=bool)
        emptied = np.zeros(instance.nodes, dtype=bool)
        for _, kind, i in units[:m]:
            (emptied if kind else jobs)[i] = True
        shrunk = jobs & ~emptied[node]
        m_idle = idle.copy()
        np.add.at(m_idle, node[shrunk], back[shrunk])
        m_idle[emptied] = 0
        configs = np.concatenate([cur[emptied[node]], waiting])
        left = _unplaced(instance, configs, np.where(emptied, -1, model), m_idle)
        return left, jobs | emptied[node]

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


def _beats(value: np.ndarray, stay: np.ndarray) -> np.ndarray:
    """Whether a plan value (move included) beats staying by more than `HYSTERESIS` (rule 1)."""
    return value < stay - HYSTERESIS * np.abs(stay) - 1e-9


class Rules(NamedTuple):
    """The keep rules evaluated once at a rescheduling point (`incumbent_rules`)."""

    values: np.ndarray  # (J, C) the plan values they used
    run: np.ndarray  # the running jobs (empty when moves are free)
    own: np.ndarray  # per running job: rule 1 frees it (for its own sake)
    others: np.ndarray  # per running job: rules 2-4 free it (for waiting jobs, re-packing)
    stay: np.ndarray  # per running job: plan value of its current configuration
    move: np.ndarray  # (running jobs, C) move costs x `move_weight`


def incumbent_rules(
    instance: Instance,
    values: np.ndarray | None = None,
    grow: bool = False,
    move_weight: float = 1.0,
    pref: np.ndarray | None = None,
    price: Callable[[Instance], np.ndarray] | None = None,
) -> Rules:
    """The keep rules for every running job (`keep_incumbent` states them): with no
    reconfiguration cost (the paper's setting) they see no running job. `pref`: the jobs'
    preferred configurations, when the caller has them; `price`: GPU prices of plan values
    and moves (`fill_price` by default)."""
    values = plan_values(instance, price) if values is None else values
    run = (
        np.flatnonzero(instance.current_cfg >= 0)
        if instance.moves_cost
        else np.zeros(0, dtype=np.int64)
    )
    cur = instance.current_cfg[run]
    stay = values[run, cur]
    cat = instance.catalog
    # a move onto spot saves its price difference for the job's life, not until the next
    # re-plan: weight 1 (docs/spot.md, "The default's decisions")
    weight = np.where(cat.spot[cat.cfg_vm], 1.0, move_weight)
    move = weight[None, :] * move_costs(instance, price)[run]
    best = (values[run] + move).min(axis=1, initial=np.inf)
    free = ~instance.pinned[run]  # a pinned job (a disruption limit) is never freed
    own = _beats(best, stay) & free
    # rules 2-4 free a job for the common good, only where its move is cheap against its plan
    cheap = (move.min(axis=1, initial=np.inf) <= HYSTERESIS * np.abs(stay)) & free
    others = np.zeros(run.size, dtype=bool)
    vm = cat.cfg_vm[cur]
    if run.size and (instance.current_cfg < 0).any():
        pref = preferred_configs(instance, values) if pref is None else pref
        queue = queued(instance, pref)
        if queue:
            # jobs that a completion seats at no cost to them wait for it
            hurry = np.where(patient(instance, pref, values, price), -1, pref)
            queue = queued(instance, hurry)
        if queue:
            # jobs queue: a running job holding more GPUs than its plan asks for may give them
            # back, and, with every node open, a node on a small VM may be grown (otherwise one
            # 1-GPU job holds one of the N node slots for its whole life while jobs queue)
            mine = pref[run]
            shrink = cheap & (mine >= 0) & (cat.cfg_gpus[cur] > cat.cfg_gpus[np.maximum(mine, 0)])
            small = np.zeros(run.size, dtype=bool)
            if grow and np.unique(instance.current_node[run]).size >= instance.nodes:
                small = cheap & (cat.gpus[vm] < _largest_gpus(instance)[cat.gpu_model_id[vm]])
            others |= make_room(instance, hurry, run, shrink, small, move)
    # a node with idle GPUs may be re-packed or downsized: its jobs with slack to spare for a
    # move (remaining time on the current configuration + 2 moves <= due date) are free
    idle = _open_nodes(instance)[1][instance.current_node[run]] > 0
    slack = instance.rel_due[run] - instance.times[run, cur]
    others |= cheap & idle & (slack > 2.0 * (instance.overhead + instance.startup))
    return Rules(values, run, own, others, stay, move)


def keep_incumbent(
    instance: Instance,
    values: np.ndarray | None = None,
    grow: bool = False,
    move_weight: float = 1.0,
    price: Callable[[Instance], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(pin_node, pin_cfg): running jobs kept in place (-1: free to be re-planned).

    A pinned job (`Instance.pinned`, a disruption limit) is always kept. Otherwise, with no
    reconfiguration cost (the paper's setting) nothing is kept, and with it a running job
    stays unless (1) some configuration's plan value plus the cost of moving there is below its
    current configuration's plan value by more than `HYSTERESIS` of it, or, where its move is
    that cheap, jobs queue (`queued`) that cannot wait for a completion (`patient`) and
    `make_room` picks it to seat them: (2) it holds more GPUs than its plan asks for, or (3,
    with `grow`: the default method's rule) all N nodes are open and its node's VM is smaller
    than its GPU model's largest; or (4) its node has idle GPUs and it has slack for two moves
    (docs/reconfiguration.md). `move_weight` multiplies every move's cost in these rules;
    `price` prices GPU time (`fill_price` by default; `paper_keep`).
    """
    return kept(instance, incumbent_rules(instance, values, grow, move_weight, price=price))


def paper_keep(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(pin_node, pin_cfg) that the paper's methods (Greedy, Randomized Greedy, Path Relinking)
    keep: `keep_incumbent` with GPU time at the VM share, as the bound prices it
    (`share_price`), a move weighed at its cost and no node growth.

    Not at `fill_price`: the fill price is the default method's model of how its own plans
    fill VMs (the demand of the plans `preferred_configs` gives), and these methods place
    jobs by Algorithm 1's rule instead. Priced by plans they do not follow, the rules freed
    their jobs for room those plans would make: on `instances/trace-small.json` no plan
    asked for K80, so jobs Greedy had put on K80 VMs looked 2-4 times dearer than they were,
    and under load the plans asked for fewer GPUs than Greedy gives a late job; each hour the
    rules freed running jobs, Greedy gave a queued late job a whole 8-GPU VM and left the
    freed one waiting, and the nodes took turns (68 preemptions, 9 980 $ instead of 1 668 $;
    docs/reconfiguration.md).
    """
    return keep_incumbent(instance, price=share_price)


def kept(instance: Instance, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(pin_node, pin_cfg) of the running jobs no rule frees and of the pinned ones (a
    disruption limit; -1: free to be re-planned)."""
    pin_node = np.full(instance.n_jobs, -1, dtype=np.int64)
    pin_cfg = np.full(instance.n_jobs, -1, dtype=np.int64)
    keep = np.union1d(rules.run[~(rules.own | rules.others)], np.flatnonzero(instance.pinned))
    pin_node[keep] = instance.current_node[keep]
    pin_cfg[keep] = instance.current_cfg[keep]
    return pin_node, pin_cfg


def pointless_moves(
    instance: Instance, rules: Rules, job_node: np.ndarray, job_cfg: np.ndarray
) -> np.ndarray:
    """(J,) bool: running jobs that rule 1 alone freed (for their own sake) and whose place in
    the solution does not deliver it (they stayed, or moved to a configuration whose plan value
    plus the move's cost does not beat staying by `HYSTERESIS`). Under load such a job
    typically loses its GPUs to more pressing jobs and lands on its own configuration on
    another node. Those that stayed are counted too, so that a re-plan around the others keeps
    them (else a job ping-pongs between a K80 and an M60 node at every event). A job the
    solution leaves waiting is not counted: that preemption gives its GPUs to more pressing jobs
    (docs/reconfiguration.md, "Put back")."""
    run, stay = rules.run, rules.stay
    new = job_cfg[run]
    k = np.maximum(new, 0)
    delivered = _beats(rules.values[run, k] + rules.move[np.arange(run.size), k], stay)
    out = np.zeros(instance.n_jobs, dtype=bool)
    out[run] = rules.own & ~rules.others & (new >= 0) & ~delivered
    return out
