"""The upper value of the optimum (`gpuaas.upper`, `gpuaas bound --upper`): a complete schedule
that the validator accepts at every event and whose event log reconciles, at least the lower
bound and at most the default's cost."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from eventlog import check_against, recompute

import gpuaas.rescheduler.apply as apply
from gpuaas.bounds import bound
from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import Simulator, simulate
from gpuaas.upper import upper, write_log
from gpuaas.validator import validate

#: the default and two fast methods: the tests' portfolio (the full one takes minutes)
FAST = (("incremental", 1), ("greedy", 1), ("edf", 1))


def assert_reconciles(top, trace, tmp_path):
    """The upper value's run, written as an event log, recomputes its own costs (`eventlog`)
    at the trace's due dates and weights, and its total is the upper value; the recomputation."""
    path = tmp_path / "upper.jsonl"
    write_log(top, path)
    rec = recompute(path, trace)
    assert check_against(rec, top.result.to_dict(), trace) == []
    assert rec.total_cost == pytest.approx(top.upper, rel=1e-6)
    return rec


def small(seed: int, nodes: int = 2, jobs: int = 8) -> Instance:
    return Instance.from_dict(generate_trace(nodes, jobs, seed=seed, arrivals="high"))


@pytest.mark.parametrize(("seed", "overhead"), [(5, 0.0), (6, 600.0), (7, 600.0)])
def test_upper_brackets_the_optimum_and_its_schedule_reconciles(
    seed, overhead, tmp_path, monkeypatch
):
    """bound <= upper <= the default's simulated cost; every plan of the runs passes the
    validator; the cheapest run's event log recomputes its costs and work."""
    trace = small(seed)
    checked = []
    solve = apply.solve

    def validated(instance, method, **kwargs):
        sol = solve(instance, method, **kwargs)
        report = validate(sol)
        assert report.ok, (method, report.errors)
        checked.append(method)
        return sol

    monkeypatch.setattr(apply, "solve", validated)
    top = upper(trace, overhead=overhead, portfolio=FAST, time_limit=1e6, log=True)
    assert {m for m, _, _ in top.runs} == {"incremental", "greedy", "edf"} == set(checked)
    assert top.upper == min(c for _, _, c in top.runs)
    low = bound(trace)
    default = simulate(trace, seed=1, overhead=overhead, bound=False)  # `gpuaas simulate`
    assert low.bound <= top.upper * (1 + 1e-9)
    assert top.upper <= default.total_cost * (1 + 1e-12)
    assert top.runs[0] == ("incremental", 1, default.total_cost)
    assert_reconciles(top, trace, tmp_path)


def test_default_seeds_append_the_default_s_other_seeds_and_can_lower_the_upper(tmp_path):
    """`default_seeds=K` runs the default at the seeds 1..K the portfolio lacks, after it; on
    this trace (600 s restarts) seed 2 of the default is cheaper than seed 1, so the upper value
    drops, and it is still a complete run reconciled from its event log."""
    trace = small(2)
    alone = upper(trace, overhead=600.0, portfolio=(("incremental", 1),), time_limit=1e6)
    more = upper(
        trace,
        overhead=600.0,
        portfolio=(("incremental", 1), ("greedy", 1)),
        time_limit=1e6,
        default_seeds=3,
        log=True,
    )
    assert [(m, s) for m, s, _ in more.runs] == [
        ("incremental", 1), ("greedy", 1), ("incremental", 2), ("incremental", 3)
    ]  # fmt: skip
    assert more.upper < alone.upper * (1 - 1e-3)
    assert (more.method, more.seed) == ("incremental", 2)
    again = simulate(trace, seed=2, overhead=600.0, bound=False)
    assert more.upper == again.total_cost
    assert_reconciles(more, trace, tmp_path)


def test_suffix_search_finds_a_schedule_no_run_of_the_portfolio_reaches(tmp_path):
    """On this trace (600 s restarts) the suffix search from the cheapest run, re-drawing its
    decisions from later points in time, ends cheaper than every run (three methods, the
    default at seeds 1-3): a complete schedule billed at the trace's own due dates and weights,
    its event log (the incumbent's prefix and the kept suffix) recomputing its costs."""
    trace = small(7, jobs=5)
    top = upper(
        trace,
        overhead=600.0,
        portfolio=FAST,
        default_seeds=3,
        search=1,
        time_limit=1e6,
        log=True,
    )
    assert len(top.runs) == 5 and top.search["improved"] >= 1
    assert top.search["from"]["cost"] == min(c for _, _, c in top.runs)
    assert top.upper < min(c for _, _, c in top.runs) * (1 - 1e-3)
    assert bound(trace).bound <= top.upper
    rec = assert_reconciles(top, trace, tmp_path)  # at the trace's due dates and weights
    assert rec.total_cost == pytest.approx(top.result.total_cost, rel=1e-9)
    # `redrawn` is the recipe: the run it started from, its seed changed at those points
    from gpuaas.upper import _fork

    sim = Simulator(trace, top.method, seed=top.seed, noise=0.0, overhead=600.0)
    for _, at, seed in top.search["redrawn"]:
        while sim.clock is None or sim.clock < at:
            assert sim.step() is not None
        sim = _fork(sim, seed=seed)
    assert sim.run().total_cost == top.upper


def test_admission_run_is_a_schedule_of_the_original_trace_and_can_lower_the_upper(tmp_path):
    """`admission=True`: the default replayed on the trace admitted by the list schedule. On
    this trace (600 s restarts) the run admitted on 1.25 x N nodes is far cheaper than the
    default; its event log recomputes its costs at the ORIGINAL trace's due dates and weights
    (the release is billed nowhere), no job runs before its original release, at least one is
    held back past it, and the run's total is VM cost + Σ ω_j·max(0, C_j - due_j) of the
    original due dates."""
    from eventlog import read_log

    from gpuaas.admission import admission_times

    trace = small(6)
    top = upper(
        trace, overhead=600.0, portfolio=(("incremental", 1),), time_limit=1e6,
        admission=True, log=True,
    )  # fmt: skip
    default = simulate(trace, seed=1, overhead=600.0, bound=False)
    assert top.runs[0] == ("incremental", 1, default.total_cost)
    assert [m for m, _, _ in top.runs[1:]] == [
        "admission x1.25", "admission x1.5", "admission x1.75", "admission x2"
    ]  # fmt: skip
    assert top.admission == 1.25 and top.upper < 0.7 * default.total_cost
    assert bound(trace).bound <= top.upper
    assert_reconciles(top, trace, tmp_path)  # the original trace: its due dates and weights
    first: dict[str, float] = {}
    for line in read_log(tmp_path / "upper.jsonl"):
        for jb in line["jobs"]:
            first.setdefault(jb["id"], line["start"])
    release = dict(zip(trace.job_ids, trace.release, strict=True))
    assert set(first) == set(trace.job_ids)
    assert all(first[j] >= release[j] for j in first)
    start = admission_times(trace, scale=1.25)
    assert (start >= trace.release).all() and (start > trace.release).any()
    assert any(first[j] > release[j] + 1.0 for j, s in zip(trace.job_ids, start, strict=True)
               if s > release[j])  # fmt: skip
    done = {d["id"]: d["completion"] for d in top.result.jobs}
    C = np.array([done[j] for j in trace.job_ids])
    tardiness = float((trace.weight * np.maximum(0.0, C - trace.due)).sum())
    assert top.result.tardiness_cost == pytest.approx(tardiness, rel=1e-9)
    assert top.upper == pytest.approx(top.result.vm_cost + tardiness, rel=1e-9)
    # its job records are of the original releases (held back time counts as waiting)
    for d in top.result.jobs:
        assert d["release"] == release[d["id"]]
        assert d["jct"] == pytest.approx(d["completion"] - release[d["id"]], abs=1e-6)
        assert d["waiting"] == pytest.approx(d["jct"] - d["running"], abs=1e-6)


def test_admission_list_schedule_keeps_within_the_scaled_nodes():
    """The list schedule: every job starts at or after its release, the node shares running at
    any time sum to at most scale x N x G, a huge scale admits every job at its release, and
    it is deterministic; scales whose admission is the releases' are not run again."""
    from gpuaas.admission import admission_times, admitted, job_configs
    from gpuaas.per_job import capacity_gpus
    from gpuaas.upper import _admission_runs

    trace = Instance.from_dict(generate_trace(4, 60, seed=3, arrivals="high"))
    cfg = job_configs(trace)
    rows = np.arange(trace.n_jobs)
    dur, need = trace.times[rows, cfg], capacity_gpus(trace)[cfg]
    cap = trace.nodes * trace.catalog.gpus.max()
    for scale in (0.5, 1.0, 1.5):
        s = admission_times(trace, scale=scale)
        assert (s >= trace.release).all()
        t = np.concatenate([s, s + dur])
        d = np.concatenate([need, -need])
        o = np.lexsort((d, t))  # ends before starts at the same time
        assert np.cumsum(d[o]).max() <= scale * cap + 1e-6
        assert np.array_equal(s, admission_times(trace, scale=scale))
    assert (admission_times(trace, scale=0.5) > trace.release).any()
    assert np.array_equal(admission_times(trace, scale=1e6), trace.release)
    assert np.array_equal(admitted(trace, trace.release).release, trace.release)
    with pytest.raises(ValueError, match="before"):
        admitted(trace, trace.release - 1.0)
    runs = _admission_runs(trace, None, True)
    scales = [r[3] for r in runs]
    starts = [r[2].release for r in runs]
    assert all(not np.array_equal(a, trace.release) for a in starts)
    assert all(not np.array_equal(a, b) for i, a in enumerate(starts) for b in starts[:i])
    assert scales == sorted(scales) and _admission_runs(trace, None, False) == []


def test_a_fork_continues_exactly_and_a_new_seed_decides_anew():
    """`_fork` mid-run: the copy continues as the original does (to the last float); with
    another seed it is another run of the same trace, the original untouched."""
    from gpuaas.upper import _fork

    trace = small(4)
    sim = Simulator(trace, "incremental", seed=1, noise=0.0, overhead=600.0)
    for _ in range(6):
        sim.step()
    same, other = _fork(sim), _fork(sim, seed=7)
    results = []
    for s in (sim, same, other):
        d = s.run().to_dict()
        for key in ("wall_seconds", "cpu_seconds", "solver_seconds", "solver_cpu_seconds"):
            d.pop(key)
        results.append(d)
    whole = simulate(trace, seed=1, overhead=600.0, bound=False)
    assert results[0] == results[1] and results[0]["total_cost"] == whole.total_cost
    assert results[2]["total_cost"] != results[0]["total_cost"]


def test_time_limit_stops_before_the_next_run_never_before_the_first():
    trace = small(5)
    top = upper(trace, portfolio=FAST, time_limit=1e-9, search=2)
    assert [m for m, _, _ in top.runs] == ["incremental"] and top.method == "incremental"
    assert top.search is None  # no time left for it either


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"portfolio": ()}, "portfolio"), ({"portfolio": (("nope", 1),)}, "portfolio"),
     ({"time_limit": -1.0}, "time_limit"), ({"default_seeds": 0}, "default_seeds"),
     ({"default_seeds": 2.5}, "default_seeds"), ({"search": 0}, "search")],
)  # fmt: skip
def test_bad_arguments_are_input_errors(kwargs, field):
    with pytest.raises(InputError, match=field):
        upper(small(5), **kwargs)


def test_cli_prints_upper_beside_bound(tmp_path, monkeypatch):
    """`gpuaas bound --upper`: JSON keys `bound` and `upper`, the run's log; the upper-only
    options without --upper are one-line errors (exit 2, no output file)."""
    monkeypatch.setattr("gpuaas.upper.PORTFOLIO", FAST)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(generate_trace(2, 5, seed=6, arrivals="high")))
    out, log = tmp_path / "b.json", tmp_path / "l.jsonl"
    runner = CliRunner()
    args = ["bound", str(path), "--upper", "--overhead", "0", "--startup", "0"]
    done = runner.invoke(cli, [*args, "--log", str(log), "-o", str(out)])
    assert done.exit_code == 0, done.output
    data = json.loads(out.read_text())
    assert data["bound"] <= data["upper"] == data["upper_run"]["upper"]
    assert data["upper_run"]["overhead"] == 0.0 and len(data["upper_run"]["runs"]) == 3
    assert log.read_text().count("\n") > 0
    assert "upper / bound" in done.output  # the summary is printed beside the file
    later = tmp_path / "later.json"
    later.write_text(json.dumps(dict(json.loads(path.read_text()), time=10.0)))
    bad = runner.invoke(cli, ["bound", str(later), "--upper", "-o", str(tmp_path / "n.json")])
    assert bad.exit_code == 2 and "time must be 0" in bad.output
    # --overhead and --startup are the bound's own options too (the spot bound charges them)
    log = ["--log", str(tmp_path / "x.jsonl")]
    bad = runner.invoke(cli, ["bound", str(path), *log, "-o", str(tmp_path / "n.json")])
    assert bad.exit_code == 2 and "needs --upper" in bad.output
    for opt in ("--default-seeds", "--search"):
        bad = runner.invoke(cli, ["bound", str(path), opt, "2"])
        assert bad.exit_code == 2 and "needs --upper" in bad.output
    bad = runner.invoke(cli, ["bound", str(path), "--admission"])
    assert bad.exit_code == 2 and "needs --upper" in bad.output
    monkeypatch.setattr("gpuaas.upper.ADMISSION_SCALES", (1.25,))  # one admission run
    held = runner.invoke(cli, [*args, "--admission", "--json"])
    assert held.exit_code == 0, held.output
    run = json.loads(held.output)["upper_run"]
    assert run["runs"][: len(FAST)] == json.loads(out.read_text())["upper_run"]["runs"]
    assert [r["method"] for r in run["runs"][len(FAST) :]] == ["admission x1.25"]
    assert run["admission"] is None or run["method"] == "incremental"
    seeds = runner.invoke(cli, [*args, "--default-seeds", "2", "--json"])
    assert seeds.exit_code == 0, seeds.output
    runs = [(r["method"], r["seed"]) for r in json.loads(seeds.output)["upper_run"]["runs"]]
    assert runs == [*FAST, ("incremental", 2)]
    found = runner.invoke(cli, [*args, "--search", "1", "--json"])
    assert found.exit_code == 0, found.output
    search = json.loads(found.output)["upper_run"]["search"]
    assert search["draws"] == 1 and search["windows"] == 7 and search["tried"] == 7
    assert not (tmp_path / "n.json").exists() and not (tmp_path / "x.jsonl").exists()


def test_compare_rows_gain_cost_over_upper_only_when_asked(monkeypatch):
    """`gpuaas compare --upper`: every row gets the upper value of its node count and restart
    costs (computed once) and total / upper; the default's own run is never below it."""
    from gpuaas.experiments import analysis
    from gpuaas.experiments.compare import compare

    monkeypatch.setattr("gpuaas.upper.PORTFOLIO", FAST)
    trace = small(6)
    calls = []
    real = upper
    monkeypatch.setattr("gpuaas.upper.upper", lambda *a, **k: calls.append(k) or real(*a, **k))
    rows = compare(trace, ["incremental", "edf"], [1], upper=True, overhead=0.0, startup=0.0)
    top = real(trace, overhead=0.0, startup=0.0, portfolio=FAST)
    assert len(calls) == 1 and [r["upper"] for r in rows] == [top.upper] * 2
    for r in rows:
        assert r["cost_over_upper"] == r["total_cost"] / top.upper
        assert r["cost_over_upper"] >= 1 - 1e-12  # the default and EDF are in the portfolio
    assert "/upper" in analysis.format_table(analysis.summarize(rows))
    plain = compare(trace, ["edf"], [1], overhead=0.0, startup=0.0)
    assert plain[0]["upper"] is None and plain[0]["cost_over_upper"] is None
    assert "/upper" not in analysis.format_table(analysis.summarize(plain))


def test_campaign_spec_upper_is_a_flag_and_fills_the_rows(monkeypatch):
    from gpuaas.experiments.cell import run_cell
    from gpuaas.experiments.spec import expand, parse_spec

    monkeypatch.setattr("gpuaas.upper.PORTFOLIO", (("greedy", 1),))
    data = {"nodes": [2], "arrivals": ["high"], "seeds": [4], "jobs_per_node": 3}
    (cell,) = expand(parse_spec({**data, "methods": ["greedy"], "upper": True}))
    row = run_cell(cell)
    assert row["status"] == "ok" and row["cost_over_upper"] == 1.0  # the portfolio's one run
    (cell,) = expand(parse_spec({**data, "methods": ["greedy"]}))
    assert cell.upper is False and run_cell(cell)["upper"] is None
    with pytest.raises(InputError, match="upper"):
        parse_spec({**data, "methods": ["greedy"], "upper": 1})
