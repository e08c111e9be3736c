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

from gpuaas.reconfiguration import gpu_share_price, lost_work, lost_work_cost, since_checkpoint
from gpuaas.rescheduler import speed
from gpuaas.rescheduler.records import InterruptedJob, Job, completed_record
from gpuaas.rescheduler.state import RunState

#: progress a job is held at when predicted finished but not (yet) reported complete
MAX_PROGRESS = 1.0 - 1e-9


def advance(s: RunState, at: float, completing: set[str]) -> None:
    """Charge open VMs and progress running jobs from the last event to `at` (the jobs
    `completing` at `at` are not held below 1)."""
    if s.time is None:
        return
    dt = at - s.time
    if dt <= 0:
        return
    held = np.zeros(len(s.spot))
    for n in s.nodes.values():  # open nodes, in node order
        s.vm_cost += s.price[n.vm] * dt
        if s.spot[n.vm]:
            s.spot_cost += s.price[n.vm] * dt
            held[n.vm] += dt
    if held.any():
        s.spot_held = s.spot_held + held
    since = s.time
    ready = {p: n.ready for p, n in s.nodes.items()}
    for job in s.jobs.values():
        c = job.cfg
        if c >= 0:
            run = at - max(since, ready[job.node])
            if run <= 0:
                continue
            r = speed.ratio(s, job, c) if job.observed or job.measured else 1.0
            job.progress += run / (float(job.work[c]) * r)
            job.running += run
            job.segment += run
            if job.progress > MAX_PROGRESS and job.id not in completing:
                job.progress = MAX_PROGRESS


def finish(s: RunState, jid: str, at: float) -> None:
    """Job `jid` completed at `at`: its tardiness cost, its record, its speed evidence pooled."""
    job = s.jobs.pop(jid)
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
    c = job.cfg
    work = float(job.work[c]) * speed.ratio(s, job, c)
    lost = lost_work(job.progress, work, overhead + extra)
    job.progress -= lost
    job.reported = None  # the real restart may lose more than predicted
    job.lost += lost
    v = int(s.catalog.cfg_vm[c])
    share = gpu_share_price(s.price[v], s.cfg_gpus[c], int(s.catalog.gpus[v]))
    s.lost_work_cost += lost_work_cost(lost, work, share)
    return lost


def interrupt(s: RunState, p: int, drops: Collection[int] = ()) -> list[InterruptedJob]:
    """Node p's VM is gone: its jobs lose the work since their last checkpoint and the
    restart's, and wait; it closes (a spot type's interruption counted for its held VMs' rate,
    unless its capacity drops at this instant, `drops`: the drop's rate counts it)."""
    out = []
    for job in s.jobs.values():
        if job.node == p and job.cfg >= 0:
            c = job.cfg
            extra = since_checkpoint(
                job.segment, job.checkpoint, s.config.notice, s.catalog.warning
            )
            before = s.lost_work_cost
            lost = lose_work(s, job, extra)
            job.interrupted_work += lost
            s.interruption_cost += s.lost_work_cost - before
            job.interruptions += 1
            s.interruptions += 1
            job.anchor = None
            out.append(InterruptedJob(job.id, p, s.cfg_vm[c], s.cfg_gpus[c], lost))
            job.node, job.cfg = -1, -1
    v = s.nodes.pop(p).vm
    if s.spot[v] and v not in drops:
        lost_vms = s.spot_lost.copy()
        lost_vms[v] += 1
        s.spot_lost = lost_vms
    return out
