"""Greedy: Algorithm 1 [§3.3] without randomness, followed by the §3.3 postprocessing.

Jobs in decreasing pressure; each gets the cheapest configuration meeting its due date (else
the fastest), placed best-fit on an open node it can join, else on a newly opened node (which
nodes and which new VM type: ``open_rule``), else on the best suboptimal configuration that
fits an open node, else it waits.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.default.keep import paper_keep
from gpuaas.heuristics.state import (
    DEFAULT_OPEN_RULE,
    State,
    check_time_limit,
    kernel_data,
    open_rule_code,
    pressure_order,
    proxy_code,
    reject_unknown,
    rng_state,
    step_values,
    warm_up,
)
from gpuaas.instance import Instance
from gpuaas.solution import Solution

log = logging.getLogger(__name__)


def greedy(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    proxy: str = "f_obj",
    postprocess: bool = True,
    open_rule: str = DEFAULT_OPEN_RULE,
    **options: Any,
) -> Solution:
    """Deterministic Greedy construction (Algorithm 1 without randomness) + postprocessing.

    Parameters
    ----------
    instance : Instance
        The rescheduling point to solve.
    seed : int
        Recorded in ``stats``; Greedy uses no randomness.
    time_limit : float, optional
        Accepted for the common signature; Greedy is a single pass and always completes.
    proxy : {"f_obj", "f_bar"}
        Objective the postprocessing must not worsen (besides f_OBJ, which it always
        improves); reported in ``stats["steps"]``.
    postprocess : bool
        Apply the §3.3 postprocessing (downsize VMs, hand idle GPUs to the best speed-up).
    open_rule : {"largest", "config"}
        VM type of a newly opened node: "largest", the largest VM type of the chosen
        configuration's GPU model (jobs then join any open node of that GPU model with room,
        postprocessing downsizes); "config", the configuration's own VM type (the paper's
        Algorithm 1 read literally). See heuristics/README.md.

    Returns
    -------
    Solution
        With ``stats``: ``seconds`` (solve time, excluding numba compilation), ``seed``,
        ``iterations`` (1), ``proxy`` and ``steps`` (f_OBJ and proxy value after each step).
    """
    reject_unknown("greedy", options)
    check_time_limit(time_limit)
    code = proxy_code(proxy)
    rule = open_rule_code(open_rule)
    warm_up(greedy)
    start = time.perf_counter()
    D = kernel_data(instance, pins=paper_keep(instance))  # the keep rules they inherit
    st = State.new(instance)
    K.randomized_construction_schedule(
        D, rule, pressure_order(instance), False, 0.0, 1, rng_state(seed), *st.arrays()
    )
    steps = {"greedy": step_values(D, code, st)}
    changes = 0
    if postprocess:
        changes = int(K.postprocess(D, code, *st.arrays()))
        steps["postprocessed"] = step_values(D, code, st)
    seconds = time.perf_counter() - start
    log.info(
        "greedy: f_OBJ %.6g, %d postprocessing changes, %.3f s",
        steps["postprocessed" if postprocess else "greedy"]["f_obj"],
        changes,
        seconds,
    )
    stats = {
        "seconds": seconds,
        "seed": seed,
        "iterations": 1,
        "proxy": proxy,
        "open_rule": open_rule,
        "postprocess_changes": changes,
        "steps": steps,
    }
    return st.solution(instance, "greedy", stats)
