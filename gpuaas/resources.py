"""CPU and memory beside GPUs for the methods that pack by GPUs alone (docs/design.md, "CPU and
memory beside GPUs"): `fit` makes any method's Solution hold the "together" rule.

The "alone" rule is the Instance's (a configuration that cannot hold its job is inf), so a
method's plan can break only the sum over a node's jobs. `fit` keeps, on each node over its
type's vCPUs or memory, its pinned jobs, then the jobs that run there now, then the others by
due date, as long as they fit; each job it takes off goes to the open node where it
finishes soonest within the GPUs, vCPUs and memory left, else to a closed node slot on the VM
type that costs least for its time, else waits. A plan that fits is returned as it is, so instances without demands and the MILP
(whose rows hold the rule) are untouched.
"""

from __future__ import annotations

import numpy as np

from gpuaas.instance import DEMANDS, Instance
from gpuaas.solution import Solution


def over(inst: Instance, node_vm: np.ndarray, job_node: np.ndarray) -> np.ndarray:
    """The open nodes whose jobs need more vCPUs or memory than their VM type has."""
    bad = np.zeros(inst.nodes, dtype=bool)
    placed = job_node >= 0
    for demand, capacity in DEMANDS.items():
        need = np.bincount(
            job_node[placed], weights=getattr(inst, demand)[placed], minlength=inst.nodes
        )
        have = np.where(node_vm >= 0, getattr(inst.catalog, capacity)[np.maximum(node_vm, 0)], 0)
        bad |= need > have * (1.0 + 1e-9)
    return np.flatnonzero(bad & (node_vm >= 0))


def fit(sol: Solution) -> Solution:
    """`sol` with every node within its vCPUs and memory (module docstring)."""
    inst = sol.instance
    if not inst.has_demands:
        return sol
    bad = over(inst, sol.node_vm, sol.job_node)
    if bad.size == 0:
        return sol
    cat = inst.catalog
    node_vm, job_node, job_cfg = sol.node_vm.copy(), sol.job_node.copy(), sol.job_cfg.copy()
    need = np.stack([getattr(inst, d) for d in DEMANDS], axis=1)  # (J, 2)
    cap = np.stack([getattr(cat, c) for c in DEMANDS.values()], axis=1)  # (V, 2)
    evicted = []
    for n in bad.tolist():
        jobs = np.flatnonzero(job_node == n)
        stays = (inst.current_node[jobs] == n) & (inst.current_cfg[jobs] == job_cfg[jobs])
        order = np.lexsort((inst.due[jobs], ~stays, ~inst.pinned[jobs]))
        held = np.zeros(2)
        for j in jobs[order].tolist():
            if inst.pinned[j] or np.all(held + need[j] <= cap[node_vm[n]] * (1.0 + 1e-9)):
                held += need[j]
            else:
                job_node[j] = job_cfg[j] = -1
                evicted.append(j)
    for j in sorted(evicted, key=lambda j: inst.due[j]):
        _place(inst, j, node_vm, job_node, job_cfg, need, cap)
    node_vm[(node_vm >= 0) & (np.bincount(job_node[job_node >= 0], minlength=inst.nodes) == 0)] = -1
    stats = {**sol.stats, "resource_moves": len(evicted)}
    return Solution(inst, node_vm, job_node, job_cfg, sol.method, stats)


def _place(
    inst: Instance,
    j: int,
    node_vm: np.ndarray,
    job_node: np.ndarray,
    job_cfg: np.ndarray,
    need: np.ndarray,
    cap: np.ndarray,
) -> None:
    """Job j on the open node where it finishes soonest, else on the VM type of a closed
    slot that costs least for its time, within GPUs, vCPUs and memory; else it waits."""
    cat = inst.catalog
    times = inst.times[j]
    placed = job_node >= 0
    gpus_used = np.bincount(
        job_node[placed], weights=cat.cfg_gpus[job_cfg[placed]], minlength=inst.nodes
    )
    held = np.zeros((inst.nodes, 2))
    np.add.at(held, job_node[placed], need[placed])
    for opening in (False, True):
        best = (np.inf, -1, -1)
        for n in np.flatnonzero((node_vm < 0) if opening else (node_vm >= 0)).tolist():
            vms = range(cat.n_vms) if opening else (int(node_vm[n]),)
            for v in vms:
                if not np.all(held[n] + need[j] <= cap[v] * (1.0 + 1e-9)):
                    continue
                if opening and inst.room[v] < 1:
                    continue  # no more VMs of this type may open (a run's capacity)
                free = int(cat.gpus[v]) - int(gpus_used[n])
                for g in range(1, free + 1):
                    c = int(cat.cfg_offset[v]) + g - 1
                    # on an open VM the soonest end; a VM to open: its price for that time
                    key = float(times[c]) * (float(cat.cost[v]) if opening else 1.0)
                    if key < best[0]:
                        best = (key, n, c)
            if opening and best[1] >= 0:
                break  # one closed slot is as good as another
        if best[1] >= 0:
            _, n, c = best
            node_vm[n] = cat.cfg_vm[c]
            job_node[j], job_cfg[j] = n, c
            return
