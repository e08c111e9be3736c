"""Presets (heuristics/*.yaml) and `gpuaas solve --preset`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.generator import generate_snapshot, generate_trace
from gpuaas.heuristics.presets import load_preset, preset_options

ROOT = Path(__file__).resolve().parents[1]
PRESETS = {
    "greedy": "greedy.yaml",
    "randomized-greedy": "randomized_greedy.yaml",
    "path-relinking": "path_relinking.yaml",
}


@pytest.mark.parametrize("method", list(PRESETS))
def test_bundled_presets_match_their_method(method):
    """Each bundled preset names its method and only options that method accepts."""
    data = load_preset(ROOT / "heuristics" / PRESETS[method])
    assert data["method"] == method
    assert preset_options(data, method)


@pytest.fixture()
def instance_file(tmp_path):
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(generate_snapshot(4, 12, seed=3)))
    return path


def test_solve_with_preset(instance_file, tmp_path):
    """`--preset` selects the preset's method and passes its options."""
    preset = tmp_path / "p.yaml"
    preset.write_text("method: randomized-greedy\nmax_it_rg: 7\nelite_size: 2\n")
    res = CliRunner().invoke(cli, ["solve", str(instance_file), "--preset", str(preset), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["method"] == "randomized-greedy" and out["stats"]["iterations"] == 7


def test_bundled_preset_runs(instance_file):
    """The bundled path-relinking preset solves from the shell and reports the paper's
    objective, f_OBJ (P1a), as its file asks."""
    res = CliRunner().invoke(
        cli,
        [
            "solve",
            str(instance_file),
            "--preset",
            str(ROOT / "heuristics" / "path_relinking.yaml"),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["method"] == "path-relinking" and out["objective_function"] == "p1a"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("max_it_rg: 5\nmax_itrg: 3\n", "unknown option(s) max_itrg"),
        ("- 1\n- 2\n", "must be a mapping"),
        ("method: nope\n", "unknown method"),
        ("a: [1\n", "not valid YAML"),
        ("max_it_rg: -3\n", "bad.yaml: max_it_rg: must be"),
        ("time_limit: -3\n", "bad.yaml: time_limit: must be"),
        ("objective: euros\n", "bad.yaml: objective: must be one of dollars, p1a, got 'euros'"),
    ],
)
def test_bad_presets_are_one_line_errors(instance_file, tmp_path, text, message):
    """A bad preset exits 2 with one line naming the file and the problem (a bad value too,
    which the method finds when called) and writes no output file."""
    preset = tmp_path / "bad.yaml"
    preset.write_text(text)
    out = tmp_path / "sol.json"
    res = CliRunner().invoke(
        cli,
        [
            "solve",
            str(instance_file),
            "--method",
            "path-relinking",
            "--preset",
            str(preset),
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 2
    assert message in res.output and len(res.output.strip().splitlines()) == 1
    assert not out.exists()


def test_preset_for_another_method(instance_file, tmp_path):
    """A preset written for one method cannot silently configure another."""
    with pytest.raises(InputError, match="preset is for 'greedy'"):
        preset_options({"method": "greedy"}, "path-relinking")
    res = CliRunner().invoke(
        cli,
        [
            "solve",
            str(instance_file),
            "-m",
            "randomized-greedy",
            "--preset",
            str(ROOT / "heuristics" / "greedy.yaml"),
        ],
    )
    assert res.exit_code == 2 and "preset is for" in res.output


def test_simulate_with_preset(tmp_path):
    """`gpuaas simulate --preset` passes the options to the method at every event: a heavier
    `move_weight` moves jobs less often (3.9 and 0.2 moves per job on this 3 x 10 trace); a bad
    value exits 2 and writes nothing."""
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(generate_trace(3, 10, seed=1, arrivals="exponential")))
    moves = []
    for weight in (1, 16):
        preset = tmp_path / f"w{weight}.yaml"
        preset.write_text(f"method: incremental\nmove_weight: {weight}\n")
        res = CliRunner().invoke(
            cli, ["simulate", str(trace), "--preset", str(preset), "-q", "--json"]
        )
        assert res.exit_code == 0, res.output
        moves.append(json.loads(res.output)["moves_per_job"])
    assert moves[1] < moves[0]
    bad = tmp_path / "bad.yaml"
    bad.write_text("move_weight: 0.5\n")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(
        cli, ["simulate", str(trace), "--preset", str(bad), "-q", "-o", str(out)]
    )
    assert res.exit_code == 2 and f"{bad}: move_weight: must be" in res.output and not out.exists()
