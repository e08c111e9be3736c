"""Benchmarks (opt-in): `gpuaas.bound` at N = 1 000, J = 10 000 (issue 28); a Rescheduler's
tick with 4.5 N unfinished jobs, N = 100 and 1 000 (issue 43).

Run with ``python -m pytest tests/benchmarks/test_bench_scale.py --benchmark-only``; the
before/after table with each command's CPU seconds and peak memory (ITP clusters too) comes
from ``scripts/bench_scale.py`` (formulations/BOUND.md §3). Target: within 60 s and 2 GB.
"""

from __future__ import annotations

import resource

import pytest

from gpuaas.bounds import bound
from gpuaas.generator import generate_snapshot, generate_trace
from gpuaas.instance import Instance
from gpuaas.rescheduler import Rescheduler

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


def _busy(nodes: int) -> Rescheduler:
    """A Rescheduler (EDF: a method of little time) with a snapshot's 4.5 N jobs submitted."""
    trace = Instance.from_dict(generate_snapshot(nodes, seed=1))
    r = Rescheduler(trace.catalog, nodes, "edf", H=trace.H)
    r.submit([trace.job_spec(j) for j in range(trace.n_jobs)], at=trace.time)
    return r


@pytest.mark.parametrize("nodes", [100, 1000])
def test_tick_bookkeeping_per_job(benchmark, nodes):
    """One tick with 4.5 N unfinished jobs (issue 43): the Rescheduler's own seconds per event
    (the method's apart) grow far less than the jobs do (`extra_info`: both, per event)."""
    r = _busy(nodes)
    clock = iter(range(1, 10**9))
    solver: list[float] = []

    def tick():
        plan = r.tick(r.time + float(next(clock)))
        solver.append(plan.solver_seconds)

    benchmark.pedantic(tick, rounds=20, iterations=1)
    own = benchmark.stats.stats.mean - sum(solver) / len(solver)
    benchmark.extra_info.update(jobs=len(r.unfinished()), bookkeeping_s=own)
    assert len(r.unfinished()) > 4 * nodes


@pytest.mark.parametrize("code", ["compiled", "numpy"])
def test_delay_tardiness_at_n1000(benchmark, code):
    """The keep rules' tardiness of a move's delay (`move_tardiness="each"`, at every event of
    the default method) for a snapshot's running jobs at N = 1 000: the compiled pass against
    the numpy operations it replaced (the same values bit for bit: tests/test_scale.py)."""
    import dataclasses

    import numpy as np

    from gpuaas.heuristics.greedy import greedy
    from gpuaas.reconfiguration import _delay_tardiness_numpy, delay_tardiness

    trace = Instance.from_dict(generate_snapshot(1000, seed=1))
    sol = greedy(trace)
    inst = dataclasses.replace(
        trace, current_node=sol.job_node, current_cfg=sol.job_cfg, overhead=600.0, startup=120.0
    )
    run = np.flatnonzero(inst.current_cfg >= 0)
    f = delay_tardiness if code == "compiled" else _delay_tardiness_numpy
    f(inst, run)  # compile / load
    out = benchmark(f, inst, run)
    benchmark.extra_info.update(running=int(run.size), configs=inst.catalog.n_configs)
    assert out.shape == (run.size, inst.catalog.n_configs)
