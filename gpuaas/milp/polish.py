"""Polish: a plan's neighbourhood re-optimised by the P1$ MILP within a time budget.

The default method decides job by job (plan values, keep rules, a greedy placement); the MILP
on P1$ (formulations/P1D.md) optimises the same dollars jointly. `polish` keeps most of a plan
and lets HiGHS re-place the rest: the `nodes` open nodes whose jobs lose most against their best
run values (plus their unfilled price) are freed with their jobs, together with every waiting
job and up to `nodes` closed nodes; the other nodes keep their VM type and their jobs, whose
spare GPUs the freed jobs may still take. With N <= `nodes` the whole point is re-optimised.
HiGHS starts from the plan itself. With `move_weight` W > 1 it minimises P1$ with each moved
job's lost work κ_j counted W times (the default method's weight on a move); either way the
result is returned only if its P1$ is lower and it passes the independent validator.
"""

from __future__ import annotations

import time as _time

import numpy as np

from gpuaas.milp.highs import solve_highs
from gpuaas.milp.model import build_model, decode, solution_columns
from gpuaas.objective import dollar_terms
from gpuaas.per_job import at
from gpuaas.solution import Solution
from gpuaas.validator import validate

#: open nodes (and as many closed ones) a polish frees by default
POLISH_NODES = 5


def neighbourhood(solution: Solution, nodes: int = POLISH_NODES) -> tuple[np.ndarray, np.ndarray]:
    """(free nodes (N,) bool, free jobs (J,) bool) of `solution` (module docstring): the open
    nodes of largest loss, where a node's loss is its unfilled price over H plus, for each of its
    jobs, its run value on its configuration less its least run value."""
    inst = solution.instance
    cat = inst.catalog
    T = dollar_terms(inst)
    run = np.flatnonzero(solution.job_cfg >= 0)
    best = np.min(T.run, axis=1, initial=np.inf)
    loss = np.bincount(
        solution.job_node[run],
        weights=T.run[run, solution.job_cfg[run]] - best[run],
        minlength=inst.nodes,
    ).astype(float)  # np.bincount of no jobs is an int array, whatever its weights
    paid = np.bincount(
        solution.job_node[run],
        weights=at(T.price, run, solution.job_cfg[run]),
        minlength=inst.nodes,
    )
    is_open = solution.node_vm >= 0
    bill = np.where(is_open, cat.cost[np.maximum(solution.node_vm, 0)], 0.0)
    loss += inst.H * np.maximum(0.0, bill - paid)
    free = np.zeros(inst.nodes, dtype=bool)
    opened = np.flatnonzero(is_open)
    free[opened[np.argsort(-loss[opened], kind="stable")[:nodes]]] = True
    free[np.flatnonzero(~is_open)[:nodes]] = True
    jobs = (solution.job_node < 0) | free[np.maximum(solution.job_node, 0)]
    return free, jobs


def polish(
    solution: Solution,
    *,
    time_limit: float | None,
    nodes: int = POLISH_NODES,
    seed: int = 0,
    threads: int | None = 1,
    node_limit: int | None = None,
    presolve: bool = True,
    move_weight: float = 1.0,
) -> Solution:
    """`solution` with a neighbourhood re-optimised by the P1$ MILP within `time_limit` s
    and `node_limit` branch-and-bound nodes (module docstring); `solution` itself when HiGHS
    finds nothing better within them. Without a time limit HiGHS runs in this process, and a
    node limit alone gives the same result on any machine under any load. `presolve=False`
    turns HiGHS's presolve off, which on small points took most of the time (0.3-0.4 s of
    0.45 s at N = 5, J = 18; the default's polish step,
    `gpuaas.heuristics.default.polish`). `move_weight`:
    the weight on κ_j in the MILP's objective (module docstring).

    The returned Solution's `stats` are `solution`'s plus ``polish``: the P1$ saved ($, 0 when
    unchanged), the HiGHS status and the seconds taken.
    """
    start = _time.perf_counter()
    inst = solution.instance
    free, jobs = neighbourhood(solution, nodes)
    J, N, C = inst.n_jobs, inst.nodes, inst.catalog.n_configs
    cat = inst.catalog
    allowed = np.zeros((J, N, C), dtype=bool)
    # free jobs: any configuration on a free node, a configuration of the node's type elsewhere
    on_type = cat.cfg_vm[None, :] == solution.node_vm[:, None]  # (N, C)
    allowed[jobs] = (free[:, None] | on_type)[None, :, :]
    kept = np.flatnonzero(~jobs)
    allowed[kept, solution.job_node[kept], solution.job_cfg[kept]] = True
    model = build_model(inst, objective="dollars", allowed=allowed, move_weight=move_weight)
    model.col_lower[model.x[kept, solution.job_node[kept], solution.job_cfg[kept]]] = 1.0
    fixed = np.flatnonzero(~free)
    is_open = solution.node_vm[fixed] >= 0
    model.col_lower[model.y[fixed[is_open], solution.node_vm[fixed[is_open]]]] = 1.0
    model.col_upper[model.w[fixed[~is_open]]] = 0.0
    before = solution.objective
    left = None if time_limit is None else max(time_limit - (_time.perf_counter() - start), 1e-3)
    res = solve_highs(
        model,
        time_limit=left,
        threads=threads,
        seed=seed,
        warm_start=solution_columns(model, solution),
        options=({} if presolve else {"presolve": "off"})
        | ({} if node_limit is None else {"mip_max_nodes": node_limit}),
    )
    out = solution
    if res["values"] is not None and res.get("consistent", True):
        new = decode(model, res["values"], solution.method)
        if validate(new).ok and new.objective < before - 1e-9 * max(1.0, abs(before)):
            out = Solution(inst, new.node_vm, new.job_node, new.job_cfg, solution.method)
    out.stats = dict(solution.stats)
    out.stats["polish"] = {
        "saved": before - out.objective,
        "status": res["status"],
        "seconds": _time.perf_counter() - start,
        "free_jobs": int(jobs.sum()),
    }
    return out
