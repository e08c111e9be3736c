"""Mutated input files fed to every command and states fed to `Rescheduler.restore`.

Each example starts from a valid document (instance, trace, solution, event log, simulation
result, campaign spec, Rescheduler state) and applies a few random mutations: a field deleted, a value replaced by
one of a wrong type, an extreme number (1e308, NaN, Infinity, 2**64, 5e-324 ...), a string
with a newline, an element duplicated, or nesting 100 000 levels deep. The commands run
in-process through click's test runner (the group formats errors as the console script does). Whatever the input, the answer
must be: no traceback, an exit code in the documented set (0 ok, 1 invalid solution or failed
campaign cells, 2 bad input, 3 no result), an error as exactly one line on stderr, and no
output file (nor temporary file) after a failure. `restore` must return a Rescheduler that can
take an event, or raise a GpuaasError.

The default run keeps the example counts modest; ``-m slow`` runs many more.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuaas.cli import cli
from gpuaas.errors import GpuaasError
from gpuaas.rescheduler import Rescheduler

EXIT_CODES = {0, 1, 2, 3}
DEEP = "__DEEP__"  # replaced by 100 000 nested lists in the file text
DEPTH = 100_000

INSTANCE: dict[str, Any] = {
    "catalog": "azure-2021",
    "nodes": 2,
    "time": 1000.0,
    "params": {"H": 3600, "mu": 1, "rho": 100},
    "jobs": [
        {
            "id": "a",
            "release": 0.0,
            "due": 90000.0,
            "weight": 0.01,
            "progress": 0.2,
            "times": {"NC6": [36000.0], "NC12": [36000.0, 20000.0]},
        },
        {
            "id": "b",
            "due": 50000.0,
            "weight": 0.005,
            "workload": {"application": "resnet50", "epochs": 2},
        },
        {
            "id": "c",
            "due": 500.0,
            "weight": 0.02,
            "times": {"NC24": [9000.0, 5000.0, 4000.0, 3500.0]},
        },
    ],
}
TRACE: dict[str, Any] = {
    "catalog": {
        "vm_types": [
            {"name": "S", "gpu": "K80", "gpus": 1, "cost_per_hour": 0.9},
            {"name": "L", "gpu": "K80", "gpus": 2, "cost_per_hour": 1.8},
        ]
    },
    "nodes": 2,
    "params": {"H": 3600},
    "jobs": [
        {
            "id": f"j{i}",
            "release": 1800.0 * i,
            "due": 1800.0 * i + 7200,
            "weight": 0.01,
            "times": {"S": [5400.0], "L": [5400.0, 3600.0]},
        }
        for i in range(4)
    ],
}
SOLUTION: dict[str, Any] = {
    "method": "hand",
    "objective": None,
    "nodes": [{"node": 0, "vm": "NC12"}, {"node": 1, "vm": "NC24"}],
    "jobs": [
        {"id": "a", "node": 0, "vm": "NC12", "gpus": 2},
        {"id": "b", "node": None},
        {"id": "c", "node": 1, "vm": "NC24", "gpus": 4},
    ],
    "stats": {},
}
SPEC: dict[str, Any] = {
    "name": "fuzz",
    "nodes": [1],
    "arrivals": ["high"],
    "jobs_per_node": 2,
    "seeds": "1",
    "methods": ["greedy"],
}

EXTREMES = [
    None,
    True,
    False,
    "",
    "x",
    "a\nb",
    -1,
    0,
    1,
    2**31,
    2**63,
    2**64,
    10**12,
    1e308,
    -1e308,
    1e-308,
    5e-324,
    float("nan"),
    float("inf"),
    float("-inf"),
    1e15,
    -0.0,
    [],
    {},
    [1, 2],
    {"k": 1},
    DEEP,
]
values = st.one_of(
    st.sampled_from(EXTREMES),
    st.text(max_size=4),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)


def _paths(doc: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*at, i))
    return out


def _mutate(data: Any, doc: Any, n: int) -> Any:
    """Apply `n` random mutations to a copy of `doc`."""
    doc = copy.deepcopy(doc)
    for _ in range(n):
        path = data.draw(st.sampled_from(_paths(doc)))
        kind = data.draw(
            st.sampled_from(["delete", "replace", "replace", "duplicate", "stringify"])
        )
        if not path:
            if kind == "replace":
                doc = data.draw(values)
            continue
        parent = doc
        for p in path[:-1]:
            parent = parent[p]
        last = path[-1]
        if kind == "delete":
            del parent[last]
        elif kind == "replace":
            parent[last] = data.draw(values)
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(last, copy.deepcopy(parent[last]))
        elif kind == "stringify":
            parent[last] = str(parent[last])
    return doc


def _text(doc: Any) -> str:
    """JSON text (NaN and Infinity as Python writes them) with DEEP expanded."""
    text = json.dumps(doc, allow_nan=True)
    return text.replace(json.dumps(DEEP), "[" * DEPTH + "]" * DEPTH)


def _cli(args: list[str]) -> tuple[int, str, str]:
    """Run `gpuaas ARGS` in-process with click's runner: (exit code, stdout, stderr). The group's
    own standalone handling is the console script's, so the answers are the same."""
    res = CliRunner().invoke(cli, args)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        import traceback

        raise AssertionError("".join(traceback.format_exception(res.exception)))  # a traceback
    return res.exit_code, res.stdout, res.stderr


def _check(
    args: list[str], where: Path, inputs: set[str], outputs: list[str], ok_codes=(0,)
) -> int:
    """Run and assert the promised answer; returns the exit code. After a failure no file is
    new in `where` (`inputs` only names the documents written for the case)."""
    before = {p.name for p in where.iterdir()}
    code, out, err = _cli(args)
    assert "Traceback" not in out + err, (args, err)
    assert code in EXIT_CODES, (args, code, err)
    if code in (2, 3):
        assert err.count("\n") == 1 and err.startswith("gpuaas: error: "), (args, err)
    if code not in ok_codes:
        assert not any((where / o).exists() for o in outputs if o not in before), (args, code, err)
        left = {p.name for p in where.iterdir()} - before
        assert not left, (args, code, left)
    return code


def _files(where: Path, **docs: Any) -> set[str]:
    for name, doc in docs.items():
        text = yaml.safe_dump(doc) if name.endswith("yaml") else _text(doc)
        (where / name.replace("_", ".")).write_text(text)
    return {p.name for p in where.iterdir()}


FUZZ = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
FUZZ_SLOW = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
METHODS = ["greedy", "path-relinking", "edf", "dp-adjwct", "milp", "hierarchical"]


def _instance_case(data: Any) -> None:
    doc = _mutate(data, INSTANCE, data.draw(st.integers(1, 3)))
    method = data.draw(st.sampled_from(METHODS))
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        inputs = _files(where, inst_json=doc, sol_json=SOLUTION)
        _check(
            [
                "solve",
                str(where / "inst.json"),
                "-m",
                method,
                "--time-limit",
                "2",
                "-o",
                str(where / "out.json"),
            ],
            where,
            inputs,
            ["out.json"],
        )
        _check(
            ["check", str(where / "inst.json"), str(where / "sol.json")], where, inputs, [], (0, 1)
        )


def _solution_case(data: Any) -> None:
    doc = _mutate(data, SOLUTION, data.draw(st.integers(1, 3)))
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        inputs = _files(where, inst_json=INSTANCE, sol_json=doc)
        for extra in ([], ["--json"], ["--p1n"]):
            _check(
                ["check", str(where / "inst.json"), str(where / "sol.json"), *extra],
                where,
                inputs,
                [],
                (0, 1),
            )


def _trace_case(data: Any) -> None:
    doc = _mutate(data, TRACE, data.draw(st.integers(1, 3)))
    method = data.draw(st.sampled_from(["greedy", "edf", "dp-adjwct"]))
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        inputs = _files(where, trace_json=doc)
        _check(
            [
                "simulate",
                str(where / "trace.json"),
                "-m",
                method,
                "-q",
                "-o",
                str(where / "out.json"),
                "--log",
                str(where / "ev.jsonl"),
            ],
            where,
            inputs,
            ["out.json", "ev.jsonl"],
        )
        _check(
            [
                "compare",
                str(where / "trace.json"),
                "--methods",
                "greedy,edf",
                "--seeds",
                "1",
                "-q",
                "-o",
                str(where / "out.csv"),
            ],
            where,
            inputs,
            ["out.csv"],
        )


def _events_case(data: Any, events: list[dict[str, Any]]) -> None:
    lines = _mutate(data, events, data.draw(st.integers(1, 3)))
    trace = _mutate(data, TRACE, data.draw(st.integers(0, 1)))
    kind = data.draw(st.sampled_from(["gantt", "cost-over-time"]))
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        text = "\n".join(_text(x) for x in lines) if isinstance(lines, list) else _text(lines)
        (where / "ev.jsonl").write_text(text + "\n")
        inputs = _files(where, trace_json=trace)
        _check(
            [
                "plot",
                kind,
                str(where / "ev.jsonl"),
                "--trace",
                str(where / "trace.json"),
                "-o",
                str(where / "g.png"),
            ],
            where,
            inputs,
            ["g.png"],
        )


def _result_case(data: Any, result: dict[str, Any]) -> None:
    """A mutated simulation result (`simulate --json`) given to `plot cdf`."""
    doc = _mutate(data, result, data.draw(st.integers(1, 3)))
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        inputs = _files(where, r_json=doc)
        _check(
            ["plot", "cdf", str(where / "r.json"), "-o", str(where / "c.png")],
            where,
            inputs,
            ["c.png"],
        )


def _spec_case(data: Any) -> None:
    doc = _mutate(data, SPEC, data.draw(st.integers(1, 2)))
    if DEEP in json.dumps(doc, allow_nan=True):
        return  # YAML has no 100 000-deep literal; deep JSON is covered above
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        inputs = _files(where, spec_yaml=doc)
        code = _check(
            [
                "campaign",
                str(where / "spec.yaml"),
                "-o",
                str(where / "r.csv"),
                "--backend",
                "serial",
                "-q",
            ],
            where,
            inputs,
            ["r.csv"],
            (0, 1),
        )
        if code == 1:  # failed cells are recorded in the results file, by design
            assert (where / "r.csv").exists()


OPTION_VALUES = st.sampled_from(
    [
        "-1",
        "0",
        "1",
        "2",
        "1e-3",
        "nan",
        "inf",
        "-inf",
        "1e308",
        "2e9",
        str(2**32),
        str(2**64),
        "1000000",
        "10000000",
        "x",
        "",
    ]
)


def _options_case(data: Any) -> None:
    """Numeric options of generate and simulate, at and beyond their limits."""
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        inputs = _files(where, trace_json=TRACE)
        gen = [
            "generate",
            "--nodes",
            data.draw(OPTION_VALUES),
            "--jobs",
            data.draw(OPTION_VALUES),
            "--seed",
            data.draw(OPTION_VALUES),
            "-o",
            str(where / "out.json"),
        ]
        if data.draw(st.booleans()):
            gen += ["--snapshot", "--time", data.draw(OPTION_VALUES)]
        _check(gen, where, inputs, ["out.json"])
        sim = [
            "simulate",
            str(where / "trace.json"),
            "-m",
            "greedy",
            "-q",
            "-o",
            str(where / "sim.json"),
        ]
        for opt in data.draw(
            st.lists(
                st.sampled_from(
                    ["--tick", "--overhead", "--nodes", "--seed", "--noise", "--time-limit"]
                ),
                max_size=3,
            )
        ):
            sim += [opt, data.draw(OPTION_VALUES)]
        _check(sim, where, inputs, ["sim.json"])


def _state() -> dict[str, Any]:
    r = Rescheduler(
        "azure-2021",
        nodes=3,
        method="greedy",
        seed=1,
        overhead=60.0,
        proxy="f_obj",
        open_rule="largest",
    )  # options whose values the mutations can spoil
    r.submit(copy.deepcopy(INSTANCE["jobs"][0]), at=0.0)
    r.submit([copy.deepcopy(INSTANCE["jobs"][1]), copy.deepcopy(INSTANCE["jobs"][2])], at=600.0)
    r.tick(4200.0, progress={"a": 0.5})
    r.complete("c", at=5000.0)
    return json.loads(json.dumps(r.state()))


STATE = _state()


def _deep() -> list:
    out: list = []
    for _ in range(DEPTH):
        out = [out]
    return out


def _restore_case(data: Any) -> None:
    state = _mutate(data, STATE, data.draw(st.integers(1, 3)))
    text = json.dumps(state, allow_nan=True)
    if DEEP in text:
        state = json.loads(text.replace(json.dumps(DEEP), '"__X__"'))
        state = _replace(state, "__X__", _deep())
    try:
        r = Rescheduler.restore(state)
    except GpuaasError:
        return
    try:
        r.tick((r.time or 0.0) + 3600.0)
        json.dumps(r.state(), allow_nan=False)
    except GpuaasError:
        pass


def _replace(doc: Any, old: Any, new: Any) -> Any:
    if doc == old:
        return new
    if isinstance(doc, dict):
        return {k: _replace(v, old, new) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_replace(v, old, new) for v in doc]
    return doc


@pytest.fixture(scope="module")
def events(tmp_path_factory) -> list[dict[str, Any]]:
    where = tmp_path_factory.mktemp("events")
    (where / "trace.json").write_text(json.dumps(TRACE))
    code, _, err = _cli(
        [
            "simulate",
            str(where / "trace.json"),
            "-m",
            "greedy",
            "-q",
            "--log",
            str(where / "ev.jsonl"),
        ]
    )
    assert code == 0, err
    return [json.loads(line) for line in (where / "ev.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> dict[str, Any]:
    """A simulation result of the fuzz trace: what `gpuaas plot cdf` reads."""
    where = tmp_path_factory.mktemp("result")
    (where / "trace.json").write_text(json.dumps(TRACE))
    code, out, err = _cli(["simulate", str(where / "trace.json"), "-m", "greedy", "-q", "--json"])
    assert code == 0, err
    return json.loads(out)


def test_base_documents_are_valid(tmp_path):
    """The unmutated documents pass: the mutations are what the commands reject."""
    inputs = _files(tmp_path, inst_json=INSTANCE, sol_json=SOLUTION, trace_json=TRACE)
    assert _check(["solve", str(tmp_path / "inst.json"), "-m", "greedy"], tmp_path, inputs, []) == 0
    assert (
        _check(
            ["check", str(tmp_path / "inst.json"), str(tmp_path / "sol.json")], tmp_path, inputs, []
        )
        == 0
    )
    assert _check(["simulate", str(tmp_path / "trace.json"), "-q"], tmp_path, inputs, []) == 0
    assert Rescheduler.restore(STATE).state() == STATE


@FUZZ
@given(data=st.data())
def test_mutated_instance_files(data):
    _instance_case(data)


@FUZZ
@given(data=st.data())
def test_mutated_solution_files(data):
    _solution_case(data)


@FUZZ
@given(data=st.data())
def test_mutated_trace_files(data):
    _trace_case(data)


@FUZZ
@given(data=st.data())
def test_mutated_event_logs_and_traces(data, events):
    _events_case(data, events)


@FUZZ
@given(data=st.data())
def test_mutated_simulation_results(data, result):
    _result_case(data, result)


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_campaign_specs(data):
    _spec_case(data)


@FUZZ
@given(data=st.data())
def test_extreme_numeric_options(data):
    _options_case(data)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_states_restore_or_raise(data):
    _restore_case(data)


@pytest.mark.slow
@FUZZ_SLOW
@given(data=st.data())
def test_mutated_files_many(data, events, result):
    """The same, many more examples of every kind (-m slow)."""
    case = data.draw(
        st.sampled_from(
            ["instance", "solution", "trace", "events", "result", "options", "state", "spec"]
        )
    )
    {
        "instance": _instance_case,
        "solution": _solution_case,
        "trace": _trace_case,
        "events": lambda d: _events_case(d, events),
        "result": lambda d: _result_case(d, result),
        "options": _options_case,
        "state": _restore_case,
        "spec": _spec_case,
    }[case](data)
