"""The default method on on-demand VMs: one rescheduling point, top to bottom.

`plan` runs the steps of docs/default-method.md in order: plan values and preferred
configurations (`gpuaas.pricing`), the keep rules (`keep.incumbent_rules`), the
construction(s) and rivals around the kept jobs (`construct.construct`), the put-back
(`construct.put_back`) and, as a hook, the polish (`polish.Polish`). The spot wrapper
(`spot_wrapper.with_spot`) calls it on expected instances with explicit arguments.
"""

from __future__ import annotations

import time

import numpy as np

from gpuaas.errors import InputError
from gpuaas.heuristics.default.construct import construct, put_back, undo_relabels
from gpuaas.heuristics.default.keep import Rules, incumbent_rules, kept
from gpuaas.heuristics.default.polish import Polish
from gpuaas.heuristics.default.room import queued
from gpuaas.heuristics.default.settings import (
    MOVE_TARDINESS,
    MOVE_TARDINESS_CHOICES,
    PUT_BACK_ROUNDS,
    UNMOVE,
)
from gpuaas.heuristics.randomized_greedy import randomized_greedy
from gpuaas.heuristics.state import check_float, check_int, check_time_limit, kernel_data, warm_up
from gpuaas.instance import Instance
from gpuaas.pricing import plan_values, preferred_configs
from gpuaas.solution import Solution


def keep_rules(
    instance: Instance, move_weight: float, hysteresis: float, move_tardiness: str
) -> tuple[np.ndarray, Rules]:
    """Steps 1-3 as the default takes them: each job's preferred configuration at its plan
    values (the fill and queue prices) and the keep rules (with rule 3, grow; the hysteresis
    only on moves that lose work)."""
    values = plan_values(instance)
    pref = preferred_configs(instance, values)
    rules = incumbent_rules(
        instance,
        values,
        grow=True,
        move_weight=move_weight,
        pref=pref,
        hysteresis=hysteresis,
        move_tardiness=move_tardiness,
        lost_work_only=True,
    )
    return pref, rules


def plan(
    instance: Instance,
    *,
    seed: int,
    time_limit: float | None,
    iterations: int,
    queued_iterations: int,
    rivals: int,
    move_weight: float,
    hysteresis: float,
    polish: Polish | None,
    move_tardiness: str = MOVE_TARDINESS,
    judge: Instance | None = None,
    put_back_rounds: int = PUT_BACK_ROUNDS,
    unmove: bool = UNMOVE,
) -> Solution:
    """The default method's solution of `instance` planned on its on-demand terms (a spot
    configuration is one more configuration at its expected time; the wrapper decides which
    jobs may take one). Arguments: `incremental`'s options, checked here; `polish`: the last
    step (`polish.polish_hook`; None: none); `judge`: the instance the plan and its rivals are
    compared on (None: `instance`; the spot wrapper's, `spot.spot_instance(judge=True)`);
    `put_back_rounds`: the re-plans the put-back may make (`settings.PUT_BACK_ROUNDS`);
    `unmove`: undo the moves that only relabel nodes (`construct.undo_relabels`,
    `settings.UNMOVE`).

    Returns the solution with ``stats``: ``seconds``, ``seed``, ``kept`` (running jobs left in
    place, after the put-back), ``put_back`` (the jobs put back) and ``iterations``.
    """
    limit = check_time_limit(time_limit)
    iterations = check_int("iterations", iterations, 1)
    queued_iterations = check_int("queued_iterations", queued_iterations, 1)
    rivals = check_int("rivals", rivals, 0)
    put_back_rounds = check_int("put_back_rounds", put_back_rounds, 1)
    if not isinstance(unmove, bool):
        raise InputError(None, "unmove", f"must be true or false, got {unmove!r}")
    move_weight = check_float("move_weight", move_weight, 1.0, 1e6)
    hysteresis = check_float("hysteresis", hysteresis, 0.0, 1.0)
    if not isinstance(move_tardiness, str) or move_tardiness not in MOVE_TARDINESS_CHOICES:
        raise InputError(
            None,
            "move_tardiness",
            f"unknown {move_tardiness!r}; choose one of {', '.join(MOVE_TARDINESS_CHOICES)}",
        )
    warm_up(randomized_greedy, max_it_rg=3, elite_size=2)  # the same kernels
    start = time.perf_counter()
    deadline = None if limit is None else start + limit
    pref, rules = keep_rules(instance, move_weight, hysteresis, move_tardiness)
    # more constructions while jobs queue for capacity and moves are free
    if queued_iterations > iterations and not instance.moves_cost and queued(instance, pref):
        iterations = queued_iterations
    D = kernel_data(instance, pref, kept(instance, rules), move_weight)
    # construction(s) and rivals around the kept jobs
    best, done = construct(instance, D, seed, iterations, rivals, move_weight, deadline, judge)
    # put back the jobs that moved for their own sake without gaining, keep those that
    # stayed without gaining, and re-plan the rest (again while a re-plan moves some so)
    pinned, put = put_back(instance, rules, D, best)
    total = put
    for round_ in range(1, put_back_rounds + 1):
        if not put:
            break
        D = pinned
        best, more = construct(instance, D, seed, iterations, rivals, move_weight, deadline, judge)
        done += more
        if round_ < put_back_rounds:  # what this re-plan moved without its gain, back too
            pinned, put = put_back(instance, rules, D, best, spare_slower=True)
            total += put
    if unmove:  # a move that only relabels nodes, undone
        best = undo_relabels(instance, best, move_weight, judge)
    best.stats = {
        "seed": seed,
        "kept": int((D.pin_node >= 0).sum()),
        "put_back": total,
        "iterations": done,
    }
    if polish is not None:  # the hook: the MILP polish of the plan
        best = polish(best, pref, seed, deadline, move_weight)
    best.stats["seconds"] = time.perf_counter() - start
    return best
