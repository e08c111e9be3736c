"""CI runs the linter and the formatter: `ruff check` and `ruff format --check` on the whole tree
(settings in pyproject.toml, [tool.ruff])."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("ruff")
    cmd = [exe] if exe else [sys.executable, "-m", "ruff"]
    return subprocess.run([*cmd, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args", [("check", "."), ("format", "--check", ".")], ids=["check", "format"]
)
def test_ruff(args):
    """No lint finding and nothing the formatter would change; the output names what to fix."""
    out = _ruff(*args)
    assert out.returncode == 0, out.stdout + out.stderr
