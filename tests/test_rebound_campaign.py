"""scripts/rebound_campaign.py: a campaign's bound columns computed again, the runs kept."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

from gpuaas.bounds import bound
from gpuaas.instance import load_instance

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("rebound", ROOT / "scripts" / "rebound_campaign.py")
rb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rb)


def test_rebound_replaces_only_the_bound_columns(tmp_path):
    trace = tmp_path / "small.json"
    trace.write_text((ROOT / "instances" / "trace-small.json").read_text())
    fields = ["trace", "sim_nodes", "status", "spot", "bound_kind", "total_cost", "bound"]
    fields += ["cost_over_bound", "moves_per_job"]
    base = {"trace": "elsewhere/small.json", "status": "ok", "total_cost": "2000.0"}
    base |= {"bound": "1.0", "cost_over_bound": "2000.0", "moves_per_job": "0.5"}
    rows = [
        {**base, "sim_nodes": "2", "spot": "", "bound_kind": "on-demand"},
        {**base, "sim_nodes": "2", "spot": "model", "bound_kind": "spot"},
        {**base, "trace": "gone.json", "sim_nodes": "2", "spot": "", "bound_kind": "on-demand"},
    ]
    path = tmp_path / "c.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    rb.main([str(path), "--traces", str(tmp_path)])
    with open(path, newline="") as fh:
        on_demand, spot, gone = list(csv.DictReader(fh))
    low = bound(load_instance(str(trace)), nodes=2).bound
    assert float(on_demand["bound"]) == pytest.approx(low, rel=1e-12)
    assert float(on_demand["cost_over_bound"]) == pytest.approx(2000.0 / low, rel=1e-12)
    assert on_demand["moves_per_job"] == "0.5" and on_demand["total_cost"] == "2000.0"
    assert spot == {**rows[1]} and gone == {**rows[2]}
