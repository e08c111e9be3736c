"""The variable families of P1 and P1$ (formulations/P1.md, formulations/P1D.md): one
`define_*` function per family, each adding its columns (bounds, objective, integrality, names)
to the `Builder` and returning their indices; `gpuaas.milp.model.build_model` calls them.
"""

from __future__ import annotations

import numpy as np

from gpuaas.milp.builder import INF, Builder, grid, prefixed_labels
from gpuaas.objective import dollar_terms
from gpuaas.reconfiguration import reconfiguration_terms


def define_w(b: Builder) -> np.ndarray:
    """w_n ∈ {0,1} (P1o): node n is open. No objective term of its own."""
    (n,) = grid(b.instance.nodes)
    return b.cols([f"w_n{i}" for i in n], 0.0, True, 1.0)


def define_y(b: Builder, objective: str = "p1a") -> np.ndarray:
    """y_nv ∈ {0,1} (P1p): node n runs VM type v. Objective σ_nv (VM start-up unless n runs v
    now, P1's extension) and, in P1a, μ·G_v·y_nv (the available-GPU half of the idle-GPU term;
    P1$ prices idle GPUs through e_n)."""
    inst, cat = b.instance, b.instance.catalog
    n, v = grid(inst.nodes, cat.n_vms)
    _, sigma = reconfiguration_terms(inst)
    cost = sigma[n, v] + (inst.mu * cat.gpus[v] if objective == "p1a" else 0.0)
    idx = b.cols(prefixed_labels("y", n=n, v=v), cost, True, 1.0)
    return idx.reshape(inst.nodes, cat.n_vms)


def define_z(b: Builder) -> np.ndarray:
    """z_jn ∈ {0,1} (P1q): job j runs on node n."""
    inst = b.instance
    j, n = grid(inst.n_jobs, inst.nodes)
    return b.cols(prefixed_labels("z", j=j, n=n), 0.0, True, 1.0).reshape(inst.n_jobs, inst.nodes)


def define_x(
    b: Builder,
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
    names = prefixed_labels("x", j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c])
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


def define_alpha(b: Builder) -> np.ndarray:
    """α_jn ∈ {0,1} (P1q): job j is the job whose deployment cost node n is charged."""
    inst = b.instance
    j, n = grid(inst.n_jobs, inst.nodes)
    return b.cols(prefixed_labels("a", j=j, n=n), 0.0, True, 1.0).reshape(inst.n_jobs, inst.nodes)


def define_p(b: Builder) -> np.ndarray:
    """p_jn ≥ 0 (P1q, replaces the bilinear π_jn·α_jn of P1a): objective Σ p_jn."""
    inst = b.instance
    j, n = grid(inst.n_jobs, inst.nodes)
    return b.cols(prefixed_labels("p", j=j, n=n), 1.0, False, INF).reshape(inst.n_jobs, inst.nodes)


def define_beta(b: Builder, xmap: np.ndarray) -> np.ndarray:
    """β_jnvg ∈ [0, 1] (product linearisation only): β = α_jn·x_jnvg, job j is charged on node n
    and runs there with (v, g). Continuous: the rows of `constrain_P1j_product` make it exact.
    Returns the (J, N, C) column map, -1 where x does not exist."""
    j, n, c = np.nonzero(xmap >= 0)
    cat = b.instance.catalog
    idx = b.cols(
        prefixed_labels("b", j=j, n=n, v=cat.cfg_vm[c], g=cat.cfg_gpus[c]), 0.0, False, 1.0
    )
    bmap = np.full(xmap.shape, -1, dtype=np.int64)
    bmap[j, n, c] = idx
    return bmap


def define_e(b: Builder) -> np.ndarray:
    """e_n ≥ 0 (P1$): the $ node n's VM costs over H beyond what its jobs pay at the fill price
    (row `unfilled`). Objective e_n."""
    (n,) = grid(b.instance.nodes)
    return b.cols([f"e_n{i}" for i in n], 1.0, False, INF)


def define_tau(b: Builder) -> tuple[np.ndarray, np.ndarray]:
    """τ_j ≥ 0, τ̂_j ≥ 0 (P1r): tardiness if run, worst-case tardiness if postponed.
    Objective ω_j·τ_j + ρ·ω_j·τ̂_j."""
    inst = b.instance
    (j,) = grid(inst.n_jobs)
    tau = b.cols([f"tau_j{i}" for i in j], inst.weight, False, INF)
    tauhat = b.cols([f"tauhat_j{i}" for i in j], inst.rho * inst.weight, False, INF)
    return tau, tauhat
