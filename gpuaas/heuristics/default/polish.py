"""The default method's last step, a hook: the MILP polish of its plan (`gpuaas.milp.polish`).

The construction decides job by job and misses joint exchanges (urgent jobs onto faster
configurations while slack jobs wait, two jobs sharing a VM split onto smaller ones). Where
the polish frees the whole point (at most `gpuaas.milp.polish.POLISH_NODES` node slots: a
method sees min(N, J) of them, `gpuaas.methods.kept_nodes`; on-demand catalogs only), the plan
is re-optimised by the P1$ MILP from itself within `AUTO_POLISH_NODES` branch-and-bound nodes,
each moved job's lost work weighted by `move_weight` as in the keep rules, without HiGHS's
presolve, and kept only if its P1$ is lower. The options `polish` (seconds) and
`polish_nodes` (a node limit wherever no job queues, a move charged once) replace or extend
it. What it closes and costs: formulations/P1D.md, "Who decides by what" and "The polish
beyond N = 5".
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from gpuaas.heuristics.default.room import queued
from gpuaas.heuristics.default.settings import AUTO_POLISH_NODES
from gpuaas.heuristics.state import check_float, check_int
from gpuaas.solution import Solution


@dataclasses.dataclass(frozen=True)
class Polish:
    """The polish step as the planner calls it (`polish_hook` builds it from the options)."""

    auto: bool  # the default: `AUTO_POLISH_NODES` nodes where the point is small enough
    seconds: float  # `polish`: seconds of MILP on a neighbourhood of the plan (0: none)
    nodes: int  # `polish_nodes`: a node limit wherever no job queues (0: none)

    def __call__(
        self,
        best: Solution,
        pref: np.ndarray,
        seed: int,
        deadline: float | None,
        move_weight: float,
    ) -> Solution:
        """`best` polished (or itself); `pref`: the jobs' preferred configurations."""
        from gpuaas.milp.polish import POLISH_NODES
        from gpuaas.milp.polish import polish as milp_polish

        instance = best.instance
        node_limit = None  # a polish within branch-and-bound nodes: the auto rule or `nodes`
        weight = 1.0  # `polish_nodes` as measured (formulations/P1D.md): a move charged once
        if not instance.catalog.has_spot:  # the MILP plans on-demand VMs only
            if self.nodes and not queued(instance, pref):
                node_limit = self.nodes
            elif self.auto and instance.nodes <= POLISH_NODES:
                node_limit, weight = AUTO_POLISH_NODES, move_weight
        if node_limit is not None:
            left = None if deadline is None else deadline - time.perf_counter()
            if left is None or left > 0:
                best = milp_polish(
                    best,
                    time_limit=left,
                    seed=seed,
                    node_limit=node_limit,
                    presolve=False,
                    move_weight=weight,
                )
        elif self.seconds > 0:
            left = (
                self.seconds
                if deadline is None
                else min(self.seconds, deadline - time.perf_counter())
            )
            if left > 0:
                best = milp_polish(best, time_limit=left, seed=seed)
        return best


def polish_hook(polish: float | None, polish_nodes: int) -> Polish | None:
    """The polish step of the method's options `polish` (seconds; None, the default: the auto
    rule of the module docstring; 0: none) and `polish_nodes`; None where it never polishes."""
    auto = polish is None
    seconds = 0.0 if auto else check_float("polish", polish, 0.0, 1e6)
    nodes = check_int("polish_nodes", polish_nodes, 0)
    if not auto and seconds == 0 and not nodes:
        return None
    return Polish(auto, seconds, nodes)
