"""What time and change cost: the clock's advance, completions, restarts and lost VMs.

Between two events every open VM is charged price x elapsed (a spot VM's also to `spot_cost`,
its VM-seconds to the interruption-rate evidence) and every running job gains elapsed /
work[j, c] of progress at its estimated speed (`speed.ratio`; work = the whole-job time on its
configuration c). A job predicted finished but not reported complete is held at `MAX_PROGRESS`.
A completion costs omega_j * max(0, completion - due_j). A job leaving its place loses work by
the restart rule (`gpuaas.reconfiguration`), charged at its configuration's GPU share; a job on
a lost VM (`Interruption`) loses besides the work since its last checkpoint, counted apart
(`interruptions`, `interrupted_work`, `interruption_cost`). Each function changes the
`RunState` it is given.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from gpuaas.instance import gpu_less_shares
from gpuaas.reconfiguration import gpu_share_price, lost_work, lost_work_cost, since_checkpoint
from gpuaas.rescheduler import speed
from gpuaas.rescheduler.records import InterruptedJob, Job, completed_record
from gpuaas.rescheduler.state import RunState, touch

#: progress a job is held at when predicted finished but not (yet) reported complete
MAX_PROGRESS = 1.0 - 1e-9


def advance(s: RunState, at: float, completing: set[str]) -> None:
    """Charge open VMs and progress running jobs from the last event to `at` (the jobs
    `completing` at `at` are not held below 1).

    Array operations over the open nodes and the running jobs' rows of the columns, element
    by element the arithmetic of a loop over them in their order (the costs are summed in node
    order: `np.add.accumulate` adds one term after the other, as `+=` in a loop does)."""
    if s.time is None:
        return
    dt = at - s.time
    if dt <= 0:
        return
    nodes, vms, node_ready = s.node_arrays()
    if len(vms):
        cost = s.price_array[vms] * dt
        s.vm_cost = _running_sum(s.vm_cost, cost)
        spot = s.spot_array[vms]
        if spot.any():
            s.spot_cost = _running_sum(s.spot_cost, cost[spot])
            held = np.zeros(len(s.spot))
            np.add.at(held, vms[spot], dt)
            s.spot_held = s.spot_held + held
    cols = s.cols
    rows = s.order()
    cfg = cols.hot["cfg"][rows]
    rows, cfg = rows[cfg >= 0], cfg[cfg >= 0]
    if not len(rows):
        return
    ready = np.full(s.config.nodes, -np.inf)
    ready[nodes] = node_ready
    # from its node's start-up, and its data's arrival where it moved location (`transfer`)
    begin = np.maximum(
        np.maximum(s.time, ready[cols.hot["node"][rows]]), cols.hot["data_ready"][rows]
    )
    run = at - begin
    go = run > 0
    rows, cfg, run = rows[go], cfg[go], run[go]
    work = cols.work[rows, cfg]
    slow = np.flatnonzero(cols.evidence[rows])
    if len(slow):  # jobs with speed evidence: their estimated ratio where they run
        work[slow] *= [speed.ratio(s, cols.job[r], c) for r, c in zip(rows[slow], cfg[slow])]
    progress = cols.hot["progress"][rows] + run / work
    cols.hot["running"][rows] += run
    cols.hot["segment"][rows] += run
    over = progress > MAX_PROGRESS
    if over.any():
        done = {s.jobs[jid].row for jid in completing}
        # a mask, not a list over every running job; a comparison per completing job (a
        # handful), not `np.isin` (numpy's table or sort over every running job's row)
        for r in done:
            over &= rows != r
        progress[over] = MAX_PROGRESS
    cols.hot["progress"][rows] = progress


def _running_sum(total: float, terms: np.ndarray) -> float:
    """`total` plus each of `terms` in turn (the rounding of a loop of `+=`)."""
    return float(np.add.accumulate(np.concatenate(([total], terms)))[-1])


def finish(s: RunState, jid: str, at: float) -> None:
    """Job `jid` completed at `at`: its tardiness cost, its record, its speed evidence pooled."""
    job = s.remove(jid)
    s.speed_cache.pop(jid, None)
    if job.observed:
        s.speed_pool = speed.pool(s.speed_pool, job.observed)
    tard = job.weight * max(0.0, at - job.due)
    s.tardiness_cost += tard
    s.completed[jid] = completed_record(job, at, tard)
    s.log.append(jid)


def lose_work(s: RunState, job: Job, extra: float = 0.0) -> float:
    """The restart rule (`gpuaas.reconfiguration`) on a running job leaving its place;
    `extra`: seconds of work it loses besides the restart's (an interruption's)."""
    overhead = s.config.overhead
    if overhead + extra <= 0:
        return 0.0
    touch(s, job)
    c = job.cfg
    work = float(job.work[c]) * speed.ratio(s, job, c)
    lost = lost_work(job.progress, work, overhead + extra)
    job.progress -= lost
    job.reported = None  # the real restart may lose more than predicted
    job.lost += lost
    cat = s.catalog
    v = int(cat.cfg_vm[c])
    if cat.gpus[v]:
        share = gpu_share_price(s.price[v], s.cfg_gpus[c], int(cat.gpus[v]))
    else:  # a GPU-less type: the job's largest share of its vCPUs or memory
        k = int(np.searchsorted(np.flatnonzero(cat.gpu_less[cat.cfg_vm]), c))
        share = s.price[v] * float(gpu_less_shares(cat, job.cpus, job.memory)[0, k])
    s.lost_work_cost += lost_work_cost(lost, work, share)
    return lost


def interrupt(s: RunState, p: int, drops: Collection[int] = ()) -> list[InterruptedJob]:
    """Node p's VM is gone: its jobs lose the work since their last checkpoint and the
    restart's, and wait; it closes (a spot type's interruption counted for its held VMs' rate,
    unless its capacity drops at this instant, `drops`: the drop's rate counts it)."""
    out = []
    cols = s.cols
    rows = s.order()
    for r in rows[(cols.hot["node"][rows] == p) & (cols.hot["cfg"][rows] >= 0)].tolist():
        job = cols.job[r]
        touch(s, job)
        c = job.cfg
        extra = since_checkpoint(job.segment, job.checkpoint, s.config.notice, s.catalog.warning)
        before = s.lost_work_cost
        lost = lose_work(s, job, extra)
        job.interrupted_work += lost
        s.interruption_cost += s.lost_work_cost - before
        job.interruptions += 1
        s.interruptions += 1
        job.anchor = None
        out.append(InterruptedJob(job.id, p, s.cfg_vm[c], s.cfg_gpus[c], lost))
        job.node, job.cfg = -1, -1
        s.replan[job.id] = None
    v = s.nodes[p].vm
    s.renode.add(p)
    s.nodes = {q: n for q, n in s.nodes.items() if q != p}  # replaced: `RunState.node_arrays`
    if s.spot[v] and v not in drops:
        lost_vms = s.spot_lost.copy()
        lost_vms[v] += 1
        s.spot_lost = lost_vms
    return out
