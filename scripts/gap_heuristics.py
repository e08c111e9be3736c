#!/usr/bin/env python
"""Gap of Greedy, Randomized Greedy and Path Relinking to the MILP optimum of f_OBJ (issue 4).

    python scripts/gap_heuristics.py [--instances 50] [--max-nodes 2] [--max-jobs 5]
                                     [--open-rules largest,config]

Small generated snapshots (N ~ U{1..max-nodes}, J ~ U{1..max-jobs}, seed k) are solved to
optimality by the P1 MILP with P1n off (the problem the heuristics solve, formulations/P1.md) and
by each heuristic with the paper's parameters under each node-opening rule; the gap is
(f_heur − f_opt) / f_opt. Prints the mean and worst gap per rule and method and how often each
finds the optimum.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpuaas.generator import generate_instance
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.path_relinking import path_relinking
from gpuaas.heuristics.randomized_greedy import randomized_greedy
from gpuaas.heuristics.state import OPEN_RULES, warm_up
from gpuaas.milp import milp

METHODS = {
    "greedy": greedy,
    "randomized-greedy": randomized_greedy,
    "path-relinking": path_relinking,
}


def gaps(
    instances: int,
    max_nodes: int,
    max_jobs: int,
    seed0: int = 0,
    rules: tuple[str, ...] = tuple(OPEN_RULES),
) -> dict[tuple[str, str], np.ndarray]:
    """Relative gaps per (rule, method) over the instance set (also checks no heuristic beats
    the optimum)."""
    for fn in METHODS.values():
        warm_up(fn)
    out: dict[tuple[str, str], list[float]] = {(r, m): [] for r in rules for m in METHODS}
    for k in range(instances):
        seed = seed0 + k
        rng = np.random.default_rng(seed)
        inst = generate_instance(
            int(rng.integers(1, max_nodes + 1)), int(rng.integers(1, max_jobs + 1)), seed=seed
        )
        opt = milp(inst, objective="p1a", p1n=False, gap=0.0, threads=1)
        if opt.stats["status"] != "optimal":
            raise RuntimeError(f"instance {seed}: MILP not optimal ({opt.stats['status']})")
        best = opt.f_obj
        for (rule, name), vals in out.items():
            val = METHODS[name](inst, seed=seed, open_rule=rule).f_obj
            if val < best * (1 - 1e-7) - 1e-7:
                raise RuntimeError(f"instance {seed}: {name} {val} below the MILP optimum {best}")
            vals.append((val - best) / best if best > 0 else 0.0)
    return {k: np.array(v) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=50)
    ap.add_argument("--max-nodes", type=int, default=2)
    ap.add_argument("--max-jobs", type=int, default=5)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--open-rules", default=",".join(OPEN_RULES), help="comma-separated rules")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rules = tuple(args.open_rules.split(","))
    res = gaps(args.instances, args.max_nodes, args.max_jobs, args.seed0, rules)
    print(
        f"{args.instances} instances, N <= {args.max_nodes}, J <= {args.max_jobs}, MILP with P1n off, "
        f"{time.perf_counter() - t0:.0f} s\n"
    )
    print("| open_rule | method | mean gap | worst gap | optimal on |")
    print("|---|---|---:|---:|---:|")
    for (r, m), g in res.items():
        print(
            f"| {r} | {m} | {100 * g.mean():.2f} % | {100 * g.max():.2f} % | "
            f"{(g < 1e-7).sum()}/{len(g)} |"
        )


if __name__ == "__main__":
    main()
