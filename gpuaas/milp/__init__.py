"""The P1 MILP (paper §3.1), split as PyPSA splits its optimisation (variables, constraints,
optimize): one module per concept, each importing only those before it.

- `builder`: the `Builder` that accumulates columns and named row families as arrays;
- `variables`: one `define_*` per variable family of P1 and P1$;
- `constraints`: one `constrain_*` per row family (rows named `P1x_<indices>`,
  `formulations/P1.md`);
- `model`: P1 as arrays — `build_model` calling them, and the map between columns and a
  Solution (`solution_columns`, `decode`);
- `highs`: the HiGHS backend (highspy; a time limit that holds; LP / MPS files);
- `pulp_solvers`: the PuLP backend (CBC, Gurobi, ... fed the same model as MPS);
- `method`: the `milp` method (options, warm start, the checked Solution).

This package only re-exports their public names.
"""

from __future__ import annotations

from gpuaas.milp.highs import new_highs, solve_highs, to_highs, write_model
from gpuaas.milp.method import OPTIMAL_GAP, RESERVE, WARM_SHARE, milp, p1n_warm_start
from gpuaas.milp.model import P1Model, build_model, decode, model_columns, solution_columns
from gpuaas.milp.pulp_solvers import pulp_solver_name, solve_pulp

__all__ = [
    "OPTIMAL_GAP",
    "RESERVE",
    "WARM_SHARE",
    "P1Model",
    "build_model",
    "decode",
    "milp",
    "model_columns",
    "new_highs",
    "p1n_warm_start",
    "pulp_solver_name",
    "solution_columns",
    "solve_highs",
    "solve_pulp",
    "to_highs",
    "write_model",
]
