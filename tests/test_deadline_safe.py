"""The run setting `deadline_safe` (issue 41, item 3) and the attribution of delay and tardiness
to interruptions in the result JSON: the default's modes keep the margin, simulations under it
never put a job on spot without it, the setting reaches only the methods that take it, and the
attribution reconciles (0 without spot, at most the tardiness cost, equal to the event log's)."""

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuaas.availability import load_availability
from gpuaas.baselines.spot import NONE, ON_DEMAND, SPOT
from gpuaas.catalog import load_catalog
from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.generator import generate_trace
from gpuaas.heuristics.default.spot import reference_configs, spot_modes
from gpuaas.instance import Instance
from gpuaas.rescheduler import Rescheduler
from gpuaas.run_config import RunConfig
from gpuaas.simulation_result import SimulationResult
from gpuaas.simulator import simulate
from gpuaas.validator import validate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from eventlog import check_against, recompute  # noqa: E402

AWS = load_catalog("aws-us-east-1")


def aws_trace(nodes=3, jobs=12, seed=1, arrivals="exponential"):
    return Instance.from_dict(
        generate_trace(nodes, jobs=jobs, arrivals=arrivals, seed=seed, catalog="aws-us-east-1")
    )


def worst_case_slack(inst):
    """(J,) written out apart from `spot.safe_slack`: time to the due date less the work left on
    the fastest on-demand configuration, the worst interruption (restart, start-up, a whole
    checkpoint interval) and the tick H."""
    cat = inst.catalog
    od = ~cat.spot[cat.cfg_vm]
    out = np.full(inst.n_jobs, -np.inf)
    for j in range(inst.n_jobs):
        t = np.where(od & np.isfinite(inst.work[j]), inst.work[j], np.inf)
        if np.isfinite(t).any():
            ckpt = 0.0 if np.isnan(inst.checkpoint[j]) else inst.checkpoint[j]
            left = (1.0 - inst.progress[j]) * t.min()
            worst = inst.overhead + inst.startup + ckpt
            out[j] = inst.due[j] - inst.time - left - worst - inst.H
    return out


# -- the default's modes ------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 50),
    at=st.floats(0.0, 1.0),
    progress=st.lists(st.floats(0.0, 0.95), min_size=12, max_size=12),
    slack=st.lists(st.floats(0.0, 4.0), min_size=12, max_size=12),
    running=st.lists(st.integers(-1, 30), min_size=12, max_size=12),
    out=st.lists(st.booleans(), min_size=14, max_size=14),
    checkpoint=st.sampled_from([0.0, 900.0, 1800.0]),
)
def test_no_job_in_a_mode_that_allows_spot_lacks_the_margin(
    seed, at, progress, slack, running, out, checkpoint
):
    """Random points of an aws-us-east-1 trace: jobs released, with progress, due dates from
    late to far, some running (on spot or on demand), some spot types out of capacity."""
    inst = aws_trace(seed=seed).with_spot()
    cat = inst.catalog
    J = inst.n_jobs
    time = float(inst.release.max()) * at
    released = inst.release <= time
    ref = reference_configs(inst)
    fast = inst.work[np.arange(J), ref]
    cur = np.array([c if 0 <= c < cat.n_configs and np.isfinite(inst.work[j, c]) else -1
                    for j, c in enumerate(running)])  # fmt: skip
    spot_out = np.zeros(cat.n_vms, dtype=bool)
    spot_out[np.flatnonzero(cat.spot)] = out
    point = dataclasses.replace(
        inst,
        time=time,
        progress=np.array(progress),
        due=time + np.array(slack) * fast,
        current_node=np.where(cur >= 0, np.arange(J), -1),
        current_cfg=cur,
        ready=np.full(J, time),
        overhead=600.0,
        startup=120.0,
        checkpoint=np.full(J, checkpoint),
        room=np.where(spot_out, 0.0, np.inf),
        outage=np.where(spot_out, 3600.0, 0.0),
        hazard=np.where(cat.spot, 0.2 / 3600.0, 0.0),
    ).subset(np.flatnonzero(released) if released.any() else np.arange(1))
    modes = spot_modes(point, safe=True)
    allows = np.isin(modes, (SPOT, NONE))
    assert (worst_case_slack(point)[allows] >= -1e-6).all()
    # and it only ever takes spot away
    plain = spot_modes(point)
    assert ((modes == plain) | (modes == ON_DEMAND)).all()


def test_jobs_without_the_margin_and_late_jobs_get_no_spot():
    """One job, far from its due date: spot either way; with its slack below the worst
    interruption plus H: spot by Can't Be Late's rules (d = 0.45 h fits), on demand under the
    setting; late even on demand: spot today (price against delay), on demand under it."""
    inst = aws_trace(jobs=1).with_spot()
    fast = inst.work[0, reference_configs(inst)[0]]

    def point(slack):
        return dataclasses.replace(
            inst,
            time=float(inst.release[0]),
            due=inst.release[:1] + fast + slack,
            overhead=600.0,
            startup=120.0,
            checkpoint=np.array([1800.0]),
            hazard=np.where(inst.catalog.spot, 0.2 / 3600.0, 0.0),
        )

    far, near, late = point(20 * 3600.0), point(1.5 * 3600.0), point(-0.5 * fast)
    assert worst_case_slack(far)[0] > 0 > worst_case_slack(near)[0]
    assert spot_modes(far)[0] == spot_modes(far, safe=True)[0] == SPOT
    assert spot_modes(near)[0] == SPOT and spot_modes(near, safe=True)[0] == ON_DEMAND
    assert spot_modes(late)[0] == SPOT and spot_modes(late, safe=True)[0] == ON_DEMAND


def test_a_job_without_the_margin_is_held_to_on_demand_vms_that_meet_its_due_date():
    """A light job running on its cheapest on-demand configuration (g6.xlarge, 2.4 h), due in
    1.5 h, spot out of capacity: P1$ keeps it there, late; under the setting
    (`keep_due_dates`) it may take only the on-demand configurations that meet its due date
    with the restart and start-up, and moves to one. A job that none brings in time is left
    as it is."""
    from gpuaas.heuristics.default.spot import keep_due_dates, safe_slack
    from gpuaas.methods import solve

    inst = aws_trace(jobs=1).with_spot()
    cat = inst.catalog
    spot = cat.spot[cat.cfg_vm]
    cheap = cat.config(cat.vm_index("g6.xlarge"), 1)
    point = dataclasses.replace(
        inst,
        time=float(inst.release[0]),
        due=inst.release[:1] + 1.5 * 3600.0,
        current_node=np.array([0]),
        current_cfg=np.array([cheap]),
        ready=inst.release[:1],
        overhead=600.0,
        startup=120.0,
        checkpoint=np.array([1800.0]),
        weight=np.array([1e-4]),  # $ per second late: light
        work=np.where(spot[None, :], np.inf, inst.work),  # spot out of capacity
        room=np.where(cat.spot, 0.0, np.inf),
    )
    assert safe_slack(point)[0] < 0 and point.work[0, cheap] > point.rel_due[0]
    kept = keep_due_dates(point)
    assert kept.current_cfg[0] == -1 and not np.isfinite(kept.work[0, cheap])
    ok = np.isfinite(kept.work[0])
    assert ok.any() and (kept.work[0, ok] + 720.0 <= point.rel_due[0]).all()
    plain = solve(point, "incremental", seed=1)
    safe = solve(point, "incremental", seed=1, deadline_safe=True)
    assert validate(safe).ok and safe.instance is point
    assert plain.job_cfg[0] == cheap
    assert safe.job_cfg[0] >= 0 and point.work[0, safe.job_cfg[0]] + 720.0 <= point.rel_due[0]
    hopeless = dataclasses.replace(point, due=inst.release[:1] + 60.0)
    assert keep_due_dates(hopeless) is hopeless


# -- the run setting ----------------------------------------------------------------------------


def test_the_setting_is_checked_and_reaches_only_the_methods_that_take_it():
    assert not RunConfig().deadline_safe and not RunConfig(spot=True).call_options()
    with pytest.raises(InputError, match="deadline_safe: needs spot capacity"):
        RunConfig(deadline_safe=True)
    with pytest.raises(InputError, match="deadline_safe: must be true or false"):
        RunConfig(spot=True, deadline_safe="yes")
    with pytest.raises(InputError, match="unknown option.*deadline_safe"):
        RunConfig(spot=True, options={"deadline_safe": True})  # a run setting, not an option
    on = RunConfig.build(None, "incremental", spot=True, deadline_safe=True, rivals=2)
    assert on.call_options() == {"rivals": 2, "deadline_safe": True}
    for method in ("managed-spot", "uniform-progress", "on-demand", "edf"):  # they ignore it
        assert RunConfig(method=method, spot=True, deadline_safe=True).call_options() == {}
    assert RunConfig.from_dict(on.to_dict()) == on


def test_the_state_keeps_the_setting_and_older_states_restore_without_it():
    r = Rescheduler("aws-us-east-1", nodes=2, spot=True, deadline_safe=True)
    r.submit({"id": "a", "due": 1e5, "weight": 0.001, "times": {"p3.2xlarge": [3600.0]}}, at=0.0)
    state = json.loads(json.dumps(r.state()))
    assert state["config"]["run"]["deadline_safe"] is True
    assert Rescheduler.restore(state).config.deadline_safe
    del state["config"]["run"]["deadline_safe"]  # a state written before the setting
    assert not Rescheduler.restore(state).config.deadline_safe
    v3 = json.loads((ROOT / "tests" / "data" / "rescheduler-state-v3.json").read_text())["state"]
    assert not Rescheduler.restore(v3).config.deadline_safe


def test_a_simulation_under_the_setting_puts_no_job_on_spot_without_the_margin(
    monkeypatch, tmp_path
):
    """Every point of a simulation with spot capacity: under the setting, each job the
    default's plan puts (or keeps) on spot keeps the margin at that point; without it, some
    job runs on spot without the margin (so the check can fail). The runs validate and
    reconcile from their event logs. J = 8: without the setting 15 job-points lack the margin
    on spot, under it none of 76 spot placements does."""
    import gpuaas.heuristics.default.method as M

    trace = aws_trace(jobs=8, seed=2, arrivals="high")
    avail = load_availability("model:rate=0.1", AWS, seed=3, horizon=3e6, slots=3)
    seen = {}
    real = M.with_spot

    def spy(instance, planner, deadline_safe=False, **kw):
        sol = real(instance, planner, deadline_safe=deadline_safe, **kw)
        assert validate(sol).ok
        cat = instance.catalog
        on = np.flatnonzero(sol.job_cfg >= 0)
        on = on[cat.spot[cat.cfg_vm[sol.job_cfg[on]]]]
        short = (worst_case_slack(instance)[on] < -1e-6).sum()
        if deadline_safe:  # a job without the margin is on a VM that meets its due date
            lack = np.flatnonzero(
                (worst_case_slack(instance) < -1e-6) & (sol.job_cfg >= 0) & ~instance.pinned
            )
            c = sol.job_cfg[lack]
            stays = c == instance.current_cfg[lack]
            end = (1 - instance.progress[lack]) * instance.work[lack, c] + np.where(stays, 0, 720)
            can = [
                ((1 - instance.progress[j]) * instance.work[j, ~cat.spot[cat.cfg_vm]] + 720
                 <= instance.rel_due[j]).any()
                for j in lack
            ]  # fmt: skip
            assert (end[np.array(can, dtype=bool)] <= instance.rel_due[lack][can] + 1e-6).all()
        seen[deadline_safe] = seen.get(deadline_safe, 0) + int(short)
        seen[(deadline_safe, "spot")] = seen.get((deadline_safe, "spot"), 0) + len(on)
        return sol

    monkeypatch.setattr(M, "with_spot", spy)
    for safe in (False, True):
        log = tmp_path / f"ev-{safe}.jsonl"
        res = simulate(trace, seed=1, availability=avail, deadline_safe=safe, bound=False, log=log)
        assert res.config.deadline_safe is safe and res.interruptions > 0
        assert check_against(recompute(log, trace), res.to_dict(), trace) == []
    assert seen[True] == 0 and seen[(True, "spot")] > 0
    assert seen[False] > 0


# -- attribution --------------------------------------------------------------------------------


def test_interruption_delay_reconciles_from_the_event_log(tmp_path):
    """Each job's `interruption_delay` equals the event log's (its interruptions' lost work, then
    until its next run began), and the tardiness attributed is at most the tardiness cost."""
    trace = aws_trace(jobs=15)
    avail = load_availability("model:spell_rate=1.0,rate=0.05", AWS, seed=3, horizon=3e6, slots=3)
    log = tmp_path / "ev.jsonl"
    res = simulate(trace, "greedy", seed=2, log=log, availability=avail, bound=False)
    out = res.to_dict()
    assert check_against(recompute(log, trace), out, trace) == []
    delays = [j["interruption_delay"] for j in out["jobs"]]
    assert sum(d > 0 for d in delays) >= 3
    for j in out["jobs"]:  # at least the work lost, and nothing without an interruption
        lost = j["interruption_delay"] > 0
        assert lost == (j["interruptions"] > 0)
    assert out["interruption_delay_hours"] == pytest.approx(sum(delays) / 3600.0)
    assert 0 < out["interruption_tardiness_cost"] <= out["tardiness_cost"]


def test_no_spot_no_attribution():
    res = simulate(aws_trace(jobs=8), seed=1, bound=False)
    out = res.to_dict()
    assert out["interruptions"] == 0 and out["interruption_tardiness_cost"] == 0.0
    assert out["interruption_delay_hours"] == 0.0 and out["deadline_safe"] is False
    assert all(j["interruption_delay"] == 0.0 for j in out["jobs"])


job_records = st.lists(
    st.fixed_dictionaries(
        {
            "weight": st.floats(0.0, 10.0),
            "late": st.floats(0.0, 1e5),
            "interruption_delay": st.floats(0.0, 1e5),
        }
    ),
    max_size=20,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job_records)
def test_the_tardiness_attributed_is_between_zero_and_the_tardiness_cost(jobs):
    """Per job weight x min(tardiness, delay): never above its tardiness cost, and 0 for a
    job in time or not delayed."""
    for j in jobs:
        j["tardiness_cost"] = j["weight"] * j["late"]
    res = SimulationResult(
        config=RunConfig(),
        total_cost=0.0,
        vm_cost=0.0,
        tardiness_cost=sum(j["tardiness_cost"] for j in jobs),
        jobs=jobs,
        events=0,
        migrations=0,
        preemptions=0,
        solver_seconds=[],
        wall_seconds=0.0,
    )
    got = res.interruption_tardiness_cost
    assert 0.0 <= got <= res.tardiness_cost * (1 + 1e-12) + 1e-12
    want = sum(j["weight"] * min(j["late"], j["interruption_delay"]) for j in jobs)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)


# -- interfaces ---------------------------------------------------------------------------------


def test_cli_deadline_safe(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(generate_trace(2, jobs=6, seed=1, catalog="aws-us-east-1")))
    out = tmp_path / "r.json"
    args = ["simulate", str(path), "--spot", "--deadline-safe", "-q", "--json", "-o", str(out)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["deadline_safe"] is True and "interruption_tardiness_cost" in data
    res = CliRunner().invoke(cli, ["simulate", str(path), "--deadline-safe", "-q"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "gpuaas: error: deadline_safe: needs spot capacity (spot=True, --spot)"
    ]
    csv = tmp_path / "c.csv"
    args = ["compare", str(path), "--spot", "--deadline-safe", "--methods", "incremental,edf"]
    res = CliRunner().invoke(cli, [*args, "-q", "-o", str(csv)])
    assert res.exit_code == 0, res.output
    from gpuaas.experiments.store import read_results

    rows = {r["method"]: r for r in read_results(csv)}
    assert rows["incremental"]["deadline_safe"] is True  # it acts there
    assert rows["edf"]["deadline_safe"] is False  # edf ignores it: simulated without
    assert rows["incremental"]["interruption_tardiness_cost"] is not None


def test_a_campaign_axis_simulates_the_setting_only_where_it_acts():
    from gpuaas.experiments.analysis import row_run
    from gpuaas.experiments.spec import expand, parse_spec

    spec = parse_spec(
        {
            "nodes": 2,
            "arrivals": "exponential",
            "seeds": 1,
            "catalog": "aws-us-east-1",
            "methods": ["incremental", "managed-spot"],
            "spot": [None, "model"],
            "deadline_safe": [False, True],
        }
    )
    cells = {(c.run.method, c.run.spot, c.run.deadline_safe) for c in expand(spec)}
    assert cells == {
        ("incremental", False, False),
        ("incremental", True, False),
        ("incremental", True, True),
        ("managed-spot", False, False),
        ("managed-spot", True, False),
    }
    names = {row_run(c.params()) for c in expand(spec)}
    assert names == {"incremental", "incremental deadline-safe", "managed-spot"}
