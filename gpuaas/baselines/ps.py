"""Priority Scheduling (PS) [§4.2]: waiting jobs start by tardiness weight, one per node."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuaas.baselines.dispatch import list_schedule, reject_options
from gpuaas.instance import Instance
from gpuaas.solution import Solution


def ps(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """Start waiting jobs by decreasing tardiness weight omega_j (ties: release, submission order).

    The priority of a job is its tardiness weight, the price of one second of delay past its
    due date; the paper does not define PS's priority further. Running jobs keep their node and
    configuration; each started job gets its own node (see `gpuaas.baselines.dispatch`).

    Parameters
    ----------
    instance : Instance
        The rescheduling point.
    seed : int
        Recorded only: PS is deterministic.
    time_limit : float, optional
        Ignored.

    Returns
    -------
    Solution
    """
    reject_options("ps", options)
    order = np.lexsort((np.arange(instance.n_jobs), instance.release, -instance.weight))
    return list_schedule(instance, order, "ps", seed)
