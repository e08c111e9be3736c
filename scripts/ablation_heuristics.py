#!/usr/bin/env python
"""Ablation of the heuristic's steps on seeded generated snapshots (issue 4 must-show).

    python scripts/ablation_heuristics.py [--instances 200] [--seed0 0]
    python scripts/ablation_heuristics.py --online [--nodes 10] [--jobs 100] [--traces 3]

Instance k is `generate_instance(N, J, seed0 + k)` with N ~ U{1..100}, J ~ U{1..500} drawn
from seed0 + k. Greedy, Randomized Greedy (f_OBJ) and Path Relinking (f̄_OBJ) run with the
paper's parameters; the table gives, for each step, the mean relative improvement in the
proxy it optimises, on how many instances it improved, and the worst change (never < 0 is
the claim: each step is never worse than its input).

With ``--online``, the node-opening rules instead: `generate_trace(N, J, seed)` traces
(exponential, high and low arrivals, seeds 1..traces) through `simulate` for greedy and
path-relinking under each ``open_rule``, and EDF for reference; prints total cost per trace
and the mean per arrival pattern.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gpuaas.generator import generate_instance, generate_trace
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.path_relinking import path_relinking
from gpuaas.heuristics.randomized_greedy import randomized_greedy
from gpuaas.heuristics.state import OPEN_RULES, warm_up
from gpuaas.instance import Instance
from gpuaas.simulator import simulate
from gpuaas.validator import validate


def gain(before: float, after: float, maximise: bool) -> float:
    """Relative improvement in % (positive: better)."""
    if before == 0:
        return 0.0 if after == before else (100.0 if (after > before) == maximise else -100.0)
    return 100.0 * ((after - before) if maximise else (before - after)) / abs(before)


ROWS = [
    ("Greedy: postprocessing", "f_OBJ"),
    ("RG: Greedy -> best elite", "f_OBJ"),
    ("RG: best elite -> final (postprocessed)", "f_OBJ"),
    ("RG: Greedy -> RG final", "f_OBJ"),
    ("PR: best elite -> path relinking", "f̄_OBJ"),
    ("PR: path relinking -> postprocessing", "f̄_OBJ"),
    ("PR: postprocessing", "f_OBJ"),
    ("PR final vs Greedy final (other proxy)", "f_OBJ"),
]


def online(nodes: int, jobs: int, traces: int) -> None:
    """Total simulated cost of greedy / path-relinking under each open rule, and EDF."""
    runs = [("edf", {})] + [
        (m, {"open_rule": r}) for m in ("greedy", "path-relinking") for r in OPEN_RULES
    ]
    names = [m if not o else f"{m} ({o['open_rule']})" for m, o in runs]
    print(f"N = {nodes}, J = {jobs}, total cost ($) of the simulation, seed 1\n")
    print("| arrivals | trace | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    t0 = time.perf_counter()
    for arrivals in ("exponential", "high", "low"):
        costs = np.zeros((traces, len(runs)))
        for t in range(traces):
            trace = Instance.from_dict(generate_trace(nodes, jobs, seed=t + 1, arrivals=arrivals))
            for k, (method, opts) in enumerate(runs):
                costs[t, k] = simulate(trace, method, seed=1, **opts).total_cost
            print(
                f"| {arrivals} | {t + 1} | " + " | ".join(f"{c:,.0f}" for c in costs[t]) + " |",
                flush=True,
            )
        print(
            f"| {arrivals} | mean | " + " | ".join(f"{c:,.0f}" for c in costs.mean(axis=0)) + " |"
        )
    print(f"\n{time.perf_counter() - t0:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--online", action="store_true", help="compare the open rules in simulation")
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--traces", type=int, default=3)
    args = ap.parse_args()
    if args.online:
        online(args.nodes, args.jobs, args.traces)
        return
    for fn in (greedy, randomized_greedy, path_relinking):
        warm_up(fn)
    gains: dict[str, list[float]] = {r: [] for r, _ in ROWS}
    invalid = 0
    t0 = time.perf_counter()
    for k in range(args.instances):
        seed = args.seed0 + k
        rng = np.random.default_rng(seed)
        inst = generate_instance(int(rng.integers(1, 101)), int(rng.integers(1, 501)), seed=seed)
        g = greedy(inst, seed=seed)
        rg = randomized_greedy(inst, seed=seed)
        pr = path_relinking(inst, seed=seed)
        invalid += sum(not validate(s).ok for s in (g, rg, pr))
        gs, rs, ps = g.stats["steps"], rg.stats["steps"], pr.stats["steps"]
        vals = [
            gain(gs["greedy"]["f_obj"], gs["postprocessed"]["f_obj"], False),
            gain(rs["greedy"]["f_obj"], rs["best_elite"]["f_obj"], False),
            gain(rs["best_elite"]["f_obj"], rs["postprocessed"]["f_obj"], False),
            gain(g.f_obj, rg.f_obj, False),
            gain(ps["best_elite"]["proxy"], ps["path_relinking"]["proxy"], True),
            gain(ps["path_relinking"]["proxy"], ps["postprocessed"]["proxy"], True),
            gain(ps["path_relinking"]["f_obj"], ps["postprocessed"]["f_obj"], False),
            gain(g.f_obj, pr.f_obj, False),
        ]
        for (row, _), v in zip(ROWS, vals):
            gains[row].append(v)
    print(
        f"{args.instances} instances (seeds {args.seed0}..{args.seed0 + args.instances - 1}), "
        f"{invalid} invalid solutions, {time.perf_counter() - t0:.0f} s\n"
    )
    print("| step | proxy | mean improvement | improved on | worst change |")
    print("|---|---|---:|---:|---:|")
    for row, proxy in ROWS:
        v = np.array(gains[row])
        print(
            f"| {row} | {proxy} | {v.mean():.3f} % | {(v > 1e-9).sum()}/{len(v)} | {v.min():.3g} % |"
        )


if __name__ == "__main__":
    main()
