"""The simulator's decision interval (`RunConfig.decision_interval`): an orchestrator that polls
is told each event at its next decision, and the run still reconciles from its event log."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from eventlog import check_against, read_log, recompute
from hypothesis import given
from hypothesis import strategies as st

from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.experiments.analysis import run_name
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.run_config import RunConfig, settings
from gpuaas.simulator import decision_time, simulate


@given(
    st.floats(min_value=0.0, max_value=1e9, allow_nan=False),
    st.floats(min_value=1e-3, max_value=1e5, allow_nan=False),
)
def test_decision_time_is_the_next_multiple(t, every):
    d = decision_time(t, every)
    k = round(d / every)
    assert d >= t and d - every < t and d == k * every


@pytest.mark.parametrize("every", [600.0, 1000.0])
def test_polled_run_reconciles_from_its_log(every, tmp_path):
    """N = 10, J = 100 (high arrivals) with a 600 s restart: every rescheduling point is a
    multiple of the interval, every job completes at one, the event log gives the same VM,
    tardiness and total cost, and each job did its work by the end of its last interval and
    not before it (`check_against(told_late=True)`); the total stays above the bound."""
    trace = Instance.from_dict(generate_trace(10, 100, seed=3, arrivals="high"))
    log = tmp_path / "run.jsonl"
    res = simulate(trace, seed=1, log=log, overhead=600.0, decision_interval=every).to_dict()
    assert check_against(recompute(log, trace), res, trace, told_late=True) == []
    points = [r["start"] for r in read_log(log)] + [read_log(log)[-1]["end"]]
    assert all(p % every == 0 for p in points)
    assert len(res["jobs"]) == 100 and all(j["completion"] % every == 0 for j in res["jobs"])
    assert res["total_cost"] >= res["bound"]
    # told at once, the same run's log does not pass as one told late (the check can fail)
    now = simulate(trace, seed=1, log=log, overhead=600.0).to_dict()
    assert any(j["completion"] % every for j in now["jobs"])
    assert check_against(recompute(log, trace), now, trace) == []


def test_the_setting_checked_and_keyed(tmp_path):
    """A positive number of seconds; the campaign key and the run's label name it only when
    set; refused with spot capacity (an interruption is not polled)."""
    for bad in (0, -5.0, "60", float("nan")):
        with pytest.raises(InputError, match="decision_interval"):
            RunConfig(decision_interval=bad)
    (setting,) = [s for name, _, s in settings() if name == "decision_interval"]
    assert setting.key_part(None) == "" and setting.key_part(60.0) == "-every60"
    assert run_name("incremental", 1, {"decision_interval": 60.0}) == "incremental every 60 s"
    assert run_name("incremental", 1, {"decision_interval": None}) == "incremental"
    aws = Instance.from_dict(generate_trace(2, 6, seed=2, catalog="aws-us-east-1"))
    with pytest.raises(InputError, match="decision_interval: does not combine with spot"):
        simulate(aws, spot=True, decision_interval=60.0)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(generate_trace(3, 12, seed=1)))
    runner = CliRunner()
    res = runner.invoke(cli, ["simulate", str(path), "--decision-interval", "0"])
    assert res.exit_code == 2 and "--decision-interval" in res.output
    res = runner.invoke(cli, ["simulate", str(path), "--decision-interval", "900", "--json", "-q"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["decision_interval"] == 900 and all(j["completion"] % 900 == 0 for j in out["jobs"])
