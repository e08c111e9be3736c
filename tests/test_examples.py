"""The examples run: examples/orchestrator.py drives a Rescheduler and an in-memory cloud."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_orchestrator_example_runs_and_reconciles():
    """Every job completes, a restart from the saved parts continues, a redelivered batch gets
    the same plan, and the cloud's bill is the Rescheduler's VM cost (same VMs, same times)."""
    example = runpy.run_path(str(ROOT / "examples" / "orchestrator.py"))
    out = example["main"]()
    assert sorted(out["done"]) == ["alexnet", "lstm", "resnet", "vgg"]
    assert out["same"] is True
    assert out["bill"] == pytest.approx(out["vm_cost"], rel=1e-9)


def test_orchestrator_example_as_a_script(checkout_env):
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "orchestrator.py")],
        env=checkout_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert "restarted at" in res.stdout and "nothing changed: True" in res.stdout
