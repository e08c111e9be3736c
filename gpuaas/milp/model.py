"""P1 as arrays (paper §3.1, formulations/P1.md) and P1$, the same placement in dollars
(formulations/P1D.md): their variables, their rows and the map between columns and a Solution.

The two problems share the placement (w, y, z, x and rows P1b-P1g, P1m); P1a adds α, p, τ, τ̂
(and β) with rows P1h-P1l, P1$ the unfilled price e_n of each node with rows `unfilled` and
`hosts`. `build_model(instance, objective=...)` builds either.

`build_model` calls one `define_*` function per variable family (`gpuaas.milp.variables`) and
one `constrain_*` function per constraint family (`gpuaas.milp.constraints`) on a `Builder`
(`gpuaas.milp.builder`); each states its mathematics in its docstring and `formulations/P1.md`
lists the same families under the same names. Rows are named `<family>_<index labels>` (e.g.
`P1c_j3_n1_v2`): HiGHS's LP/MPS writers drop names that contain `-`, so `_` separates the family
from its indices. The matrix is one CSR block that a backend hands to its solver
(`gpuaas.milp.highs`, `gpuaas.milp.pulp_solvers`); there is no second copy of the formulation.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.milp.builder import Builder, label_names
from gpuaas.milp.constraints import (
    constrain_hosts,
    constrain_P1b,
    constrain_P1c,
    constrain_P1d,
    constrain_P1e,
    constrain_P1f,
    constrain_P1g,
    constrain_P1h,
    constrain_P1i,
    constrain_P1j,
    constrain_P1j_product,
    constrain_P1k,
    constrain_P1l,
    constrain_P1m,
    constrain_P1n,
    constrain_quotas,
    constrain_resources,
    constrain_unfilled,
)
from gpuaas.milp.variables import (
    define_alpha,
    define_beta,
    define_e,
    define_p,
    define_tau,
    define_w,
    define_x,
    define_y,
    define_z,
)
from gpuaas.objective import OBJECTIVES, dollar_terms
from gpuaas.per_job import at
from gpuaas.reconfiguration import reconfiguration_terms
from gpuaas.solution import Solution


class SparseLP:
    """What a (MI)LP held as arrays has, which a HiGHS backend loads (`gpuaas.milp.highs.load_lp`):
    columns ``col_lower``, ``col_upper``, ``col_cost`` and rows ``row_lower``, ``row_upper`` as
    one CSR matrix ``indptr``, ``indices``, ``data``. P1 and the bound's capacity LP are both."""

    col_cost: np.ndarray
    row_lower: np.ndarray

    @property
    def n_cols(self) -> int:
        return len(self.col_cost)

    @property
    def n_rows(self) -> int:
        return len(self.row_lower)


@dataclass(eq=False)
class P1Model(SparseLP):
    """P1 or P1$ as arrays: columns (bounds, cost, integrality, names), rows as one CSR matrix,
    and the column indices of every variable family (-1 where a variable does not exist; the
    families of the other problem are empty)."""

    instance: Instance
    objective: str  # "dollars" (P1$) or "p1a" (P1)
    p1n: bool
    literal: bool
    linearisation: str
    col_lower: np.ndarray
    col_upper: np.ndarray
    col_cost: np.ndarray
    col_integer: np.ndarray  # bool
    col_parts: list[Any]  # lists of names or lazy `_Labels`, family by family
    row_lower: np.ndarray
    row_upper: np.ndarray
    row_parts: list[tuple[str, Any]]  # (family, labels)
    indptr: np.ndarray  # int32, CSR
    indices: np.ndarray  # int32
    data: np.ndarray  # float64
    families: dict[str, slice]  # row family -> its rows
    w: np.ndarray  # (N,)
    y: np.ndarray  # (N, V)
    z: np.ndarray  # (J, N)
    x: np.ndarray  # (J, N, C), -1 where job j cannot run configuration c
    alpha: np.ndarray  # (J, N)
    p: np.ndarray  # (J, N)
    tau: np.ndarray  # (J,)
    tauhat: np.ndarray  # (J,)
    beta: np.ndarray  # (J, N, C), product linearisation only (else all -1)
    e: np.ndarray  # (N,), P1$ only: the unfilled price of node n over H
    offset: float = 0.0  # constant of the objective (Σ κ_j; P1$: + Σ wait_j)

    @functools.cached_property
    def col_names(self) -> list[str]:
        """Column names (`x_j3_n1_v2_g1` ...), built on first use: only model files and other
        solvers need them, and building them costs more than building the model."""
        return [name for part in self.col_parts for name in label_names(part)]

    @functools.cached_property
    def row_names(self) -> list[str]:
        """Row names (`P1c_j3_n1_v2` ...), built on first use."""
        return [
            f"{fam}_{lab}" if lab else fam
            for fam, labels in self.row_parts
            for lab in label_names(labels)
        ]

    def row(self, name: str) -> dict[int, float]:
        """Coefficients {column: value} of the row called `name` (for tests and diagnostics)."""
        r = self.row_names.index(name)
        lo, hi = self.indptr[r], self.indptr[r + 1]
        return {int(c): float(v) for c, v in zip(self.indices[lo:hi], self.data[lo:hi])}


def build_model(
    instance: Instance,
    *,
    objective: str = "dollars",
    p1n: bool | None = None,
    literal: bool = False,
    linearisation: str = "product",
    allowed: np.ndarray | None = None,
    move_weight: float = 1.0,
) -> P1Model:
    """Build P1 or P1$ for `instance`: one define_* per variable family, one constrain_* per
    row family; a pinned job's x on its current node and configuration is fixed to 1
    (`Instance.pinned`).

    Parameters
    ----------
    instance : Instance
        The rescheduling point (all its jobs are candidates).
    objective : {"dollars", "p1a"}
        P1$ (formulations/P1D.md) or P1 as the paper writes it (formulations/P1.md).
    p1n : bool, optional
        Add P1n (exactly min(N, J) open nodes); default: on for P1, off for P1$ (whose
        dollars decide how many nodes pay).
    literal : bool
        P1 only: the paper's literal P1h/P1i instead of the corrected rows of formulations/P1.md
        (only to show the difference; the literal rows penalise running jobs that are already late).
    linearisation : {"product", "bigm"}
        P1 only: how π·α is linearised: "product" (default) adds β = α·x with rows P1jx/P1ja, a
        much tighter LP bound; "bigm" is formulations/P1.md's p ≥ Σ t·c·x − M̂(1 − α). On a quiet
        2-core machine at a 5 % gap, product solves N = 10, J = 100 in a third of big-M's time
        (formulations/P1.md), hence the default.
    allowed : (J, N, C) bool array, optional
        Only these x columns (with finite times) are built: a neighbourhood of a plan
        (`gpuaas.milp.polish`); default all.
    move_weight : float
        κ_j counted this many times (the objective's Σ κ_j and each stay column's −κ_j): the
        default method's weight on a move, for its polish; 1 (the default) is P1 / P1$.
    """
    if objective not in OBJECTIVES:
        raise InputError(
            None, "objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}"
        )
    if linearisation not in ("product", "bigm"):
        raise InputError(
            None, "linearisation", f"must be 'product' or 'bigm', got {linearisation!r}"
        )
    p1a = objective == "p1a"
    p1n = p1a if p1n is None else bool(p1n)
    b = Builder(instance)
    m: dict[str, Any] = {}
    m["w"] = define_w(b)
    m["y"] = define_y(b, objective)
    m["z"] = define_z(b)
    m["x"] = define_x(b, objective, allowed, move_weight)
    none = np.zeros((instance.n_jobs, instance.nodes), dtype=np.int64) - 1
    if p1a:
        m["alpha"] = define_alpha(b)
        m["p"] = define_p(b)
        m["tau"], m["tauhat"] = define_tau(b)
        m["beta"] = (
            define_beta(b, m["x"]) if linearisation == "product" else np.full(m["x"].shape, -1)
        )
        m["e"] = np.zeros(0, dtype=np.int64)
    else:
        m["alpha"], m["p"] = none, none.copy()
        m["tau"] = m["tauhat"] = np.zeros(0, dtype=np.int64)
        m["beta"] = np.full(m["x"].shape, -1)
        m["e"] = define_e(b)
    constrain_P1b(b, m)
    constrain_P1c(b, m)
    constrain_P1d(b, m)
    constrain_P1e(b, m)
    constrain_P1f(b, m)
    constrain_P1g(b, m)
    constrain_resources(b, m)
    constrain_quotas(b, m)
    if p1a:
        constrain_P1h(b, m, literal)
        constrain_P1i(b, m, literal)
        if linearisation == "product":
            constrain_P1j_product(b, m)
        else:
            constrain_P1j(b, m)
        constrain_P1k(b, m)
        constrain_P1l(b, m)
    constrain_P1m(b, m)
    if not p1a:
        constrain_unfilled(b, m)
        constrain_hosts(b, m)
    if p1n:
        constrain_P1n(b, m)
    lower = np.concatenate(b.lower).astype(np.float64) if b.lower else np.zeros(0)
    pinned = np.flatnonzero(instance.pinned)  # a disruption limit: x = 1 where they run now
    stay = m["x"][pinned, instance.current_node[pinned], instance.current_cfg[pinned]]
    lower[stay[stay >= 0]] = 1.0  # a column `allowed` left out: the validator refuses the move
    r = np.concatenate([t[0] for t in b.coo]) if b.coo else np.zeros(0, np.int64)
    c = np.concatenate([t[1] for t in b.coo]) if b.coo else np.zeros(0, np.int64)
    v = np.concatenate([t[2] for t in b.coo]) if b.coo else np.zeros(0)
    order = np.argsort(r, kind="stable")
    indptr = np.concatenate(([0], np.cumsum(np.bincount(r, minlength=b.n_rows)))).astype(np.int32)
    cc = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)
    offset = move_weight * float(reconfiguration_terms(instance)[0].sum())
    if not p1a:
        offset += float(dollar_terms(instance).wait.sum())
    return P1Model(
        instance=instance,
        objective=objective,
        p1n=p1n,
        literal=literal,
        linearisation=linearisation,
        col_lower=lower,
        col_upper=cc(b.upper, np.float64),
        col_cost=cc(b.cost, np.float64),
        col_integer=cc(b.integer, bool),
        col_parts=b.col_parts,
        row_lower=cc(b.row_lo, np.float64),
        row_upper=cc(b.row_hi, np.float64),
        row_parts=b.row_parts,
        indptr=indptr,
        indices=c[order].astype(np.int32),
        data=v[order].astype(np.float64),
        families=b.families,
        offset=offset,
        **m,
    )


def model_columns(
    instance: Instance, linearisation: str = "product", objective: str = "dollars"
) -> int:
    """The number of columns `build_model` makes, without building it."""
    J, N, V = instance.n_jobs, instance.nodes, instance.catalog.n_vms
    nx = int(np.isfinite(instance.times).sum()) * N
    if objective == "dollars":
        return 2 * N + N * V + J * N + nx
    return N + N * V + 3 * J * N + 2 * J + nx * (2 if linearisation == "product" else 1)


# -- solutions <-> column vectors ----------------------------------------------------------


def solution_columns(model: P1Model, solution: Solution) -> np.ndarray:
    """The column vector of the model that represents `solution` (P1: α on each node's
    first-ending job; P1$: e_n at its least value), used as a warm start. The solution must be
    feasible (see `gpuaas.validator.validate`)."""
    inst, cat = model.instance, model.instance.catalog
    x = np.zeros(model.n_cols)
    for n in np.flatnonzero(solution.node_vm >= 0):
        x[model.w[n]] = 1.0
        x[model.y[n, solution.node_vm[n]]] = 1.0
    first: dict[int, int] = {}
    for j in np.flatnonzero(solution.job_node >= 0):
        n, c = int(solution.job_node[j]), int(solution.job_cfg[j])
        x[model.z[j, n]] = 1.0
        x[model.x[j, n, c]] = 1.0
    if model.objective == "dollars":
        price = dollar_terms(inst).price
        run = np.flatnonzero(solution.job_node >= 0)
        paid = np.bincount(
            solution.job_node[run],
            weights=at(price, run, solution.job_cfg[run]),
            minlength=inst.nodes,
        )
        vm = np.maximum(solution.node_vm, 0)
        bill = np.where(solution.node_vm >= 0, cat.cost[vm], 0.0)
        x[model.e] = inst.H * np.maximum(0.0, bill - paid)
        return x
    for j in np.flatnonzero(solution.job_node >= 0):
        n, c = int(solution.job_node[j]), int(solution.job_cfg[j])
        if n not in first or inst.times[j, c] < inst.times[first[n], solution.job_cfg[first[n]]]:
            first[n] = int(j)
    for n, j in first.items():
        c = solution.job_cfg[j]
        x[model.alpha[j, n]] = 1.0
        x[model.p[j, n]] = inst.times[j, c] * cat.cost[cat.cfg_vm[c]]
        if model.beta[j, n, c] >= 0:
            x[model.beta[j, n, c]] = 1.0
    d = inst.rel_due
    runs = solution.job_cfg >= 0
    t = np.where(runs, inst.times[np.arange(inst.n_jobs), np.maximum(solution.job_cfg, 0)], 0.0)
    if model.literal:
        x[model.tau] = np.maximum(0.0, t - d)
        x[model.tauhat] = np.maximum(0.0, (inst.H + inst.max_time) * (~runs) - d)
    else:
        x[model.tau] = np.where(runs, np.maximum(0.0, t - d), 0.0)
        x[model.tauhat] = np.where(runs, 0.0, np.maximum(0.0, inst.H + inst.max_time - d))
    return x


def decode(model: P1Model, values: np.ndarray, method: str = "milp") -> Solution:
    """The Solution encoded by a column vector of P1 (binaries rounded at 0.5)."""
    inst = model.instance
    on = np.asarray(values) > 0.5
    node_vm = np.full(inst.nodes, -1, dtype=np.int64)
    n, v = np.nonzero(on[model.y])
    node_vm[n] = v
    job_node = np.full(inst.n_jobs, -1, dtype=np.int64)
    job_cfg = np.full(inst.n_jobs, -1, dtype=np.int64)
    exists = model.x >= 0
    j, n, c = np.nonzero(exists & on[np.where(exists, model.x, 0)])
    job_node[j], job_cfg[j] = n, c
    return Solution(inst, node_vm, job_node, job_cfg, method)
