"""The P1 MILP (paper §3.1, DESIGN.md §4 and §6), built from Instance arrays and solved by HiGHS.

`build_model` calls one `define_*` function per variable family and one `constrain_P1*`
function per constraint family; each states its mathematics in its docstring and
`formulations/P1.md` lists the same families under the same names. Rows are named
`<family>_<index labels>` (e.g. `P1c_j3_n1_v2`): HiGHS's LP/MPS writers drop names that contain
`-`, so `_` separates the family from its indices. The matrix is one CSR block handed to highspy
(`addVars`, `addRows`, `changeColsIntegrality`); other solvers get the same model as MPS through
PuLP (`gpuaas.pulp_solvers`), never a second copy of the formulation. Whatever the solver
reports, the returned Solution's `stats["objective"]` is f_OBJ of the decoded Solution.

HiGHS fixes its thread count once per process (per calling thread): a later run with a
different `threads` fails. `solve_highs` therefore resets HiGHS's scheduler when a call asks
for a thread count other than the one this Python thread last used; do not run HiGHS in two
Python threads at once with different `threads` values (the reset is not thread-safe).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import math
import multiprocessing
import os
import sys
import threading
import time as _time
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np

from gpuaas.baselines.dispatch import heuristic_config, submission_order
from gpuaas.errors import InputError, SolverError
from gpuaas.instance import Instance
from gpuaas.limits import MAX_MILP_COLUMNS, MAX_SECONDS
from gpuaas.objective import reconfiguration_terms
from gpuaas.solution import Solution
from gpuaas.validator import validate

log = logging.getLogger(__name__)

INF = math.inf

# ------------------------------------------------------------------------------------------
# The model container and its builder
# ------------------------------------------------------------------------------------------


@dataclass(eq=False)
class P1Model:
    """P1 as arrays: columns (bounds, cost, integrality, names), rows as one CSR matrix, and the
    column indices of every variable family (-1 where a variable does not exist)."""

    instance: Instance
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
    offset: float = 0.0  # constant of the objective (Σ κ_j of the reconfiguration extension)

    @functools.cached_property
    def col_names(self) -> list[str]:
        """Column names (`x_j3_n1_v2_g1` ...), built on first use: only model files and other
        solvers need them, and building them costs more than building the model."""
        return [name for part in self.col_parts for name in _names(part)]

    @functools.cached_property
    def row_names(self) -> list[str]:
        """Row names (`P1c_j3_n1_v2` ...), built on first use."""
        return [f"{fam}_{lab}" if lab else fam for fam, labels in self.row_parts for lab in _names(labels)]

    @property
    def n_cols(self) -> int:
        return len(self.col_cost)

    @property
    def n_rows(self) -> int:
        return len(self.row_lower)

    def row(self, name: str) -> dict[int, float]:
        """Coefficients {column: value} of the row called `name` (for tests and diagnostics)."""
        r = self.row_names.index(name)
        lo, hi = self.indptr[r], self.indptr[r + 1]
        return {int(c): float(v) for c, v in zip(self.indices[lo:hi], self.data[lo:hi])}


@dataclass
class _Builder:
    """Accumulates columns and named row families (COO triplets) while the model is built."""

    instance: Instance
    lower: list[np.ndarray] = field(default_factory=list)
    upper: list[np.ndarray] = field(default_factory=list)
    cost: list[np.ndarray] = field(default_factory=list)
    integer: list[np.ndarray] = field(default_factory=list)
    col_parts: list[Any] = field(default_factory=list)
    n_cols: int = 0
    row_lo: list[np.ndarray] = field(default_factory=list)
    row_hi: list[np.ndarray] = field(default_factory=list)
    row_parts: list[tuple[str, Any]] = field(default_factory=list)
    coo: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    families: dict[str, slice] = field(default_factory=dict)
    n_rows: int = 0

    def cols(self, names: list[str], cost: Any, integer: bool, upper: float) -> np.ndarray:
        """Add len(names) columns with lower bound 0; return their indices."""
        k = len(names)
        idx = np.arange(self.n_cols, self.n_cols + k, dtype=np.int64)
        self.lower.append(np.zeros(k))
        self.upper.append(np.full(k, upper))
        self.cost.append(np.broadcast_to(np.asarray(cost, dtype=np.float64), (k,)).copy())
        self.integer.append(np.full(k, integer))
        self.col_parts.append(names)
        self.n_cols += k
        return idx

    def rows(self, family: str, labels: list[str], lower: Any, upper: Any,
             r: np.ndarray, c: np.ndarray, v: np.ndarray) -> None:  # fmt: skip
        """Add a family of rows `lower <= A x <= upper`; (r, c, v) are COO entries with r local."""
        k = len(labels)
        self.row_lo.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (k,)).copy())
        self.row_hi.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (k,)).copy())
        self.row_parts.append((family, labels))
        r = np.asarray(r, dtype=np.int64)
        self.coo.append((r + self.n_rows, np.asarray(c, dtype=np.int64), np.asarray(v, dtype=np.float64)))
        self.families[family] = slice(self.n_rows, self.n_rows + k)
        self.n_rows += k


@dataclass(frozen=True)
class _Labels:
    """Labels like `j3_n1_v2` (with a prefix: `x_j3_n1_v2`) of equally long index arrays, made
    into strings only when `_names` is called."""

    prefix: str | None
    axes: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(next(iter(self.axes.values()))) if self.axes else 0


def _labels(**axes: np.ndarray) -> _Labels:
    """Row/column labels like `j3_n1_v2` from equally long index arrays (lazy)."""
    return _Labels(None, axes)


def _names(labels: Any) -> list[str]:
    """The strings of a `_Labels` (or a list of strings, as it is)."""
    if not isinstance(labels, _Labels):
        return list(labels)
    keys = list(labels.axes)
    cols = [np.asarray(labels.axes[k]).tolist() for k in keys]
    out = ["_".join(f"{k}{i}" for k, i in zip(keys, vals)) for vals in zip(*cols)]
    return out if labels.prefix is None else [f"{labels.prefix}_{lab}" for lab in out]


def _grid(*shape: int) -> list[np.ndarray]:
    """Flattened index arrays of a full grid of the given shape (C order)."""
    return [a.ravel() for a in np.indices(shape)]


# -- variable families ---------------------------------------------------------------------


def define_w(b: _Builder) -> np.ndarray:
    """w_n ∈ {0,1} (P1o): node n is open. No objective term of its own."""
    (n,) = _grid(b.instance.nodes)
    return b.cols([f"w_n{i}" for i in n], 0.0, True, 1.0)


def define_y(b: _Builder) -> np.ndarray:
    """y_nv ∈ {0,1} (P1p): node n runs VM type v. Objective μ·G_v·y_nv (the available-GPU half
    of the idle-GPU term of P1a) + σ_nv (VM start-up unless n runs v now, P1's extension)."""
    inst, cat = b.instance, b.instance.catalog
    n, v = _grid(inst.nodes, cat.n_vms)
    _, sigma = reconfiguration_terms(inst)
    idx = b.cols(_labels_pref("y", n=n, v=v), inst.mu * cat.gpus[v] + sigma[n, v], True, 1.0)
    return idx.reshape(inst.nodes, cat.n_vms)


def define_z(b: _Builder) -> np.ndarray:
    """z_jn ∈ {0,1} (P1q): job j runs on node n."""
    inst = b.instance
    j, n = _grid(inst.n_jobs, inst.nodes)
    return b.cols(_labels_pref("z", j=j, n=n), 0.0, True, 1.0).reshape(inst.n_jobs, inst.nodes)


def define_x(b: _Builder) -> np.ndarray:
    """x_jnvg ∈ {0,1} (P1s): job j runs on node n with VM type v and g GPUs — only for the
    configurations c = (v, g) with finite t_jvg. Objective −μ·g·x_jnvg (the used-GPU half of the
    idle-GPU term of P1a), and −κ_j on the column of a running job's current node and
    configuration (with the constant Σ κ_j: κ_j is paid unless the job stays, P1's extension). Returns the (J, N, C) column map, -1 where no variable exists."""
    inst, cat = b.instance, b.instance.catalog
    J, N, C = inst.n_jobs, inst.nodes, cat.n_configs
    runnable = np.broadcast_to(np.isfinite(inst.times)[:, None, :], (J, N, C))
    j, n, c = np.nonzero(runnable)
    names = _labels_pref("x", j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c])
    kappa, _ = reconfiguration_terms(inst)
    stay = (inst.current_node[j] == n) & (inst.current_cfg[j] == c)
    idx = b.cols(names, -inst.mu * cat.cfg_gpus[c] - np.where(stay, kappa[j], 0.0), True, 1.0)
    xmap = np.full((J, N, C), -1, dtype=np.int64)
    xmap[j, n, c] = idx
    return xmap


def define_alpha(b: _Builder) -> np.ndarray:
    """α_jn ∈ {0,1} (P1q): job j is the job whose deployment cost node n is charged."""
    inst = b.instance
    j, n = _grid(inst.n_jobs, inst.nodes)
    return b.cols(_labels_pref("a", j=j, n=n), 0.0, True, 1.0).reshape(inst.n_jobs, inst.nodes)


def define_p(b: _Builder) -> np.ndarray:
    """p_jn ≥ 0 (P1q, replaces the bilinear π_jn·α_jn of P1a): objective Σ p_jn."""
    inst = b.instance
    j, n = _grid(inst.n_jobs, inst.nodes)
    return b.cols(_labels_pref("p", j=j, n=n), 1.0, False, INF).reshape(inst.n_jobs, inst.nodes)


def define_beta(b: _Builder, xmap: np.ndarray) -> np.ndarray:
    """β_jnvg ∈ [0, 1] (product linearisation only): β = α_jn·x_jnvg, job j is charged on node n
    and runs there with (v, g). Continuous: the rows of `constrain_P1j_product` make it exact.
    Returns the (J, N, C) column map, -1 where x does not exist."""
    j, n, c = np.nonzero(xmap >= 0)
    cat = b.instance.catalog
    idx = b.cols(_labels_pref("b", j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c]), 0.0, False, 1.0)
    bmap = np.full(xmap.shape, -1, dtype=np.int64)
    bmap[j, n, c] = idx
    return bmap


def define_tau(b: _Builder) -> tuple[np.ndarray, np.ndarray]:
    """τ_j ≥ 0, τ̂_j ≥ 0 (P1r): tardiness if run, worst-case tardiness if postponed.
    Objective ω_j·τ_j + ρ·ω_j·τ̂_j."""
    inst = b.instance
    (j,) = _grid(inst.n_jobs)
    tau = b.cols([f"tau_j{i}" for i in j], inst.weight, False, INF)
    tauhat = b.cols([f"tauhat_j{i}" for i in j], inst.rho * inst.weight, False, INF)
    return tau, tauhat


def _labels_pref(prefix: str, **axes: np.ndarray) -> _Labels:
    return _Labels(prefix, axes)


# -- constraint families -------------------------------------------------------------------


def constrain_P1b(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1b: Σ_v y_nv = w_n  ∀n — an open node has exactly one VM type, a closed one none."""
    N, V = m["y"].shape
    n, v = _grid(N, V)
    r = np.concatenate([n, np.arange(N)])
    c = np.concatenate([m["y"][n, v], m["w"]])
    val = np.concatenate([np.ones(N * V), -np.ones(N)])
    b.rows("P1b", [f"n{i}" for i in range(N)], 0.0, 0.0, r, c, val)


def _x_entries(m: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """(j, n, c, column) of every existing x variable."""
    j, n, c = np.nonzero(m["x"] >= 0)
    return j, n, c, m["x"][j, n, c]


def constrain_P1c(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1c, summed over g: Σ_g x_jnvg ≤ y_nv  ∀j, n, v (only where j can run on v).

    The paper's rows x_jnvg ≤ y_nv (one per g) have the same integer points, since at most one
    x_jn·· is 1 (P1e); the sum is G_v times fewer rows and a tighter LP relaxation.
    """
    cat = b.instance.catalog
    N, V = m["y"].shape
    j, n, c, col = _x_entries(m)
    v = cat.cfg_vm[c]
    keys, r = np.unique((j * N + n) * V + v, return_inverse=True)
    kj, rest = np.divmod(keys, N * V)
    kn, kv = np.divmod(rest, V)
    k = len(keys)
    rows = np.concatenate([r, np.arange(k)])
    cols = np.concatenate([col, m["y"][kn, kv]])
    vals = np.concatenate([np.ones(len(col)), -np.ones(k)])
    b.rows("P1c", _labels(j=kj, n=kn, v=kv), -INF, 0.0, rows, cols, vals)


def _per_job_node(m: dict[str, np.ndarray], other: np.ndarray, family: str, b: _Builder) -> None:
    """Σ_{v,g} x_jnvg − other[j, n] ≤ 0  ∀j, n."""
    J, N = m["z"].shape
    j, n, _, col = _x_entries(m)
    jj, nn = _grid(J, N)
    rows = np.concatenate([j * N + n, jj * N + nn])
    cols = np.concatenate([col, other[jj, nn]])
    vals = np.concatenate([np.ones(len(col)), -np.ones(J * N)])
    b.rows(family, _labels(j=jj, n=nn), -INF, 0.0, rows, cols, vals)


def constrain_P1d(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1d, summed over v and g: Σ_{v,g} x_jnvg ≤ z_jn  ∀j, n — a configuration on node n only
    for a job assigned to n (the paper's per-(v, g) rows x_jnvg ≤ z_jn, aggregated)."""
    _per_job_node(m, m["z"], "P1d", b)


def constrain_P1e(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1e: Σ_{v,g} x_jnvg ≤ w_n  ∀j, n — at most one configuration per job and node, none on a
    closed node (implied by P1c summed over v with P1b; kept as in the paper)."""
    J, N = m["z"].shape
    _per_job_node(m, np.broadcast_to(m["w"][None, :], (J, N)), "P1e", b)


def constrain_P1f(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1f: Σ_{n,v,g} x_jnvg = Σ_n z_jn  ∀j — an assigned job has exactly one configuration."""
    J, N = m["z"].shape
    j, _, _, col = _x_entries(m)
    jj, nn = _grid(J, N)
    rows = np.concatenate([j, jj])
    cols = np.concatenate([col, m["z"][jj, nn]])
    vals = np.concatenate([np.ones(len(col)), -np.ones(J * N)])
    b.rows("P1f", [f"j{i}" for i in range(J)], 0.0, 0.0, rows, cols, vals)


def constrain_P1g(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1g: Σ_{j,g} g·x_jnvg ≤ G_v·y_nv  ∀n, v — GPU capacity of node n's VM type.

    The paper's right-hand side is G_v; multiplying by y_nv is valid (x_jnvg = 1 needs
    y_nv = 1 by P1c) and tightens the LP relaxation.
    """
    cat = b.instance.catalog
    N, V = m["y"].shape
    _, n, c, col = _x_entries(m)
    nn, vv = _grid(N, V)
    rows = np.concatenate([n * V + cat.cfg_vm[c], nn * V + vv])
    cols = np.concatenate([col, m["y"][nn, vv]])
    vals = np.concatenate([cat.cfg_gpus[c].astype(np.float64), -cat.gpus[vv].astype(np.float64)])
    b.rows("P1g", _labels(n=nn, v=vv), -INF, 0.0, rows, cols, vals)


def constrain_P1h(b: _Builder, m: dict[str, np.ndarray], literal: bool = False) -> None:
    """P1h (corrected, DESIGN.md §4): τ_j ≥ Σ_{n,v,g} (t_jvg − d_j)·x_jnvg  ∀j.

    A postponed job gets τ_j = 0 whatever d_j. The paper's literal text
    Σ t_jvg·x_jnvg ≤ d_j + τ_j (`literal=True`) charges a postponed late job (d_j < 0) ω_j·|d_j|.
    """
    inst = b.instance
    J = inst.n_jobs
    j, _, c, col = _x_entries(m)
    t = inst.times[j, c]
    d = inst.rel_due
    coef = t if literal else t - d[j]
    rhs = d if literal else np.zeros(J)
    rows = np.concatenate([j, np.arange(J)])
    cols = np.concatenate([col, m["tau"]])
    vals = np.concatenate([coef, -np.ones(J)])
    b.rows("P1h", [f"j{i}" for i in range(J)], -INF, rhs, rows, cols, vals)


def constrain_P1i(b: _Builder, m: dict[str, np.ndarray], literal: bool = False) -> None:
    """P1i (corrected, DESIGN.md §4): τ̂_j ≥ (H + M_j − d_j)·(1 − Σ_n z_jn)  ∀j, written
    (H + M_j − d_j)·Σ_n z_jn + τ̂_j ≥ H + M_j − d_j.

    A job that runs gets τ̂_j = 0 whatever d_j. The literal text (H + M_j)(1 − Σ z) ≤ d_j + τ̂_j
    (`literal=True`) charges a running late job (d_j < 0) ρ·ω_j·|d_j|.
    """
    inst = b.instance
    J, N = m["z"].shape
    K = inst.H + inst.max_time - inst.rel_due
    coef = (inst.H + inst.max_time) if literal else K
    jj, nn = _grid(J, N)
    rows = np.concatenate([jj, np.arange(J)])
    cols = np.concatenate([m["z"][jj, nn], m["tauhat"]])
    vals = np.concatenate([coef[jj], np.ones(J)])
    b.rows("P1i", [f"j{i}" for i in range(J)], K, INF, rows, cols, vals)


def constrain_P1j(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1j linearised with α (DESIGN.md §4): p_jn ≥ Σ_{v,g} t_jvg·c_v·x_jnvg − M̂_j·(1 − α_jn)
    ∀j, n, with M̂_j = max_{v,g} t_jvg·c_v; written p_jn − Σ t·c·x − M̂_j·α_jn ≥ −M̂_j.

    p_jn is the deployment cost π_jn when α_jn = 1 and 0 otherwise, so Σ p = Σ π·α of P1a.
    """
    inst, cat = b.instance, b.instance.catalog
    J, N = m["z"].shape
    j, n, c, col = _x_entries(m)
    tc = inst.times[j, c] * cat.cost[cat.cfg_vm[c]]
    deploy = np.where(np.isfinite(inst.times), inst.times * cat.cost[cat.cfg_vm][None, :], -INF)
    mhat = deploy.max(axis=1) if J else np.zeros(0)
    jj, nn = _grid(J, N)
    rr = jj * N + nn
    rows = np.concatenate([j * N + n, rr, rr])
    cols = np.concatenate([col, m["p"][jj, nn], m["alpha"][jj, nn]])
    vals = np.concatenate([-tc, np.ones(J * N), -mhat[jj]])
    b.rows("P1j", _labels(j=jj, n=nn), -mhat[jj], INF, rows, cols, vals)


def constrain_P1j_product(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1j linearised without big-M (`linearisation="product"`): with β_jnvg = α_jn·x_jnvg,
    π_jn·α_jn = Σ_{v,g} t_jvg·c_v·β_jnvg exactly, through three row families:

    P1jx: β_jnvg ≤ x_jnvg  ∀j, n, (v, g);  P1ja: Σ_{v,g} β_jnvg = α_jn  ∀j, n;
    P1j:  p_jn = Σ_{v,g} t_jvg·c_v·β_jnvg  ∀j, n.

    Since at most one x_jn·· is 1, β is determined by α and x on integer points. With P1k the
    charge of node n is a convex combination of the t·c of its jobs, so the LP relaxation
    bounds the first-ending cost from below instead of dropping it, as the big-M rows let it.
    """
    inst, cat = b.instance, b.instance.catalog
    J, N = m["z"].shape
    j, n, c, col = _x_entries(m)
    beta = m["beta"][j, n, c]
    k = len(col)
    r = np.arange(k)
    b.rows("P1jx", _labels(j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c]), -INF, 0.0,
           np.concatenate([r, r]), np.concatenate([beta, col]),
           np.concatenate([np.ones(k), -np.ones(k)]))  # fmt: skip
    jj, nn = _grid(J, N)
    rr = jj * N + nn
    b.rows("P1ja", _labels(j=jj, n=nn), 0.0, 0.0, np.concatenate([j * N + n, rr]),
           np.concatenate([beta, m["alpha"][jj, nn]]), np.concatenate([np.ones(k), -np.ones(J * N)]))  # fmt: skip
    tc = inst.times[j, c] * cat.cost[cat.cfg_vm[c]]
    b.rows("P1j", _labels(j=jj, n=nn), 0.0, 0.0, np.concatenate([j * N + n, rr]),
           np.concatenate([beta, m["p"][jj, nn]]), np.concatenate([-tc, np.ones(J * N)]))  # fmt: skip


def constrain_P1k(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1k: Σ_j α_jn = w_n  ∀n — an open node is charged for exactly one job (so it hosts one)."""
    J, N = m["z"].shape
    jj, nn = _grid(J, N)
    rows = np.concatenate([nn, np.arange(N)])
    cols = np.concatenate([m["alpha"][jj, nn], m["w"]])
    vals = np.concatenate([np.ones(J * N), -np.ones(N)])
    b.rows("P1k", [f"n{i}" for i in range(N)], 0.0, 0.0, rows, cols, vals)


def constrain_P1l(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1l: α_jn ≤ z_jn  ∀j, n — the charged job runs on that node."""
    J, N = m["z"].shape
    jj, nn = _grid(J, N)
    r = np.arange(J * N)
    rows = np.concatenate([r, r])
    cols = np.concatenate([m["alpha"][jj, nn], m["z"][jj, nn]])
    vals = np.concatenate([np.ones(J * N), -np.ones(J * N)])
    b.rows("P1l", _labels(j=jj, n=nn), -INF, 0.0, rows, cols, vals)


def constrain_P1m(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1m: Σ_n z_jn ≤ 1  ∀j — a job runs on at most one node."""
    J, N = m["z"].shape
    jj, nn = _grid(J, N)
    b.rows("P1m", [f"j{i}" for i in range(J)], -INF, 1.0, jj, m["z"][jj, nn], np.ones(J * N))


def constrain_P1n(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1n (optional, on by default): Σ_n w_n = min(N, J) — open as many nodes as can be used."""
    J, N = m["z"].shape
    k = float(min(N, J))
    b.rows("P1n", [""], k, k, np.zeros(N), m["w"], np.ones(N))


def build_model(instance: Instance, *, p1n: bool = True, literal: bool = False,
                linearisation: str = "product") -> P1Model:  # fmt: skip
    """Build P1 for `instance`: one define_* per variable family, one constrain_P1* per row family.

    Parameters
    ----------
    instance : Instance
        The rescheduling point (all its jobs are candidates).
    p1n : bool
        Add P1n (exactly min(N, J) open nodes), as in the paper.
    literal : bool
        Use the paper's literal P1h/P1i instead of the corrected rows of DESIGN.md §4 (only to
        show the difference; the literal rows penalise running jobs that are already late).
    linearisation : {"product", "bigm"}
        How π·α is linearised: "product" (default) adds β = α·x with rows P1jx/P1ja, a much
        tighter LP bound; "bigm" is DESIGN.md §4's p ≥ Σ t·c·x − M̂(1 − α). On a quiet 2-core
        machine at a 5 % gap, product solves N = 10, J = 100 in a third of big-M's time
        (formulations/P1.md), hence the default.
    """
    if linearisation not in ("product", "bigm"):
        raise InputError(None, "linearisation", f"must be 'product' or 'bigm', got {linearisation!r}")
    b = _Builder(instance)
    m: dict[str, Any] = {}
    m["w"] = define_w(b)
    m["y"] = define_y(b)
    m["z"] = define_z(b)
    m["x"] = define_x(b)
    m["alpha"] = define_alpha(b)
    m["p"] = define_p(b)
    m["tau"], m["tauhat"] = define_tau(b)
    m["beta"] = define_beta(b, m["x"]) if linearisation == "product" else np.full(m["x"].shape, -1)
    constrain_P1b(b, m)
    constrain_P1c(b, m)
    constrain_P1d(b, m)
    constrain_P1e(b, m)
    constrain_P1f(b, m)
    constrain_P1g(b, m)
    constrain_P1h(b, m, literal)
    constrain_P1i(b, m, literal)
    if linearisation == "product":
        constrain_P1j_product(b, m)
    else:
        constrain_P1j(b, m)
    constrain_P1k(b, m)
    constrain_P1l(b, m)
    constrain_P1m(b, m)
    if p1n:
        constrain_P1n(b, m)
    r = np.concatenate([t[0] for t in b.coo]) if b.coo else np.zeros(0, np.int64)
    c = np.concatenate([t[1] for t in b.coo]) if b.coo else np.zeros(0, np.int64)
    v = np.concatenate([t[2] for t in b.coo]) if b.coo else np.zeros(0)
    order = np.argsort(r, kind="stable")
    indptr = np.concatenate(([0], np.cumsum(np.bincount(r, minlength=b.n_rows)))).astype(np.int32)
    cc = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)
    return P1Model(
        instance=instance, p1n=p1n, literal=literal, linearisation=linearisation,
        col_lower=cc(b.lower, np.float64), col_upper=cc(b.upper, np.float64),
        col_cost=cc(b.cost, np.float64), col_integer=cc(b.integer, bool),
        col_parts=b.col_parts,
        row_lower=cc(b.row_lo, np.float64), row_upper=cc(b.row_hi, np.float64),
        row_parts=b.row_parts,
        indptr=indptr, indices=c[order].astype(np.int32), data=v[order].astype(np.float64),
        families=b.families, offset=float(reconfiguration_terms(instance)[0].sum()), **m,
    )  # fmt: skip


# ------------------------------------------------------------------------------------------
# Solutions <-> column vectors
# ------------------------------------------------------------------------------------------


def solution_columns(model: P1Model, solution: Solution) -> np.ndarray:
    """The column vector of P1 that represents `solution` (α on each node's first-ending job),
    used as a warm start. The solution must be feasible (see `gpuaas.validator.validate`)."""
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


# ------------------------------------------------------------------------------------------
# HiGHS
# ------------------------------------------------------------------------------------------

_scheduler_threads: dict[int, int] = {}  # Python thread id -> HiGHS thread count it initialised


def _set_threads(h: highspy.Highs, threads: int | None) -> None:
    """Use `threads` HiGHS threads, resetting the scheduler HiGHS fixes on its first run."""
    if threads is None:
        return  # 0: whatever this thread's scheduler already uses (HiGHS's default on first run)
    me = threading.get_ident()
    if _scheduler_threads.get(me) != threads:
        highspy.Highs.resetGlobalScheduler(True)
        _scheduler_threads[me] = threads
    h.setOptionValue("threads", int(threads))


_banner_lock = threading.Lock()
_banner_shown = False


def new_highs() -> highspy.Highs:
    """An empty highspy.Highs with output off.

    highspy prints a banner on the process's C-level stdout when the first Highs is made,
    before any option can turn output off; it would corrupt `--json` output, so that first
    construction runs with file descriptor 1 pointed at the null device.
    """
    global _banner_shown
    with _banner_lock:
        if not _banner_shown:
            sys.stdout.flush()
            saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            try:
                h = highspy.Highs()
                try:  # the banner may sit in C stdio's buffer
                    ctypes.CDLL(None).fflush(None)
                except (OSError, AttributeError, TypeError):
                    pass
            finally:
                os.dup2(saved, 1)
                os.close(saved)
                os.close(null)
            _banner_shown = True
        else:
            h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def to_highs(model: P1Model, names: bool = True) -> highspy.Highs:
    """A highspy.Highs holding `model` (columns, CSR rows, integrality and, if `names`, the
    names), output off."""
    h = new_highs()
    nc, nr = model.n_cols, model.n_rows
    h.addVars(nc, model.col_lower, model.col_upper)
    if nc:
        h.changeColsCost(nc, np.arange(nc, dtype=np.int32), model.col_cost)
        ints = np.flatnonzero(model.col_integer).astype(np.int32)
        h.changeColsIntegrality(len(ints), ints, np.full(len(ints), 1, dtype=np.uint8))
    h.addRows(nr, model.row_lower, model.row_upper, len(model.data), model.indptr[:-1],
              model.indices, model.data)  # fmt: skip
    if model.offset:
        h.changeObjectiveOffset(model.offset)
    if names:
        for i, name in enumerate(model.col_names):
            h.passColName(i, name)
        for i, name in enumerate(model.row_names):
            h.passRowName(i, name)
    return h


def write_model(model: P1Model, path: str) -> None:
    """Write the model as LP or MPS (by the file's extension, HiGHS's writer), through
    `gpuaas.files.write_atomic` (HiGHS writes a temporary file that is then copied)."""
    import os
    import tempfile

    from gpuaas.files import write_atomic

    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".lp", ".mps"):
        raise InputError(str(path), None, "model file must end in .lp or .mps")
    with tempfile.TemporaryDirectory(prefix="gpuaas-model-") as tmp:
        out = os.path.join(tmp, f"p1{ext}")
        status = to_highs(model).writeModel(out)
        if status == highspy.HighsStatus.kError or not os.path.exists(out):
            raise SolverError(f"HiGHS could not write {path}")
        with open(out, "rb") as fh:
            write_atomic(path, fh.read())


def solve_highs(model: P1Model, *, time_limit: float | None = None, gap: float | None = None,
                threads: int | None = None, seed: int = 0, warm_start: np.ndarray | None = None,
                solver_log: bool = False) -> dict[str, Any]:  # fmt: skip
    """Solve `model` with HiGHS; return {status, values, bound, solver_objective, consistent, ...}.

    status is "optimal", "time_limit" (stopped with an incumbent), "no_solution" (stopped
    without one) or "infeasible"; values is None without an incumbent. consistent is False
    when the objective of the returned values is not the one HiGHS reports (HiGHS 1.16 can
    return a MIP start as "optimal" with the objective of its presolved space).

    With a time limit, HiGHS runs in a forked child process that is killed at the limit:
    HiGHS checks its time limit only between the steps of its presolve and MIP setup, which
    take several seconds each on N = 20, J = 100 (measured: a 5 s limit stopped after 13-38 s).
    The child reports every improving solution and, periodically, the dual bound, so a killed
    run still returns its incumbent. Without `fork` (not Linux or macOS), or in a daemonic
    process (which may not have children, e.g. some cluster workers), HiGHS runs here.
    """
    if time_limit is None or "fork" not in multiprocessing.get_all_start_methods() \
            or multiprocessing.current_process().daemon:
        h = _prepared(model, time_limit, gap, threads, seed, warm_start, solver_log)
        if h.run() == highspy.HighsStatus.kError:
            raise SolverError(f"HiGHS failed: {h.modelStatusToString(h.getModelStatus())}")
        return _result(model, h)
    return _solve_in_child(model, float(time_limit), gap, threads, seed, warm_start, solver_log)


def _prepared(model: P1Model, time_limit: float | None, gap: float | None, threads: int | None,
              seed: int, warm_start: np.ndarray | None, solver_log: bool) -> highspy.Highs:  # fmt: skip
    h = to_highs(model, names=False)
    h.setOptionValue("output_flag", bool(solver_log))
    h.setOptionValue("random_seed", int(seed) % 2147483647)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    if gap is not None:
        h.setOptionValue("mip_rel_gap", float(gap))
    _set_threads(h, threads)
    if warm_start is not None:
        idx = np.arange(model.n_cols, dtype=np.int32)
        h.setSolution(model.n_cols, idx, np.asarray(warm_start, dtype=np.float64))
    return h


def _result(model: P1Model, h: highspy.Highs) -> dict[str, Any]:
    """The result dict of a finished HiGHS run."""
    ms = h.getModelStatus()
    info = h.getInfo()
    has = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    if ms == highspy.HighsModelStatus.kInfeasible:
        status = "infeasible"
    elif ms == highspy.HighsModelStatus.kOptimal:
        status = "optimal"
    elif has:
        status = "time_limit"
    else:
        status = "no_solution"
    values = np.array(h.getSolution().col_value) if has and status != "infeasible" else None
    return _checked(model, {
        "status": status,
        "values": values,
        "bound": float(info.mip_dual_bound),
        "solver_objective": float(info.objective_function_value) if values is not None else None,
        "solver_status": h.modelStatusToString(ms),
        "nodes": int(info.mip_node_count),
        "lp_iterations": int(info.simplex_iteration_count),
    })  # fmt: skip


def _checked(model: P1Model, res: dict[str, Any]) -> dict[str, Any]:
    """Add `consistent`: the values have the objective HiGHS reports for them."""
    res["consistent"] = True
    if res["values"] is not None and res["solver_objective"] is not None:
        mine, theirs = float(model.col_cost @ res["values"]) + model.offset, float(res["solver_objective"])
        res["consistent"] = abs(mine - theirs) <= 1e-6 * max(1.0, abs(mine), abs(theirs))
    return res


def _solve_in_child(model: P1Model, time_limit: float, gap: float | None, threads: int | None,
                    seed: int, warm_start: np.ndarray | None, solver_log: bool) -> dict[str, Any]:  # fmt: skip
    """solve_highs in a forked process, killed `time_limit` seconds from now (see there)."""
    stop = _time.monotonic() + time_limit
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    args = (send, model, time_limit, gap, threads, seed, warm_start, solver_log)
    proc = ctx.Process(target=_child, args=args, daemon=True, name="gpuaas-highs")
    incumbent: tuple[np.ndarray, float] | None = None
    bound = -INF
    done: dict[str, Any] | None = None
    error = None
    try:
        proc.start()
        send.close()
        while done is None and error is None:
            wait = stop - _time.monotonic()
            if wait <= 0 or not receive.poll(wait):
                break
            try:
                kind, *data = receive.recv()
            except EOFError:  # the child died
                error = f"the HiGHS process ended with code {proc.exitcode}"
                break
            if kind == "incumbent":
                incumbent = (data[0], data[1])
                bound = max(bound, data[2])
            elif kind == "bound":
                bound = max(bound, data[0])
            elif kind == "done":
                done = data[0]
            else:
                error = data[0]
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        receive.close()
    if done is not None:
        return done
    if error is not None and incumbent is None:
        raise SolverError(f"HiGHS failed: {error}")
    values, objective = incumbent if incumbent is not None else (None, None)
    return _checked(model, {
        "status": "time_limit" if values is not None else "no_solution",
        "values": values, "bound": bound, "solver_objective": objective,
        "solver_status": "Time limit reached", "killed": True, "nodes": None, "lp_iterations": None,
    })  # fmt: skip


def _child(send: Any, model: P1Model, time_limit: float, gap: float | None, threads: int | None,
           seed: int, warm_start: np.ndarray | None, solver_log: bool) -> None:  # pragma: no cover - child
    """The forked HiGHS run: improving solutions and bounds go to the parent as they come."""
    try:
        highspy.Highs.resetGlobalScheduler(True)  # the parent's HiGHS worker threads are not here
        _scheduler_threads.clear()
        h = _prepared(model, time_limit, gap, threads, seed, warm_start, solver_log)
        last = [0.0]

        def improving(e: Any) -> None:
            d = e.data_out
            send.send(("incumbent", np.array(d.mip_solution), float(d.objective_function_value),
                       float(d.mip_dual_bound)))  # fmt: skip

        def progress(e: Any) -> None:
            now = _time.monotonic()
            if now - last[0] > 0.1:
                last[0] = now
                send.send(("bound", float(e.data_out.mip_dual_bound)))

        h.cbMipImprovingSolution.subscribe(improving)
        h.cbMipInterrupt.subscribe(progress)
        if h.run() == highspy.HighsStatus.kError:
            send.send(("error", f"HiGHS failed: {h.modelStatusToString(h.getModelStatus())}"))
        else:
            send.send(("done", _result(model, h)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        try:
            send.send(("error", repr(exc)))
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(0)


# ------------------------------------------------------------------------------------------
# The method
# ------------------------------------------------------------------------------------------


#: A solver stop at a relative gap at most this (HiGHS's default mip_rel_gap) is "optimal";
#: above it, a stop at the requested gap is "gap_reached".
OPTIMAL_GAP = 1e-4
#: Share of the time limit a warm-start method named by `warm_start` may use (path relinking
#: and randomized greedy stop there; greedy is one quick pass).
WARM_SHARE = 0.25
#: Seconds kept, out of the time limit, for decoding and checking the solver's answer.
RESERVE = 0.05


def milp(instance: Instance, *, seed: int = 0, time_limit: float | None = None,
         gap: float | None = None, threads: int | None = None,
         warm_start: Solution | str | None = "greedy", p1n: bool = True,
         solver: str = "highs", literal: bool = False, write_lp: str | None = None,
         write_mps: str | None = None, solver_log: bool = False,
         linearisation: str = "product") -> Solution:  # fmt: skip
    """Solve P1 exactly (or to a relative gap) with HiGHS, or another solver through PuLP.

    Everything happens within `time_limit`: the warm start, the model build (timed), then the
    solver, which gets what is left (less `RESERVE` for checking its answer). The solver's
    answer is decoded and checked by the independent validator; when it has none in time, or
    one that is not feasible (numerical trouble), the warm start is returned instead (status
    "warm_start"), so with a warm start (the default) there is always a solution.

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
        The first incumbent handed to the solver: a method name (default "greedy"; run here,
        with at most `WARM_SHARE` of the time limit), a feasible Solution, or None for no warm
        start. With P1n, the warm start is repaired to open min(N, J) nodes
        (`p1n_warm_start`); one that is still infeasible is ignored (`stats["warm_start"]`).
    p1n : bool
        Require exactly min(N, J) open nodes (P1n), as in the paper.
    solver : str
        "highs" (highspy, default), "cbc" or any PuLP solver name (model passed as MPS).
    literal : bool
        Use the paper's literal P1h/P1i (for comparison only; see DESIGN.md §4).
    write_lp, write_mps : str, optional
        Also write the model to this LP / MPS file.
    solver_log : bool
        Show the solver's own log on stdout.
    linearisation : {"product", "bigm"}
        How the first-ending-job cost π·α is linearised (see `build_model`).

    Returns
    -------
    Solution
        With `stats`: status ("optimal": proven within `OPTIMAL_GAP`; "gap_reached": stopped
        at the requested `gap`; "time_limit": stopped by the time limit with an incumbent;
        "warm_start": the solver had nothing usable, the warm start is returned), objective
        (f_OBJ of this Solution), bound (solver's best bound, or None), gap
        ((objective − bound) / objective), seconds, build_seconds, seed, solver,
        solver_status, solver_objective, rows, columns, warm_start.

    Raises
    ------
    SolverError
        When there is no warm start and the solver stops without a usable solution (the CLI
        exits with code 3), or reports the model infeasible.
    """
    start = _time.perf_counter()
    if gap is not None and (isinstance(gap, bool) or not isinstance(gap, (int, float))
                            or not (gap >= 0 and math.isfinite(gap))):  # fmt: skip
        raise InputError(None, "gap", f"must be a finite number >= 0, got {gap!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256):
        raise InputError(None, "threads", f"must be an integer in 1..256, got {threads!r}")
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float))
                                   or not 0 < time_limit <= MAX_SECONDS):  # fmt: skip
        raise InputError(None, "time_limit", f"must be a number of seconds in (0, {MAX_SECONDS:g}], got {time_limit!r}")
    if not isinstance(solver, str):
        raise InputError(None, "solver", f"must be a solver name, got {solver!r}")
    columns = model_columns(instance, linearisation)
    if columns > MAX_MILP_COLUMNS:
        raise InputError(None, "instance", f"P1 would have {columns} columns for N = {instance.nodes}, "
                         f"J = {instance.n_jobs}; the MILP takes at most {MAX_MILP_COLUMNS} "
                         "(gpuaas.limits); use a heuristic method")  # fmt: skip
    deadline = None if time_limit is None else start + float(time_limit)
    stats: dict[str, Any] = {}
    warm = _warm_start(instance, warm_start, seed, time_limit, p1n, stats)
    model = build_model(instance, p1n=p1n, literal=literal, linearisation=linearisation)
    if write_lp:
        write_model(model, write_lp)
    if write_mps:
        write_model(model, write_mps)
    start_values = None if warm is None else solution_columns(model, warm)
    build = _time.perf_counter() - start
    left = None if deadline is None else deadline - _time.perf_counter() - RESERVE * float(time_limit)
    stats.update(rows=model.n_rows, columns=model.n_cols, p1n=p1n, build_seconds=build, seed=seed)
    if left is not None and left <= 0 and warm is not None:
        return _finish(warm, "warm_start", None, start, stats, "no time left for the solver")
    kw: dict[str, Any] = {"time_limit": None if left is None else max(left, 1e-3), "gap": gap,
                          "threads": threads, "seed": seed, "warm_start": start_values,
                          "solver_log": solver_log}  # fmt: skip
    if solver.lower() == "highs":
        res = solve_highs(model, **kw)
        solver_name = "highs"
        if not res["consistent"] and start_values is not None:
            log.warning("milp: HiGHS answered inconsistently with the warm start; solving again without it")
            stats["retried_without_warm_start"] = True
            left = None if deadline is None else deadline - _time.perf_counter() - RESERVE * float(time_limit)
            if left is None or left > 0:
                res = solve_highs(model, **dict(kw, warm_start=None, time_limit=left))
    else:
        from gpuaas.pulp_solvers import solve_pulp

        res = solve_pulp(model, solver, **kw)
        solver_name = res["solver"]
    stats.update(solver=solver_name, solver_status=res["solver_status"],
                 solver_objective=res["solver_objective"])  # fmt: skip
    for k in ("nodes", "lp_iterations", "killed"):
        if res.get(k) is not None:
            stats[f"solver_{k}"] = res[k]
    if res["status"] == "infeasible":
        raise SolverError(f"{solver_name} reports P1 infeasible (it always has a solution: a bug)")
    problem = None
    if res["values"] is None:
        problem = ("no solution" if warm is None else "nothing better than the warm start") + \
            (" within the time limit" if time_limit is not None else "")
    elif not res.get("consistent", True):
        problem = "its answer is inconsistent (the objective of its solution is not the one it reports)"
    else:
        sol = decode(model, res["values"])
        report = validate(sol, p1n=p1n)
        if not report.ok:
            problem = f"its solution is not feasible ({report.errors[0]})"
            log.warning("milp: %s returned an infeasible solution: %s", solver_name, report.errors[0])
    if problem is not None:
        if warm is None:
            limit = f" within the time limit of {time_limit:g} s" if time_limit is not None else ""
            what = f"found no solution{limit}" if res["values"] is None else f"failed: {problem}"
            raise SolverError(f"{solver_name} {what} and there is no warm start")
        return _finish(warm, "warm_start", res["bound"], start, stats, f"{solver_name}: {problem}")
    status = res["status"]
    if status == "optimal" and gap is not None and gap > OPTIMAL_GAP:
        status = "gap_reached"  # HiGHS says optimal when it reaches the requested gap
    return _finish(sol, status, res["bound"], start, stats, None)


def _finish(sol: Solution, status: str, bound: float | None, start: float, stats: dict[str, Any],
            fallback: str | None) -> Solution:  # fmt: skip
    """The returned Solution with its stats: f_OBJ, bound and gap, status, seconds."""
    objective = sol.objective
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
    log.info("milp: %s objective %.6g bound %s gap %s in %.2f s", status, objective, bound,
             gap_now, stats["seconds"])  # fmt: skip
    return out


def model_columns(instance: Instance, linearisation: str = "product") -> int:
    """The number of columns `build_model` makes, without building it."""
    J, N, V = instance.n_jobs, instance.nodes, instance.catalog.n_vms
    nx = int(np.isfinite(instance.times).sum()) * N
    return N + N * V + 3 * J * N + 2 * J + nx * (2 if linearisation == "product" else 1)


def _warm_start(instance: Instance, warm: Solution | str | None, seed: int, time_limit: float | None,
                p1n: bool, stats: dict[str, Any]) -> Solution | None:  # fmt: skip
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
        raise InputError(None, "warm_start", f"must be a method name, a Solution or None, got {warm!r}")
    if warm.instance is not instance and (
        warm.instance.job_ids != instance.job_ids or warm.instance.nodes != instance.nodes
    ):
        raise InputError(None, "warm_start", "solution is for a different instance")
    warm = Solution(instance, warm.node_vm, warm.job_node, warm.job_cfg, warm.method)
    report = validate(warm)
    if report.ok and p1n:
        warm = p1n_warm_start(warm)
        report = validate(warm, p1n=True)
    if not report.ok:
        stats["warm_start"] = f"ignored: {report.errors[0]}"
        log.warning("milp: warm start from %s ignored: %s", warm.method or "solution", report.errors[0])
        return None
    stats["warm_start"] = warm.method or "solution"
    stats["warm_start_objective"] = warm.objective
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
