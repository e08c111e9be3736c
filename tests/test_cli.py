"""The command line: version, help, `check`, and the read-only numba cache fallback."""

import json
import os
import subprocess
import sys

from click.testing import CliRunner

import gpuaas
from gpuaas.cli import cli

INSTANCE = {
    "catalog": {
        "vm_types": [
            {"name": "S", "gpu": "K80", "gpus": 1, "cost_per_hour": 3.6},
            {"name": "L", "gpu": "K80", "gpus": 2, "cost_per_hour": 7.2},
        ]
    },
    "nodes": 2,
    "jobs": [
        {"id": "a", "due": 1000.0, "weight": 0.01, "times": {"S": [800.0], "L": [800.0, 500.0]}},
        {"id": "b", "due": 100.0, "weight": 0.02, "times": {"L": [300.0, 200.0]}},
    ],
}
GOOD = {
    "nodes": [{"node": 0, "vm": "L"}],
    "jobs": [
        {"id": "a", "node": 0, "vm": "L", "gpus": 1},
        {"id": "b", "node": 0, "vm": "L", "gpus": 1},
    ],
}
BAD = {
    "nodes": [{"node": 0, "vm": "S"}],
    "jobs": [{"id": "a", "node": 0, "vm": "L", "gpus": 2}, {"id": "b", "node": None}],
}


def files(tmp_path, solution):
    inst, sol = tmp_path / "i.json", tmp_path / "s.json"
    inst.write_text(json.dumps(INSTANCE))
    sol.write_text(json.dumps(solution))
    return str(inst), str(sol)


def test_version():
    """`gpuaas --version` prints the package version."""
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0 and gpuaas.__version__ in res.output


def test_check_accepts_a_feasible_solution(tmp_path):
    """`check` exits 0 and prints the recomputed objective."""
    res = CliRunner().invoke(cli, ["check", *files(tmp_path, GOOD), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["valid"] and abs(out["objective"] - 4.6) < 1e-9


def test_check_rejects_an_infeasible_solution(tmp_path):
    """`check` exits 1 and lists the violated rules."""
    res = CliRunner().invoke(cli, ["check", *files(tmp_path, BAD)])
    assert res.exit_code == 1
    assert "INVALID" in res.output and "needs L but node 0 is S" in res.output


def test_check_bad_solution_file_is_one_line_exit_2(tmp_path):
    """A solution naming an unknown job is a one-line error with exit code 2."""
    inst, sol = files(tmp_path, {"jobs": [{"id": "nope", "node": None}]})
    res = CliRunner().invoke(cli, ["check", inst, sol])
    assert res.exit_code == 2
    assert res.output.strip() == f"gpuaas: error: {sol}: jobs[0].id: unknown job id 'nope'"


def test_console_script_no_traceback(tmp_path):
    """The installed entry point reports a missing file in one line, exit 2, no traceback."""
    res = subprocess.run(
        [sys.executable, "-m", "gpuaas", "solve", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1
    assert "missing.json: no such file" in res.stderr


def test_numba_cache_falls_back_when_package_dir_is_read_only(monkeypatch, tmp_path):
    """With an unwritable package directory, NUMBA_CACHE_DIR points at a per-user directory."""
    from numba.core import config as numba_config

    before = os.environ.get("NUMBA_CACHE_DIR")
    # set first, so that the undo below removes what _numba_cache_dir writes to os.environ:
    # left there, every later subprocess of this test process compiled its kernels again
    monkeypatch.setenv("NUMBA_CACHE_DIR", "")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    pkg = os.path.dirname(gpuaas.__file__)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if p == pkg else real(p, m))
    gpuaas._numba_cache_dir()
    assert os.environ["NUMBA_CACHE_DIR"].startswith(str(tmp_path))
    monkeypatch.undo()
    numba_config.reload_config()  # this process's numba back on the suite's cache
    assert os.environ.get("NUMBA_CACHE_DIR") == before


def test_bundled_example_solution_passes_the_validator(tmp_path):
    """`gpuaas solve instances/example.json --json` is valid and its objective is the validator's."""
    from pathlib import Path

    example = str(Path(__file__).parent.parent / "instances" / "example.json")
    for method in ("path-relinking", "greedy"):
        res = CliRunner().invoke(cli, ["solve", example, "--method", method, "--json"])
        assert res.exit_code == 0, res.output
        sol = tmp_path / f"{method}.json"
        sol.write_text(res.output)
        chk = CliRunner().invoke(cli, ["check", example, str(sol), "--json"])
        report = json.loads(chk.output)
        assert chk.exit_code == 0 and report["valid"], report["errors"]
        assert (
            abs(report["objective"] - json.loads(res.output)["objective"])
            <= 1e-9 * report["objective"]
        )
