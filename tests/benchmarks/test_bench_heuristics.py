"""Benchmarks (opt-in): Greedy, Randomized Greedy and Path Relinking on generated snapshots.

Run with ``python -m pytest tests/benchmarks/test_bench_heuristics.py --benchmark-only``.
Sizes N = 10, 50, 100 with J = 4.5 N (45, 225, 450), the paper's parameters; kernels are
compiled before timing, so the figures are warm solve times (issue 4 target: PR at N = 100
within 0.7 s on the 2-core machine).
"""

from __future__ import annotations

import pytest

from gpuaas.generator import generate_instance
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.path_relinking import path_relinking
from gpuaas.heuristics.randomized_greedy import randomized_greedy
from gpuaas.heuristics.state import OPEN_RULES, warm_up

SIZES = [(10, 45), (50, 225), (100, 450)]
METHODS = {
    "greedy": greedy,
    "randomized-greedy": randomized_greedy,
    "path-relinking": path_relinking,
}


@pytest.mark.parametrize(("nodes", "jobs"), SIZES, ids=[f"N{n}-J{j}" for n, j in SIZES])
@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("open_rule", list(OPEN_RULES))
def test_heuristic_speed(benchmark, open_rule, method, nodes, jobs):
    """Warm solve time of one method and node-opening rule on a generated snapshot (seed 1)."""
    for fn in METHODS.values():
        warm_up(fn)
    inst = generate_instance(nodes, jobs, seed=1)
    fn = METHODS[method]
    sol = benchmark.pedantic(
        fn,
        args=(inst,),
        kwargs={"seed": 1, "open_rule": open_rule},
        rounds=5 if jobs > 100 else 10,
        warmup_rounds=1,
    )
    benchmark.extra_info["f_obj"] = sol.f_obj
    assert sol.stats["seconds"] > 0
