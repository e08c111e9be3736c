#!/usr/bin/env python
"""Probe (issue 43; scripts/results/upper.md, "The bound under congestion", tried and not kept):
how much a per-job bound that charges the restart rule would raise `gpuaas bound` at a restart
overhead o > 0.

The per-job bound (formulations/BOUND.md §1) lets a job mix a fast and a slow configuration so
that it ends at its due date, for free. In the simulator a running job that changes node or
configuration (or is preempted) loses min(progress, o / its whole time there) of its work
(`gpuaas.reconfiguration.lost_work`). So a job either runs on one configuration throughout, at
no less than that configuration's cost t_c·p_c + ω·max(0, t_c − D) from its release, or changes
at least once. At its first change it has either lost all its progress (the rest is a schedule
of the whole job begun later: by induction, no cheaper than the bound below) or exactly o
seconds of work on the configuration c1 it left, paid at c1's share price p_c1 and delaying
its completion by o; the work it keeps is a mix of configurations adding up to the whole job.
Hence, per job,

    min( min_c t_c·p_c + ω·max(0, t_c − D),  o·min_c p_c + v(D − o) )

with v(D − o) the per-job bound of the job with its slack shortened by o (a mix, or one
configuration); start-ups, more changes and lost progress only add. Summed over the jobs it is
a lower bound of any run with restart overhead o (noise 0), like the per-job bound.

    python scripts/restart_bound_probe.py TRACE.json [TRACE.json ...] [--overhead 600] [--lp]

prints per trace the per-job bound, this one, and the gain; compare with `gpuaas bound TRACE`
(the larger of the per-job bound and the capacity LP). With `--lp` also `gpuaas bound`'s value
and what the capacity LP could gain at most if each job's part of its objective (its x-columns'
cost and its tardiness T_j) were held at least at the value above: Σ_j max(0, value_j − part_j)
at the solved LP's optimum (`lp_parts`, reading the parts `gpuaas.bounds` solves), the LP with
those rows being no dearer than that point. Such rows are valid if x counts a job's useful work
(done and not lost), which satisfies every row of the LP, and the lost work's price is a
column of the objective: its cost and tardiness are then what the argument above bounds.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import numpy as np

from gpuaas import bounds
from gpuaas.errors import InputError
from gpuaas.instance import Instance, load_instance
from gpuaas.per_job import per_job_plan, share_price, single_costs


def restart_per_job(trace: Instance, overhead: float) -> np.ndarray:
    """(J,) the per-job values above at restart overhead `overhead` (s) for a trace whose
    jobs do not run yet (a running job could stay where it is without a change)."""
    if (trace.current_cfg >= 0).any():
        raise ValueError("restart_per_job: some job runs already (current_cfg); give a trace")
    single = single_costs(trace).min(axis=1)
    price = np.broadcast_to(share_price(trace), trace.times.shape)
    lost = overhead * np.where(np.isfinite(trace.times), price, np.inf).min(axis=1)
    shorter = dataclasses.replace(trace, due=trace.due - overhead)
    return np.minimum(single, lost + per_job_plan(shorter).cost)


def lp_parts(trace: Instance) -> tuple[float, np.ndarray]:
    """`gpuaas.bound`'s value and each job's part of the objective at the optimum of the LP part
    that holds it (the last solved: a later round's), read by wrapping the LP calls of
    `gpuaas.bounds` (the windowed LP's parts: `bounds._windowed`); NaN for jobs of parts not
    solved there (their per-job plans fit N nodes, or another LP gave the bound)."""
    index = {j: i for i, j in enumerate(trace.job_ids)}
    part = np.full(trace.n_jobs, np.nan)
    held: dict[str, Any] = {}
    build, solve = bounds.capacity_lp, bounds.solve_point

    def built(sub: Instance, *args: Any, **kwargs: Any) -> Any:
        held["sub"], held["lp"] = sub, build(sub, *args, **kwargs)
        return held["lp"]

    def solved(lp: Any, time_limit: float) -> Any:
        out = solve(lp, time_limit)
        x = out[2]
        if held.get("lp") is lp and x is not None:
            sub = held["sub"]
            cost = np.zeros(sub.n_jobs)
            np.add.at(cost, lp.col_job, lp.col_cost[: lp.n_x] * x[: lp.n_x])
            tard = slice(lp.n_x, lp.n_x + sub.n_jobs)  # T_j follow the x-columns
            cost += lp.col_cost[tard] * x[tard]
            if out[0] is not None and abs(cost.sum() - out[0]) > 1e-4 * max(1.0, abs(out[0])):
                raise RuntimeError("the LP's columns are not x then T_j: its parts do not add up")
            part[[index[j] for j in sub.job_ids]] = cost
        return out

    bounds.capacity_lp, bounds.solve_point = built, solved
    try:
        value = bounds.bound(trace).bound
    finally:
        bounds.capacity_lp, bounds.solve_point = build, solve
    return value, part


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--overhead", type=float, default=600.0, help="restart overhead o (s)")
    ap.add_argument("--lp", action="store_true", help="also the capacity LP's gain at most")
    args = ap.parse_args()
    traces = []
    for path in args.traces:
        try:
            traces.append((path, load_instance(path)))
        except InputError as exc:  # a missing or malformed trace: said, exit 2
            ap.exit(2, f"{ap.prog}: error: {exc}\n")
    head = "| trace | per-job $ | with the restart rule $ | gain |"
    print(head + (" bound $ | LP's gain at most $ |" if args.lp else ""))
    print("|---" * (6 if args.lp else 4) + "|")
    for path, trace in traces:
        plain = per_job_plan(trace).cost
        tight = restart_per_job(trace, args.overhead)
        line = f"| {path} | {plain.sum():,.0f} | {tight.sum():,.0f} | "
        line += f"{100 * (tight.sum() / plain.sum() - 1):+.2f} % |"
        if args.lp:
            value, part = lp_parts(trace)
            part = np.where(np.isnan(part), plain, part)  # unsolved parts: their per-job bound
            # only where the parts read make up the bound (the windowed LP's; not the groups')
            gain = np.maximum(0.0, tight - part).sum()
            read = abs(part.sum() - value) <= 1e-4 * value
            line += f" {value:,.0f} | {f'{gain:,.0f}' if read else '-'} |"
        print(line)


if __name__ == "__main__":
    main()
