"""The never-moving schedule on VMs (`gpuaas.vm_schedule`, `upper(..., vm_schedule=True)`):
a plan within N VMs, each job at or after its release and never moved, replayed through the
simulator as a complete run whose every plan the validator accepts and whose event log
reconciles against the ORIGINAL trace."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from eventlog import check_against, read_log, recompute

import gpuaas.rescheduler.apply as apply
from gpuaas.bounds import bound
from gpuaas.cli import cli
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.methods import METHODS
from gpuaas.simulator import simulate
from gpuaas.upper import upper, write_log
from gpuaas.validator import validate
from gpuaas.vm_schedule import (
    FOLLOW,
    VARIANTS,
    best_plan,
    check_plan,
    follow,
    full_periods,
    peaks,
    replay,
    shrunk,
    smaller_configs,
    vm_schedule,
)

ROOT = Path(__file__).resolve().parents[1]


def itp_sample(first: int, count: int, nodes: int) -> Instance:
    """Jobs first .. first + count of the bundled ITP cluster 10 sample, imported as `gpuaas
    import elasticflow` does, on `nodes` nodes."""
    spec = importlib.util.spec_from_file_location("ur", ROOT / "scripts" / "upper_report.py")
    ur = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ur)
    full = ur.itp_trace(str(ROOT / ur.ITP_SAMPLE))
    return dataclasses.replace(full.subset(np.arange(first, first + count)), nodes=nodes)


def generated(seed: int, nodes: int = 2, jobs: int = 12) -> Instance:
    return Instance.from_dict(generate_trace(nodes, jobs, seed=seed, arrivals="high"))


def open_at_most(plan, n: int) -> bool:
    """At no time more than n of the plan's VM instances open."""
    t = np.concatenate([plan.open, plan.close])
    d = np.concatenate([np.ones(plan.instances), -np.ones(plan.instances)])
    o = np.lexsort((d, t))  # a close before an open at the same time
    return bool(np.cumsum(d[o]).max() <= n)


@pytest.mark.parametrize("seed", [1, 3, 8])
@pytest.mark.parametrize(("configs", "order", "weight"), [VARIANTS[0], VARIANTS[-1]])
def test_plan_is_a_schedule_within_n_vms(seed, configs, order, weight):
    """Every variant's plan: no job placed before its release, each on a VM of its
    configuration's type within its GPUs, no instance empty while open, one instance per slot
    at a time, so never more than N VMs; its own cost is its VMs' time and the tardiness."""
    trace = generated(seed)
    for startup in (0.0, 120.0):
        plan = vm_schedule(trace, startup=startup, order=order, configs=configs, vm_weight=weight)
        assert check_plan(trace, plan) == []
        assert (plan.start >= trace.release).all()
        assert np.allclose(plan.run, np.where(plan.start == plan.open[plan.vm],
                                              plan.start + startup, plan.start))  # fmt: skip
        assert open_at_most(plan, trace.nodes)
        price = trace.catalog.cost[plan.vm_type]
        assert plan.vm_cost == pytest.approx(float((price * (plan.close - plan.open)).sum()))
        late = trace.weight * np.maximum(0.0, plan.end - trace.due)
        assert plan.tardiness == pytest.approx(float(late.sum()))


@pytest.mark.parametrize(("configs", "weight"), [("types", 0.5), ("packed", 1.0)])
def test_release_order_places_each_job_knowing_only_the_jobs_before_it(configs, weight):
    """In release order the plan is an online schedule (`scripts/clairvoyant_probe.py
    release-order`): the plan of the first k jobs alone places them as the whole trace's plan
    does (start, run, end, configuration, instance; the instances' types, slots and opens),
    for every k. Only an instance's close may come later, where a later job joins it."""
    trace = itp_sample(0, 60, 3)
    assert (np.diff(trace.release) >= 0).all()
    full = vm_schedule(trace, order="release", configs=configs, vm_weight=weight)
    for k in range(1, trace.n_jobs):
        part = vm_schedule(trace.subset(np.arange(k)), order="release", configs=configs,
                           vm_weight=weight)  # fmt: skip
        for field in ("start", "run", "end", "cfg", "vm"):
            assert np.array_equal(getattr(part, field), getattr(full, field)[:k]), (k, field)
        n = part.instances
        for field in ("vm_type", "slot", "open"):
            assert np.array_equal(getattr(part, field), getattr(full, field)[:n]), (k, field)
        assert (part.close <= full.close[:n]).all()


def test_smaller_vms_only_outside_the_full_periods():
    """With `avoid`, a job may take a smaller VM of a type dearer per GPU than the cheapest
    largest one (the ITP sample's H100 jobs: 1-GPU H100 VMs), opened only outside the periods;
    the plan stays a schedule within N VMs."""
    trace = itp_sample(0, 120, 3)
    cat = trace.catalog
    base = vm_schedule(trace, order="release")
    small = smaller_configs(trace, base.cfg)
    assert small and all(cat.gpus[cat.cfg_vm[s[s != base.cfg]]].max() < 8 for s in small)
    for margin in (0, 1):
        avoid = full_periods(base, trace.nodes, margin)
        assert (np.diff(avoid[:, 0]) > 0).all() and (avoid[:, 1] > avoid[:, 0]).all()
        plan = vm_schedule(trace, order="release", avoid=avoid)
        assert check_plan(trace, plan) == [] and open_at_most(plan, trace.nodes)
        few = np.flatnonzero(cat.gpus[plan.vm_type] < cat.gpus.max())
        for k in few.tolist():  # no small VM open in a full period
            a, b = plan.open[k], plan.close[k]
            assert not ((avoid[:, 0] < b) & (avoid[:, 1] > a)).any()
    assert few.size  # some small VM was taken


def test_each_instance_on_the_smallest_vm_that_holds_it():
    """`shrunk`: the list schedule's plan with each instance on the cheapest VM type of its GPU
    model that holds its peak GPUs and runs its jobs in the same time; the same schedule (times,
    instances, slots), still a plan, cheaper by what the smaller VMs save; on the ITP sample
    some instance goes below 8 GPUs. `peaks` agrees with a count per instance."""
    trace = itp_sample(0, 120, 3)
    cat = trace.catalog
    built = vm_schedule(trace, order="release")
    plan = shrunk(trace, built)
    assert check_plan(trace, plan) == []
    for name in ("start", "run", "end", "vm", "slot", "open", "close"):
        assert (getattr(plan, name) == getattr(built, name)).all()
    assert plan.tardiness == built.tardiness
    peak = peaks(trace, plan)
    for k in range(plan.instances):
        jobs = np.flatnonzero(plan.vm == k)
        g = cat.cfg_gpus[plan.cfg[jobs]].astype(float)
        t = np.concatenate([plan.start[jobs], plan.end[jobs]])
        d = np.concatenate([g, -g])
        assert peak[k] == np.cumsum(d[np.lexsort((d, t))]).max()
    assert (peak <= cat.gpus[plan.vm_type]).all()
    small = cat.gpus[plan.vm_type] < cat.gpus[built.vm_type]
    assert small.any() and (cat.gpu_model_id[plan.vm_type] == cat.gpu_model_id[built.vm_type]).all()
    rows = np.arange(trace.n_jobs)
    assert np.allclose(trace.times[rows, plan.cfg], trace.times[rows, built.cfg])
    assert (cat.cfg_gpus[plan.cfg] == cat.cfg_gpus[built.cfg]).all()
    assert plan.vm_cost < built.vm_cost
    assert plan.vm_cost == pytest.approx(
        float((cat.cost[plan.vm_type] * (plan.close - plan.open)).sum())
    )
    # nothing smaller holds any instance any more
    assert (shrunk(trace, plan).vm_type == plan.vm_type).all()


def test_check_plan_sees_a_broken_plan():
    trace = generated(3)
    plan = vm_schedule(trace)
    early = dataclasses.replace(plan, start=plan.start - 1e3)
    assert "a job placed before its release" in check_plan(trace, early)
    one_slot = dataclasses.replace(plan, slot=np.zeros_like(plan.slot))
    assert any("two instances at once" in p for p in check_plan(trace, one_slot))


@pytest.mark.parametrize(("seed", "overhead"), [(1, 600.0), (5, 600.0), (8, 0.0)])
def test_replay_is_a_validated_run_reconciled_against_the_original_trace(
    seed, overhead, tmp_path, monkeypatch
):
    """The replay: every plan of the plan-following method passes the validator, no job moves,
    its event log recomputes its costs at the ORIGINAL trace's due dates and weights, no job
    runs before its original release, never more than N nodes are open, and it costs the
    plan's own cost (it follows the plan)."""
    trace = generated(seed)
    startup = 120.0 if overhead else 0.0
    solve = apply.solve
    checked = []

    def validated(instance, method, **kwargs):
        sol = solve(instance, method, **kwargs)
        report = validate(sol)
        assert report.ok, report.errors
        checked.append(method)
        return sol

    monkeypatch.setattr(apply, "solve", validated)
    plan, built = best_plan(trace, startup=startup)
    assert built > len(VARIANTS)
    import io

    lines = io.StringIO()
    result, _ = replay(trace, plan, log=lines, overhead=overhead, startup=startup)
    assert checked and set(checked) == {FOLLOW}
    assert FOLLOW not in METHODS  # in the registry only for the run
    assert result.migrations == result.preemptions == 0 and result.lost_work_cost == 0
    path = tmp_path / "vm.jsonl"
    path.write_text(lines.getvalue())
    rec = recompute(path, trace)
    assert check_against(rec, result.to_dict(), trace) == []
    release = dict(zip(trace.job_ids, trace.release, strict=True))
    first: dict[str, float] = {}
    for line in read_log(path):
        assert len(line["nodes"]) <= trace.nodes
        for jb in line["jobs"]:
            first.setdefault(jb["id"], line["start"])
    assert set(first) == set(trace.job_ids)
    assert all(first[j] >= release[j] for j in first)
    assert result.total_cost == pytest.approx(plan.cost, rel=1e-2)


def test_upper_takes_the_vm_schedule_where_it_beats_the_runs(tmp_path):
    """On jobs 80-99 of the ITP sample on 2 nodes (600 s restarts) the never-moving schedule
    costs under a third of the default's run: `upper(..., vm_schedule=True)` takes it, its
    event log reconciles at the trace's own due dates and weights, and it stays above the
    bound; its job records are of the original releases."""
    trace = itp_sample(80, 20, 2)
    default = simulate(trace, seed=1, overhead=600.0, bound=False)
    top = upper(
        trace, overhead=600.0, portfolio=(("incremental", 1),), time_limit=1e6,
        vm_schedule=True, log=True,
    )  # fmt: skip
    assert [m for m, _, _ in top.runs] == ["incremental", "vm-schedule"]
    assert top.runs[0][2] == default.total_cost
    assert top.method == "vm-schedule" and top.upper < default.total_cost / 3
    assert bound(trace).bound <= top.upper
    assert top.vm_plan["plan_cost"] == pytest.approx(top.upper, rel=1e-6)
    path = tmp_path / "u.jsonl"
    write_log(top, path)
    rec = recompute(path, trace)
    assert check_against(rec, top.result.to_dict(), trace) == []
    assert rec.total_cost == pytest.approx(top.upper, rel=1e-6)
    release = dict(zip(trace.job_ids, trace.release, strict=True))
    for d in top.result.jobs:
        assert d["release"] == release[d["id"]]
        assert d["migrations"] == d["preemptions"] == 0


def test_search_starts_from_a_method_run_not_the_plan():
    """With the search, the runs it re-draws are a method's (the plan-following one needs its
    plan): it starts from the cheapest method run even where the plan is cheaper."""
    trace = itp_sample(30, 20, 2)
    top = upper(
        trace, overhead=600.0, portfolio=(("incremental", 1),), time_limit=1e6,
        vm_schedule=True, search=1,
    )  # fmt: skip
    cost = {m: c for m, _, c in top.runs}
    assert cost["vm-schedule"] < cost["incremental"]  # the plan is the cheaper run here
    assert top.search["from"]["method"] == "incremental"
    assert top.upper == min(c for _, _, c in top.runs) or top.search["improved"]


def test_follow_needs_a_plan_and_the_cli_flag_needs_upper(tmp_path):
    trace = generated(1)
    with pytest.raises(ValueError, match="plan"):
        follow(trace)
    path = tmp_path / "t.json"
    import json

    path.write_text(json.dumps(generate_trace(2, 8, seed=6, arrivals="high")))
    res = CliRunner().invoke(cli, ["bound", str(path), "--vm-schedule"])
    assert res.exit_code == 2 and "needs --upper" in res.output
