"""The simulator's producers of events: each source of events the simulated world has.

A producer says when its next event is (`next_time`, inf: none), gives its events at an instant
(`events`; the simulator batches every producer's events at that instant into one rescheduling
point) and sees the Plan that answered them (`planned`). `Simulator.step` is one loop over
them (SimPy's shape). A new source of events is a new producer here, added to
`Simulator.producers`: `Releases` (submissions), `Execution` (completions, progress, the work
restarts lose), `Ticks` and `SpotMarket` (spot capacity and interruptions from an
`gpuaas.availability.Availability`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gpuaas.availability import UNLIMITED, Availability
from gpuaas.baselines.dispatch import submission_order
from gpuaas.instance import Instance
from gpuaas.reconfiguration import lost_work, ready_time, since_checkpoint
from gpuaas.rescheduler import (
    TIME_TOL,
    CapacityChange,
    Completion,
    Event,
    Interruption,
    Plan,
    ProgressReport,
    Submission,
    Tick,
)

if TYPE_CHECKING:
    from gpuaas.run_config import RunConfig
    from gpuaas.simulator import Simulator


class Releases:
    """Producer: a `Submission` at each job's release, in (release, trace order)."""

    def __init__(self, trace: Instance) -> None:
        self.trace = trace
        self.order = submission_order(trace)
        self.next = 0

    @property
    def exhausted(self) -> bool:
        return self.next >= self.trace.n_jobs

    def next_time(self, sim: Simulator) -> float:
        return math.inf if self.exhausted else float(self.trace.release[self.order[self.next]])

    def events(self, sim: Simulator, t: float) -> list[Event]:
        tr, out = self.trace, []
        while not self.exhausted and tr.release[self.order[self.next]] <= t:
            out.append(Submission(t, tr.job_spec(int(self.order[self.next]))))
            self.next += 1
        return out

    def planned(self, sim: Simulator, plan: Plan) -> None:
        pass


class Execution:
    """Producer: the jobs' actual execution in the simulated cloud.

    Actual durations are the predicted ones times `factors` (J, C) (`gpuaas.noise`). A running
    job progresses from its node's `ready` time (and its data's, moved between locations); it
    completes (`Completion`) when its actual remaining time is below `TIME_TOL`; with `report`, every job that has run is reported
    (`ProgressReport`) at every event; a job the plan moves loses actual work by the restart
    rule of `gpuaas.reconfiguration`, and one whose VM is interrupted the work since its last
    checkpoint too (its own clock of seconds run since it last (re)started, `segment`).

    **Co-location slowdown** (the trace's `colocation` table, `gpuaas.colocation`): a running
    job progresses at its speed alone times its co-location speed, the table's product over
    the other jobs placed on its node (a job still starting up or waiting for its data counts
    as there), recomputed whenever a plan changes who runs where; its checkpoint clock
    (`segment`) counts seconds of work at full speed, so a checkpoint is every so much work.

    `interruption_delay` (J,): seconds by which its interruptions delayed each job: the actual
    work each lost (restart overhead included, in seconds on the configuration it lost it on)
    plus the time from the interruption until the job ran again (waiting for a new VM, its
    start-up). `gpuaas.simulation_result` attributes tardiness to interruptions with it.
    """

    def __init__(
        self, trace: Instance, factors: np.ndarray, report: bool, config: RunConfig | None = None
    ) -> None:
        J = trace.n_jobs
        self.trace = trace
        self.report = report
        self.config = config
        default = 0.0 if config is None else config.checkpoint
        self.checkpoint = np.where(np.isnan(trace.checkpoint), default, trace.checkpoint)
        self.segment = np.zeros(J)  # seconds run since the last (re)start
        self.actual_interrupted = np.zeros(J)  # fraction of actual work lost to interruptions
        self.interrupted_seconds = np.zeros(J)  # seconds of actual work lost to them
        self.interruption_delay = np.zeros(J)  # seconds its interruptions delayed it (above)
        self.interrupted_at = np.full(J, np.nan)  # when it was last interrupted, until it runs
        self.index = {jid: j for j, jid in enumerate(trace.job_ids)}
        self.factor = factors
        self.actual_work = trace.work * factors
        self.actual_progress = np.array(trace.progress, dtype=np.float64)
        self.actual_lost = np.zeros(J)  # fraction of actual work lost to restart overhead
        self.order = submission_order(trace)  # the Rescheduler's order of its jobs
        self.unfinished = np.zeros(J, dtype=bool)  # submitted, not completed
        self.started = np.zeros(J, dtype=bool)  # ... and started here once
        self.node = np.full(J, -1, dtype=np.int64)  # where it runs (-1: it does not)
        self.cfg = np.full(J, -1, dtype=np.int64)
        self.ready = np.zeros(config.nodes or trace.nodes)  # when each node's VM runs jobs
        self.data_ready = np.zeros(J)  # when a job's data moved between locations is there
        # the running and the unfinished jobs in submission order (None: to compute, after a
        # plan changed them): not a pass over every job of the trace at every event
        self.running: np.ndarray | None = None
        self.waiting: np.ndarray | None = None
        self.colocation = trace.colocation_model()
        # the running jobs' co-location speeds (None: to compute after a plan moved jobs)
        self.speed: np.ndarray | None = None

    def _running(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(trace index, configuration, ready) of the running jobs, in submission order (the
        Rescheduler's): every per-job formula below is then one numpy operation over them,
        element by element the same arithmetic as a loop over the jobs."""
        if self.running is None:
            self.running = self.order[self.cfg[self.order] >= 0]
        idx = self.running
        return idx, self.cfg[idx], np.maximum(self.ready[self.node[idx]], self.data_ready[idx])

    def _speed(self, idx: np.ndarray) -> np.ndarray | float:
        """The running jobs' (`idx`) co-location speeds, 1.0 without a table (class docstring)."""
        if self.colocation is None:
            return 1.0
        if self.speed is None:
            self.speed = self.colocation.speeds(np.where(self.cfg >= 0, self.node, -1))[idx]
        return self.speed

    def unfinished_jobs(self) -> np.ndarray:
        """The submitted jobs not completed, in submission order (the Rescheduler's)."""
        if self.waiting is None:
            self.waiting = self.order[self.unfinished[self.order]]
        return self.waiting

    def next_time(self, sim: Simulator) -> float:
        """The earliest actual completion of a running job."""
        if sim.clock is None:
            return math.inf
        idx, cfg, ready = self._running()
        if not idx.size:
            return math.inf
        begin = np.maximum(sim.clock, ready)
        left = self.actual_work[idx, cfg] * (1.0 - self.actual_progress[idx])
        if self.colocation is not None:
            left = left / self._speed(idx)
        return float((begin + left).min())

    def events(self, sim: Simulator, t: float) -> list[Event]:
        """Advance actual progress to `t`: completions, then (`report`) progress reports."""
        idx, cfg, ready = self._running()
        work = self.actual_work[idx, cfg]
        if sim.clock is not None:
            run = t - np.maximum(sim.clock, ready)
            if self.colocation is not None:  # seconds of work at full speed
                run = run * self._speed(idx)
            ran = run > 0
            self.actual_progress[idx[ran]] += run[ran] / work[ran]
            self.segment[idx[ran]] += run[ran]
        ends = work * (1.0 - self.actual_progress[idx]) <= TIME_TOL
        ids = self.trace.job_ids
        out: list[Event] = [Completion(t, ids[j]) for j in idx[ends].tolist()]
        if self.report:
            done = set(idx[ends].tolist())
            out += [
                ProgressReport(t, ids[j], float(self.actual_progress[j]))
                for j in self.order[self.started[self.order]].tolist()
                if j not in done
            ]
        return out

    def planned(self, sim: Simulator, plan: Plan) -> None:
        """The restart rule on the actual work of each job the plan moves or whose VM it lost
        (and, for a lost VM, the work since the job's last checkpoint); every job that starts
        or moves restarts its checkpoint clock."""
        r = sim.rescheduler
        cat = self.trace.catalog
        notice = None if self.config is None else self.config.notice
        lost_vm = {a["id"] for a in plan.interrupted}
        moved = [*plan.preempt, *plan.interrupted, *(dict(m.old, id=m.id) for m in plan.migrate)]
        for a in moved:
            j = self.index[a["id"]]
            c = cat.config(cat.vm_index(a["vm"]), a["gpus"])
            seconds = r.overhead
            if a["id"] in lost_vm:
                seconds += since_checkpoint(
                    float(self.segment[j]), float(self.checkpoint[j]), notice, cat.warning
                )
            lost = lost_work(float(self.actual_progress[j]), float(self.actual_work[j, c]), seconds)
            self.actual_progress[j] -= lost
            self.actual_lost[j] += lost
            if a["id"] in lost_vm:
                self.actual_interrupted[j] += lost
                self.interrupted_seconds[j] += lost * float(self.actual_work[j, c])
                self.interruption_delay[j] += lost * float(self.actual_work[j, c])
                self.interrupted_at[j] = plan.time
        for a in (*moved, *plan.start, *plan.migrate):
            self.segment[self.index[a["id"]]] = 0.0
        self._place(plan)
        for a in plan.transfer:  # its data moves to another location first (`gpuaas.transfer`)
            self.data_ready[self.index[a.id]] = a.ready
        for a in plan.start:  # an interrupted job runs again once its VM (and data) is ready
            j = self.index[a.id]
            if not math.isnan(self.interrupted_at[j]):
                begin = max(plan.time, float(self.ready[self.node[j]]), self.data_ready[j])
                self.interruption_delay[j] += begin - self.interrupted_at[j]
                self.interrupted_at[j] = math.nan

    def _place(self, plan: Plan) -> None:
        """Where the jobs run after `plan` (its changes only)."""
        cat, index = self.trace.catalog, self.index
        if plan.submitted or plan.completed:
            self.waiting = None
        if plan.completed or plan.preempt or plan.interrupted or plan.start:
            self.running = None
        if self.running is None or plan.migrate:
            self.speed = None
        for jid in plan.submitted:
            self.unfinished[index[jid]] = True
        for jid in plan.completed:
            j = index[jid]
            self.unfinished[j] = self.started[j] = False
            self.node[j] = self.cfg[j] = -1
        for a in (*plan.preempt, *plan.interrupted):
            self.node[index[a.id]] = self.cfg[index[a.id]] = -1
        ready = ready_time(plan.time, self.config.startup)
        for a in (*plan.open, *plan.resize):
            self.ready[a.node] = ready
        for jid, where in (
            *((a.id, a) for a in plan.start),
            *((m.id, m.new) for m in plan.migrate),
        ):
            j = index[jid]
            self.node[j], self.cfg[j] = where.node, cat.config(cat.vm_index(where.vm), where.gpus)
            self.started[j] = True


class Ticks:
    """Producer: a `Tick` `tick` seconds after the last rescheduling point while jobs are
    unfinished (a change of spot capacity that changed nothing is not one: `Plan.replanned`)."""

    def __init__(self, tick: float) -> None:
        self.tick = tick

    def next_time(self, sim: Simulator) -> float:
        return sim.point + self.tick if sim.point is not None and sim.busy else math.inf

    def events(self, sim: Simulator, t: float) -> list[Event]:
        return [Tick(t)] if t >= self.next_time(sim) else []

    def planned(self, sim: Simulator, plan: Plan) -> None:
        pass


class SpotMarket:
    """Producer: spot capacity and interruptions replayed from an `Availability` (on-demand
    type names; the catalog's spot variants are what it limits and interrupts).

    At the first event it tells the Rescheduler every spot variant's capacity (0 for a type the
    availability does not list: no spot capacity); then each capacity change is a
    `CapacityChange`, and when a count drops below the spot VMs held of the type the excess is
    interrupted at that instant (the VMs in the highest slots). Each spot VM opened takes the
    lowest free slot of its type (`Availability`'s per-slot interruption streams); an
    interruption event of a slot held is an `Interruption` of that node. While no job is
    unfinished and no spot VM held, changes wait for the next event and only the counts then
    are told (nothing to interrupt, nobody to plan for).
    """

    def __init__(self, availability: Availability, catalog) -> None:
        self.availability = availability
        names = catalog.vm_names
        self.variant = {names[int(b)]: names[v] for v, b in enumerate(catalog.base) if b >= 0}
        self.queue = [e for e in availability.events() if e.vm in self.variant]
        self.next = 0
        self.steps = 0  # rescheduling points at which a change of the availability was replayed
        self.told: dict[str, int | None] | None = None  # the counts the Rescheduler knows
        self.slots: dict[str, dict[int, int]] = {v: {} for v in self.variant.values()}  # node->slot

    def next_time(self, sim: Simulator) -> float:
        idle = not sim.busy and not any(self.slots.values())
        if self.told is None or idle:
            return math.inf
        # an interruption of a slot no VM holds changes nothing: no point for it (skipped)
        while self.next < len(self.queue):
            ev = self.queue[self.next]
            if ev.count is not None or ev.slot in self.slots[self.variant[ev.vm]].values():
                break
            self.next += 1
        if self.next >= len(self.queue):
            return math.inf
        return max(self.queue[self.next].time, sim.clock if sim.clock is not None else 0.0)

    def _count(self, count: int) -> int | None:
        return None if count >= UNLIMITED else count

    def events(self, sim: Simulator, t: float) -> list[Event]:
        if self.told is None:  # the first event: every variant's count
            self.told = {
                s: self._count(self.availability.count(b, t)) for b, s in self.variant.items()
            }
            while self.next < len(self.queue) and self.queue[self.next].time <= t:
                self.next += 1
            return [CapacityChange(t, s, n) for s, n in self.told.items()]
        lost: set[int] = set()
        count: dict[str, int | None] = {}
        if self.next < len(self.queue) and self.queue[self.next].time <= t:
            self.steps += 1
        while self.next < len(self.queue) and self.queue[self.next].time <= t:
            ev = self.queue[self.next]
            self.next += 1
            vm = self.variant[ev.vm]
            held = {n: s for n, s in self.slots[vm].items() if n not in lost}
            if ev.count is not None:
                n = count[vm] = self._count(ev.count)
                if n is not None:
                    lost.update(sorted(held, key=held.get, reverse=True)[: max(0, len(held) - n)])
            else:
                lost.update(n for n, s in held.items() if s == ev.slot)
        out: list[Event] = [
            CapacityChange(t, vm, n) for vm, n in count.items() if n != self.told[vm]
        ]
        self.told.update(count)
        for n in sorted(lost):
            out.append(Interruption(t, n))
            for held in self.slots.values():
                held.pop(n, None)
        return out

    def least_steps(self, trace: Instance) -> int:
        """A lower bound on the rescheduling points this replay adds to a simulation of `trace`
        (its actual durations): a job is unfinished from its release for at least its shortest
        remaining time, and while one is, every distinct time of the queue is a point."""
        if not trace.n_jobs or not self.queue:
            return 0
        # capacity changes only: interruptions of slots not held are skipped (`next_time`)
        changes = [e.time for e in self.queue if e.count is not None]
        times = np.unique(np.array(changes, dtype=np.float64))
        if not times.size:
            return 0
        order = np.argsort(trace.release, kind="stable")
        starts = trace.release[order]
        ends = np.maximum.accumulate(starts + trace.min_time[order] - TIME_TOL)
        first = np.concatenate(([True], starts[1:] >= ends[:-1]))  # a new busy stretch
        group = np.cumsum(first) - 1
        lo = starts[first]
        hi = np.full(lo.size, -np.inf)
        np.maximum.at(hi, group, ends)
        inside = np.searchsorted(times, hi, side="left") - np.searchsorted(times, lo, side="right")
        return int(np.maximum(inside, 0).sum())

    def planned(self, sim: Simulator, plan: Plan) -> None:
        """Free the slots of spot VMs closed or resized away, give new ones the lowest free."""
        for a in (*plan.close, *(dict(node=x.node, vm=x.old) for x in plan.resize)):
            if a["vm"] in self.slots:
                self.slots[a["vm"]].pop(a["node"], None)
        for a in (*plan.open, *(dict(node=x.node, vm=x.new) for x in plan.resize)):
            held = self.slots.get(a["vm"])
            if held is not None:
                used = set(held.values())
                held[a["node"]] = next(s for s in range(len(used) + 1) if s not in used)
