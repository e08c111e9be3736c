"""Suite-wide pytest configuration.

The suite runs on every core through pytest-xdist (`-n auto` in pyproject.toml's addopts).
Benchmarks are timed in one process: with `--benchmark-only` the run stays serial, as
pytest-benchmark refuses to time anything under xdist.
"""

from __future__ import annotations

import pytest


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: no workers for a benchmark run; otherwise xdist's own count (one per core)."""
    if config.getoption("benchmark_only", False):
        return 0
    return None
