"""Brute-force cheapest schedule of a tiny trace on ONE node, written independently of gpuaas.

The schedules enumerated: the jobs are split into batches run one after the other in every
order; a batch opens one VM of some type v when its last job is released (and not before the
previous batch ends), runs each of its jobs on that VM with g_j GPUs (Σ g_j <= G_v) from that
moment, and closes the VM when its last job ends. Every combination of order, grouping, VM type
and GPU counts is tried. Each such schedule is feasible for one node, so its cost (VM price x
open time + Σ ω_j·max(0, completion − due)) is an upper bound on the optimum: a valid lower
bound must never exceed the cheapest of them.
"""

from __future__ import annotations

import itertools
import math

from gpuaas.instance import Instance


def ordered_partitions(items: list[int]):
    """Every sequence of non-empty disjoint blocks covering `items` (ordered set partitions)."""
    if not items:
        yield []
        return
    for r in range(1, len(items) + 1):
        for first in itertools.combinations(items, r):
            rest = [i for i in items if i not in first]
            for tail in ordered_partitions(rest):
                yield [list(first), *tail]


def cheapest_one_node_schedule(trace: Instance) -> float:
    """The lowest cost among the batch schedules of the module docstring (plain Python)."""
    cat = trace.catalog
    J = trace.n_jobs
    price = [float(p) / 3600.0 for p in cat.cost_per_hour]
    gpus = [int(g) for g in cat.gpus]
    offset = [int(o) for o in cat.cfg_offset]
    rel = [max(float(trace.release[j]), trace.time) for j in range(J)]
    due = [float(trace.due[j]) for j in range(J)]
    w = [float(trace.weight[j]) for j in range(J)]
    rem = [
        [float(trace.work[j, c]) * (1.0 - float(trace.progress[j])) for c in range(cat.n_configs)]
        for j in range(J)
    ]

    def batch_options(block: list[int]):
        """(VM type, per-job durations) for every way to run `block` together on one VM."""
        for v in range(cat.n_vms):
            ranges = [range(1, gpus[v] + 1)] * len(block)
            for gs in itertools.product(*ranges):
                if sum(gs) > gpus[v]:
                    continue
                durs = [rem[j][offset[v] + g - 1] for j, g in zip(block, gs)]
                if all(math.isfinite(d) for d in durs):
                    yield v, durs

    best = math.inf  # future costs never fall when the node is free later: prune dominated states
    for blocks in ordered_partitions(list(range(J))):
        partial = [(0.0, -math.inf)]  # (cost so far, time the node is free)
        for block in blocks:
            nxt = []
            for cost, free in partial:
                start = max(free, max(rel[j] for j in block))
                for v, durs in batch_options(block):
                    end = start + max(durs)
                    c = cost + price[v] * (end - start)
                    c += sum(w[j] * max(0.0, start + d - due[j]) for j, d in zip(block, durs))
                    nxt.append((c, end))
            nxt.sort()
            partial = []  # keep only states no other beats on both cost and free time
            for c, end in nxt:
                if not partial or end < partial[-1][1]:
                    partial.append((c, end))
        best = min([best] + [c for c, _ in partial])
    return best
