"""Can't Be Late's single-job setting, written independently of gpuaas as a reference.

Wu et al., *Can't Be Late: Optimizing Spot Instance Savings under Deadlines*, NSDI '24, §3-§6.
One job of C(0) seconds of work must finish by its deadline R(0) on one VM that is spot (price
1), on-demand (price k, always available) or none. Every switch to a spot or an on-demand VM
(also back to spot after a preemption) costs the changeover delay d: d seconds billed at the new
VM's price without progress. Time runs in ticks of the trace's gap g, as in the authors'
simulator: ``avail[i]`` says whether a spot VM can run during [i g, (i + 1) g); at each tick the
policy sees the job and ``avail[i]`` and picks the VM for that tick; a spot VM whose next tick is
unavailable is preempted at the tick's start; a tick on a VM is billed whole.

The policies are pure functions of the job state and the availability at one time
(`JobState`, ``spot``, ``tick``), so an implementation in gpuaas's Simulator can be checked
against them decision by decision:

- `greedy` (§3.4): spot whenever available, idle otherwise, on-demand to the end once the Safety
  Net Rule fires;
- `uniform_progress` (§5.2): the greedy rules plus Uniform Progress (idle and behind the line
  cp(t) >= C(0) t / R(0): on-demand), Taking Risks (spot whenever available) and Hysteresis (on
  on-demand, stay until cp(t) >= ep(t + 2d) or spot is gone);
- `on_demand`: on-demand from the start, the cost the paper normalises by.

For loose deadlines the paper (§6.1, §A.8) lets the job take spot whenever available until its
remaining work over remaining time reaches a switch point (0.7) and applies the policy from
there: `simulate(..., switch=0.7)` runs `greedy` until then and starts the uniform-progress line
(`JobState.t0`, `done0`) at that tick.

The Safety Net Rule is the authors' discretised one (remaining time floored to ticks, work plus
d or 2d rounded up to ticks), so that tick-level decisions match theirs; with ``tick`` = 0 it is
the paper's continuous rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

NONE, SPOT, ON_DEMAND = 0, 1, 2
DONE = 1e-3  # s of work left that counts as finished (the authors' tolerance)


@dataclass(frozen=True)
class JobState:
    """A job at the start of a tick: `t` s elapsed, `done` s of its `work` done, the `deadline`
    and changeover `d` (s), the VM it is on (after any preemption) and the changeover left."""

    t: float
    done: float
    work: float
    deadline: float
    d: float
    vm: int
    overhead: float
    t0: float = 0.0  # where the uniform-progress line starts (time, work done then)
    done0: float = 0.0


Policy = Callable[[JobState, bool, float], int]


def _ceil_ticks(x: float, tick: float) -> float:
    return math.ceil(x / tick) * tick if tick else x


def safety_net(s: JobState, spot: bool, tick: float, choice: int) -> int:
    """The Safety Net Rule on top of `choice`: an idle or on-demand job whose remaining work plus
    2d no longer fits goes (stays) on-demand; once work plus d no longer fits, only a spot VM past
    its changeover may carry on, everything else goes on-demand."""
    remaining = math.floor((s.deadline - s.t) / tick) * tick if tick else s.deadline - s.t
    left = s.work - s.done
    if _ceil_ticks(left + 2 * s.d, tick) >= remaining and s.vm in (NONE, ON_DEMAND):
        choice = ON_DEMAND
    if _ceil_ticks(left + s.d, tick) >= remaining:
        choice = SPOT if s.vm == SPOT and s.overhead < DONE else ON_DEMAND
        if s.d == 0 and spot:
            choice = SPOT
    return choice


def greedy(s: JobState, spot: bool, tick: float) -> int:
    """Spot while available (Exploitation Rule), idle otherwise, on-demand for good once the
    Safety Net fires."""
    if s.work - s.done <= DONE:
        return NONE
    choice = ON_DEMAND if s.vm == ON_DEMAND else (SPOT if spot else NONE)
    return safety_net(s, spot, tick, choice)


def uniform_progress(s: JobState, spot: bool, tick: float) -> int:
    """Uniform Progress with Hysteresis (§5.2.2)."""
    if s.work - s.done <= DONE:
        return NONE
    pace = (s.work - s.done0) / (s.deadline - s.t0)  # ep(t) = done0 + pace (t - t0)
    choice = SPOT if spot else NONE
    if s.done < s.done0 + pace * (s.t - s.t0):  # behind the uniform-progress line
        choice = SPOT if spot else ON_DEMAND
    if s.vm == ON_DEMAND and (not spot or s.done <= s.done0 + pace * (s.t + 2 * s.d - s.t0)):
        choice = ON_DEMAND  # hysteresis: stay until ahead of ep(t + 2d)
    return safety_net(s, spot, tick, choice)


def on_demand(s: JobState, spot: bool, tick: float) -> int:
    return NONE if s.work - s.done <= DONE else ON_DEMAND


@dataclass(frozen=True)
class Run:
    """Cost (spot-price units x hours), compute hours on spot and on-demand (changeovers
    excluded), changeovers, and the finish time (s)."""

    cost: float
    spot_hours: float
    od_hours: float
    changeovers: int
    finish: float
    met: bool


def simulate(
    avail: Sequence[bool],
    gap: float,
    work: float,
    deadline: float,
    d: float,
    policy: Policy,
    k: float,
    switch: float | None = None,
    choices: list[int] | None = None,
) -> Run:
    """One job on the availability `avail` (ticks of `gap` s) under `policy`; on-demand costs
    `k` per hour, spot 1; with `switch`, `greedy` until (work left) / (time left) >= switch;
    `choices`, when given, gets the VM of every tick until the job is done."""
    done = overhead = cost = spot_s = od_s = 0.0
    vm, switches = NONE, 0
    anchor = None if switch is not None else (0.0, 0.0)
    for i, up in enumerate(avail):
        if vm == SPOT and not up:
            vm = NONE  # preempted at the start of the tick
        if work - done <= DONE:
            return Run(cost, spot_s / 3600, od_s / 3600, switches, i * gap, i * gap <= deadline)
        if anchor is None and (work - done) >= switch * (deadline - i * gap):
            anchor = (i * gap, done)
        state = JobState(i * gap, done, work, deadline, d, vm, overhead, *(anchor or (0.0, 0.0)))
        choice = (policy if anchor is not None else greedy)(state, bool(up), gap)
        if choice == SPOT and not up:
            raise AssertionError(f"{policy.__name__} asked for spot at tick {i} without any")
        if choice not in (NONE, vm):
            overhead, switches = d, switches + 1
        vm = choice
        if choices is not None:
            choices.append(vm)
        if vm == NONE:
            continue
        cost += (k if vm == ON_DEMAND else 1.0) * gap / 3600
        run = max(gap - overhead, 0.0)
        overhead = max(overhead - gap, 0.0)
        run = min(run, work - done)
        done += run
        if vm == SPOT:
            spot_s += run
        else:
            od_s += run
    raise ValueError(f"the trace ends ({len(avail)} ticks) before the job finishes")
