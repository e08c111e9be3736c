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

    def next_time(self, sim: Simulator, jobs: list[JobStatus]) -> float:
        """The earliest actual completion of a running job."""
        t = math.inf
        if sim.clock is None:
            return t
        for job in jobs:
            if job.cfg >= 0:
                j = self.index[job.id]
                begin = max(sim.clock, job.ready)
                t = min(t, begin + self.actual_work[j, job.cfg] * (1.0 - self.actual_progress[j]))
        return t

    def events(self, sim: Simulator, t: float, jobs: list[JobStatus]) -> list[Event]:
        """Advance actual progress to `t`: completions, then (with noise) progress reports."""
        out: list[Event] = []
        done: set[str] = set()
        for job in jobs:
            if job.cfg >= 0:
                j = self.index[job.id]
                if sim.clock is not None:
                    run = t - max(sim.clock, job.ready)
                    if run > 0:
                        self.actual_progress[j] += run / self.actual_work[j, job.cfg]
                if self.actual_work[j, job.cfg] * (1.0 - self.actual_progress[j]) <= TIME_TOL:
                    out.append(Completion(t, job.id))
                    done.add(job.id)
        if self.noise > 0:
            out += [
                ProgressReport(t, job.id, float(self.actual_progress[self.index[job.id]]))
                for job in jobs
                if job.id not in done and job.start is not None
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
