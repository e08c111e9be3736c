"""The §4.1 trace generator and the snapshot generator: reproducibility, statistics, format."""

import itertools
import json
import math
import os

import numpy as np
import pytest
from click.testing import CliRunner

from gpuaas.catalog import load_catalog
from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.generator import (
    ARRIVALS,
    EXPONENTIAL_MEAN_S,
    _mixed_rates,
    arrival_rates,
    generate_instance,
    generate_snapshot,
    generate_trace,
)
from gpuaas.instance import Instance
from gpuaas.performance import job_time, workload_times

CAT = load_catalog("azure-2021")


def _k80_one_gpu(job):
    wl = dict(job["workload"])
    return job_time(wl.pop("application"), "K80", 1, **wl)


def test_same_seed_same_trace_other_seed_other_trace():
    """A seed fixes the trace bit for bit; another seed changes it."""
    for arrivals in ARRIVALS:
        a = generate_trace(3, seed=5, arrivals=arrivals)
        assert json.dumps(a) == json.dumps(generate_trace(3, seed=5, arrivals=arrivals))
        assert json.dumps(a) != json.dumps(generate_trace(3, seed=6, arrivals=arrivals))
    assert json.dumps(generate_snapshot(4, 9, seed=2)) == json.dumps(
        generate_snapshot(4, 9, seed=2)
    )


def test_job_count_and_format():
    """J = 10 N by default; ids j0.., releases sorted from 0, time 0, default params, explicit times."""
    for n in (1, 3, 7):
        d = generate_trace(n, seed=1)
        assert d["nodes"] == n and len(d["jobs"]) == 10 * n
        assert d["time"] == 0.0 and d["params"] == {"H": 3600.0, "mu": 1.0, "rho": 100.0}
        assert [j["id"] for j in d["jobs"]] == [f"j{i}" for i in range(10 * n)]
        rel = [j["release"] for j in d["jobs"]]
        assert rel[0] == 0.0 and rel == sorted(rel)
    assert len(generate_trace(2, 13, seed=1)["jobs"]) == 13
    assert len(generate_snapshot(10, seed=1)["jobs"]) == 45


def test_every_generated_instance_loads_and_times_match_the_model():
    """Traces and snapshots load with Instance.from_dict; `times` are the model's, to 0.1 s."""
    traces = [generate_trace(4, seed=s, arrivals=a) for s in (0, 1) for a in ARRIVALS]
    for d in traces + [generate_snapshot(5, 20, seed=s) for s in (0, 1)]:
        inst = Instance.from_dict(json.loads(json.dumps(d)), "gen")
        assert inst.n_jobs == len(d["jobs"]) and np.isfinite(inst.work).all()
        for j, job in enumerate(d["jobs"]):
            assert np.abs(inst.work[j] - workload_times(job["workload"], CAT)).max() <= 0.05 + 1e-9


def test_exponential_mean_interarrival():
    """Exponential gaps have mean 75 000 s / N (4 000 gaps: within 5 %, ~3 standard errors)."""
    for n in (10, 50):
        rel = np.array([j["release"] for j in generate_trace(n, 4000, seed=11)["jobs"]])
        gaps = np.diff(rel)
        assert gaps.mean() == pytest.approx(EXPONENTIAL_MEAN_S / n, rel=0.05)
        assert np.std(gaps) == pytest.approx(
            EXPONENTIAL_MEAN_S / n, rel=0.08
        )  # exponential: sd = mean


def test_poisson_rates_high_low_mixed():
    """high/low gaps have mean 1/rate with high = 4 x low; mixed lies between; peak is 135/h at 8000 GPUs."""
    n = 20
    means = {}
    for a in ("high", "low", "mixed"):
        d = generate_trace(n, 3000, seed=4, arrivals=a)
        inst = Instance.from_dict(d)
        rates = arrival_rates(n, CAT, inst.min_time.mean())
        means[a] = np.diff(inst.release).mean()
        if a != "mixed":
            assert means[a] == pytest.approx(1.0 / rates[a], rel=0.06)
    assert rates["high"] == pytest.approx(4 * rates["low"])
    assert rates["k_max"] == n * 8 and rates["high"] == pytest.approx(
        rates["eps"] * n * 8 * rates["lambda"]
    )
    expected_mixed = (1 / rates["high"] + 1 / rates["low"]) / 2
    assert means["high"] < means["mixed"] < means["low"]
    assert means["mixed"] == pytest.approx(expected_mixed, rel=0.1)
    assert arrival_rates(1000, CAT, 1e5)["high"] * 3600 == pytest.approx(135.0)


def test_mixed_alternates_high_and_low_runs():
    """Mixed rates come in alternating runs of 8 to 12 submissions, starting high."""
    rate = _mixed_rates(np.random.default_rng(0), 1000, 4.0, 1.0)
    change = np.flatnonzero(np.diff(rate)) + 1
    runs = np.diff(np.concatenate(([0], change)))
    assert rate[0] == 4.0 and set(rate) == {4.0, 1.0}
    assert runs.min() >= 8 and runs.max() <= 12 and len(set(runs)) == 5
    assert all(rate[a] != rate[b] for a, b in itertools.pairwise(change))


def test_job_mix_does_not_depend_on_the_arrival_pattern():
    """One RNG stream per purpose: the same seed gives the same jobs under every pattern."""
    jobs = [
        [
            (j["workload"], j["times"], j["weight"])
            for j in generate_trace(3, seed=9, arrivals=a)["jobs"]
        ]
        for a in ARRIVALS
    ]
    assert all(js == jobs[0] for js in jobs)


def test_due_dates_weights_and_durations():
    """due - release in [min t, 3 min t]; weight in [0.003, 0.015]; 1-GPU K80 time in [10 h, 300 h]."""
    d = generate_trace(30, seed=21)
    inst = Instance.from_dict(d)
    slack = (inst.due - inst.release) / inst.min_time
    assert (slack >= 1 - 1e-12).all() and (slack <= 3 + 1e-12).all()
    assert slack.min() < 1.2 and slack.max() > 2.8  # spread over the whole range
    assert (inst.weight >= 0.003).all() and (inst.weight <= 0.015).all()
    hours = np.array([_k80_one_gpu(j) for j in d["jobs"]]) / 3600
    assert hours.min() >= 10 - 1e-6 and hours.max() <= 300 + 1e-6
    assert np.median(hours) > 30  # log-uniform in [10, 300] h has median ~55 h
    apps = {j["workload"]["application"] for j in d["jobs"]}
    assert apps == {"alexnet", "resnet50", "vgg19", "deepspeech"}


def test_snapshot_has_late_easy_and_running_jobs():
    """A snapshot's jobs are all released by `time`; some are late, some easy, some have run."""
    inst = generate_instance(100, 450, seed=3)
    assert inst.n_jobs == 450 and inst.nodes == 100 and inst.time == 1e6
    assert (inst.release <= inst.time).all() and (inst.release >= 0).all()
    assert inst.released().n_jobs == 450
    late = inst.rel_due < 0
    easy = inst.rel_due > 2 * inst.min_time
    assert 0.05 < late.mean() < 0.25 and easy.mean() > 0.05
    ran = inst.progress > 0
    assert 0.35 < ran.mean() < 0.65 and inst.progress.max() < 0.95
    assert np.allclose(inst.times[ran], inst.work[ran] * (1 - inst.progress[ran, None]))
    small = generate_instance(2, 5, seed=1, time=100.0)
    assert (small.release >= 0).all() and small.time == 100.0


def test_inline_catalog_is_written_inline():
    """A non-bundled catalog is embedded, and VM types with unknown GPUs are left out of `times`."""
    spec = {
        "vm_types": [
            {"name": "K", "gpu": "K80", "gpus": 2, "cost_per_hour": 1.0},
            {"name": "X", "gpu": "A10G", "gpus": 8, "cost_per_hour": 30.0},
        ]
    }
    d = generate_trace(2, 5, seed=0, catalog=spec)
    assert d["catalog"]["vm_types"] == spec["vm_types"]
    assert all(set(j["times"]) == {"K"} for j in d["jobs"])
    inst = Instance.from_dict(d)
    assert np.isinf(inst.work[:, 2:]).all() and np.isfinite(inst.work[:, :2]).all()


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: generate_trace(0), "nodes"),
        (lambda: generate_trace(2.0), "nodes"),
        (lambda: generate_trace(2, 0), "jobs"),
        (lambda: generate_trace(2, seed=-1), "seed"),
        (lambda: generate_trace(2, arrivals="bursty"), "arrivals"),
        (lambda: generate_trace(2, catalog="aws-2030"), "catalog"),
        (lambda: generate_snapshot(2, time=math.nan), "time"),
        (lambda: generate_snapshot(2, time=-1.0), "time"),
        (
            lambda: generate_trace(
                2,
                catalog={
                    "vm_types": [{"name": "T", "gpu": "A10G", "gpus": 1, "cost_per_hour": 0.5}]
                },
            ),
            "catalog",
        ),
    ],
)
def test_bad_arguments(call, field):
    """Bad generator arguments raise InputError naming the argument."""
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field


def test_cli_generate_writes_the_trace(tmp_path):
    """`gpuaas generate -o` writes exactly generate_trace's output; --json prints it."""
    out = tmp_path / "trace.json"
    res = CliRunner().invoke(
        cli, ["generate", "--nodes", "2", "--arrivals", "mixed", "--seed", "3", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text()) == generate_trace(2, seed=3, arrivals="mixed")
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600
    res = CliRunner().invoke(
        cli, ["generate", "--nodes", "2", "--snapshot", "--jobs", "4", "--json"]
    )
    assert res.exit_code == 0 and json.loads(res.output) == generate_snapshot(2, 4, seed=1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "0"], "Invalid value for '--nodes': 0 is not in the range 1<=x<=1000000."),
        (
            ["--nodes", "2", "--jobs", "-4"],
            "Invalid value for '--jobs': -4 is not in the range 1<=x<=100000.",
        ),
        (["--nodes", "2", "--arrivals", "bursty"], "arrivals: unknown pattern 'bursty'"),
        (["--nodes", "2", "--catalog", "nope"], "catalog: unknown catalog 'nope'"),
        (["--nodes", "2", "--snapshot", "--arrivals", "high"], "--arrivals: applies to traces"),
        (["--nodes", "2", "--time", "5"], "--time: applies to --snapshot only"),
    ],
)
def test_cli_generate_bad_arguments(tmp_path, args, message):
    """Bad `generate` arguments: exit 2, one line naming the problem, no output file."""
    out = tmp_path / "t.json"
    res = CliRunner().invoke(cli, ["generate", *args, "-o", str(out)])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuaas: error: ") and message in lines[0]
    assert "Traceback" not in res.output and not out.exists()
    assert list(tmp_path.iterdir()) == []
