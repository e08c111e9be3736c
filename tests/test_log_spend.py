"""scripts/log_spend.py: a run's VM dollars by VM type, read from its event log, add up to the
run's own VM cost, and the changes of place it counts are the run's moves."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
