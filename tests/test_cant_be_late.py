"""The Can't Be Late reference (tests/cant_be_late.py): hand-checked runs and invariants."""

import math

import pytest
from cant_be_late import (
    NONE,
    ON_DEMAND,
    SPOT,
    JobState,
    greedy,
    on_demand,
    simulate,
    uniform_progress,
)
from hypothesis import given, settings
from hypothesis import strategies as st

H = 3600.0
K = 3.0


@pytest.mark.parametrize("policy", [greedy, uniform_progress])
def test_always_available_runs_on_spot_with_one_changeover(policy):
    run = simulate([True] * 20, H, 4 * H, 8 * H, 0.5 * H, policy, K)
    assert run.spot_hours == 4 and run.od_hours == 0 and run.changeovers == 1
    assert (
        run.cost == 5 and run.finish == 5 * H and run.met
    )  # 4.5 h of work + changeover -> 5 ticks


@pytest.mark.parametrize("policy", [greedy, uniform_progress, on_demand])
def test_never_available_meets_the_deadline_on_demand(policy):
    run = simulate([False] * 20, H, 4 * H, 8 * H, 0.5 * H, policy, K)
    assert run.od_hours == 4 and run.spot_hours == 0 and run.met
    assert run.cost == 5 * K


def test_uniform_progress_catches_up_on_demand_where_greedy_waits():
    """Spot only in the last hours: greedy idles until the Safety Net, Uniform Progress goes
    on-demand as soon as it falls behind t x C / R and returns to spot when it is ahead."""
    avail = [False] * 4 + [True] * 8
    g = simulate(avail, H, 4 * H, 8 * H, 0.0, greedy, K)
    u = simulate(avail, H, 4 * H, 8 * H, 0.0, uniform_progress, K)
    assert g.spot_hours == 4 and g.cost == 4  # waits 4 h, then 4 h of spot just in time
    s = JobState(t=H, done=0.0, work=4 * H, deadline=8 * H, d=0.0, vm=NONE, overhead=0.0)
    assert uniform_progress(s, False, H) == ON_DEMAND and greedy(s, False, H) == NONE
    assert u.od_hours > 0 and u.met


def test_hysteresis_keeps_on_demand_until_ahead_of_ep_t_plus_2d():
    s = JobState(
        t=10 * H, done=5 * H, work=48 * H, deadline=60 * H, d=0.2 * H, vm=ON_DEMAND, overhead=0.0
    )
    assert uniform_progress(s, True, 600.0) == ON_DEMAND  # cp 5 h < ep(10.4 h) = 8.32 h
    ahead = JobState(10 * H, 8.5 * H, 48 * H, 60 * H, 0.2 * H, ON_DEMAND, 0.0)
    assert uniform_progress(ahead, True, 600.0) == SPOT  # 8.5 h > 8.32 h


@settings(max_examples=60, deadline=None)
@given(
    avail=st.lists(st.booleans(), min_size=60, max_size=60),
    work=st.integers(1, 20),
    slack=st.integers(0, 30),
    d=st.sampled_from([0.0, 0.1, 0.3, 1.0]),
)
def test_every_policy_meets_a_feasible_deadline_and_bills_at_least_its_work(avail, work, slack, d):
    """No deadline missed that on-demand from the start meets (the Safety Net's guarantee at
    tick resolution); cost covers the work at the spot price and never exceeds on-demand for
    the work, the changeovers and one partly used tick each."""
    deadline = (work + d + slack / 10) * H
    if not simulate([False] * 60, H, work * H, deadline, d * H, on_demand, K).met:
        return
    for policy in (greedy, uniform_progress):
        run = simulate(avail, H, work * H, deadline, d * H, policy, K)
        assert run.met and math.isclose(run.spot_hours + run.od_hours, work)
        assert run.cost >= work - 1e-9
        assert run.cost <= K * (work + run.changeovers * d + run.changeovers + 1) + 1e-9
