"""SkyNomad's policy per job (issue 42): where and how to run each job alone on a whole VM,
written from the paper (Li et al., "SkyVoyager/SkyNomad: On Using Multi-Region Spot Instances
to Minimize AI Batch Job Cost", arXiv 2601.06520, NSDI '27; its artifact
github.com/andylizf/skynomad-artifact, Apache-2.0, read to check this reading, not copied).

At every rescheduling point each job chooses among staying where it runs, spot at any location
(a VM type at a place is its own type, ``TYPE@ZONE``), on demand at any location, or waiting,
by the paper's unified dollar cost:

- **Utility** (§3.2, eq. 6): an option (configuration c, spot or on demand) is worth
  U = V η s_c - C_c - E_c / L per second: V the value of a second of progress, η = (L - d)+ / L
  the share of the option's expected time L that makes progress after its changeover d, C_c its
  price, E_c the egress of moving the job's checkpoint to c's location (`gpuaas.transfer`), paid
  once and spread over L. Waiting is worth 0. A waiting job starts the best option worth more
  than 0; a running one takes the best option (waiting included) worth more than where it is
  (its VM valued without a changeover) by a hysteresis Δ = `HYSTERESIS` x V (§3.5's footnote
  2: "switches only when U(r,m) > U(r0,m0) + Δ"; Δ as the artifact's share of V,
  `--voi-k-v`).
- **Progress value** (§3.3, eq. 8): V = C_od θ / θ̃, θ = (P - p) / (T - t) the deadline
  pressure (work left per time left), θ̃ = p / t the job's average rate so far, C_od the
  price of its own on-demand VM (`own_vm`: the cheapest whole VM meeting its due date, the
  paper's cheapest on-demand region); t and T count from its release, P and p are its whole
  work and work done on that VM. Before any progress θ̃ is the planned rate P / T (the
  artifact's ``rate_past`` variant does the same), so V = C_od T / (T - t) rises while it waits.
  V is at least the price of the job's cheapest way to finish, its cheapest spot place
  (available or not), on demand where its type has no spot price (the artifact's floor at the
  cheapest spot price, not in the paper's text: the work must be done anyway). Without it a
  job ahead of schedule stops its spot VM, waits until V passes the price again and restarts,
  over and over (on the artifact's H100 window 0, eleven stops: 631.74 $ against 569.43 $
  with the floor), and a job of a type without spot starts and stops on demand every tick.
- **Expected lifetime** (§3.4) of a spot type: L = 1 / its interruption rate
  (`Instance.hazard`: the Rescheduler's estimate from the capacity changes of every type,
  held or not, `gpuaas.rescheduler.spot_estimates`), at most the time to the due date (the
  artifact's cap) and the job's time to finish there; on demand L is the time to finish.
- **Changeover** d (§2.1's cold start): a new VM's start-up, the restart `overhead` of a job
  moved off a running VM, the checkpoint's copy beyond a restart (`gpuaas.transfer`); where it
  stays, what is left of its VM's start-up and copy (`Instance.ready`). A spot option whose
  expected life ends before the job also loses, at the interruption, the restart overhead and
  half a checkpoint interval of work (`Instance.checkpoint`; gpuaas's interruption rule,
  `gpuaas.reconfiguration.since_checkpoint`).
- **Deadline safety** (§3.1, Safety Net Rule, with the multi-region fallback of eq. 2): an
  action off on-demand (waiting, spot) is safe if after it, and one more tick H without
  progress (the next decision comes at most H later), the job could still end by its due date
  on demand at some place: its work left there, plus the restart it loses now if it leaves a
  running VM, plus a later fall back's start-up, restart, a whole checkpoint interval lost to
  an interruption and the copy. Only safe actions are taken; a job with none goes or stays on
  demand: where it runs if that meets its due date, else the place that finishes it cheapest
  (price x time, plus egress) by its due date, else the fastest. Once that fires it holds (on
  demand the work left falls as fast as the time), so every job ends in time whenever it
  could at its release (`tests/test_skynomad_policy.py` checks it on replayed traces). An
  on-demand option is taken only where it ends in time.

Each job gets a whole VM (`gpuaas.baselines.spot`: one job alone on its VM, as the paper's
gang-scheduled job) of its own type (`own_vm`'s, the paper's one instance type), on demand or
spot at every location that offers it (its places); s_c = P / its whole-job time at c (1
where the places' times agree). Jobs decide least slack first, taking spot VMs while
`Instance.room` lasts; a job pinned by a disruption limit stays.

**Where it simplifies the paper, and why:**

- *Lifetimes*: the paper fits a Nelson-Aalen survival curve to each region's past lifetimes,
  conditions on the current age (heavy tails: an instance that lasted is expected to last
  longer) and scales the hazard by a volatility ratio (§A.3). gpuaas's Instance carries one
  rate per type (hours with capacity over capacity drops, with a prior: constant hazard,
  memoryless), not the list of lifetimes and ages; a new history store in the Rescheduler
  for one baseline was not worth it. With 0/1 zones the rate's inverse is the mean lifetime
  seen so far, the paper's estimate at age 0 without the tail or the volatility scaling.
- *Probing*: the paper probes every region every two hours at one minute of spot each; the
  Rescheduler is told every type's capacity at every change (a probe every tick, free), as
  the default method is.
- *Launch attempts*: the paper tries options best first until a launch succeeds; here a spot
  type is an option only while `Instance.room` says a VM of it can open.
- *One VM type*: as in the paper, a job's options are its own type's places; unlike
  `managed_spot` and `uniform_progress` (`spot_type`) it never fails over to another type's
  spot. Ranking types of other speeds by utility per second (V s_c η - C_c) favours a faster,
  dearer type whenever V exceeds its price per second of work, which eq. 6 does not weigh.
- *On demand*: eq. 6 takes η = 1 and no egress for on demand (L -> ∞); here L is the time to
  finish there, so a move to on demand pays its changeover and egress as a spot move does.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from gpuaas.baselines.dispatch import reject_options
from gpuaas.baselines.spot import _place, own_vm, spot_of  # one placement rule for per-job VMs
from gpuaas.instance import Instance
from gpuaas.solution import Solution
from gpuaas.transfer import transfer_matrix

#: Δ as a share of V: a running job changes only for an option worth Δ more (§3.5, footnote 2;
#: the artifact's ``--voi-k-v`` 0.05; its absolute 0.5 $/h, in V100 dollars, is left out)
HYSTERESIS = 0.05
#: seconds of work left that count as done
DONE = 1e-3


def progress_value(instance: Instance, j: int, ref: int, floor: float = 0.0) -> float:
    """V of job j ($ per second of work on configuration `ref`, its own VM): C_od θ / θ̃
    (module docstring, eq. 8), at least `floor`; inf once its due date has passed."""
    inst = instance
    P = float(inst.work[j, ref])
    T = float(inst.due[j] - inst.release[j])
    t = max(0.0, inst.time - float(inst.release[j]))
    p = float(inst.progress[j]) * P
    if T - t <= 0:
        return math.inf
    theta = (P - p) / (T - t)
    past = p / t if p > DONE and t > 0 else P / T
    return max(float(inst.catalog.cost[inst.catalog.cfg_vm[ref]]) * theta / past, floor)


def skynomad(
    instance: Instance, *, seed: int = 0, time_limit: float | None = None, **options: Any
) -> Solution:
    """SkyNomad's policy per job (module docstring), each job alone on a whole VM.

    Returns
    -------
    Solution
        With ``stats``: ``seconds``, ``seed``, ``spot``, ``on_demand`` and ``waiting``.
    """
    reject_options("skynomad", options)
    t0 = time.perf_counter()
    inst = instance
    room = inst.room.copy()
    slack = inst.rel_due - inst.times.min(axis=1)
    order = [int(j) for j in np.lexsort((np.arange(inst.n_jobs), slack))]
    options_ = _Options(inst)
    target: dict[int, int] = {}
    for j in order:
        if inst.pinned[j]:  # a disruption limit: it stays on its VM
            target[j] = int(inst.current_cfg[j])
            continue
        c = options_.choose(j, room)
        target[j] = c
        if c >= 0 and c != inst.current_cfg[j] and inst.catalog.spot[inst.catalog.cfg_vm[c]]:
            room[inst.catalog.cfg_vm[c]] -= 1
    return _place(inst, target, order, "skynomad", seed, t0)


class _Options:
    """The options of each job at one rescheduling point and their utilities."""

    def __init__(self, instance: Instance) -> None:
        inst = self.inst = instance
        cat = inst.catalog
        self.spot = spot_of(inst)
        whole = (cat.cfg_gpus == cat.gpus[cat.cfg_vm]) & ~cat.spot[cat.cfg_vm]
        self.whole = np.flatnonzero(whole)  # on-demand whole-VM configurations
        # each type's name without its location: the same type at every place
        names = [n[: len(n) - len(x) - 1] if x else n for n, x in zip(cat.vm_names, cat.locations)]
        self.kind = np.array([names[v] for v in cat.cfg_vm[self.whole]], dtype=object)
        self.loc = cat.location_index[cat.cfg_vm]
        self.per_gb, self.secs = transfer_matrix(cat) if cat.places else (None, None)
        self.checkpoint = np.nan_to_num(inst.checkpoint, nan=0.0)
        self.price = cat.cost[cat.cfg_vm]  # $/s per configuration (its VM's)

    def move(self, j: int, c: int) -> tuple[float, float]:
        """(egress $, copy s) of job j's checkpoint to configuration c's location."""
        src, dst, gb = int(self.inst.data_at[j]), int(self.loc[c]), float(self.inst.data_gb[j])
        if self.per_gb is None or src < 0 or dst < 0 or gb <= 0:
            return 0.0, 0.0
        return gb * float(self.per_gb[src, dst]), gb * float(self.secs[src, dst])

    def spot_cfg(self, c: int) -> int:
        """The spot variant of on-demand whole configuration c (-1: none)."""
        cat = self.inst.catalog
        s = self.spot[cat.cfg_vm[c]]
        return -1 if s < 0 else int(cat.cfg_offset[s] + cat.cfg_gpus[c] - 1)

    def floor(self, j: int, P: float, places: list[int]) -> float:
        """V's floor: $ per second of job j's own VM's work (`P` s in all) at its cheapest spot
        place, available or not; where its type has no spot price, on demand."""
        inst, cat = self.inst, self.inst.catalog
        spot = [o for o in (self.spot_cfg(c) for c in places) if o >= 0]
        pool = spot or places
        base = [c if c in places else int(cat.config(int(cat.base[cat.cfg_vm[c]]), cat.cfg_gpus[c]))
                for c in pool]  # fmt: skip
        return min(float(self.price[o]) * float(inst.work[j, c]) / P for o, c in zip(pool, base))

    def choose(self, j: int, room: np.ndarray) -> int:
        """Job j's configuration at this point (-1: it waits)."""
        inst, cat = self.inst, self.inst.catalog
        ref = own_vm(inst, j)
        if ref < 0:
            return -1
        kind = self.kind[np.searchsorted(self.whole, ref)]
        places = [int(c) for c in self.whole[self.kind == kind] if np.isfinite(inst.work[j, c])]
        cur = int(inst.current_cfg[j])
        running = cur >= 0
        now, rel_due = inst.time, float(inst.rel_due[j])
        left = {c: (1.0 - float(inst.progress[j])) * float(inst.work[j, c]) for c in places}
        moves = {c: self.move(j, c) for c in places}  # (egress $, copy s)
        # what leaving its VM now loses (a restart), and a later fall back to on demand at the
        # worst (start-up, restart, a checkpoint interval lost to an interruption)
        lost_now = inst.overhead if running else 0.0
        worst = inst.startup + inst.overhead + float(self.checkpoint[j])

        def safe(c: int, lost: float, delay: float) -> bool:
            """On demand at c still ends by the due date after one more tick off it."""
            return left[c] + lost + worst + delay + inst.H <= rel_due

        ready_in = max(0.0, float(inst.ready[j]) - now)  # its VM's start-up and copy left
        waiting_ok = any(safe(c, lost_now, moves[c][1]) for c in places)
        # options: (configuration, changeover d, egress, safe), spot and on demand per place
        options = []
        for c in places:
            egress, copy = moves[c]
            for o in (self.spot_cfg(c), c):
                if o < 0 or (o != cur and o != c and room[cat.cfg_vm[o]] < 1):
                    continue
                if o == cur:
                    d, e = ready_in, 0.0
                else:
                    d, e = inst.startup + lost_now + copy, egress
                if o == c:  # on demand: in time there
                    ok = left[c] + d <= rel_due
                else:
                    ok = safe(c, 0.0, ready_in) if o == cur else safe(c, lost_now, copy)
                options.append((o, d, e, ok))
        # -- the Safety Net (§3.1, eq. 2): no spot VM nor waiting is safe for one more tick -----
        V = progress_value(inst, j, ref, self.floor(j, float(inst.work[j, ref]), places))
        spot_ok = any(ok for o, _, _, ok in options if cat.spot[cat.cfg_vm[o]])
        if not (waiting_ok or spot_ok) or not math.isfinite(V):
            if running and not cat.spot[cat.cfg_vm[cur]] and left.get(cur, math.inf) <= rel_due:
                return cur  # on demand, in time: it stays
            od = [(left[o] + d, float(self.price[o]) * (left[o] + d) + e, o)
                  for o, d, e, _ in options if o in left]  # fmt: skip
            if not od:
                return -1
            meets = [f for f in od if f[0] <= rel_due]
            return min(meets, key=lambda f: (f[1], f[2]))[2] if meets else min(od)[2]
        # -- utilities (§3.2-3.4) ----------------------------------------------------------------
        P = float(inst.work[j, ref])
        current = 0.0  # where it is: waiting (or a configuration of another type) is worth 0
        stay_ok = waiting_ok and not running  # staying: waiting, or (below) its VM's option
        best_u, best_c = -math.inf, -1  # the best safe option other than where it is
        for o, d, e, ok in options:
            c = o if o in left else int(cat.config(int(cat.base[cat.cfg_vm[o]]), cat.cfg_gpus[o]))
            life = math.inf
            if cat.spot[cat.cfg_vm[o]]:
                rate = float(inst.hazard[cat.cfg_vm[o]])
                life = 1.0 / rate if rate > 0 else math.inf
            L = min(life, left[c] + d, max(rel_due, 0.0))
            if L <= 0:
                continue
            # a life that ends before the job does ends in an interruption: its restart and
            # half a checkpoint interval lost
            lost = inst.overhead + 0.5 * float(self.checkpoint[j]) if life < left[c] + d else 0.0
            eta = max(0.0, L - d - lost) / L
            u = V * eta * P / float(inst.work[j, c]) - float(self.price[o]) - e / L
            if o == cur:
                current, stay_ok = u, ok or not cat.spot[cat.cfg_vm[o]]
            elif ok and u > best_u:
                best_u, best_c = u, o
        # the best safe option, waiting (worth 0) among them, if worth Δ more than where it is
        # (or where it is is not safe)
        delta = HYSTERESIS * V if running else 0.0
        if waiting_ok and running and best_u < 0.0:
            best_u, best_c = 0.0, -1
        if not running:
            return best_c if best_u > 0.0 or not waiting_ok else -1
        return best_c if best_u > current + delta or not stay_ok else cur
