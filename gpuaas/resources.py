"""CPU and memory beside GPUs for the methods that pack by GPUs alone (docs/design.md, "CPU and
memory beside GPUs"): `fit` makes any method's Solution hold the "together" rule.

The "alone" rule is the Instance's (a configuration that cannot hold its job is inf), so a
method's plan can break only the sum over a node's jobs. `fit` keeps, on each node over its
type's vCPUs or memory, its pinned jobs, then the jobs that run there now, then the others by
due date, as long as they fit; each job it takes off goes to the open node where it
finishes soonest within the GPUs, vCPUs and memory left, else to a closed node slot on the VM
type that costs least for its time, else waits. A plan that fits is returned as it is, so
instances without demands and the MILP (whose rows hold the rule) are untouched.

`consolidate` (the default method's step 8) then re-packs a plan by every resource, judged
by the VM time each node wastes, empty or lost to co-location slowdown (`_Judge`).
"""

from __future__ import annotations

import numpy as np

from gpuaas.colocation import Colocation
from gpuaas.instance import DEMANDS, Instance
from gpuaas.per_job import at
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
    node_vm, job_node, job_cfg = sol.node_vm.copy(), sol.job_node.copy(), sol.job_cfg.copy()
    need, cap = _demands(inst)
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


def _demands(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(J, 2) the jobs' demands and (V, 2) the VM types' capacities, in `DEMANDS`' order."""
    cat = inst.catalog
    need = np.stack([getattr(inst, d) for d in DEMANDS], axis=1)
    cap = np.stack([getattr(cat, c) for c in DEMANDS.values()], axis=1)
    return need, cap


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
    gpus_used, held = _held(inst, need, job_node, job_cfg)
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
                for c in cat.configs(v):
                    if cat.cfg_gpus[c] > free:
                        continue  # (v, 1..free), or (v, 0) on a GPU-less type
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


def consolidate(
    sol: Solution, move_weight: float = 1.0, colocation: Colocation | None = None
) -> Solution:
    """`sol` fitted (`fit`), then re-packed by every resource where jobs declare demands (a
    no-op, `sol` itself, unless the instance declares demands).

    The methods pack by GPUs, so a job that needs a VM's vCPUs or memory more than its GPUs may
    sit alone on a VM it fills a quarter of, and holes too small for anyone last for days. A
    local search fixes that, judged by `_Judge`: P1$ (`gpuaas.objective.dollars`, moves at the
    cost of change, `gpuaas.reconfiguration`) with the VM time each node wastes (left empty or,
    given a `colocation` table, `gpuaas.colocation.Colocation`, lost to slowdown) until its
    jobs change, in place of P1$'s H s of unfilled price. Its steps: put a running job the
    plan moves back where it runs (often a job `fit` took off a node); else, the least-filled
    open node first (its largest share of GPUs, vCPUs or memory), close it by moving its jobs
    into the room the other open nodes have left, or put them on one cheaper VM type that
    holds them; else move one job to another open node or alone onto a new VM (the best
    such move); else exchange two jobs of two nodes; else place the jobs of the 2-4
    least-filled nodes again (`_repack`, the best k). The first step that lowers the judge
    both as it is and with each move's cost weighted by `move_weight` (the default method's
    `REPACK_MOVE_WEIGHT`) is taken, and the search starts again. Pinned jobs never
    move; each step lowers the judge, so the plan never judges worse than the fitted one.
    """
    inst = sol.instance
    if not inst.has_demands:
        return sol
    sol = fit(sol)
    from gpuaas.objective import dollar_terms  # objective imports per_job, pricing: no cycle

    need, cap = _demands(inst)
    judge = _Judge(inst, dollar_terms(inst), need, cap, colocation)
    node_vm, job_node, job_cfg = sol.node_vm.copy(), sol.job_node.copy(), sol.job_cfg.copy()
    best = judge(node_vm, job_node, job_cfg)
    steps = 0
    for _ in range(4 * inst.nodes + 4 * inst.n_jobs + 4):  # each step lowers the judge: bounded
        back = _first_better(
            judge, _put_back(inst, need, cap, node_vm, job_node, job_cfg), best, move_weight
        )
        if back is not None:
            (node_vm, job_node, job_cfg), best = back
            steps += 1
            continue
        taken = None
        for n in _by_fill(inst, need, cap, node_vm, job_node, job_cfg).tolist():
            jobs = np.flatnonzero(job_node == n)
            if inst.pinned[jobs].any():
                continue
            cands = (
                _close(
                    inst, judge.terms, need, cap, n, jobs, node_vm, job_node, job_cfg, move_weight
                ),
                *_cheaper(inst, judge.terms, need, cap, n, jobs, node_vm, job_node, job_cfg),
            )
            taken = _first_better(judge, cands, best, move_weight)
            if taken is not None:
                break
        if taken is None:
            cands = _relocate(inst, need, cap, node_vm, job_node, job_cfg)
            taken = _least_better(judge, cands, best, move_weight)
        if taken is None:
            cands = _swap(inst, need, cap, node_vm, job_node, job_cfg)
            taken = _first_better(judge, cands, best, move_weight)
        if taken is None:
            cands = _repack(inst, judge, need, cap, node_vm, job_node, job_cfg, move_weight)
            taken = _least_better(judge, cands, best, move_weight)
        if taken is None:
            break
        (node_vm, job_node, job_cfg), best = taken
        steps += 1
    if not steps:
        return sol
    stats = {**sol.stats, "consolidated": steps}
    return Solution(inst, node_vm, job_node, job_cfg, sol.method, stats)


class _Judge:
    """What `consolidate` minimises, as (everything but the moves, the moves' cost): P1$'s run
    and wait values and moves (`gpuaas.objective.dollars`), with its unfilled-price term
    replaced by the VM time a node wastes until its jobs change.

    A node of VM type v wastes c_v x (1 - sum of s_j x share_j) per second, share_j the largest
    share of v's GPUs, vCPUs or memory job j holds and s_j its speed there
    (`gpuaas.colocation.Colocation.speeds`; 1 without a table): the part of the VM left
    empty or lost to co-location slowdown. It lasts until the first of the node's jobs ends
    (at least H): P1$ charges an empty part H s only, as if the next plan filled it, which
    a job's vCPUs or memory can keep anyone else from for days.
    """

    def __init__(
        self,
        inst: Instance,
        terms,
        need: np.ndarray,
        cap: np.ndarray,
        colocation: Colocation | None,
    ):
        cat = inst.catalog
        self.inst, self.terms, self.colocation = inst, terms, colocation
        v = cat.cfg_vm
        with np.errstate(invalid="ignore", divide="ignore"):
            res = need[:, None, :] / cap[v][None, :, :]  # (J, C, R)
            res = np.where(np.isfinite(res), res, 0.0)
            gpu = np.where(cat.gpus[v] > 0, cat.cfg_gpus / cat.gpus[v], 0.0)  # 0 if GPU-less
        self.share = np.maximum(gpu[None, :], res.max(axis=2))

    def __call__(self, node_vm, job_node, job_cfg) -> tuple[float, float]:
        inst, terms = self.inst, self.terms
        run = np.flatnonzero(job_cfg >= 0)
        base = float(terms.run[run, job_cfg[run]].sum()) + float(terms.wait[job_cfg < 0].sum())
        speed = (
            np.ones(inst.n_jobs) if self.colocation is None else self.colocation.speeds(job_node)
        )
        used = np.bincount(
            job_node[run], weights=speed[run] * self.share[run, job_cfg[run]], minlength=inst.nodes
        )
        first = np.full(inst.nodes, np.inf)
        np.minimum.at(first, job_node[run], inst.times[run, job_cfg[run]] / speed[run])
        is_open = np.flatnonzero(node_vm >= 0)
        waste = inst.catalog.cost[node_vm[is_open]] * np.maximum(0.0, 1.0 - used[is_open])
        base += float((waste * np.clip(first[is_open], inst.H, np.inf)).sum())
        if not inst.moves_cost:
            return base, 0.0
        moved = (job_node != inst.current_node) | (job_cfg != inst.current_cfg)
        return base, float(terms.kappa[moved].sum() + terms.sigma[is_open, node_vm[is_open]].sum())


def _first_better(judge: _Judge, cands, best, move_weight: float):
    """The first candidate (node_vm, job_node, job_cfg) of `cands` (None: skipped) whose P1$
    beats `best` (`_better`), with its P1$; None if none does."""
    for cand in cands:
        if cand is not None:
            cost = judge(*cand)
            if _better(cost, best, move_weight):
                return cand, cost
    return None


def _least_better(judge: _Judge, cands, best, move_weight: float):
    """The candidate of `cands` of least P1$ with moves weighted by `move_weight` among those
    that beat `best` (`_better`), with its P1$; None if none does."""
    taken = None
    for cand in cands:
        cost = judge(*cand)
        if _better(cost, best, move_weight) and (
            taken is None or _better(cost, taken[1], move_weight)
        ):
            taken = cand, cost
    return taken


def _better(new: tuple[float, float], old: tuple[float, float], move_weight: float) -> bool:
    """Whether `new` lowers P1$ both as it is and with the moves weighted by `move_weight`."""
    eps = 1e-9 * max(1.0, abs(old[0] + old[1]))
    return (
        new[0] + new[1] < old[0] + old[1] - eps
        and new[0] + move_weight * new[1] < old[0] + move_weight * old[1] - eps
    )


def _by_fill(inst, need, cap, node_vm, job_node, job_cfg) -> np.ndarray:
    """The open nodes, least filled first (each node's largest share of GPUs, vCPUs, memory)."""
    cat = inst.catalog
    is_open = np.flatnonzero(node_vm >= 0)
    v = node_vm[is_open]
    gpus, held = _held(inst, need, job_node, job_cfg)
    share = gpus[is_open] / np.maximum(cat.gpus[v], 1)
    for k in range(need.shape[1]):
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(
                np.isfinite(cap[v, k]) & (cap[v, k] > 0), held[is_open, k] / cap[v, k], 0.0
            )
        share = np.maximum(share, s)
    return is_open[np.argsort(share, kind="stable")]


def _room(inst, need, cap, node_vm, job_node, job_cfg) -> tuple[np.ndarray, np.ndarray]:
    """Each node's free GPUs (N,) and free vCPUs and memory (N, 2) under its VM type."""
    v = np.maximum(node_vm, 0)
    gpus, held = _held(inst, need, job_node, job_cfg)
    return inst.catalog.gpus[v] - gpus, cap[v] * (1.0 + 1e-9) - held


def _held(inst, need, job_node, job_cfg) -> tuple[np.ndarray, np.ndarray]:
    """The GPUs (N,) and the vCPUs and memory (N, 2) each node's placed jobs hold."""
    placed = job_node >= 0
    gpus = np.bincount(
        job_node[placed], weights=inst.catalog.cfg_gpus[job_cfg[placed]], minlength=inst.nodes
    )
    held = np.zeros((inst.nodes, need.shape[1]))
    np.add.at(held, job_node[placed], need[placed])
    return gpus, held


def _close(inst, terms, need, cap, n, jobs, node_vm, job_node, job_cfg, move_weight):
    """The plan with node n closed and its jobs in the room of the other open nodes, each on as
    many GPUs as now where it adds least to P1$, the largest demand first; None where one does
    not fit."""
    cat = inst.catalog
    was = job_cfg
    node_vm, job_node, job_cfg = node_vm.copy(), job_node.copy(), job_cfg.copy()
    job_node[jobs] = job_cfg[jobs] = -1
    node_vm[n] = -1
    gpus, free = _room(inst, need, cap, node_vm, job_node, job_cfg)
    placed = job_node >= 0
    paid = np.bincount(
        job_node[placed], weights=at(terms.price, placed, job_cfg[placed]), minlength=inst.nodes
    )
    targets = np.flatnonzero(node_vm >= 0)
    for j in jobs[np.lexsort(need[jobs].T[::-1])[::-1]].tolist():
        best = (np.inf, -1, -1)
        g = int(cat.cfg_gpus[was[j]])
        for m in targets.tolist():
            if not np.all(need[j] <= free[m]):
                continue
            v = int(node_vm[m])
            if g > gpus[m] or not cat.has_config(v, g):
                continue
            if not np.isfinite(terms.run[j, c := cat.config(v, g)]):
                continue
            unfilled = max(0.0, float(cat.cost[v]) - float(paid[m]))
            stays = inst.current_node[j] == m and inst.current_cfg[j] == c
            key = (
                terms.run[j, c]
                - inst.H * min(float(at(terms.price, j, c)), unfilled)
                + (0.0 if stays else move_weight * terms.kappa[j])
            )
            if key < best[0]:
                best = (key, m, c)
        if best[1] < 0:
            return None
        _, m, c = best
        job_node[j], job_cfg[j] = m, c
        gpus[m] -= cat.cfg_gpus[c]
        free[m] -= need[j]
        paid[m] += at(terms.price, j, c)
    return node_vm, job_node, job_cfg


def _cheaper(inst, terms, need, cap, n, jobs, node_vm, job_node, job_cfg):
    """Plans with node n on a cheaper VM type that holds its jobs (each on its fastest
    configuration there that fits, the largest demand first), cheapest type first."""
    cat = inst.catalog
    now = int(node_vm[n])
    total = need[jobs].sum(axis=0)
    for v in np.argsort(cat.cost, kind="stable").tolist():
        if cat.cost[v] >= cat.cost[now]:
            break
        if inst.room[v] < 1 or not np.all(total <= cap[v] * (1.0 + 1e-9)):
            continue
        out_cfg = job_cfg.copy()
        left = int(cat.gpus[v])
        for j in jobs[np.lexsort(need[jobs].T[::-1])[::-1]].tolist():
            cfgs = [
                c
                for c in cat.configs(v)
                if cat.cfg_gpus[c] <= left and np.isfinite(terms.run[j, c])
            ]
            if not cfgs:
                break
            c = min(cfgs, key=lambda c: terms.run[j, c])
            out_cfg[j] = c
            left -= int(cat.cfg_gpus[c])
        else:
            out_vm = node_vm.copy()
            out_vm[n] = v
            yield out_vm, job_node.copy(), out_cfg


def _put_back(inst, need, cap, node_vm, job_node, job_cfg):
    """Plans with one running job the plan moves back where it runs now, where that node is
    open on its present VM type with room for it, or free (reopened on that type)."""
    cat = inst.catalog
    gpus, free = _room(inst, need, cap, node_vm, job_node, job_cfg)
    run = (inst.current_cfg >= 0) & ~inst.pinned
    moved = run & ((job_node != inst.current_node) | (job_cfg != inst.current_cfg))
    for j in np.flatnonzero(moved).tolist():
        n, c = int(inst.current_node[j]), int(inst.current_cfg[j])
        v = int(cat.cfg_vm[c])
        g, room = int(cat.cfg_gpus[c]), need[j] <= free[n]
        if job_node[j] == n:  # on its node on another configuration: its own GPUs come back
            g -= int(cat.cfg_gpus[job_cfg[j]])
            room = np.ones(need.shape[1], dtype=bool)
        if node_vm[n] == v and g <= gpus[n] and np.all(room):
            out_node, out_cfg = job_node.copy(), job_cfg.copy()
            out_node[j], out_cfg[j] = n, c
            yield _closed_empty(inst, node_vm.copy(), out_node), out_node, out_cfg
        elif node_vm[n] < 0 and np.all(need[j] <= cap[v] * (1.0 + 1e-9)):
            out_vm, out_node, out_cfg = node_vm.copy(), job_node.copy(), job_cfg.copy()
            out_vm[n], out_node[j], out_cfg[j] = v, n, c
            yield _closed_empty(inst, out_vm, out_node), out_node, out_cfg


def _closed_empty(inst: Instance, node_vm: np.ndarray, job_node: np.ndarray) -> np.ndarray:
    """`node_vm` with the open nodes that host no job closed (in place)."""
    count = np.bincount(job_node[job_node >= 0], minlength=inst.nodes)
    node_vm[(node_vm >= 0) & (count == 0)] = -1
    return node_vm


def _cheapest(inst, need, cap, g_of, members) -> int:
    """The cheapest VM type that may open with room for the jobs `members` on their GPU
    counts `g_of` (each with a configuration there, of its GPU model); -1 if none."""
    cat = inst.catalog
    gpus = sum(g_of[j] for j in members)
    demand = need[members].sum(axis=0)
    best = -1
    for v in range(cat.n_vms):
        if best >= 0 and cat.cost[v] >= cat.cost[best]:
            continue
        if cat.gpus[v] < gpus or inst.room[v] < 1 or np.any(demand > cap[v] * (1.0 + 1e-9)):
            continue
        if all(
            cat.has_config(v, g_of[j]) and np.isfinite(inst.times[j, cat.config(v, g_of[j])])
            for j in members
        ):
            best = v
    return best


def _relocate(inst, need, cap, node_vm, job_node, job_cfg):
    """Plans with one placed job (not pinned) moved, on as many GPUs as now, to another open
    node with room for it, or alone onto a closed node slot on the cheapest VM type that holds
    it (its node closed if it leaves it empty)."""
    cat = inst.catalog
    gpus, free = _room(inst, need, cap, node_vm, job_node, job_cfg)
    targets = np.flatnonzero(node_vm >= 0).tolist()
    closed = np.flatnonzero(node_vm < 0)
    for j in np.flatnonzero((job_cfg >= 0) & ~inst.pinned).tolist():
        g, here = int(cat.cfg_gpus[job_cfg[j]]), int(job_node[j])
        alone = int((job_node == here).sum()) == 1
        for m in targets:
            if m == here or g > gpus[m] or not np.all(need[j] <= free[m]):
                continue
            if not cat.has_config(int(node_vm[m]), g):
                continue
            c = cat.config(int(node_vm[m]), g)
            if not np.isfinite(inst.times[j, c]):
                continue
            out_vm, out_node, out_cfg = node_vm.copy(), job_node.copy(), job_cfg.copy()
            out_node[j], out_cfg[j] = m, c
            if alone:
                out_vm[here] = -1
            yield out_vm, out_node, out_cfg
        if alone or not closed.size:
            continue
        v = _cheapest(inst, need, cap, {j: g}, [j])
        if v >= 0:
            n = int(closed[0])
            out_vm, out_node, out_cfg = node_vm.copy(), job_node.copy(), job_cfg.copy()
            out_vm[n], out_node[j], out_cfg[j] = v, n, cat.config(v, g)
            yield out_vm, out_node, out_cfg


def _repack(inst, judge, need, cap, node_vm, job_node, job_cfg, move_weight, most=4):
    """Plans with the jobs of the k least-filled open nodes (k = 2 .. `most`, nodes without
    pinned jobs) placed again one by one, the largest share of its VM first, each where the
    judge (moves weighted) is least: on an open node with room or alone on a new VM of the
    cheapest type that holds it (on its own node if that was among the k: it may stay).
    Closing one node at a time (`_close`) cannot free a VM whose jobs fit only once the
    others' jobs are shuffled too."""
    cat = inst.catalog
    order = [
        n
        for n in _by_fill(inst, need, cap, node_vm, job_node, job_cfg).tolist()
        if not inst.pinned[job_node == n].any()
    ]
    for k in range(2, min(most, len(order)) + 1):
        out_vm, out_node, out_cfg = node_vm.copy(), job_node.copy(), job_cfg.copy()
        jobs = np.flatnonzero(np.isin(job_node, order[:k]))
        g_of = {j: int(cat.cfg_gpus[job_cfg[j]]) for j in jobs.tolist()}
        out_vm[order[:k]] = -1
        out_node[jobs] = out_cfg[jobs] = -1
        for j in sorted(g_of, key=lambda j: (-judge.share[j, job_cfg[j]], j)):
            g = g_of[j]
            gpus, free = _room(inst, need, cap, out_vm, out_node, out_cfg)
            cands = []
            for m in np.flatnonzero(out_vm >= 0).tolist():
                if g > gpus[m] or not np.all(need[j] <= free[m]):
                    continue
                if not cat.has_config(int(out_vm[m]), g):
                    continue
                c = cat.config(int(out_vm[m]), g)
                if np.isfinite(inst.times[j, c]):
                    cands.append((m, int(out_vm[m]), c))
            v = _cheapest(inst, need, cap, {j: g}, [j])
            closed = np.flatnonzero(out_vm < 0)
            if v >= 0 and closed.size:
                n = int(closed[0])
                here = int(inst.current_node[j])
                if here in order[:k] and out_vm[here] < 0:
                    n = here  # where it runs: it stays if the type does
                cands.append((n, v, cat.config(v, g)))
            best = None
            for m, v, c in cands:
                was = out_vm[m]
                out_vm[m], out_node[j], out_cfg[j] = v, m, c
                base, moves = judge(out_vm, out_node, out_cfg)
                out_vm[m] = was
                out_node[j] = out_cfg[j] = -1
                key = base + move_weight * moves
                if best is None or key < best[0]:
                    best = (key, m, v, c)
            if best is None:
                break
            _, m, v, c = best
            out_vm[m], out_node[j], out_cfg[j] = v, m, c
        else:
            yield out_vm, out_node, out_cfg


def _swap(inst, need, cap, node_vm, job_node, job_cfg):
    """Plans with two placed jobs (not pinned) of two open nodes exchanged, each on its GPU
    count there, where both nodes hold them; the least-filled node's jobs first."""
    cat = inst.catalog
    gpus, free = _room(inst, need, cap, node_vm, job_node, job_cfg)
    movable = (job_cfg >= 0) & ~inst.pinned
    order = _by_fill(inst, need, cap, node_vm, job_node, job_cfg).tolist()
    for a, n in enumerate(order):
        for m in order[a + 1 :]:
            for i in np.flatnonzero(movable & (job_node == n)).tolist():
                gi = int(cat.cfg_gpus[job_cfg[i]])
                if not cat.has_config(int(node_vm[m]), gi):
                    continue
                ci = cat.config(int(node_vm[m]), gi)
                if not np.isfinite(inst.times[i, ci]):
                    continue
                for j in np.flatnonzero(movable & (job_node == m)).tolist():
                    gj = int(cat.cfg_gpus[job_cfg[j]])
                    if (
                        gi - gj > gpus[m]
                        or gj - gi > gpus[n]
                        or np.any(need[i] - need[j] > free[m])
                        or np.any(need[j] - need[i] > free[n])
                        or not cat.has_config(int(node_vm[n]), gj)
                        or not np.isfinite(inst.times[j, cj := cat.config(int(node_vm[n]), gj)])
                    ):
                        continue
                    out_node, out_cfg = job_node.copy(), job_cfg.copy()
                    out_node[i], out_cfg[i], out_node[j], out_cfg[j] = m, ci, n, cj
                    yield node_vm.copy(), out_node, out_cfg
