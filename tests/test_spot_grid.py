"""scripts/spot_grid.py: the means over solver seeds are ratios of mean costs, trace by trace,
and only traces run at two or more seeds with and without spot get one."""

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
    assert "| 0.9583 | 1.100 0.857 | 0.833 / 1.167 |" in table[0]
    assert any("Summed over 1 traces: 0.9583" in x for x in lines)
    assert spot_grid.seed_means(rows[4:]) == []
