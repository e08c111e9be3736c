"""Brute-force optima of P1 and P1$ on tiny instances, written independently of gpuaas's solvers.

Nodes are interchangeable, so for each number k of open nodes it enumerates the multisets of k
VM types, then every placement of every job (postponed, or on one of the k nodes with one of its
runnable GPU counts for that node's VM type), pruning only placements that exceed a node's
GPUs (or its vCPUs or memory, where jobs declare them), and keeps the cheapest placement in
which every open node hosts a job; a multiset over a catalog quota's GPUs is skipped. One enumeration
gives the optimum for every k, hence both P1n on (k = min(N, J)) and off (best k <= N).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuaas.instance import Instance
from gpuaas.solution import Solution


@dataclass
class BruteForce:
    """best[k]: the optimal f_OBJ with exactly k open nodes and a Solution attaining it."""

    best: dict[int, tuple[float, Solution]]

    def optimum(self, p1n: bool, instance: Instance) -> tuple[float, Solution]:
        """Optimum with P1n (k = min(N, J)) or without it (any k <= N)."""
        if p1n:
            return self.best[min(instance.nodes, instance.n_jobs)]
        return min(self.best.values(), key=lambda t: t[0])


def brute_force(inst: Instance) -> BruteForce:
    """Enumerate every solution of `inst` up to node relabelling (plain Python, no numba)."""
    cat = inst.catalog
    V, J, N = cat.n_vms, inst.n_jobs, inst.nodes
    gpus = [int(g) for g in cat.gpus]
    price = [float(p) / 3600.0 for p in cat.cost_per_hour]
    d = [float(inst.due[j]) - inst.time for j in range(J)]
    t = [
        [float(inst.work[j, c]) * (1.0 - float(inst.progress[j])) for c in range(cat.n_configs)]
        for j in range(J)
    ]
    offset = [int(o) for o in cat.cfg_offset]
    wait_cost = []
    for j in range(J):
        worst = max(x for x in t[j] if math.isfinite(x))
        wait_cost.append(inst.rho * float(inst.weight[j]) * max(0.0, inst.H + worst - d[j]))
    best: dict[int, tuple[float, Solution]] = {}
    for k in range(min(N, J) + 1):
        top: tuple[float, Any] = (math.inf, None)
        for types in itertools.combinations_with_replacement(range(V), k):
            if not within_quotas(inst, types):
                continue
            # options[j]: (node or -1, config or -1, GPUs, time, job cost)
            options = []
            for j in range(J):
                opts = [(-1, -1, 0, math.inf, wait_cost[j])]
                for n, v in enumerate(types):
                    for g in range(1, gpus[v] + 1) if gpus[v] else [0]:  # 0: GPU-less
                        c = offset[v] + g - 1
                        if math.isfinite(t[j][c]):
                            cost = float(inst.weight[j]) * max(0.0, t[j][c] - d[j])
                            opts.append((n, c, g, t[j][c], cost))
                options.append(opts)
            total, choice = _best_placement(types, options, gpus, price, inst.mu, _room(inst))
            if total < top[0]:
                top = (total, (types, choice))
        if top[1] is not None:
            types, choice = top[1]
            node_vm = np.full(N, -1)
            node_vm[: len(types)] = types
            job_node = np.array([o[0] for o in choice], dtype=np.int64)
            job_cfg = np.array([o[1] for o in choice], dtype=np.int64)
            best[k] = (top[0], Solution(inst, node_vm, job_node, job_cfg, "brute-force"))
    return BruteForce(best)


def within_quotas(inst: Instance, types: tuple[int, ...]) -> bool:
    """Whether VMs of `types` (-1: a closed node) hold at most each quota's GPUs of its model,
    kind and place (`gpuaas.catalog.Quota`), counted here again in plain Python."""
    cat = inst.catalog
    for q in cat.quotas:
        total = 0
        for v in types:
            if v < 0 or cat.gpu_models[v] != q.gpu or (int(cat.base[v]) >= 0) != q.spot:
                continue
            loc = cat.locations[v]
            if q.at in ("", loc) or q.at in cat.places.get(loc, {}).values():
                total += int(cat.gpus[v])
        if total > q.gpus:
            return False
    return True


def _best_placement(
    types: tuple[int, ...],
    options: list[list[tuple[int, int, int, float, float]]],
    gpus: list[int],
    price: list[float],
    mu: float,
    room: Any,
) -> tuple[float, list[Any]]:
    """Cheapest choice of one option per job on nodes of the given VM types (depth first)."""
    k = len(types)
    used = [0] * k
    held = [[0.0, 0.0] for _ in range(k)]
    choice: list[tuple[int, int, int, float, float]] = []
    best: list[Any] = [math.inf, []]

    def rec(j: int) -> None:
        if j == len(options):
            hosted = [0] * k
            first = [math.inf] * k
            total = 0.0
            for n, _, _, t, cost in choice:
                total += cost
                if n >= 0:
                    hosted[n] += 1
                    first[n] = min(first[n], t)
            if k and min(hosted) == 0:
                return  # an open node must host a job
            for n, v in enumerate(types):
                total += mu * (gpus[v] - used[n]) + price[v] * first[n]
            if total < best[0]:
                best[0], best[1] = total, list(choice)
            return
        for opt in options[j]:
            n, g = opt[0], opt[2]
            if n >= 0:
                if used[n] + g > gpus[types[n]] or not room(held[n], j, types[n], 1):
                    continue  # over capacity
                used[n] += g
            choice.append(opt)
            rec(j + 1)
            choice.pop()
            if n >= 0:
                used[n] -= g
                room(held[n], j, types[n], -1)

    rec(0)
    return best[0], best[1]


def _room(inst: Instance) -> Any:
    """room(held, j, v, sign): with sign 1, add job j's vCPUs and memory to a node's `held`
    [vCPUs, memory] if they fit VM type v (True) or leave it and return False; with -1, take
    them off again. Plain Python, from the instance's and catalog's arrays."""
    need = [(float(inst.cpus[j]), float(inst.memory[j])) for j in range(inst.n_jobs)]
    cap = [(float(a), float(b)) for a, b in zip(inst.catalog.vcpus, inst.catalog.memory)]

    def room(held: list[float], j: int, v: int, sign: int) -> bool:
        if sign > 0 and any(held[r] + need[j][r] > cap[v][r] for r in (0, 1)):
            return False
        for r in (0, 1):
            held[r] += sign * need[j][r]
        return True

    return room


def _part(inst: Instance, j: int, v: int, g: int) -> float:
    """The part of a VM of type v job j holds with g GPUs: g / G_v, or on a GPU-less type its
    largest share of the vCPUs or memory the type declares (docs/design.md), written again."""
    G = int(inst.catalog.gpus[v])
    if G:
        return g / G
    shares = [
        float(inst.cpus[j]) / float(inst.catalog.vcpus[v]),
        float(inst.memory[j]) / float(inst.catalog.memory[v]),
    ]
    return max(shares)


def _incumbent(inst: Instance) -> tuple[list[tuple[int, int]], dict[int, int], list[float]]:
    """Each job's (node, configuration) now, each busy node's VM type, and kappa_j (the cost of
    moving running job j: `overhead` s at its GPU share of the VM price, plus its weight x
    `overhead` when late on every configuration; formulations/P1.md), written out again."""
    cat = inst.catalog
    price = [float(p) / 3600.0 for p in cat.cost_per_hour]
    cur = [(int(inst.current_node[j]), int(inst.current_cfg[j])) for j in range(inst.n_jobs)]
    now_type = {n: int(cat.cfg_vm[c]) for n, c in cur if c >= 0}
    kappa = []
    for j in range(inst.n_jobs):
        n0, c0 = cur[j]
        if c0 < 0 or inst.overhead <= 0:
            kappa.append(0.0)
            continue
        v0 = int(cat.cfg_vm[c0])
        t = [float(inst.work[j, c]) * (1.0 - float(inst.progress[j])) for c in range(cat.n_configs)]
        late = float(inst.due[j]) - inst.time < min(x for x in t if math.isfinite(x))
        share = price[v0] * _part(inst, j, v0, int(cat.cfg_gpus[c0]))
        kappa.append(inst.overhead * (share + (float(inst.weight[j]) if late else 0.0)))
    return cur, now_type, kappa


def brute_force_incumbent(inst: Instance) -> tuple[float, Solution]:
    """Optimum of P1 with the reconfiguration extension (no P1n): nodes are not interchangeable
    once jobs run on them, so every VM type (or closed) of every node is enumerated, then every
    placement; the cost adds kappa_j per moved running job and sigma_nv per open node whose
    type is not the one its running jobs use now (formulations/P1.md), written out here again."""
    cat = inst.catalog
    V, J, N = cat.n_vms, inst.n_jobs, inst.nodes
    gpus = [int(g) for g in cat.gpus]
    price = [float(p) / 3600.0 for p in cat.cost_per_hour]
    offset = [int(o) for o in cat.cfg_offset]
    d = [float(inst.due[j]) - inst.time for j in range(J)]
    t = [
        [float(inst.work[j, c]) * (1.0 - float(inst.progress[j])) for c in range(cat.n_configs)]
        for j in range(J)
    ]
    cur, now_type, kappa = _incumbent(inst)
    best: tuple[float, Any] = (math.inf, None)
    for types in itertools.product(range(-1, V), repeat=N):
        if not within_quotas(inst, types):
            continue
        opened = [n for n in range(N) if types[n] >= 0]
        options = []
        for j in range(J):
            worst = max(x for x in t[j] if math.isfinite(x))
            wait = inst.rho * float(inst.weight[j]) * max(0.0, inst.H + worst - d[j])
            opts = [(-1, -1, 0, math.inf, wait + kappa[j])]
            for k, n in enumerate(opened):
                v = types[n]
                for g in range(1, gpus[v] + 1) if gpus[v] else [0]:  # 0: GPU-less
                    c = offset[v] + g - 1
                    if math.isfinite(t[j][c]):
                        move = 0.0 if (n, c) == cur[j] else kappa[j]
                        opts.append(
                            (
                                k,
                                c,
                                g,
                                t[j][c],
                                float(inst.weight[j]) * max(0.0, t[j][c] - d[j]) + move,
                            )
                        )
            options.append(opts)
        total, choice = _best_placement(
            tuple(types[n] for n in opened), options, gpus, price, inst.mu, _room(inst)
        )
        if inst.startup > 0:
            total += sum(
                inst.startup * price[types[n]] for n in opened if now_type.get(n) != types[n]
            )
        if total < best[0]:
            best = (total, (types, opened, choice))
    types, opened, choice = best[1]
    job_node = np.array([opened[o[0]] if o[0] >= 0 else -1 for o in choice], dtype=np.int64)
    job_cfg = np.array([o[1] for o in choice], dtype=np.int64)
    return best[0], Solution(
        inst, np.array(types, dtype=np.int64), job_node, job_cfg, "brute-force"
    )


def brute_force_dollars(inst: Instance) -> tuple[float, Solution]:
    """Optimum of P1$ (formulations/P1D.md): every VM type (or closed) of every node, then every
    placement of every job (waiting, or on an open node with a runnable configuration of its
    type) within the nodes' GPUs, each open node hosting a job. A placement costs its jobs'
    run or wait values and the fill prices (`gpuaas.validator`'s plain-Python per-job LPs), H x
    each open VM's price less its jobs' fill prices (at least 0), kappa_j per moved running job
    and `startup` s of the VM's price per open node whose type is not the one it runs now."""
    from gpuaas.validator import priced, run_value, wait_value

    cat = inst.catalog
    V, J, N = cat.n_vms, inst.n_jobs, inst.nodes
    p = priced(inst)
    cur, now_type, kappa = _incumbent(inst)
    run = [
        [
            run_value(p, j, c) if math.isfinite(p.times[j][c]) else math.inf
            for c in range(cat.n_configs)
        ]
        for j in range(J)
    ]
    wait = [wait_value(p, j) for j in range(J)]
    best: tuple[float, Any] = (math.inf, None)
    for types in itertools.product(range(-1, V), repeat=N):
        if not within_quotas(inst, types):
            continue
        opened = [n for n in range(N) if types[n] >= 0]
        fixed = sum(
            inst.startup * p.vm_price[types[n]] for n in opened if now_type.get(n) != types[n]
        )
        options = []
        for j in range(J):
            opts = [(-1, -1, wait[j] + kappa[j])]
            for n in opened:
                for c, (v, _) in enumerate(p.configs):
                    if v == types[n] and math.isfinite(run[j][c]):
                        opts.append((n, c, run[j][c] + (0.0 if (n, c) == cur[j] else kappa[j])))
            options.append(opts)
        total, choice = _cheapest_dollars(inst, p, types, opened, options, fixed)
        if total < best[0]:
            best = (total, (types, choice))
    types, choice = best[1]
    return best[0], Solution(
        inst,
        np.array(types, dtype=np.int64),
        np.array([o[0] for o in choice], dtype=np.int64),
        np.array([o[1] for o in choice], dtype=np.int64),
        "brute-force",
    )


def _cheapest_dollars(
    inst: Instance,
    p: Any,
    types: tuple[int, ...],
    opened: list[int],
    options: list[list[tuple[int, int, float]]],
    fixed: float,
) -> tuple[float, list[tuple[int, int, float]]]:
    """Cheapest choice of one option per job (depth first, pruning placements over a node's
    GPUs), every open node hosting a job: options' values + `fixed` + H x the unfilled prices."""
    gpus = [int(g) for g in inst.catalog.gpus]
    used = [0] * inst.nodes
    hosts = [0] * inst.nodes
    room = _room(inst)
    held = [[0.0, 0.0] for _ in range(inst.nodes)]
    paid = [0.0] * inst.nodes
    choice: list[tuple[int, int, float]] = []
    best: list[Any] = [math.inf, []]

    def rec(j: int, cost: float) -> None:
        if j == len(options):
            if any(hosts[n] == 0 for n in opened):
                return  # an open node must host a job
            total = cost + sum(inst.H * max(0.0, p.vm_price[types[n]] - paid[n]) for n in opened)
            if total < best[0]:
                best[0], best[1] = total, list(choice)
            return
        for n, c, value in options[j]:
            if n >= 0:
                over = used[n] + p.configs[c][1] > gpus[types[n]]
                if over or not room(held[n], j, types[n], 1):
                    continue  # over capacity
                used[n] += p.configs[c][1]
                hosts[n] += 1
                paid[n] += p.price[j][c]
            choice.append((n, c, value))
            rec(j + 1, cost + value)
            choice.pop()
            if n >= 0:
                room(held[n], j, types[n], -1)
                used[n] -= p.configs[c][1]
                hosts[n] -= 1
                paid[n] -= p.price[j][c]

    rec(0, fixed)
    return best[0], best[1]
