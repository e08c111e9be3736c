"""The PuLP backend: other MILP solvers (CBC, Gurobi, CPLEX, ...) fed the one P1 model as MPS.

The model built by `gpuaas.milp.model.build_model` is written by HiGHS's MPS writer and read back
with `pulp.LpProblem.fromMPS`, so there is no second hand-written formulation. PuLP does not
expose a best bound, so `bound` is None; the status comes from PuLP's `sol_status`, which,
unlike its `status`, tells a time-limit stop with an incumbent from an optimum.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from gpuaas.errors import InputError, SolverError
from gpuaas.milp.highs import write_model
from gpuaas.milp.model import P1Model

#: short names accepted by `--solver`, mapped to PuLP solver classes
ALIASES = {
    "cbc": "PULP_CBC_CMD",
    "gurobi": "GUROBI",
    "cplex": "CPLEX_PY",
    "glpk": "GLPK_CMD",
    "scip": "SCIP_CMD",
}


def pulp_solver_name(name: str) -> str:
    """The PuLP solver class for a short or PuLP name; InputError if PuLP cannot run it here."""
    import pulp

    # PuLP's HiGHS classes ignore warm starts: HiGHS is used through highspy ("highs") instead
    available = [s for s in pulp.listSolvers(onlyAvailable=True) if not s.startswith("HiGHS")]
    cls = ALIASES.get(name.lower(), name)
    if cls == "PULP_CBC_CMD" and "COIN_CMD" in available:
        cls = "COIN_CMD"  # a separately installed CBC (PuLP 3 deprecates its bundled one)
    if cls not in available:
        known = ", ".join(["highs"] + [a for a, c in ALIASES.items() if c in available] + available)
        hint = ""
        if cls == "PULP_CBC_CMD":  # PuLP 4 drops its bundled CBC
            hint = " (CBC: pip install 'pulp[cbc]' or a cbc on PATH, run as COIN_CMD)"
        raise InputError(
            None, "solver", f"solver {name!r} is not available here{hint}; available: {known}"
        )
    return cls


def solve_pulp(
    model: P1Model,
    name: str,
    *,
    time_limit: float | None = None,
    gap: float | None = None,
    threads: int | None = None,
    seed: int = 0,
    warm_start: np.ndarray | None = None,
    solver_log: bool = False,
) -> dict[str, Any]:
    """Solve `model` with the PuLP solver `name`; same result keys as `highs.solve_highs`."""
    import pulp

    cls = pulp_solver_name(name)
    with tempfile.TemporaryDirectory(prefix="gpuaas-milp-") as tmp:
        path = os.path.join(tmp, "p1.mps")
        write_model(model, path, offset=False)  # added back to the objective below
        variables, prob = pulp.LpProblem.fromMPS(path)
    missing = set(model.col_names) - set(variables)
    if missing:
        raise SolverError(f"PuLP renamed model columns (e.g. {min(missing)!r})")
    kw: dict[str, Any] = {"msg": bool(solver_log)}
    if time_limit is not None:
        kw["timeLimit"] = float(time_limit)
    if gap is not None:
        kw["gapRel"] = float(gap)
    if threads is not None:
        kw["threads"] = int(threads)
    if cls in ("PULP_CBC_CMD", "COIN_CMD"):
        kw["options"] = [f"randomCbcSeed {int(seed) % 2147483647 + 1}"]
    if warm_start is not None:
        for i, col in enumerate(model.col_names):
            variables[col].setInitialValue(float(warm_start[i]))
        kw["warmStart"] = True
    prob.solve(pulp.getSolver(cls, **kw))
    sol_status = prob.sol_status
    if sol_status == pulp.LpSolutionInfeasible:
        status = "infeasible"
    elif sol_status == pulp.LpSolutionOptimal:
        status = "optimal"
    elif sol_status == pulp.LpSolutionIntegerFeasible:
        status = "time_limit"
    else:
        status = "no_solution"
    values = None
    if status in ("optimal", "time_limit"):
        raw = [variables[col].varValue for col in model.col_names]
        if any(v is None for v in raw):
            status = "no_solution"
        else:
            values = np.array(raw, dtype=np.float64)
    return {
        "status": status,
        "values": values,
        "bound": None,
        "solver_objective": (
            float(pulp.value(prob.objective)) + model.offset if values is not None else None
        ),
        "solver_status": pulp.LpStatus[prob.status],
        "solver": cls,
    }
