"""The cost of change: every formula of lost work, start-up billing and move cost, in one place.

The model (docs/reconfiguration.md, "The model"):

- **Restart overhead** (`overhead`, seconds). A running job that is migrated, preempted or whose
  VM is lost restarts from a checkpoint `overhead` seconds old: it loses
  min(progress, overhead / work[j, c_old]) of its work (`lost_work`), charged at its old
  configuration's GPU share of the VM price (`lost_work_cost`).
- **VM start-up** (`startup`, seconds). A VM opened or resized at t is billed from t but runs
  jobs only from t + `startup` (`ready_time`, `startup_cost`).
- **Moving data** (`gpuaas.transfer`). A job started at another location than its data's
  (`Instance.data_at`) pays the egress of its `data_gb` and waits for the copy after its VM is
  up (`transfer_costs`: the egress, and the copy's seconds at its configuration's GPU-share
  price plus its weight when it is late on every configuration).
- **Interruption** (a spot VM reclaimed, docs/spot.md). A job checkpoints every `checkpoint`
  seconds of running since it last (re)started; on an interrupted VM it loses, besides the
  restart `overhead`, the work since its last checkpoint (`since_checkpoint`), unless it writes
  a checkpoint in the provider's warning (`notice` seconds to write one, at most the warning).

Both are on by default (`DEFAULT_OVERHEAD`, `DEFAULT_STARTUP`, grounded in public figures in
docs/reconfiguration.md); `PAPER_COSTS` switches them off, the paper's setting [§3.1].

Who uses what: the Rescheduler and the simulator charge what happens (`lost_work`,
`lost_work_cost`, `ready_time`, `startup_cost`); the objective and the MILP price a solution by
P1's extension (`reconfiguration_terms`: kappa_j per moved running job, sigma_nv per started or
resized VM; formulations/P1.md); the incumbent rules price a candidate move (`move_costs`) and
the switch inside a per-job plan (`switch_costs`). Two places recompute on purpose and do not
call this module: `gpuaas.validator` (the independent plain-Python check of the objective,
reconfiguration terms included: a mistake here shows as a disagreement there) and the event-log
recomputation of the tests (`tests/eventlog.py`). The lower bound charges none of these costs:
it bounds schedules that move for free (`gpuaas.bounds`), which every cost here only raises.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from gpuaas.kernel_args import kernel_rows, readonly
from gpuaas.per_job import at, capacity_gpus, rows, share_price
from gpuaas.transfer import transfer_matrix

if TYPE_CHECKING:
    from gpuaas.instance import Instance

#: seconds of work a moved running job loses by default (docs/reconfiguration.md)
DEFAULT_OVERHEAD = 600.0
#: seconds a VM opened or resized is billed before it runs jobs, by default
DEFAULT_STARTUP = 120.0
#: seconds between a job's checkpoints by default: Check-N-Run's production default (docs/spot.md)
DEFAULT_CHECKPOINT = 1800.0
#: the paper's setting: reconfiguration is free [§3.1]
PAPER_COSTS = {"overhead": 0.0, "startup": 0.0}


def lost_work(progress: float, work: float, overhead: float) -> float:
    """The fraction of its work a restarted job loses: it resumes from a checkpoint `overhead`
    seconds old; `work` is its whole-job time on the configuration it left, `progress` the
    fraction done (it never loses more than that)."""
    return min(progress, overhead / work) if overhead > 0 else 0.0


def since_checkpoint(
    segment: float, checkpoint: float, notice: float | None = None, warning: float = 0.0
) -> float:
    """Seconds of work an interrupted job loses besides the restart overhead: those since its
    last checkpoint, `segment` seconds after it (re)started with one every `checkpoint` s (0:
    continuously), or none when it writes one on the interruption notice (`notice` s to write,
    at most the provider's `warning`)."""
    if checkpoint <= 0 or (notice is not None and notice <= warning):
        return 0.0
    return math.fmod(segment, checkpoint)


def lost_work_cost(lost: float, work: float, share: float) -> float:
    """$ of `lost` work (a fraction of a job whose whole time is `work` s on its old
    configuration), at that configuration's GPU share of its VM price `share` ($/s)."""
    return lost * work * share


def ready_time(at: float, startup: float) -> float:
    """When a VM opened or resized at `at` can run jobs."""
    return at + startup


def startup_cost(price: float, startup: float) -> float:
    """$ a VM of `price` $/s is billed while it starts up."""
    return price * startup


def gpu_share_price(price: float, gpus: int, vm_gpus: int) -> float:
    """$/s of `gpus` of a VM of `vm_gpus` GPUs priced `price` $/s: the price lost work is
    charged at (the Rescheduler's scalar form; `gpuaas.per_job.share_price` is the same price
    for every configuration at once, its product taken in another order)."""
    return price * gpus / vm_gpus


# -- P1's reconfiguration extension (formulations/P1.md) ------------------------------------


@lru_cache(maxsize=4)  # an Instance is immutable and hashes by identity; a point asks 3-7 times
def reconfiguration_terms(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(kappa (J,), sigma (N, V)), read-only.

    kappa_j: moving running job j off its node or configuration loses `overhead` seconds of its
    work (its own `move_loss` where the instance gives one) at its configuration's GPU-share
    price (c_v g / G_v), plus omega_j x those seconds when j is late whatever it runs on; 0 for
    waiting jobs. sigma_nv: giving node n VM type v costs
    `startup` seconds of v's price, unless v is the type n runs now (the type of its running
    jobs); a node without running jobs pays it for every type. All 0 in the paper's setting.
    """
    cat = instance.catalog
    J, N = instance.n_jobs, instance.nodes
    kappa = np.zeros(J)
    sigma = np.zeros((N, cat.n_vms))
    run = np.flatnonzero(instance.current_cfg >= 0)
    c = instance.current_cfg[run]
    v = cat.cfg_vm[c]
    loss = instance.job_overhead()[run]
    if run.size and (loss > 0).any():
        late = instance.rel_due[run] < instance.min_time[run]  # times[run].min(axis=1)
        share = at(share_price(instance), run, c)
        kappa[run] = loss * (share + np.where(late, instance.weight[run], 0.0))
    if instance.startup > 0:
        sigma[:] = instance.startup * cat.cost[None, :]
        sigma[instance.current_node[run], v] = 0.0
    kappa.flags.writeable = sigma.flags.writeable = False
    return kappa, sigma


def reconfiguration_cost(
    instance: Instance, node_vm: np.ndarray, job_node: np.ndarray, job_cfg: np.ndarray
) -> float:
    """Sum of kappa_j over moved running jobs and sigma_nv over open nodes n of type v."""
    if not instance.moves_cost:
        return 0.0
    kappa, sigma = reconfiguration_terms(instance)
    is_open = np.flatnonzero(np.asarray(node_vm) >= 0)
    startups = sigma[is_open, np.asarray(node_vm)[is_open]]
    return float(kappa[moved(instance, job_node, job_cfg)].sum() + startups.sum())


def moved(instance: Instance, job_node: np.ndarray, job_cfg: np.ndarray) -> np.ndarray:
    """(J,) bool: jobs whose node or configuration differs from the incumbent's: the running
    jobs a solution migrates or preempts, and the waiting jobs it starts (whose kappa is 0)."""
    return (np.asarray(job_node) != instance.current_node) | (
        np.asarray(job_cfg) != instance.current_cfg
    )


# -- the prices of a move that the keep rules weigh (gpuaas.pricing) -------------------------


def move_costs(instance: Instance, price: np.ndarray, queue: float = 0.0) -> np.ndarray:
    """(J, C) cost of moving each running job from its configuration to c on a new VM (0 for
    waiting jobs): the `overhead` seconds of work lost, redone on c at `price` (C,, $/s), the
    VM's start-up, the tardiness of both delays when the job is late whatever it runs on, and
    the node capacity both hold from the queue at `queue` $ per GPU-second of it
    (`per_job.capacity_gpus`)."""
    J, C = instance.n_jobs, instance.catalog.n_configs
    out = np.zeros((J, C))
    run = np.flatnonzero(instance.current_cfg >= 0)
    if not run.size or not instance.moves_cost:
        return out
    _fill_move_costs(instance, run, price, queue, out, False)
    return out


def running_move_costs(
    instance: Instance,
    run: np.ndarray,
    price: np.ndarray,
    queue: float = 0.0,
    tardiness: bool = True,
) -> np.ndarray:
    """``move_costs(instance, price, queue)[run]`` of running jobs `run` (indices, ascending),
    without the other jobs' rows: (len(run), C). `tardiness` False: without the tardiness of
    the delays (`delay_tardiness` prices it per configuration instead)."""
    out = np.zeros((len(run), instance.catalog.n_configs))
    if not len(run) or not instance.moves_cost:
        return out
    run = np.asarray(run, dtype=np.int64)
    _fill_move_costs(instance, run, price, queue, out, True, tardiness)
    return out


def delay_tardiness(instance: Instance, run: np.ndarray) -> np.ndarray:
    """(len(run), C) the tardiness a move to c adds to running job run[r]: its work lost,
    redone on c, and a new VM's start-up delay its completion on c, so it pays
    ω·(max(0, t_c + delay_c − D) − max(0, t_c − D)) (D its time to its due date; 0 where it
    cannot run on c). `move_costs` charges ω·delay only for a job late on every configuration,
    and so misses a move that makes an on-time job late (the default method's keep rules use
    this instead: `move_tardiness="each"`). Compiled, one pass over the rows (at every event);
    `_delay_tardiness_numpy` is the same in array operations."""
    C = instance.catalog.n_configs
    out = np.zeros((len(run), C))
    if not len(run) or not instance.moves_cost:
        return out
    times, run, cur, due, weight, ov = readonly(
        instance.times,
        np.ascontiguousarray(run, dtype=np.int64),
        instance.current_cfg,
        instance.rel_due,
        instance.weight,
        np.ascontiguousarray(instance.job_overhead()[run], dtype=np.float64),
    )
    _delay_tardiness(times, run, cur, due, weight, ov, float(instance.startup), out)
    return out


@njit(cache=True)
def _delay_tardiness(times, run, cur_cfg, due, weight, ov, up, out):  # pragma: no cover
    """`delay_tardiness` into `out`, element by element the arithmetic of
    `_delay_tardiness_numpy` (np.maximum's NaN kept)."""
    C = times.shape[1]
    for r in range(run.shape[0]):
        j = run[r]
        t0 = times[j, cur_cfg[j]]
        t0 = t0 if (t0 != t0 or t0 >= 1e-9) else 1e-9  # np.maximum(t0, 1e-9): NaN stays
        d, w, o = due[j], weight[j], ov[r]
        for c in range(C):
            t = times[j, c]
            if not np.isfinite(t):
                continue  # out stays 0
            late = t + o * t / t0 + up - d
            late = late if (late != late or late > 0.0) else 0.0  # np.maximum(0.0, late)
            now = t - d
            now = now if (now != now or now > 0.0) else 0.0
            out[r, c] = w * (late - now)


def _delay_tardiness_numpy(instance: Instance, run: np.ndarray) -> np.ndarray:
    """`delay_tardiness` in numpy array operations (tests/test_scale.py holds the compiled one
    to it, bit for bit)."""
    C = instance.catalog.n_configs
    if not len(run) or not instance.moves_cost:
        return np.zeros((len(run), C))
    t, redo = _redo(instance, run)
    d = instance.rel_due[run][:, None]
    w = instance.weight[run][:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        out = w * (np.maximum(0.0, t + redo + instance.startup - d) - np.maximum(0.0, t - d))
    return np.where(np.isfinite(t), out, 0.0)


def _redo(instance: Instance, run: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(times, redo), each (len(run), C): the running jobs' remaining times, and the seconds a
    move to c takes to redo the work it loses (its overhead, scaled from its configuration's
    time to c's), in numpy; `_move_costs` computes the same per element."""
    t = instance.times[run]
    t0 = t[np.arange(len(run)), instance.current_cfg[run]][:, None]
    ov = instance.job_overhead()[run][:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        return t, ov * t / np.maximum(t0, 1e-9)


def _fill_move_costs(
    instance: Instance,
    run: np.ndarray,
    price: np.ndarray,
    queue: float,
    out: np.ndarray,
    by_row: bool,
    tardiness: bool = True,
) -> None:
    """`_move_costs` of the running jobs `run` into `out` (row j of job j, or with `by_row`
    row r of run[r]); `tardiness` False: no job counted late."""
    cat = instance.catalog
    late = instance.rel_due < instance.min_time  # late whatever it runs on
    times, run, cur, late, weight, overhead = readonly(
        instance.times,
        np.ascontiguousarray(run, dtype=np.int64),
        instance.current_cfg,
        late if tardiness else np.zeros_like(late),
        instance.weight,
        np.ascontiguousarray(instance.job_overhead()[run], dtype=np.float64),
    )
    price, vm_cost, gpus = readonly(
        kernel_rows(price),
        np.ascontiguousarray(cat.cost[cat.cfg_vm], dtype=np.float64),
        kernel_rows(capacity_gpus(instance)),
    )
    _move_costs(
        times, run, cur, late, weight, overhead, float(instance.startup), price, vm_cost,
        float(queue), gpus, out, by_row,
    )  # fmt: skip


@njit(cache=True)
def _move_costs(
    times, run, cur_cfg, late, weight, ov, up, price, vm_cost, queue, cap, out, by_row
):  # pragma: no cover - compiled
    """`move_costs` of the running jobs `run` (their overheads `ov`) into `out` (row j, or with
    `by_row` row r of run[r]), element by element the arithmetic of `_move_costs_numpy`'s array
    operations, in one pass over the running jobs' rows instead of a dozen (J, C) arrays at
    every event. `price` and `cap` are (1, C) (every job's) or (J, C) (row j job j's)."""
    C = times.shape[1]
    for r in range(run.shape[0]):
        j = run[r]
        o_row = r if by_row else j
        t0 = times[j, cur_cfg[j]]
        t0 = t0 if (t0 != t0 or t0 >= 1e-9) else 1e-9  # np.maximum(t0, 1e-9): NaN stays
        o = ov[r]
        tard = weight[j] * (o + up) if late[j] else 0.0
        p = price[j if price.shape[0] > 1 else 0]
        g = cap[j if cap.shape[0] > 1 else 0]
        for c in range(C):
            t = times[j, c]
            if not np.isfinite(t):
                out[o_row, c] = np.inf
                continue
            redo = o * t / t0  # seconds to redo the lost work on c
            out[o_row, c] = redo * p[c] + up * vm_cost[c] + queue * (redo + up) * g[c] + tard


def _move_costs_numpy(instance: Instance, price: np.ndarray, queue: float = 0.0) -> np.ndarray:
    """`move_costs` in numpy array operations (tests/test_scale.py holds the compiled one to
    it, bit for bit)."""
    cat = instance.catalog
    J, C = instance.n_jobs, cat.n_configs
    out = np.zeros((J, C))
    run = np.flatnonzero(instance.current_cfg >= 0)
    if not run.size or not instance.moves_cost:
        return out
    t, redo = _redo(instance, run)
    late = (instance.rel_due[run] < instance.min_time[run])[:, None]  # t.min(axis=1)
    w = instance.weight[run][:, None]
    ov, up = instance.job_overhead()[run][:, None], instance.startup
    with np.errstate(invalid="ignore", over="ignore"):
        lost = redo * rows(price, run)
        vm = up * cat.cost[cat.cfg_vm][None, :]
        wait = queue * (redo + up) * rows(capacity_gpus(instance), run)
        out[run] = np.where(
            np.isfinite(t), lost + vm + wait + np.where(late, w * (ov + up), 0.0), np.inf
        )
    return out


@lru_cache(maxsize=4)  # an Instance is immutable and hashes by identity
def transfer_costs(instance: Instance) -> np.ndarray:
    """(J, C) $ of starting each job on each configuration where that moves its data (module
    docstring, "Moving data"; 0 where it stays, or the job has no data anywhere yet),
    read-only. P1$ adds it to the job's run and wait values (`gpuaas.objective`)."""
    out = np.zeros((instance.n_jobs, instance.catalog.n_configs))
    j = np.flatnonzero((instance.data_at >= 0) & (instance.data_gb > 0))
    if j.size:
        out[j] = moves_from(instance, j, instance.data_at[j])
    out.flags.writeable = False
    return out


def moves_from(instance: Instance, jobs: np.ndarray, src: np.ndarray) -> np.ndarray:
    """(K, C) $ of moving the data of each job jobs[i] from location src[i] (-1: nowhere) to
    each configuration's location: its egress, and the copy's seconds at the configuration's
    GPU-share price plus the job's weight when it is late on every configuration. Also the
    move inside a per-job plan that leaves its configuration's location (`gpuaas.objective`)."""
    cat = instance.catalog
    loc = cat.location_index[cat.cfg_vm]
    out = np.zeros((len(jobs), cat.n_configs))
    has = (np.asarray(src) >= 0) & (instance.data_gb[jobs] > 0)
    if not has.any() or not (loc >= 0).any():
        return out
    jobs, src = np.asarray(jobs)[has], np.asarray(src)[has][:, None]
    per_gb, per_gb_seconds = transfer_matrix(cat)
    to = np.maximum(loc, 0)[None, :]
    gb = instance.data_gb[jobs][:, None]
    seconds = np.where(loc >= 0, gb * per_gb_seconds[src, to], 0.0)
    late = instance.rel_due[jobs] < instance.min_time[jobs]  # times[jobs].min(axis=1)
    rate = rows(share_price(instance), jobs) + np.where(late, instance.weight[jobs], 0.0)[:, None]
    out[has] = np.where(loc >= 0, gb * per_gb[src, to], 0.0) + seconds * rate
    return out


def switch_costs(instance: Instance, price: np.ndarray) -> np.ndarray:
    """(C,) the cost of switching a job to configuration c inside a per-job plan (a fast
    configuration, then a slower one): the `overhead` seconds lost, at `price` (C,, $/s; (J, C)
    per job, then so is the result), and a new VM's start-up."""
    cat = instance.catalog
    return instance.overhead * price + instance.startup * cat.cost[cat.cfg_vm]
