"""The default method's solutions around its kept jobs: constructions, rivals and put-back.

- **Construction** (`construct`): Algorithm 1's placement with each free job on its preferred
  configuration (`gpuaas.pricing.preferred_configs`): jobs by decreasing pressure (eq. 2) best
  fit on open nodes of their GPU model, else on a new node of the model's largest VM type,
  else on a suboptimal configuration that fits, else they wait; the §3.3 postprocessing then
  downsizes VMs and hands idle GPUs to jobs, never touching a kept job or the VM type of its
  node. `iterations` such constructions (the first deterministic, the others randomised as
  Algorithm 1's) compete by f_OBJ.
- **Rivals**: with reconfiguration costs on, `rivals` Randomized Greedy constructions around
  the same kept jobs (Algorithm 1's own configuration rule) compete with the plan by f_OBJ
  with P1's reconfiguration terms, moves counting `move_weight` times their κ, and the moves
  of the jobs' data to their configurations' locations (`reconfiguration.transfer_costs`).
- **Put back** (`put_back`): a job keep rule 1 freed for its own sake that the chosen
  solution moves without the gain that freed it is kept in place, with those that stayed
  without gaining, and the others are placed again; after a re-plan (`put_back_rounds` > 1),
  not one the re-plan moves onto a slower configuration.

Reasons: docs/reconfiguration.md, "Put back"; measurements:
scripts/results/archive/reconfiguration-history.md, "The default method's settings" and "Put back".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.default.keep import Rules, pointless_moves
from gpuaas.heuristics.default.settings import RIVAL_CANDIDATES, SWAP_PROB
from gpuaas.heuristics.randomized_greedy import randomized_construction
from gpuaas.instance import Instance
from gpuaas.reconfiguration import moved, reconfiguration_terms, transfer_costs
from gpuaas.solution import Solution


def construct(
    instance: Instance,
    D: K.KernelData,
    seed: int,
    iterations: int,
    rivals: int,
    move_weight: float,
    deadline: float | None,
    judge: Instance | None = None,
) -> tuple[Solution, int]:
    """The plan's construction(s) around the kept jobs of D and, with reconfiguration costs on,
    the rivals; the solution of least f_OBJ (moves weighted by `move_weight`; on `judge`, the
    instance the spot wrapper compares plans on, if given) and the number of plan
    constructions made."""
    elite = randomized_construction(
        instance,
        D,
        K.PROXY_FOBJ,
        K.OPEN_LARGEST,
        True,
        seed=seed,
        max_it=iterations,
        size=1,
        swap_prob=SWAP_PROB,
        candidates=1,
        max_no_improve=0,
        log_interval=5.0,
        deadline=deadline,
    )
    best = Solution(instance, elite.vm[0], elite.node[0], elite.cfg[0], "incremental")
    if rivals and instance.moves_cost:
        D2 = D._replace(pref_cfg=np.full(instance.n_jobs, -1, dtype=np.int64))
        rival = randomized_construction(
            instance,
            D2,
            K.PROXY_FOBJ,
            K.OPEN_LARGEST,
            True,
            seed=seed,
            max_it=rivals,
            size=1,
            swap_prob=SWAP_PROB,
            candidates=RIVAL_CANDIDATES,
            max_no_improve=0,
            log_interval=5.0,
            deadline=deadline,
        )
        other = Solution(instance, rival.vm[0], rival.node[0], rival.cfg[0], "incremental")
        score = plan_scorer(instance, move_weight, judge)
        if score(other) < score(best):
            best = other
    return best, elite.iterations


def plan_scorer(
    instance: Instance, move_weight: float, judge: Instance | None = None
) -> Callable[[Solution], float]:
    """What plans of `instance` are compared by: f_OBJ (on `judge` if given) with P1's
    reconfiguration terms, each move counting `move_weight` times its κ, plus the moves of the
    jobs' data to their configurations' locations. The weights are computed once, for every
    plan the returned function scores."""
    on = judge if judge is not None else instance
    kappa = (move_weight - 1.0) * reconfiguration_terms(instance)[0]
    data = transfer_costs(instance) if instance.catalog.places else None

    def score(sol: Solution) -> float:
        f = Solution(on, sol.node_vm, sol.job_node, sol.job_cfg).f_obj
        if data is not None:  # a job's data moved to its configuration's location
            run = np.flatnonzero(sol.job_cfg >= 0)
            f += data[run, sol.job_cfg[run]].sum()
        return f + kappa[moved(instance, sol.job_node, sol.job_cfg)].sum()

    return score


def put_back(
    instance: Instance, rules: Rules, D: K.KernelData, best: Solution, spare_slower: bool = False
) -> tuple[K.KernelData, int]:
    """(D', put): D with the jobs `pointless_moves` finds in `best` pinned where they run (those
    it moved and those that stayed without gaining) and the number of those it moved, `put`;
    a re-plan is needed only when `put` > 0. `spare_slower`: a job `best` moves onto a slower
    configuration is not put back (the put-back after a re-plan, `plan`'s `put_back_rounds`):
    it gives its faster GPUs to the jobs the re-plan gave them to. Pinned back on them, ITP
    cluster 5's bursts queued longer: 1.022 x the default's cost at eight solver seeds, against
    0.981 x sparing them (scripts/results/decision-interval.md, "Why it churns")."""
    back = pointless_moves(instance, rules, best.job_node, best.job_cfg)
    if spare_slower:
        rows = np.arange(instance.n_jobs)
        now = instance.times[rows, np.maximum(instance.current_cfg, 0)]
        back &= ~(instance.times[rows, np.maximum(best.job_cfg, 0)] > now)
    put = back & moved(instance, best.job_node, best.job_cfg)
    D = D._replace(
        pin_node=np.where(back, instance.current_node, D.pin_node),
        pin_cfg=np.where(back, instance.current_cfg, D.pin_cfg),
    )
    return D, int(put.sum())


def undo_relabels(
    instance: Instance, sol: Solution, move_weight: float, judge: Instance | None = None
) -> Solution:
    """`sol` with the moves undone that only relabel nodes (the option `unmove`): a running
    job the plan puts on its own configuration on another node of its VM type goes back to
    the node it runs on, where that node keeps its type and has room for it, or changes
    places with a job the plan starts or moves there that fits where it was, wherever that
    lowers `plan_scorer`'s score; a node left empty closes. Such a move loses the job's restart for
    nothing when the plan's packing could keep it: a job freed by keep rule 1 and left
    waiting by the first construction is placed again by the re-plan on its own
    configuration elsewhere while a newcomer takes its GPUs, at every event under high
    arrivals (scripts/results/decision-interval.md, "Why it churns"). Instances whose jobs
    declare vCPUs or memory are left to `gpuaas.resources.consolidate`, whose put-back moves
    such jobs back."""
    if instance.has_demands:
        return sol
    cat = instance.catalog
    node_vm, job_node, job_cfg = sol.node_vm.copy(), sol.job_node.copy(), sol.job_cfg.copy()
    on = job_cfg >= 0
    used = np.bincount(job_node[on], weights=cat.cfg_gpus[job_cfg[on]], minlength=instance.nodes)
    here, was = instance.current_node, instance.current_cfg
    movers = (was >= 0) & ~instance.pinned & (job_cfg == was) & (job_node != here) & on
    if not movers.any():
        return sol
    score = plan_scorer(instance, move_weight, judge)
    best = score(sol)
    undone = 0
    for x in np.flatnonzero(movers).tolist():
        a, b, c = int(here[x]), int(job_node[x]), int(was[x])
        v, g = int(cat.cfg_vm[c]), int(cat.cfg_gpus[c])
        if node_vm[a] != v or node_vm[b] != v:
            continue
        room_a, room_b = cat.gpus[v] - used[a], cat.gpus[v] - used[b]
        if room_a >= g:
            others = [-1]  # back alone
        else:  # or in place of a job the plan brings to a, which fits where x was
            brought = np.flatnonzero((job_node == a) & (here != a))
            gy = cat.cfg_gpus[job_cfg[brought]]
            others = brought[(room_a + gy >= g) & (room_b + g >= gy)].tolist()
        for y in others:
            n2, vm2 = job_node.copy(), node_vm.copy()
            n2[x] = a
            if y >= 0:
                n2[y] = b
            if not (n2 == b).any():
                vm2[b] = -1
            value = score(Solution(instance, vm2, n2, job_cfg))
            if value < best:
                gy = cat.cfg_gpus[job_cfg[y]] if y >= 0 else 0
                used[a] += g - gy
                used[b] += gy - g
                best, node_vm, job_node = value, vm2, n2
                undone += 1
                break
    if not undone:
        return sol
    return Solution(instance, node_vm, job_node, job_cfg, sol.method, sol.stats)
