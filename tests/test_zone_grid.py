"""scripts/zone_grid.py: the means over solver seeds are ratios of mean costs to the one-zone
on-demand run's, trace by trace, with the single seeds' least and largest ratio."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("zone_grid", ROOT / "scripts" / "zone_grid.py")
zone_grid = importlib.util.module_from_spec(spec)
spec.loader.exec_module(zone_grid)


def row(seed, run, solver_seed, cost):
    r = {"catalog": "aws-v100-zones", "zone": "us-east-2b", "nodes": 10, "arrivals": "low"}
    r.update(seed=seed, run=run, total_cost=cost)
    if solver_seed:
        r["solver_seed"] = solver_seed
    return r


def test_seed_means_are_ratios_of_mean_costs():
    od, spot = "on-demand, one zone", "spot, one zone"
    rows = [
        row(1, od, 0, 100.0),
        row(1, od, 1, 300.0),
        row(1, spot, 0, 110.0),  # 1.10 and 0.90 by seed; the means 190 / 200
        row(1, spot, 1, 270.0),
        row(2, od, 0, 100.0),  # one solver seed: no mean
        row(2, spot, 0, 90.0),
    ]
    lines = zone_grid.seed_means(rows)
    assert [x for x in lines if x.startswith("| low-")] == [
        "| low-1 | 0,1 | 0.9500 (0.900-1.100) [0.900-1.100] |"
    ]
    assert zone_grid.seed_means(rows[4:]) == []
    # a run at fewer seeds than the row's other runs says at which
    every = "spot, every zone"
    more = rows + [row(1, od, 2, 200.0), row(1, every, 0, 50.0), row(1, every, 1, 150.0)]
    more.append(row(1, every, 2, 100.0))
    (line,) = [x for x in zone_grid.seed_means(more) if x.startswith("| low-1 ")]
    assert line == (
        "| low-1 | 0,1,2 | 0.9500 (0.900-1.100) [0.900-1.100] at 0,1 "
        "| 0.5000 (0.500-0.500) [0.500-0.500] |"
    )
