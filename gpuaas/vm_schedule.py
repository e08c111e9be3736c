"""A clairvoyant, non-preemptive schedule on VMs, replayed through the simulator (issue 43).

`vm_schedule(trace, ...)` computes in hindsight (every release and duration known) a schedule
that never moves a job: a serial schedule generation over VM instances on the N node slots.
Jobs are taken in an order (`order`: by release, or by `gpuaas.admission.priority`, latest
start first, heavier jobs earlier). Each job has one or more candidate configurations: its
`gpuaas.admission.job_configs` one ("packed": the per-job optimum among the VM types with the
most GPUs, priced at its GPU share of the VM plus its tardiness alone) and, with
`configs="types"`, its best one on each other VM type with that many GPUs (`type_configs`:
on the GCP catalog the L4 and H100 8-GPU types both). At each candidate it may go to

- an existing VM instance of that type, at the earliest time t >= its release and >= the
  instance's ready time at which the instance's GPUs in use leave it g free for its whole
  run, with t at most the instance's close (an instance is never left empty: the simulator
  refuses an open node without a job, `gpuaas.rescheduler.matching.check_solution`); a run
  past the close extends the instance when its slot is free until the run ends;
- or a new VM instance of that type in a gap of a slot, opened at some o >= its release,
  billed from o and running the job from o + startup (`gpuaas.reconfiguration.ready_time`),

the cheapest by vm_weight x the VM dollars the placement adds (the instance's extension past
its close, or the new VM's start-up and run, at the VM's price) plus the job's tardiness
ω_j·max(0, end - due_j), ties by the earlier end. Each slot holds one instance at a time, so
at most N VMs are open at once; an instance closes when its last job ends. The plan's own cost
(`VmPlan.cost`: Σ price x (close - open) over instances plus the tardiness) is what the replay
costs when it follows the plan.

**The plans** (`best_plan`; 0.1-2 s each on 4 000-13 000 jobs). First the 16 `VARIANTS`.
Then, with `avoid`, a job may also take a smaller VM of its type's GPUs at the same price per
GPU (`smaller_configs`: only for types dearer per GPU than the cheapest of the largest, on GCP
the 1-, 2- and 4-GPU H100 VMs, whose jobs are few and far between, so that an 8-GPU one would
run mostly empty), but only outside the periods in which the first stage's cheapest plan holds
at least N - m VMs (`full_periods`, m of `MARGINS`): a small VM takes a slot, which the load
needs there. Then squeaky-wheel rounds from the cheapest: each late job moved earlier in the
order by `STEP` x its lateness. Each plan, as built, then has every instance on the cheapest
VM type of its GPU model that holds the most GPUs its jobs hold at once (`shrunk`: the same
schedule on smaller VMs, where the model is sold in several sizes, as GCP's are). The cheapest
by its own cost is the plan.

`replay(trace, plan, ...)` is the schedule as a simulated run: the trace's copy whose releases
are the planned placement times (`gpuaas.admission.admitted`: no job before its release), run
by a plan-following method (`follow`, in the registry only for the run: `registered`) with
noise 0. At each rescheduling point it keeps every running job where it runs (it never moves
one) and puts each waiting job on its planned VM instance's node (a new node of the
instance's type when none of the instance's jobs runs now), if its GPUs are free there; else
the job waits for the next point (a completion the simulator times a rounding later than the
plan, or a VM the node matching kept open for a new instance of its type, which then runs its
jobs a start-up earlier than planned and can close early). The Rescheduler checks every plan,
the run's event log reconciles, and its total is the cost of a schedule of the ORIGINAL trace
(`gpuaas.admission`'s argument: the release is billed nowhere). `gpuaas.upper` runs the
cheapest plan as a member of the upper value (`upper(..., vm_schedule=True)`, `gpuaas bound
--upper --vm-schedule`).

Jobs' vCPU and memory demands are not modelled: on a trace that declares them, the
Rescheduler re-packs each plan to the nodes' vCPUs and memory (`gpuaas.resources.fit`), so the
replay may depart from the plan (it is still a checked run, billed as it ran).

What it is not: optimal, nor a bound. A list schedule decides each job once, in its order,
without moving any; it shows what a schedule that never moves and packs its VMs costs.
Tried and not kept (scripts/results/upper.md, "A schedule that never moves"): the earliest
end as the rule (VMs opened for every job that can end sooner: 1.2-2 x the VM cost), each
job's cheapest configuration alone (a 1-GPU VM) or smaller VMs of every type anywhere (small
VMs hold slots that the load then lacks: tardiness 10-1000 x), smaller VMs of every type (the
cheap L4 ones too) outside the full periods (twice the cost on ITP cluster 9); a new VM
charged at the job's GPU share of it; random perturbations of the order (dearer than the
squeaky-wheel rounds).
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuaas.admission import admitted, job_configs, priority
from gpuaas.instance import Instance
from gpuaas.per_job import single_costs
from gpuaas.reconfiguration import DEFAULT_STARTUP, ready_time
from gpuaas.solution import Solution

if TYPE_CHECKING:
    from gpuaas.simulation_result import SimulationResult

#: the job orders (`vm_schedule`): the list schedule's priority, or by release
ORDERS = ("priority", "release")
#: the plans `plans` builds, (configs, order, vm_weight) of `vm_schedule`: the cheapest by its
#: own cost is replayed (`gpuaas.upper`)
VARIANTS: tuple[tuple[str, str, float], ...] = tuple(
    (configs, order, weight)
    for configs in ("types", "packed")
    for order in ("release", "priority")
    for weight in (1.0, 0.5, 0.25, 0.1)
)
#: `best_plan`'s second stage: the variants built with smaller VMs of the pricier types
#: outside the first stage's full periods, at each margin of `MARGINS`
SMALL_VARIANTS: tuple[tuple[str, str, float], ...] = tuple(
    (configs, order, weight)
    for configs in ("types", "packed")
    for order in ("release", "priority")
    for weight in (0.5, 0.25, 0.1)
)
#: a period is full where the first stage's cheapest plan holds at least N - margin VMs
MARGINS = (0, 1, 2)
#: `best_plan`'s squeaky-wheel rounds and their step (s of order per s of lateness)
ROUNDS = 6
STEP = 0.5
#: the plan-following method's registry name while a replay runs (`registered`)
FOLLOW = "vm-schedule"
#: instances of one slot a job's search looks at past its release before it stops
SCAN = 256
_EPS = 1e-9


@dataclass
class VmPlan:
    """A non-preemptive schedule on VM instances (module docstring).

    Per job (trace order): `start` when it is placed (its admitted release: its instance's open
    time for the job that opens it, else when it joins), `run` when it runs from (`start`, or
    its instance's ready time), `end`, `cfg` its configuration, `vm` its instance. Per
    instance: `vm_type`, `slot` (0 .. N-1), `open`, `close`. `vm_cost`, `tardiness`: the
    plan's own, `cost` their sum; `configs`, `order`, `vm_weight` how it was built.
    """

    start: np.ndarray
    run: np.ndarray
    end: np.ndarray
    cfg: np.ndarray
    vm: np.ndarray
    vm_type: np.ndarray
    slot: np.ndarray
    open: np.ndarray
    close: np.ndarray
    vm_cost: float
    tardiness: float
    configs: str
    order: str
    vm_weight: float
    #: the smaller VMs' margin (`best_plan`; None: none), the squeaky-wheel round (0: none)
    margin: int | None = None
    rounds: int = 0

    @property
    def cost(self) -> float:
        return self.vm_cost + self.tardiness

    @property
    def instances(self) -> int:
        return len(self.vm_type)


class _Vm:
    """One VM instance of the plan being built: type, slot, open, ready, close and the GPUs in
    use over time (breakpoints `T`, usage `U[i]` on [T[i], T[i+1]); 0 from the last on)."""

    __slots__ = ("T", "U", "close", "gpus", "open", "ready", "slot", "type")

    def __init__(self, vtype: int, slot: int, at: float, ready: float, gpus: int) -> None:
        self.type, self.slot, self.open, self.ready, self.gpus = vtype, slot, at, ready, gpus
        self.close = at
        self.T: list[float] = [at]
        self.U: list[float] = [0.0]

    def earliest(self, lo: float, d: float, g: float, limit: float) -> float:
        """The earliest t in [lo, close] with g GPUs free on [t, t + d) and t + d <= `limit`
        (the next instance on the slot); inf if none."""
        t = max(lo, self.ready)
        if t > self.close + _EPS:
            return math.inf
        T, U, cap = self.T, self.U, self.gpus - g + _EPS
        i = max(0, bisect.bisect_right(T, t) - 1)
        while i < len(T) and T[i] < t + d:
            if U[i] > cap:
                if i + 1 >= len(T):
                    return math.inf  # cannot happen: usage is 0 after the last breakpoint
                t = T[i + 1]
                if t > self.close + _EPS:
                    return math.inf
            i += 1
        return t if t + d <= limit + _EPS else math.inf

    def add(self, t: float, end: float, g: float) -> None:
        """g GPUs in use on [t, end)."""
        T, U = self.T, self.U
        for x in (t, end):
            i = bisect.bisect_right(T, x) - 1
            if i < 0:
                T.insert(0, x)
                U.insert(0, 0.0)
            elif T[i] != x:
                T.insert(i + 1, x)
                U.insert(i + 1, U[i])
        i = bisect.bisect_left(T, t)
        while i < len(T) and T[i] < end:
            U[i] += g
            i += 1
        self.close = max(self.close, end)


def type_configs(trace: Instance, packed: np.ndarray) -> list[np.ndarray]:
    """Per VM type with the most GPUs, (J,) each job's best configuration there as
    `job_configs` prices it (its GPU share of the VM plus its tardiness run alone); the
    packed one where it cannot run there."""
    cat = trace.catalog
    cost = single_costs(trace)
    out = []
    for v in np.flatnonzero(cat.gpus == cat.gpus.max()).tolist():
        on = cat.cfg_vm == v
        here = np.where(on[None, :], cost, np.inf)
        alt = np.where(np.isfinite(here).any(axis=1), np.argmin(here, axis=1), packed)
        if (alt != packed).any():
            out.append(alt)
    return out


def smaller_configs(trace: Instance, base: np.ndarray) -> list[np.ndarray]:
    """Per VM type with fewer GPUs than base's, (J,) each job's configuration there with as
    many GPUs and the same time as at `base`, at the same price per GPU, where base's type is
    not the cheapest per GPU of the types with the most GPUs (the same GPUs in a smaller VM:
    GCP's H100 types of 1-8 GPUs); `base` where there is none."""
    cat = trace.catalog
    rows = np.arange(trace.n_jobs)
    g, t = cat.cfg_gpus[base], trace.times[rows, base]
    per_gpu = cat.cost / np.maximum(cat.gpus, 1)
    largest = cat.gpus == cat.gpus.max()
    cheapest = per_gpu[largest].min()
    bv = cat.cfg_vm[base]
    out = []
    for v in np.argsort(-cat.gpus, kind="stable").tolist():
        alt = base.copy()
        for c in np.flatnonzero(cat.cfg_vm == v).tolist():
            with np.errstate(invalid="ignore"):
                same = np.isclose(trace.times[:, c], t)
            ok = (
                (cat.cfg_gpus[c] == g)
                & (cat.gpus[v] < cat.gpus[bv])
                & same
                & np.isclose(per_gpu[v], per_gpu[bv])
                & (per_gpu[bv] > cheapest * (1 + 1e-9))
            )
            alt[ok] = c
        if (alt != base).any():
            out.append(alt)
    return out


def full_periods(plan: VmPlan, nodes: int, margin: int) -> np.ndarray:
    """(K, 2) the periods [a, b) in which `plan` holds at least `nodes` - `margin` VMs open,
    in time order (merged)."""
    t = np.concatenate([plan.open, plan.close])
    d = np.concatenate([np.ones(plan.instances), -np.ones(plan.instances)])
    o = np.lexsort((d, t))
    t, count = t[o], np.cumsum(d[o])
    out: list[list[float]] = []
    for i in np.flatnonzero(count[:-1] >= nodes - margin).tolist():
        a, b = float(t[i]), float(t[i + 1])
        if b <= a:
            continue
        if out and out[-1][1] >= a:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return np.array(out, dtype=float).reshape(-1, 2)


def vm_schedule(
    trace: Instance,
    nodes: int | None = None,
    startup: float = DEFAULT_STARTUP,
    order: str = "priority",
    configs: str = "packed",
    vm_weight: float = 1.0,
    key: np.ndarray | None = None,
    avoid: np.ndarray | None = None,
) -> VmPlan:
    """The non-preemptive schedule on VM instances of `trace` on `nodes` (default the
    trace's N) slots (module docstring); `startup` the seconds a new VM is billed before it
    runs jobs. `configs`: "packed", each job at `job_configs(trace)`'s configuration; "types",
    that or its best configuration on each other VM type with the most GPUs (`type_configs`),
    whichever is cheaper. `vm_weight`: the weight of the VM dollars against the tardiness
    (below 1: a new VM opened sooner rather than a job left waiting for GPUs of an open one).
    `key`: the jobs' order, smallest first (default: `order`'s). `avoid`: (K, 2) periods in
    time order; with it a job may also take a VM of `smaller_configs`, opened only outside
    them (module docstring, "The plans")."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; of {', '.join(ORDERS)}")
    if configs not in ("packed", "types"):
        raise ValueError(f"unknown configurations {configs!r}; of packed, types")
    cat = trace.catalog
    J = trace.n_jobs
    N = int(trace.nodes if nodes is None else nodes)
    packed = job_configs(trace, "packed")
    rows = np.arange(J)
    if not np.isfinite(trace.times[rows, packed]).all():
        raise ValueError("a job cannot run on any configuration")
    cands = [packed] if configs == "packed" else [packed, *type_configs(trace, packed)]
    big = len(cands)  # the candidates at a type with the most GPUs; smaller ones follow
    a_start: list[float] = []
    a_end: list[float] = []
    if avoid is not None:
        cands += [x for base in cands for x in smaller_configs(trace, base)]
        avoid = np.asarray(avoid, dtype=float).reshape(-1, 2)
        a_start, a_end = avoid[:, 0].tolist(), avoid[:, 1].tolist()

    def small_ok(a: float, b: float) -> bool:
        """[a, b) meets no period of `avoid` (the base plan's full slots)."""
        i = bisect.bisect_left(a_start, b) - 1  # the last period starting before b
        return i < 0 or a_end[i] <= a

    price = cat.cost.astype(float)
    rel = np.maximum(trace.release, trace.time).astype(float)
    if key is None:
        key = priority(trace, trace.times[rows, packed]) if order == "priority" else rel
    seq = np.lexsort((rows, rel, key))
    vms: list[_Vm] = []
    slots: list[list[int]] = [[] for _ in range(N)]  # instances per slot, by open time
    opens: list[list[float]] = [[] for _ in range(N)]
    start = np.empty(J)
    run = np.empty(J)
    cfg = np.empty(J, dtype=np.int64)
    where = np.empty(J, dtype=np.int64)
    due, weight = trace.due.astype(float), trace.weight.astype(float)
    for j in seq.tolist():
        r, w, dj = float(rel[j]), float(weight[j]), float(due[j])
        best: tuple[float, float] | None = None  # (cost, end) of the best placement
        pick: tuple[int, float, int, int] | None = None  # (instance or -1, t, slot, cfg)
        tried: set[int] = set()
        for ci, cs in enumerate(cands):
            c = int(cs[j])
            if c in tried:
                continue
            tried.add(c)
            small = ci >= big
            d, g, v = float(trace.times[j, c]), float(cat.cfg_gpus[c]), int(cat.cfg_vm[c])
            p = float(price[v])

            def score(
                t_run: float, extra: float, d: float = d, w: float = w, dj: float = dj
            ) -> tuple[float, float]:
                end = t_run + d
                return (vm_weight * extra + w * max(0.0, end - dj), end)

            for n in range(N):
                ids, op = slots[n], opens[n]
                # the instance that could be running at r, then every later one
                i = max(0, bisect.bisect_right(op, r) - 1)
                prev_close = vms[ids[i - 1]].close if i > 0 else -math.inf
                seen = 0
                while True:
                    vm = vms[ids[i]] if i < len(ids) else None
                    nxt = op[i + 1] if i + 1 < len(ids) else math.inf
                    # a new VM in the gap before `vm` (or after the last one)
                    gap_end = vm.open if vm is not None else math.inf
                    o = max(r, prev_close)
                    if o + startup + d <= gap_end + _EPS and (
                        not small or small_ok(o, o + startup + d)
                    ):
                        s = score(ready_time(o, startup), p * (startup + d))
                        if best is None or s < best:
                            best, pick = s, (-1, o, n, c)
                    if vm is None:
                        break
                    if vm.type == v and vm.close + _EPS >= r:
                        t = vm.earliest(r, d, g, nxt)
                        if t < math.inf:
                            ext = max(0.0, t + d - vm.close)
                            s = score(t, p * ext)
                            if best is None or s < best:
                                best, pick = s, (ids[i], t, n, c)
                    prev_close = vm.close
                    i += 1
                    seen += 1
                    # what follows on the slot (the gap after `vm`, later instances) starts
                    # at vm's close or later: stop once even a run from there cannot beat
                    # the best
                    if best is not None:
                        t0 = max(r, prev_close)
                        if w * max(0.0, t0 + d - dj) >= best[0]:
                            break
                    if seen > SCAN and best is not None:
                        break
        assert pick is not None  # the gap after a slot's last instance is always there
        k, t, n, c = pick
        d, g, v = float(trace.times[j, c]), float(cat.cfg_gpus[c]), int(cat.cfg_vm[c])
        if k < 0:
            k = len(vms)
            vm = _Vm(v, n, t, ready_time(t, startup), int(cat.gpus[v]))
            vms.append(vm)
            pos = bisect.bisect_right(opens[n], t)
            opens[n].insert(pos, t)
            slots[n].insert(pos, k)
            start[j], run[j] = t, vm.ready
            vm.add(t, vm.ready + d, g)  # its GPUs are held from the open on
        else:
            vm = vms[k]
            start[j] = run[j] = t
            vm.add(t, t + d, g)
        where[j], cfg[j] = k, c
    end = run + trace.times[rows, cfg]
    vm_type = np.array([x.type for x in vms], dtype=np.int64)
    vopen = np.array([x.open for x in vms])
    vclose = np.array([x.close for x in vms])
    vm_cost = float((price[vm_type] * (vclose - vopen)).sum())
    tardiness = float((weight * np.maximum(0.0, end - due)).sum())
    return VmPlan(
        start=start,
        run=run,
        end=end,
        cfg=cfg,
        vm=where,
        vm_type=vm_type,
        slot=np.array([x.slot for x in vms], dtype=np.int64),
        open=vopen,
        close=vclose,
        vm_cost=vm_cost,
        tardiness=tardiness,
        configs=configs,
        order=order,
        vm_weight=float(vm_weight),
    )


def peaks(trace: Instance, plan: VmPlan) -> np.ndarray:
    """(instances,) the most GPUs each instance's jobs hold at once (each from its placement,
    `start`: the opener's from the open, to its end)."""
    g = trace.catalog.cfg_gpus[plan.cfg].astype(float)
    k = np.concatenate([plan.vm, plan.vm])
    t = np.concatenate([plan.start, plan.end])
    d = np.concatenate([g, -g])
    o = np.lexsort((d, t, k))  # per instance in time, a release before a hold at one time
    k, use = k[o], np.cumsum(d[o])
    before = np.concatenate([[0.0], use])[np.searchsorted(k, np.arange(plan.instances))]
    out = np.zeros(plan.instances)
    np.maximum.at(out, k, use - before[k])
    return out


def shrunk(trace: Instance, plan: VmPlan) -> VmPlan:
    """`plan` with each instance on the cheapest VM type of its GPU model that holds its peak
    GPUs in use (`peaks`) and runs each of its jobs at as many GPUs in the same time: the same
    schedule, never dearer. The list schedule opens VMs of the types with the most GPUs, so an
    8-GPU VM whose jobs never hold more than 4 GPUs at once becomes a 4-GPU one (half the
    price on GCP); it holds its slot as before."""
    vm_type, cfg = smallest_types(trace, plan.vm_type, peaks(trace, plan), plan.vm, plan.cfg)
    vm_cost = float((trace.catalog.cost[vm_type] * (plan.close - plan.open)).sum())
    return dataclasses.replace(plan, vm_type=vm_type, cfg=cfg, vm_cost=vm_cost)


def smallest_types(
    trace: Instance, vm_type: np.ndarray, peak: np.ndarray, vm: np.ndarray, cfg: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`shrunk`'s (vm_type, cfg): each instance of `vm_type` (its jobs' `vm`, `cfg`) on the
    cheapest type of its GPU model with at least `peak` GPUs on which each of its jobs has a
    configuration of as many GPUs and the same time, and the jobs' configurations there."""
    cat = trace.catalog
    vm_type, cfg = vm_type.copy(), cfg.copy()
    rows = np.arange(trace.n_jobs)
    pk = np.asarray(peak, dtype=float)
    for w in np.argsort(cat.cost, kind="stable").tolist():
        mine = np.flatnonzero(cat.cfg_vm == w)
        if not mine.size:
            continue
        cand = (
            (cat.gpu_model_id[vm_type] == cat.gpu_model_id[w])
            & (cat.gpus[w] >= pk - _EPS)
            & (cat.cost[w] < cat.cost[vm_type])
        )
        if not cand.any():
            continue
        # each job's configuration on w with as many GPUs (-1: none)
        at = np.full(cat.cfg_gpus.max() + 1, -1, dtype=np.int64)
        at[cat.cfg_gpus[mine[::-1]]] = mine[::-1]  # the first of w's with that many GPUs
        alt = at[cat.cfg_gpus[cfg]]
        with np.errstate(invalid="ignore"):
            same = (alt >= 0) & np.isclose(
                trace.times[rows, np.maximum(alt, 0)], trace.times[rows, cfg]
            )
        bad = np.zeros(len(vm_type), dtype=bool)
        bad[vm[~same]] = True
        to = cand & ~bad
        vm_type[to] = w
        moved = to[vm]
        cfg[moved] = alt[moved]
    return vm_type, cfg


def check_plan(trace: Instance, plan: VmPlan, nodes: int | None = None) -> list[str]:
    """What is wrong with `plan` as a schedule of `trace` (empty: nothing): a job placed
    before its release, an instance holding more GPUs than its VM type has, another type than
    its jobs', left empty while open, two instances on a slot at once, or more than N open."""
    cat = trace.catalog
    N = int(trace.nodes if nodes is None else nodes)
    out: list[str] = []
    if (plan.start < trace.release - _EPS).any():
        out.append("a job placed before its release")
    if (cat.cfg_vm[plan.cfg] != plan.vm_type[plan.vm]).any():
        out.append("a job on a VM of another type than its configuration's")
    for k in range(plan.instances):
        jobs = np.flatnonzero(plan.vm == k)
        held = plan.start[jobs]  # the GPUs are held from the placement (the opener's: the open)
        t = np.concatenate([held, plan.end[jobs]])
        dg = cat.cfg_gpus[plan.cfg[jobs]].astype(float)
        o = np.lexsort((np.concatenate([dg, -dg]), t))
        use = np.cumsum(np.concatenate([dg, -dg])[o])
        if use.max() > cat.gpus[plan.vm_type[k]] + _EPS:
            out.append(f"instance {k} holds more GPUs than its VM type has")
        if ((use[:-1] <= _EPS) & (np.diff(t[o]) > _EPS)).any():
            out.append(f"instance {k} is left empty while open")
        if held.min() > plan.open[k] + _EPS or plan.end[jobs].max() < plan.close[k] - _EPS:
            out.append(f"instance {k} is open without a job")
    for n in range(N):
        ks = np.flatnonzero(plan.slot == n)
        o = np.argsort(plan.open[ks])
        if (plan.open[ks][o][1:] < plan.close[ks][o][:-1] - _EPS).any():
            out.append(f"slot {n} holds two instances at once")
    if (plan.slot >= N).any() or (plan.slot < 0).any():
        out.append("a slot out of range")
    return out


# -- the replay ------------------------------------------------------------------------------


def follow(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    plan: dict[str, list[int]] | None = None,
) -> Solution:
    """The plan-following method (`replay`): running jobs stay where they run; each waiting
    job goes to its planned instance's node (`plan`: job id -> [instance, configuration]), a
    new node of the instance's type when none of its jobs runs now, where its GPUs are free;
    else it waits. `seed` and `time_limit` are the common signature's (unused)."""
    if plan is None:
        raise ValueError("vm-schedule follows a plan: pass plan={job id: [instance, cfg]}")
    cat = instance.catalog
    N = instance.nodes
    node_vm = np.full(N, -1, dtype=np.int64)
    job_node = instance.current_node.copy()
    job_cfg = instance.current_cfg.copy()
    used = np.zeros(N)
    node_of: dict[int, int] = {}
    running = np.flatnonzero(job_cfg >= 0)
    for j in running.tolist():
        n, c = int(job_node[j]), int(job_cfg[j])
        node_vm[n] = cat.cfg_vm[c]
        used[n] += cat.cfg_gpus[c]
        node_of[plan[instance.job_ids[j]][0]] = n
    waiting = np.flatnonzero(job_cfg < 0)
    for j in waiting.tolist():
        k, c = plan[instance.job_ids[j]]
        v, g = int(cat.cfg_vm[c]), int(cat.cfg_gpus[c])
        n = node_of.get(k)
        if n is None:
            free = np.flatnonzero(node_vm < 0)
            if not free.size:
                continue  # every node open: it waits
            n = int(free[0])
            node_vm[n] = v
            node_of[k] = n
        if node_vm[n] != v or used[n] + g > cat.gpus[v]:
            continue  # its GPUs are still held: it waits
        used[n] += g
        job_node[j], job_cfg[j] = n, c
    return Solution(instance, node_vm, job_node, job_cfg, FOLLOW, {"seconds": 0.0, "seed": seed})


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """`follow` in the method registry as `FOLLOW` while the block runs (the Rescheduler looks
    its method up by name); the registry as it was afterwards. It is not a method of its own
    (it needs a plan), so it is not listed otherwise."""
    from gpuaas.methods import METHODS, Method

    had = METHODS.get(FOLLOW)
    METHODS[FOLLOW] = Method(
        FOLLOW, __name__, "follow", "Follows a precomputed VM schedule", "VM schedule",
        seed_independent=True,
    )  # fmt: skip
    try:
        yield
    finally:
        if had is None:
            METHODS.pop(FOLLOW, None)
        else:
            METHODS[FOLLOW] = had


def plan_option(trace: Instance, plan: VmPlan) -> dict[str, list[int]]:
    """`follow`'s `plan` option: job id -> [instance, configuration]."""
    return {
        jid: [int(k), int(c)]
        for jid, k, c in zip(trace.job_ids, plan.vm.tolist(), plan.cfg.tolist(), strict=True)
    }


def replay(
    trace: Instance,
    plan: VmPlan,
    log: Any = None,
    **settings: Any,
) -> tuple[SimulationResult, Any]:
    """The plan as a simulated run (module docstring): (its result, the Simulator). `settings`:
    the Simulator's (nodes, overhead, startup); noise 0. `log`: a text buffer for its event
    log."""
    from gpuaas.simulator import Simulator

    on = admitted(trace, np.maximum(plan.start, trace.release))
    with registered():
        sim = Simulator(on, FOLLOW, seed=1, noise=0.0, plan=plan_option(trace, plan), **settings)
        sim.log_lines = log
        result = sim.run()
        sim.log_lines = None
    return result, sim


def best_plan(
    trace: Instance, nodes: int | None = None, startup: float = DEFAULT_STARTUP
) -> tuple[VmPlan, int]:
    """The cheapest plan by its own cost, and how many were built (module docstring, "The
    plans"): `VARIANTS`; then, outside the periods in which the cheapest of them holds at least
    N - m VMs (m of `MARGINS`), `SMALL_VARIANTS` with smaller VMs of the pricier types too;
    then `ROUNDS` squeaky-wheel rounds from the cheapest, each moving every job earlier in the
    order by `STEP` x its lateness so far."""
    N = int(trace.nodes if nodes is None else nodes)

    def build(order: str, configs: str, w: float, **options: Any) -> VmPlan:
        """`vm_schedule`'s plan, `shrunk`."""
        return shrunk(trace, vm_schedule(trace, nodes, startup, order, configs, w, **options))

    built = [build(order, configs, w) for configs, order, w in VARIANTS]
    base = min(built, key=lambda p: p.cost)
    for m in MARGINS:
        avoid = full_periods(base, N, m)
        for configs, order, w in SMALL_VARIANTS:
            plan = build(order, configs, w, avoid=avoid)
            plan.margin = m
            built.append(plan)
    best = min(built, key=lambda p: p.cost)
    count = len(built)
    rows = np.arange(trace.n_jobs)
    if best.order == "priority":
        key = priority(trace, trace.times[rows, job_configs(trace)])
    else:
        key = np.maximum(trace.release, trace.time).astype(float)
    avoid = None if best.margin is None else full_periods(base, N, best.margin)
    cur = best
    for k in range(ROUNDS):
        key = key - STEP * np.maximum(0.0, cur.end - trace.due)
        cur = build(best.order, best.configs, best.vm_weight, key=key, avoid=avoid)
        cur.margin, cur.rounds = best.margin, k + 1
        count += 1
        if cur.cost < best.cost:
            best = cur
    return best, count


def deviations(plan: VmPlan, trace: Instance, result: SimulationResult) -> dict[str, float]:
    """How the replay departed from the plan: jobs that ended later / earlier than planned
    (by more than a second), the most seconds late."""
    done = {d["id"]: d["completion"] for d in result.jobs}
    C = np.array([done[j] for j in trace.job_ids])
    diff = C - plan.end
    return {
        "later": int((diff > 1.0).sum()),
        "earlier": int((diff < -1.0).sum()),
        "most_late": float(max(0.0, diff.max())) if len(diff) else 0.0,
    }


__all__ = [
    "FOLLOW",
    "VARIANTS",
    "VmPlan",
    "check_plan",
    "deviations",
    "follow",
    "plan_option",
    "best_plan",
    "peaks",
    "registered",
    "replay",
    "shrunk",
    "vm_schedule",
]
