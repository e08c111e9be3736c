"""GPU quotas per model and place (`gpuaas.catalog.Quota`): what a plan holds against them, and
`respect`, which makes any method's plan hold them.

A quota counts the GPUs of the VMs a plan keeps open (all of a VM's GPUs, used or not, as a
cloud counts them), of its GPU model and kind (on-demand or spot), at its location, region or
cloud. The MILP plans with them (a row per quota, `gpuaas.milp.constraints.constrain_quotas`);
every other method plans without them and `gpuaas.methods.solve` repairs its plan with
`respect` (docs/design.md, "Quotas"). A plan within its quotas is returned as it is, so a
catalog without quotas, or a plan that does not reach them, is untouched.
"""

from __future__ import annotations

import numpy as np

from gpuaas.catalog import Catalog
from gpuaas.instance import DEMANDS, Instance
from gpuaas.per_job import at
from gpuaas.solution import Solution


def held(cat: Catalog, node_vm: np.ndarray) -> np.ndarray:
    """(Q,) the GPUs of the open nodes of `node_vm` each quota counts."""
    opened = np.bincount(node_vm[node_vm >= 0], minlength=cat.n_vms)
    return cat.quota_members @ (opened * cat.gpus)


def over(cat: Catalog, node_vm: np.ndarray) -> list[str]:
    """Each quota `node_vm` exceeds, in words (empty: within every quota)."""
    if not cat.quotas:
        return []
    have = held(cat, node_vm)
    return [
        f"{int(h)} {q.gpu} GPUs{' (spot)' if q.spot else ''} open at {q.at or 'every place'}, "
        f"over its quota of {q.gpus}"
        for q, h in zip(cat.quotas, have)
        if h > q.gpus
    ]


def openable(cat: Catalog, left: np.ndarray) -> np.ndarray:
    """(V,) whether one more VM of each type fits every quota's GPUs `left` (Q,)."""
    return ((left[:, None] >= cat.gpus[None, :]) | ~cat.quota_members).all(axis=0)


def respect(sol: Solution) -> Solution:
    """`sol` within its catalog's quotas (module docstring). While a quota is over, of the
    open nodes it counts (none with a pinned job) the one whose change loses least P1$ per
    GPU it frees (the run values, moves and start-ups it changes) is taken: resized to a
    smaller VM type of its GPU model and place that holds its jobs on their GPU counts, or
    closed and its jobs taken off. Each job taken off, the earliest due first, then goes
    where its P1$ run value is least: an open node with room for it, or a closed node slot
    on a VM type the quotas and `Instance.room` let open; else it waits (when waiting costs
    less). Decisions are repaired, not planned with the quota."""
    inst = sol.instance
    cat = inst.catalog
    if not cat.quotas or not over(cat, sol.node_vm):
        return sol
    from gpuaas.objective import dollar_terms  # objective imports pricing: no cycle

    terms = dollar_terms(inst)
    node_vm, job_node, job_cfg = sol.node_vm.copy(), sol.job_node.copy(), sol.job_cfg.copy()
    need = np.stack([getattr(inst, d) for d in DEMANDS], axis=1)
    cap = np.stack([getattr(cat, c) for c in DEMANDS.values()], axis=1)
    fixed = np.zeros(inst.nodes, dtype=bool)
    fixed[job_node[inst.pinned & (job_node >= 0)]] = True
    members, limit = cat.quota_members, cat.quota_gpus
    taken_off: list[int] = []
    changes = 0
    while True:
        bad = np.flatnonzero(held(cat, node_vm) > limit)
        if not bad.size:
            break
        q = int(bad[0])
        best = None  # (loss per GPU freed, node, new type or -1)
        for n in np.flatnonzero((node_vm >= 0) & ~fixed).tolist():
            v = int(node_vm[n])
            if not members[q, v]:
                continue
            jobs = np.flatnonzero(job_node == n)
            now = float(terms.run[jobs, job_cfg[jobs]].sum())
            # a job that stays where it runs now pays its move if the node changes
            stay = (inst.current_node[jobs] == n) & (inst.current_cfg[jobs] == job_cfg[jobs])
            moves = float(terms.kappa[jobs[stay]].sum()) - float(terms.sigma[n, v])
            closing = float(terms.wait[jobs].sum()) - now + moves
            options = [(-1, closing, int(cat.gpus[v]))]
            for w in _smaller(inst, v, jobs, job_cfg, need, cap):
                cfgs = cat.cfg_offset[w] + cat.cfg_gpus[job_cfg[jobs]] - 1
                loss = float(terms.run[jobs, cfgs].sum()) - now + moves + float(terms.sigma[n, w])
                options.append((w, loss, int(cat.gpus[v] - cat.gpus[w])))
            for w, loss, freed in options:
                key = (loss / freed, n, w)
                if best is None or key < best:
                    best = key
        if best is None:
            break  # only nodes of pinned jobs left: the validator reports the excess
        _, n, w = best
        jobs = np.flatnonzero(job_node == n)
        changes += 1
        if w >= 0:
            job_cfg[jobs] = cat.cfg_offset[w] + cat.cfg_gpus[job_cfg[jobs]] - 1
            node_vm[n] = w
        else:
            node_vm[n] = -1
            job_node[jobs] = job_cfg[jobs] = -1
            taken_off.extend(jobs.tolist())
    for j in sorted(taken_off, key=lambda j: (inst.due[j], j)):
        _place(inst, terms, j, node_vm, job_node, job_cfg, need, cap)
    stats = {**sol.stats, "quota_moves": changes}
    return Solution(inst, node_vm, job_node, job_cfg, sol.method, stats)


def _smaller(inst: Instance, v: int, jobs: np.ndarray, job_cfg: np.ndarray, need, cap) -> list[int]:
    """The VM types smaller than v of its GPU model and place (the same quotas) that hold the
    `jobs` of a node of type v on their GPU counts, within vCPUs, memory and `Instance.room`."""
    cat = inst.catalog
    g = cat.cfg_gpus[job_cfg[jobs]]
    out = []
    for w in np.flatnonzero((cat.gpu_model_id == cat.gpu_model_id[v]) & (cat.gpus < cat.gpus[v])):
        if cat.gpus[w] < g.sum() or inst.room[w] < 1 or g.max(initial=0) > cat.gpus[w]:
            continue
        if np.any(need[jobs].sum(axis=0) > cap[w] * (1.0 + 1e-9)):
            continue
        if np.isfinite(inst.times[jobs, cat.cfg_offset[w] + g - 1]).all():
            out.append(int(w))
    return out


def _place(inst, terms, j, node_vm, job_node, job_cfg, need, cap) -> None:
    """Job j where its P1$ run value is least (on a new VM: with the VM's price over H beyond
    the job's fill price), within GPUs, vCPUs, memory, quotas and `Instance.room`; it waits
    where waiting costs less or nothing holds it (arrays changed in place)."""
    cat = inst.catalog
    placed = job_node >= 0
    used = np.bincount(
        job_node[placed], weights=cat.cfg_gpus[job_cfg[placed]], minlength=inst.nodes
    )
    have = np.zeros((inst.nodes, need.shape[1]))
    np.add.at(have, job_node[placed], need[placed])
    left = cat.quota_gpus - held(cat, node_vm)
    best = (float(terms.wait[j]), -1, -1)
    for n in np.flatnonzero(node_vm >= 0).tolist():
        v = int(node_vm[n])
        if np.any(have[n] + need[j] > cap[v] * (1.0 + 1e-9)):
            continue
        for g in range(1, int(cat.gpus[v] - used[n]) + 1):
            c = int(cat.cfg_offset[v]) + g - 1
            if np.isfinite(inst.times[j, c]) and terms.run[j, c] < best[0]:
                best = (float(terms.run[j, c]), n, c)
    closed = np.flatnonzero(node_vm < 0)
    if closed.size:
        opens = openable(cat, left) & (inst.room >= 1)
        for v in np.flatnonzero(opens).tolist():
            if np.any(need[j] > cap[v] * (1.0 + 1e-9)):
                continue
            for g in range(1, int(cat.gpus[v]) + 1):
                c = int(cat.cfg_offset[v]) + g - 1
                if not np.isfinite(inst.times[j, c]):
                    continue
                key = (
                    float(terms.run[j, c])
                    + inst.H * max(0.0, float(cat.cost[v]) - float(at(terms.price, j, c)))
                    + float(terms.sigma[closed[0], v])
                )
                if key < best[0]:
                    best = (key, int(closed[0]), c)
    _, n, c = best
    if n >= 0:
        node_vm[n] = cat.cfg_vm[c]
        job_node[j], job_cfg[j] = n, c
