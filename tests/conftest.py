"""Suite-wide pytest configuration.

The suite runs on every core through pytest-xdist (`-n auto` in pyproject.toml's addopts).
Benchmarks are timed in one process: with `--benchmark-only` the run stays serial, as
pytest-benchmark refuses to time anything under xdist.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: no workers for a benchmark run; otherwise xdist's own count (one per core)."""
    if config.getoption("benchmark_only", False):
        return 0
    return None


@pytest.fixture
def checkout_env() -> dict[str, str]:
    """The environment for a Python subprocess that must import this checkout's gpuaas, as the
    tests do, rather than an installed copy: its numba kernels are already cached (on a fresh
    machine an installed copy compiles them all again, 20-30 CPU s)."""
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
