"""Incremental: the default method. Plans each job by its per-job bound, keeps the incumbent.

The paper's heuristics re-solve every rescheduling point from scratch, which with real restart
and VM start-up costs migrates each job 10-40 times in its life, and they give a job that
cannot meet its due date the fastest configuration. This method changes both and keeps the
rest of Greedy (Algorithm 1's placement and the §3.3 postprocessing):

1. **Running jobs stay** where they are unless moving pays (`gpuaas.heuristics.incumbent`:
   the best alternative's plan value plus `move_weight` times the move's cost must beat
   staying), or unless waiting jobs that free capacity cannot take, and that cannot wait for a
   running job's completion at no cost to them (`patient`), need their GPUs or their node slot
   (the node-growth rule, this method's only: the paper's heuristics would move every job
   many times with it, docs/reconfiguration.md, rule 3); `make_room` then frees only as many
   as seat the queue.
2. **Each waiting or moved job** takes the configuration of least *plan value*: the per-job LP
   of the lower bound on its remaining work (the cheapest configuration meeting the due date,
   else the cheapest mix of a fast configuration now and a slower one later ending exactly at
   the due date, else the least price x time + tardiness) instead of "the fastest". When jobs
   queue, a GPU-second also costs the delay it causes them (`queue_price`), so plans turn
   GPU-efficient and moves dearer exactly when capacity is short.
3. Jobs are placed by decreasing pressure (eq. 2) best-fit on open nodes of their GPU model,
   else on a new node of the model's largest VM type, else on a suboptimal configuration that
   fits, else they wait; postprocessing then downsizes VMs and hands idle GPUs to jobs, never
   touching a kept job or the VM type of its node. While jobs queue for capacity and moves
   are free, 20 such constructions (the first deterministic, the others randomised as
   Algorithm 1's) compete by f_OBJ (`queued_iterations`): which jobs get the scarce nodes is
   what f_OBJ tells apart.

4. **With reconfiguration costs on**, `rivals` Randomized Greedy constructions around the same
   kept jobs (Algorithm 1's own configuration rule, randomised) compete with that plan; the
   solution of least f_OBJ with P1's reconfiguration terms (`gpuaas.reconfiguration`) is
   returned. They run only when costs are on: there they lower the cost, at zero costs they do
   not (f_OBJ is myopic; docs/reconfiguration.md, "The default method's settings"); moves
   count `move_weight` times their κ in that comparison.
5. **Put back.** A job freed for its own sake (rule 1) that the chosen solution moves without
   the gain that freed it (under load it loses its GPUs to more pressing jobs and lands on its
   own configuration on another node) is kept in place, with those that stayed without gaining,
   and the others are placed again (`pointless_moves`; one more construction): fewer moves
   for the same cost or less (docs/reconfiguration.md, "Put back").

6. **Polish at small N.** Where the MILP polish frees the whole point (at most `POLISH_NODES`
   node slots: a method sees min(N, J) of them, `gpuaas.methods.kept_nodes`, so every point of
   a cluster of N <= 5 and every point with J <= 5 jobs in any cluster; on-demand catalogs),
   the plan is re-optimised by the P1$ MILP from itself, each moved job's lost work weighted
   by `move_weight` as in rules 1-4 (`gpuaas.milp.polish`; kept only if its P1$ is lower),
   within `AUTO_POLISH_NODES` branch-and-bound nodes rather than seconds, so that the result
   does not depend on the machine's load (and within the method's `time_limit`, if given),
   without HiGHS's presolve (most of the time on such small models). The construction decides
   job by job and misses joint exchanges (urgent jobs onto faster configurations while slack
   jobs wait, two jobs sharing a VM split onto smaller ones); what the polish closes and
   costs, per point and online: formulations/P1D.md.

Under the paper's zero reconfiguration costs nothing is kept and only rule 2 differs from Greedy.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.incumbent import (
    incumbent_rules,
    kept,
    plan_values,
    pointless_moves,
    preferred_configs,
    queued,
)
from gpuaas.heuristics.randomized_greedy import randomized_construction, randomized_greedy
from gpuaas.heuristics.spot import NONE, ON_DEMAND, SPOT, on_demand_part, spot_instance, spot_modes
from gpuaas.heuristics.state import (
    check_float,
    check_int,
    check_time_limit,
    kernel_data,
    reject_unknown,
    warm_up,
)
from gpuaas.instance import Instance
from gpuaas.reconfiguration import moved, reconfiguration_terms
from gpuaas.solution import Solution

#: constructions per rescheduling point: the first is deterministic, the others randomise the
#: pressure order and the best-fit node as Algorithm 1 does; the best f_OBJ (P1a) is returned
ITERATIONS = 1
#: ... and, with reconfiguration costs off, while jobs queue for capacity (`queued`), where
#: which jobs get the scarce nodes is what f_OBJ can tell apart; without a queue, or with
#: costs on (where the rivals compete), extra constructions do not pay (docs/reconfiguration.md,
#: "The default method's settings")
QUEUED_ITERATIONS = 20
#: with reconfiguration costs on, Randomized Greedy constructions (Algorithm 1 with its own
#: configuration rule, around the same kept jobs) that compete with the plan by f_OBJ including
#: P1's reconfiguration terms (how many: docs/reconfiguration.md, "The default method's settings")
RIVALS = 50
SWAP_PROB = 0.2  # Randomized Greedy's default
#: the weight on a move's cost (its lost work, start-up and queue delay) in the keep rules and
#: in the choice between plan and rivals. A move priced at its immediate cost alone ignores that
#: the gain it buys lasts only until the next event re-plans, so a move must pay several times
#: its cost (docs/reconfiguration.md, "How often to move")
MOVE_WEIGHT = 4.0
#: branch-and-bound nodes of the MILP polish where it frees the whole point (rule 6)
AUTO_POLISH_NODES = 500


def incremental(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    iterations: int = ITERATIONS,
    queued_iterations: int = QUEUED_ITERATIONS,
    rivals: int = RIVALS,
    move_weight: float = MOVE_WEIGHT,
    polish: float | None = None,
    polish_nodes: int = 0,
    _spot: bool = True,
    _judge: Instance | None = None,
    **options: Any,
) -> Solution:
    """Per-job-bound configurations, incumbent kept unless moving pays (module docstring).

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
        The same while jobs queue for capacity (`gpuaas.heuristics.incumbent.queued`) and
        reconfiguration costs are off (with them on, the rivals compete); the larger of the two
        is made.
    rivals : int
        Randomized Greedy constructions competing when reconfiguration costs are on (rule 4).
    move_weight : float
        How many times its cost a move must save (>= 1; 1: exactly its cost). Higher moves jobs
        less often at some cost in dollars.
    polish : float, optional
        Seconds of MILP re-optimising a neighbourhood of the plan in P1$ (`gpuaas.milp.polish`);
        0: none; None (the default): `AUTO_POLISH_NODES` nodes where the neighbourhood is the
        whole point (rule 6), else none. Not with spot variants (the MILP plans on-demand VMs only).
    polish_nodes : int
        Branch-and-bound nodes of the same polish at every point where no job queues for
        capacity (`queued`), in place of rule 6 there, a move charged once: deterministic,
        unlike `polish`; 0 (the default): none. What it saves and costs: formulations/P1D.md,
        "The polish beyond N = 5".

    Returns
    -------
    Solution
        With ``stats``: ``seconds``, ``seed``, ``kept`` (running jobs left in place, after the
        put-back), ``put_back`` (rule 5) and ``iterations``.
    """
    reject_unknown("incremental", options)
    if _spot and instance.catalog.has_spot:
        if polish or polish_nodes:
            raise ValueError("incremental: polish is not available on a catalog with spot variants")
        return _with_spot(
            instance, seed, time_limit, iterations, queued_iterations, rivals, move_weight
        )
    limit = check_time_limit(time_limit)
    iterations = check_int("iterations", iterations, 1)
    queued_iterations = check_int("queued_iterations", queued_iterations, 1)
    rivals = check_int("rivals", rivals, 0)
    move_weight = check_float("move_weight", move_weight, 1.0, 1e6)
    auto = polish is None
    polish = 0.0 if auto else check_float("polish", polish, 0.0, 1e6)
    polish_nodes = check_int("polish_nodes", polish_nodes, 0)
    warm_up(randomized_greedy, max_it_rg=3, elite_size=2)  # the same kernels
    start = time.perf_counter()
    deadline = None if limit is None else start + limit
    values = plan_values(instance)
    pref = preferred_configs(instance, values)
    rules = incumbent_rules(instance, values, grow=True, move_weight=move_weight, pref=pref)
    if queued_iterations > iterations and not instance.moves_cost and queued(instance, pref):
        iterations = queued_iterations
    D = kernel_data(instance, pref, kept(instance, rules), move_weight)
    best, done = _construct(instance, D, seed, iterations, rivals, move_weight, deadline, _judge)
    back = pointless_moves(instance, rules, best.job_node, best.job_cfg)
    put = back & moved(instance, best.job_node, best.job_cfg)
    if put.any():
        # put back the jobs that moved for their own sake without gaining, keep those that
        # stayed without gaining, and re-plan the rest
        D = D._replace(
            pin_node=np.where(back, instance.current_node, D.pin_node),
            pin_cfg=np.where(back, instance.current_cfg, D.pin_cfg),
        )
        best, more = _construct(
            instance, D, seed, iterations, rivals, move_weight, deadline, _judge
        )
        done += more
    best.stats = {
        "seed": seed,
        "kept": int((D.pin_node >= 0).sum()),
        "put_back": int(put.sum()),
        "iterations": done,
    }
    from gpuaas.milp.polish import POLISH_NODES
    from gpuaas.milp.polish import polish as milp_polish

    node_limit = None  # a polish within branch-and-bound nodes: rule 6, or `polish_nodes`
    weight = 1.0  # `polish_nodes` as measured (formulations/P1D.md): a move charged once
    if not instance.catalog.has_spot:
        if polish_nodes and not queued(instance, pref):
            node_limit = polish_nodes
        elif auto and instance.nodes <= POLISH_NODES:
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
    elif polish > 0:
        left = polish if deadline is None else min(polish, deadline - time.perf_counter())
        if left > 0:
            best = milp_polish(best, time_limit=left, seed=seed)
    best.stats["seconds"] = time.perf_counter() - start
    return best


def _construct(
    instance: Instance,
    D: K.KernelData,
    seed: int,
    iterations: int,
    rivals: int,
    move_weight: float,
    deadline: float | None,
    judge: Instance | None = None,
) -> tuple[Solution, int]:
    """The plan's construction(s) around the kept jobs of D and, with reconfiguration costs on,
    the rivals; the solution of least f_OBJ (moves weighted by `move_weight`) and the number of
    plan constructions made."""
    elite = randomized_construction(
        instance,
        D,
        K.PROXY_FOBJ,
        K.OPEN_LARGEST,
        True,
        seed=seed,
        max_it=iterations,
        size=1,
        swap_prob=SWAP_PROB,
        candidates=1,
        max_no_improve=0,
        log_interval=5.0,
        deadline=deadline,
    )
    best = Solution(instance, elite.vm[0], elite.node[0], elite.cfg[0], "incremental")
    if rivals and instance.moves_cost:
        D2 = D._replace(pref_cfg=np.full(instance.n_jobs, -1, dtype=np.int64))
        rival = randomized_construction(
            instance,
            D2,
            K.PROXY_FOBJ,
            K.OPEN_LARGEST,
            True,
            seed=seed,
            max_it=rivals,
            size=1,
            swap_prob=SWAP_PROB,
            candidates=3,
            max_no_improve=0,
            log_interval=5.0,
            deadline=deadline,
        )
        other = Solution(instance, rival.vm[0], rival.node[0], rival.cfg[0], "incremental")
        kappa = (move_weight - 1.0) * reconfiguration_terms(instance)[0]
        on = judge if judge is not None else instance

        def score(sol: Solution) -> float:
            f = Solution(on, sol.node_vm, sol.job_node, sol.job_cfg).f_obj
            return f + kappa[moved(instance, sol.job_node, sol.job_cfg)].sum()

        if score(other) < score(best):
            best = other
    return best, elite.iterations


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
    """The default method on on-demand VMs only (today's default): `incremental` on the
    instance without the catalog's spot variants (the on-demand types keep their indices, so
    its solution is one of `instance` too; a job on a spot VM is seen as waiting). Without
    spot variants it is `incremental` itself."""
    reject_unknown("on-demand", options)
    od = on_demand_part(instance)
    sol = incremental(
        od,
        seed=seed,
        time_limit=time_limit,
        iterations=iterations,
        queued_iterations=queued_iterations,
        rivals=rivals,
        move_weight=move_weight,
        polish=polish,
    )
    return Solution(instance, sol.node_vm, sol.job_node, sol.job_cfg, "on-demand", sol.stats)


def _with_spot(
    instance: Instance,
    seed: int,
    time_limit: float | None,
    iterations: int,
    queued_iterations: int,
    rivals: int,
    move_weight: float,
) -> Solution:
    """`incremental` on a catalog with spot variants (`gpuaas.heuristics.spot`): the jobs
    waiting for spot are left out, the others planned on the expected instance; the solution
    is the real instance's. Of it and its on-demand `_rivals`, the plan of least P1$ on the
    expected instance with every job free to take spot (the judge's expected times,
    `spot_instance`) is returned (a rival only if it keeps the pinned jobs). Without the
    rivals, replayed spot capacity that comes and goes made the spot plans dearer than on
    demand alone (docs/spot.md, "The default's decisions")."""
    t0 = time.perf_counter()
    modes = spot_modes(instance)
    active = np.flatnonzero(modes != NONE)
    J = instance.n_jobs
    node_vm = np.full(instance.nodes, -1, dtype=np.int64)
    job_node = np.full(J, -1, dtype=np.int64)
    job_cfg = np.full(J, -1, dtype=np.int64)
    stats: dict[str, Any] = {"seed": seed}
    options = dict(
        seed=seed,
        time_limit=time_limit,
        iterations=iterations,
        queued_iterations=queued_iterations,
        rivals=rivals,
        move_weight=move_weight,
    )
    if active.size:
        sol = _on_expected(instance, modes, options, lambda inst: inst.subset(active))
        node_vm, stats = sol.node_vm, dict(sol.stats)
        job_node[active], job_cfg[active] = sol.job_node, sol.job_cfg
    judge = spot_instance(instance, np.full(J, SPOT), judge=True)
    mine = Solution(judge, node_vm, job_node, job_cfg).objective
    rival = ""
    pin = instance.pinned  # a pinned job on spot is waiting to `on_demand`: then no rival
    for name, other in _rivals(instance, modes, options):
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
    stats.update(
        seconds=time.perf_counter() - t0,
        waiting_for_spot=0 if rival else int(J - active.size),
        rival=rival,
    )
    return Solution(instance, node_vm, job_node, job_cfg, "incremental", stats)


def _rivals(
    instance: Instance, modes: np.ndarray, options: dict[str, Any]
) -> Iterator[tuple[str, Solution]]:
    """The spot plan's rivals (`_with_spot`): the same method on on-demand VMs only
    (`on_demand`), and, while jobs run on spot, the same with those that may keep spot (mode
    SPOT) staying where they run and every other job on demand. The first alone, winning by
    cents where the spot plan placed the on-demand jobs worse, took every job off spot, and the
    next decisions put them back."""
    yield "on-demand", on_demand(instance, polish=0.0, **options)  # a spot plan is not polished
    cat = instance.catalog
    cur = instance.current_cfg
    stay = (cur >= 0) & cat.spot[cat.cfg_vm[np.maximum(cur, 0)]] & (modes == SPOT)
    if stay.any():
        pinned = instance.pinned | stay
        keep = _on_expected(
            instance,
            np.where(stay, SPOT, ON_DEMAND),
            options,
            lambda inst: dataclasses.replace(inst, pinned=pinned),
        )
        yield "stay-on-spot", keep


def _on_expected(
    instance: Instance,
    modes: np.ndarray,
    options: dict[str, Any],
    view: Callable[[Instance], Instance],
) -> Solution:
    """`incremental` on `view` of the expected instance of `modes` (`spot_instance`), its
    plans compared on `view` of the judge's (spot times capped at the due date)."""
    return incremental(
        view(spot_instance(instance, modes)),
        _spot=False,
        _judge=view(spot_instance(instance, modes, judge=True)),
        **options,
    )
