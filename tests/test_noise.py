"""The simulated prediction error (gpuaas.noise): today's uniform draws unchanged, the log-normal
models' levels and structure, the oracle run, the bound and the reconciliation on actual times."""

from __future__ import annotations

import math

import numpy as np
import pytest
from eventlog import check_against, recompute

from gpuaas.errors import InputError
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance, load_instance
from gpuaas.noise import actual_trace, draw_factors, error_summary, lognormal_sigma
from gpuaas.run_config import RunConfig
from gpuaas.simulator import Simulator, simulate, trace_bound


def generated(seed: int, nodes: int = 5, jobs: int = 40) -> Instance:
    return Instance.from_dict(generate_trace(nodes, jobs, seed=seed, arrivals="exponential"))


def test_uniform_draws_are_the_earlier_releases():
    """`--noise A` draws the factors it drew before the error models existed (values recorded
    with the code of 420d423), so earlier figures stay comparable."""
    trace = load_instance("instances/trace-small.json")
    f = Simulator(trace, "greedy", seed=1, noise=0.11).execution.factor
    assert f[:4, 0].tolist() == [
        0.9260238524219642,
        1.0492342284040899,
        1.0033583703526632,
        0.8487711975598523,
    ]
    assert (f == f[:, :1]).all()  # one factor per job
    f7 = Simulator(trace, "greedy", seed=7, noise=0.4).execution.factor[:, 0]
    assert f7[:2].tolist() == [1.4322255216055586, 0.3790835909082948]
    assert f7.sum() == 24.46604516395773


@pytest.mark.parametrize("level", [0.1, 0.2, 0.4, 0.7])
def test_lognormal_sigma_matches_the_mean_absolute_error(level):
    """σ solves E|exp(σZ) - 1| = level; checked against a numerical integral."""
    s = lognormal_sigma(level)
    z = np.linspace(-12, 12, 400_001)
    density = np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    integral = np.trapezoid(np.abs(np.exp(s * z) - 1) * density, z)
    assert integral == pytest.approx(level, rel=1e-6)
    assert lognormal_sigma(0.0) == 0.0


@pytest.mark.parametrize("model", ["uniform", "lognormal", "lognormal-config"])
def test_every_model_draws_the_level_it_is_given(model):
    """Over 4 000 jobs, mean |f - 1| is the level (within 5 %); log-normal factors have median 1
    and the share off by 2x is 2Φ(-ln 2 / σ); the summary reports what was drawn."""
    trace = generated(1, nodes=50, jobs=4000)
    f = draw_factors(trace, 3, 0.4, model)
    runnable = np.isfinite(trace.work)
    summary = error_summary(trace, f, 0.4, model)
    assert summary["mean_abs_error"] == pytest.approx(0.4, rel=0.05)
    assert summary["mean_abs_error"] == pytest.approx(np.abs(f[runnable] - 1).mean())
    if model == "uniform":
        assert summary["sigma"] is None  # f <= 1/2: (0.5 - 0.2) / 1.6 of U(0.2, 1.8)
        assert summary["off_by_2x"] == pytest.approx(0.3 / 1.6, abs=0.02)
        assert ((f >= 0.2) & (f <= 1.8)).all()
    else:
        sigma = lognormal_sigma(0.4)
        share = 1 + math.erf(-math.log(2) / sigma / math.sqrt(2))
        assert summary["sigma"] == sigma
        assert summary["off_by_2x"] == pytest.approx(share, abs=0.02)
        assert np.median(f[runnable]) == pytest.approx(1.0, abs=0.03)


def test_per_configuration_factors_share_job_model_and_count():
    """lognormal-config: configurations with the same GPU model and GPU count (the same GPUs in
    VMs of several sizes) have the same factor; half the log-variance is the job's own."""
    trace = generated(2, nodes=50, jobs=4000)
    cat = trace.catalog
    f = np.log(draw_factors(trace, 5, 0.4, "lognormal-config"))
    model, gpus = cat.gpu_model_id[cat.cfg_vm], cat.cfg_gpus
    for c in range(cat.n_configs):
        same = np.flatnonzero((model == model[c]) & (gpus == gpus[c]))
        assert (f[:, same] == f[:, [c]]).all()
    a, b = (int(np.flatnonzero(model == m)[0]) for m in (0, 1))  # two GPU models
    s2 = lognormal_sigma(0.4) ** 2
    assert np.cov(f[:, a], f[:, b])[0, 1] == pytest.approx(s2 / 2, rel=0.1)
    assert f[:, a].var() == pytest.approx(s2, rel=0.1)


def test_oracle_is_the_trace_with_actual_times():
    """With `oracle` the run is exactly the simulation of the actual-time trace without error;
    both runs report the error drawn and the same bound, the one of the actual times."""
    trace = generated(3)
    fast = {"polish": 0.0}  # the default's polish step is not what this tests; it is slow
    told = simulate(
        trace, "incremental", seed=2, noise=0.4, noise_model="lognormal", oracle=True, **fast
    )
    f = draw_factors(trace, 2, 0.4, "lognormal")
    actual = actual_trace(trace, f)
    exact = simulate(actual, "incremental", seed=2, **fast)
    assert told.total_cost == exact.total_cost and told.predicted is None
    assert told.prediction_error["oracle"] is True
    noisy = simulate(trace, "incremental", seed=2, noise=0.4, noise_model="lognormal", **fast)
    assert noisy.bound.bound == told.bound.bound == trace_bound(actual).bound
    assert noisy.prediction_error == {**told.prediction_error, "oracle": False}
    assert noisy.predicted is not None and noisy.total_cost != told.total_cost


def test_per_configuration_work_reconciles_on_actual_times(tmp_path):
    """The event log, read against the actual-time trace, gives each job's work as 1 plus the
    work it lost (no per-job factor: it differs per configuration) and the same costs."""
    trace = generated(4)
    log = tmp_path / "events.jsonl"
    sim = Simulator(trace, "greedy", seed=1, noise=0.4, noise_model="lognormal-config")
    from gpuaas.simulator import _run_logged

    res = _run_logged(sim, log, False).to_dict()
    assert all("actual_factor" not in j for j in res["jobs"])
    assert check_against(recompute(log, sim.actual), res, sim.actual) == []


def test_levels_and_models_are_checked():
    with pytest.raises(InputError, match=r"noise: must be a mean relative error in \[0, 0.5\)"):
        RunConfig(noise=0.6)
    assert RunConfig(noise=0.6, noise_model="lognormal").noise == 0.6
    with pytest.raises(InputError, match="noise_model: unknown model 'gamma'"):
        RunConfig(noise_model="gamma")
    with pytest.raises(InputError, match="oracle: must be true or false, got 1"):
        RunConfig(oracle=1)


def test_campaign_cells_share_the_run_with_exact_predictions():
    """Cells of several errors on one trace reuse one run with exact predictions: the same
    predicted costs as a simulation that makes its own."""
    from gpuaas.experiments.cell import cell_simulation, make_trace
    from gpuaas.experiments.spec import expand, parse_spec

    spec = {"nodes": [3], "arrivals": ["low"], "seeds": [1], "methods": ["greedy"]}
    cells = expand(parse_spec(dict(spec, noise=[0.2, 0.4], noise_model=["uniform", "lognormal"])))
    own = simulate(make_trace(cells[-1]), config=cells[-1].config, bound=False).predicted
    assert all(cell_simulation(c).predicted == own for c in cells)


def test_malformed_inputs_of_the_new_settings(tmp_path):
    """instances/README.md's rows spec-noise-model to check-pinned: each message, exactly."""
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from gpuaas.cli import cli
    from gpuaas.errors import StateError
    from gpuaas.experiments.spec import parse_spec
    from gpuaas.rescheduler import Rescheduler

    readme = (Path(__file__).resolve().parents[1] / "instances" / "README.md").read_text()
    base = {"nodes": [2], "arrivals": ["low"], "seeds": [1], "methods": ["greedy"]}
    messages = []
    for change in ({"noise_model": ["gamma"]}, {"max_moves": [-1]}):
        with pytest.raises(InputError) as err:
            parse_spec(dict(base, **change), "spec.yaml")
        messages.append(f"gpuaas: error: {err.value}")
    res = CliRunner().invoke(cli, ["simulate", "instances/trace-small.json", "--noise", "0.6"])
    assert res.exit_code == 2
    messages.append(res.output.strip())
    r = Rescheduler("azure-2021", 2, "greedy")
    r.submit({"id": "a", "due": 1e4, "weight": 0.01, "times": {"NC6": [1000.0]}}, at=0.0)
    state = json.loads(json.dumps(r.state()))
    state["live"]["jobs"][0]["observed"] = [[9, 1.0, 1.0]]
    with pytest.raises(StateError) as err:
        Rescheduler.restore(state)
    messages.append(f"StateError: {err.value}")
    inst = r.instance()
    pinned = dict(inst.to_dict())
    pinned["jobs"][0]["placement"]["pinned"] = True
    (tmp_path / "i.json").write_text(json.dumps(pinned))
    (tmp_path / "s.json").write_text(
        json.dumps({"nodes": [{"node": 0, "vm": "NC6"}], "jobs": [{"id": "a", "node": None}]})
    )
    res = CliRunner().invoke(cli, ["check", str(tmp_path / "i.json"), str(tmp_path / "s.json")])
    assert res.exit_code == 1
    messages.append(res.output.splitlines()[1].strip())
    for m in messages:
        assert m.replace("|", "\\|") in readme, m
