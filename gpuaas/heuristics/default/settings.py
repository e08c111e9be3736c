"""The default method's tuned constants, each named once with the measurement that chose it.

The method's options (`incremental(..., iterations=, queued_iterations=, rivals=, move_weight=,
spot_margin=)`) default to these; the others are fixed. The fill price's `FILL_ROUNDS` lives
with the prices the judge shares (`gpuaas.pricing`); the polish's `POLISH_NODES` with the MILP polish
(`gpuaas.milp.polish`). Figures: docs/reconfiguration.md (the rules and why) and
scripts/results/archive/reconfiguration-history.md (the measurement tables, a frozen record).
"""

from __future__ import annotations

#: constructions per rescheduling point: the first is deterministic, the others randomise the
#: pressure order and the best-fit node as Algorithm 1 does; the best f_OBJ (P1a) is returned.
#: Without a queue, extra constructions cost 0.1-0.2 % (scripts/results/archive/reconfiguration-history.md,
#: "The default method's settings")
ITERATIONS = 1

#: ... and, with reconfiguration costs off, while jobs queue for capacity (`room.queued`), where
#: which jobs get the scarce nodes is what f_OBJ can tell apart: -1.7 % under high arrivals at
#: N = 10, -0.8 % at N = 20; 10 and 50 measured 1.193 and 1.188 against 20's 1.189. With costs
#: on (where the rivals compete) -0.5 to +0.4 %, +1.2 % at N = 100, so not made there
#: (scripts/results/archive/reconfiguration-history.md, "The default method's settings")
QUEUED_ITERATIONS = 20

#: with reconfiguration costs on, Randomized Greedy constructions (Algorithm 1 with its own
#: configuration rule, around the same kept jobs) that compete with the plan by f_OBJ including
#: P1's reconfiguration terms: at N = 10, 1.089 instead of 1.107 without them (exponential
#: arrivals), 1.40 instead of 1.43 (high); 50 measured better than 10 and 0; at zero costs they do
#: not help (scripts/results/archive/reconfiguration-history.md, "The default method's settings")
RIVALS = 50

#: the rivals' Randomized Greedy settings: its defaults (`randomized_greedy`'s `swap_prob` and
#: `candidates`, heuristics/README.md), not tuned for the default method
SWAP_PROB = 0.2
RIVAL_CANDIDATES = 3

#: the weight on a move's cost (its lost work, start-up and queue delay) in the keep rules and
#: in the choice between plan and rivals. A move priced at its immediate cost alone ignores that
#: the gain it buys lasts only until the next event re-plans, so a move must pay several times
#: its cost: from 1 to 4 the moves fall by a third at the same cost (N = 20, exponential
#: arrivals); 8 and more cost money (scripts/results/archive/reconfiguration-history.md, "How often to
#: move")
MOVE_WEIGHT = 4.0

#: the weight on a move's cost in the re-packing by vCPUs and memory (step 8,
#: `gpuaas.resources.consolidate`): once, not `MOVE_WEIGHT` times, since its judge already
#: counts the gain until the node's jobs change, not until the next event. Eva's pai_200 in
#: Eva's simulator: 25 568 $ at 1 against 25 803 $ at 4 (scripts/results/eva-setting.md,
#: "Wasted VM time and co-location")
REPACK_MOVE_WEIGHT = 1.0

#: a running job moves for its own sake (keep rule 1) only when that saves more than this share
#: of its plan value on the current configuration (besides the move's cost), and rules 2-4 free
#: it only where its cheapest move costs at most this share: without it, jobs whose
#: configurations cost about the same (K80 vs M60 VMs) ping-pong between them at every event
#: (scripts/results/archive/reconfiguration-history.md, "Where the moves come from, and why they
#: stay"). The default method asks it only of a job whose move loses work: one that loses none
#: (restart 0) is undone for its start-up alone, which the rules charge MOVE_WEIGHT times, and
#: there 0 was cheaper on every held-out normal-load cell (N = 10, 20, 50), where 0.05 lost to
#: Path Relinking or Randomized Greedy by 0.9-1.3 %. With a restart 0 is cheaper under normal
#: load too but 1.0065 x on the ITP clusters (scripts/results/default-settings.md)
HYSTERESIS = 0.05

#: how the keep rules charge the tardiness a move's delay (its lost work redone and a new VM's
#: start-up) adds: "each", each configuration's own added tardiness, counted once
#: (`gpuaas.reconfiguration.delay_tardiness`); or "late", the job's weight x the delay only where
#: the job is late on every configuration, counted `MOVE_WEIGHT` times with the rest of the move
#: (as the P1$ objective's kappa does), the rule until "each" measured 0.962 x it on the ITP
#: clusters: "late" misses a move that makes an on-time job late. Measured in
#: scripts/results/default-settings.md
MOVE_TARDINESS = "each"
MOVE_TARDINESS_CHOICES = ("late", "each")

#: keep rule 4 (re-pack) frees a job on a node with idle GPUs only with slack for this many
#: moves (remaining time + REPACK_MOVES x (its restart loss + start-up) <= due date); the rule as a whole
#: cut the cost from 1.256 to 1.087 x the bound at N = 20 (exponential arrivals;
#: scripts/results/archive/reconfiguration-history.md, "Where the moves come from, and why they stay")
REPACK_MOVES = 2.0

#: branch-and-bound nodes of the MILP polish where it frees the whole point (at most
#: `gpuaas.milp.polish.POLISH_NODES` node slots): HiGHS closes the 2.2-2.5 % the construction
#: leaves at N = 5 within 10 nodes, and a node limit, unlike seconds, does not depend on the
#: machine's load (formulations/P1D.md, "Who decides by what")
AUTO_POLISH_NODES = 500

#: a plan that takes spot VMs while the run holds none must be expected to cost this share of
#: what its spot VMs would cost on demand until the next decision (H s; at most what the whole
#: on-demand plan spends then) less in P1$, or the on-demand plan goes on, and a job waits for
#: spot only to save this share of its own on-demand configuration's H s
#: (`spot_wrapper.with_spot`; the option `spot_margin`). Entries
#: that saved a few dollars each changed the course of the whole run (replayed V100 capacity
#: flaps within the hour; under the model spot was re-entered after every partial loss): 0 ->
#: 0.05 -> 0.2 of the fleet's hour, replayed dearer than 1.005 x on demand on 4 -> 3 -> 0 of 12
#: held-out traces. A share of the fleet's hour kept every newcomer of a large on-demand fleet
#: off spot (SkyNomad's V100 zones: 0.97 x on demand where baselines reached 0.95); of the VMs
#: entering spot, with a change of capacity moving no job on demand (`apply.reschedule`), the
#: zone grid falls to 0.94 x (docs/spot.md, "Of the VMs entering spot, not of the fleet"). The
#: whole P1$ is not the basis: two plans differ by their next H s alone, and 1 % of a 48-hour
#: job's P1$ priced Can't Be Late's single job out of spot
SPOT_MARGIN = 0.2

#: Can't Be Late's switch point for loose deadlines (its §6.1, §A.8): below this ratio of work
#: left to time left a job takes spot whenever it can and waits otherwise (docs/spot.md, "The
#: default's decisions")
SWITCH = 0.7

#: the re-plans the put-back may make (`construct.put_back`; at least 1). 1: the jobs the first
#: construction moved without the gain that freed them are put back and the rest planned once
#: more. More: the jobs a re-plan moves without that gain are put back in turn (but not one it
#: moves onto a slower configuration, whose GPUs it gave to others), up to this many re-plans. A
#: job the first construction leaves waiting is not put back (its GPUs went to more pressing
#: jobs), but a re-plan around the put-back jobs often places it again on its own configuration
#: on another node: a move that gains nothing and loses its restart's work, and under high
#: arrivals at N = 300 each job moved so 24-28 times. 3 re-plans: 0.80-0.91 x there, up to
#: 1.026 x at N = 10, 1.0001 x summed on the held-out normal-load grid, 0.983 x on ITP clusters
#: 1, 5, 8, 9, 10 at eight solver seeds (scripts/results/decision-interval.md, "Why it
#: churns"); not yet the default, whose committed results are all of 1
PUT_BACK_ROUNDS = 1

#: undo the moves that only relabel nodes (`construct.undo_relabels`): a running job the plan
#: puts on its own configuration on another node goes back, alone or in place of a job the plan
#: brings to its node, where that lowers the plan's score. The churn `PUT_BACK_ROUNDS` > 1
#: answers by re-planning, undone without a re-plan and without pinning the job where a queued
#: job needs its node (scripts/results/decision-interval.md, "Why it churns"); not yet the
#: default, whose committed results are all without it
UNMOVE = False
