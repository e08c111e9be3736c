"""The row families of P1 and P1$ (formulations/P1.md, formulations/P1D.md): one `constrain_*`
function per family, each adding its named rows to the `Builder` from the column map `m` of
the variable families (`gpuaas.milp.variables`); `gpuaas.milp.model.build_model` calls them.
"""

from __future__ import annotations

import numpy as np

from gpuaas.instance import DEMANDS
from gpuaas.milp.builder import INF, Builder, grid, labels
from gpuaas.objective import dollar_terms
from gpuaas.per_job import at


def _one_per_open_node(
    b: Builder, family: str, n: np.ndarray, cols: np.ndarray, w: np.ndarray
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


def constrain_P1b(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1b: Σ_v y_nv = w_n  ∀n — an open node has exactly one VM type, a closed one none."""
    n, v = grid(*m["y"].shape)
    _one_per_open_node(b, "P1b", n, m["y"][n, v], m["w"])


def _x_entries(m: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """(j, n, c, column) of every existing x variable."""
    j, n, c = np.nonzero(m["x"] >= 0)
    return j, n, c, m["x"][j, n, c]


def constrain_P1c(b: Builder, m: dict[str, np.ndarray]) -> None:
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
    b.rows("P1c", labels(j=kj, n=kn, v=kv), -INF, 0.0, rows, cols, vals)


def _per_job_node(m: dict[str, np.ndarray], other: np.ndarray, family: str, b: Builder) -> None:
    """Σ_{v,g} x_jnvg − other[j, n] ≤ 0  ∀j, n."""
    J, N = m["z"].shape
    j, n, _, col = _x_entries(m)
    jj, nn = grid(J, N)
    rows = np.concatenate([j * N + n, jj * N + nn])
    cols = np.concatenate([col, other[jj, nn]])
    vals = np.concatenate([np.ones(len(col)), -np.ones(J * N)])
    b.rows(family, labels(j=jj, n=nn), -INF, 0.0, rows, cols, vals)


def constrain_P1d(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1d, summed over v and g: Σ_{v,g} x_jnvg ≤ z_jn  ∀j, n — a configuration on node n only
    for a job assigned to n (the paper's per-(v, g) rows x_jnvg ≤ z_jn, aggregated)."""
    _per_job_node(m, m["z"], "P1d", b)


def constrain_P1e(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1e: Σ_{v,g} x_jnvg ≤ w_n  ∀j, n — at most one configuration per job and node, none on a
    closed node (implied by P1c summed over v with P1b; kept as in the paper)."""
    J, N = m["z"].shape
    _per_job_node(m, np.broadcast_to(m["w"][None, :], (J, N)), "P1e", b)


def constrain_P1f(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1f: Σ_{n,v,g} x_jnvg = Σ_n z_jn  ∀j — an assigned job has exactly one configuration."""
    J, N = m["z"].shape
    j, _, _, col = _x_entries(m)
    jj, nn = grid(J, N)
    rows = np.concatenate([j, jj])
    cols = np.concatenate([col, m["z"][jj, nn]])
    vals = np.concatenate([np.ones(len(col)), -np.ones(J * N)])
    b.rows("P1f", [f"j{i}" for i in range(J)], 0.0, 0.0, rows, cols, vals)


def constrain_P1g(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1g: Σ_{j,g} g·x_jnvg ≤ G_v·y_nv  ∀n, v — GPU capacity of node n's VM type.

    The paper's right-hand side is G_v; multiplying by y_nv is valid (x_jnvg = 1 needs
    y_nv = 1 by P1c) and tightens the LP relaxation.
    """
    cat = b.instance.catalog
    N, V = m["y"].shape
    _, n, c, col = _x_entries(m)
    nn, vv = grid(N, V)
    rows = np.concatenate([n * V + cat.cfg_vm[c], nn * V + vv])
    cols = np.concatenate([col, m["y"][nn, vv]])
    vals = np.concatenate([cat.cfg_gpus[c].astype(np.float64), -cat.gpus[vv].astype(np.float64)])
    b.rows("P1g", labels(n=nn, v=vv), -INF, 0.0, rows, cols, vals)


def constrain_resources(b: Builder, m: dict[str, np.ndarray]) -> None:
    """Σ_{j,g} d_jr·x_jnvg ≤ K_vr·y_nv  ∀n, v, r — the vCPUs and memory of node n's VM type
    (docs/design.md, "CPU and memory beside GPUs"), one family per resource r some job needs
    and some type limits ("cpus", "memory"), only for the types that limit it; none without
    demands, so the model is then P1g's alone."""
    inst, cat = b.instance, b.instance.catalog
    N, V = m["y"].shape
    j, n, c, col = _x_entries(m)
    for demand, capacity in DEMANDS.items():
        d = getattr(inst, demand)
        limited = np.flatnonzero(np.isfinite(getattr(cat, capacity)))
        if not d.any() or limited.size == 0:
            continue
        keep = (d[j] > 0) & np.isin(cat.cfg_vm[c], limited)
        nn, vv = grid(N, len(limited))
        vv = limited[vv]
        local = np.full(V, -1)
        local[limited] = np.arange(len(limited))
        rows = np.concatenate(
            [n[keep] * len(limited) + local[cat.cfg_vm[c[keep]]], np.arange(len(nn))]
        )
        cols = np.concatenate([col[keep], m["y"][nn, vv]])
        vals = np.concatenate([d[j[keep]], -getattr(cat, capacity)[vv]])
        b.rows(demand, labels(n=nn, v=vv), -INF, 0.0, rows, cols, vals)


def constrain_quotas(b: Builder, m: dict[str, np.ndarray]) -> None:
    """Σ_{n, v ∈ q} G_v·y_nv ≤ Q_q  ∀ quotas q — the GPUs of the open VMs each quota of the
    catalog counts (`gpuaas.catalog.Quota`); none without quotas."""
    cat = b.instance.catalog
    if not cat.quotas:
        return
    N, V = m["y"].shape
    q, v = np.nonzero(cat.quota_members)
    n = np.repeat(np.arange(N), len(q))
    q, v = np.tile(q, N), np.tile(v, N)
    b.rows(
        "quota",
        [f"q{i}" for i in range(len(cat.quotas))],
        -INF,
        cat.quota_gpus.astype(np.float64),
        q,
        m["y"][n, v],
        cat.gpus[v].astype(np.float64),
    )


def constrain_P1h(b: Builder, m: dict[str, np.ndarray], literal: bool = False) -> None:
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


def constrain_P1i(b: Builder, m: dict[str, np.ndarray], literal: bool = False) -> None:
    """P1i (corrected, formulations/P1.md): τ̂_j ≥ (H + M_j − d_j)·(1 − Σ_n z_jn)  ∀j, written
    (H + M_j − d_j)·Σ_n z_jn + τ̂_j ≥ H + M_j − d_j.

    A job that runs gets τ̂_j = 0 whatever d_j. The literal text (H + M_j)(1 − Σ z) ≤ d_j + τ̂_j
    (`literal=True`) charges a running late job (d_j < 0) ρ·ω_j·|d_j|.
    """
    inst = b.instance
    J, N = m["z"].shape
    K = inst.H + inst.max_time - inst.rel_due
    coef = (inst.H + inst.max_time) if literal else K
    jj, nn = grid(J, N)
    rows = np.concatenate([jj, np.arange(J)])
    cols = np.concatenate([m["z"][jj, nn], m["tauhat"]])
    vals = np.concatenate([coef[jj], np.ones(J)])
    b.rows("P1i", [f"j{i}" for i in range(J)], K, INF, rows, cols, vals)


def constrain_P1j(b: Builder, m: dict[str, np.ndarray]) -> None:
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
    jj, nn = grid(J, N)
    rr = jj * N + nn
    rows = np.concatenate([j * N + n, rr, rr])
    cols = np.concatenate([col, m["p"][jj, nn], m["alpha"][jj, nn]])
    vals = np.concatenate([-tc, np.ones(J * N), -mhat[jj]])
    b.rows("P1j", labels(j=jj, n=nn), -mhat[jj], INF, rows, cols, vals)


def constrain_P1j_product(b: Builder, m: dict[str, np.ndarray]) -> None:
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
        labels(j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c]),
        -INF,
        0.0,
        np.concatenate([r, r]),
        np.concatenate([beta, col]),
        np.concatenate([np.ones(k), -np.ones(k)]),
    )
    jj, nn = grid(J, N)
    rr = jj * N + nn
    b.rows(
        "P1ja",
        labels(j=jj, n=nn),
        0.0,
        0.0,
        np.concatenate([j * N + n, rr]),
        np.concatenate([beta, m["alpha"][jj, nn]]),
        np.concatenate([np.ones(k), -np.ones(J * N)]),
    )
    tc = inst.times[j, c] * cat.cost[cat.cfg_vm[c]]
    b.rows(
        "P1j",
        labels(j=jj, n=nn),
        0.0,
        0.0,
        np.concatenate([j * N + n, rr]),
        np.concatenate([beta, m["p"][jj, nn]]),
        np.concatenate([-tc, np.ones(J * N)]),
    )


def constrain_P1k(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1k: Σ_j α_jn = w_n  ∀n — an open node is charged for exactly one job (so it hosts one)."""
    jj, nn = grid(*m["z"].shape)
    _one_per_open_node(b, "P1k", nn, m["alpha"][jj, nn], m["w"])


def constrain_P1l(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1l: α_jn ≤ z_jn  ∀j, n — the charged job runs on that node."""
    J, N = m["z"].shape
    jj, nn = grid(J, N)
    r = np.arange(J * N)
    rows = np.concatenate([r, r])
    cols = np.concatenate([m["alpha"][jj, nn], m["z"][jj, nn]])
    vals = np.concatenate([np.ones(J * N), -np.ones(J * N)])
    b.rows("P1l", labels(j=jj, n=nn), -INF, 0.0, rows, cols, vals)


def constrain_P1m(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1m: Σ_n z_jn ≤ 1  ∀j — a job runs on at most one node."""
    J, N = m["z"].shape
    jj, nn = grid(J, N)
    b.rows("P1m", [f"j{i}" for i in range(J)], -INF, 1.0, jj, m["z"][jj, nn], np.ones(J * N))


def constrain_unfilled(b: Builder, m: dict[str, np.ndarray]) -> None:
    """unfilled (P1$): e_n ≥ H·(Σ_v c_v·y_nv − Σ_{j,c} f_c·x_jnc)  ∀n, written
    e_n − H Σ_v c_v y_nv + H Σ f_c x_jnc ≥ 0: the VM's price over H less what its jobs pay for
    their GPUs at the fill price f (with e_n ≥ 0: never below 0, as in `gpuaas.objective.dollars`)."""
    inst, cat = b.instance, b.instance.catalog
    N, V = m["y"].shape
    j, n, c, col = _x_entries(m)
    price = at(dollar_terms(inst).price, j, c)
    nn, vv = grid(N, V)
    rows = np.concatenate([n, nn, np.arange(N)])
    cols = np.concatenate([col, m["y"][nn, vv], m["e"]])
    vals = np.concatenate([inst.H * price, -inst.H * cat.cost[vv], np.ones(N)])
    b.rows("unfilled", [f"n{i}" for i in range(N)], 0.0, INF, rows, cols, vals)


def constrain_hosts(b: Builder, m: dict[str, np.ndarray]) -> None:
    """hosts (P1$): w_n ≤ Σ_j z_jn  ∀n — an open node hosts a job (P1k's role in P1)."""
    J, N = m["z"].shape
    jj, nn = grid(J, N)
    rows = np.concatenate([nn, np.arange(N)])
    cols = np.concatenate([m["z"][jj, nn], m["w"]])
    vals = np.concatenate([-np.ones(J * N), np.ones(N)])
    b.rows("hosts", [f"n{i}" for i in range(N)], -INF, 0.0, rows, cols, vals)


def constrain_P1n(b: Builder, m: dict[str, np.ndarray]) -> None:
    """P1n (optional, on by default): Σ_n w_n = min(N, J) — open as many nodes as can be used."""
    J, N = m["z"].shape
    k = float(min(N, J))
    b.rows("P1n", [""], k, k, np.zeros(N), m["w"], np.ones(N))
