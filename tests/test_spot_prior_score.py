"""scripts/spot_prior_score.py: it replays `market_rate` itself and scores it on zone traces."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import gpuaas.rescheduler.spot_estimates as est

ROOT = Path(__file__).resolve().parents[1]


def script():
    spec = importlib.util.spec_from_file_location(
        "spot_prior_score", ROOT / "scripts" / "spot_prior_score.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_estimate_is_market_rate_at_each_prior_and_leaves_the_constant():
    mod = script()
    before = est.PRIOR_DROPS
    hours, drops = np.array([1.5, 1.5, 10.0]), np.array([1.0, 0.0, 3.0])
    for prior in (0.5, 1.0, 2.0):
        got = mod.estimate(prior, 0.235, hours, drops)
        weight = prior / 0.235
        assert got == pytest.approx((0.235 * weight + drops) / (weight + hours))
    # one drop in 1.5 h against none, at today's prior: window 5's first move (docs/spot.md)
    at_one = mod.estimate(1.0, 0.235, hours, drops)
    assert at_one[0] == pytest.approx(0.3475, abs=1e-3)
    assert at_one[1] == pytest.approx(0.1738, abs=1e-3)
    s = SimpleNamespace(market={0: (hours[0] * 3600.0, drops[0], None, 1)})
    assert est.market_rate(s, 0, 0.0, 0.235) == pytest.approx(
        mod.estimate(est.PRIOR_DROPS, 0.235, hours, drops)[0]
    )
    assert est.PRIOR_DROPS == before


def test_drops_are_shares_counted_with_the_stretch_they_end():
    _, hours, drops = script().cumulative(3600.0, np.array([16, 12, 12, 0, 4]))
    assert hours.tolist() == [0.0, 1.0, 2.0, 3.0, 3.0, 4.0]
    assert drops.tolist() == [0.0, 0.25, 0.25, 1.25, 1.25, 1.25]


def test_a_stronger_prior_scores_better_where_every_zone_runs_at_the_prior_rate():
    """Zones that all drop at the prior's rate (no zone differs): the more weight on the prior,
    the better calibrated; the data's own rate alone does worse."""
    mod = script()
    rng = np.random.default_rng(0)
    zones = {}
    for z in range(3):
        ups = rng.exponential(1 / 0.235, 400)  # hours up, then a 1-tick outage
        ticks = np.concatenate([np.r_[np.ones(max(1, round(u * 4))), 0] for u in ups])
        zones[z] = (900.0, ticks.astype(np.int64))
    n = min(len(c) for _, c in zones.values())
    dev, _ = mod.scores(zones, 0.235, [0.25, 1.0, 10.0], (3.0, 12.0), 40.0, n)
    assert (dev[:, 0] > dev[:, 1]).all() and (dev[:, 1] > dev[:, 2]).all()
