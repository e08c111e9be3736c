"""The speed model (gpuaas.rescheduler.speed): estimates by hand, what the Rescheduler and the
methods see, the ETA, throughput reports, saving and restoring the evidence, and learning in a
simulation with wrong predictions."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rescheduler import CATALOG, SCRIPT, _methods, job, status  # noqa: F401

from gpuaas.errors import StateError
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.rescheduler import PAPER_COSTS, ProgressReport, Rescheduler, ThroughputReport
from gpuaas.rescheduler.speed import (
    CREDIBILITY,
    EMPTY_POOL,
    JOB_SHARE,
    observe,
    pool,
    pooled_share,
    ratios,
)
from gpuaas.simulator import Simulator

K = CREDIBILITY


def test_no_evidence_is_the_prediction_exactly():
    assert ratios((), (), 3, learn=True) is None
    assert ratios(((0, 100.0, 50.0),), (), 3, learn=False) is None


def test_estimate_by_hand():
    """One configuration observed for K seconds at twice the predicted time. All of the error
    the job's (share 1): every configuration at sqrt 2, half-way in log. Half of it (share
    1/2): the job's part at 2^(1/4), the configuration itself at sqrt 2. A measured
    configuration is its measurement."""
    obs = observe((), 1, K, K / 2)  # K seconds did K / 2 predicted seconds of work
    assert ratios(obs, (), 3, learn=True, job_share=1.0) == pytest.approx([2**0.5] * 3)
    half = ratios(obs, (), 3, learn=True, job_share=0.5)
    assert half == pytest.approx([2**0.25, 2**0.5, 2**0.25])
    r = ratios(obs, ((2, 0.5),), 3, learn=True)
    assert r[2] == 0.5
    assert ratios(obs, ((2, 0.5),), 3, learn=False).tolist() == [1.0, 1.0, 0.5]


def test_pooled_share_learns_how_much_of_an_error_is_the_jobs():
    """Completed jobs observed on two configurations: the same ratio on both (a job's own
    error) keeps the share at 1; unrelated ratios bring it toward 0 (the configurations')."""
    assert pooled_share(EMPTY_POOL) == JOB_SHARE == 1.0
    rng = np.random.default_rng(1)
    same, apart = EMPTY_POOL, EMPTY_POOL
    for _ in range(200):
        u, v = rng.normal(0, 0.4), rng.normal(0, 0.4, size=2)
        same = pool(same, ((0, 600.0, 600.0 / math.exp(u)), (1, 600.0, 600.0 / math.exp(u))))
        apart = pool(apart, tuple((c, 600.0, 600.0 / math.exp(u + v[c])) for c in (0, 1)))
    assert pooled_share(same) == pytest.approx(1.0)
    assert pooled_share(apart) == pytest.approx(0.5, abs=0.1)
    assert pool(EMPTY_POOL, ((0, K / 2, K),)) == EMPTY_POOL  # too short to count


@settings(max_examples=50, deadline=None)
@given(
    truth=st.floats(0.05, 20.0),
    seconds=st.lists(st.floats(1.0, 1e5), min_size=1, max_size=6),
)
def test_estimate_moves_toward_the_observed_ratio_with_evidence(truth, seconds):
    """With observations of one true ratio, the estimate lies between 1 and the truth, and gets
    closer with every second observed."""
    obs, last = (), 0.0
    for s in seconds:
        obs = observe(obs, 0, s, s / truth)
        r = ratios(obs, (), 2, learn=True)
        gap = abs(math.log(r[0]) - math.log(truth))
        assert min(1.0, truth) - 1e-9 <= r[0] <= max(1.0, truth) + 1e-9
        assert r[1] <= max(r[0], 1.0) + 1e-12 and r[1] >= min(r[0], 1.0) - 1e-12
        if last:
            assert gap <= last + 1e-12
        last = gap or 1e-300


def test_rescheduler_learns_from_reports_and_every_view_uses_it():
    """A job on A (predicted 1000 s) that runs at half the predicted speed, started at 0 with
    no progress (a measured start): reported at 100 s and 400 s (400 s observed for progress
    worth 200 s), the estimate on A and the remaining times of the instance move toward 2, and
    the ETA follows."""
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 1, "test-scripted", **PAPER_COSTS)
    r.submit(job("j1"), at=0.0)
    assert status(r)["j1"].speed == 1.0 and status(r)["j1"].eta == 1000.0
    r.tick(100.0, progress={"j1": 0.05})
    assert r.run_state.jobs["j1"].observed == ((0, 100.0, 50.0),)
    r.tick(400.0, progress={"j1": 0.2})
    est = ratios(((0, 400.0, 200.0),), (), r.catalog.n_configs, learn=True)
    st_ = status(r)["j1"]
    assert st_.speed == pytest.approx(est[0]) and 1.0 < est[0] < 2.0
    assert st_.eta == pytest.approx(400.0 + 1000.0 * est[0] * 0.8)
    inst = r.instance()
    assert inst.times[0].tolist() == pytest.approx(
        (r.run_state.jobs["j1"].work * est * 0.8).tolist()
    )
    r.tick(500.0)  # predicted progress at the estimated speed
    assert status(r)["j1"].progress == pytest.approx(0.2 + 100.0 / (1000.0 * est[0]))
    same = Rescheduler(CATALOG, 1, "test-scripted", learn_speed=False, **PAPER_COSTS)
    same.submit(job("j1"), at=0.0)
    same.tick(100.0, progress={"j1": 0.05})
    same.tick(400.0, progress={"j1": 0.2})
    assert status(same)["j1"].speed == 1.0 and same.instance().times[0, 0] == 800.0


def test_a_move_restarts_the_evidence_count():
    """After a migration the progress is predicted (a restart loses work): the next report only
    anchors the count, the one after adds evidence on the new configuration."""
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 1, "test-scripted", overhead=60.0, startup=0.0)
    r.submit(job("j1"), at=0.0)
    r.tick(100.0, progress={"j1": 0.05})
    SCRIPT.update(j1=("B", 2))
    r.tick(200.0, progress={"j1": 0.1})  # evidence on A, then the move
    assert (
        r.run_state.jobs["j1"].observed == ((0, 200.0, 100.0),)
        and r.run_state.jobs["j1"].anchor is None
    )
    r.tick(300.0, progress={"j1": 0.2})
    assert (
        r.run_state.jobs["j1"].anchor == (0.2, 300.0) and len(r.run_state.jobs["j1"].observed) == 1
    )
    r.tick(400.0, progress={"j1": 0.3})
    b2 = r.catalog.config(1, 2)
    assert dict((c, (e, w)) for c, e, w in r.run_state.jobs["j1"].observed)[b2] == pytest.approx(
        (100.0, 50.0)
    )


def test_throughput_report_sets_its_configuration_and_informs_the_others():
    SCRIPT.update(j1=("B", 2))
    r = Rescheduler(CATALOG, 1, "test-scripted", **PAPER_COSTS)
    r.submit(job("j1"), at=0.0)
    r.handle(ThroughputReport(100.0, "j1", seconds=1000.0))  # twice the predicted 500 s
    times = r.instance().work[0]
    b2 = r.catalog.config(1, 2)
    assert times[b2] == 1000.0
    assert times[0] == pytest.approx(1000.0 * math.exp(math.log(2) / 2))  # K of evidence


def test_evidence_is_saved_restored_and_checked():
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 1, "test-scripted", **PAPER_COSTS)
    r.submit(job("j1"), at=0.0)
    r.tick(100.0, progress={"j1": 0.05})
    r.tick(400.0, progress={"j1": 0.2})
    state = json.loads(json.dumps(r.state()))
    back = Rescheduler.restore(state)
    assert back.run_state.jobs["j1"].observed == r.run_state.jobs["j1"].observed
    assert back.run_state.jobs["j1"].anchor == r.run_state.jobs["j1"].anchor
    assert back.instance().times.tolist() == r.instance().times.tolist()
    for field, value, message in (
        ("observed", [[0, 1.0]], "observed: must be a list of 3-element lists"),
        ("observed", [[9, 1.0, 1.0]], "observed: configuration 9 is not one the job runs on"),
        ("observed", [[0, 1.0, 1.0], [0, 2.0, 2.0]], "lists a configuration twice"),
        ("measured", [[0, 0.0]], r"measured\[0\]\[1\]: must be > 0"),
        ("anchor", [0.5, 1e9], "anchor: is set for a waiting job or after its running time"),
    ):
        bad = json.loads(json.dumps(state))
        bad["live"]["jobs"][0][field] = value
        with pytest.raises(StateError, match=message):
            Rescheduler.restore(bad)


@pytest.mark.parametrize("model", ["uniform", "lognormal-config"])
def test_simulation_learns_the_actual_speed(model):
    """Under wrong predictions, after a few hours the estimate of each running job on its
    configuration is within 2 % of the actual factor for most jobs (not the prediction's 1)."""
    trace = Instance.from_dict(generate_trace(5, 40, seed=2, arrivals="exponential"))
    # without the default's polish step, which is not what this tests and is slow at N = 5
    sim = Simulator(trace, "incremental", seed=1, noise=0.4, noise_model=model, polish=0.0)
    close, far = 0, 0
    while sim.step() is not None:
        for j in sim.rescheduler.unfinished():
            if j.speed is not None and sim.rescheduler.run_state.jobs[j.id].observed:
                e = sim.rescheduler.run_state.jobs[j.id]
                seen = sum(s for c, s, _ in e.observed if c == j.cfg)
                if seen > 20 * CREDIBILITY:
                    f = sim.execution.factor[sim.index[j.id], j.cfg]
                    close += abs(j.speed / f - 1) < 0.02
                    far += abs(j.speed / f - 1) >= 0.02
    assert close > 50 and far <= close // 10


def test_restore_mid_simulation_with_evidence_gives_identical_result():
    """A state saved halfway through a noisy simulation, with speed evidence in it, resumes to
    the result of the uninterrupted run (N = 3, J = 12: 125 events, 20 migrations)."""
    trace = Instance.from_dict(generate_trace(3, 12, seed=5, arrivals="exponential"))
    kw = {"seed": 2, "noise": 0.3, "noise_model": "lognormal-config"}
    full = Simulator(trace, "incremental", **kw).run().to_dict()
    sim = Simulator(trace, "incremental", **kw)
    for _ in range(full["events"] // 2):
        sim.step()
    assert any(j.observed for j in sim.rescheduler.run_state.jobs.values())
    sim.rescheduler = Rescheduler.restore(json.loads(json.dumps(sim.rescheduler.state())))
    resumed = sim.run().to_dict()
    for d in (full, resumed):
        for key in ("wall_seconds", "cpu_seconds", "solver_seconds", "solver_cpu_seconds"):
            d.pop(key)
    assert resumed == full


def test_progress_reports_are_events_with_ids_too():
    SCRIPT.update(j1=("A", 1))
    r = Rescheduler(CATALOG, 1, "test-scripted", **PAPER_COSTS)
    r.submit(job("j1"), at=0.0)
    r.handle(ProgressReport(100.0, "j1", 0.05, id="p1"))
    r.handle(ProgressReport(400.0, "j1", 0.2, id="p2"))
    before = r.state()
    r.handle(ProgressReport(400.0, "j1", 0.2, id="p2"))  # redelivered: nothing changes
    assert r.state() == before and np.isfinite(status(r)["j1"].eta)


def test_a_spot_variant_shares_its_types_evidence():
    """A spot VM runs a job as fast as its on-demand type: the speed evidence of A:spot is
    A's, and both configurations get the same estimate."""
    SCRIPT.update(j1=("A:spot", 1))
    cat = {"vm_types": [dict(v, spot_per_hour=v["cost_per_hour"] / 3) for v in CATALOG["vm_types"]]}
    r = Rescheduler(cat, 1, "test-scripted", spot=True, **PAPER_COSTS)
    r.submit(job("j1"), at=0.0)
    r.tick(100.0, progress={"j1": 0.05})
    r.tick(400.0, progress={"j1": 0.2})
    c = r.catalog
    a, a_spot = c.config(c.vm_index("A"), 1), c.config(c.vm_index("A:spot"), 1)
    assert status(r)["j1"].vm == "A:spot"
    [(hardware, seen, worth)] = r.run_state.jobs["j1"].observed
    assert hardware == a and (seen, worth) == pytest.approx((400.0, 200.0))
    est = ratios(r.run_state.jobs["j1"].observed, (), c.n_configs, learn=True)
    seen = r.instance().work[0] / r.run_state.jobs["j1"].work
    assert seen[a_spot] == seen[a] == pytest.approx(est[a]) and est[a] > 1.0
