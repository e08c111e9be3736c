"""Results do not drift unseen: the smoke grid's pinned costs (`tests/smoke.py`) and the
README's example outputs, produced again by the commands it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import smoke
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.methods import METHODS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("cell", smoke.cells(), ids=smoke.key)
def test_smoke_grid(cell):
    """Each method's total cost on each smoke trace stays where it was pinned (1e-6 relative)."""
    pinned = smoke.pinned()[smoke.key(cell)]
    now = smoke.total_cost(cell)
    assert now == pytest.approx(pinned, rel=smoke.TOLERANCE), (
        f"{smoke.key(cell)}: {pinned:.4f} $ pinned, {now:.4f} $ now ({now / pinned - 1:+.2%}); "
        "a change that moves results says so in its commit and CHANGELOG and re-pins them: "
        "python tests/smoke.py --write"
    )


def test_every_method_is_in_the_smoke_grid():
    """A registered method joins the grid (and its pins) when it is added."""
    pins = smoke.pinned()
    assert set(pins) == {smoke.key(c) for c in smoke.cells()}
    for method in METHODS:
        for costs in ("default", "paper"):
            assert any(k.endswith(f"/{method}/{costs}") for k in pins), (method, costs)


def _readme_examples() -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of the README's ```text blocks of `$ gpuaas ...`
    lines; a line "..." skips output lines, a line ending in "..." is a prefix."""
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"```text\n(.*?)```", text, re.DOTALL):
        for part in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            command, *lines = part.rstrip("\n").split("\n")
            out.append((command, lines))
    return out


EXAMPLES = _readme_examples()


def test_readme_shows_examples():
    commands = [c for c, _ in EXAMPLES]
    assert "gpuaas bound instances/trace-small.json" in commands
    assert "gpuaas simulate instances/trace-small.json --method greedy -q" in commands
    assert any(c.startswith("gpuaas compare instances/trace-small.json") for c in commands)


@pytest.mark.parametrize(("command", "expected"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_output(command, expected, monkeypatch):
    """Each README output block is what its command prints now: the lines shown appear in
    order ("..." skips lines; a line ending in "..." is a prefix of the printed one)."""
    monkeypatch.chdir(ROOT)
    args = command.split()
    assert args[0] == "gpuaas"
    res = CliRunner().invoke(cli, args[1:])
    assert res.exit_code == 0, res.output
    printed = [line.rstrip() for line in res.stdout.splitlines()]
    at = 0
    for want in expected:
        if want == "...":
            continue
        prefix = want.endswith("...")
        want = want.removesuffix("...").rstrip()
        found = next(
            (
                i
                for i in range(at, len(printed))
                if (printed[i].startswith(want) if prefix else printed[i] == want)
            ),
            None,
        )
        assert found is not None, f"README shows {want!r}; {command} printed:\n{res.stdout}"
        at = found + 1
