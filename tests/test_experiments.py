"""The experiment pipeline as a whole: one method registry, one row schema, specs over given
traces, `exclude` and `tick`, and a comparison that is a campaign over one trace."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.experiments import rows as rows_mod
from gpuaas.experiments.campaign import run_campaign
from gpuaas.experiments.compare import compare
from gpuaas.experiments.rows import COLUMNS, TIMING_COLUMNS, comparable
from gpuaas.experiments.spec import expand, load_spec, parse_spec
from gpuaas.experiments.store import read_results
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.methods import METHODS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def trace() -> Instance:
    """N = 3, J = 8, high arrivals, jobs 20x shorter than the paper's."""
    t = Instance.from_dict(generate_trace(3, 8, seed=5, arrivals="high"))
    return dataclasses.replace(t, work=t.work / 20, due=t.release + (t.due - t.release) / 20)


def _method_lists(path: Path) -> list[str]:
    """Literal lists, tuples or sets of 3+ registered method names, and comma-joined strings of
    them, in a Python file (what a second list of methods looks like)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            names = [
                e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in METHODS
            ]
            if len(names) >= 3:
                found.append(f"{path.name}:{node.lineno} {names}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if sum(p.strip() in METHODS for p in node.value.split(",")) >= 3:
                found.append(f"{path.name}:{node.lineno} {node.value!r}")
    return found


def test_the_registry_is_the_only_list_of_methods() -> None:
    """No module of the package (nor the paper's report script) keeps its own list of methods:
    order, labels, ticks, seed independence and compare's defaults come from gpuaas.methods."""
    files = [p for p in (ROOT / "gpuaas").rglob("*.py") if p.name != "methods.py"]
    files.append(ROOT / "scripts" / "reproduce_paper.py")
    assert [hit for p in files for hit in _method_lists(p)] == []
    for m in METHODS.values():
        assert m.label and m.order == list(METHODS).index(m.name)
        assert (m.tick is not None) == m.name.startswith("dp-")


def test_the_row_schema_is_documented_once_column_by_column() -> None:
    """rows.py's docstring names every column but those of the run settings (each described by
    its `Setting`, in the campaign README's table); the docs page points to it instead of
    repeating it."""
    doc = rows_mod.__doc__
    for c in COLUMNS:
        if c in rows_mod.SETTING_COLUMNS:
            continue
        stem = (
            c.split("_seconds_")[0]
            if c.startswith("solver_seconds_") and c != "solver_seconds_mean"
            else c
        )
        assert stem in doc, c
    page = (ROOT / "docs" / "experiments.md").read_text()
    assert "gpuaas/experiments/rows.py" in page and "mean_waiting" not in page


def test_a_spec_over_given_traces_equals_compare(trace, tmp_path) -> None:
    """A YAML spec naming a trace file (relative to the spec) gives compare's rows."""
    (tmp_path / "t.json").write_text(json.dumps(trace.to_dict()))
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(
        yaml.safe_dump(
            {
                "traces": ["t.json"],
                "methods": ["greedy", "edf"],
                "solver_seeds": [1, 2],
                "node_multipliers": {"edf": [2]},
                "overhead": 0,
                "startup": 0,
            }
        )
    )
    spec = load_spec(spec_file)
    assert [c.key for c in expand(spec)] == ["t-greedy-s1-x1", "t-greedy-s2-x1", "t-edf-s1-x2"]
    report = run_campaign(spec, tmp_path / "r.csv", backend="serial", progress=False)
    direct = compare(
        trace,
        ["greedy", "edf"],
        [1, 2],
        multipliers={"edf": 2},
        overhead=0.0,
        startup=0.0,
        name="t.json",
    )
    assert comparable(report.rows) == comparable(direct)
    assert [
        (r["trace"], r["arrivals"], r["trace_seed"], r["nodes"], r["jobs"]) for r in report.rows
    ] == [("t.json", None, None, 3, 8)] * 3
    assert all(r["bound"] and r["cost_over_bound"] >= 1 for r in report.rows)


def test_exclude_and_tick(trace) -> None:
    """`exclude` drops the cells matching a pattern; `tick` is every simulation's interval."""
    base = {
        "nodes": [2, 3],
        "arrivals": ["low"],
        "seeds": [1],
        "jobs_per_node": 2,
        "methods": ["greedy", "edf"],
    }
    cells = expand(parse_spec(dict(base, exclude=[{"method": "edf", "nodes": 3}])))
    assert [(c.method, c.nodes) for c in cells] == [("greedy", 2), ("edf", 2), ("greedy", 3)]
    (cell,) = expand(parse_spec(dict(base, nodes=[2], methods=["greedy"], tick=1800)))
    assert cell.tick == 1800.0 and cell.key.endswith("-tick1800")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"traces": ["t.json"]},
            "spec.yaml: nodes: a spec simulates either generated traces or given traces, not both",
        ),
        (
            {"exclude": [{"colour": "red"}]},
            "spec.yaml: exclude[0].colour: not a cell parameter; expected one of "
            "trace, catalog, arrivals, nodes, trace_seed, method, seed, node_multiplier, "
            "noise, noise_model, oracle, learn_speed, colocation, max_moves, moves_per_hour, overhead, "
            "startup, decision_interval, locations, deadline_safe, spot",
        ),
        (
            {"exclude": {"method": "edf"}},
            "spec.yaml: exclude: expected a list of mappings parameter -> value, got "
            "{'method': 'edf'}",
        ),
        ({"tick": 0}, "spec.yaml: tick: must be > 0, got 0"),
    ],
)
def test_new_spec_fields_errors(change, message) -> None:
    """instances/README.md's spec-* rows: file, field and problem in one message."""
    base = {"nodes": [2], "arrivals": ["low"], "seeds": [1], "methods": ["greedy"]}
    with pytest.raises(InputError) as err:
        parse_spec(dict(base, **change), "spec.yaml")
    assert str(err.value) == message


def test_traces_with_the_same_name_and_missing_trace(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"traces": ["t.json", "a/t.json"], "methods": ["greedy"]}))
    res = CliRunner().invoke(cli, ["campaign", str(spec), "-o", str(tmp_path / "r.csv")])
    assert res.exit_code == 2 and not (tmp_path / "r.csv").exists()
    assert res.output.strip() == (
        f"gpuaas: error: {spec}: traces: two trace files have the same name (it keys the cells)"
    )
    spec.write_text(yaml.safe_dump({"traces": ["nothere.json"], "methods": ["greedy"]}))
    res = CliRunner().invoke(cli, ["campaign", str(spec), "-o", str(tmp_path / "r.csv")])
    assert (
        res.exit_code == 2
        and "nothere.json" in res.output
        and len(res.output.strip().splitlines()) == 1
    )


def test_a_results_file_of_another_format_is_one_clear_line(tmp_path) -> None:
    """`results-old-format`: an old comparison CSV given to `gpuaas plot` names the file and says
    how to convert it; no image is written."""
    old = tmp_path / "old.csv"
    old.write_text(
        "method,seed,total_cost,vm_cost,tardiness_cost,multiplier,nodes\nedf,1,10.0,5.0,5.0,1,3\n"
    )
    res = CliRunner().invoke(cli, ["plot", "costs", str(old), "-o", str(tmp_path / "c.png")])
    assert res.exit_code == 2 and not (tmp_path / "c.png").exists()
    assert res.output.strip() == (
        f"gpuaas: error: {old}: not a results file of this gpuaas version (columns "
        "differ, missing cell, arrivals, jobs, trace_seed, node_multiplier, sim_nodes, "
        "noise, overhead, options, catalog, status, events, migrations, preemptions, "
        "jobs_completed, late_jobs, mean_jct, max_jct, mean_waiting, max_waiting, "
        "makespan, solver_calls, tick, predicted_total_cost, predicted_vm_cost, "
        "predicted_tardiness_cost, cost_deviation, error, extra, solver_seconds_mean, "
        "solver_seconds_p95, solver_seconds_max, solver_seconds_total, wall_seconds, "
        "cpu_seconds, solver_cpu_seconds, cell_seconds, worker, timing_extra); files of "
        "the retired compare / reproduce_paper formats: scripts/convert_results.py"
    )


def test_committed_results_files_all_read() -> None:
    """Every results file in scripts/results and its archive reads with the current schema
    (campaign files of older versions directly, the converted comparison and reproduction files
    too)."""
    results = ROOT / "scripts" / "results"
    for path in sorted([*results.glob("*.csv"), *results.glob("archive/**/*.csv")]):
        if path.name in (
            "quality-before-high.csv",  # not a results file: the bar's inputs
            "prediction-job-part.csv",  # not a results file: scripts/prediction_job_part.py's
            "upper.csv",  # not a results file: scripts/upper_report.py's
        ):
            continue
        rows = read_results(path)
        assert rows and all(list(r) == COLUMNS and r["status"] in ("ok", "failed") for r in rows), (
            path
        )
    assert len(read_results(ROOT / "scripts" / "results" / "reproduction.csv")) == len(
        expand(load_spec(ROOT / "scripts" / "campaigns" / "reproduction.yaml"))
    )  # the spec resumes it


def test_timing_columns_are_the_only_ones_that_differ_between_runs(trace) -> None:
    """Two runs of the same comparison: equal rows once the timing columns are dropped."""
    a = compare(trace, ["greedy"], [3])
    b = compare(trace, ["greedy"], [3])
    assert comparable(a) == comparable(b)
    assert set(TIMING_COLUMNS) <= set(COLUMNS)


def test_instances_readme_lists_the_new_cases_with_their_messages() -> None:
    """The `spec-*` and `results-old-format` rows of instances/README.md hold the messages tested above."""
    text = (ROOT / "instances" / "README.md").read_text()
    for name, message in (
        (
            "spec-both-traces",
            "nodes: a spec simulates either generated traces or given traces, not both",
        ),
        ("spec-traces-same-name", "traces: two trace files have the same name (it keys the cells)"),
        (
            "spec-exclude",
            "exclude[0].colour: not a cell parameter; expected one of trace, catalog, arrivals, "
            "nodes, trace_seed, method, seed, node_multiplier, noise, noise_model, oracle, "
            "learn_speed, colocation, max_moves, moves_per_hour, overhead, startup, decision_interval, locations, "
            "deadline_safe, spot",
        ),
        (
            "results-old-format",
            "files of the retired compare / reproduce_paper formats: scripts/convert_results.py",
        ),
    ):
        assert f"`{name}`" in text and message in text, name
