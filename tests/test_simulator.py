"""Tests of the simulator: conservation of work and money against the event log, restore
mid-simulation, noise, ticks, simultaneous events, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from eventlog import check_against, read_log, recompute
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuaas import simulator
from gpuaas.cli import cli
from gpuaas.errors import InputError, SolverError
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.methods import METHODS, Method
from gpuaas.rescheduler import DEFAULT_OVERHEAD, DEFAULT_STARTUP, PAPER_COSTS, Rescheduler
from gpuaas.simulator import Simulator, simulate
from gpuaas.solution import Solution

CATALOG = {
    "vm_types": [
        {"name": "A", "gpu": "K80", "gpus": 1, "cost_per_hour": 3.6},
        {"name": "B", "gpu": "K80", "gpus": 2, "cost_per_hour": 7.2},
        {"name": "C", "gpu": "M60", "gpus": 4, "cost_per_hour": 9.0},
    ]
}


def postpone_all(instance, *, seed=0, time_limit=None, **options):
    """Test-only broken solver: never runs anything."""
    return Solution.empty(instance, "test-postpone")


@pytest.fixture(autouse=True)
def _methods(monkeypatch):
    monkeypatch.setitem(
        METHODS,
        "test-postpone",
        Method("test-postpone", __name__, "postpone_all", "test only", "test"),
    )


def trace_of(jobs, nodes=2, H=3600.0):
    """An Instance from job dicts over the test catalog."""
    return Instance.from_dict(
        {"catalog": CATALOG, "nodes": nodes, "params": {"H": H}, "jobs": jobs}
    )


def generated(arrivals, seed, nodes=10, jobs=100):
    """A §4.1 trace from the generator."""
    return Instance.from_dict(generate_trace(nodes, jobs, seed=seed, arrivals=arrivals))


def run_checked(trace, method, tmp_path, **kw):
    """Simulate with an event log and return (result dict, problems found by the recomputation)."""
    log = tmp_path / f"{method}.jsonl"
    res = simulate(trace, method, log=log, **kw).to_dict()
    return res, check_against(recompute(log, trace), res, trace)


@pytest.mark.parametrize("arrivals", ["exponential", "high", "low", "mixed"])
@pytest.mark.parametrize("seed", [1, 2])
def test_generated_traces_conserve_work_and_money(arrivals, seed, tmp_path):
    """N=10, J=100: every job completes; the event log alone gives the same VM, tardiness and
    total cost (1e-6), no interval over capacity, each job's work sums to 1 (1e-9)."""
    trace = generated(arrivals, seed)
    res, problems = run_checked(trace, "greedy", tmp_path, seed=seed)
    assert problems == []
    assert len(res["jobs"]) == 100 and res["total_cost"] > 0
    assert res["total_cost"] == pytest.approx(res["vm_cost"] + res["tardiness_cost"], rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["incremental", "greedy", "path-relinking", "edf", "fifo", "ps"])
@pytest.mark.parametrize("arrivals", ["exponential", "high", "low", "mixed"])
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_generated_traces_conserve_more_methods_and_seeds(method, arrivals, seed, tmp_path):
    """The conservation checks for more seeds and methods, with noise and restart overhead."""
    trace = generated(arrivals, seed)
    for kw in ({}, {"noise": 0.11, "overhead": 300.0}):
        res, problems = run_checked(trace, method, tmp_path, seed=seed, **kw)
        assert problems == [] and len(res["jobs"]) == 100


def test_restore_mid_simulation_gives_identical_result():
    """Replacing the rescheduler by restore(state()) at a random event changes nothing."""
    trace = generated("exponential", 3, nodes=5, jobs=30)
    method = "path-relinking"  # randomized: a seed not restored would show
    full = Simulator(trace, method, seed=3, overhead=120.0).run().to_dict()
    k = int(np.random.default_rng(7).integers(full["events"] // 8, full["events"] // 2))
    sim = Simulator(trace, method, seed=3, overhead=120.0)
    for _ in range(k):
        sim.step()
    sim.rescheduler = Rescheduler.restore(json.loads(json.dumps(sim.rescheduler.state())))
    resumed = sim.run().to_dict()
    for d in (full, resumed):
        for key in ("wall_seconds", "cpu_seconds", "solver_seconds", "solver_cpu_seconds"):
            d.pop(key)
    assert 0 < k < full["events"] and resumed == full


def test_simulator_uses_the_reschedulers_public_api_only():
    """simulator.py and its producers import nothing from gpuaas.rescheduler's modules but its
    public names and read neither a private attribute of a Rescheduler nor its state record
    (so the rescheduler's internals can change freely)."""
    import ast
    import inspect

    from gpuaas import producers

    trees = [ast.parse(inspect.getsource(m)) for m in (simulator, producers)]
    imported = [
        (node.module, a.name)
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module.startswith("gpuaas.rescheduler")
        for a in node.names
    ]
    assert ("gpuaas.rescheduler", "Rescheduler") in imported
    assert all(m == "gpuaas.rescheduler" and not n.startswith("_") for m, n in imported)
    r = Rescheduler(CATALOG, 2, "greedy")
    private = {
        n for n in [*vars(r), *dir(Rescheduler)] if n.startswith("_") and not n.startswith("__")
    }
    # the state record is there for inspection: orchestration code reads the facade
    assert "run_state" in vars(r) and hasattr(r.run_state, "jobs")
    used = {n.attr for tree in trees for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert not used & (private | {"run_state"})


def test_noise_predicted_vs_actual(tmp_path):
    """Noise scales actual durations by 1 + U(-2a, 2a): mean |error| = a; the prediction is the
    noiseless run; the log still accounts for every second of actual work."""
    trace = generated("exponential", 1, nodes=5, jobs=40)
    res, problems = run_checked(trace, "greedy", tmp_path, seed=1, noise=0.11)
    assert problems == []
    exact = simulate(trace, "greedy", seed=1)
    assert res["predicted"]["total_cost"] == exact.total_cost
    assert res["cost_deviation"] == pytest.approx(
        (res["total_cost"] - exact.total_cost) / exact.total_cost
    )
    factors = np.array([j["actual_factor"] for j in res["jobs"]])
    assert ((factors >= 0.78) & (factors <= 1.22)).all() and (factors != 1).all()
    big = Simulator(generated("exponential", 1, nodes=100, jobs=2000), "greedy", seed=1, noise=0.11)
    assert np.abs(big.execution.factor - 1).mean() == pytest.approx(0.11, abs=0.005)  # 3.5 sd


def test_ticks_and_intervals_by_hand(tmp_path):
    """One 10 000 s job alone: events at 0, 3600, 7200 (ticks) and 10 000 (completion)."""
    trace = trace_of([{"id": "a", "due": 20000.0, "weight": 0.01, "times": {"A": [10000.0]}}])
    res, problems = run_checked(trace, "greedy", tmp_path, **PAPER_COSTS)
    assert problems == []
    assert [(r["start"], r["end"]) for r in read_log(tmp_path / "greedy.jsonl")] == [
        (0.0, 3600.0),
        (3600.0, 7200.0),
        (7200.0, 10000.0),
    ]
    assert res["events"] == 4 and res["vm_cost"] == pytest.approx(10000 * 0.001)
    assert res["jobs"][0]["completion"] == 10000.0 and res["tardiness_cost"] == 0.0
    assert (
        simulate(trace, "greedy", tick=900.0, **PAPER_COSTS).events == 13
    )  # 0, 900, ..., 9900, 10000


def test_vm_startup_by_hand(tmp_path):
    """With the default costs the VM opened at 0 is billed from 0 but works from DEFAULT_STARTUP:
    the 10 000 s job completes at 10 000 + start-up; the log's `ready` lets the work reconcile."""
    trace = trace_of([{"id": "a", "due": 20000.0, "weight": 0.01, "times": {"A": [10000.0]}}])
    res, problems = run_checked(trace, "greedy", tmp_path)
    assert problems == [] and (res["overhead"], res["startup"]) == (
        DEFAULT_OVERHEAD,
        DEFAULT_STARTUP,
    )
    end = 10000.0 + DEFAULT_STARTUP
    assert res["jobs"][0]["completion"] == pytest.approx(end)
    assert res["vm_cost"] == pytest.approx(end * 0.001)
    assert res["startup_cost"] == pytest.approx(DEFAULT_STARTUP * 0.001)
    assert read_log(tmp_path / "greedy.jsonl")[0]["nodes"] == [
        {"node": 0, "vm": "A", "ready": DEFAULT_STARTUP}
    ]
    assert res["moves_per_job"] == 0 and res["lost_work_cost"] == 0


def test_simultaneous_completions_are_one_event(tmp_path):
    """Two identical jobs finishing together complete at one rescheduling point, exactly."""
    job = {"due": 300.0, "weight": 0.02, "times": {"A": [1000.0 / 3.0]}}
    late = dict(job, due=5000.0)  # less pressing than a and b: no reason to preempt them
    trace = trace_of([{"id": "a", **job}, {"id": "b", **job}, {"id": "c", "release": 0.1, **late}])
    res, problems = run_checked(trace, "greedy", tmp_path, tick=1e9, **PAPER_COSTS)
    assert problems == []
    # events: t=0 (a, b), t=0.1 (c waits: 2 nodes), t=1000/3 (a, b done, c starts), c done
    assert res["events"] == 4 and res["preemptions"] == 0 and res["migrations"] == 0
    done = {j["id"]: j for j in res["jobs"]}
    assert done["a"]["completion"] == done["b"]["completion"] == pytest.approx(1000 / 3)
    assert done["c"]["waiting"] == pytest.approx(1000 / 3 - 0.1)
    assert done["c"]["completion"] == pytest.approx(2000 / 3) and done["c"]["tardiness_cost"] == 0
    assert res["tardiness_cost"] == pytest.approx(2 * 0.02 * (1000 / 3 - 300))  # a, b late


def test_trace_progress_and_nodes_override(tmp_path):
    """Jobs may start partly done (work needed 1 - p) and `nodes` overrides N."""
    jobs = [
        {
            "id": f"j{i}",
            "due": 4000.0,
            "weight": 0.01,
            "progress": 0.25 * (i % 3),
            "times": {"A": [3000.0], "B": [3000.0, 1700.0]},
        }
        for i in range(5)
    ]
    res, problems = run_checked(trace_of(jobs, nodes=1), "greedy", tmp_path, nodes=3)
    assert problems == [] and res["nodes"] == 3


def test_method_that_never_runs_a_job_is_an_error(tmp_path, monkeypatch):
    """A method that postpones everything forever raises instead of looping; no log is left."""
    monkeypatch.setattr(simulator, "MAX_IDLE_EVENTS", 5)
    trace = trace_of([{"id": "a", "due": 1.0, "weight": 0.01, "times": {"A": [10.0]}}])
    with pytest.raises(SolverError, match="left every job waiting"):
        simulate(trace, "test-postpone", log=tmp_path / "ev.jsonl")
    assert list(tmp_path.iterdir()) == []


def migrate_all(instance, *, seed=0, time_limit=None, **options):
    """Test-only restless solver: every job on its own node, a running job always moved to
    another configuration (a migration)."""
    J, cat = instance.n_jobs, instance.catalog
    cfg = np.full(J, -1)
    for j in range(J):
        ok = np.flatnonzero(np.isfinite(instance.times[j]))
        cur = instance.current_cfg[j]
        cfg[j] = ok[(list(ok).index(cur) + 1) % len(ok)] if cur in ok else ok[0]
    node = np.arange(J)
    return Solution(instance, cat.cfg_vm[cfg], node, cfg, "test-migrate")


def test_restarts_that_lose_all_work_stop_the_run(tmp_path, monkeypatch):
    """A method migrating every job at every event with a restart overhead of 1e9 s never
    finishes a job: the run stops after MAX_IDLE_EVENTS events without progress (exit 3)."""
    monkeypatch.setitem(
        METHODS,
        "test-migrate",
        Method("test-migrate", __name__, "migrate_all", "test only", "test"),
    )
    jobs = [{"id": "a", "due": 1.0, "weight": 0.01, "times": {"A": [10000.0], "B": [9000.0, None]}}]
    with pytest.raises(
        SolverError,
        match=r"no job got closer to its end in 100 events in a row "
        r"\(\d+ migrations, 0 preemptions, each losing 1e\+09 s of work\); it cannot end",
    ):
        simulate(
            trace_of(jobs, nodes=1),
            "test-migrate",
            overhead=1e9,
            tick=600.0,
            log=tmp_path / "ev.jsonl",
        )
    assert list(tmp_path.iterdir()) == []  # no event log from a stopped run


def test_tick_too_short_is_refused_before_the_run():
    """A tick (or H) that would need more than EVENTS_PER_JOB events per job: InputError up front."""
    jobs = [{"id": "a", "due": 1.0, "weight": 0.01, "times": {"A": [36000.0]}}]
    with pytest.raises(
        InputError,
        match=r"^tick: 0.001 s needs at least 3.6e\+07 rescheduling events for "
        r"this trace, more than 1000 per job \(gpuaas.limits\); use at least 36 s$",
    ):
        Simulator(trace_of(jobs), "greedy", tick=0.001)
    with pytest.raises(InputError, match=r"^tick \(the trace's params.H\): 0.001 s needs"):
        Simulator(trace_of(jobs, H=1e-3), "greedy")
    assert simulator.min_events(trace_of(jobs), 3600.0) == 10.0


def test_event_budget_and_horizon_stop_a_run(monkeypatch):
    """More than EVENTS_PER_JOB events per job, or a clock past HORIZON, stops the run (exit 3)."""
    jobs = [{"id": "a", "due": 1.0, "weight": 0.01, "times": {"A": [36000.0]}}]
    monkeypatch.setattr(simulator, "EVENTS_PER_JOB", 2)
    monkeypatch.setattr(simulator, "min_events", lambda *a: 0.0)  # past the up-front check
    with pytest.raises(
        SolverError, match="after 3 events: more than 2 rescheduling events per job"
    ):
        simulate(trace_of(jobs), "greedy", tick=9000.0)
    monkeypatch.setattr(simulator, "EVENTS_PER_JOB", 1000)
    monkeypatch.setattr(simulator, "HORIZON", 10000.0)  # the real one is 2**33 s
    with pytest.raises(
        SolverError, match=r"the clock passed 1e\+04 s, where doubles no longer resolve"
    ):
        simulate(trace_of(jobs), "greedy")


def test_bad_arguments_raise_clear_errors():
    """Noise outside [0, 0.5), a bad tick or a non-Instance trace are InputErrors."""
    trace = trace_of([{"id": "a", "due": 1.0, "weight": 0.01, "times": {"A": [10.0]}}])
    with pytest.raises(InputError, match="noise"):
        simulate(trace, noise=0.6)
    with pytest.raises(InputError, match="tick"):
        simulate(trace, tick=-1.0)
    with pytest.raises(InputError, match="Instance"):
        simulate({"jobs": []})  # type: ignore[arg-type]


def test_progress_bar_goes_to_stderr(capsys, monkeypatch):
    """progress=True writes progress on stderr (off a terminal, as here, a line every
    LOG_INTERVAL seconds) and nothing on stdout."""
    from gpuaas import simulator

    monkeypatch.setattr(simulator._ProgressBar, "LOG_INTERVAL", 0.0)
    simulate(generated("high", 1, nodes=2, jobs=6), "greedy", progress=True)
    out = capsys.readouterr()
    assert out.out == "" and "simulate [" in out.err and "6/6 jobs" in out.err


def test_cli_simulate(tmp_path):
    """`gpuaas simulate` prints a summary, --json the result, -o and --log write files."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(generate_trace(3, 12, seed=2)))
    runner = CliRunner()
    out = runner.invoke(cli, ["simulate", str(path), "-m", "greedy", "--quiet"])
    assert out.exit_code == 0, out.output
    assert "total cost" in out.output and "12 completed" in out.output
    log, res = tmp_path / "ev.jsonl", tmp_path / "res.json"
    out = runner.invoke(
        cli,
        [
            "simulate",
            str(path),
            "-m",
            "greedy",
            "--json",
            "--log",
            str(log),
            "-o",
            str(res),
            "--noise",
            "0.11",
            "--seed",
            "4",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(res.read_text())
    assert {
        "method",
        "total_cost",
        "vm_cost",
        "tardiness_cost",
        "jobs",
        "events",
        "migrations",
        "preemptions",
        "seed",
        "nodes",
        "solver_seconds",
        "wall_seconds",
        "predicted",
    } <= set(data)
    assert (
        check_against(
            recompute(log, Instance.from_dict(json.loads(path.read_text()))),
            data,
            Instance.from_dict(json.loads(path.read_text())),
        )
        == []
    )
    out = runner.invoke(cli, ["simulate", str(tmp_path / "missing.json")])
    assert out.exit_code == 2 and "no such file" in out.output and "Traceback" not in out.output


job_times = st.floats(min_value=50.0, max_value=5000.0, allow_nan=False)


@st.composite
def small_traces(draw):
    """Random small traces over the 3-VM test catalog (some jobs cannot run on some VMs)."""
    n_jobs = draw(st.integers(1, 7))
    jobs = []
    for i in range(n_jobs):
        t1 = draw(job_times)
        speedup = draw(st.floats(0.3, 1.0))
        times = {"A": [t1], "B": [t1 * 0.9, t1 * 0.9 * speedup]}
        if draw(st.booleans()):
            m60 = draw(st.floats(0.5, 2.0))
            times["C"] = [t1 * m60 / g ** draw(st.floats(0.0, 1.0)) for g in range(1, 5)]
        jobs.append(
            {
                "id": f"j{i}",
                "release": draw(st.floats(0.0, 8000.0)),
                "due": draw(st.floats(0.0, 20000.0)),
                "weight": draw(st.floats(0.0, 0.02)),
                "progress": draw(st.sampled_from([0.0, 0.0, 0.5])),
                "times": times,
            }
        )
    return trace_of(jobs, nodes=draw(st.integers(1, 3)), H=draw(st.sampled_from([600.0, 3600.0])))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    trace=small_traces(),
    method=st.sampled_from(["greedy", "edf"]),
    noise=st.sampled_from([0.0, 0.2]),
    overhead=st.sampled_from([0.0, 100.0]),
    seed=st.integers(0, 5),
)
def test_invariants_on_random_small_traces(trace, method, noise, overhead, seed, tmp_path):
    """Every job completes; the event log conserves money, capacity and work."""
    res, problems = run_checked(trace, method, tmp_path, seed=seed, noise=noise, overhead=overhead)
    assert problems == []
    assert len(res["jobs"]) == trace.n_jobs
