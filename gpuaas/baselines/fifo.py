"""First In First Out (FIFO) [§4.2]: waiting jobs start in submission order, one per node."""

from __future__ import annotations

from typing import Any

from gpuaas.baselines.dispatch import list_schedule, reject_options, submission_order
from gpuaas.instance import Instance
from gpuaas.solution import Solution


def fifo(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """Start waiting jobs by release time (ties: submission order) on free nodes.

    Running jobs keep their node and configuration until they complete; each started job gets
    its own node with the heuristics' configuration (see `gpuaas.baselines.dispatch`).

    Parameters
    ----------
    instance : Instance
        The rescheduling point.
    seed : int
        Recorded only: FIFO is deterministic.
    time_limit : float, optional
        Ignored: FIFO takes microseconds per job.

    Returns
    -------
    Solution
    """
    reject_options("fifo", options)
    return list_schedule(instance, submission_order(instance), "fifo", seed)
