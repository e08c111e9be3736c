"""Earliest Deadline First (EDF) [§4.2]: waiting jobs start by due date, one per node."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuaas.baselines.dispatch import list_schedule, reject_options
from gpuaas.instance import Instance
from gpuaas.solution import Solution


def edf(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """Start waiting jobs by increasing due date (ties: release, then submission order).

    A started job keeps its resources until it ends [§4.5]; each started job gets its own node
    with the heuristics' configuration (see `gpuaas.baselines.dispatch`).

    Parameters
    ----------
    instance : Instance
        The rescheduling point.
    seed : int
        Recorded only: EDF is deterministic.
    time_limit : float, optional
        Ignored.

    Returns
    -------
    Solution
    """
    reject_options("edf", options)
    order = np.lexsort((np.arange(instance.n_jobs), instance.release, instance.due))
    return list_schedule(instance, order, "edf", seed)
