"""scripts/log_spend.py: a run's VM dollars by VM type, read from its event log, add up to the
run's own VM cost, and the changes of place it counts are the run's moves."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from gpuaas.catalog import load_catalog
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import simulate

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("log_spend", ROOT / "scripts" / "log_spend.py")
log_spend = importlib.util.module_from_spec(spec)
spec.loader.exec_module(log_spend)


def test_spend_adds_up_to_the_runs_vm_cost(tmp_path):
    trace = Instance.from_dict(generate_trace(3, seed=5, jobs=12, arrivals="high"))
    log = tmp_path / "log.jsonl"
    result = simulate(trace, "incremental", seed=1, log=log, bound=False)
    cost, idle, hours, moves = log_spend.spend(str(log), "azure-2021")
    assert abs(sum(cost.values()) - result.vm_cost) <= 1e-6 * result.vm_cost
    assert 0.0 <= sum(idle.values()) < sum(cost.values())
    assert all(h > 0 for h in hours.values())
    # a job moved between intervals is a migration or a resize of its node; a preempted job
    # leaves the running set and is not a change of place
    assert sum(moves.values()) <= result.migrations
    assert sum(moves.values()) > 0


def test_spend_prices_spot_variants_at_the_catalogs_spot_price(tmp_path):
    # a spot run's log names spot VMs ``TYPE:spot``; the catalog's own spot price prices them
    log = tmp_path / "log.jsonl"
    log.write_text(
        '{"start": 0.0, "end": 3600.0, "nodes": [{"node": 0, "vm": "g4dn.xlarge:spot"}], '
        '"jobs": [{"id": "j0", "node": 0, "vm": "g4dn.xlarge:spot", "gpus": 1}]}\n'
    )
    cat = load_catalog("aws-us-east-1")
    v = cat.vm_names.index("g4dn.xlarge")
    cost, idle, hours, moves = log_spend.spend(str(log), "aws-us-east-1")
    assert abs(cost["g4dn.xlarge:spot"] - cat.spot_per_hour[v]) < 1e-9
    assert cost["g4dn.xlarge:spot"] < cat.cost_per_hour[v]
    assert idle["g4dn.xlarge:spot"] == 0.0 and hours["g4dn.xlarge:spot"] == 1.0
