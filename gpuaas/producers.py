"""The simulator's producers of events: each source of events the simulated world has.

A producer says when its next event is (`next_time`, inf: none), gives its events at an instant
(`events`; the simulator batches every producer's events at that instant into one rescheduling
point) and sees the Plan that answered them (`planned`). `Simulator.step` is one loop over
them (SimPy's shape). A new source of events (spot interruptions replayed from a trace or drawn
from a model, capacity that comes and goes) is a new producer here, added to
`Simulator.producers`.
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from gpuaas.instance import Instance, JobSpec
from gpuaas.reconfiguration import lost_work
from gpuaas.rescheduler import (
    TIME_TOL,
    Completion,
    Event,
    JobStatus,
    Plan,
    ProgressReport,
    Submission,
    Tick,
)

if TYPE_CHECKING:
    from gpuaas.simulator import Simulator

_ID, _CFG, _READY = attrgetter("id"), attrgetter("cfg"), attrgetter("ready")


class Releases:
    """Producer: a `Submission` at each job's release, in (release, trace order)."""

    def __init__(self, trace: Instance) -> None:
        self.trace = trace
        self.order = np.lexsort((np.arange(trace.n_jobs), trace.release))
        self.next = 0

    @property
    def exhausted(self) -> bool:
        return self.next >= self.trace.n_jobs

    def next_time(self, sim: Simulator, jobs: list[JobStatus]) -> float:
        return math.inf if self.exhausted else float(self.trace.release[self.order[self.next]])

    def events(self, sim: Simulator, t: float, jobs: list[JobStatus]) -> list[Event]:
        tr, out = self.trace, []
        while not self.exhausted and tr.release[self.order[self.next]] <= t:
            j = int(self.order[self.next])
            spec = JobSpec(
                id=tr.job_ids[j],
                release=float(tr.release[j]),
                due=float(tr.due[j]),
                weight=float(tr.weight[j]),
                work=tr.work[j],
                progress=float(tr.progress[j]),
            )
            out.append(Submission(t, spec))
            self.next += 1
        return out

    def planned(self, sim: Simulator, plan: Plan) -> None:
        pass


class Execution:
    """Producer: the jobs' actual execution in the simulated cloud.

    Actual durations are the predicted ones times 1 + e_j (noise, module docstring). A running
    job progresses from its node's `ready` time; it completes (`Completion`) when its actual
    remaining time is below `TIME_TOL`; with noise, every job that has run is reported
    (`ProgressReport`) at every event; a job the plan moves loses actual work by the restart
    rule of `gpuaas.reconfiguration`.
    """

    def __init__(self, trace: Instance, seed: int, noise: float) -> None:
        J = trace.n_jobs
        self.trace = trace
        self.noise = noise
        self.index = {jid: j for j, jid in enumerate(trace.job_ids)}
        rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))  # the noise stream
        self.factor = 1.0 + rng.uniform(-2 * noise, 2 * noise, size=J) if noise > 0 else np.ones(J)
        self.actual_work = trace.work * self.factor[:, None]
        self.actual_progress = np.array(trace.progress, dtype=np.float64)
        self.actual_lost = np.zeros(J)  # fraction of actual work lost to restart overhead

    def _running(self, jobs: list[JobStatus]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(trace index, configuration, ready) of the running jobs, in the order of `jobs`:
        every per-job formula below is then one numpy operation over them, element by element
        the same arithmetic as a loop over the jobs."""
        run = [job for job in jobs if job.cfg >= 0]
        idx = np.fromiter(map(self.index.__getitem__, map(_ID, run)), np.int64, len(run))
        cfg = np.fromiter(map(_CFG, run), np.int64, len(run))
        ready = np.fromiter(map(_READY, run), np.float64, len(run))
        return idx, cfg, ready

    def next_time(self, sim: Simulator, jobs: list[JobStatus]) -> float:
        """The earliest actual completion of a running job."""
        if sim.clock is None:
            return math.inf
        idx, cfg, ready = self._running(jobs)
        if not idx.size:
            return math.inf
        begin = np.maximum(sim.clock, ready)
        return float((begin + self.actual_work[idx, cfg] * (1.0 - self.actual_progress[idx])).min())

    def events(self, sim: Simulator, t: float, jobs: list[JobStatus]) -> list[Event]:
        """Advance actual progress to `t`: completions, then (with noise) progress reports."""
        idx, cfg, ready = self._running(jobs)
        work = self.actual_work[idx, cfg]
        if sim.clock is not None:
            run = t - np.maximum(sim.clock, ready)
            ran = run > 0
            self.actual_progress[idx[ran]] += run[ran] / work[ran]
        ends = work * (1.0 - self.actual_progress[idx]) <= TIME_TOL
        ids = self.trace.job_ids
        out: list[Event] = [Completion(t, ids[j]) for j in idx[ends].tolist()]
        if self.noise > 0:
            done = set(idx[ends].tolist())
            out += [
                ProgressReport(t, job.id, float(self.actual_progress[self.index[job.id]]))
                for job in jobs
                if self.index[job.id] not in done and job.start is not None
            ]
        return out

    def planned(self, sim: Simulator, plan: Plan) -> None:
        """The restart rule on the actual work of each job the plan moves or whose VM it lost."""
        ov = sim.rescheduler.overhead
        if ov <= 0:
            return
        cat = self.trace.catalog
        moved = [*plan.preempt, *plan.interrupted, *(dict(m.old, id=m.id) for m in plan.migrate)]
        for a in moved:
            j = self.index[a["id"]]
            c = cat.config(cat.vm_index(a["vm"]), a["gpus"])
            lost = lost_work(float(self.actual_progress[j]), float(self.actual_work[j, c]), ov)
            self.actual_progress[j] -= lost
            self.actual_lost[j] += lost


class Ticks:
    """Producer: a `Tick` `tick` seconds after the last event while jobs are unfinished."""

    def __init__(self, tick: float) -> None:
        self.tick = tick

    def next_time(self, sim: Simulator, jobs: list[JobStatus]) -> float:
        return sim.clock + self.tick if sim.clock is not None and jobs else math.inf

    def events(self, sim: Simulator, t: float, jobs: list[JobStatus]) -> list[Event]:
        return [Tick(t)] if t >= self.next_time(sim, jobs) else []

    def planned(self, sim: Simulator, plan: Plan) -> None:
        pass
