"""Path Relinking: Randomized Greedy's elite set, then Algorithm 2 [§3.3.1], then postprocessing.

From the best elite solution (the source) towards every other elite solution (the targets) in
turn, apply at each iteration the move (j, n) whose two-level EXPLORE_STEP value improves the
proxy most; at most MaxItPR iterations per target, and a target is left as soon as no move
improves. The source is carried from one target to the next. Moves are evaluated by the
deltas of the jobs and nodes they touch (`gpuaas.heuristics.kernels.path_relinking_towards`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.default.keep import paper_keep
from gpuaas.heuristics.randomized_greedy import randomized_construction, rg_options
from gpuaas.heuristics.state import (
    DEFAULT_OPEN_RULE,
    State,
    check_int,
    check_time_limit,
    kernel_data,
    open_rule_code,
    proxy_code,
    reject_unknown,
    step_values,
    warm_up,
)
from gpuaas.instance import Instance
from gpuaas.solution import Solution

log = logging.getLogger(__name__)

RG_SHARE = 0.5  # fraction of a time limit given to the randomized construction


def path_relinking(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    max_it_rg: int = 1000,
    elite_size: int = 10,
    max_it_pr: int | None = None,
    proxy: str = "f_bar",
    postprocess: bool = True,
    swap_prob: float = 0.2,
    candidates: int = 3,
    max_no_improve: int | None = None,
    log_interval: float = 5.0,
    open_rule: str = DEFAULT_OPEN_RULE,
    **options: Any,
) -> Solution:
    """The paper's complete method: Randomized Greedy + Path Relinking + postprocessing.

    Parameters
    ----------
    instance : Instance
        The rescheduling point to solve.
    seed : int
        Seed of the randomized construction; same seed, same solution bit for bit (unless
        `time_limit` cuts the run).
    time_limit : float, optional
        Seconds for the whole solve: the construction stops at half of it, path relinking
        starts no new target after it.
    max_it_rg, elite_size : int
        MaxItRG and σ of the randomized construction (paper: 1000 and 10).
    max_it_pr : int, optional
        MaxItPR, iterations (applied moves) per target (paper and default: N).
    proxy : {"f_bar", "f_obj"}
        f_P for both the elite set and the moves (paper: f̄_OBJ, eq. 1).
    postprocess : bool
        Postprocess every construction before it is ranked, and the final solution.
    swap_prob, candidates, max_no_improve, log_interval
        As in `randomized_greedy`.
    open_rule : {"largest", "config"}
        VM type of a newly opened node in the construction, as in `greedy`; with "largest" a
        relinking move may also put a job on any open node of its target GPU model with room.

    Returns
    -------
    Solution
        ``stats``: seconds, seed, iterations (construction), pr_iterations, pr_moves, proxy,
        elite, postprocess_changes and ``steps`` (f_OBJ and proxy of greedy, best_elite,
        path_relinking and postprocessed).
    """
    reject_unknown("path-relinking", options)
    limit = check_time_limit(time_limit)
    code = proxy_code(proxy)
    rule = open_rule_code(open_rule)
    opts = rg_options(max_it_rg, elite_size, swap_prob, candidates, max_no_improve, log_interval)
    max_pr = instance.nodes if max_it_pr is None else check_int("max_it_pr", max_it_pr, 1)
    warm_up(path_relinking, max_it_rg=3, elite_size=2)
    start = time.perf_counter()
    deadline = None if limit is None else start + limit
    D = kernel_data(instance, pins=paper_keep(instance))  # the keep rules they inherit
    rg_deadline = None if limit is None else start + RG_SHARE * limit
    elite = randomized_construction(
        instance, D, code, rule, postprocess, seed=seed, deadline=rg_deadline, **opts
    )
    st = State.new(instance)
    st.load(D, *elite.greedy)
    steps = {"greedy": step_values(D, code, st)}
    st.load(D, elite.vm[0], elite.node[0], elite.cfg[0])
    steps["best_elite"] = step_values(D, code, st)
    score = float(elite.score[0])
    pr_it = pr_moves = 0
    for t in range(1, len(elite)):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        it, moves, score = K.path_relinking_towards(
            D, code, rule, elite.cfg[t], max_pr, score, *st.arrays()
        )
        pr_it += int(it)
        pr_moves += int(moves)
        log.debug(
            "path relinking: target %d/%d, %d moves, proxy score %.6g",
            t,
            len(elite) - 1,
            moves,
            score,
        )
    steps["path_relinking"] = step_values(D, code, st)
    changes = 0
    if postprocess:
        changes = int(K.postprocess(D, code, *st.arrays()))
        steps["postprocessed"] = step_values(D, code, st)
    seconds = time.perf_counter() - start
    log.info(
        "path relinking: %d RG iterations, %d PR moves, f_OBJ %.6g, %.3f s",
        elite.iterations,
        pr_moves,
        steps["postprocessed" if postprocess else "path_relinking"]["f_obj"],
        seconds,
    )
    stats = {
        "seconds": seconds,
        "seed": seed,
        "iterations": elite.iterations,
        "pr_iterations": pr_it,
        "pr_moves": pr_moves,
        "proxy": proxy,
        "open_rule": open_rule,
        "elite": len(elite),
        "postprocess_changes": changes,
        "steps": steps,
    }
    return st.solution(instance, "path-relinking", stats)
