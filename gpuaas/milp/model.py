"""P1 as arrays (paper §3.1, formulations/P1.md) and P1$, the same placement in dollars
(formulations/P1D.md): their variables, their rows and the map between columns and a Solution.

The two problems share the placement (w, y, z, x and rows P1b-P1g, P1m); P1a adds α, p, τ, τ̂
(and β) with rows P1h-P1l, P1$ the unfilled price e_n of each node with rows `unfilled` and
`hosts`. `build_model(instance, objective=...)` builds either.

`build_model` calls one `define_*` function per variable family and one `constrain_P1*`
function per constraint family; each states its mathematics in its docstring and
`formulations/P1.md` lists the same families under the same names. Rows are named
`<family>_<index labels>` (e.g. `P1c_j3_n1_v2`): HiGHS's LP/MPS writers drop names that contain
`-`, so `_` separates the family from its indices. The matrix is one CSR block that a backend
hands to its solver (`gpuaas.milp.highs`, `gpuaas.milp.pulp_solvers`); there is no second copy
of the formulation.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.objective import OBJECTIVES, dollar_terms
from gpuaas.reconfiguration import reconfiguration_terms
from gpuaas.solution import Solution

INF = math.inf


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
        return [name for part in self.col_parts for name in _names(part)]

    @functools.cached_property
    def row_names(self) -> list[str]:
        """Row names (`P1c_j3_n1_v2` ...), built on first use."""
        return [
            f"{fam}_{lab}" if lab else fam
            for fam, labels in self.row_parts
            for lab in _names(labels)
        ]

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

    def rows(
        self,
        family: str,
        labels: list[str],
        lower: Any,
        upper: Any,
        r: np.ndarray,
        c: np.ndarray,
        v: np.ndarray,
    ) -> None:
        """Add a family of rows `lower <= A x <= upper`; (r, c, v) are COO entries with r local."""
        k = len(labels)
        self.row_lo.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (k,)).copy())
        self.row_hi.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (k,)).copy())
        self.row_parts.append((family, labels))
        r = np.asarray(r, dtype=np.int64)
        self.coo.append(
            (r + self.n_rows, np.asarray(c, dtype=np.int64), np.asarray(v, dtype=np.float64))
        )
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


def define_y(b: _Builder, objective: str = "p1a") -> np.ndarray:
    """y_nv ∈ {0,1} (P1p): node n runs VM type v. Objective σ_nv (VM start-up unless n runs v
    now, P1's extension) and, in P1a, μ·G_v·y_nv (the available-GPU half of the idle-GPU term;
    P1$ prices idle GPUs through e_n)."""
    inst, cat = b.instance, b.instance.catalog
    n, v = _grid(inst.nodes, cat.n_vms)
    _, sigma = reconfiguration_terms(inst)
    cost = sigma[n, v] + (inst.mu * cat.gpus[v] if objective == "p1a" else 0.0)
    idx = b.cols(_labels_pref("y", n=n, v=v), cost, True, 1.0)
    return idx.reshape(inst.nodes, cat.n_vms)


def define_z(b: _Builder) -> np.ndarray:
    """z_jn ∈ {0,1} (P1q): job j runs on node n."""
    inst = b.instance
    j, n = _grid(inst.n_jobs, inst.nodes)
    return b.cols(_labels_pref("z", j=j, n=n), 0.0, True, 1.0).reshape(inst.n_jobs, inst.nodes)


def define_x(
    b: _Builder,
    objective: str = "p1a",
    allowed: np.ndarray | None = None,
    move_weight: float = 1.0,
) -> np.ndarray:
    """x_jnvg ∈ {0,1} (P1s): job j runs on node n with VM type v and g GPUs — only for the
    configurations c = (v, g) with finite t_jvg. Objective −κ_j on the column of a running
    job's current node and configuration (with the constant Σ κ_j: κ_j is paid unless the job
    stays, P1's extension), and in P1a −μ·g·x_jnvg (the used-GPU half of the idle-GPU term),
    in P1$ run_jc − wait_j (with the constant Σ wait_j: a job pays its run value when it runs,
    its waiting value otherwise). `allowed` (J, N, C), if given, leaves out the other columns (a
    neighbourhood, `gpuaas.milp.polish`). κ_j is counted `move_weight` times. Returns the
    (J, N, C) column map, -1 where no variable exists."""
    inst, cat = b.instance, b.instance.catalog
    J, N, C = inst.n_jobs, inst.nodes, cat.n_configs
    runnable = np.broadcast_to(np.isfinite(inst.times)[:, None, :], (J, N, C))
    if allowed is not None:
        runnable = runnable & allowed
    j, n, c = np.nonzero(runnable)
    names = _labels_pref("x", j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c])
    kappa, _ = reconfiguration_terms(inst)
    stay = (inst.current_node[j] == n) & (inst.current_cfg[j] == c)
    if objective == "p1a":
        cost = -inst.mu * cat.cfg_gpus[c]
    else:
        terms = dollar_terms(inst)
        cost = terms.run[j, c] - terms.wait[j]
    idx = b.cols(names, cost - np.where(stay, move_weight * kappa[j], 0.0), True, 1.0)
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


def define_e(b: _Builder) -> np.ndarray:
    """e_n ≥ 0 (P1$): the $ node n's VM costs over H beyond what its jobs pay at the fill price
    (row `unfilled`). Objective e_n."""
    (n,) = _grid(b.instance.nodes)
    return b.cols([f"e_n{i}" for i in n], 1.0, False, INF)


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


def _one_per_open_node(
    b: _Builder, family: str, n: np.ndarray, cols: np.ndarray, w: np.ndarray
) -> None:
    """Rows Σ cols[n] = w_n ∀n (entries: node n[i] sums column cols[i]): an open node has
    exactly one of them, a closed one none."""
    N = len(w)
    b.rows(
        family,
        [f"n{i}" for i in range(N)],
        0.0,
        0.0,
        np.concatenate([n, np.arange(N)]),
        np.concatenate([cols, w]),
        np.concatenate([np.ones(len(n)), -np.ones(N)]),
    )


def constrain_P1b(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1b: Σ_v y_nv = w_n  ∀n — an open node has exactly one VM type, a closed one none."""
    n, v = _grid(*m["y"].shape)
    _one_per_open_node(b, "P1b", n, m["y"][n, v], m["w"])


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
    """P1h (corrected, formulations/P1.md): τ_j ≥ Σ_{n,v,g} (t_jvg − d_j)·x_jnvg  ∀j.

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
    """P1i (corrected, formulations/P1.md): τ̂_j ≥ (H + M_j − d_j)·(1 − Σ_n z_jn)  ∀j, written
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
    """P1j linearised with α (formulations/P1.md): p_jn ≥ Σ_{v,g} t_jvg·c_v·x_jnvg − M̂_j·(1 − α_jn)
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
    b.rows(
        "P1jx",
        _labels(j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c]),
        -INF,
        0.0,
        np.concatenate([r, r]),
        np.concatenate([beta, col]),
        np.concatenate([np.ones(k), -np.ones(k)]),
    )
    jj, nn = _grid(J, N)
    rr = jj * N + nn
    b.rows(
        "P1ja",
        _labels(j=jj, n=nn),
        0.0,
        0.0,
        np.concatenate([j * N + n, rr]),
        np.concatenate([beta, m["alpha"][jj, nn]]),
        np.concatenate([np.ones(k), -np.ones(J * N)]),
    )
    tc = inst.times[j, c] * cat.cost[cat.cfg_vm[c]]
    b.rows(
        "P1j",
        _labels(j=jj, n=nn),
        0.0,
        0.0,
        np.concatenate([j * N + n, rr]),
        np.concatenate([beta, m["p"][jj, nn]]),
        np.concatenate([-tc, np.ones(J * N)]),
    )


def constrain_P1k(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1k: Σ_j α_jn = w_n  ∀n — an open node is charged for exactly one job (so it hosts one)."""
    jj, nn = _grid(*m["z"].shape)
    _one_per_open_node(b, "P1k", nn, m["alpha"][jj, nn], m["w"])


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


def constrain_unfilled(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """unfilled (P1$): e_n ≥ H·(Σ_v c_v·y_nv − Σ_{j,c} f_c·x_jnc)  ∀n, written
    e_n − H Σ_v c_v y_nv + H Σ f_c x_jnc ≥ 0: the VM's price over H less what its jobs pay for
    their GPUs at the fill price f (with e_n ≥ 0: never below 0, as in `gpuaas.objective.dollars`)."""
    inst, cat = b.instance, b.instance.catalog
    N, V = m["y"].shape
    _, n, c, col = _x_entries(m)
    price = dollar_terms(inst).price
    nn, vv = _grid(N, V)
    rows = np.concatenate([n, nn, np.arange(N)])
    cols = np.concatenate([col, m["y"][nn, vv], m["e"]])
    vals = np.concatenate([inst.H * price[c], -inst.H * cat.cost[vv], np.ones(N)])
    b.rows("unfilled", [f"n{i}" for i in range(N)], 0.0, INF, rows, cols, vals)


def constrain_hosts(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """hosts (P1$): w_n ≤ Σ_j z_jn  ∀n — an open node hosts a job (P1k's role in P1)."""
    J, N = m["z"].shape
    jj, nn = _grid(J, N)
    rows = np.concatenate([nn, np.arange(N)])
    cols = np.concatenate([m["z"][jj, nn], m["w"]])
    vals = np.concatenate([-np.ones(J * N), np.ones(N)])
    b.rows("hosts", [f"n{i}" for i in range(N)], -INF, 0.0, rows, cols, vals)


def constrain_P1n(b: _Builder, m: dict[str, np.ndarray]) -> None:
    """P1n (optional, on by default): Σ_n w_n = min(N, J) — open as many nodes as can be used."""
    J, N = m["z"].shape
    k = float(min(N, J))
    b.rows("P1n", [""], k, k, np.zeros(N), m["w"], np.ones(N))


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
    b = _Builder(instance)
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
            solution.job_node[run], weights=price[solution.job_cfg[run]], minlength=inst.nodes
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
