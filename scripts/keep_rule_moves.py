#!/usr/bin/env python
"""Which keep rules freed the running jobs that the default method then moved.

At every rescheduling point of a simulation with the default method (`incremental`), the jobs
running before the point that its plan puts elsewhere (another node or configuration) are
counted under the set of keep rules that freed them (`gpuaas.heuristics.default.keep`,
`KEEP_RULES`: gain, shrink, grow, repack; docs/reconfiguration.md, "How methods see the
incumbent"). The count is of the plans the method returns, before the Rescheduler applies
them, so it can differ a little from the run's migrations and preemptions (a plan the
Rescheduler solves again, a spot plan's on-demand rival). A job no rule freed that still
moved was moved by the plan's MILP polish (counted as "polish"). Used for
scripts/results/upper.md, "Which keep rules free the moves on cluster 9".

    python scripts/keep_rule_moves.py itp09.json [--seed 1] [--move-weight W]
"""

from __future__ import annotations

import argparse
from collections import Counter

import gpuaas.heuristics.default.method as method_module
import gpuaas.heuristics.default.plan as plan_module
import gpuaas.heuristics.default.spot_wrapper as spot_wrapper
from gpuaas import load_instance, simulate
from gpuaas.errors import GpuaasError
from gpuaas.reconfiguration import moved


def count_moves(trace: str, seed: int = 1, **settings) -> tuple[Counter, object]:
    """(moves per tuple of rule names, the SimulationResult) of the default method on `trace`."""
    rules_of = plan_module.incumbent_rules
    plan_of = plan_module.plan
    last: list = [None]
    counts: Counter = Counter()

    def rules(*args, **kwargs):
        last[0] = rules_of(*args, **kwargs)
        return last[0]

    def plan(instance, **kwargs):
        sol = plan_of(instance, **kwargs)
        r = last[0]
        if r is not None and r.run.size:
            went = moved(instance, sol.job_node, sol.job_cfg)[r.run]
            for i in went.nonzero()[0]:
                names = tuple(name for name, freed in r.freed.items() if freed[i])
                # no rule: the plan's MILP polish (`polish.py`), which may move any job
                counts[names or (("polish",) if "polish" in sol.stats else ())] += 1
        return sol

    plan_module.incumbent_rules = rules
    method_module.plan = spot_wrapper.plan = plan
    try:
        result = simulate(load_instance(trace), "incremental", seed=seed, bound=False, **settings)
    finally:
        plan_module.incumbent_rules = rules_of
        method_module.plan = spot_wrapper.plan = plan_of
    return counts, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--move-weight", type=float, help="the method's move_weight option")
    args = ap.parse_args()
    settings = {} if args.move_weight is None else {"move_weight": args.move_weight}
    try:
        counts, result = count_moves(args.trace, args.seed, **settings)
    except GpuaasError as exc:
        ap.exit(2, f"error: {exc}\n")
    print(
        f"{args.trace}, seed {args.seed}: total {result.total_cost:.2f} $, "
        f"{result.migrations} migrations, {result.preemptions} preemptions"
    )
    print("| rules that freed the job | moves |\n|---|---|")
    for names, n in counts.most_common():
        print(f"| {', '.join(names) or '-'} | {n} |")


if __name__ == "__main__":
    main()
