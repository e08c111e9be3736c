"""Benchmarks (opt-in): `gpuaas.bound` on generated traces, and the per-job plan alone.

Run with ``python -m pytest tests/benchmarks/test_bench_bound.py --benchmark-only``; the table
of formulations/BOUND.md comes from ``scripts/bench_bound.py``. Target (issue 10, 2-core
machine): N = 100, J = 1000 within the default time limit (120 s) with the default slot; the
per-job plan, called at every rescheduling event by a scheduler, in milliseconds for J = 1000.
"""

from __future__ import annotations

import pytest

from gpuaas.bounds import DEFAULT_TIME_LIMIT, bound
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.per_job import per_job_plan

CASES = [(10, "high"), (100, "high"), (100, "exponential")]


@pytest.mark.parametrize(("nodes", "arrivals"), CASES, ids=[f"N{n}-{a}" for n, a in CASES])
def test_bound_speed(benchmark, nodes, arrivals):
    """The whole bound (per-job + capacity LP, default slot) of a §4.1 trace, J = 10 N."""
    trace = Instance.from_dict(generate_trace(nodes, seed=1, arrivals=arrivals))
    bound(trace, nodes=1)  # compile / load the per-job kernel
    result = benchmark.pedantic(bound, args=(trace,), rounds=3)
    for k, v in result.to_dict().items():
        benchmark.extra_info[k] = v
    assert result.status in ("optimal", "fits") and result.seconds < DEFAULT_TIME_LIMIT


def test_per_job_plan_speed(benchmark):
    """The per-job plan of 1000 jobs (what a scheduler would call at every event)."""
    trace = Instance.from_dict(generate_trace(100, seed=1))
    per_job_plan(trace)
    plan = benchmark(per_job_plan, trace)
    assert len(plan.cost) == 1000
