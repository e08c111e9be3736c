"""Disruption limits (`RunConfig.max_moves`, `moves_per_hour`): which running jobs must stay.

A migration or preemption the method chooses is a voluntary move (a lost VM, `Interruption`,
is not). A running job moved `max_moves` times is pinned in the Instance the method gets
(`Instance.pinned`: every method keeps it where it is), and so is every running job once the
last hour's voluntary moves reach `moves_per_hour`. When a plan would move more jobs than the
hour has left, the jobs it moves of least slack (due date - remaining time where they run) keep
their moves, every other running job is pinned and the method plans again (`cut`). A plan that
still moves a pinned job (`apply.apply`), or more than the budget (`spend`), is refused
(SolverError): nothing is applied.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gpuaas.errors import SolverError
from gpuaas.instance import Instance
from gpuaas.rescheduler.state import RunState

#: seconds over which `RunConfig.moves_per_hour` counts voluntary moves
HOUR = 3600.0


def moves_left(s: RunState, at: float) -> int | None:
    """Voluntary moves the hourly budget allows at `at` (None: no budget)."""
    budget = s.config.moves_per_hour
    if budget is None:
        return None
    return max(0, budget - sum(k for t, k in s.recent_moves if t > at - HOUR))


def pinned(s: RunState, rows: np.ndarray, at: float) -> np.ndarray:
    """(J,) the running jobs that must stay, of the jobs at `rows` of the state's columns:
    those moved `max_moves` times, and every one when the hour's budget of moves is spent."""
    cap, spent = s.config.max_moves, moves_left(s, at) == 0
    if cap is None and not spent:
        return np.zeros(len(rows), dtype=bool)
    running = s.cols.hot["cfg"][rows] >= 0
    if spent:
        return running
    job = s.cols.job
    moved = [job[r].migrations + job[r].preemptions >= cap for r in rows.tolist()]  # type: ignore[union-attr]
    return running & np.array(moved, dtype=bool).reshape(-1)


def cut(inst: Instance, moving: np.ndarray, left: int) -> Instance:
    """`inst` with every running job pinned but the `left` of the `moving` ones (indices of
    running jobs a plan moves, more than `left`) of least slack."""
    running = inst.current_cfg >= 0
    slack = inst.rel_due[moving] - inst.times[moving, inst.current_cfg[moving]]
    pins = inst.pinned | running
    pins[moving[np.argsort(slack, kind="stable")[:left]]] = False
    return dataclasses.replace(inst, pinned=pins)


def spend(s: RunState, at: float, voluntary: int, left: int | None, method: str) -> None:
    """Count a plan's `voluntary` moves at `at` against the hour's budget (`left` of it at
    `at`; SolverError, nothing changed, when they are more)."""
    if left is not None and voluntary > left:
        raise SolverError(
            f"{method}: {voluntary} voluntary moves, more than the "
            f"{left} left of the hour's budget ({s.config.moves_per_hour})"
        )
    recent = [m for m in s.recent_moves if m[0] > at - HOUR]
    if voluntary and recent and recent[-1][0] == at:  # another point at the same instant
        recent[-1] = (at, recent[-1][1] + voluntary)
    elif voluntary:
        recent.append((at, voluntary))
    s.recent_moves = tuple(recent)
