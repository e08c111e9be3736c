"""Campaigns: spec parsing and grid expansion, the results file, resume, failures, and backends."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.errors import InputError, SolverError
from gpuaas.experiments import campaign, runners, store
from gpuaas.experiments import cell as cell_mod
from gpuaas.experiments import spec as specs
from gpuaas.experiments.campaign import run_campaign
from gpuaas.experiments.cell import Cell, make_trace
from gpuaas.experiments.rows import ADDED_COLUMNS, COLUMNS, TIMING_COLUMNS, comparable
from gpuaas.experiments.spec import expand, parse_spec
from gpuaas.experiments.store import ResultStore, read_results
from gpuaas.generator import ARRIVALS

#: a small grid: 2 arrival patterns x 2 trace seeds x (greedy + edf at 1x and 2x nodes) = 12 cells
SPEC: dict[str, Any] = {
    "name": "tiny",
    "nodes": [2],
    "arrivals": ["exponential", "high"],
    "jobs_per_node": 3,
    "seeds": "1-2",
    "methods": ["greedy", "edf"],
    "node_multipliers": {"edf": [1, 2]},
}


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    """Write a spec mapping as YAML."""
    path.write_text(yaml.safe_dump(spec))
    return path


# ---------------------------------------------------------------------------------------------
# spec and grid


def test_grid_expands_every_combination_once() -> None:
    """Arrivals x N x trace seeds x methods x multipliers x solver seeds, each cell once."""
    spec = parse_spec(dict(SPEC, nodes=[2, 3], solver_seeds=[5, 6]))
    cells = expand(spec)
    # greedy: 2 arrivals x 2 N x 2 traces x 2 solver seeds = 16; edf is seed-independent
    # (simulated with the first solver seed only): 2 x 2 x 2 x 1 seed x 2 multipliers = 16
    assert len(cells) == 32
    assert len({c.key for c in cells}) == 32
    assert {(c.method, c.seed) for c in cells} == {("greedy", 5), ("greedy", 6), ("edf", 5)}
    assert {c.node_multiplier for c in cells if c.method == "edf"} == {1, 2}
    assert {c.node_multiplier for c in cells if c.method == "greedy"} == {1}
    assert {c.jobs for c in cells if c.nodes == 3} == {9}  # J = jobs_per_node x N


def test_catalogs_are_a_grid_axis() -> None:
    """A list of catalogs multiplies the traces; each generated trace uses its cell's catalog
    and the catalog keys the cell (the bundled default keeps its old keys); `exclude` matches it."""
    spec = parse_spec(
        dict(
            SPEC,
            catalog=["azure-2021", "aws-us-east-1"],
            exclude=[{"catalog": "aws-us-east-1", "method": "edf"}],
        )
    )
    cells = expand(spec)
    assert len(cells) == 12 + 4  # aws: greedy only
    assert len({c.key for c in cells}) == len(cells)
    aws = [c for c in cells if c.catalog == "aws-us-east-1"]
    assert {c.method for c in aws} == {"greedy"} and all(
        c.key.endswith("-aws-us-east-1") for c in aws
    )
    assert {c.key for c in cells if c.catalog == "azure-2021"} == {
        c.key for c in expand(parse_spec(SPEC))
    }
    assert make_trace(aws[0]).catalog.name == "aws-us-east-1"


def test_without_solver_seeds_each_trace_uses_its_own_seed() -> None:
    """With `seeds` only, the solver seed is the trace seed (one simulation per trace and method)."""
    cells = expand(parse_spec(SPEC))
    assert all(c.seed == c.trace_seed for c in cells)
    assert len(cells) == 2 * 2 * 3


def test_seed_ranges_and_options_are_canonical() -> None:
    """'1-3,7' is 1, 2, 3, 7; solver options become canonical JSON and change the cell's key."""
    spec = parse_spec(
        dict(SPEC, seeds="1-3,7", options={"greedy": {"proxy": "f_bar", "open_rule": "config"}})
    )
    assert spec.seeds == (1, 2, 3, 7)
    cell = next(c for c in expand(spec) if c.method == "greedy")
    assert cell.params()["options"] == '{"open_rule": "config", "proxy": "f_bar"}'
    assert cell.key != replace(cell, run=replace(cell.run, options={})).key


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"colour": 1}, "colour", "unknown field"),
        ({"methods": ["greedy", "simplex"]}, "methods", "unknown method 'simplex'"),
        ({"arrivals": ["bursty"]}, "arrivals", "unknown arrival pattern"),
        ({"seeds": "5-2"}, "seeds", "empty range"),
        ({"seeds": [1, 1]}, "seeds", "listed twice"),
        ({"nodes": [0]}, "nodes", "below the minimum 1"),
        ({"jobs_per_node": -1}, "jobs_per_node", "must be > 0, got -1"),
        (
            {"node_multipliers": {"fifo": [2]}},
            "node_multipliers.fifo",
            "not one of the spec's methods",
        ),
        ({"options": {"greedy": 3}}, "options.greedy", "mapping of solver options"),
        ({"noise": [-0.1]}, "noise", "must be >= 0, got -0.1"),
        ({"noise": [0.5]}, "noise", "must be < 0.5 for the uniform model, got 0.5"),
        ({"noise_model": ["gamma"]}, "noise_model", "unknown model 'gamma'"),
        ({"oracle": [True, True]}, "oracle", "a repeat"),
        ({"learn_speed": "yes"}, "learn_speed", "must be true or false, got 'yes'"),
        ({"max_moves": [-1]}, "max_moves", "must be an integer in 0..1000000000, got -1"),
        ({"moves_per_hour": [1, 1]}, "moves_per_hour", "lists a value twice"),
        ({"seeds": "1-100000000"}, "seeds", "more than 100000 values"),
        ({"seeds": [2**32]}, "seeds", "above the maximum 4294967295"),
        (
            {"options": {"greedy": {"colour": 1}}},
            "options.greedy",
            "unknown option(s) colour for greedy",
        ),
        ({"catalog": "azure-1999"}, None, "azure-1999"),
        ({"catalog": ["azure-2021", "azure-2021"]}, "catalog", "listed twice"),
        ({"catalog": [3]}, "catalog", "list of names"),
    ],
)
def test_bad_spec_names_file_field_and_problem(
    change: dict, field: str | None, problem: str
) -> None:
    """Every malformed spec field gives an InputError naming the file, the field and the problem."""
    with pytest.raises(InputError) as err:
        parse_spec(dict(SPEC, **change), "spec.yaml")
    assert "spec.yaml" in str(err.value) and problem in str(err.value)
    if field is not None:
        assert err.value.field == field


def test_missing_field_and_bad_yaml_via_cli(tmp_path: Path) -> None:
    """`gpuaas campaign` on a bad spec exits 2 with one line and writes no results file."""
    spec = {k: v for k, v in SPEC.items() if k != "methods"}
    path = write_spec(tmp_path / "s.yaml", spec)
    out = tmp_path / "r.csv"
    res = CliRunner().invoke(cli, ["campaign", str(path), "-o", str(out)])
    assert res.exit_code == 2 and "methods: missing required field" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not out.exists()
    (tmp_path / "bad.yaml").write_text("nodes: [1\n")
    res = CliRunner().invoke(cli, ["campaign", str(tmp_path / "bad.yaml"), "-o", str(out)])
    assert res.exit_code == 2 and "not valid YAML" in res.output


# ---------------------------------------------------------------------------------------------
# the results file


def _row(i: int) -> dict[str, Any]:
    r = dict.fromkeys(COLUMNS)
    r.update(Cell.of("low", 3, 30, i, "greedy", i).params())
    r.update(status="ok", total_cost=1 / 3 + i, events=7, extra='{"a, b": "x\\"y"}', worker="h:1")
    return r


def test_store_round_trips_rows_exactly(tmp_path: Path) -> None:
    """Rows appended to the CSV read back with the same types and bit-identical floats."""
    store = ResultStore(tmp_path / "r.csv")
    rows = [_row(i) for i in range(3)]
    for r in rows:
        store.append(r)
    store.close()
    assert read_results(tmp_path / "r.csv") == rows


def test_store_drops_a_line_cut_by_a_crash(tmp_path: Path) -> None:
    """A last line without its newline (a killed writer) is dropped, and the file cut back."""
    path = tmp_path / "r.csv"
    store = ResultStore(path)
    store.append(_row(0))
    store.append(_row(1))
    store.close()
    text = path.read_text()
    path.write_text(text[: text.rfind("\n", 0, len(text) - 1) + 20])
    assert [r["cell"] for r in ResultStore(path).load()] == [_row(0)["cell"]]
    assert path.read_text().endswith("\n")


def test_rows_appended_to_an_older_header_only_file_read_back(tmp_path: Path) -> None:
    """A results file of an older version with its rows deleted (only its header left, to rerun
    them all) takes today's header on resume, so the rows appended read back."""
    path = tmp_path / "r.csv"
    older = [c for c in COLUMNS if c not in ADDED_COLUMNS]
    path.write_text(",".join(older) + "\n")
    store = ResultStore(path)
    assert store.load() == []
    store.append(_row(0))
    store.close()
    assert read_results(path) == [_row(0)]


def test_foreign_csv_is_refused(tmp_path: Path) -> None:
    """Resuming into a CSV with other columns is a clear error, not a silent mix."""
    path = tmp_path / "r.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="not a results file"):
        ResultStore(path).load()


# ---------------------------------------------------------------------------------------------
# running


def test_rows_are_the_simulator_results(tmp_path: Path) -> None:
    """Each row holds the cell's parameters and the metrics of simulating its generated trace."""
    from gpuaas.simulator import simulate

    report = run_campaign(parse_spec(SPEC), tmp_path / "r.csv", backend="serial", progress=False)
    assert (report.cells, report.ran, report.failed, report.skipped) == (12, 12, 0, 0)
    rows = read_results(tmp_path / "r.csv")
    assert [r["cell"] for r in rows] == [c.key for c in expand(parse_spec(SPEC))]  # grid order
    r = next(
        r
        for r in rows
        if r["method"] == "edf"
        and r["node_multiplier"] == 2
        and r["arrivals"] == "high"
        and r["trace_seed"] == 2
    )
    cell = Cell.of("high", 2, 6, 2, "edf", 2, 2)
    assert r["cell"] == cell.key and r["sim_nodes"] == 4
    direct = simulate(cell_mod.make_trace(cell), "edf", seed=2, nodes=4).to_dict()
    for k in ("total_cost", "vm_cost", "tardiness_cost", "events", "migrations", "preemptions"):
        assert r[k] == direct[k], k
    assert r["jobs_completed"] == 6
    assert r["total_cost"] == pytest.approx(r["vm_cost"] + r["tardiness_cost"], rel=1e-12)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"greedy": {"proxy": "no_such_proxy"}}, "options.greedy.proxy"),
        ({"greedy": {"colour": 1}}, "options.greedy"),
    ],
)
def test_bad_option_is_refused_with_the_spec(tmp_path: Path, options: dict, field: str) -> None:
    """An option name or value the method refuses is an error naming the spec file and the
    option, before any cell runs: exit 2, no results file."""
    path = write_spec(tmp_path / "s.yaml", dict(SPEC, options=options))
    with pytest.raises(InputError) as err:
        specs.load_spec(path)
    assert err.value.source == str(path) and err.value.field == field
    out = tmp_path / "r.csv"
    res = CliRunner().invoke(
        cli, ["campaign", "--backend", "serial", "-q", "-o", str(out), str(path)]
    )
    assert res.exit_code == 2 and f"{path}: {field}" in res.output and not out.exists()


def test_failing_cell_is_recorded_and_others_finish(tmp_path: Path, monkeypatch) -> None:
    """A cell whose solver fails (here: Greedy finds no solution) is a 'failed' row with the
    error; the rest run."""
    import gpuaas.heuristics.greedy

    def no_solution(*args: Any, **kwargs: Any) -> None:
        raise SolverError("no solution within the time limit")

    monkeypatch.setattr(gpuaas.heuristics.greedy, "greedy", no_solution)
    spec = parse_spec(SPEC)
    out = tmp_path / "r.csv"
    res = CliRunner().invoke(
        cli,
        [
            "campaign",
            "--backend",
            "serial",
            "-q",
            "-o",
            str(out),
            str(write_spec(tmp_path / "s.yaml", SPEC)),
        ],
    )
    assert res.exit_code == 1, res.output
    failed = sum(c.method == "greedy" for c in expand(spec))
    assert failed and f"{failed} failed cell(s)" in res.output
    rows = read_results(out)
    assert len(rows) == len(expand(spec)) == 12
    for r in rows:
        if r["method"] == "greedy":
            assert (
                r["status"] == "failed" and "no solution" in r["error"] and r["total_cost"] is None
            )
        else:
            assert r["status"] == "ok" and r["error"] is None and r["total_cost"] > 0


def test_interrupted_campaign_resumes_with_the_missing_cells_only(
    tmp_path: Path, monkeypatch
) -> None:
    """Ctrl-C after 5 cells keeps their rows; the re-run runs the other 7 and equals a clean run."""
    spec = parse_spec(SPEC)
    grid = {c.key for c in expand(spec)}
    real = runners.run_cell
    calls: list[str] = []

    def interrupted(cell: Cell) -> dict[str, Any]:
        if cell.key not in grid:  # the warm-up's tiny simulation
            return real(cell)
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(cell.key)
        return real(cell)

    out = tmp_path / "r.csv"
    monkeypatch.setattr(runners, "run_cell", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_campaign(spec, out, backend="serial", progress=False)
    assert [r["cell"] for r in read_results(out)] == calls
    first = list(calls)

    def counted(cell: Cell) -> dict[str, Any]:
        if cell.key in grid:
            calls.append(cell.key)
        return real(cell)

    calls.clear()
    monkeypatch.setattr(runners, "run_cell", counted)
    report = run_campaign(spec, out, backend="serial", progress=False)
    assert (report.skipped, report.ran) == (5, 7)
    assert set(calls).isdisjoint(first) and len(calls) == 7
    monkeypatch.setattr(runners, "run_cell", real)
    clean = run_campaign(spec, tmp_path / "clean.csv", backend="serial", progress=False)
    assert comparable(read_results(out)) == comparable(clean.rows)
    # a third run has nothing left to do
    assert run_campaign(spec, out, backend="serial", progress=False).ran == 0


def test_retry_failed_reruns_only_failed_cells(tmp_path: Path) -> None:
    """--retry-failed replaces the failed rows and leaves the others untouched."""
    out = tmp_path / "r.csv"
    run_campaign(parse_spec(SPEC), out, backend="serial", progress=False)
    rows = read_results(out)
    broken = [
        dict(r, status="failed", error="RuntimeError: lost", total_cost=None) if i % 4 == 0 else r
        for i, r in enumerate(rows)
    ]
    store.write_csv(out, broken)
    report = run_campaign(
        parse_spec(SPEC), out, backend="serial", progress=False, retry_failed=True
    )
    assert (report.ran, report.skipped) == (3, 9)
    assert comparable(report.rows) == comparable(rows)


def test_progress_line_counts_and_eta(tmp_path: Path) -> None:
    """The progress line says done, failed, remaining and an ETA."""
    import io

    buf = io.StringIO()
    bar = campaign.Progress(3, buf, interval=0)
    bar.update({"status": "ok"})
    bar.update({"status": "failed"})
    line = buf.getvalue().strip().splitlines()[-1]
    assert "1 done, 1 failed, 1 remaining of 3" in line and "ETA" in line and "ETA --" not in line


def test_without_dask_cli_runs_local_processes_and_says_how(tmp_path: Path, monkeypatch) -> None:
    """With dask missing, `campaign` runs in local processes and prints the pip command for Dask."""
    monkeypatch.setattr(runners, "dask_available", lambda: False)
    spec = write_spec(
        tmp_path / "s.yaml",
        dict(SPEC, arrivals=["low"], seeds=[3], methods=["greedy"], node_multipliers=[1]),
    )
    out = tmp_path / "r.csv"
    res = CliRunner().invoke(cli, ["campaign", str(spec), "-o", str(out), "--workers", "2", "-q"])
    assert res.exit_code == 0, res.output
    assert (
        "pip install 'gpuaas[dask]'" in res.output and "on processes with 2 worker(s)" in res.output
    )
    assert [r["status"] for r in read_results(out)] == ["ok"]
    with pytest.raises(InputError, match=r"dask is not installed; .*gpuaas\[dask\]"):
        runners.make_runner(["greedy"], "dask", scheduler="tcp://127.0.0.1:1")


# ---------------------------------------------------------------------------------------------
# backends: the same rows on every one


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, procs: list[subprocess.Popen], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"{p.args} exited with {p.returncode}")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.5),
        ):
            return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@pytest.fixture
def dask_cluster(tmp_path: Path):
    """A real `dask scheduler` and two single-threaded `dask worker` processes on 127.0.0.1."""
    pytest.importorskip("distributed")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    dask = [sys.executable, "-m", "dask"]  # the `dask` command of this interpreter
    procs: list[subprocess.Popen] = []
    logs = [open(tmp_path / f"dask{i}.log", "w") for i in range(3)]  # noqa: SIM115 - closed in teardown
    try:
        procs.append(
            subprocess.Popen(
                dask
                + [
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--dashboard-address",
                    "127.0.0.1:0",
                ],
                stdout=logs[0],
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        )
        _wait_port(port, procs, 60)
        for i in (1, 2):
            procs.append(
                subprocess.Popen(
                    dask
                    + [
                        "worker",
                        address,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--host",
                        "127.0.0.1",
                        "--no-dashboard",
                        "--death-timeout",
                        "60",
                        "--local-directory",
                        str(tmp_path / f"w{i}"),
                    ],
                    stdout=logs[i],
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
            )
        yield address
    finally:
        for p in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=15)
        for fh in logs:
            fh.close()


def test_same_results_on_scheduler_localcluster_and_without_dask(
    tmp_path: Path, dask_cluster: str
) -> None:
    """An existing Dask cluster, a LocalCluster and local processes write the same rows and numbers."""
    spec = dict(SPEC, seeds=[1], methods=["greedy"], node_multipliers=[1], nodes=[2, 3])
    path = write_spec(tmp_path / "s.yaml", spec)  # 2 arrival patterns x N = 2, 3: 4 greedy cells
    runs = {
        "scheduler": ["--scheduler", dask_cluster, "--workers", "2"],
        "localcluster": ["--backend", "dask", "--workers", "2"],
        "processes": ["--backend", "processes", "--workers", "2"],
    }
    rows = {}
    for name, args in runs.items():
        out = tmp_path / f"{name}.csv"
        res = CliRunner().invoke(cli, ["campaign", str(path), "-o", str(out), "-q", *args])
        assert res.exit_code == 0, (name, res.output)
        rows[name] = read_results(out)
        assert len(rows[name]) == 4 and all(r["status"] == "ok" for r in rows[name])
        # the file is in grid order whatever order the cells finished in
        assert [r["cell"] for r in rows[name]] == [c.key for c in expand(parse_spec(spec))]
    pids = {name: {r["worker"] for r in rs} for name, rs in rows.items()}
    assert not any(
        w.endswith(f":{os.getpid()}") for ws in pids.values() for w in ws
    )  # ran elsewhere
    strip = lambda rs: [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rs]
    assert strip(rows["scheduler"]) == strip(rows["localcluster"]) == strip(rows["processes"])
    # and the files themselves agree line by line outside the timing columns
    timing = [COLUMNS.index(c) for c in TIMING_COLUMNS]

    def text(name: str) -> list[list[str]]:
        with open(tmp_path / f"{name}.csv", newline="") as fh:
            return [[f for i, f in enumerate(rec) if i not in timing] for rec in csv.reader(fh)]

    assert text("scheduler") == text("localcluster") == text("processes")
    json.dumps(rows["scheduler"])  # rows are plain JSON-able data


def test_ctrl_c_on_the_cli_then_rerun_completes_the_rest(tmp_path: Path) -> None:
    """SIGINT to a running `gpuaas campaign` (local processes) keeps finished rows; a re-run adds the rest.

    12 cells of 0.2-0.4 s: after the third row about 2 s of cells are left for the interrupt to
    land in. The re-run runs serially: resuming does not depend on the backend, and two more
    spawned workers would cost seconds of start-up."""
    spec = write_spec(tmp_path / "s.yaml", dict(SPEC, nodes=[3], jobs_per_node=5))
    out = tmp_path / "r.csv"
    args = ["campaign", str(spec), "-o", str(out), "-q"]
    run = [*args, "--backend", "processes", "--workers", "2"]
    # a child of a background job inherits SIGINT ignored: restore Python's Ctrl-C handler first
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler);"
        f" from gpuaas.cli import cli; cli({run!r}, prog_name='gpuaas')"
    )
    cmd = [sys.executable, "-c", code]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not (out.exists() and len(out.read_text().splitlines()) >= 4):
            assert proc.poll() is None and time.monotonic() < deadline, (
                "campaign ended before the interrupt"
            )
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    done = {r["cell"] for r in read_results(out)}
    total = len(expand(parse_spec(yaml.safe_load(spec.read_text()))))
    assert 3 <= len(done) < total
    res = subprocess.run(
        [sys.executable, "-m", "gpuaas", *args, "--backend", "serial", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert (summary["skipped"], summary["ran"]) == (len(done), total - len(done))
    assert len({r["cell"] for r in read_results(out)}) == len(read_results(out)) == total


def test_parquet_results_stream_through_a_journal_and_resume(tmp_path: Path, monkeypatch) -> None:
    """A .parquet campaign journals rows as CSV, writes typed Parquet at the end, and resumes from it."""
    pytest.importorskip("pyarrow")
    spec = parse_spec(dict(SPEC, arrivals=["low"], methods=["greedy"], node_multipliers=[1]))
    out = tmp_path / "r.parquet"
    real = runners.run_cell
    grid = {c.key for c in expand(spec)}

    def one_then_stop(cell: Cell) -> dict[str, Any]:
        if cell.key in grid and (tmp_path / "r.parquet.partial.csv").exists():
            raise KeyboardInterrupt
        return real(cell)

    monkeypatch.setattr(runners, "run_cell", one_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run_campaign(spec, out, backend="serial", progress=False)
    assert not out.exists() and len(ResultStore(out).load()) == 1  # the journal holds the row
    monkeypatch.setattr(runners, "run_cell", real)
    report = run_campaign(spec, out, backend="serial", progress=False)
    assert (report.skipped, report.ran) == (1, 1)
    assert not (tmp_path / "r.parquet.partial.csv").exists()
    rows = read_results(out)
    csv_rows = run_campaign(spec, tmp_path / "r.csv", backend="serial", progress=False).rows
    assert comparable(rows) == comparable(csv_rows)
    assert isinstance(rows[0]["events"], int) and rows[0]["error"] is None


def test_parquet_without_pyarrow_says_what_to_install(tmp_path: Path, monkeypatch) -> None:
    """Asking for Parquet without pyarrow is a clear error naming the extra to install."""
    monkeypatch.setattr(store, "_have_pyarrow", lambda: False)
    with pytest.raises(InputError, match=r"pyarrow \(pip install 'gpuaas\[parquet\]'\)"):
        ResultStore(tmp_path / "r.parquet")


@pytest.mark.parametrize("name", ["small", "paper"])
def test_bundled_campaign_specs_load(name: str) -> None:
    """scripts/campaigns/{small,paper}.yaml are valid specs over registered methods."""
    path = Path(__file__).parent.parent / "scripts" / "campaigns" / f"{name}.yaml"
    spec = specs.load_spec(path)
    cells = expand(spec)
    assert spec.name == name and len({c.key for c in cells}) == len(cells) > 0
    if name == "paper":
        assert spec.nodes == tuple(range(10, 101, 10)) and set(spec.arrivals) == set(ARRIVALS)
        assert len(spec.solver_seeds or ()) == 10


def test_warm_up_leaves_nothing_to_compile_for_cells() -> None:
    """After a worker's warm-up, real cells add no numba specialisation (no compilation per task)."""
    from numba.core.registry import CPUDispatcher

    def signatures() -> dict[str, int]:
        return {
            f"{name}.{k}": len(v.signatures)
            for name, mod in list(sys.modules.items())
            if name.startswith("gpuaas")
            for k, v in vars(mod).items()
            if isinstance(v, CPUDispatcher)
        }

    methods = ["greedy", "edf"]
    info = cell_mod.warm_up(methods)
    assert info["errors"] == {} and info["worker"].endswith(f":{os.getpid()}")
    before = signatures()
    assert sum(before.values()) > 0  # the kernels are loaded
    for m in methods:
        assert cell_mod.run_cell(Cell.of("high", 3, 30, 4, m, 4))["status"] == "ok"
    assert signatures() == before
