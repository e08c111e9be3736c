"""The README's spot example ("Spot capacity"): each command's total, as the README prints it,
is what the command gives today (about a minute a run: opt-in, ``-m slow``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuaas.instance import load_instance
from gpuaas.simulator import simulate

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "instances" / "trace-aws.json"
REPLAY = (
    f"p3.2xlarge={ROOT}/instances/spot/bamboo-p3-sample.csv,"
    f"g4dn.xlarge={ROOT}/instances/spot/bamboo-g4dn.csv"
)


def readme_figures() -> list[float]:
    """The three totals of the README's spot example, in its order (on demand, the model,
    the replay)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Spot capacity", 1)[1].split("```", 2)[1]
    return [float(x) for x in re.findall(r"# [^\n]*?([\d.]+) \$", block)]


def test_the_readme_names_three_totals():
    assert len(readme_figures()) == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    "index, kw",
    [(0, {}), (1, {"spot": True}), (2, {"spot": True, "availability": REPLAY})],
    ids=["on-demand", "model", "replay"],
)
def test_the_readme_spot_example_totals(index, kw):
    result = simulate(load_instance(TRACE), "incremental", seed=1, **kw)  # the CLI's seed
    assert round(result.total_cost, 2) == readme_figures()[index]
