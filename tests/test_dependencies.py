"""Every dependency pyproject.toml declares for the package is imported by it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: distribution name -> the module it provides, where they differ
MODULE = {"pyyaml": "yaml"}


def imported_modules() -> set[str]:
    """Top-level names of every module the gpuaas package imports (anywhere in its code)."""
    found: set[str] = set()
    for path in (ROOT / "gpuaas").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def test_declared_dependencies_are_imported():
    """A dependency nothing imports (as networkx was) is an install cost for nothing."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() for d in project["dependencies"]]
    assert "numpy" in names
    used = imported_modules()
    assert [n for n in names if MODULE.get(n, n) not in used] == []
