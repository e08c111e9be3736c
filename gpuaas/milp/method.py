"""The `milp` method: P1$ (formulations/P1D.md, the default) or P1 as the paper writes it
(formulations/P1.md, `objective="p1a"`) solved by HiGHS (or any PuLP solver) from a warm start,
within one time limit. Whatever the solver reports, the returned Solution's
`stats["objective"]` is the objective it solved, of the decoded Solution, checked by the
independent validator.
"""

from __future__ import annotations

import logging
import math
import time as _time
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.baselines.dispatch import heuristic_config, submission_order
from gpuaas.errors import InputError, SolverError
from gpuaas.instance import Instance
from gpuaas.limits import MAX_MILP_COLUMNS, MAX_SECONDS
from gpuaas.milp.highs import solve_highs, write_model
from gpuaas.milp.model import build_model, decode, model_columns, solution_columns
from gpuaas.milp.pulp_solvers import solve_pulp
from gpuaas.objective import OBJECTIVES
from gpuaas.quotas import respect
from gpuaas.resources import fit
from gpuaas.solution import Solution
from gpuaas.validator import validate

log = logging.getLogger(__name__)


#: A solver stop at a relative gap at most this (HiGHS's default mip_rel_gap) is "optimal";
#: above it, a stop at the requested gap is "gap_reached".
OPTIMAL_GAP = 1e-4
#: Share of the time limit a warm-start method named by `warm_start` may use (path relinking
#: and randomized greedy stop there; greedy is one quick pass).
WARM_SHARE = 0.25
#: Seconds kept, out of the time limit, for decoding and checking the solver's answer.
RESERVE = 0.05
#: The method whose solution starts the solver, by objective: for P1$ the default method's plan
#: (it decides by the same plan values, so HiGHS starts close to the optimum: within 0.3 % on
#: the bundled example), for P1 Greedy's (the paper's heuristic on the paper's objective).
WARM_START = {"dollars": "incremental", "p1a": "greedy"}
#: Whether the warm start is handed to HiGHS as its MIP start (`setSolution`), by objective;
#: otherwise HiGHS solves from scratch and the warm start is only the answer to beat. P1$: the
#: default method's plan is close to the optimum and prunes. P1: Greedy's plan is 10-40 x the
#: optimum on 50-job points (f_OBJ 4.7-7.3e6 against 1.2-4.6e5), prunes nothing, and steered
#: HiGHS away: at N = 5, J = 50 it took 279 s to prove the optimum it found in 37 s without
#: it, and at a 120 s limit returned the warm start (issue 39, case 16).
MIP_START = {"dollars": True, "p1a": False}


def milp(
    instance: Instance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    gap: float | None = None,
    threads: int | None = None,
    warm_start: Solution | str | None = "default",
    objective: str = "dollars",
    p1n: bool | None = None,
    solver: str = "highs",
    literal: bool = False,
    write_lp: str | None = None,
    write_mps: str | None = None,
    solver_log: bool = False,
    linearisation: str = "product",
    mip_start: bool | None = None,
) -> Solution:
    """Solve P1$ or P1 exactly (or to a relative gap) with HiGHS, or another solver through PuLP.

    Everything happens within `time_limit`: the warm start, the model build (timed), then the
    solver, which gets what is left (less `RESERVE` for checking its answer). The solver's
    answer is decoded and checked by the independent validator; when it has none in time, or
    one that is not feasible (numerical trouble), or one worse than the warm start, the warm
    start is returned instead (status "warm_start"), so with a warm start (the default) there
    is always a solution, never worse than the warm start's nor than HiGHS's own.

    Parameters
    ----------
    instance : Instance
        The rescheduling point; every job is a candidate.
    seed : int
        Solver random seed (and the warm-start method's).
    time_limit : float, optional
        Seconds for everything (warm start, build, solve, check).
    gap : float, optional
        Relative MIP gap at which to stop (HiGHS default 1e-4; 0 proves optimality).
    threads : int, optional
        Solver threads (HiGHS: see the module docstring on its per-process thread count).
    warm_start : str, Solution or None
        The first incumbent handed to the solver: a method name (run here, with at most
        `WARM_SHARE` of the time limit; "default": `WARM_START`'s for the objective), a feasible
        Solution, or None for no warm start. With P1n, the warm start is repaired to open min(N, J) nodes
        (`p1n_warm_start`); one that is still infeasible is ignored (`stats["warm_start"]`).
    objective : {"dollars", "p1a"}
        The problem: P1$, the plan's cost in dollars (formulations/P1D.md), or P1 as the paper
        writes it (P1a, formulations/P1.md).
    p1n : bool, optional
        Require exactly min(N, J) open nodes (P1n); default: on for P1 (as in the paper), off
        for P1$.
    solver : str
        "highs" (highspy, default), "cbc" or any PuLP solver name (model passed as MPS).
    literal : bool
        P1: use the paper's literal P1h/P1i (for comparison only; see formulations/P1.md).
    write_lp, write_mps : str, optional
        Also write the model to this LP / MPS file.
    solver_log : bool
        Show the solver's own log on stdout.
    linearisation : {"product", "bigm"}
        P1: how the first-ending-job cost π·α is linearised (see `build_model`).
    mip_start : bool, optional
        Hand the warm start to the solver as its MIP start; default `MIP_START`'s for the
        objective (P1$ yes, P1 no: then the solver runs as without a warm start, and the warm
        start is returned only when the solver has nothing better).

    Returns
    -------
    Solution
        With `stats`: status ("optimal": proven within `OPTIMAL_GAP`; "gap_reached": stopped
        at the requested `gap`; "time_limit": stopped by the time limit with an incumbent;
        "warm_start": the solver had nothing usable or nothing better, the warm start is
        returned), objective
        (of this Solution: P1$ or f_OBJ, as solved; `objective_function` says which), bound (solver's best bound, or None), gap
        ((objective − bound) / objective), seconds, build_seconds, seed, solver,
        solver_status, solver_objective, rows, columns, warm_start, mip_start (whether the
        solver was given it).

    Raises
    ------
    SolverError
        When there is no warm start and the solver stops without a usable solution (the CLI
        exits with code 3), or reports the model infeasible.
    """
    start = _time.perf_counter()
    checks.optional_number(gap, "gap", minimum=0.0)
    if threads is not None:
        checks.integer(threads, "threads", minimum=1, maximum=256)
    checks.optional_number(time_limit, "time_limit", maximum=MAX_SECONDS, positive=True)
    if not isinstance(solver, str):
        raise InputError(None, "solver", f"must be a solver name, got {solver!r}")
    if objective not in OBJECTIVES:
        raise InputError(
            None, "objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}"
        )
    p1n = objective == "p1a" if p1n is None else bool(p1n)
    if isinstance(warm_start, str) and warm_start == "default":
        warm_start = WARM_START[objective]
    columns = model_columns(instance, linearisation, objective)
    if columns > MAX_MILP_COLUMNS:
        raise InputError(
            None,
            "instance",
            f"{'P1' if objective == 'p1a' else 'P1$'} would have {columns} columns for N = {instance.nodes}, "
            f"J = {instance.n_jobs}; the MILP takes at most {MAX_MILP_COLUMNS} "
            "(gpuaas.limits); use a heuristic method",
        )
    deadline = None if time_limit is None else start + float(time_limit)
    stats: dict[str, Any] = {"objective_function": objective}
    warm = _warm_start(instance, warm_start, seed, time_limit, p1n, stats)
    model = build_model(
        instance, objective=objective, p1n=p1n, literal=literal, linearisation=linearisation
    )
    if write_lp:
        write_model(model, write_lp)
    if write_mps:
        write_model(model, write_mps)
    if mip_start is None:
        mip_start = MIP_START[objective]
    stats["mip_start"] = warm is not None and bool(mip_start)
    warm_values = None if warm is None else solution_columns(model, warm)
    start_values = warm_values if stats["mip_start"] else None
    build = _time.perf_counter() - start
    left = (
        None if deadline is None else deadline - _time.perf_counter() - RESERVE * float(time_limit)
    )
    stats.update(rows=model.n_rows, columns=model.n_cols, p1n=p1n, build_seconds=build, seed=seed)
    if left is not None and left <= 0 and warm is not None:
        return _finish(warm, "warm_start", None, start, stats, "no time left for the solver")
    kw: dict[str, Any] = {
        "time_limit": None if left is None else max(left, 1e-3),
        "gap": gap,
        "threads": threads,
        "seed": seed,
        "warm_start": start_values,
        "solver_log": solver_log,
    }
    if solver.lower() == "highs":
        res = solve_highs(model, **kw)
        solver_name = "highs"
        if not res["consistent"] and start_values is not None:
            log.warning(
                "milp: HiGHS answered inconsistently with the warm start; solving again without it"
            )
            stats["retried_without_warm_start"] = True
            left = (
                None
                if deadline is None
                else deadline - _time.perf_counter() - RESERVE * float(time_limit)
            )
            if left is None or left > 0:
                res = solve_highs(model, **dict(kw, warm_start=None, time_limit=left))
    else:
        res = solve_pulp(model, solver, **kw)
        solver_name = res["solver"]
    stats.update(
        solver=solver_name,
        solver_status=res["solver_status"],
        solver_objective=res["solver_objective"],
    )
    for k in ("nodes", "lp_iterations", "killed"):
        if res.get(k) is not None:
            stats[f"solver_{k}"] = res[k]
    if res["status"] == "infeasible":
        if p1n and instance.catalog.quotas:
            raise SolverError(
                f"{solver_name}: P1n (exactly min(N, J) open nodes) and the catalog's quotas "
                "cannot hold together"
            )
        raise SolverError(
            f"{solver_name} reports the model infeasible (it always has a solution: a bug)"
        )
    problem = None
    if res["values"] is None:
        problem = ("no solution" if warm is None else "nothing better than the warm start") + (
            " within the time limit" if time_limit is not None else ""
        )
    elif not res.get("consistent", True):
        problem = (
            "its answer is inconsistent (the objective of its solution is not the one it reports)"
        )
    else:
        sol = decode(model, res["values"])
        report = validate(sol, p1n=p1n)
        if not report.ok:
            problem = f"its solution is not feasible ({report.errors[0]})"
            log.warning(
                "milp: %s returned an infeasible solution: %s", solver_name, report.errors[0]
            )
    if problem is not None:
        if warm is None:
            limit = f" within the time limit of {time_limit:g} s" if time_limit is not None else ""
            what = f"found no solution{limit}" if res["values"] is None else f"failed: {problem}"
            raise SolverError(f"{solver_name} {what} and there is no warm start")
        return _finish(warm, "warm_start", res["bound"], start, stats, f"{solver_name}: {problem}")
    status = res["status"]
    if status == "optimal" and gap is not None and gap > OPTIMAL_GAP:
        status = "gap_reached"  # HiGHS says optimal when it reaches the requested gap
    # without a MIP start the solver may end worse than the warm start, the answer to beat (in
    # the model's objective, which the literal P1 rows make differ from f_OBJ)
    theirs = float(model.col_cost @ res["values"]) + model.offset
    if warm_values is not None and (
        float(model.col_cost @ warm_values) + model.offset < theirs - 1e-9 * max(1.0, abs(theirs))
    ):
        found = f"{solver_name}: its best ({theirs:.6g}) is worse than the warm start"
        if status in ("optimal", "gap_reached"):  # the bound proves the better one too
            return _finish(warm, status, res["bound"], start, stats, found)
        return _finish(warm, "warm_start", res["bound"], start, stats, found)
    return _finish(sol, status, res["bound"], start, stats, None)


def _finish(
    sol: Solution,
    status: str,
    bound: float | None,
    start: float,
    stats: dict[str, Any],
    fallback: str | None,
) -> Solution:
    """The returned Solution with its stats: the objective solved, bound and gap, status, seconds."""
    objective = sol.f_obj if stats["objective_function"] == "p1a" else sol.objective
    if bound is not None and math.isfinite(bound):
        bound = min(bound, objective)
        gap_now = (objective - bound) / abs(objective) if objective != 0 else 0.0
        if status == "gap_reached" and gap_now <= OPTIMAL_GAP:
            status = "optimal"
    else:
        bound, gap_now = None, None
    stats.update(status=status, objective=objective, bound=bound, gap=gap_now)
    if fallback is not None:
        stats["fallback"] = fallback
    stats["seconds"] = _time.perf_counter() - start
    out = Solution(sol.instance, sol.node_vm, sol.job_node, sol.job_cfg, "milp", stats)
    log.info(
        "milp: %s objective %.6g bound %s gap %s in %.2f s",
        status,
        objective,
        bound,
        gap_now,
        stats["seconds"],
    )
    return out


def _warm_start(
    instance: Instance,
    warm: Solution | str | None,
    seed: int,
    time_limit: float | None,
    p1n: bool,
    stats: dict[str, Any],
) -> Solution | None:
    """The feasible warm start (module docstring), or None with the reason in `stats`."""
    if warm is None or warm is False:
        stats["warm_start"] = "none"
        return None
    if isinstance(warm, str):
        from gpuaas.methods import get_method

        if warm == "milp":
            raise InputError(None, "warm_start", "cannot be milp itself")
        fn = get_method(warm)
        limit = None if time_limit is None else WARM_SHARE * float(time_limit)
        warm = fn(instance, seed=seed, time_limit=limit)
    if not isinstance(warm, Solution):
        raise InputError(
            None, "warm_start", f"must be a method name, a Solution or None, got {warm!r}"
        )
    if warm.instance is not instance and (
        warm.instance.job_ids != instance.job_ids or warm.instance.nodes != instance.nodes
    ):
        raise InputError(None, "warm_start", "solution is for a different instance")
    # within the nodes' vCPUs and memory, as every method's plan (`gpuaas.resources.fit`)
    warm = fit(Solution(instance, warm.node_vm, warm.job_node, warm.job_cfg, warm.method))
    warm = respect(warm)  # and its quotas (`gpuaas.quotas`), which the model's rows hold
    report = validate(warm)
    if report.ok and p1n:
        warm = p1n_warm_start(warm)
        report = validate(warm, p1n=True)
    if not report.ok:
        stats["warm_start"] = f"ignored: {report.errors[0]}"
        log.warning(
            "milp: warm start from %s ignored: %s", warm.method or "solution", report.errors[0]
        )
        return None
    stats["warm_start"] = warm.method or "solution"
    stats["warm_start_objective"] = (
        warm.f_obj if stats["objective_function"] == "p1a" else warm.objective
    )
    return warm


def p1n_warm_start(sol: Solution) -> Solution:
    """Make a solution meet P1n (exactly min(N, J) open nodes) so the MILP accepts it as a start.

    Greedy opens a node only when a job fits no open one, so it often opens fewer nodes than
    P1n asks for, and HiGHS would then start without an incumbent. While too few nodes are
    open: move one job off a node that hosts several onto a closed node of the same VM type
    (its configuration unchanged), else start the first postponed job (submission order) on a
    closed node with the heuristics' configuration.

    Parameters
    ----------
    sol : Solution
        A feasible solution (without P1n).

    Returns
    -------
    Solution
        A feasible solution with min(N, J) open nodes (f_OBJ may be higher).
    """
    inst = sol.instance
    cat = inst.catalog
    node_vm, job_node, job_cfg = sol.node_vm.copy(), sol.job_node.copy(), sol.job_cfg.copy()
    target = min(inst.nodes, inst.n_jobs)
    waiting = [int(j) for j in submission_order(inst) if job_node[j] < 0]
    while (node_vm >= 0).sum() < target:
        free = int(np.flatnonzero(node_vm < 0)[0])
        hosted = np.bincount(job_node[job_node >= 0], minlength=inst.nodes)
        if hosted.max(initial=0) >= 2:
            j = int(np.flatnonzero(job_node == int(np.argmax(hosted)))[-1])
        else:
            j = waiting.pop(0)
            job_cfg[j] = heuristic_config(inst, j)
        node_vm[free] = cat.cfg_vm[job_cfg[j]]
        job_node[j] = free
    return Solution(inst, node_vm, job_node, job_cfg, sol.method, dict(sol.stats))
