"""Benchmarks (opt-in): `gpuaas.bound` at N = 1 000, J = 10 000 (issue 28).

Run with ``python -m pytest tests/benchmarks/test_bench_scale.py --benchmark-only``; the
before/after table with each command's CPU seconds and peak memory (ITP clusters too) comes
from ``scripts/bench_scale.py`` (formulations/BOUND.md §3). Target: within 60 s and 2 GB.
"""

from __future__ import annotations

import resource

import pytest

from gpuaas.bounds import bound
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance

CASES = ["exponential", "high"]


@pytest.mark.parametrize("arrivals", CASES)
def test_bound_at_n1000_j10000(benchmark, arrivals):
    """The whole bound of a §4.1 trace with N = 1 000 nodes and J = 10 000 jobs."""
    trace = Instance.from_dict(generate_trace(1000, 10_000, seed=1, arrivals=arrivals))
    bound(trace.subset(range(10)), nodes=1)  # compile / load the per-job kernel
    result = benchmark.pedantic(bound, args=(trace,), rounds=1)
    for k, v in result.to_dict().items():
        benchmark.extra_info[k] = v
    # the process's high-water mark (trace generation included), not this call's alone
    benchmark.extra_info["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert result.status in ("optimal", "fits") and result.seconds < 60
