"""Randomized Greedy: Algorithm 1 [§3.3.1] repeated MaxItRG times, keeping an elite set of σ.

Iteration 0 is the deterministic Greedy, so the elite set starts with it and the result is
never worse than Greedy in the proxy. Randomisation (the paper leaves its exact form open;
see heuristics/README.md): pressure-order swaps with probability inversely proportional to
the job's weight, a configuration among the ``candidates`` cheapest with probability inversely
proportional to its cost, a node among the fitting ones with probability inversely
proportional to 1 + the GPUs it would leave idle.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.default.keep import paper_keep
from gpuaas.heuristics.state import (
    DEFAULT_OPEN_RULE,
    State,
    check_float,
    check_int,
    check_time_limit,
    kernel_data,
    natural,
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

CHUNK = 32  # iterations per kernel call: the granularity of time checks and progress lines


@lru_cache(maxsize=1)  # an Instance is immutable and hashes by identity; the default method
def _pressure_order(instance: Instance) -> np.ndarray:  # asks 2-4 times per point
    return pressure_order(instance)


@dataclass
class Elite:
    """The elite set, best first: ``vm`` (σ, N), ``node`` and ``cfg`` (σ, J), ``score`` (σ,),
    plus the Greedy solution (iteration 0) and the number of iterations run."""

    vm: np.ndarray
    node: np.ndarray
    cfg: np.ndarray
    score: np.ndarray
    greedy: tuple[np.ndarray, np.ndarray, np.ndarray]
    iterations: int

    def __len__(self) -> int:
        return len(self.score)


def randomized_construction(
    instance: Instance,
    D: K.KernelData,
    proxy: int,
    rule: int,
    postproc: bool,
    *,
    seed: int,
    max_it: int,
    size: int,
    swap_prob: float,
    candidates: int,
    max_no_improve: int,
    deadline: float | None,
    log_interval: float,
) -> Elite:
    """Algorithm 1, RANDOMIZED_CONSTRUCTION [§3.3.1]: up to `max_it` (MaxItRG) randomised
    schedules (time, iteration and no-improvement limits combine; iteration 0, the
    deterministic Greedy, always runs), returning the elite set S* of at most `size` (σ)
    sorted best first. With `postproc` every schedule is postprocessed before it is ranked
    (heuristics/README.md). The iterations run in the kernel
    `construction_chunk`, in chunks between time checks, from one `construction_base`."""
    N, J = instance.nodes, instance.n_jobs
    order = _pressure_order(instance).copy()
    rng = rng_state(seed)
    e_vm = np.full((size, N), -1, dtype=np.int64)
    e_node = np.full((size, J), -1, dtype=np.int64)
    e_cfg = np.full((size, J), -1, dtype=np.int64)
    e_val = np.full(size, np.inf)
    e_cnt = np.zeros(1, dtype=np.int64)
    last_imp = np.zeros(1, dtype=np.int64)
    args = (e_vm, e_node, e_cfg, e_val, e_cnt)
    # the kept jobs placed and what every schedule reads, once for all the chunks
    # (`K.randomized_construction_iterations` is `construction_base` then one chunk), and for
    # the next call around the same kept jobs (`_shared_base`)
    st, base, dirty, key = _shared_base(instance, D, proxy, order, swap_prob)
    it = K.construction_chunk(
        D,
        proxy,
        rule,
        postproc,
        order,
        swap_prob,
        candidates,
        rng,
        0,
        1,
        0,
        last_imp,
        *st.arrays(),
        *args,
        base,
        dirty,  # the state holds a schedule of the last call around these kept jobs
    )
    greedy = (st.node_vm.copy(), st.job_node.copy(), st.job_cfg.copy())
    if not len(base[3]) and deadline is None and max_no_improve == 0:
        # no free job (every job kept): every schedule is iteration 0's, which the elite set
        # skips as a duplicate; the random stream is this call's own. The iterations are run
        # in effect (tests/test_scale.py), not drawn for nothing
        it = max(it, max_it)
    next_log = time.perf_counter() + log_interval
    while it < max_it:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        end = min(max_it, it + CHUNK)
        nxt = K.construction_chunk(
            D,
            proxy,
            rule,
            postproc,
            order,
            swap_prob,
            candidates,
            rng,
            it,
            end,
            max_no_improve,
            last_imp,
            *st.arrays(),
            *args,
            base,
            True,  # iteration 0 ran: the state holds the last schedule
        )
        if nxt < end:
            it = nxt
            break
        it = end
        if time.perf_counter() >= next_log:
            next_log = time.perf_counter() + log_interval
            log.info(
                "randomized greedy: iteration %d/%d, best proxy %.6g, elite %d",
                it,
                max_it,
                natural(proxy, float(e_val[: e_cnt[0]].min())),
                e_cnt[0],
            )
    _last.base = (key, st, base)  # the state holds the last schedule
    m = int(e_cnt[0])
    rank = np.argsort(e_val[:m], kind="stable")
    return Elite(e_vm[rank], e_node[rank], e_cfg[rank], e_val[rank], greedy, it)


#: the last `randomized_construction`'s (key, state, base) in this thread (`_shared_base`): per
#: thread, so that two threads solving the same instance never share one state
_last = threading.local()


def _base_key(instance: Instance, D: K.KernelData, proxy: int, swap_prob: float) -> tuple:
    """What `K.construction_base` reads: the instance (its pressure order), the proxy, the
    swap chance and every field of D but the preferred configurations."""
    return (instance, proxy, swap_prob, *(a for k, a in zip(D._fields, D) if k != "pref_cfg"))


def _same(a: tuple, b: tuple) -> bool:
    """The same objects (arrays: the same array, as `K.KernelData._replace` keeps them; else
    equal values)."""
    return len(a) == len(b) and all(
        x is y or (not isinstance(x, np.ndarray) and type(x) is type(y) and x == y)
        for x, y in zip(a, b)
    )


def _shared_base(
    instance: Instance, D: K.KernelData, proxy: int, order: np.ndarray, swap_prob: float
) -> tuple[State, tuple, bool, tuple]:
    """(state, base, dirty, key): the last call's state and `K.construction_base` where it read the
    same (`_base_key`: the default method's rivals construct around the plan's kept jobs, with
    D differing only in the preferred configurations), its state holding that call's last
    schedule (dirty: `K.construction_chunk` undoes it first, as between chunks); else a new
    state with the kept jobs placed and their base. The base's own arrays are read-only to the
    chunks or scratch they write before reading, so the schedules, scores, elite set and random
    stream are those of a new base (tests/test_scale.py)."""
    key = _base_key(instance, D, proxy, swap_prob)
    last, _last.base = getattr(_last, "base", None), None  # kept again once the call completes
    if last is not None and _same(last[0], key):
        return last[1], last[2], True, key
    st = State.new(instance)
    return st, K.construction_base(D, proxy, order, swap_prob, *st.arrays()), False, key


def rg_options(
    max_it_rg: Any,
    elite_size: Any,
    swap_prob: Any,
    candidates: Any,
    max_no_improve: Any,
    log_interval: Any,
) -> dict[str, Any]:
    """Checked Randomized Greedy options (clear InputErrors)."""
    return {
        "max_it": check_int("max_it_rg", max_it_rg, 1),
        "size": check_int("elite_size", elite_size, 1),
        "swap_prob": check_float("swap_prob", swap_prob, 0.0, 1.0),
        "candidates": check_int("candidates", candidates, 1),
        "max_no_improve": 0
        if max_no_improve is None
        else check_int("max_no_improve", max_no_improve, 1),
        "log_interval": check_float("log_interval", log_interval, 0.0, float("inf")),
    }


def finish(
    instance: Instance,
    D: K.KernelData,
    proxy: int,
    options: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    postprocess: bool,
) -> tuple[State, int]:
    """Postprocess each candidate (if asked) and keep the best by proxy score (first on ties)."""
    best, best_val, best_changes = None, np.inf, 0
    st = State.new(instance)
    for vm, node, cfg in options:
        st.load(D, vm, node, cfg)
        changes = int(K.postprocess(D, proxy, *st.arrays())) if postprocess else 0
        val = K.full_score(D, proxy, st.node_vm, st.job_node, st.job_cfg)
        if best is None or val < best_val:
            best, best_val, best_changes = (
                (st.node_vm.copy(), st.job_node.copy(), st.job_cfg.copy()),
                val,
                changes,
            )
    assert best is not None
    st.load(D, *best)
    return st, best_changes


def randomized_greedy(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    max_it_rg: int = 1000,
    elite_size: int = 10,
    proxy: str = "f_obj",
    postprocess: bool = True,
    swap_prob: float = 0.2,
    candidates: int = 3,
    max_no_improve: int | None = None,
    log_interval: float = 5.0,
    open_rule: str = DEFAULT_OPEN_RULE,
    **options: Any,
) -> Solution:
    """Randomized Greedy (Algorithm 1, MaxItRG iterations, elite set of σ) + postprocessing.

    Parameters
    ----------
    instance : Instance
        The rescheduling point to solve.
    seed : int
        Seed of the one random stream; the same seed gives the same solution bit for bit
        (unless `time_limit` cuts the run).
    time_limit : float, optional
        Stop starting new iterations after this many seconds (iteration 0 always runs).
    max_it_rg : int
        MaxItRG, the number of constructions (paper: 1000).
    elite_size : int
        σ, the size of the elite set (paper: 10).
    proxy : {"f_obj", "f_bar"}
        f_P, the objective ranking solutions (paper: f_OBJ for Randomized Greedy).
    postprocess : bool
        Postprocess every construction before it is ranked, and the final candidates (elite
        solutions and the Greedy one); return the best.
    swap_prob : float
        Probability scale of a swap in the pressure order (a job of the smallest weight swaps
        with its successor with this probability; heavier ones proportionally less).
    candidates : int
        Number of cheapest configurations a job's configuration is drawn from.
    max_no_improve : int, optional
        Stop after this many iterations without a better best solution.
    log_interval : float
        Seconds between progress lines on ``logging.getLogger(__name__)`` (INFO).
    open_rule : {"largest", "config"}
        VM type of a newly opened node, as in `greedy`.

    Returns
    -------
    Solution
        ``stats``: seconds, seed, iterations, proxy, elite (size), postprocess_changes and
        ``steps`` (f_OBJ and proxy of greedy, best_elite and the final solution).
    """
    reject_unknown("randomized-greedy", options)
    limit = check_time_limit(time_limit)
    code = proxy_code(proxy)
    rule = open_rule_code(open_rule)
    opts = rg_options(max_it_rg, elite_size, swap_prob, candidates, max_no_improve, log_interval)
    warm_up(randomized_greedy, max_it_rg=3, elite_size=2)
    start = time.perf_counter()
    D = kernel_data(instance, pins=paper_keep(instance))  # the keep rules they inherit
    elite = randomized_construction(
        instance,
        D,
        code,
        rule,
        postprocess,
        seed=seed,
        deadline=None if limit is None else start + limit,
        **opts,
    )
    st = State.new(instance)
    st.load(D, *elite.greedy)
    steps = {"greedy": step_values(D, code, st)}
    st.load(D, elite.vm[0], elite.node[0], elite.cfg[0])
    steps["best_elite"] = step_values(D, code, st)
    cands = [(elite.vm[k], elite.node[k], elite.cfg[k]) for k in range(len(elite))]
    st, changes = finish(instance, D, code, [*cands, elite.greedy], postprocess)
    if postprocess:
        steps["postprocessed"] = step_values(D, code, st)
    seconds = time.perf_counter() - start
    log.info(
        "randomized greedy: %d iterations, f_OBJ %.6g, %.3f s",
        elite.iterations,
        K.full_score(D, K.PROXY_FOBJ, st.node_vm, st.job_node, st.job_cfg),
        seconds,
    )
    stats = {
        "seconds": seconds,
        "seed": seed,
        "iterations": elite.iterations,
        "proxy": proxy,
        "open_rule": open_rule,
        "elite": len(elite),
        "postprocess_changes": changes,
        "steps": steps,
    }
    return st.solution(instance, "randomized-greedy", stats)
