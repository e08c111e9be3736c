"""Faults, extreme inputs and limits: every case of the second table of instances/README.md
("Faults, extreme inputs and limits") with its exact answer."""

from __future__ import annotations

import copy
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpuaas import Rescheduler
from gpuaas.cli import COMPILE_NOTICE, cli
from gpuaas.errors import InputError, StateError
from gpuaas.generator import generate_snapshot
from gpuaas.instance import Instance
from gpuaas.methods import METHODS, Method, solve
from gpuaas.validator import validate

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "instances" / "README.md"
TRACE = str(ROOT / "instances" / "trace-small.json")
BASE = {
    "catalog": "azure-2021",
    "nodes": 2,
    "time": 0,
    "jobs": [
        {
            "id": "a",
            "due": 90000,
            "weight": 0.01,
            "times": {"NC6": [36000], "NC12": [36000, 20000]},
        },
        {"id": "b", "due": 50000, "weight": 0.005, "workload": {"application": "resnet50"}},
    ],
}


def _bad(where: Path, change) -> str:
    data = copy.deepcopy(BASE)
    change(data)
    (where / "bad.json").write_text(json.dumps(data))
    return "bad.json"


def _run(args: list[str]):
    return CliRunner().invoke(cli, args)


def _one_line(res, code: int, message: str) -> None:
    assert res.exit_code == code, res.output
    assert res.output == f"gpuaas: error: {message}\n"
    assert isinstance(res.exception, SystemExit)


#: (case, instance change, error after "gpuaas: error: ") for `gpuaas solve bad.json -o out.json`
SOLVE_CASES = [
    (
        "nodes-huge",
        lambda d: d.update(nodes=10**12),
        "bad.json: nodes: must be <= 1000000 (gpuaas.limits), got 1000000000000",
    ),
    (
        "nodes-ten-million",
        lambda d: d.update(nodes=10**7),
        "bad.json: nodes: must be <= 1000000 (gpuaas.limits), got 10000000",
    ),
    (
        "weight-huge",
        lambda d: d["jobs"][0].update(weight=1e308),
        "bad.json: jobs[0] (a).weight: must be <= 1e+06 (gpuaas.limits), got 1e+308",
    ),
    (
        "weight-overflow",
        lambda d: d["jobs"][0].update(weight=1e10),
        "bad.json: jobs[0] (a).weight: must be <= 1e+06 (gpuaas.limits), got 10000000000.0",
    ),
    (
        "time-huge",
        lambda d: d["jobs"][0]["times"].update(NC6=[1e308]),
        "bad.json: jobs[0] (a).times.NC6[0]: must be <= 1e+09 s (gpuaas.limits), got 1e+308",
    ),
    (
        "release-huge",
        lambda d: d["jobs"][0].update(release=1e15),
        "bad.json: jobs[0] (a).release: must be <= 1e+09 (gpuaas.limits), got 1000000000000000.0",
    ),
]


@pytest.mark.parametrize("case", SOLVE_CASES, ids=[c[0] for c in SOLVE_CASES])
@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_numbers_beyond_the_limits(tmp_path, monkeypatch, case, method):
    """Sizes, weights and times beyond gpuaas.limits: one line, exit 2, no output file."""
    monkeypatch.chdir(tmp_path)
    _bad(tmp_path, case[1])
    _one_line(_run(["solve", "bad.json", "-m", method, "-o", "out.json"]), 2, case[2])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_deep_nesting(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text("[" * 100_000 + "]" * 100_000)
    _one_line(
        _run(["solve", "bad.json", "-o", "out.json"]),
        2,
        "bad.json: not valid JSON: nested too deeply",
    )


def test_objective_at_the_limits_is_finite(tmp_path, monkeypatch):
    """The largest accepted weight, rho and times: the objective (and the JSON) stays finite."""
    monkeypatch.chdir(tmp_path)
    big = copy.deepcopy(BASE)
    big["params"] = {"H": 1e9, "mu": 1e6, "rho": 1e6}
    big["jobs"][0].update(weight=1e6, due=-1e9, times={"NC6": [1e9], "NC12": [1e9, 1e9]})
    (tmp_path / "big.json").write_text(json.dumps(big))
    res = _run(["solve", "big.json", "-m", "greedy", "--json"])
    assert res.exit_code == 0, res.output
    assert math.isfinite(json.loads(res.output)["objective"])  # json.loads would read Infinity


def test_simulate_many_nodes_runs():
    """simulate --nodes 100000 runs (work on the open nodes only); 10^7 is refused by the option."""
    res = _run(["simulate", TRACE, "--nodes", "100000", "-m", "greedy", "-q", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["nodes"] == 100000
    res = _run(["simulate", TRACE, "--nodes", "10000000"])
    assert res.exit_code == 2 and "10000000 is not in the range 1<=x<=1000000" in res.output


def test_two_jobs_on_a_million_nodes_are_fast():
    """Every method works on min(N, J) nodes: two jobs on N = 10^6 take well under a second
    (was 19 s for path relinking), and the answer is valid on the full instance."""
    inst = Instance.from_dict(dict(copy.deepcopy(BASE), nodes=10**6))
    for method in METHODS:
        solve(inst, method)  # compiled / loaded
        t0 = time.perf_counter()
        sol = solve(inst, method, time_limit=5.0)
        assert time.perf_counter() - t0 < 3.0, method
        assert len(sol.node_vm) == 10**6 and validate(sol).ok, method


def test_min_nodes_keeps_running_jobs_in_place():
    """The node reduction keeps a running job's node: EDF on N = 10^6 with a job running on
    node 999 999 leaves it there and starts the other on the lowest free node."""
    inst = Instance.from_dict(dict(copy.deepcopy(BASE), nodes=10**6))
    inst = Instance(
        **{
            **{
                f: getattr(inst, f)
                for f in (
                    "catalog",
                    "nodes",
                    "job_ids",
                    "release",
                    "due",
                    "weight",
                    "work",
                    "progress",
                    "time",
                )
            },
            "current_node": np.array([999_999, -1]),
            "current_cfg": np.array([0, -1]),
        }
    )
    sol = solve(inst, "edf")
    assert sol.job_node.tolist() == [999_999, 0] and sol.job_cfg[0] == 0


def _no_released_jobs(empty: bool) -> dict:
    """The example at its `time` with no job (`empty`) or every job released after it."""
    data = json.loads((ROOT / "instances" / "example.json").read_text())
    if empty:
        data["jobs"] = []
    else:
        for job in data["jobs"]:
            job["release"] = data["time"] + 1000.0
    return data


@pytest.mark.parametrize("empty", [True, False], ids=["no-jobs", "released-later"])
@pytest.mark.parametrize("method", list(METHODS))
def test_no_released_jobs_is_an_empty_solution(tmp_path, method, empty):
    """0 released jobs (issue 39, case 9: the default and milp raised a numpy casting error in
    milp/polish.py, exit 1): every method returns the valid empty plan, in the CLI too."""
    data = _no_released_jobs(empty)
    inst = Instance.from_dict(data).released()
    assert inst.n_jobs == 0
    sol = solve(inst, method, time_limit=10)
    assert validate(sol).ok
    assert sol.objective == 0.0 and (sol.job_node < 0).all() and (sol.node_vm < 0).all()
    (tmp_path / "i.json").write_text(json.dumps(data))
    out = tmp_path / "out.json"
    res = _run(["solve", str(tmp_path / "i.json"), "-m", method, "--time-limit", "10"])
    assert res.exit_code == 0, res.output
    res = _run(["solve", str(tmp_path / "i.json"), "-m", method, "-o", str(out)])
    assert res.exit_code == 0, res.output
    written = json.loads(out.read_text())
    assert written["objective"] == 0.0 and written["jobs"] == [] and written["nodes"] == []
    assert _run(["check", str(tmp_path / "i.json"), str(out)]).exit_code == 0


def test_milp_no_solution_is_exit_3(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(generate_snapshot(10, 100, 0)))
    res = _run(
        [
            "solve",
            str(path),
            "-m",
            "milp",
            "--time-limit",
            "0.001",
            "--warm-start",
            "none",
            "-o",
            str(tmp_path / "out.json"),
        ]
    )
    _one_line(
        res,
        3,
        "highs found no solution within the time limit of 0.001 s and there is no warm start",
    )
    assert not (tmp_path / "out.json").exists()


def test_tiny_tick_and_H_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    msg = (
        "0.001 s needs at least 7.49e+08 rescheduling events for this trace, more than 1000 per "
        "job (gpuaas.limits); use at least 25 s"
    )
    _one_line(_run(["simulate", TRACE, "--tick", "0.001", "-q"]), 2, f"tick: {msg}")
    trace = json.loads(Path(TRACE).read_text())
    trace["params"] = {"H": 1e-3}
    (tmp_path / "h.json").write_text(json.dumps(trace))
    _one_line(
        _run(["simulate", "h.json", "-q", "-o", "out.json"]),
        2,
        f"tick (the trace's params.H): {msg}",
    )
    assert not (tmp_path / "out.json").exists()


def ignore_move_costs(instance, **options):
    """Greedy as before methods saw the incumbent: it re-plans every job freely."""
    import dataclasses

    return solve(dataclasses.replace(instance, overhead=0.0, startup=0.0), "greedy", **options)


def test_restart_overhead_that_loses_everything_stops(tmp_path, monkeypatch):
    """--overhead 1e9 with a method that ignores it: every restart loses all work, the run
    cannot end: a SolverError (exit 3 from the CLI) in seconds, no log. A method that sees the
    incumbent keeps jobs in place and ends."""
    from gpuaas.errors import SolverError
    from gpuaas.simulator import simulate

    monkeypatch.setitem(
        METHODS,
        "test-thrash",
        Method("test-thrash", __name__, "ignore_move_costs", "test only", "test"),
    )
    t0 = time.perf_counter()
    with pytest.raises(SolverError) as err:
        simulate(
            Instance.from_dict(json.loads(Path(TRACE).read_text())),
            "test-thrash",
            overhead=1e9,
            log=tmp_path / "ev.jsonl",
        )
    assert time.perf_counter() - t0 < 60 and SolverError.exit_code == 3
    assert re.fullmatch(
        r"simulation stopped at t=[\d.e+]+ s after \d+ events: no job got "
        r"closer to its end in 100 events in a row \(\d+ migrations, \d+ preemptions, "
        r"each losing 1e\+09 s of work\); it cannot end",
        str(err.value),
    ), str(err.value)
    assert list(tmp_path.iterdir()) == []
    res = _run(["simulate", TRACE, "--overhead", "1e9", "-m", "greedy", "-q", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["migrations"] == 0


def test_sizes_refused_up_front():
    t0 = time.perf_counter()
    _one_line(
        _run(["compare", TRACE, "--seeds", "1-100000000"]),
        2,
        "seeds: more than 100000 seeds (gpuaas.limits)",
    )
    res = _run(["generate", "--nodes", "2", "--jobs", "1000000"])
    assert res.exit_code == 2 and "1000000 is not in the range 1<=x<=100000" in res.output
    assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize(
    "command",
    [
        ["solve", TRACE],
        ["simulate", TRACE],
        ["generate", "--nodes", "2"],
        ["compare", TRACE, "--seeds"],
    ],
)
@pytest.mark.parametrize("seed", ["-1", str(2**64)])
def test_one_seed_range_everywhere(command, seed):
    """--seed (and compare's --seeds) take 0 .. 2**32 - 1 in every command."""
    args = [*command, seed] if command[-1] == "--seeds" else [*command, "--seed", seed]
    res = _run(args)
    assert res.exit_code == 2, res.output
    assert "4294967295" in res.output or "expected e.g." in res.output


def test_restore_checks_every_field():
    """restore names the field of a corrupt state (was: accepted, failing later)."""
    r = Rescheduler("azure-2021", nodes=2, method="greedy", seed=1)
    r.submit({"id": "a", "due": 30000.0, "weight": 0.01, "times": {"NC6": [36000.0]}}, at=0.0)
    r.tick(3600.0, progress={"a": 0.5})
    state = json.loads(json.dumps(r.state()))
    cases = [
        (
            ("live", "jobs", 0, "progress"),
            float("nan"),
            "live.jobs[0] (a).progress: must be finite, got nan",
        ),
        (("live", "jobs", 0, "progress"), -1, "live.jobs[0] (a).progress: must be >= 0, got -1"),
        (
            ("live", "jobs", 0, "progress"),
            2,
            "live.jobs[0] (a).progress: must be in [0, 1), got 2.0",
        ),
        (("live", "time"), "late", "live.time: must be a number, got 'late'"),
        (("live", "time"), float("nan"), "live.time: must be finite, got nan"),
        (
            ("config", "run", "options"),
            {"colour": 1},
            "config.run.options: unknown option(s) colour for greedy; allowed: proxy, postprocess, open_rule, time_limit",
        ),
        # times out of order: a negative JCT or waiting time later (issue 26)
        (
            ("live", "jobs", 0, "release"),
            5000.0,
            "live.jobs[0].release: 5000.0 is after the clock 3600.0",
        ),
        (
            ("live", "jobs", 0, "start"),
            4000.0,
            "live.jobs[0].start: 4000.0 is not between its release and the clock 3600.0",
        ),
        (
            ("live", "jobs", 0, "running"),
            3700.0,
            "live.jobs[0].running: 3700.0 s is more than the 3600.0 s since it started",
        ),
        (
            ("live", "jobs", 0, "start"),
            None,
            "live.jobs[0].start: is null (never started) but the job ran",
        ),
    ]
    for path, value, message in cases:
        bad = copy.deepcopy(state)
        d = bad
        for p in path[:-1]:
            d = d[p]
        d[path[-1]] = value
        with pytest.raises(StateError) as err:
            Rescheduler.restore(bad)
        assert str(err.value) == f"corrupt Rescheduler state: {message}"


def test_event_arguments_are_checked():
    r = Rescheduler("azure-2021", nodes=2, method="greedy", seed=1)
    r.submit({"id": "a", "due": 30000.0, "weight": 0.01, "times": {"NC6": [36000.0]}}, at=0.0)
    r.tick(3600.0, progress={"a": 0.5})
    for call, message in [
        (
            lambda: r.submit(None, at=7200.0),
            "job: must be a job object (a mapping) or a list of them, got None",
        ),
        (
            lambda: r.complete(5, at=7200.0),
            "job_id: must be a job id (a string) or a list of them, got 5",
        ),
        (
            lambda: Rescheduler("azure-2021", 2, "greedy", colour=1),
            "options: unknown option(s) colour for greedy; allowed: proxy, postprocess, open_rule, time_limit",
        ),
        (
            lambda: r.tick(7200.0, progress={"a": 0.3}),
            "progress['a']: 0.3 is below the 0.5 reported before; progress only goes back when the job is "
            "migrated or preempted with a restart overhead",
        ),
    ]:
        with pytest.raises(InputError) as err:
            call()
        assert str(err.value) == message
    assert r.time == 3600.0  # nothing happened


def _check_files(tmp_path, change):
    inst = copy.deepcopy(BASE)
    (tmp_path / "i.json").write_text(json.dumps(inst))
    res = _run(["solve", str(tmp_path / "i.json"), "-m", "greedy", "--json"])
    sol = json.loads(res.output)
    change(sol)
    (tmp_path / "s.json").write_text(json.dumps(sol))
    return _run(["check", str(tmp_path / "i.json"), str(tmp_path / "s.json")])


@pytest.mark.parametrize(
    ("case", "change", "error"),
    [
        (
            "check-duplicate",
            lambda s: s["jobs"].append(dict(s["jobs"][0])),
            "job a: listed 2 times",
        ),
        (
            "check-missing",
            lambda s: s["jobs"].pop(1),
            "job b: missing (every job is listed; node null when postponed)",
        ),
        (
            "check-objective",
            lambda s: s.update(objective=1.2e25),
            "objective: the file says 1.2e+25, recomputed ",
        ),
        (
            "check-objective-text",
            lambda s: s.update(objective="cheap"),
            "objective: the file says 'cheap', not a number",
        ),
        (
            "check-objective-function",
            lambda s: s.update(objective_function="euros"),
            "objective_function: the file says 'euros', not one of dollars, p1a",
        ),
    ],
)
def test_check_reports_listing_and_objective_errors(tmp_path, case, change, error):
    """check: a job listed twice or missing, a wrong or non-numeric objective: INVALID, exit 1."""
    res = _check_files(tmp_path, change)
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("INVALID") and any(
        line.strip().startswith(error) for line in lines[1:]
    )


def test_gantt_of_another_trace(tmp_path):
    """An event log plotted with another simulation's trace: one line, exit 2, no image."""
    pytest.importorskip("matplotlib")
    other = tmp_path / "other.json"
    trace = json.loads(Path(TRACE).read_text())
    for j in trace["jobs"]:
        j["id"] = "x" + j["id"]
    other.write_text(json.dumps(trace))
    res = _run(["simulate", TRACE, "-m", "greedy", "-q", "--log", str(tmp_path / "ev.jsonl")])
    assert res.exit_code == 0, res.output
    first = json.loads((tmp_path / "ev.jsonl").read_text().splitlines()[0])
    res = _run(
        [
            "plot",
            "gantt",
            str(tmp_path / "ev.jsonl"),
            "--trace",
            str(other),
            "-o",
            str(tmp_path / "g.png"),
        ]
    )
    _one_line(
        res, 2, f"{tmp_path / 'ev.jsonl'}: line 1: job {first['jobs'][0]['id']!r} is not in {other}"
    )
    assert not (tmp_path / "g.png").exists()


def test_compile_notice_only_without_a_cache(tmp_path):
    """A command whose kernels are not in numba's cache says so on stderr, once; the next
    run (cache filled) says nothing."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    args = [
        sys.executable,
        "-m",
        "gpuaas",
        "solve",
        str(ROOT / "instances" / "example.json"),
        "-m",
        "edf",
    ]
    import os

    env = {**os.environ, **env}
    first = subprocess.run(args, capture_output=True, text=True, env=env)
    assert first.returncode == 0 and first.stderr == COMPILE_NOTICE + "\n"
    second = subprocess.run(args, capture_output=True, text=True, env=env)
    assert second.returncode == 0 and second.stderr == ""


def test_readme_first_command_says_where():
    """README: the install command runs in the repository root."""
    text = (ROOT / "README.md").read_text()
    assert "repository root" in text.split("```")[0]  # before the first command


def test_readme_import_example_runs_and_availability_help_names_every_format(tmp_path, monkeypatch):
    """README's ITP example (issue 39, case 18: it named cluster04.csv, which is not shipped)
    runs as written from the repository root; `--availability`'s help names the three trace
    formats `gpuaas.availability.readers` reads (.json, .csv and the .txt count logs)."""
    text = (ROOT / "README.md").read_text()
    found = re.search(r"`(gpuaas import elasticflow ([^`]+))`", text.replace("\n", " "))
    assert found, "README's elasticflow example"
    args = found.group(2).split()
    assert (ROOT / args[0]).is_file()
    monkeypatch.chdir(tmp_path)
    res = _run(["import", "elasticflow", str(ROOT / args[0]), *args[1:]])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / args[args.index("-o") + 1]).read_text())["jobs"]
    for command in ("simulate", "compare"):
        shown = " ".join(_run([command, "--help"]).output.split())
        assert all(f" {ext}" in shown for ext in (".json", ".csv", ".txt")), command


HARD_CASES = [c[0] for c in SOLVE_CASES] + [
    "output-fifo",
    "output-symlink",
    "output-not-a-file",
    "output-read-only",
    "output-full-disk",
    "stdout-full",
    "stdout-closed",
    "deep-nesting",
    "simulate-many-nodes",
    "milp-time-limit",
    "milp-no-solution",
    "milp-gap",
    "milp-invalid-answer",
    "tick-tiny",
    "params-H-tiny",
    "overhead-huge",
    "generate-many-jobs",
    "compare-many-seeds",
    "million-nodes",
    "restore-progress",
    "restore-time",
    "restore-options",
    "restore-order",
    "restore-version",
    "never-started",
    "event-batch",
    "event-id-reused",
    "event-id-forgotten",
    "interrupt-closed",
    "capacity-count",
    "capacity-exceeded",
    "submit-none",
    "complete-number",
    "unknown-option",
    "preset-objective",
    "progress-backwards",
    "check-duplicate",
    "check-missing",
    "check-objective",
    "check-objective-text",
    "check-objective-function",
    "gantt-other-trace",
    "seed-range",
    "compile-notice",
    "first-command",
]


def test_readme_lists_every_hard_case():
    """instances/README.md has a row for every case above, with the exact messages tested here."""
    text = README.read_text()
    for name in HARD_CASES:
        assert f"`{name}`" in text, name
    for _, _, message in SOLVE_CASES:
        assert message in text, message
    for message in (
        "not valid JSON: nested too deeply",
        "seeds: more than 100000 seeds (gpuaas.limits)",
        "highs found no solution within the time limit of 0.001 s and there is no warm start",
        "no job got closer to its end in 100 events in a row",
        COMPILE_NOTICE,
        "job: must be a job object (a mapping) or a list of them, got None",
        "job_id: must be a job id (a string) or a list of them, got 5",
        "objective: the file says 'cheap', not a number",
        "objective_function: the file says 'euros', not one of dollars, p1a",
        "bad.yaml: objective: must be one of dollars, p1a, got 'euros'",
        "job a: listed 2 times",
        "live.jobs[0].release: 5000.0 is after the clock 3600.0",
        "Rescheduler state version 6 was written by a newer gpuaas",
        "cannot complete job 'j1': it never started",
        "standard output: cannot write: No space left on device",
        "standard output: cannot write: Broken pipe",
        "cannot write: Permission denied",
        "is a directory; write to a regular file, a FIFO or a character device",
    ):
        assert message in text, message
