"""Spot as a wrapper around the on-demand planner (`plan.plan`), and the on-demand-only method.

On a catalog with spot variants `with_spot` decides per job between spot, on demand and
waiting (`spot.spot_modes`), plans the jobs not waiting for spot on the expected instance
(`spot.spot_instance`), and returns, of that plan and its on-demand rivals (`on_demand`,
`_stay_on_spot`), the one of least P1$ on the judge's expected instance; entering spot must
save a margin of it. Every call of the planner names its arguments; a spot plan is never
polished (the MILP plans on-demand VMs only). Reasons and measurements: docs/spot.md, "The
default's decisions".
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
    HYSTERESIS,
    ITERATIONS,
    MOVE_TARDINESS,
    MOVE_WEIGHT,
    PUT_BACK_ROUNDS,
    QUEUED_ITERATIONS,
    RIVALS,
    SPOT_MARGIN,
    UNMOVE,
)
from gpuaas.heuristics.default.spot import (
    NONE,
    ON_DEMAND,
    SPOT,
    on_demand_part,
    on_spot,
    reference_configs,
    slack,
    spot_instance,
    spot_modes,
)
from gpuaas.heuristics.state import reject_unknown
from gpuaas.instance import Instance
from gpuaas.per_job import share_price
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
    hysteresis: float
    move_tardiness: str = MOVE_TARDINESS
    put_back_rounds: int = PUT_BACK_ROUNDS
    unmove: bool = UNMOVE

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
            hysteresis=self.hysteresis,
            polish=polish_hook(polish, 0),
            move_tardiness=self.move_tardiness,
            judge=judge,
            put_back_rounds=self.put_back_rounds,
            unmove=self.unmove,
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
    hysteresis: float = HYSTERESIS,
    move_tardiness: str = MOVE_TARDINESS,
    put_back_rounds: int = PUT_BACK_ROUNDS,
    unmove: bool = UNMOVE,
    polish: float | None = None,
    **options: Any,
) -> Solution:
    """The default method on on-demand VMs only (the registry's ``on-demand``): the planner on
    the instance without the catalog's spot variants (the on-demand types keep their indices, so
    its solution is one of `instance` too; a job on a spot VM is seen as waiting). Without spot
    variants it is `incremental` itself."""
    reject_unknown("on-demand", options)
    planner = Planner(
        seed,
        time_limit,
        iterations,
        queued_iterations,
        rivals,
        move_weight,
        hysteresis,
        move_tardiness,
        put_back_rounds,
        unmove,
    )
    sol = planner.plan(on_demand_part(instance), polish=polish)
    return Solution(instance, sol.node_vm, sol.job_node, sol.job_cfg, "on-demand", sol.stats)


def with_spot(
    instance: Instance,
    planner: Planner,
    deadline_safe: bool = False,
    margin: float = SPOT_MARGIN,
) -> Solution:
    """The default method on a catalog with spot variants: the jobs waiting for spot are left
    out, the others planned on the expected instance; the solution is the real instance's. Of
    it and its rivals (`on_demand`, `_stay_on_spot`), the plan of least P1$ on the expected
    instance with every job free to take spot (the judge's expected times, `spot_instance`) is
    returned (a rival only if it keeps the pinned jobs; the on-demand plan only if it leaves no
    job on spot waiting). Without the rivals, replayed spot capacity that comes
    and goes made the spot plans dearer than on demand alone (docs/spot.md, "The default's
    decisions"). A plan that takes spot VMs while the run holds none must be expected `margin`
    x (what its spot VMs would cost on demand over the next H s, at most the on-demand plan's
    whole spend) cheaper than the on-demand plan, or the on-demand plan is returned
    (`SPOT_MARGIN`); a job waits for spot only to save `margin` x its own on-demand
    configuration's next H s. `deadline_safe`: the run setting (`spot.deadline_safe`)."""
    t0 = time.perf_counter()
    J = instance.n_jobs
    cat = instance.catalog
    judge = spot_instance(instance, np.full(J, SPOT), judge=True)
    od = on_demand(instance, polish=None, **planner._asdict())  # as the run without spot
    od_value = Solution(judge, od.node_vm, od.job_node, od.job_cfg).objective
    held = on_spot(instance).any()
    # entering spot must save a share of what it puts at stake on demand until the next
    # decision (the part of P1$ two plans differ by): a job's wait, its reference
    # configuration's share of a VM; a plan's entry (below), its spot VMs
    hour = 0.0 if held else margin * instance.H
    ref = reference_configs(instance)
    price = np.broadcast_to(share_price(instance), instance.work.shape)  # (C,) or (J, C)
    own = np.where(ref >= 0, price[np.arange(J), np.maximum(ref, 0)], 0.0)
    modes = spot_modes(instance, safe=deadline_safe, margin=hour * own, net_margin=margin)
    active = np.flatnonzero(modes != NONE)
    node_vm = np.full(instance.nodes, -1, dtype=np.int64)
    job_node = np.full(J, -1, dtype=np.int64)
    job_cfg = np.full(J, -1, dtype=np.int64)
    stats: dict[str, Any] = {"seed": planner.seed}
    if active.size:
        sol = _on_expected(instance, modes, planner, lambda inst: inst.subset(active))
        node_vm, stats = sol.node_vm, dict(sol.stats)
        job_node[active], job_cfg[active] = sol.job_node, sol.job_cfg
    mine = Solution(judge, node_vm, job_node, job_cfg).objective
    rival = ""
    pin = instance.pinned  # a pinned job on spot is waiting to `on_demand`: then no rival
    # the on-demand plan sees jobs on spot as waiting; one that leaves any of them waiting is
    # not the run without spot (judged at spot's expected times, their wait looks cheap: it
    # took them off spot to be put back at the next decision), so it is no rival then
    queues = (od.job_node[on_spot(instance)] < 0).any()
    rivals = [] if queues else [("on-demand", od)]
    for name, other in [*rivals, *_stay_on_spot(instance, modes, planner)]:
        value = (
            od_value
            if other is od
            else Solution(judge, other.node_vm, other.job_node, other.job_cfg).objective
        )
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
    spot_vms = node_vm[node_vm >= 0][cat.spot[node_vm[node_vm >= 0]]]
    takes = spot_vms.size > 0
    # the spot plan's entry: a share of what its spot VMs would cost on demand, at most what
    # the on-demand plan spends (a single job's spot zone may list a dearer on-demand price)
    fleet = float(cat.cost[od.node_vm[od.node_vm >= 0]].sum())
    threshold = hour * min(float(cat.cost[cat.base[spot_vms]].sum()), fleet)
    # a job the Safety Net sends on demand that cannot wait one more decision and then start
    # a VM (`spot.slack` < H) and that this plan runs: the on-demand plan must run it too (it
    # prices the VM's start-up as money, not time, so waiting a tick looked on time)
    must = (modes == ON_DEMAND) & (instance.current_cfg < 0) & (slack(instance) < instance.H)
    skips = (must & (job_node >= 0) & (od.job_node < 0)).any()
    if not skips and (
        (not waiting and not takes) or (not held and takes and od_value - mine < threshold)
    ):
        # no spot used, none waited for, or spot entered for less than the margin: the plan
        # is the on-demand one, so that spot changes a decision only by being used (with spot
        # that never pays, the run without spot)
        node_vm, job_node, job_cfg, rival, waiting = (
            od.node_vm,
            od.job_node,
            od.job_cfg,
            "on-demand",
            0,
        )
    stats.update(seconds=time.perf_counter() - t0, waiting_for_spot=waiting, rival=rival)
    return Solution(instance, node_vm, job_node, job_cfg, "incremental", stats)


def _stay_on_spot(
    instance: Instance, modes: np.ndarray, planner: Planner
) -> Iterator[tuple[str, Solution]]:
    """The spot plan's second rival (`with_spot`; the first is `on_demand`): while jobs run on
    spot, the same method with those that may keep spot (mode SPOT) staying where they run and
    every other job in its own mode. The on-demand rival alone, winning by cents where the spot
    plan placed the on-demand jobs worse, took every job off spot, and the next decisions put
    them back; with every other job on demand, a newcomer started on demand for its whole run
    wherever this rival won (docs/spot.md)."""
    stay = on_spot(instance) & (modes == SPOT)
    if stay.any():
        pinned = instance.pinned | stay
        keep = _on_expected(
            instance,
            np.where(stay, SPOT, modes),
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
