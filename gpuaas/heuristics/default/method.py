"""`incremental`, the default method as the registry calls it: its options, then the on-demand
planner (`plan.plan`) or, on a catalog with spot variants, the spot wrapper around it
(`spot_wrapper.with_spot`). The method, step by step: docs/default-method.md.
"""

from __future__ import annotations

import math
from typing import Any

from gpuaas.colocation import Colocation
from gpuaas.heuristics.default.plan import plan
from gpuaas.heuristics.default.polish import polish_hook
from gpuaas.heuristics.default.settings import (
    HYSTERESIS,
    ITERATIONS,
    MOVE_TARDINESS,
    MOVE_WEIGHT,
    PUT_BACK_ROUNDS,
    QUEUED_ITERATIONS,
    REPACK_MOVE_WEIGHT,
    RIVALS,
    SPOT_MARGIN,
    UNMOVE,
)
from gpuaas.heuristics.default.spot import keep_due_dates
from gpuaas.heuristics.default.spot_wrapper import Planner, with_spot
from gpuaas.heuristics.state import check_float, reject_unknown
from gpuaas.instance import Instance
from gpuaas.resources import consolidate
from gpuaas.solution import Solution


def incremental(
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
    polish_nodes: int = 0,
    deadline_safe: bool = False,
    spot_margin: float = SPOT_MARGIN,
    colocation: Colocation | None = None,
    **options: Any,
) -> Solution:
    """Per-job-bound configurations, incumbent kept unless moving pays (docs/default-method.md).

    Parameters
    ----------
    instance : Instance
        The rescheduling point; `current_node` / `current_cfg` are the incumbent, `overhead`
        and `startup` the costs of changing it.
    seed : int
        Seeds the randomised constructions (`iterations` > 1, `rivals`).
    time_limit : float, optional
        Stops the randomised constructions (the first always completes).
    iterations : int
        Constructions with the plan's configurations (the first deterministic).
    queued_iterations : int
        The same while jobs queue for capacity (`room.queued`) and reconfiguration costs are
        off (with them on, the rivals compete); the larger of the two is made.
    rivals : int
        Randomized Greedy constructions competing when reconfiguration costs are on.
    move_weight : float
        How many times its cost a move must save (>= 1; 1: exactly its cost). Higher moves jobs
        less often at some cost in dollars. The re-packing by vCPUs and memory counts a move
        once (`settings.REPACK_MOVE_WEIGHT`).
    hysteresis : float
        The share of its plan value a running job's move must save beyond its weighted cost
        (keep rule 1), and that its cheapest move may cost for rules 2 and 4 to free it (0 to
        1; default `settings.HYSTERESIS`). Higher keeps jobs in place between configurations
        of about the same value; 0 moves for any saving beyond the weighted cost
        (scripts/results/default-settings.md).
    move_tardiness : str
        How the keep rules charge the tardiness a move's delay adds: "each" (the default,
        `settings.MOVE_TARDINESS`), each configuration's own added tardiness (a move that makes
        an on-time job late pays for it), counted once; "late", the weight x the delay only for
        a job late on every configuration, counted `move_weight` times (the rule before; "each"
        costs 0.962 x it on the ITP clusters: scripts/results/default-settings.md).
    put_back_rounds : int
        The re-plans the put-back may make (>= 1; default `settings.PUT_BACK_ROUNDS`, 1): more
        puts back, in turn, the jobs a re-plan moves without the gain that freed them (a job
        the first plan left waiting, placed again on its own configuration elsewhere), but not
        one it moves onto a slower configuration (its GPUs went to others).
    unmove : bool
        Undo the moves that only relabel nodes (`construct.undo_relabels`; default
        `settings.UNMOVE`, off): a running job the plan puts on its own configuration on
        another node goes back, alone or in place of a job the plan brings there, where that
        lowers the plan's score; the same churn `put_back_rounds` answers, without a re-plan.
    polish : float, optional
        Seconds of MILP re-optimising a neighbourhood of the plan in P1$ (`gpuaas.milp.polish`);
        0: none; None (the default): `AUTO_POLISH_NODES` nodes where the neighbourhood is the
        whole point (`polish.Polish`), else none. Not with spot variants (the MILP plans
        on-demand VMs only).
    polish_nodes : int
        Branch-and-bound nodes of the same polish at every point where no job queues for
        capacity (`room.queued`), in place of the default's polish there, a move charged once:
        deterministic, unlike `polish`; 0 (the default): none. What it saves and costs:
        formulations/P1D.md, "The polish beyond N = 5".
    deadline_safe : bool
        The run setting (`gpuaas.run_config.RunConfig.deadline_safe`, not a solver option): on
        a catalog with spot variants, a job runs on or waits for spot only while it keeps its
        due date on demand after the worst interruption (`spot.deadline_safe`), and a job
        without that margin takes an on-demand configuration that meets its due date where
        one does (`spot.keep_due_dates`).
    spot_margin : float
        On a catalog with spot variants: how much P1$ a plan taking spot VMs must save while
        the run holds none, as a share of what its spot VMs would cost on demand until the next
        decision (at most the on-demand plan's whole spend), and a job's wait for spot, of its
        own on-demand configuration's (default
        `settings.SPOT_MARGIN`; 0: any saving; docs/spot.md, "Do no harm").
    colocation : Colocation, optional
        The jobs' co-location slowdown (`gpuaas.colocation`): the re-packing by vCPUs and
        memory (`gpuaas.resources.consolidate`) counts the work it loses. None: the instance's.

    Returns
    -------
    Solution
        With ``stats``: ``seconds``, ``seed``, ``kept`` (running jobs left in place, after the
        put-back), ``put_back`` and ``iterations``; with spot variants also
        ``waiting_for_spot`` and ``rival`` (`spot_wrapper.with_spot`).
    """
    reject_unknown("incremental", options)
    spot_margin = check_float("spot_margin", spot_margin, 0.0, math.inf)
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
    if instance.catalog.has_spot:
        if polish or polish_nodes:
            raise ValueError("incremental: polish is not available on a catalog with spot variants")
        if not deadline_safe:
            return with_spot(instance, planner, margin=spot_margin)
        sol = with_spot(keep_due_dates(instance), planner, deadline_safe=True, margin=spot_margin)
        return Solution(instance, sol.node_vm, sol.job_node, sol.job_cfg, sol.method, sol.stats)
    sol = plan(
        instance,
        seed=seed,
        time_limit=time_limit,
        iterations=iterations,
        queued_iterations=queued_iterations,
        rivals=rivals,
        move_weight=move_weight,
        hysteresis=hysteresis,
        polish=polish_hook(polish, polish_nodes),
        move_tardiness=move_tardiness,
        put_back_rounds=put_back_rounds,
        unmove=unmove,
    )
    # where jobs declare vCPUs or memory: re-packed by them (a no-op otherwise), moves once
    return consolidate(sol, REPACK_MOVE_WEIGHT, colocation or instance.colocation_model())
