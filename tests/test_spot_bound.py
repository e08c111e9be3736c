"""The spot bound's spells (`gpuaas.capacity_lp.spell_rows`, formulations/BOUND.md §4): worked
by hand, against a brute force of one job's schedules, only ever above the bound without them,
and below every method's simulated cost under replayed capacity (bundled files, a Can't Be Late
file when $GPUAAS_SPOT_TRACES names a copy, and capacity with short spells)."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

import gpuaas.capacity_lp as capacity_lp
from gpuaas.availability import Availability, Capacity
from gpuaas.bounds import bound
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.methods import METHODS
from gpuaas.simulator import Simulator, simulate

ROOT = Path(__file__).resolve().parent.parent
SPOT = ROOT / "instances" / "spot"
SPOT_PRICE, OD_PRICE = 0.3707, 3.06  # p3.2xlarge on aws-us-east-1, $/h
CBL = Path(os.environ.get("GPUAAS_SPOT_TRACES", "/nonexistent")) / "availability"
CBL_FILE = CBL / "16-node" / "aws-08-27-2023" / "us-west-2c_v100_1.json"
#: methods too slow for the default run on the traces below (minutes each): in the slow test
SLOW = ("hierarchical", "milp")


def one_job(hours: float, due_hours: float) -> Instance:
    """One job of `hours` on p3.2xlarge (its only configuration), released at 0."""
    job = {
        "id": "a",
        "due": due_hours * 3600.0,
        "weight": 0.01,
        "times": {"p3.2xlarge": [hours * 3600.0]},
    }
    return Instance.from_dict({"catalog": "aws-us-east-1", "nodes": 1, "jobs": [job]})


def spells(pattern: list[int], gap: float) -> Availability:
    """p3.2xlarge's count `pattern[i]` on [i·gap, (i+1)·gap), the last one for ever."""
    return Availability({"p3.2xlarge": Capacity(np.arange(len(pattern)) * gap, pattern)})


def without_spells(monkeypatch: pytest.MonkeyPatch) -> None:
    """The capacity LP as it was before the spells' rows (the old spot bound)."""
    empty = capacity_lp._Spells([], [], [], [], [], [], [])
    monkeypatch.setattr(capacity_lp, "spell_rows", lambda *a, **k: empty)


# -- by hand ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overhead", "startup", "spot_hours", "restarts"),
    [
        (0.0, 0.0, 6.0, 0),  # every stretch's hour
        (0.0, 120.0, 6 - 5 * 120 / 3600, 0),  # the five later stretches less their start-up
        (600.0, 120.0, 6 - 5 * 720 / 3600, 5),  # ... and less a restart's lost 600 s each
    ],
)
def test_a_job_on_flapping_capacity_pays_a_restart_per_stretch(
    overhead, startup, spot_hours, restarts
):
    """10 h of work, due in 12 h, on a type with spot for 1 h of every 2 for 12 h, then none:
    spot holds at most the six stretches (the first from 0, the others each less the VM's
    start-up), and beyond the longest every further stretch costs a restart whose lost work
    is paid at the spot price and not counted as progress; the rest runs on demand."""
    trace = one_job(10, 12)
    flapping = spells([1, 0] * 6 + [0], 3600.0)
    b = bound(trace, availability=flapping, slot=3600.0, overhead=overhead, startup=startup)
    lost = restarts * overhead / 3600
    expected = (spot_hours + lost) * SPOT_PRICE + (10 - spot_hours) * OD_PRICE
    assert b.status == "optimal"
    assert b.bound == pytest.approx(expected, rel=1e-7)


def test_no_restart_is_charged_for_work_that_fits_one_stretch():
    """2 h of work and a 3 h stretch before the due date: no schedule has to restart, so the
    overhead changes nothing (only the work beyond the longest stretch is charged)."""
    trace = one_job(2, 12)
    avail = spells([1, 0, 1, 1, 1, 0], 3600.0)
    costs = [bound(trace, availability=avail, slot=3600.0, overhead=o).bound for o in (0, 600)]
    assert costs == pytest.approx([2 * SPOT_PRICE] * 2, rel=1e-9)


# -- a brute force of one job's schedules -------------------------------------------------------


def cheapest_schedule(
    work: int, due: int, counts: list[int], overhead: int, startup: int, weight: float
) -> float:
    """The least total cost of one job of `work` steps on p3.2xlarge, spot (count `counts[t]`
    in step t, none after) or on demand, over every schedule on the grid of steps: at each
    step the job's VM is none, spot or on demand; a VM opened is billed `startup` steps before
    it runs the job; leaving a VM (moved, stopped or its spot count gone) loses min(progress,
    `overhead`) steps of work; tardiness `weight` per step past `due`. Dynamic programming over
    (VM, steps since it opened capped at `startup`, progress), exact on the grid."""
    prices = {"spot": SPOT_PRICE, "od": OD_PRICE}
    inf = float("inf")
    horizon = len(counts) + work + startup + overhead + 2  # on demand from any state ends by then
    # state: (vm, ready) -> costs by progress 0..work; ready: steps the VM has been up (<= startup)
    best = {("none", 0): np.full(work + 1, inf)}
    best[("none", 0)][0] = 0.0
    answer = inf
    for t in range(horizon):
        # finished jobs pay their tardiness once, at the step they finish
        for cost in best.values():
            if cost[work] < inf:
                answer = min(answer, cost[work] + weight * max(0, t - due))
        spot_ok = t < len(counts) and counts[t] > 0
        nxt: dict[tuple[str, int], np.ndarray] = {}
        offer = _offer(nxt, work)

        for (vm, up), cost in best.items():
            cost = cost.copy()
            cost[work] = inf  # done
            # leave the VM (or have none): lose min(progress, overhead)
            left = np.full(work + 1, inf)
            p = np.arange(work + 1)
            dest = p - np.minimum(p, overhead) if vm != "none" else p
            np.minimum.at(left, dest, cost)
            if vm == "spot" and not spot_ok:
                choices = [("none", left)]  # the spot VM is gone
            else:
                choices = [("none", left), (vm, cost)] if vm != "none" else [("none", left)]
            for keep_vm, base in choices:
                for new in ("none", "spot", "od"):
                    if new == "spot" and not spot_ok:
                        continue
                    if keep_vm != "none" and new != keep_vm:
                        continue
                    ready = up if keep_vm != "none" else 0
                    if new == "none":
                        offer(("none", 0), base)
                        continue
                    paid = base + prices[new] / 60.0  # steps of a minute
                    if ready < startup:
                        offer((new, ready + 1), paid)
                    else:  # runs the job this step
                        moved = np.full(work + 1, inf)
                        moved[1:] = paid[:-1]
                        offer((new, ready), moved)
        best = nxt
    return answer


def _offer(states: dict, work: int):
    """A function keeping the cheaper of two cost vectors for a state of `states`."""

    def offer(key: tuple[str, int], cost: np.ndarray) -> None:
        states[key] = np.minimum(states.get(key, np.full(work + 1, np.inf)), cost)

    return offer


@pytest.mark.parametrize(
    ("pattern", "overhead", "startup"),
    [
        ([1] * 50 + [0] * 30 + [1] * 40 + [0] * 20 + [1] * 60, 10, 2),
        ([1, 1, 0] * 60, 1, 0),
        ([1] * 20 + [0] * 10 + [1] * 20 + [0] * 10 + [1] * 150, 15, 3),
        ([0] * 40 + [1] * 25 + [0] * 5 + [1] * 25, 10, 2),
        ([1] * 30 + [0] * 5 + [1] * 30 + [0] * 5 + [1] * 30 + [0] * 5 + [1] * 30, 10, 2),
    ],
)
def test_the_bound_is_below_a_brute_force_of_one_job(pattern, overhead, startup):
    """Every schedule of one job on a minute grid (`cheapest_schedule`), restarts and start-ups
    as the simulator charges them: the cheapest is never below the bound with the spells'
    rows, and those rows take the bound closer to it than the bound without them."""
    work, due, weight = 100, 150, 0.001  # minutes; $ per minute late
    job = {"id": "a", "due": due * 60.0, "weight": weight / 60.0}
    job["times"] = {"p3.2xlarge": [work * 60.0]}
    trace = Instance.from_dict({"catalog": "aws-us-east-1", "nodes": 1, "jobs": [job]})
    counts = pattern + [0]  # no spot after the pattern
    avail = spells(counts, 60.0)
    best = cheapest_schedule(work, due, counts, overhead, startup, weight)
    b = bound(trace, availability=avail, slot=600.0, overhead=overhead * 60.0, startup=startup * 60)
    assert b.bound <= best + 1e-9
    old = bound(trace, availability=avail, slot=600.0, overhead=0.0, startup=0.0)
    assert old.bound <= b.bound + 1e-9


# -- only tighter, and never above a simulated run ------------------------------------------------


def small_trace(catalog: str = "aws-us-east-1") -> Instance:
    return Instance.from_dict(generate_trace(2, jobs=8, arrivals="high", seed=3, catalog=catalog))


def short_spells(tmp_path: Path) -> str:
    """Counts of 0-3 VMs changing every 20 min, shorter than a changeover, for five types."""
    ticks = [2, 2, 0, 1, 0, 3, 3, 3, 0, 0, 1, 1, 0, 2] * 40
    path = tmp_path / "short_v100_1.json"
    path.write_text(json.dumps({"metadata": {"gap_seconds": 1200}, "data": ticks}))
    return ",".join(
        [str(path)] + [f"{vm}={path}" for vm in ("p3.16xlarge", "g6.xlarge", "g5.xlarge")]
    )


SOURCES = {
    "short-spells": ("aws-us-east-1", None),
    "bamboo-aws": (
        "aws-us-east-1",
        f"p3.2xlarge={SPOT / 'bamboo-p3-sample.csv'},g4dn.xlarge={SPOT / 'bamboo-g4dn.csv'}",
    ),
    "bamboo-gcp": ("gcp-us-central1", f"a2-highgpu-1g={SPOT / 'bamboo-gcp-a100x1.txt'}"),
    "cant-be-late": ("aws-us-east-1", f"{CBL_FILE}"),
}


@pytest.fixture(scope="module")
def spells_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spells")


_BOUNDS: dict[str, float] = {}  # the spot bound of each source's trace, computed once


def source_of(name: str, where: Path) -> tuple[Instance, str]:
    catalog, source = SOURCES[name]
    if name == "cant-be-late" and not CBL_FILE.is_file():
        pytest.skip("no Can't Be Late copy at $GPUAAS_SPOT_TRACES")
    return small_trace(catalog), source or short_spells(where)


def spot_bound(name: str, where: Path) -> float:
    """`gpuaas.bound` of the source's trace within the availability a run replays."""
    if name not in _BOUNDS:
        trace, source = source_of(name, where)
        avail = Simulator(trace, "greedy", spot=True, availability=source, seed=1).availability
        _BOUNDS[name] = bound(trace, availability=avail).bound
    return _BOUNDS[name]


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_spells_only_tighten_the_bound(spells_dir, monkeypatch, name):
    """The new rows are valid inequalities added to the same LP: the bound never drops, and
    with spells shorter than a changeover it rises."""
    trace, source = source_of(name, spells_dir)
    new = spot_bound(name, spells_dir)
    avail = Simulator(trace, "greedy", spot=True, availability=source, seed=1).availability
    without_spells(monkeypatch)
    old = bound(trace, availability=avail).bound
    assert new >= old * (1 - 1e-9)
    if name == "short-spells":
        assert new > 1.05 * old


def methods_for(name: str) -> list[str]:
    """Every method on the short spells; those that take spot elsewhere (the rest never
    hold a spot VM)."""
    fast = [m for m in METHODS if m not in SLOW]
    spot = ["incremental", "greedy", "managed-spot", "uniform-progress"]
    return fast if name == "short-spells" else spot


@pytest.mark.parametrize(("name", "method"), [(n, m) for n in SOURCES for m in methods_for(n)])
def test_no_run_costs_less_than_the_spot_bound(spells_dir, name, method):
    """The run's cost under replayed capacity (the default overhead and start-up) is at least
    the spot bound (`simulate` attaches that same bound: the test below)."""
    trace, source = source_of(name, spells_dir)
    res = simulate(trace, method, seed=1, spot=True, availability=source, bound=False)
    assert res.total_cost >= spot_bound(name, spells_dir) - 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("method", SLOW)
def test_the_slow_methods_cost_no_less_than_the_spot_bound(spells_dir, method):
    trace, source = source_of("short-spells", spells_dir)
    res = simulate(trace, method, seed=1, spot=True, availability=source, bound=False)
    assert res.total_cost >= spot_bound("short-spells", spells_dir) - 1e-6


def test_the_simulated_bound_charges_the_runs_own_restarts(spells_dir):
    """`simulate` attaches the bound with its own overhead and start-up: the paper's costs
    (0 and 0) give the bound without restarts, which is below the default run's."""
    trace, source = source_of("short-spells", spells_dir)
    paper = simulate(
        trace, "uniform-progress", spot=True, availability=source, overhead=0.0, startup=0.0
    )
    default = simulate(trace, "uniform-progress", spot=True, availability=source)
    avail = Simulator(trace, "greedy", spot=True, availability=source, seed=1).availability
    assert paper.bound.bound == pytest.approx(
        bound(trace, availability=avail, overhead=0.0, startup=0.0).bound, rel=1e-9
    )
    assert default.bound.bound == pytest.approx(spot_bound("short-spells", spells_dir), rel=1e-9)
    assert paper.bound.bound < default.bound.bound
    assert paper.total_cost >= paper.bound.bound - 1e-6


def test_gpuaas_bound_charges_the_overhead_it_is_given(spells_dir, tmp_path):
    """`gpuaas bound --availability` charges a run's default restarts, `--paper-costs` none;
    a negative overhead is refused (InputError from Python, one line and exit 2 from the CLI)."""
    from click.testing import CliRunner

    from gpuaas.cli import cli
    from gpuaas.errors import InputError

    trace, source = source_of("short-spells", spells_dir)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(generate_trace(2, jobs=8, arrivals="high", seed=3,
                                              catalog="aws-us-east-1")))  # fmt: skip
    avail = Simulator(trace, "greedy", spot=True, availability=source, seed=1).availability
    runner = CliRunner()
    for extra, expected in (
        ([], spot_bound("short-spells", spells_dir)),
        (["--paper-costs"], bound(trace, availability=avail, overhead=0, startup=0).bound),
    ):
        done = runner.invoke(cli, ["bound", str(path), "--availability", source, "--json", *extra])
        assert done.exit_code == 0, done.output
        assert json.loads(done.output)["bound"] == pytest.approx(expected, rel=1e-9)
    with pytest.raises(InputError, match="overhead"):
        bound(trace, availability=avail, overhead=-1.0)
    done = runner.invoke(cli, ["bound", str(path), "--availability", source, "--overhead", "-1"])
    assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1
