#!/usr/bin/env python
"""Probes of a clairvoyant member for the upper value (issue 43; scripts/results/upper.md,
"Clairvoyant members, tried"). Not a method: each probe runs the default (`incremental`,
noise 0) on a copy of a generated high-load trace whose due dates were changed in hindsight,
and bills the schedule at the TRUE due dates and weights: the VM cost of the run (which the
due dates do not enter) plus Σ_j ω_j·max(0, C_j − due_j) over its completions C_j.

    python scripts/clairvoyant_probe.py lp --nodes 20 --seed 83 [--slot 3600]
    python scripts/clairvoyant_probe.py hindsight --nodes 20 --seed 83 --rounds 8 --step 0.1
    python scripts/clairvoyant_probe.py seeds --nodes 20 --seed 83 --seeds 8
    python scripts/clairvoyant_probe.py admission --trace itp05.json --scales 1.5,2,2.5
    python scripts/clairvoyant_probe.py plan-admission --trace itp09.json
    python scripts/clairvoyant_probe.py drain --trace itp09.json
    python scripts/clairvoyant_probe.py release-order --trace itp09.json

`lp`: the capacity LP of `gpuaas.bound` over the whole trace (the automatic slot, or `--slot`;
solved whole, never cut into groups), each job's planned completion c_j = the start of its last
slot with work (or its release) plus its work there; the default is run with due dates c_j,
min(due, c_j) (hurry what the LP runs early), max(due, c_j) (let wait what the LP lets wait)
and (due + c_j) / 2. `hindsight`: squeaky-wheel rounds, each run's lateness moving the next
run's due dates earlier by `--step` x the lateness summed so far. `seeds`: the default at
seeds 1..K (`gpuaas bound --upper --default-seeds K`). `admission` (kept: `gpuaas bound
--upper --admission`): the default on the trace admitted by the clairvoyant list schedule on
each of `--scales` x N nodes (`gpuaas.admission`), billed at the true due dates, with its VM
cost, tardiness, lost work, moves per job and the jobs held back. `--trace FILE`: that trace
(e.g. an imported ITP cluster) instead of a generated one. Restart 600 s, start-up 120 s
(`--overhead 0`: both 0).

Two probes of the never-moving schedule (`gpuaas.vm_schedule.best_plan`, the plan that
`gpuaas bound --upper --vm-schedule` replays): `plan-admission` runs the default on the trace
released at the plan's placement times (is it when jobs start that the plan gains?); `drain`
estimates, on the plan alone (no replay), what moving jobs in hindsight to empty VMs early
would save (`drained`). `release-order` asks whether its gain is hindsight's: the plan built in
release order (`vm_schedule(order="release")`, each variant of `VARIANTS`' release half, not
`shrunk`) places each job knowing only the jobs released before it, as an online scheduler that
knows each job's duration (noise 0) could; it prints each variant's own cost and replays the
cheapest (`gpuaas.vm_schedule.replay`, a checked run). Choosing the cheapest of the eight is
the one choice made in hindsight.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from gpuaas.capacity_lp import capacity_groups, capacity_lp, solve_point
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance, load_instance
from gpuaas.per_job import effective_release
from gpuaas.simulator import Simulator


def billed(
    run_on: Instance, trace: Instance, overhead: float, seed: int = 1, full: bool = False
) -> tuple:
    """(true cost, completions) of the default on `run_on`, billed with `trace`'s due dates
    (`full`: and the run's result)."""
    startup = 120.0 if overhead else 0.0
    res = Simulator(
        run_on, "incremental", seed=seed, noise=0.0, overhead=overhead, startup=startup
    ).run()
    done = {j["id"]: j["completion"] for j in res.jobs}
    C = np.array([done[j] for j in trace.job_ids])
    cost = float(res.vm_cost + (trace.weight * np.maximum(0.0, C - trace.due)).sum())
    return (cost, C, res) if full else (cost, C)


def planned(trace: Instance, slot: float | None, time_limit: float) -> np.ndarray:
    """Each job's completion in the capacity LP's optimum (module docstring)."""
    L, _, _ = capacity_groups(trace, trace.nodes, slot)
    lp = capacity_lp(trace, trace.nodes, L)
    t0 = time.perf_counter()
    value, status, x, _ = solve_point(lp, time_limit)
    print(
        f"LP slot {lp.slot:g} s, {lp.n_slots} slots, {lp.n_cols} columns, {lp.n_rows} rows: "
        f"{status}, {value:.1f} $ in {time.perf_counter() - t0:.0f} s"
    )
    if x is None:
        raise SystemExit("HiGHS holds no solution")
    xs = x[: lp.n_x]
    J, cj, ck = trace.n_jobs, lp.col_job, lp.col_slot
    sec = xs * trace.times[cj, lp.col_cfg]
    used = xs > 1e-7
    last = np.full(J, -1)
    np.maximum.at(last, cj[used], ck[used])
    there = used & (ck == last[cj])
    work = np.bincount(cj[there], weights=sec[there], minlength=J)
    c = np.maximum(lp.edges[last], effective_release(trace)) + work
    vm = float(lp.col_cost[: lp.n_x] @ xs)
    print(
        f"LP: VMs {vm:.1f} $, tardiness charged {float(x[lp.n_x : lp.n_x + J].sum()):.1f} $; "
        f"its plan's tardiness at the completions above "
        f"{float((trace.weight * np.maximum(0.0, c - trace.due)).sum()):.1f} $"
    )
    return c


def drained(trace: Instance, plan, overhead: float) -> tuple[float, int, int, float]:
    """(plan cost after, VMs drained, jobs moved, idle $ after the VMs' last joins): the plan
    with VMs emptied early by planned moves, priced as the plan prices itself (no replay).

    Per VM A, largest idle tail first (its price x the time from its last job's placement to
    its close): at that last placement or at a later end of one of its jobs, t, every job of A
    still running moves (once) to another VM of A's type that is open and ready at t, has its
    GPUs free until the job's end + `overhead` (the work a restart loses) and whose slot is
    free until then (extended past its close at its price where needed); A closes at t. Kept
    where A's price until its close exceeds the moved jobs' extra tardiness and the
    extensions, at the t that saves most."""
    cat = trace.catalog
    K = plan.instances
    price = cat.cost[plan.vm_type].astype(float)
    cap = cat.gpus[plan.vm_type].astype(float)
    g = cat.cfg_gpus[plan.cfg].astype(float)
    due, w = trace.due.astype(float), trace.weight.astype(float)
    end, close = plan.end.astype(float).copy(), plan.close.astype(float).copy()
    ready = np.full(K, np.inf)
    np.minimum.at(ready, plan.vm, plan.run)
    held: list[list[list[float]]] = [[] for _ in range(K)]  # per VM: [from, to, gpus, job]
    for j in range(trace.n_jobs):
        held[plan.vm[j]].append([float(plan.start[j]), float(end[j]), float(g[j]), j])
    nxt = np.full(K, np.inf)  # the next VM's open on the same slot
    for slot in np.unique(plan.slot):
        ks = np.flatnonzero(plan.slot == slot)
        ks = ks[np.argsort(plan.open[ks])]
        nxt[ks[:-1]] = plan.open[ks[1:]]

    def peak(k: int, a: float, b: float, extra: list) -> float:
        iv = held[k] + extra
        pts = [a] + [x[0] for x in iv if a < x[0] < b]
        return max(sum(x[2] for x in iv if x[0] <= p < x[1]) for p in pts)

    last_join = np.array([max(x[0] for x in held[k]) for k in range(K)])
    idle_tail = 0.0
    for k in range(K):
        pts = sorted({last_join[k], close[k], *(x[1] for x in held[k] if x[1] > last_join[k])})
        for a, b in zip(pts, pts[1:]):
            idle_tail += price[k] / cap[k] * (cap[k] - peak(k, a, b, [])) * (b - a)
    n_drained = n_moved = 0
    once: set[int] = set()  # jobs moved already: each moves at most once
    for A in np.argsort(-price * (close - last_join), kind="stable").tolist():
        lj = max(x[0] for x in held[A])  # jobs moved onto A join it too
        ts = [lj, *sorted({x[1] for x in held[A] if lj < x[1] < close[A]})]
        best = None
        for t in ts:
            stay = [x for x in held[A] if x[1] > t + 1e-9]
            gain = price[A] * (close[A] - t)
            if not stay or gain <= 0.0 or any(int(x[3]) in once for x in stay):
                continue
            moves, cost = [], 0.0
            for x in sorted(stay, key=lambda x: -x[2]):
                e2 = x[1] + overhead
                cand = np.flatnonzero(
                    (plan.vm_type == plan.vm_type[A]) & (np.arange(K) != A)
                    & (plan.open <= t) & (ready <= t) & (close > t) & (nxt >= e2)
                )  # fmt: skip
                pick = None
                for B in cand.tolist():
                    mine = [[t, m[2], m[1][2], -1] for m in moves if m[0] == B]
                    if peak(B, t, e2, mine) + x[2] > cap[B] + 1e-9:
                        continue
                    top = max([close[B], *(m[2] for m in moves if m[0] == B)])
                    ext = price[B] * max(0.0, e2 - top)
                    if pick is None or ext < pick[0]:
                        pick = (ext, B)
                if pick is None:
                    break
                j = int(x[3])
                late = w[j] * (max(0.0, e2 - due[j]) - max(0.0, x[1] - due[j]))
                moves.append((pick[1], x, e2))
                cost += pick[0] + late
            else:
                if gain - cost > 0.0 and (best is None or gain - cost > best[0]):
                    best = (gain - cost, t, moves)
        if best is None:
            continue
        _, t, moves = best
        for B, x, e2 in moves:
            held[B].append([t, e2, x[2], x[3]])
            close[B] = max(close[B], e2)
            end[int(x[3])] = e2
            once.add(int(x[3]))
            x[1] = t  # its GPUs on A are held until t
        close[A] = t
        n_drained += 1
        n_moved += len(moves)
    vm_cost = float((price * (close - plan.open)).sum())
    tardiness = float((w * np.maximum(0.0, end - due)).sum())
    return vm_cost + tardiness, n_drained, n_moved, idle_tail


def _parts(res) -> str:
    return (
        f"VMs {res.vm_cost:.1f} $ of which lost work {res.lost_work_cost:.1f} $, "
        f"tardiness {res.tardiness_cost:.1f} $, {res.moves_per_job:.2f} moves per job"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "probe",
        choices=[
            "lp",
            "hindsight",
            "seeds",
            "admission",
            "plan-admission",
            "drain",
            "release-order",
        ],
    )
    ap.add_argument("--trace", default=None, help="a trace file (default: generated)")
    ap.add_argument("--scales", default="1.25,1.5,1.75,2", help="admission: x N nodes")
    ap.add_argument("--nodes", type=int, default=20)
    ap.add_argument("--seed", type=int, default=83, help="the trace's seed (high arrivals)")
    ap.add_argument("--overhead", type=float, default=600.0)
    ap.add_argument("--slot", type=float, default=None)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--step", type=float, default=0.1)
    ap.add_argument("--seeds", type=int, default=8)
    a = ap.parse_args()
    if a.trace is not None:
        trace, name = load_instance(a.trace), a.trace
    else:
        trace = Instance.from_dict(generate_trace(a.nodes, seed=a.seed, arrivals="high"))
        name = f"high {a.seed}"
    base, _, res = billed(trace, trace, a.overhead, full=True)
    print(
        f"N {trace.nodes}, {name}, restart {a.overhead:g}: the default {base:.1f} $ ({_parts(res)})"
    )
    if a.probe == "lp":
        c = planned(trace, a.slot, a.time_limit)
        print(f"LP: {(c > trace.due).sum()} of {trace.n_jobs} jobs planned past their due date")
        d = trace.due
        for name, due in (("c", c), ("min", np.minimum(d, c)), ("max", np.maximum(d, c)),
                          ("mid", (d + c) / 2)):  # fmt: skip
            cost, _ = billed(dataclasses.replace(trace, due=due), trace, a.overhead)
            print(f"due = {name:4s} {cost:10.1f} $  {cost / base:.3f} x the default")
    elif a.probe == "hindsight":
        shift, costs = np.zeros(trace.n_jobs), []
        run_on = trace
        for _ in range(a.rounds):
            cost, C = billed(run_on, trace, a.overhead)
            costs.append(cost)
            shift += a.step * np.maximum(0.0, C - trace.due)
            run_on = dataclasses.replace(trace, due=trace.due - shift)
        print("rounds", " ".join(f"{c:.1f}" for c in costs), f"best {min(costs) / base:.3f} x")
    elif a.probe == "admission":
        from gpuaas.admission import admission_times, admitted

        for scale in (float(x) for x in a.scales.split(",")):
            start = admission_times(trace, scale=scale)
            held = int((start > trace.release).sum())
            if not held:
                print(f"x {scale:g} N: every job admitted at its release (the default's run)")
                continue
            cost, _, res = billed(admitted(trace, start), trace, a.overhead, full=True)
            assert abs(cost - res.total_cost) <= 1e-6 * cost  # the release is billed nowhere
            print(
                f"x {scale:g} N: {held} jobs held back (mean {np.mean(start - trace.release) / 3600:.2f} h); "
                f"{cost:.1f} $  {cost / base:.3f} x the default ({_parts(res)})"
            )
    elif a.probe in ("plan-admission", "drain"):
        from gpuaas.admission import admitted
        from gpuaas.vm_schedule import best_plan

        plan, built = best_plan(trace, None, 120.0 if a.overhead else 0.0)
        print(f"the never-moving plan (best of {built}): {plan.cost:.1f} $")
        if a.probe == "drain":
            cost, n, moved, tail = drained(trace, plan, a.overhead)
            print(
                f"drained: {cost:.1f} $ ({cost / plan.cost:.3f} x the plan), {n} of "
                f"{plan.instances} VMs emptied early, {moved} jobs moved; idle after the VMs' "
                f"last joins {tail:.1f} $"
            )
        else:
            start = np.maximum(plan.start, trace.release)
            cost, _, res = billed(admitted(trace, start), trace, a.overhead, full=True)
            print(
                f"the default released at the plan's placements ({int((start > trace.release).sum())} "
                f"jobs held back, mean {np.mean(start - trace.release) / 3600:.2f} h): {cost:.1f} $  "
                f"{cost / base:.3f} x the default ({_parts(res)})"
            )
    elif a.probe == "release-order":
        from gpuaas.vm_schedule import VARIANTS, replay, vm_schedule

        startup = 120.0 if a.overhead else 0.0
        plans = []
        for configs, order, w in VARIANTS:
            if order == "release":
                plans.append(vm_schedule(trace, None, startup, order, configs, w))
                p = plans[-1]
                print(f"release order, {configs}, vm_weight {w:g}: {p.cost:.1f} $ "
                      f"(VMs {p.vm_cost:.1f} $, tardiness {p.tardiness:.1f} $)")  # fmt: skip
        plan = min(plans, key=lambda p: p.cost)
        res, _ = replay(trace, plan, overhead=a.overhead, startup=startup)
        print(
            f"the cheapest ({plan.configs}, {plan.vm_weight:g}) replayed: {res.total_cost:.1f} $  "
            f"{res.total_cost / base:.3f} x the default ({_parts(res)})"
        )
    else:
        costs = [billed(trace, trace, a.overhead, s)[0] for s in range(1, a.seeds + 1)]
        print("seeds", " ".join(f"{c:.1f}" for c in costs), f"best {min(costs) / base:.3f} x")


if __name__ == "__main__":
    main()
