#!/usr/bin/env python
"""Gap of Greedy, Randomized Greedy and Path Relinking to the MILP optimum of f_OBJ (issue 4).

    python scripts/gap_heuristics.py [--instances 50] [--max-nodes 2] [--max-jobs 5]

Small generated snapshots (N ~ U{1..max-nodes}, J ~ U{1..max-jobs}, seed k) are solved to
optimality by the P1 MILP with P1n off (the problem the heuristics solve, DESIGN.md §4) and
by each heuristic with the paper's parameters; the gap is (f_heur − f_opt) / f_opt. Prints
the mean and worst gap per method and how often each method finds the optimum.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpuaas.generator import generate_instance
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.path_relinking import path_relinking
from gpuaas.heuristics.randomized_greedy import randomized_greedy
from gpuaas.heuristics.state import warm_up
from gpuaas.milp import milp

METHODS = {"greedy": greedy, "randomized-greedy": randomized_greedy, "path-relinking": path_relinking}


def gaps(instances: int, max_nodes: int, max_jobs: int, seed0: int = 0) -> dict[str, np.ndarray]:
    """Relative gaps per method over the instance set (also checks no heuristic beats the optimum)."""
    for m in METHODS:
        warm_up(m)
    out: dict[str, list[float]] = {m: [] for m in METHODS}
    for k in range(instances):
        seed = seed0 + k
        rng = np.random.default_rng(seed)
        inst = generate_instance(int(rng.integers(1, max_nodes + 1)), int(rng.integers(1, max_jobs + 1)),
                                 seed=seed)  # fmt: skip
        opt = milp(inst, p1n=False, gap=0.0, threads=1)
        if opt.stats["status"] != "optimal":
            raise RuntimeError(f"instance {seed}: MILP not optimal ({opt.stats['status']})")
        best = opt.objective
        for name, fn in METHODS.items():
            val = fn(inst, seed=seed).objective
            if val < best * (1 - 1e-7) - 1e-7:
                raise RuntimeError(f"instance {seed}: {name} {val} below the MILP optimum {best}")
            out[name].append((val - best) / best if best > 0 else 0.0)
    return {m: np.array(v) for m, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=50)
    ap.add_argument("--max-nodes", type=int, default=2)
    ap.add_argument("--max-jobs", type=int, default=5)
    ap.add_argument("--seed0", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = gaps(args.instances, args.max_nodes, args.max_jobs, args.seed0)
    print(f"{args.instances} instances, N <= {args.max_nodes}, J <= {args.max_jobs}, MILP with P1n off, "
          f"{time.perf_counter() - t0:.0f} s\n")
    print("| method | mean gap | worst gap | optimal on |")
    print("|---|---:|---:|---:|")
    for m, g in res.items():
        print(f"| {m} | {100 * g.mean():.2f} % | {100 * g.max():.2f} % | {(g < 1e-7).sum()}/{len(g)} |")


if __name__ == "__main__":
    main()
