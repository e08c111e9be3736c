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

    python scripts/restart_bound_probe.py TRACE.json [TRACE.json ...] [--overhead 600]

prints per trace the per-job bound, this one, and the gain; compare with `gpuaas bound TRACE`
(the larger of the per-job bound and the capacity LP).
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from gpuaas.errors import InputError
from gpuaas.instance import Instance, load_instance
from gpuaas.per_job import effective_release, per_job_plan, share_price


def restart_per_job(trace: Instance, overhead: float) -> np.ndarray:
    """(J,) the per-job values above at restart overhead `overhead` (s) for a trace whose
    jobs do not run yet (a running job could stay where it is without a change)."""
    if (trace.current_cfg >= 0).any():
        raise ValueError("restart_per_job: some job runs already (current_cfg); give a trace")
    times = trace.times
    price = np.broadcast_to(share_price(trace), times.shape)
    ok = np.isfinite(times)
    slack = trace.due - effective_release(trace)
    late = np.maximum(0.0, times - slack[:, None])
    single = np.where(ok, times * price + trace.weight[:, None] * late, np.inf).min(axis=1)
    shorter = dataclasses.replace(trace, due=trace.due - overhead)
    lost = overhead * np.where(ok, price, np.inf).min(axis=1)
    return np.minimum(single, lost + per_job_plan(shorter).cost)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--overhead", type=float, default=600.0, help="restart overhead o (s)")
    args = ap.parse_args()
    traces = []
    for path in args.traces:
        try:
            traces.append((path, load_instance(path)))
        except InputError as exc:  # a missing or malformed trace: said, exit 2
            ap.exit(2, f"{ap.prog}: error: {exc}\n")
    print("| trace | per-job $ | with the restart rule $ | gain |\n|---|---|---|---|")
    for path, trace in traces:
        plain = float(per_job_plan(trace).cost.sum())
        tight = float(restart_per_job(trace, args.overhead).sum())
        print(f"| {path} | {plain:,.0f} | {tight:,.0f} | {100 * (tight / plain - 1):+.2f} % |")


if __name__ == "__main__":
    main()
