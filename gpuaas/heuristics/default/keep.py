"""The keep rules: which running jobs stay where they run at a rescheduling point.

At a rescheduling point the running jobs (`Instance.current_node` / `current_cfg`) have a
place. Moving one costs (`Instance.overhead`, `Instance.startup`; `gpuaas.pricing.move_costs`):
the `overhead` seconds of work it loses, redone at the new configuration's price; when the job
is late anyway, its tardiness over those seconds; on a node whose VM is new or resized,
`startup` seconds of that VM billed idle; and, while jobs queue, the GPU time both take from
the queue. A running job stays unless one of `KEEP_RULES`, in their order, frees it; a job
pinned by a disruption limit (`Instance.pinned`) always stays, and with no reconfiguration
cost (the paper's setting) nothing else does. Every move's cost counts `move_weight` times
(a move onto spot once: it saves its price for the job's life).

The same rules serve the paper's methods (Greedy, Randomized Greedy, Path Relinking) at the VM
share (`paper_keep`) and the default method at the fill price, with rule 3 (`grow`) its own.
Reasons and measurements: docs/reconfiguration.md, "How methods see the incumbent".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from gpuaas.heuristics.default.room import (
    largest_gpus,
    make_room,
    open_nodes,
    patient,
    queued,
)
from gpuaas.heuristics.default.settings import HYSTERESIS, MOVE_TARDINESS, REPACK_MOVES
from gpuaas.instance import Instance, least_sum, row_min
from gpuaas.per_job import share_price
from gpuaas.pricing import plan_values, preferred_configs, running_move_costs
from gpuaas.reconfiguration import delay_tardiness


class KeepRule(NamedTuple):
    """One keep rule: when it frees a running job."""

    number: int  # its number in the code and the docs (KEEP_RULES[number - 1])
    name: str  # its key in `Rules.freed`
    frees: str  # when it frees a running job


#: The keep rules, in order: a running job stays unless one of them frees it. Rule 1 frees a
#: job for its own sake; rules 2 and 4 for the common good, only where the job's cheapest move
#: is cheap (at most `HYSTERESIS` of its plan value on its configuration), rule 4 for the
#: default method also where its node's idle GPUs pay for all its jobs' moves (`idle_pays`);
#: rule 3 empties a whole node for the queue, whatever its jobs' own moves cost (`make_room`
#: takes the cheapest nodes first, and only as many as the queue needs).
KEEP_RULES: tuple[KeepRule, ...] = (
    KeepRule(
        1,
        "gain",
        "its best alternative's plan value plus the move's weighted cost beats staying by more"
        " than HYSTERESIS of its plan value on its configuration",
    ),
    KeepRule(
        2,
        "shrink",
        "jobs queue (`queued`) that cannot wait for a completion (`patient`), it holds more GPUs"
        " than its plan asks for, and `make_room` picks it to seat them",
    ),
    KeepRule(
        3,
        "grow",
        "(the default method's only) jobs queue as for rule 2, all N nodes are open, its node's"
        " VM is smaller than its GPU model's largest or every job on it prefers another GPU"
        " model, and `make_room` picks its node (whatever its jobs' own move costs)",
    ),
    KeepRule(
        4,
        "repack",
        "its node has idle GPUs and it has slack for REPACK_MOVES moves (remaining time +"
        " REPACK_MOVES x (its restart loss + start-up) before its due date): the node may be re-packed"
        " or downsized (where its move is cheap or, the default method's, the node's idle GPUs"
        " cost more until its last job ends than moving all its jobs: `idle_pays`)",
    ),
)


def _beats(value: np.ndarray, stay: np.ndarray, hysteresis: np.ndarray) -> np.ndarray:
    """Whether a plan value (move included) beats staying by more than `hysteresis` (rule 1;
    per running job)."""
    return value < stay - hysteresis * np.abs(stay) - 1e-9


class Rules(NamedTuple):
    """The keep rules evaluated once at a rescheduling point (`incumbent_rules`)."""

    values: np.ndarray  # (J, C) the plan values they used
    run: np.ndarray  # the running jobs (empty when moves are free)
    freed: dict[str, np.ndarray]  # per rule of KEEP_RULES (by name), per running job: it frees it
    stay: np.ndarray  # per running job: plan value of its current configuration
    move: np.ndarray  # (running jobs, C) move costs x `move_weight`
    hysteresis: np.ndarray  # per running job: the share of its plan value a move must save

    @property
    def own(self) -> np.ndarray:
        """Per running job: rule 1 frees it (for its own sake)."""
        return self.freed["gain"]

    @property
    def others(self) -> np.ndarray:
        """Per running job: rules 2-4 free it (for waiting jobs, re-packing)."""
        return self.freed["shrink"] | self.freed["grow"] | self.freed["repack"]


def incumbent_rules(
    instance: Instance,
    values: np.ndarray | None = None,
    grow: bool = False,
    move_weight: float = 1.0,
    pref: np.ndarray | None = None,
    price: Callable[[Instance], np.ndarray] | None = None,
    hysteresis: float = HYSTERESIS,
    move_tardiness: str = MOVE_TARDINESS,
    lost_work_only: bool = False,
) -> Rules:
    """`KEEP_RULES` for every running job: with no reconfiguration cost (the paper's setting)
    they see no running job. `grow`: rule 3 applies (the default method); `pref`: the jobs'
    preferred configurations, when the caller has them; `price`: GPU prices of plan values
    and moves (`gpuaas.pricing.fill_price` by default); `hysteresis`: the share of its plan
    value a job's move must save (rule 1) and its cheapest move may cost (rules 2 and 4), with
    `lost_work_only` (the default method's) only for jobs whose move loses work
    (`Instance.job_overhead` > 0; the others 0: `settings.HYSTERESIS`); `move_tardiness`: how a
    move's delay is charged in tardiness (`settings.MOVE_TARDINESS`)."""
    values = plan_values(instance, price) if values is None else values
    run = (
        np.flatnonzero(instance.current_cfg >= 0)
        if instance.moves_cost
        else np.zeros(0, dtype=np.int64)
    )
    cur = instance.current_cfg[run]
    stay = values[run, cur]
    loss = instance.job_overhead()[run]  # s of work each running job's move loses
    hysteresis = np.full(run.size, float(hysteresis))
    if lost_work_only:  # a move that loses no work is undone for its start-up alone
        hysteresis[loss <= 0] = 0.0
    cat = instance.catalog
    # a move onto spot saves its price difference for the job's life, not until the next
    # re-plan: weight 1 (docs/spot.md, "The default's decisions")
    weight = np.where(cat.spot[cat.cfg_vm], 1.0, move_weight)
    if move_tardiness == "each":  # each configuration's added tardiness, counted once
        move = weight[None, :] * running_move_costs(instance, run, price, tardiness=False)
        move = move + delay_tardiness(instance, run)
    else:
        move = weight[None, :] * running_move_costs(instance, run, price)  # move_costs(...)[run]
    best = least_sum(values, run, move)  # row_min(values[run] + move), in one pass
    free = ~instance.pinned[run]  # a pinned job (a disruption limit) is never freed
    none = np.zeros(run.size, dtype=bool)
    freed = {rule.name: none for rule in KEEP_RULES}
    freed["gain"] = _beats(best, stay, hysteresis) & free  # rule 1
    # rules 2-4 free a job for the common good, only where its move is cheap against its plan
    least = row_min(move)
    cheap = (least <= hysteresis * np.abs(stay)) & free
    vm = cat.cfg_vm[cur]
    node = instance.current_node[run]
    if run.size and (instance.current_cfg < 0).any():
        pref = preferred_configs(instance, values) if pref is None else pref
        queue = queued(instance, pref)
        if queue:
            # jobs that a completion seats at no cost to them wait for it
            hurry = np.where(patient(instance, pref, values, price), -1, pref)
            queue = queued(instance, hurry)
        if queue:
            # jobs queue: a running job holding more GPUs than its plan asks for may give them
            # back (rule 2), and, with every node open, a node on a small VM may be grown and
            # a node whose jobs all prefer another GPU model re-typed (rule 3: otherwise one
            # 1-GPU job holds one of the N node slots for its whole life, and nodes of a slow
            # model hold the slots the queue's plans want, while jobs queue). Rule 3 weighs a
            # node against the queue, not each job against its own plan value: with the
            # per-job gate the default cost 16-31 % more on ITP clusters 1, 5 and 9
            # (docs/reconfiguration.md, "Rule 3 weighs a node against the queue")
            mine = pref[run]
            shrink = cheap & (mine >= 0) & (cat.cfg_gpus[cur] > cat.cfg_gpus[np.maximum(mine, 0)])
            small = np.zeros(run.size, dtype=bool)
            used = np.bincount(node, minlength=instance.nodes)
            if grow and np.count_nonzero(used) >= instance.nodes:
                model = cat.gpu_model_id[vm]
                theirs = cat.gpu_model_id[cat.cfg_vm[np.maximum(mine, 0)]]
                elsewhere = (mine >= 0) & (theirs != model)
                small = free & ((cat.gpus[vm] < largest_gpus(instance)[model]) | elsewhere)
            freed["shrink"], freed["grow"] = make_room(instance, hurry, run, shrink, small, move)
    # rule 4: a node with idle GPUs may be re-packed or downsized: its jobs with slack to spare
    # for the moves are free, where their move is cheap or (the default method's) the node's
    # idle GPUs cost more than moving all its jobs
    idle_gpus = open_nodes(instance)[1]
    left = instance.times[run, cur]
    slack = instance.rel_due[run] - left
    moves = REPACK_MOVES * (loss + instance.startup)
    if grow:
        idle = idle_capacity(instance, run, node, vm, idle_gpus)
        worth = cheap | idle_pays(instance, node, vm, left, least, idle, free)
    else:
        worth = cheap
    freed["repack"] = worth & (idle_gpus[node] > 0) & (slack > moves)
    return Rules(values, run, freed, stay, move, hysteresis)


def idle_capacity(
    instance: Instance, run: np.ndarray, node: np.ndarray, vm: np.ndarray, idle_gpus: np.ndarray
) -> np.ndarray:
    """(nodes,) the idle GPUs per node that another job could use: where jobs declare vCPUs or
    memory, at most the node's GPUs times the share of its VM's vCPUs (and of its memory) its
    running jobs (`run`, on `node`, VM types `vm`) leave free. Counting a node's idle GPUs
    whose vCPUs or memory are all taken as idle re-packed Eva's pai_200 for nothing: rule 4's
    node test made it 8.1 % dearer (scripts/results/eva-setting.md). Without demands: the
    idle GPUs themselves."""
    if not instance.has_demands:
        return idle_gpus
    cat = instance.catalog
    gpus = np.zeros(instance.nodes)
    gpus[node] = cat.gpus[vm]
    idle = idle_gpus.astype(float)
    for need, have in ((instance.cpus, cat.vcpus), (instance.memory, cat.memory)):
        cap = np.zeros(instance.nodes)
        cap[node] = have[vm]
        used = np.bincount(node, weights=need[run], minlength=instance.nodes)
        share = np.where(cap > 0, np.clip(1.0 - used / np.where(cap > 0, cap, 1.0), 0.0, 1.0), 1.0)
        idle = np.minimum(idle, gpus * share)
    return idle


def idle_pays(
    instance: Instance,
    node: np.ndarray,
    vm: np.ndarray,
    left: np.ndarray,
    least: np.ndarray,
    idle_gpus: np.ndarray,
    free: np.ndarray,
) -> np.ndarray:
    """Per running job (on `node`, a VM of type `vm`, `left` seconds to go; `least`: its
    cheapest move, weighted; `idle_gpus` per node, `idle_capacity`): no job on its node is
    pinned, and the node's idle GPUs, at its VM's price per GPU until its last job ends, cost
    more than moving
    every job on it. Re-packing the node then pays where no single move is cheap against its
    job's plan value (a move counts `move_weight` times against HYSTERESIS of it: with a 600 s
    restart and 120 s start-up, only jobs with about 16 h or more left), so ITP's bursts of
    2-4 h jobs left nodes half empty and the default cost 1.3 x the never-moving upper value
    on ITP clusters 8 and 9 (scripts/results/upper.md, "Where the default loses on clusters 9
    and 8")."""
    cat = instance.catalog
    last = _maximum_at(np.zeros(instance.nodes), node, np.ascontiguousarray(left, dtype=float))
    cost = np.bincount(node, weights=least, minlength=instance.nodes)
    pinned = np.bincount(node, weights=(~free).astype(float), minlength=instance.nodes) > 0
    per_gpu = np.zeros(instance.nodes)
    per_gpu[node] = np.where(cat.gpus[vm] > 0, cat.cost[vm] / np.maximum(cat.gpus[vm], 1), 0.0)
    return ((idle_gpus * per_gpu * last > cost) & ~pinned)[node]


@njit(cache=True)
def _maximum_at(out, index, values):  # pragma: no cover - compiled
    """``np.maximum.at(out, index, values)`` in one compiled loop (numpy's ``.at`` costs about
    50 ns an element), element by element numpy's maximum (``a >= b or isnan(a) ? a : b``:
    NaN propagates, of equal values the one already there stays); returns `out`."""
    for k in range(index.shape[0]):
        n = index[k]
        a = out[n]
        b = values[k]
        out[n] = a if (a >= b or a != a) else b
    return out


def keep_incumbent(
    instance: Instance,
    values: np.ndarray | None = None,
    grow: bool = False,
    move_weight: float = 1.0,
    price: Callable[[Instance], np.ndarray] | None = None,
    move_tardiness: str = MOVE_TARDINESS,
) -> tuple[np.ndarray, np.ndarray]:
    """(pin_node, pin_cfg): running jobs kept in place (-1: free to be re-planned) by
    `KEEP_RULES` (rule 3 only with `grow`, the default method's). `move_weight` multiplies every
    move's cost in these rules; `price` prices GPU time (`gpuaas.pricing.fill_price` by default;
    `paper_keep`); `move_tardiness` as `incumbent_rules`'s."""
    rules = incumbent_rules(
        instance, values, grow, move_weight, price=price, move_tardiness=move_tardiness
    )
    return kept(instance, rules)


def paper_keep(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(pin_node, pin_cfg) that the paper's methods (Greedy, Randomized Greedy, Path Relinking)
    keep: `keep_incumbent` with GPU time at the VM share, as the bound prices it
    (`share_price`), a move weighed at its cost and no node growth (rule 3).

    Not at the fill price: the fill price is the default method's model of how its own plans
    fill VMs (the demand of the plans `preferred_configs` gives), and these methods place
    jobs by Algorithm 1's rule instead. Priced by plans they do not follow, the rules freed
    their jobs for room those plans would make: on `instances/trace-small.json` no plan
    asked for K80, so jobs Greedy had put on K80 VMs looked 2-4 times dearer than they were,
    and under load the plans asked for fewer GPUs than Greedy gives a late job; each hour the
    rules freed running jobs, Greedy gave a queued late job a whole 8-GPU VM and left the
    freed one waiting, and the nodes took turns (68 preemptions, 9 980 $ instead of 1 668 $;
    docs/reconfiguration.md, "The paper's methods keep by the share price").

    A move's delay is charged in tardiness as "late" (`settings.MOVE_TARDINESS`), the rule
    these baselines were measured with; the default method's keep rules use "each". Moving
    them to "each" is a change of the baselines, to be measured on its own (on the smoke grid
    it moved them by -34 % to +0.4 % under the default costs).
    """
    return keep_incumbent(instance, price=share_price, move_tardiness="late")


def kept(instance: Instance, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(pin_node, pin_cfg) of the running jobs no rule frees and of the pinned ones (a
    disruption limit; -1: free to be re-planned)."""
    pin_node = np.full(instance.n_jobs, -1, dtype=np.int64)
    pin_cfg = np.full(instance.n_jobs, -1, dtype=np.int64)
    # a mask, not np.union1d (a hash and a sort of every job at every event): the same
    # ascending indices
    mask = instance.pinned.copy()
    mask[rules.run[~(rules.own | rules.others)]] = True
    keep = np.flatnonzero(mask)
    pin_node[keep] = instance.current_node[keep]
    pin_cfg[keep] = instance.current_cfg[keep]
    return pin_node, pin_cfg


def pointless_moves(
    instance: Instance, rules: Rules, job_node: np.ndarray, job_cfg: np.ndarray
) -> np.ndarray:
    """(J,) bool: running jobs that rule 1 alone freed (for their own sake) and whose place in
    the solution does not deliver it (they stayed, or moved to a configuration whose plan value
    plus the move's cost does not beat staying by the rules' hysteresis). Under load such a job
    typically loses its GPUs to more pressing jobs and lands on its own configuration on
    another node. Those that stayed are counted too, so that a re-plan around the others keeps
    them (else a job ping-pongs between a K80 and an M60 node at every event). A job the
    solution leaves waiting is not counted: that preemption gives its GPUs to more pressing jobs
    (docs/reconfiguration.md, "Put back")."""
    run, stay = rules.run, rules.stay
    new = job_cfg[run]
    k = np.maximum(new, 0)
    delivered = _beats(
        rules.values[run, k] + rules.move[np.arange(run.size), k], stay, rules.hysteresis
    )
    out = np.zeros(instance.n_jobs, dtype=bool)
    out[run] = rules.own & ~rules.others & (new >= 0) & ~delivered
    return out
