"""Co-location slowdown (issue 44 item 2): jobs sharing a VM slow each other.

A job belongs to a workload class (`Colocation.workload`, -1: none), and a pairwise table
`Colocation.speed` gives the share of its speed alone a job of class a keeps next to one of
class b (1: no slowdown). On a VM its speed is the product over the other jobs there, the rule
of Eva's simulator (EuroSys '25, its contention table of 9 measured workloads), which
measures pairs only: a job next to two others is slowed by both. The table is the user's
(measured on their own workloads); with none every job keeps its speed.

What reads it: the default method's re-packing (`gpuaas.resources.consolidate`) charges a VM
the share of it whose work is lost to slowdown beside the share left empty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuaas.errors import InputError


@dataclass(frozen=True)
class Colocation:
    """Each job's workload class (J,) int (-1: none, never slowed nor slowing) and the speed
    table (W, W): speed[a, b] is the share of its speed a class-a job keeps next to a class-b
    job, in (0, 1]."""

    workload: np.ndarray
    speed: np.ndarray

    def __post_init__(self) -> None:
        workload = np.asarray(self.workload, dtype=np.int64)
        speed = np.asarray(self.speed, dtype=np.float64)
        if speed.ndim != 2 or speed.shape[0] != speed.shape[1]:
            raise InputError(None, "colocation.speed", f"must be square, got {speed.shape}")
        if not np.all((speed > 0) & (speed <= 1)):
            raise InputError(None, "colocation.speed", "every speed must be in (0, 1]")
        if workload.ndim != 1 or np.any((workload < -1) | (workload >= speed.shape[0])):
            raise InputError(
                None, "colocation.workload", f"must name classes -1 .. {speed.shape[0] - 1}"
            )
        object.__setattr__(self, "workload", workload)
        object.__setattr__(self, "speed", speed)

    def speeds(self, job_node: np.ndarray) -> np.ndarray:
        """(J,) each placed job's share of its speed alone on its node (1 for a job waiting
        or of no class): the product of the table over the other jobs on its node."""
        job_node = np.asarray(job_node)
        w = self.workload
        if w.shape != job_node.shape:
            raise InputError(
                None, "colocation.workload", f"has {w.size} jobs, the plan {job_node.size}"
            )
        out = np.ones(w.size)
        on = np.flatnonzero((job_node >= 0) & (w >= 0))
        if on.size < 2:
            return out
        pair = self.speed[w[on][:, None], w[on][None, :]]
        share = (job_node[on][:, None] == job_node[on][None, :]) & ~np.eye(on.size, dtype=bool)
        out[on] = np.prod(np.where(share, pair, 1.0), axis=1)
        return out
