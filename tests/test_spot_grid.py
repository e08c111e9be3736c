"""scripts/spot_grid.py: the means over solver seeds are ratios of mean costs, trace by trace,
and only traces run at two or more seeds with and without spot get one; their interval is a
paired bootstrap over the seeds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("spot_grid", ROOT / "scripts" / "spot_grid.py")
spot_grid = importlib.util.module_from_spec(spec)
spec.loader.exec_module(spot_grid)


def row(seed, source, solver_seed, cost):
    return {
        "seed": seed,
        "arrivals": "high",
        "nodes": 10,
        "source": source,
        "method": "incremental",
        "settings": {},
        "solver_seed": solver_seed,
        "total_cost": cost,
    }


def test_seed_means_are_ratios_of_mean_costs():
    rows = [
        row(1, "none", 0, 100.0),
        row(1, "none", 1, 140.0),
        row(1, "replay", 0, 110.0),  # one seed 1.10, the other 0.857: the means 1.0
        row(1, "replay", 1, 120.0),
        row(2, "none", 0, 100.0),  # one solver seed only: no mean
        row(2, "replay", 0, 90.0),
    ]
    lines = spot_grid.seed_means(rows)
    table = [x for x in lines if x.startswith("| high-")]
    assert len(table) == 1 and table[0].startswith("| high-1 N=10 | 0,1 | 120.00 | 115.00 |")
    # resampling two seeds gives 1.1 (seed 0 twice), 0.958 or 0.857 (seed 1 twice)
    assert "| 0.9583 | 0.857-1.100 | 1.100 0.857 | 0.833 / 1.167 |" in table[0]
    assert any("Summed over 1 traces: 0.9583 x without spot (0.857-1.100;" in x for x in lines)
    assert any("dearer beyond noise, the interval above 1, on 0" in x for x in lines)
    assert spot_grid.seed_means(rows[4:]) == []


def test_dearer_beyond_noise_only_where_every_resample_is():
    """A trace dearer with spot at every seed is dearer beyond noise; one dearer at one seed of
    two is not."""
    rows = [row(1, s, k, c) for s, k, c in [("none", 0, 100.0), ("none", 1, 200.0)]]
    rows += [row(1, "replay", 0, 103.0), row(1, "replay", 1, 204.0)]
    rows += [row(2, s, k, c) for s, k, c in [("none", 0, 100.0), ("none", 1, 100.0)]]
    rows += [row(2, "replay", 0, 120.0), row(2, "replay", 1, 90.0)]
    lines = spot_grid.seed_means(rows)
    assert any("dearer beyond noise, the interval above 1, on 1)" in x for x in lines)
    (one,) = [x for x in lines if x.startswith("| high-1 ")]
    low = float(one.split(" | ")[5].split("-")[0])
    assert 1.02 <= low <= 1.03  # every resample between 1.02 (seed 1 alone) and 1.03 (seed 0)
    (two,) = [x for x in lines if x.startswith("| high-2 ")]
    assert two.split(" | ")[5] == "0.900-1.200"


def test_seeds_label():
    assert spot_grid.seeds_label([0, 1, 2, 3, 4]) == "0,1,2,3,4"
    assert spot_grid.seeds_label(list(range(15))) == "0-14"
    assert spot_grid.seeds_label([0, 2, 3, 4, 5, 6, 7]) == "0,2,3,4,5,6,7"
