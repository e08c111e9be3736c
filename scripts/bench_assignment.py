"""The Rescheduler's matching step: the hand-written Hungarian algorithm against scipy's
`linear_sum_assignment`, in time and in the assignment chosen.

The matrices are those the matching step solves (`gpuaas.rescheduler.match_weights`): a
generated §4.1 snapshot with N nodes and J = 4.5 N jobs, some running (the incumbent), and the
solution `--method` returns for it, whose nodes are numbered freely; the matrix covers the
nodes open before or after (up to 2 N) but the pairs the matching step fixes first. Prints a markdown table: the matrix size, the median
and best of `--repeat` calls of each solver in milliseconds (numba kernel compiled first), and
whether both chose the same assignment and the same total weight.

    python scripts/bench_assignment.py --nodes 10 50 100 200 400 --seeds 1 2

Needs scipy, which gpuaas itself does not use (the hand-written one was kept, see
`gpuaas.rescheduler.assign_max`).
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import time

import numpy as np
from scipy.optimize import linear_sum_assignment

from gpuaas.generator import generate_instance
from gpuaas.methods import solve
from gpuaas.rescheduler import assign_max, match_weights

KINDS = ("as solved", "renumbered", "random")


def matching_matrix(nodes: int, seed: int, method: str, kind: str) -> np.ndarray:
    """The weights of the matching step after `method` solved a generated snapshot (`kind`
    "as solved"), with the solver's nodes numbered at random ("renumbered", as a method that
    ignores the incumbent's numbering does), or uniform random weights of the same size
    ("random", the Hungarian algorithm's hard case)."""
    inst = generate_instance(nodes, seed=seed)
    cat = inst.catalog
    old_vm = np.full(inst.nodes, -1, dtype=np.int64)
    run = inst.current_cfg >= 0
    old_vm[inst.current_node[run]] = cat.cfg_vm[inst.current_cfg[run]]
    sol = solve(inst, method, seed=seed)
    node_vm, job_node = sol.node_vm, sol.job_node
    rng = np.random.default_rng(seed)
    if kind == "renumbered":
        shuffle = rng.permutation(inst.nodes)
        node_vm = np.empty_like(node_vm)
        node_vm[shuffle] = sol.node_vm
        job_node = np.where(job_node >= 0, shuffle[np.maximum(job_node, 0)], -1)
    _rows, _cols, w = match_weights(
        old_vm, node_vm, inst.current_node, inst.current_cfg, job_node, sol.job_cfg
    )
    if kind == "random":
        w = rng.random(w.shape)
    return w


def scipy_assign_max(w: np.ndarray) -> np.ndarray:
    """Maximum-weight assignment by scipy: `perm[row] = column`."""
    return linear_sum_assignment(w, maximize=True)[1]


def timed(fn, w: np.ndarray, repeat: int) -> tuple[np.ndarray, list[float]]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        perm = fn(w)
        times.append(time.perf_counter() - t0)
    return perm, times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", nargs="+", type=int, default=[10, 50, 100, 200])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--method", default="greedy")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    assign_max(np.eye(3))  # compile / load the numba kernel
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}; median (best) of {args.repeat} calls\n"
    )
    print(
        "| N | seed | weights | matrix n | hand-written ms | scipy ms | same assignment | same weight |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for nodes, kind, seed in itertools.product(args.nodes, KINDS, args.seeds):
        w = matching_matrix(nodes, seed, args.method, kind)
        a, ta = timed(assign_max, w, args.repeat)
        b, tb = timed(scipy_assign_max, w, args.repeat)
        rows = np.arange(len(w))
        same_w = w[rows, a].sum() == w[rows, b].sum()
        print(
            f"| {nodes} | {seed} | {kind} | {len(w)} | {statistics.median(ta) * 1e3:.3f} ({min(ta) * 1e3:.3f}) "
            f"| {statistics.median(tb) * 1e3:.3f} ({min(tb) * 1e3:.3f}) "
            f"| {np.array_equal(a, b)} | {same_w} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
