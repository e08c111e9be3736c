"""Opt-in benchmark (pytest --benchmark-only): one event and its save with 10 000 completed
jobs in the state costs what it costs with none (scripts/bench_state.py prints both)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_state.py"
spec = importlib.util.spec_from_file_location("bench_state", SCRIPT)
bench_state = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_state)


@pytest.mark.parametrize("completed", [0, 10_000])
def test_tick_and_save(benchmark, completed):
    r = bench_state.with_completed(completed)
    clock = iter(range(3600, 10**9, 3600))

    def event():
        r.tick(float(next(clock)))
        bench_state.save(r, len(r.completions()))

    benchmark(event)
