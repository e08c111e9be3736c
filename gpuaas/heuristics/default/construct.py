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
  without gaining, and the others are placed again.

Reasons: docs/reconfiguration.md, "Put back"; measurements:
scripts/results/archive/reconfiguration-history.md, "The default method's settings" and "Put back".
"""

from __future__ import annotations

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
        kappa = (move_weight - 1.0) * reconfiguration_terms(instance)[0]
        on = judge if judge is not None else instance
        # a job's data moved to its configuration's location
        data = transfer_costs(instance) if instance.catalog.places else None

        def score(sol: Solution) -> float:
            f = Solution(on, sol.node_vm, sol.job_node, sol.job_cfg).f_obj
            if data is not None:
                run = np.flatnonzero(sol.job_cfg >= 0)
                f += data[run, sol.job_cfg[run]].sum()
            return f + kappa[moved(instance, sol.job_node, sol.job_cfg)].sum()

        if score(other) < score(best):
            best = other
    return best, elite.iterations


def put_back(
    instance: Instance, rules: Rules, D: K.KernelData, best: Solution
) -> tuple[K.KernelData, int]:
    """(D', put): D with the jobs `pointless_moves` finds in `best` pinned where they run (those
    it moved and those that stayed without gaining) and the number of those it moved, `put`;
    a re-plan is needed only when `put` > 0."""
    back = pointless_moves(instance, rules, best.job_node, best.job_cfg)
    put = back & moved(instance, best.job_node, best.job_cfg)
    D = D._replace(
        pin_node=np.where(back, instance.current_node, D.pin_node),
        pin_cfg=np.where(back, instance.current_cfg, D.pin_cfg),
    )
    return D, int(put.sum())
