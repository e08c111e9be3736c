"""scripts/restart_bound_probe.py: the per-job bound charging the restart rule is at least the
per-job bound, equal to it without restarts, and below every job's own cost in real runs."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuaas.bounds import bound
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance, load_instance
from gpuaas.per_job import per_job_plan
from gpuaas.simulator import simulate

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "restart_bound_probe", ROOT / "scripts" / "restart_bound_probe.py"
)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def job_costs(trace: Instance, log: Path, jobs: list[dict]) -> np.ndarray:
    """(J,) each job's GPU share of its VMs' price over the intervals of the event log it held
    them (lost work and start-up included) plus its tardiness."""
    cat = trace.catalog
    index = {j: i for i, j in enumerate(trace.job_ids)}
    price = dict(zip(cat.vm_names, cat.cost_per_hour))
    gpus = dict(zip(cat.vm_names, cat.gpus))
    out = np.zeros(trace.n_jobs)
    for line in log.read_text().splitlines():
        row = json.loads(line)
        if "start" not in row:
            continue
        hours = (row["end"] - row["start"]) / 3600.0
        for a in row["jobs"]:
            out[index[a["id"]]] += hours * price[a["vm"]] * a["gpus"] / gpus[a["vm"]]
    for j in jobs:
        i = index[j["id"]]
        out[i] += trace.weight[i] * max(0.0, j["completion"] - trace.due[i])
    return out


def test_no_lower_than_the_per_job_bound_and_equal_without_restarts():
    trace = Instance.from_dict(generate_trace(5, seed=3, jobs=40, arrivals="high"))
    plain = per_job_plan(trace).cost
    assert np.array_equal(probe.restart_per_job(trace, 0.0), plain)
    tight = probe.restart_per_job(trace, 600.0)
    assert (tight >= plain).all() and (tight > plain).any()


@pytest.mark.parametrize(("seed", "options"), [(7, {}), (8, {"move_weight": 1.0})])
def test_below_every_jobs_cost_in_runs_that_move(tmp_path, seed, options):
    # tight due dates and high arrivals: the default moves jobs at 600 s, each move losing work
    trace = Instance.from_dict(generate_trace(3, seed=seed, jobs=20, arrivals="high"))
    log = tmp_path / "log.jsonl"
    result = simulate(trace, "incremental", seed=1, log=log, bound=False, options=options)
    assert result.migrations + result.preemptions > 0
    cost = job_costs(trace, log, result.jobs)
    assert cost.sum() <= result.total_cost * (1 + 1e-9)  # the VMs' idle GPUs are no job's
    assert (cost >= probe.restart_per_job(trace, 600.0) - 1e-9).all()


def test_refuses_a_trace_with_running_jobs():
    trace = Instance.from_dict(generate_trace(2, seed=1, jobs=3))
    c = int(np.flatnonzero(np.isfinite(trace.work[0]))[0])
    running = dataclasses.replace(
        trace, current_node=np.array([0, -1, -1]), current_cfg=np.array([c, -1, -1])
    )
    with pytest.raises(ValueError):
        probe.restart_per_job(running, 600.0)


def test_lp_parts_make_up_the_windowed_bound(tmp_path):
    # the bundled ITP sample (cluster 10): the bound solves the windowed LP in parts, whose
    # jobs' objective parts, with the per-job bound for parts not solved, add up to the bound
    path = tmp_path / "itp10.json"
    sample = ROOT / "instances" / "elasticflow-sample.csv"
    cmd = [sys.executable, "-m", "gpuaas", "import", "elasticflow", str(sample), "-o", str(path)]
    subprocess.run(cmd, check=True, capture_output=True)
    trace = load_instance(path)
    value, part = probe.lp_parts(trace)
    assert value == bound(trace).bound
    assert (~np.isnan(part)).sum() > trace.n_jobs // 2
    whole = np.where(np.isnan(part), per_job_plan(trace).cost, part)
    assert abs(whole.sum() - value) <= 1e-4 * value
