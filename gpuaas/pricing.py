"""What GPU time and a move cost a job at a rescheduling point: the fill price, the queue price
and the plan values they give.

These are the prices the objective P1$ (`gpuaas.objective`) and the independent validator
(`gpuaas.validator`) judge every method by, and that the default method
(`gpuaas.heuristics.default`) plans with: they live below all of them, so that the judge
imports nothing from a contestant.

- The **plan value** of configuration c for job j is the per-job LP of the lower bound
  (`formulations/BOUND.md`, `gpuaas.per_job.per_job_lp`) on the job's remaining work with c
  used first: c alone, price x time + tardiness, or, when c meets the due date, c followed by
  a slower, cheaper configuration so that the mix ends exactly at the due date, plus the cost
  of that switch (the slower configuration's lost work and a new VM's start-up; nothing in the
  paper's setting). The configuration a job should run on now is the one of least plan value
  (`preferred_configs`).
- The **fill price** (`fill_price`): where the bound prices GPU time at the VM's share, plan
  values price it at the share the jobs can fill: a GPU model sold only in VMs larger than its
  demand costs its jobs the whole VM.
- The **queue price** (`queue_price`): while jobs wait, every second a job holds part of the N
  nodes, or loses to a restart, delays the queue. Plan values and move costs add it for the
  part of a node a configuration holds (`per_job.capacity_gpus`: a 1-GPU VM holds a whole
  node), so that under load jobs take GPU-efficient configurations on VMs that leave room and
  stay where they are.

Reasons: docs/reconfiguration.md, "The fill price" and "The queue price"; measurements:
scripts/results/archive/reconfiguration-history.md, the sections of the same names.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numba import njit

from gpuaas import reconfiguration
from gpuaas.instance import Instance
from gpuaas.kernel_args import readonly
from gpuaas.per_job import capacity_gpus, plan_values_lp, share_price
from gpuaas.per_job import rows as _rows

#: at most this many rounds of `fill_price`'s fixed point (plans -> demand -> prices -> plans):
#: six rounds measured the same as three; one round left azure-eastus at 1.43-1.59 x the bound,
#: where three reach 1.32-1.46 (scripts/results/archive/reconfiguration-history.md, "The fill price")
FILL_ROUNDS = 3


@lru_cache(maxsize=2)  # an Instance is immutable and hashes by identity; a point asks 2-3 times
def queue_price(instance: Instance) -> float:
    """λ, $ per GPU-second of node capacity: the tardiness a GPU-second taken from the queue costs.

    The N nodes hold N x the largest VM's GPUs; a second of one of them used now delays each
    waiting job by about 1 / that capacity, so λ = the waiting jobs' tardiness weights over it,
    charged for the capacity a configuration holds (`gpu_time_price`). It is 0 when no job
    waits, or when the GPUs the jobs ask for (running jobs: their configuration; waiting jobs:
    that of their plan at λ = 0) fit in that capacity, so that jobs do not queue. A first-order
    (marginal) estimate: it ignores which waiting jobs would be late anyway.
    """
    waiting = instance.current_cfg < 0
    if not waiting.any():
        return 0.0
    cat = instance.catalog
    capacity = max(1, instance.nodes * int(max(1, cat.gpus.max())))
    share = np.ascontiguousarray(share_price(instance), dtype=np.float64)
    # the waiting jobs' rows of every job's values at the share price where `fill_price` has
    # computed them (its first round): a job's plan values are its own row's alone, so the
    # same values bit for bit (tests/test_scale.py), without the waiting jobs' LPs again
    every = _cached_plan_values(instance, share)
    rows = np.flatnonzero(waiting)
    values = every[rows] if every is not None else plan_values_at(instance, share, rows)
    asked = cat.cfg_gpus[runnable_argmin(values)].sum()
    if asked + cat.cfg_gpus[instance.current_cfg[~waiting]].sum() <= capacity:
        return 0.0
    return float(instance.weight[waiting].sum()) / capacity


@lru_cache(maxsize=1)  # an Instance is immutable and hashes by identity; the rules ask 2-3 times
def fill_price(instance: Instance) -> np.ndarray:
    """(C,) $/s: configuration c = (v, g)'s price when the VMs of its GPU model m are shared
    only by the GPUs the jobs' plans ask of m, D_m: price_v x g / min(G_v, max(g, D_m)).

    Where the plans fill m's VMs (D_m >= G_v) this is the VM share the bound uses
    (`share_price`); where m comes only in VMs larger than its demand (an 8-GPU H100 VM that one
    1-GPU job wants) the job pays for the GPUs no one else will use. D_m sums the GPUs of each
    job's least plan value: first at share prices, then at the prices that demand gives, until
    the demand repeats (at most `FILL_ROUNDS` rounds).

    A GPU-less type's configuration (v, 0) costs a job its share of the VM (`share_price`,
    (J, C) then: its largest share of v's vCPUs or memory); no demand of GPUs fills it.
    """
    cat = instance.catalog
    model = cat.gpu_model_id[cat.cfg_vm]
    price, demand = share_price(instance), None
    last = np.asarray(price)
    for _ in range(FILL_ROUNDS):
        values = plan_values_at(instance, price)
        pref = runnable_argmin(values)
        asked = np.bincount(model[pref], weights=cat.cfg_gpus[pref], minlength=int(model.max()) + 1)
        if demand is not None and np.array_equal(asked, demand):
            break
        demand = asked
        filled = np.minimum(cat.gpus[cat.cfg_vm], np.maximum(cat.cfg_gpus, demand[model]))
        if cat.has_gpu_less:
            gpu_less = cat.gpu_less[cat.cfg_vm]
            with np.errstate(divide="ignore", invalid="ignore"):
                price = np.where(
                    gpu_less, share_price(instance), cat.cost[cat.cfg_vm] * cat.cfg_gpus / filled
                )
        else:
            price = cat.cost[cat.cfg_vm] * cat.cfg_gpus / filled
        if price.shape == last.shape and price.tobytes() == last.tobytes():
            break  # the same prices: the next round's demand would repeat this one's
        last = price
    price.flags.writeable = False
    return price


def gpu_time_price(
    instance: Instance, price: Callable[[Instance], np.ndarray] | None = None
) -> np.ndarray:
    """(C,) $/s of running on configuration c now: `price` (`fill_price` by default) plus the
    queue price of the node capacity it holds (`queue_price` x `capacity_gpus`)."""
    return (price or fill_price)(instance) + queue_price(instance) * capacity_gpus(instance)


def plan_values(
    instance: Instance, price: Callable[[Instance], np.ndarray] | None = None
) -> np.ndarray:
    """(J, C) per-job cost of finishing from now with configuration c first (inf: cannot run);
    GPU time is priced at `gpu_time_price` (with `price`), and a job whose data is elsewhere
    pays its move to c's location (`reconfiguration.transfer_costs`, as P1$'s run values do: a
    job prefers the configuration P1$ would keep it on)."""
    values = plan_values_at(instance, gpu_time_price(instance, price))
    if instance.catalog.places:
        values = values + reconfiguration.transfer_costs(instance)
    return values


def plan_values_at(
    instance: Instance,
    p: np.ndarray,
    rows: np.ndarray | slice = slice(None),
    delay: np.ndarray | float = 0.0,
) -> np.ndarray:
    """`plan_values` of the jobs `rows` with prices p (C,, $/s), starting `delay` seconds
    from now (nothing is paid while they wait). Those of every job from now are computed once
    per instance and prices (`_all_plan_values`): the rules ask for them several times."""
    if isinstance(rows, slice) and rows == slice(None) and np.ndim(delay) == 0 and delay == 0.0:
        p = np.ascontiguousarray(p, dtype=np.float64)
        return _all_plan_values(instance, p.tobytes(), p.shape)
    return _per_job_values(instance, p, rows, delay)


#: `_all_plan_values`'s last `_PLAN_VALUES_KEPT` results by (instance, prices' bytes, shape),
#: least recently used first: an Instance is immutable and hashes by identity
_plan_values_kept: OrderedDict[tuple[Instance, bytes, tuple[int, ...]], np.ndarray] = OrderedDict()
_PLAN_VALUES_KEPT = 4


def _all_plan_values(instance: Instance, p: bytes, shape: tuple[int, ...]) -> np.ndarray:
    """Every job's plan values from now at prices `p` (bytes of a float array of `shape`),
    computed once per instance and prices (an LRU cache of `_PLAN_VALUES_KEPT`, as
    ``functools.lru_cache`` was, that `_cached_plan_values` can also look into)."""
    key = (instance, p, shape)
    values = _plan_values_kept.get(key)
    if values is not None:
        _plan_values_kept.move_to_end(key)
        return values
    values = _per_job_values(instance, np.frombuffer(p).reshape(shape), slice(None), 0.0)
    values.flags.writeable = False
    _plan_values_kept[key] = values
    if len(_plan_values_kept) > _PLAN_VALUES_KEPT:
        _plan_values_kept.popitem(last=False)
    return values


def _cached_plan_values(instance: Instance, p: np.ndarray) -> np.ndarray | None:
    """`_all_plan_values` of `instance` at prices `p` (a contiguous float array) if already
    computed, else None (nothing computed)."""
    return _plan_values_kept.get((instance, p.tobytes(), p.shape))


def _per_job_values(
    instance: Instance, p: np.ndarray, rows: np.ndarray | slice, delay: np.ndarray | float
) -> np.ndarray:
    d = np.asarray(
        instance.rel_due[rows] - delay, dtype=np.float64
    )  # (rows,): delay is a scalar or per row
    # the switch to the slower configuration is a move: its lost work and a new VM's start-up
    switch = reconfiguration.switch_costs(instance, p)
    cat = instance.catalog
    return plan_values_lp(
        np.ascontiguousarray(instance.times[rows]),
        d,
        np.ascontiguousarray(instance.weight[rows]),
        np.ascontiguousarray(_rows(p, rows), dtype=np.float64),  # (C,) or the rows' (J, C)
        np.ascontiguousarray(_rows(switch, rows), dtype=np.float64),
        np.where(cat.spot[cat.cfg_vm], cat.spot_configs(), -1),  # spot first, then on demand
        cat.cfg_twin,
    )


def runnable_argmin(values: np.ndarray) -> np.ndarray:
    """numpy's ``argmin(values[isfinite(values).any(axis=1)], axis=1)``: per row with a finite
    value, the first column of its least value (of its first NaN where it has one), in one
    compiled pass instead of four over the (J, C) values (`fill_price` asks every round)."""
    return _runnable_argmin(*readonly(np.ascontiguousarray(values, dtype=np.float64)))


@njit(cache=True)
def _runnable_argmin(values):  # pragma: no cover - compiled
    J, C = values.shape
    out = np.empty(J, dtype=np.int64)
    m = 0
    for j in range(J):
        finite = False
        for c in range(C):
            if np.isfinite(values[j, c]):
                finite = True
                break
        if not finite:
            continue
        best = 0
        low = values[j, 0]
        if low == low:  # else column 0 is the first NaN
            for c in range(1, C):
                v = values[j, c]
                if v != v:
                    best = c  # numpy's argmin: the first NaN
                    break
                if v < low:
                    low = v
                    best = c
        out[m] = best
        m += 1
    return out[:m]


def preferred_configs(instance: Instance, values: np.ndarray | None = None) -> np.ndarray:
    """(J,) each job's configuration of least plan value (-1: none runnable); ties to fewer GPUs
    on the VM type, then the cheaper VM type."""
    cat = instance.catalog
    values = plan_values(instance) if values is None else values
    out = np.full(instance.n_jobs, -1, dtype=np.int64)
    # each configuration's rank among equal values: fewer GPUs on the VM type, the cheaper VM
    # type, the lower index
    rank = np.empty(cat.n_configs, dtype=np.int64)
    rank[np.lexsort((cat.cost[cat.cfg_vm], cat.gpus[cat.cfg_vm]))] = np.arange(cat.n_configs)
    _least_ranked(*readonly(np.ascontiguousarray(values, dtype=np.float64), rank), out)
    return out


@njit(cache=True)
def _least_ranked(values, rank, out):  # pragma: no cover - compiled
    """Per row of `values` with a finite value: among the columns of the row's least value,
    the one of least `rank` (the first such); written to `out`. As numpy's min, argmin and
    where over the rows, one pass per row instead of five over the whole array (a NaN in a
    row makes its minimum NaN, equal to nothing: column 0)."""
    J, C = values.shape
    for j in range(J):
        finite = False
        m = np.inf
        for c in range(C):
            v = values[j, c]
            if np.isfinite(v):
                finite = True
            if v != v or m != m:
                m = np.nan
            elif v < m:
                m = v
        if not finite:
            continue
        best, key = 0, C
        for c in range(C):
            k = rank[c] if values[j, c] == m else C
            if k < key:
                best, key = c, k
        out[j] = best


def move_costs(
    instance: Instance, price: Callable[[Instance], np.ndarray] | None = None
) -> np.ndarray:
    """(J, C) cost of moving each running job from its configuration to c on a new VM
    (`gpuaas.reconfiguration.move_costs`): lost work at c's `price` (`fill_price` by default),
    VM start-up, tardiness of both when late, and the GPU time both take from the queue
    (`queue_price`)."""
    if not instance.moves_cost or not (instance.current_cfg >= 0).any():
        return np.zeros((instance.n_jobs, instance.catalog.n_configs))
    p = (price or fill_price)(instance)
    return reconfiguration.move_costs(instance, p, queue_price(instance))


def running_move_costs(
    instance: Instance,
    run: np.ndarray,
    price: Callable[[Instance], np.ndarray] | None = None,
    tardiness: bool = True,
) -> np.ndarray:
    """``move_costs(instance, price)[run]`` of the running jobs `run` (ascending), computed
    for those rows alone (the keep rules read no other: not a (J, C) array at every event);
    `tardiness` False: without the delays' tardiness (`reconfiguration.running_move_costs`)."""
    if not instance.moves_cost or not len(run):
        return np.zeros((len(run), instance.catalog.n_configs))
    p = (price or fill_price)(instance)
    return reconfiguration.running_move_costs(instance, run, p, queue_price(instance), tardiness)
