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


def _parts(res) -> str:
    return (
        f"VMs {res.vm_cost:.1f} $ of which lost work {res.lost_work_cost:.1f} $, "
        f"tardiness {res.tardiness_cost:.1f} $, {res.moves_per_job:.2f} moves per job"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe", choices=["lp", "hindsight", "seeds", "admission"])
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
    else:
        costs = [billed(trace, trace, a.overhead, s)[0] for s in range(1, a.seeds + 1)]
        print("seeds", " ".join(f"{c:.1f}" for c in costs), f"best {min(costs) / base:.3f} x")


if __name__ == "__main__":
    main()
