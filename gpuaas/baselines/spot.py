"""Spot baselines, each job alone on its own VM as a user of today's tools runs it [issue 24]:

- `managed_spot`: SkyPilot managed jobs' way (`use_spot`, automatic recovery): always spot,
  relaunched after an interruption, on on-demand only while no spot VM of its type can be had,
  and back on spot at the first rescheduling point where one can (a move, which costs the
  restart); no due dates.
- `uniform_progress`: Can't Be Late's policy per job (Wu et al., NSDI '24, §5.2: Uniform
  Progress with hysteresis and the Safety Net; ``greedy=True``: their greedy policy, §3.4).

Each job gets a whole VM of one type: the on-demand type a user would ask for, by the
heuristics' rule on its whole work (`own_vm`: the cheapest whole-VM configuration meeting the
due date from its release, else the fastest), run as that type's spot variant or on demand.
Where that type's spot has no VM to open at a decision, the job fails over, as SkyPilot does
among a job's candidate resources, to another type's spot by the same rule over its options:
its own type on demand and each type whose spot has a VM to open (`Instance.room`), each at
its price (`spot_type`: a spot type is taken if it meets the due date and costs the job less
than its own type on demand). On demand it runs on its own type. Without the failover a job
whose type the replayed availability never gives (most types: only the replayed files' types
have capacity) never used spot, and the baselines compared packing, not spot policy (issue
41). A running job's type is the one it runs on. A job keeps its VM until it completes, is
interrupted or its policy changes its kind (never while a disruption limit pins it,
`Instance.pinned`); jobs start in submission order (managed-spot) or least slack first
(uniform-progress) while node slots and spot capacity (`Instance.room`) last.

Can't Be Late's rules read their quantities off the Instance: C(t) done = progress x the job's
whole time on its on-demand VM (the one the Safety Net falls back to), t = now - release,
R = due - release, the changeover d = `startup` + `overhead` (a new VM boots, a restart loses
work), the tick = `H` (the Safety Net's discretisation; the simulator re-plans at least every
H), and a spot VM is past its changeover once its VM is ready (`Instance.ready`). `tests/cant_be_late.py` is an independent reference of
the same rules that the simulator's runs are checked against (`tests/test_spot_baselines.py`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from gpuaas.baselines.dispatch import reject_options, submission_order
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.solution import Solution

NONE, SPOT, ON_DEMAND = 0, 1, 2
#: seconds of work left that count as done (Can't Be Late's simulator's tolerance)
DONE = 1e-3
#: rounding allowed when progress x time is compared with whole ticks
EPS = 1e-6


def own_vm(instance: Instance, j: int, among: np.ndarray | None = None) -> int:
    """The whole-VM on-demand configuration a user would run job j on: among configurations
    (v, G_v) of on-demand types (those `among`, a (V,) mask, if given), the cheapest (whole-job
    time x price) that meets the due date from its release, else the fastest; ties to the
    cheaper type (-1: none can run it)."""
    cat = instance.catalog
    whole = (cat.cfg_gpus == cat.gpus[cat.cfg_vm]) & ~cat.spot[cat.cfg_vm]
    if among is not None:
        whole &= among[cat.cfg_vm]
    t = np.where(whole, instance.work[j], np.inf)
    if not np.isfinite(t).any():
        return -1
    price = cat.cost[cat.cfg_vm]
    meets = np.isfinite(t) & (t <= instance.due[j] - instance.release[j])
    if meets.any():
        cost = np.where(meets, t * price, np.inf)
        return int(np.lexsort((price, cost))[0])
    return int(np.lexsort((price, t))[0])


def spot_type(instance: Instance, j: int, room: np.ndarray, spot: np.ndarray) -> int:
    """The whole-VM on-demand configuration job j runs on, as spot or on demand (module
    docstring): its `own_vm` if that type's spot has a VM to open (`room`, this decision's) or
    none can beat it; else `own_vm`'s rule over the job's options, its own type on demand and
    the whole-VM spot configurations with a VM to open, each at its price: the cheapest
    (whole-job time x price) that meets the due date from the job's release."""
    own = own_vm(instance, j)
    cat = instance.catalog
    if own < 0 or (spot[cat.cfg_vm[own]] >= 0 and room[spot[cat.cfg_vm[own]]] >= 1):
        return own
    types = np.flatnonzero(spot >= 0)
    types = types[room[spot[types]] >= 1]
    whole = cat.cfg_offset[types] + cat.gpus[types] - 1
    t = instance.work[j, whole]
    cost = t * cat.cost[spot[types]]
    ok = (t <= instance.due[j] - instance.release[j]) & (
        cost < instance.work[j, own] * cat.cost[cat.cfg_vm[own]]
    )
    if not ok.any():
        return own
    pick = np.lexsort((cat.cost[spot[types]], np.where(ok, cost, np.inf)))[0]
    return int(whole[pick])


def _type_of(instance: Instance, j: int) -> int:
    """The on-demand whole-VM configuration of the type running job j (spot or not)."""
    cat = instance.catalog
    c = int(instance.current_cfg[j])
    v = int(cat.cfg_vm[c])
    base = int(cat.base[v]) if cat.spot[v] else v
    return int(cat.cfg_offset[base] + cat.cfg_gpus[c] - 1)


def spot_of(instance: Instance) -> np.ndarray:
    """(V,) the spot variant of each on-demand type (-1: none)."""
    cat = instance.catalog
    out = np.full(cat.n_vms, -1, dtype=np.int64)
    spot = np.flatnonzero(cat.spot)
    out[cat.base[spot]] = spot
    return out


def _place(
    instance: Instance, target: dict[int, int], order: list[int], method: str, seed: int, t0: float
) -> Solution:
    """One job per new VM: `target[j]` is job j's configuration (its current one: it stays; -1:
    it waits). Jobs that stay keep their nodes; then, in `order`, running jobs that change take
    a new VM (on their own node unless a job that stays or another that moved holds it, then on
    the lowest free one) and waiting ones start on the lowest free node, while node slots and
    capacity (`Instance.room`) last; a running job that cannot have its new VM stays where it
    is if its node still has its VM, else it waits, as a waiting one does. (An incumbent of
    these methods has one job per node; another method's may share nodes.)"""
    inst, cat = instance, instance.catalog
    node_vm = np.full(inst.nodes, -1, dtype=np.int64)
    job_node = np.full(inst.n_jobs, -1, dtype=np.int64)
    job_cfg = np.full(inst.n_jobs, -1, dtype=np.int64)
    new_vm = np.zeros(inst.nodes, dtype=bool)  # nodes that get a new VM of a moving job
    room = inst.room.copy()

    def put(j: int, n: int, c: int) -> None:
        node_vm[n] = cat.cfg_vm[c]
        job_node[j], job_cfg[j] = n, c

    for j, c in target.items():
        if c >= 0 and c == inst.current_cfg[j]:
            put(j, int(inst.current_node[j]), c)
    moving = [j for j in order if target.get(j, -1) >= 0 and target[j] != inst.current_cfg[j]]
    moving.sort(key=lambda j: inst.current_cfg[j] < 0)  # running jobs first: their own nodes
    for j in moving:
        c, v = target[j], int(cat.cfg_vm[target[j]])
        free = np.flatnonzero(node_vm < 0)
        own, cur = int(inst.current_node[j]), int(inst.current_cfg[j])
        n = own if own >= 0 and node_vm[own] < 0 else (int(free[0]) if free.size else -1)
        if n >= 0 and room[v] >= 1:
            room[v] -= 1
            put(j, n, c)
            new_vm[n] = True
        elif own >= 0 and not new_vm[own] and node_vm[own] in (-1, cat.cfg_vm[cur]):
            put(j, own, cur)
    kinds = [_kind_of(inst, c) for c in job_cfg if c >= 0]
    stats = {
        "seconds": time.perf_counter() - t0,
        "seed": seed,
        "spot": kinds.count(SPOT),
        "on_demand": kinds.count(ON_DEMAND),
        "waiting": int((job_cfg < 0).sum()),
    }
    return Solution(inst, node_vm, job_node, job_cfg, method, stats)


def _kind(instance: Instance, j: int) -> int:
    c = instance.current_cfg[j]
    if c < 0:
        return NONE
    return SPOT if instance.catalog.spot[instance.catalog.cfg_vm[c]] else ON_DEMAND


def _variant(instance: Instance, c: int, kind: int, spot: np.ndarray) -> int:
    """Configuration c (on-demand, whole VM) as `kind`: itself or its spot variant's."""
    cat = instance.catalog
    if kind == ON_DEMAND:
        return c
    s = spot[cat.cfg_vm[c]]
    return -1 if s < 0 else int(cat.cfg_offset[s] + cat.cfg_gpus[c] - 1)


def managed_spot(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """SkyPilot managed jobs' way (module docstring): spot whenever a spot VM of the job's type
    (`spot_type`: its own, or another with spot capacity) can be had, on demand otherwise,
    each job alone on its VM, in submission order.

    Returns
    -------
    Solution
        With ``stats``: ``seconds``, ``seed``, ``spot`` and ``on_demand`` (jobs on each kind).
    """
    reject_options("managed-spot", options)
    t0 = time.perf_counter()
    inst, cat = instance, instance.catalog
    spot = spot_of(inst)
    room = inst.room.copy()
    target: dict[int, int] = {}
    order = [int(j) for j in submission_order(inst)]
    for j in order:
        if inst.pinned[j]:  # a disruption limit: it stays on its VM
            target[j] = int(inst.current_cfg[j])
            continue
        if _kind(inst, j) == SPOT:
            target[j] = int(inst.current_cfg[j])  # relaunched only when interrupted
            continue
        c = spot_type(inst, j, room, spot)
        if c < 0:
            continue
        s = _variant(inst, c, SPOT, spot)
        if s >= 0 and room[cat.cfg_vm[s]] >= 1:
            room[cat.cfg_vm[s]] -= 1
            target[j] = s
        else:
            target[j] = c  # on demand while no spot VM of its type can be had
    return _place(inst, target, order, "managed-spot", seed, t0)


def _kind_of(instance: Instance, c: int) -> int:
    return SPOT if instance.catalog.spot[instance.catalog.cfg_vm[c]] else ON_DEMAND


# -- Can't Be Late ------------------------------------------------------------------------------


def _ceil_ticks(x: float, tick: float) -> float:
    return math.ceil(x / tick - EPS) * tick if tick else x


def safety_net(
    left: float,
    remaining: float,
    d: float,
    tick: float,
    vm: int,
    past_changeover: bool,
    spot: bool,
    choice: int,
) -> int:
    """Can't Be Late's Safety Net Rule (§3.3, discretised to ticks as their simulator does):
    an idle or on-demand job whose work left plus 2d no longer fits the ticks left goes (stays)
    on demand; once work plus d no longer fits, only a spot VM past its changeover carries on."""
    ticks_left = math.floor(remaining / tick + EPS) * tick if tick else remaining
    if _ceil_ticks(left + 2 * d, tick) >= ticks_left - EPS and vm in (NONE, ON_DEMAND):
        choice = ON_DEMAND
    if _ceil_ticks(left + d, tick) >= ticks_left - EPS:
        choice = SPOT if vm == SPOT and past_changeover else ON_DEMAND
        if d == 0 and spot:
            choice = SPOT
    return choice


def cbl_choice(
    done: float,
    work: float,
    t: float,
    deadline: float,
    d: float,
    tick: float,
    vm: int,
    past_changeover: bool,
    spot: bool,
    greedy: bool = False,
    pace: float | None = None,
) -> int:
    """Can't Be Late's decision for one job at elapsed time t: NONE, SPOT or ON_DEMAND.

    Uniform Progress (§5.2): behind the line (work left > `pace` x time left; the line
    through the origin has pace = work / deadline) take spot if there is one, else on demand;
    ahead of it, spot or wait; on demand, stay until ahead of the line at t + 2d (hysteresis)
    or while spot is gone. A `pace` above work / deadline is the line of the §A.8 switch point
    (greedy until the work left reaches `pace` x the time left). `greedy` (§3.4): spot
    whenever available, wait otherwise, on demand for good once the Safety Net fires."""
    left = work - done
    if left <= DONE:
        return NONE
    if greedy:
        choice = ON_DEMAND if vm == ON_DEMAND else (SPOT if spot else NONE)
    else:
        pace = work / deadline if pace is None else pace
        choice = SPOT if spot else NONE
        if left > pace * (deadline - t) + EPS:  # behind the uniform-progress line
            choice = SPOT if spot else ON_DEMAND
        if vm == ON_DEMAND and (not spot or left >= pace * (deadline - t - 2 * d) - EPS):
            choice = ON_DEMAND
    return safety_net(left, deadline - t, d, tick, vm, past_changeover, spot, choice)


def uniform_progress(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    greedy: bool = False,
    **options: Any,
) -> Solution:
    """Can't Be Late per job (module docstring), each job alone on its own VM.

    Parameters
    ----------
    greedy : bool
        Their greedy policy (§3.4) instead of Uniform Progress (§5.2).

    Returns
    -------
    Solution
        With ``stats``: ``seconds``, ``seed``, ``spot``, ``on_demand`` and ``waiting``.
    """
    reject_options("uniform-progress", options)
    if not isinstance(greedy, bool):
        raise InputError(None, "greedy", f"must be true or false, got {greedy!r}")
    t0 = time.perf_counter()
    inst, cat = instance, instance.catalog
    spot = spot_of(inst)
    d = inst.startup + inst.overhead
    room = inst.room.copy()
    slack = inst.rel_due - inst.times.min(axis=1)
    order = [int(j) for j in np.lexsort((np.arange(inst.n_jobs), slack))]
    target: dict[int, int] = {}
    for j in order:
        if inst.pinned[j]:  # a disruption limit: it stays on its VM
            target[j] = int(inst.current_cfg[j])
            continue
        vm = _kind(inst, j)
        own = own_vm(inst, j)
        if own < 0:
            continue
        # spot on the type it runs on or `spot_type`'s; on demand on the type it runs on or its
        # own, whose times Can't Be Late's rules judge (the Safety Net guards finishing there)
        c = _type_of(inst, j) if vm == SPOT else spot_type(inst, j, room, spot)
        od = _type_of(inst, j) if vm == ON_DEMAND else own
        s = _variant(inst, c, SPOT, spot)
        work = float(inst.work[j, od])
        available = vm == SPOT or (s >= 0 and room[cat.cfg_vm[s]] >= 1)
        choice = cbl_choice(
            done=float(inst.progress[j]) * work,
            work=work,
            t=inst.time - float(inst.release[j]),
            deadline=float(inst.due[j] - inst.release[j]),
            d=d,
            tick=inst.H,
            vm=vm,
            past_changeover=bool(inst.ready[j] <= inst.time + EPS),
            spot=available,
            greedy=greedy,
        )
        if choice == vm and vm != NONE:
            target[j] = int(inst.current_cfg[j])
        elif choice == NONE:
            target[j] = -1
        elif choice == ON_DEMAND:
            target[j] = od
        else:
            target[j] = s
            room[cat.cfg_vm[s]] -= 1
    return _place(inst, target, order, "uniform-progress", seed, t0)
