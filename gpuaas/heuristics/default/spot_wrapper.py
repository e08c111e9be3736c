"""Spot as a wrapper around the on-demand planner (`plan.plan`), and the on-demand-only method.

On a catalog with spot variants `with_spot` decides per job between spot, on demand and
waiting (`spot.spot_modes`), plans the jobs not waiting for spot on the expected instance
(`spot.spot_instance`), and returns, of that plan and its on-demand rivals (`_rivals`), the
one of least P1$ on the judge's expected instance. Every call of the planner names its
arguments; a spot plan is never polished (the MILP plans on-demand VMs only). Reasons and
measurements: docs/spot.md, "The default's decisions".
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from gpuaas.heuristics.default.plan import plan
from gpuaas.heuristics.default.polish import polish_hook
from gpuaas.heuristics.default.settings import (
    ITERATIONS,
    MOVE_WEIGHT,
    QUEUED_ITERATIONS,
    RIVALS,
)
from gpuaas.heuristics.default.spot import (
    NONE,
    ON_DEMAND,
    SPOT,
    on_demand_part,
    spot_instance,
    spot_modes,
)
from gpuaas.heuristics.state import reject_unknown
from gpuaas.instance import Instance
from gpuaas.solution import Solution


class Planner(NamedTuple):
    """The planner's options as the user gave them to `incremental`: what every plan of the
    spot wrapper is made with."""

    seed: int
    time_limit: float | None
    iterations: int
    queued_iterations: int
    rivals: int
    move_weight: float

    def plan(
        self, instance: Instance, *, judge: Instance | None = None, polish: float | None = 0.0
    ) -> Solution:
        """`plan.plan` of `instance` with these options, compared on `judge`, and polished as
        `polish` says (`polish.polish_hook`; 0: not at all)."""
        return plan(
            instance,
            seed=self.seed,
            time_limit=self.time_limit,
            iterations=self.iterations,
            queued_iterations=self.queued_iterations,
            rivals=self.rivals,
            move_weight=self.move_weight,
            polish=polish_hook(polish, 0),
            judge=judge,
        )


def on_demand(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    iterations: int = ITERATIONS,
    queued_iterations: int = QUEUED_ITERATIONS,
    rivals: int = RIVALS,
    move_weight: float = MOVE_WEIGHT,
    polish: float | None = None,
    **options: Any,
) -> Solution:
    """The default method on on-demand VMs only (the registry's ``on-demand``): the planner on
    the instance without the catalog's spot variants (the on-demand types keep their indices, so
    its solution is one of `instance` too; a job on a spot VM is seen as waiting). Without spot
    variants it is `incremental` itself."""
    reject_unknown("on-demand", options)
    planner = Planner(seed, time_limit, iterations, queued_iterations, rivals, move_weight)
    sol = planner.plan(on_demand_part(instance), polish=polish)
    return Solution(instance, sol.node_vm, sol.job_node, sol.job_cfg, "on-demand", sol.stats)


def with_spot(instance: Instance, planner: Planner, deadline_safe: bool = False) -> Solution:
    """The default method on a catalog with spot variants: the jobs waiting for spot are left
    out, the others planned on the expected instance; the solution is the real instance's. Of
    it and its on-demand `_rivals`, the plan of least P1$ on the expected instance with every
    job free to take spot (the judge's expected times, `spot_instance`) is returned (a rival
    only if it keeps the pinned jobs). Without the rivals, replayed spot capacity that comes
    and goes made the spot plans dearer than on demand alone (docs/spot.md, "The default's
    decisions"). `deadline_safe`: the run setting (`spot.deadline_safe`)."""
    t0 = time.perf_counter()
    modes = spot_modes(instance, safe=deadline_safe)
    active = np.flatnonzero(modes != NONE)
    J = instance.n_jobs
    node_vm = np.full(instance.nodes, -1, dtype=np.int64)
    job_node = np.full(J, -1, dtype=np.int64)
    job_cfg = np.full(J, -1, dtype=np.int64)
    stats: dict[str, Any] = {"seed": planner.seed}
    if active.size:
        sol = _on_expected(instance, modes, planner, lambda inst: inst.subset(active))
        node_vm, stats = sol.node_vm, dict(sol.stats)
        job_node[active], job_cfg[active] = sol.job_node, sol.job_cfg
    judge = spot_instance(instance, np.full(J, SPOT), judge=True)
    mine = Solution(judge, node_vm, job_node, job_cfg).objective
    rival = ""
    pin = instance.pinned  # a pinned job on spot is waiting to `on_demand`: then no rival
    rivals = list(_rivals(instance, modes, planner))
    for name, other in rivals:
        value = Solution(judge, other.node_vm, other.job_node, other.job_cfg).objective
        keeps = (other.job_node[pin] == instance.current_node[pin]).all() and (
            other.job_cfg[pin] == instance.current_cfg[pin]
        ).all()
        # the spot plan wins ties: a waiting job's P1$ term equals its on-demand plan's when
        # spot is out, and rounding alone started Can't Be Late's single job on demand while
        # waiting paid
        if keeps and value < mine - 1e-9 * abs(mine):
            node_vm, job_node, job_cfg = other.node_vm, other.job_node, other.job_cfg
            mine, rival = value, name
    waiting = 0 if rival else int(J - active.size)
    if not waiting and not instance.catalog.spot[node_vm[node_vm >= 0]].any():
        # no spot used, none waited for: the plan is the on-demand one, so that spot changes
        # a decision only by being used (with spot that never pays, the run without spot)
        od = rivals[0][1]
        node_vm, job_node, job_cfg, rival = od.node_vm, od.job_node, od.job_cfg, "on-demand"
    stats.update(seconds=time.perf_counter() - t0, waiting_for_spot=waiting, rival=rival)
    return Solution(instance, node_vm, job_node, job_cfg, "incremental", stats)


def _rivals(
    instance: Instance, modes: np.ndarray, planner: Planner
) -> Iterator[tuple[str, Solution]]:
    """The spot plan's rivals (`with_spot`): the same method on on-demand VMs only
    (`on_demand`), and, while jobs run on spot, the same with those that may keep spot (mode
    SPOT) staying where they run and every other job on demand. The first alone, winning by
    cents where the spot plan placed the on-demand jobs worse, took every job off spot, and the
    next decisions put them back."""
    # polished as the run without spot would be (`incremental`'s default)
    yield "on-demand", on_demand(instance, polish=None, **planner._asdict())
    cat = instance.catalog
    cur = instance.current_cfg
    stay = (cur >= 0) & cat.spot[cat.cfg_vm[np.maximum(cur, 0)]] & (modes == SPOT)
    if stay.any():
        pinned = instance.pinned | stay
        keep = _on_expected(
            instance,
            np.where(stay, SPOT, ON_DEMAND),
            planner,
            lambda inst: dataclasses.replace(inst, pinned=pinned),
        )
        yield "stay-on-spot", keep


def _on_expected(
    instance: Instance,
    modes: np.ndarray,
    planner: Planner,
    view: Callable[[Instance], Instance],
) -> Solution:
    """The planner on `view` of the expected instance of `modes` (`spot_instance`), its plans
    compared on `view` of the judge's (spot times capped at the due date)."""
    return planner.plan(
        view(spot_instance(instance, modes)),
        judge=view(spot_instance(instance, modes, judge=True)),
    )
