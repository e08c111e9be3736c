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

import logging
import math
import threading
import time as _time
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np

from gpuaas.errors import InputError, SolverError
from gpuaas.instance import Instance
from gpuaas.solution import Solution

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
    col_names: list[str]
    row_lower: np.ndarray
    row_upper: np.ndarray
    row_names: list[str]
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
    col_names: list[str] = field(default_factory=list)
    n_cols: int = 0
    row_lo: list[np.ndarray] = field(default_factory=list)
    row_hi: list[np.ndarray] = field(default_factory=list)
    row_names: list[str] = field(default_factory=list)
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
        self.col_names.extend(names)
        self.n_cols += k
        return idx

    def rows(self, family: str, labels: list[str], lower: Any, upper: Any,
             r: np.ndarray, c: np.ndarray, v: np.ndarray) -> None:  # fmt: skip
        """Add a family of rows `lower <= A x <= upper`; (r, c, v) are COO entries with r local."""
        k = len(labels)
        self.row_lo.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (k,)).copy())
        self.row_hi.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (k,)).copy())
        self.row_names.extend(f"{family}_{lab}" if lab else family for lab in labels)
        r = np.asarray(r, dtype=np.int64)
        self.coo.append((r + self.n_rows, np.asarray(c, dtype=np.int64), np.asarray(v, dtype=np.float64)))
        self.families[family] = slice(self.n_rows, self.n_rows + k)
        self.n_rows += k


def _labels(**axes: np.ndarray) -> list[str]:
    """Row/column labels like `j3_n1_v2` from equally long index arrays."""
    keys = list(axes)
    cols = [np.asarray(axes[k]).tolist() for k in keys]
    return ["_".join(f"{k}{i}" for k, i in zip(keys, vals)) for vals in zip(*cols)]


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
    of the idle-GPU term of P1a)."""
    inst, cat = b.instance, b.instance.catalog
    n, v = _grid(inst.nodes, cat.n_vms)
    idx = b.cols(_labels_pref("y", n=n, v=v), inst.mu * cat.gpus[v], True, 1.0)
    return idx.reshape(inst.nodes, cat.n_vms)


def define_z(b: _Builder) -> np.ndarray:
    """z_jn ∈ {0,1} (P1q): job j runs on node n."""
    inst = b.instance
    j, n = _grid(inst.n_jobs, inst.nodes)
    return b.cols(_labels_pref("z", j=j, n=n), 0.0, True, 1.0).reshape(inst.n_jobs, inst.nodes)


def define_x(b: _Builder) -> np.ndarray:
    """x_jnvg ∈ {0,1} (P1s): job j runs on node n with VM type v and g GPUs — only for the
    configurations c = (v, g) with finite t_jvg. Objective −μ·g·x_jnvg (the used-GPU half of the
    idle-GPU term of P1a). Returns the (J, N, C) column map, -1 where no variable exists."""
    inst, cat = b.instance, b.instance.catalog
    J, N, C = inst.n_jobs, inst.nodes, cat.n_configs
    runnable = np.broadcast_to(np.isfinite(inst.times)[:, None, :], (J, N, C))
    j, n, c = np.nonzero(runnable)
    names = _labels_pref("x", j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c])
    idx = b.cols(names, -inst.mu * cat.cfg_gpus[c], True, 1.0)
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


def _labels_pref(prefix: str, **axes: np.ndarray) -> list[str]:
    return [f"{prefix}_{lab}" for lab in _labels(**axes)]


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
        col_names=b.col_names,
        row_lower=cc(b.row_lo, np.float64), row_upper=cc(b.row_hi, np.float64),
        row_names=b.row_names,
        indptr=indptr, indices=c[order].astype(np.int32), data=v[order].astype(np.float64),
        families=b.families, **m,
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


def to_highs(model: P1Model) -> highspy.Highs:
    """A highspy.Highs holding `model` (columns, CSR rows, integrality, names), output off."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    nc, nr = model.n_cols, model.n_rows
    h.addVars(nc, model.col_lower, model.col_upper)
    if nc:
        h.changeColsCost(nc, np.arange(nc, dtype=np.int32), model.col_cost)
        ints = np.flatnonzero(model.col_integer).astype(np.int32)
        h.changeColsIntegrality(len(ints), ints, np.full(len(ints), 1, dtype=np.uint8))
    h.addRows(nr, model.row_lower, model.row_upper, len(model.data), model.indptr[:-1],
              model.indices, model.data)  # fmt: skip
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
    """Solve `model` with HiGHS; return {status, values, bound, solver_objective}.

    status is "optimal", "time_limit" (stopped with an incumbent), "no_solution" (stopped
    without one) or "infeasible"; values is None without an incumbent.
    """
    h = to_highs(model)
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
    if h.run() == highspy.HighsStatus.kError:
        raise SolverError(f"HiGHS failed: {h.modelStatusToString(h.getModelStatus())}")
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
    return {
        "status": status,
        "values": values,
        "bound": float(info.mip_dual_bound),
        "solver_objective": float(info.objective_function_value) if values is not None else None,
        "solver_status": h.modelStatusToString(ms),
        "nodes": int(info.mip_node_count),
        "lp_iterations": int(info.simplex_iteration_count),
    }


# ------------------------------------------------------------------------------------------
# The method
# ------------------------------------------------------------------------------------------


def milp(instance: Instance, *, seed: int = 0, time_limit: float | None = None,
         gap: float | None = None, threads: int | None = None,
         warm_start: Solution | None = None, p1n: bool = True,
         solver: str = "highs", literal: bool = False, write_lp: str | None = None,
         write_mps: str | None = None, solver_log: bool = False,
         linearisation: str = "product") -> Solution:  # fmt: skip
    """Solve P1 exactly (or to a relative gap) with HiGHS, or another solver through PuLP.

    Parameters
    ----------
    instance : Instance
        The rescheduling point; every job is a candidate.
    seed : int
        Solver random seed.
    time_limit : float, optional
        Seconds for build + solve; the solver gets what building left.
    gap : float, optional
        Relative MIP gap at which to stop (HiGHS default 1e-4; 0 proves optimality).
    threads : int, optional
        Solver threads (HiGHS: see the module docstring on its per-process thread count).
    warm_start : Solution, optional
        A feasible Solution (e.g. Greedy's) handed to the solver as its first incumbent; one
        that violates the model (e.g. P1n) is ignored with a warning in `stats["warm_start"]`.
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
        With `stats`: status ("optimal" or "time_limit"), objective (f_OBJ of this Solution),
        bound (solver's best bound, or None), gap ((objective − bound) / objective), seconds,
        build_seconds, seed, solver, solver_objective, rows, columns.

    Raises
    ------
    SolverError
        When the solver stops without any solution (status "no_solution") or reports the
        model infeasible.
    """
    start = _time.perf_counter()
    if gap is not None and not (gap >= 0 and math.isfinite(gap)):
        raise InputError(None, "gap", f"must be a finite number >= 0, got {gap!r}")
    if threads is not None and (isinstance(threads, bool) or int(threads) < 1):
        raise InputError(None, "threads", f"must be a positive integer, got {threads!r}")
    if time_limit is not None and not time_limit > 0:
        raise InputError(None, "time_limit", f"must be > 0, got {time_limit!r}")
    model = build_model(instance, p1n=p1n, literal=literal, linearisation=linearisation)
    if write_lp:
        write_model(model, write_lp)
    if write_mps:
        write_model(model, write_mps)
    stats: dict[str, Any] = {}
    start_values = None
    if warm_start is not None:
        start_values = _warm_start_values(model, warm_start, stats)
    build = _time.perf_counter() - start
    left = None if time_limit is None else max(time_limit - build, 1e-3)
    kw: dict[str, Any] = {"time_limit": left, "gap": gap, "threads": threads, "seed": seed,
                          "warm_start": start_values, "solver_log": solver_log}  # fmt: skip
    if solver.lower() == "highs":
        res = solve_highs(model, **kw)
        solver_name = "highs"
    else:
        from gpuaas.pulp_solvers import solve_pulp

        res = solve_pulp(model, solver, **kw)
        solver_name = res["solver"]
    if res["status"] == "infeasible":
        raise SolverError(f"{solver_name} reports P1 infeasible (it always has a solution: a bug)")
    if res["values"] is None:
        limit = f" within the time limit of {time_limit:g} s" if time_limit is not None else ""
        raise SolverError(f"{solver_name} found no solution{limit} ({res['solver_status']})")
    sol = decode(model, res["values"])
    objective = sol.objective
    bound = res["bound"]
    if bound is not None and math.isfinite(bound):
        bound = min(bound, objective)
        gap_now = (objective - bound) / abs(objective) if objective != 0 else 0.0
    else:
        bound, gap_now = None, None
    stats.update(
        status=res["status"], objective=objective, bound=bound, gap=gap_now,
        solver=solver_name, solver_status=res["solver_status"],
        solver_objective=res["solver_objective"], rows=model.n_rows, columns=model.n_cols,
        p1n=p1n, build_seconds=build, seed=seed,
    )  # fmt: skip
    for k in ("nodes", "lp_iterations"):
        if k in res:
            stats[f"solver_{k}"] = res[k]
    stats["seconds"] = _time.perf_counter() - start
    sol.stats = stats
    log.info("milp %s: %s objective %.6g bound %s gap %s in %.2f s", solver_name, res["status"],
             objective, bound, gap_now, stats["seconds"])  # fmt: skip
    return sol


def _warm_start_values(model: P1Model, warm: Solution, stats: dict[str, Any]) -> np.ndarray | None:
    """Columns of a feasible warm start, or None (reason recorded in stats) if it does not fit."""
    from gpuaas.validator import validate

    if warm.instance is not model.instance and (
        warm.instance.job_ids != model.instance.job_ids or warm.instance.nodes != model.instance.nodes
    ):
        raise InputError(None, "warm_start", "solution is for a different instance")
    warm = Solution(model.instance, warm.node_vm, warm.job_node, warm.job_cfg, warm.method)
    report = validate(warm, p1n=model.p1n)
    if not report.ok:
        stats["warm_start"] = f"ignored: {report.errors[0]}"
        log.warning("milp: warm start from %s ignored: %s", warm.method or "solution", report.errors[0])
        return None
    stats["warm_start"] = warm.method or "solution"
    stats["warm_start_objective"] = warm.objective
    return solution_columns(model, warm)
