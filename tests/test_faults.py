"""Faults, extreme inputs and limits, continued: concurrent writers, short writes, signals,
bounded input, and what every way in accepts (instances/README.md, "Faults, extreme inputs
and limits"; each test names its case). The concurrency, short-write and signal cases run the
real `gpuaas` command in child processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpuaas.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "instances" / "README.md"
TRACE = str(ROOT / "instances" / "trace-small.json")
GPUAAS = [sys.executable, "-m", "gpuaas"]


def _gpuaas(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*GPUAAS, *args], capture_output=True, text=True, **kw)


def _one_line(res, code: int, message: str) -> None:
    assert res.exit_code == code, res.output
    assert res.output == f"gpuaas: error: {message}\n"


def _spec(path: Path, seeds: list[int], methods: list[str]) -> Path:
    """A campaign spec over `tiny.json` beside it, a 2-node, 6-job trace: its cells take
    0.05 s where trace-small's took 0.3 s (these tests are about the results file)."""
    from gpuaas.generator import generate_trace

    trace = path.with_name("tiny.json")
    trace.write_text(json.dumps(generate_trace(2, 6, seed=1)))
    path.write_text(
        yaml.safe_dump(
            {"name": path.stem, "traces": [str(trace)], "solver_seeds": seeds, "methods": methods}
        )
    )
    return path


def _cells(path: Path) -> list[str]:
    lines = path.read_text().splitlines()[1:]
    return [line.split(",")[0] for line in lines]


# ---------------------------------------------------------------------------------------------
# yaml-aliases, long-values, json-huge-integer: input that would build huge values

#: a 1 KB catalog whose nested aliases expand to 9^9 = 387 million strings
LAUGHS = (
    "name: [&a [lol,lol,lol,lol,lol,lol,lol,lol,lol], "
    + ", ".join(f"&{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi"))
    + "]\nvm_types:\n  - {name: X, gpu: K80, gpus: 1, cost_per_hour: 1}\n"
)


def test_yaml_aliases(tmp_path, monkeypatch):
    """yaml-aliases: a "billion laughs" catalog fails at once in one short line (it took 36 s
    and 2.3 GB, then "out of memory"): a YAML document expands to at most MAX_YAML_NODES."""
    monkeypatch.chdir(tmp_path)
    Path("laughs.yaml").write_text(LAUGHS)
    assert len(LAUGHS) < 1100
    t0 = time.process_time()
    res = CliRunner().invoke(cli, ["generate", "--nodes", "2", "--catalog", "laughs.yaml"])
    assert time.process_time() - t0 < 5.0
    _one_line(
        res,
        2,
        "catalog: laughs.yaml: not valid YAML: its aliases expand to more than 100000 nodes "
        "(gpuaas.limits); write the values out or use fewer aliases",
    )


def test_long_values_give_short_errors(tmp_path, monkeypatch):
    """long-values: a 10 MB job id, VM name or value gives an error line of at most a few
    hundred characters (they were 10 MB), built without a repr of the whole value."""
    monkeypatch.chdir(tmp_path)
    huge = "x" * 10_000_000
    base = {"catalog": "azure-2021", "nodes": 1, "jobs": [{"due": 1, "weight": 0.01}]}
    cases = {
        "id": {"id": huge, "times": {"NC7": [1]}},
        "vm": {"id": "a", "times": {huge: [1]}},
        "value": {"id": "a", "times": {"NC6": [huge]}},
    }
    for what, job in cases.items():
        data = {**base, "jobs": [{**base["jobs"][0], **job}]}
        Path("bad.json").write_text(json.dumps(data))
        res = CliRunner().invoke(cli, ["solve", "bad.json"])
        assert res.exit_code == 2 and res.output.count("\n") == 1, what
        assert len(res.output) < 2200, (what, len(res.output))
    assert res.output == (
        "gpuaas: error: bad.json: jobs[0] (a).times.NC6[0]: must be a finite time > 0 s "
        "(or null), got '" + "x" * 56 + "...\n"
    )


def test_json_huge_integer(tmp_path, monkeypatch):
    """json-huge-integer: a number of 5000 digits is one line (it was a ValueError traceback)."""
    monkeypatch.chdir(tmp_path)
    Path("bad.json").write_text(
        '{"catalog": "azure-2021", "nodes": 1' + "0" * 5000 + ', "jobs": []}'
    )
    _one_line(
        CliRunner().invoke(cli, ["solve", "bad.json"]),
        2,
        "bad.json: not valid JSON: Exceeds the limit (4300 digits) for integer string conversion",
    )


# ---------------------------------------------------------------------------------------------
# csv-field-huge, csv-bom, pai-gpu-overflow: importer input


def _import(tmp_path, monkeypatch, files: dict[str, str], *args: str):
    """`gpuaas import ARGS -o out.json` in tmp_path holding `files` (utf-8-sig: with a BOM)."""
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        Path(name).parent.mkdir(exist_ok=True)
        Path(name).write_text(text, encoding="utf-8-sig" if "bom" in name else "utf-8")
    return CliRunner().invoke(cli, ["import", *args, "-o", "out.json"])


CSV_HEAD = "id,submit,gpus,duration,gpu\n"
THR = "model,gpu,gpus,steps_per_second\nm,K80,1,2.5\n"


def test_csv_field_huge(tmp_path, monkeypatch):
    """csv-field-huge: a field over the csv module's 128 KB limit in a trace or a throughput
    table is one line naming it (it was a _csv.Error traceback); no output file."""
    big = CSV_HEAD + "a,0,1,3600,K80\nb,10,1," + "9" * 200_000 + ",K80\n"
    res = _import(tmp_path, monkeypatch, {"big.csv": big}, "csv", "big.csv")
    _one_line(res, 2, "big.csv: line 3: not valid CSV: field larger than field limit (131072)")
    thr = THR + "x" * 200_000 + ",K80,1,2\n"
    files = {"m.csv": "id,submit,gpus,model,steps\na,0,1,m,1000\n", "thr.csv": thr}
    res = _import(tmp_path, monkeypatch, files, "csv", "m.csv", "--throughputs", "thr.csv")
    _one_line(res, 2, "thr.csv: line 3: not valid CSV: field larger than field limit (131072)")
    assert not Path("out.json").exists()


def test_csv_bom(tmp_path, monkeypatch):
    """csv-bom: a trace and a throughput table saved with a UTF-8 byte-order mark (as some
    spreadsheets do) import as without it (was: "missing column(s) id")."""
    files = {"t-bom.csv": "id,submit,gpus,model,steps\na,0,1,m,1000\n", "thr-bom.csv": THR}
    res = _import(tmp_path, monkeypatch, files, "csv", "t-bom.csv", "--throughputs", "thr-bom.csv")
    assert res.exit_code == 0, res.output
    assert json.loads(Path("out.json").read_text())["jobs"][0]["times"]["NC6"] == [400.0]


def test_pai_gpu_overflow(tmp_path, monkeypatch):
    """pai-gpu-overflow: inst_num x plan_gpu beyond the doubles is one line naming the task
    row (it was an OverflowError traceback)."""
    files = {
        "pai/pai_job_table.csv": "j1,i1,u1,Terminated,1000.0,5000.0\n",
        "pai/pai_task_table.csv": "j1,w,1e300,Terminated,1100.0,4100.0,600.0,29.3,1e300,V100\n",
    }
    res = _import(tmp_path, monkeypatch, files, "alibaba-pai-2020", "pai")
    _one_line(
        res,
        2,
        "pai/pai_task_table.csv: line 1: inst_num x plan_gpu: job 'j1' asks for inf GPUs, "
        "more than 1e+09 (gpuaas.limits)",
    )


# ---------------------------------------------------------------------------------------------
# campaign-concurrent: two campaigns on one results file


def test_campaign_concurrent(tmp_path):
    """A second `gpuaas campaign` on a results file that a running one holds is refused (it
    would duplicate cells, and lose its rows when the first renames the file); once the
    first ends, the second runs only the cells the file lacks: every cell once."""
    small = _spec(tmp_path / "small.yaml", [1, 2, 3], ["greedy", "edf"])
    big = _spec(tmp_path / "big.yaml", [1, 2, 3, 4], ["greedy", "edf", "fifo"])
    out, lock = tmp_path / "r.csv", tmp_path / "r.csv.lock"
    first = subprocess.Popen(
        [*GPUAAS, "campaign", str(small), "-o", str(out), "--backend", "serial", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
            assert first.poll() is None, first.communicate()
            time.sleep(0.005)
        os.kill(first.pid, signal.SIGSTOP)  # hold it there, lock taken, while the second tries
        second = _gpuaas("campaign", str(big), "-o", str(out), "--backend", "serial", "-q")
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.returncode == 2 and second.stdout == ""
    assert second.stderr == (
        f"gpuaas: error: {out}: another campaign (pid {first.pid}) is writing this results "
        "file; wait for it to end or write to another file\n"
    )
    stdout, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    assert "4 cells, 0 already in" in stdout  # edf is seed-independent: simulated once
    again = _gpuaas("campaign", str(big), "-o", str(out), "--backend", "serial", "-q")
    assert again.returncode == 0, again.stderr
    assert "6 cells, 4 already in" in again.stdout
    cells = _cells(out)
    assert len(cells) == 6 and len(set(cells)) == 6
    assert not lock.exists()


def test_campaign_lock_follows_symlinks(tmp_path):
    """campaign-concurrent through an alias (issue 39, case 5): the lock is on the file a
    symlink leads to, so a campaign writing `link.csv -> r.csv` is refused while another holds
    `r.csv` (the lock was `<path as given>.lock`, and the file ended with duplicate cells)."""
    from gpuaas.experiments.store import ResultStore

    spec = _spec(tmp_path / "s.yaml", [1], ["edf"])
    out, link = tmp_path / "r.csv", tmp_path / "link.csv"
    link.symlink_to(out.name)
    message = (
        f"{link}: another campaign (pid {os.getpid()}) is writing this results file; wait "
        "for it to end or write to another file"
    )
    with ResultStore(out).locked():
        assert (tmp_path / "r.csv.lock").exists() and not (tmp_path / "link.csv.lock").exists()
        res = CliRunner().invoke(cli, ["campaign", str(spec), "-o", str(link), "-q"])
        _one_line(res, 2, message)
    assert not out.exists()
    with ResultStore(link).locked():  # and the other way round
        res = CliRunner().invoke(cli, ["campaign", str(spec), "-o", str(out), "-q"])
        _one_line(res, 2, message.replace(str(link), str(out)))
    res = CliRunner().invoke(  # serial: a Dask cluster took 3 s to start for one cell
        cli, ["campaign", str(spec), "-o", str(link), "--backend", "serial", "-q"]
    )
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and len(_cells(out)) == 1
    assert not list(tmp_path.glob("*.lock"))


def test_duplicated_cells_are_refused(tmp_path):
    """results-duplicate-cell: a file holding a cell twice (as two unlocked campaigns wrote
    before) is refused by resume and `plot`, naming both lines."""
    spec = _spec(tmp_path / "s.yaml", [1], ["edf"])
    out = tmp_path / "r.csv"
    assert (
        _gpuaas("campaign", str(spec), "-o", str(out), "--backend", "serial", "-q").returncode == 0
    )
    lines = out.read_text().splitlines()
    out.write_text("\n".join([*lines, lines[1]]) + "\n")
    message = (
        f"{out}: line 3: cell tiny-edf-s1-x1-ovh600-up120 is given twice (first on "
        "line 2): two campaigns wrote this file at once? keep one row per cell"
    )
    runner = CliRunner()
    _one_line(runner.invoke(cli, ["campaign", str(spec), "-o", str(out), "-q"]), 2, message)
    png = tmp_path / "c.png"
    _one_line(runner.invoke(cli, ["plot", "costs", str(out), "-o", str(png)]), 2, message)
    assert not png.exists()


def test_results_file_bom_and_huge_field(tmp_path):
    """csv-bom, csv-field-huge for results files: a results CSV saved with a byte-order mark
    resumes and plots as without it; a field over 128 KB is one line naming its line."""
    spec = _spec(tmp_path / "s.yaml", [1], ["edf"])
    out = tmp_path / "r.csv"
    assert (
        _gpuaas("campaign", str(spec), "-o", str(out), "--backend", "serial", "-q").returncode == 0
    )
    text = out.read_text()
    out.write_text(text, encoding="utf-8-sig")
    runner = CliRunner()
    res = runner.invoke(cli, ["campaign", str(spec), "-o", str(out), "-q"])
    assert res.exit_code == 0 and "1 cells, 1 already in" in res.output, res.output
    lines = text.splitlines()
    out.write_text(lines[0] + "\n" + lines[1].replace(",edf,", ",edf" + "x" * 200_000 + ",") + "\n")
    _one_line(
        runner.invoke(cli, ["plot", "costs", str(out), "-o", str(tmp_path / "c.png")]),
        2,
        f"{out}: line 2: not valid CSV: field larger than field limit (131072)",
    )


# ---------------------------------------------------------------------------------------------
# stdout-short-write: a disk that fills while standard output is written


def _fill_at(limit: int):
    """A child's preexec: files stop growing at `limit` bytes, as on a disk that fills then
    (writes past it fail with EFBIG instead of killing the process with SIGXFSZ)."""

    def pre() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return pre


def test_stdout_short_write(tmp_path):
    """`gpuaas generate --json > file` on a disk that fills after 64 KiB of the 114 KB: the
    write to standard output is short; the rest is written again, which fails, so the
    command says so and exits 2 (it exited 0 with the file cut at 65 536 bytes)."""
    out = tmp_path / "trace.json"
    with open(out, "wb") as fh:
        res = subprocess.run(
            [*GPUAAS, "generate", "--nodes", "10", "--json"],
            stdout=fh,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_fill_at(65536),
        )
    assert res.returncode == 2
    assert res.stderr == "gpuaas: error: standard output: cannot write: File too large\n"
    assert out.stat().st_size == 65536
    # the same command without the limit writes the whole document
    whole = _gpuaas("generate", "--nodes", "10", "--json")
    assert whole.returncode == 0 and len(whole.stdout) > 100_000


def test_output_file_on_a_disk_that_fills(tmp_path):
    """`-o` on a disk that fills: one line, exit 2, neither the file nor its temporary."""
    res = subprocess.run(
        [*GPUAAS, "generate", "--nodes", "10", "-o", str(tmp_path / "t.json")],
        capture_output=True,
        text=True,
        preexec_fn=_fill_at(65536),
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == f"gpuaas: error: {tmp_path / 't.json'}: cannot write: File too large\n"
    assert list(tmp_path.iterdir()) == []


def test_campaign_on_a_disk_that_fills(tmp_path):
    """A campaign whose results file stops growing (a full disk) after its header, one row and
    part of the next: one line naming the results file, exit 2 (it named "standard output",
    issue 39, case 15); the resumed campaign drops the cut row and runs it again."""
    spec = _spec(tmp_path / "s.yaml", [1, 2, 3], ["greedy"])
    whole, out = tmp_path / "whole.csv", tmp_path / "r.csv"
    args = [*GPUAAS, "campaign", str(spec), "--backend", "serial", "-q", "-o"]
    assert subprocess.run([*args, str(whole)], capture_output=True).returncode == 0
    lines = whole.read_text().splitlines(keepends=True)
    limit = len("".join(lines[:2]).encode()) + 100
    res = subprocess.run(
        [*args, str(out)], capture_output=True, text=True, preexec_fn=_fill_at(limit)
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == f"gpuaas: error: {out}: cannot write: File too large\n"
    assert out.stat().st_size == limit
    again = _gpuaas("campaign", str(spec), "-o", str(out), "--backend", "serial", "-q")
    assert again.returncode == 0, again.stderr
    assert "3 cells, 1 already in" in again.stdout
    assert sorted(_cells(out)) == sorted(_cells(whole))


# ---------------------------------------------------------------------------------------------
# signal-temporaries: SIGTERM / SIGHUP during `simulate --log -o`


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_signal_removes_temporaries(tmp_path, sig):
    """A simulation killed while its event log streams into a temporary file: the temporary
    is removed (each kill left a hidden `.ev.jsonl.*.tmp`), the command says so in one line
    and ends by the same signal, as an unhandled one would. The trace (N = 20, 2 000 jobs) takes
    minutes to simulate, so the run is still going when the signal comes even on a loaded
    machine (on trace-small it could end between two polls)."""
    from gpuaas.generator import generate_trace

    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(generate_trace(20, 2000, seed=1)))
    proc = subprocess.Popen(
        [*GPUAAS, "simulate", "t.json", "-m", "path-relinking", "--log", "ev.jsonl"]
        + ["-o", "r.json", "-q"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    while not list(tmp_path.glob(".ev.jsonl.*.tmp")):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -sig
    assert "Traceback" not in err  # (a first run may print the compile notice before)
    assert err.splitlines()[-1] == f"gpuaas: stopped by {signal.Signals(sig).name}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


_SIGNAL_IN_CALLBACK = """
import ctypes, os, signal, sys
import gpuaas.cli.base as base

def command(*args, **kwargs):
    # as numba's compiler: the signal comes while LLVM calls back into Python, the callback's
    # exception is ignored, and the compiler then fails with an error of its own
    hook = ctypes.CFUNCTYPE(None)(lambda: os.kill(os.getpid(), signal.SIGHUP))
    hook()
    if sys.argv[1] == "fails":
        raise RuntimeError("no compiled object yet")

base.cli.main = command
base.main()
"""


@pytest.mark.parametrize("then", ["fails", "ends"])
def test_signal_in_a_callback(then):
    """A signal that arrives inside a C callback (numba compiling a kernel) cannot unwind the
    command: the callback ignores `Terminated`. The command still says it was stopped and ends
    by the signal, with no traceback, whether the interrupted code then fails (numba's
    "no compiled object yet", which left a traceback and exit 1) or goes on to the end."""
    res = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_CALLBACK, then], capture_output=True, text=True
    )
    assert res.returncode == -signal.SIGHUP, res.stderr
    assert res.stderr == "gpuaas: stopped by SIGHUP\n"


def test_milp_time_limit_huge():
    """milp-time-limit-huge: `solve -m milp --time-limit 1e9` (the largest accepted) solves
    (it raised OverflowError: poll() takes at most ~24 days)."""
    res = CliRunner().invoke(
        cli,
        ["solve", str(ROOT / "instances" / "example.json"), "-m", "milp"]
        + ["--time-limit", "1e9", "--json"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["stats"]["status"] in ("optimal", "gap_reached")


# ---------------------------------------------------------------------------------------------
# time-tiny, submit-restore, jobspec-limits: one validation for every way a job enters

BASE = {
    "catalog": "azure-2021",
    "nodes": 2,
    "jobs": [{"id": "a", "due": 90000, "weight": 0.01, "times": {"NC6": [36000]}}],
}


@pytest.mark.parametrize("t", [1e-7, 1e-305])
def test_time_tiny(tmp_path, monkeypatch, t):
    """time-tiny: a whole-job time below MIN_SECONDS = 1 s is refused by the parser (near 0
    the bound became 0 $ and cost / bound a 300-digit number; at 1e-305 s simulate failed at
    its end)."""
    monkeypatch.chdir(tmp_path)
    data = json.loads(json.dumps(BASE))
    data["jobs"][0]["times"]["NC6"] = [t]
    Path("t.json").write_text(json.dumps(data))
    for args in (["solve", "t.json", "-o", "o.json"], ["simulate", "t.json", "-q"]):
        _one_line(
            CliRunner().invoke(cli, args),
            2,
            f"t.json: jobs[0] (a).times.NC6[0]: must be >= 1 s (gpuaas.limits), got {t!r}",
        )
    assert not Path("o.json").exists()


def test_submit_accepts_only_what_restore_accepts():
    """submit-restore: what `Rescheduler.submit` accepts can be saved and restored (submit took
    times below 1e-6 s that restore refused); one check for the parser, `JobSpec` and the
    state (`gpuaas.instance.check_job`, MIN_SECONDS)."""
    import numpy as np

    from gpuaas import Rescheduler
    from gpuaas.errors import InputError, StateError
    from gpuaas.instance import JobSpec

    r = Rescheduler("azure-2021", nodes=1, method="edf")
    job = {"id": "a", "due": 100.0, "weight": 0.01, "times": {"NC6": [1e-7]}}
    with pytest.raises(InputError) as err:
        r.submit(job, at=0.0)
    assert str(err.value) == "job[0] (a).times.NC6[0]: must be >= 1 s (gpuaas.limits), got 1e-07"
    with pytest.raises(InputError) as err:
        JobSpec("a", 0.0, 100.0, 0.01, work=np.full(30, 0.5), progress=0.0)
    assert str(err.value) == (
        "job (a).work[0]: must be a time in [1, 1e+09] s (gpuaas.limits) or inf "
        "(cannot run), got 0.5"
    )
    r.submit(dict(job, times={"NC6": [1.0]}), at=0.0)  # the least time accepted ...
    state = json.loads(json.dumps(r.state()))
    again = Rescheduler.restore(state)  # ... comes back
    assert [j.id for j in again.unfinished()] == [j.id for j in r.unfinished()]
    state["live"]["jobs"][0]["work"][0] = 0.5
    with pytest.raises(StateError) as err:
        Rescheduler.restore(state)
    assert str(err.value) == (
        "corrupt Rescheduler state: live.jobs[0] (a).times.NC6[0]: must be >= 1 s "
        "(gpuaas.limits), got 0.5"
    )


# ---------------------------------------------------------------------------------------------
# output-is-input: an output path that is also an input


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["import", "csv", "t.csv", "-o", "t.csv"], "t.csv: -o is the same file as SRC"),
        (["simulate", "t.json", "--log", "t.json"], "t.json: --log is the same file as TRACE_FILE"),
        (
            ["simulate", "t.json", "--log", "e.json", "-o", "./e.json"],
            "e.json: --log is the same file as -o",
        ),
        (["solve", "t.json", "-o", "./t.json"], "./t.json: -o is the same file as INSTANCE_FILE"),
        (["bound", "t.json", "-o", "t.json"], "t.json: -o is the same file as TRACE_FILE"),
    ],
    ids=["import", "simulate-log", "log-is-output", "solve", "bound"],
)
def test_output_is_input(tmp_path, monkeypatch, args, message):
    """output-is-input: an output that is an input (or another output) is refused before any
    work, and the input is left as it was (it was overwritten)."""
    monkeypatch.chdir(tmp_path)
    Path("t.csv").write_text(CSV_HEAD + "a,0,1,3600,K80\n")
    Path("t.json").write_text(json.dumps(BASE))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    _one_line(CliRunner().invoke(cli, args), 2, f"{message}; it would be overwritten")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_dev_null_may_take_both_outputs(tmp_path, monkeypatch):
    """A character device is no file to overwrite: `--log /dev/null -o /dev/null` runs."""
    monkeypatch.chdir(tmp_path)
    Path("t.json").write_text(json.dumps(BASE))
    res = CliRunner().invoke(cli, ["simulate", "t.json", "--log", "/dev/null", "-o", "/dev/null"])
    assert res.exit_code == 0, res.output


# ---------------------------------------------------------------------------------------------
# csv-hash-id: a job row starting with "#"


def test_csv_hash_id(tmp_path, monkeypatch):
    """csv-hash-id: a row after the header starting with "#" is still a comment, but the
    summary counts it (it said "imported 1 of 1"); quoted, "#b" is a job id."""
    rows = CSV_HEAD + "a,0,1,3600,K80\n#b,10,1,3600,K80\n"
    res = _import(tmp_path, monkeypatch, {"t.csv": rows}, "csv", "t.csv")
    assert res.exit_code == 0, res.output
    assert res.output.startswith(
        "imported 1 of 2 jobs from t.csv, N = 1; dropped: 1 commented out (line starting "
        "with #; quote an id that starts with #); "
    )
    quoted = rows.replace("#b", '"#b"')
    res = _import(tmp_path, monkeypatch, {"t.csv": quoted}, "csv", "t.csv")
    assert res.output.startswith("imported 2 of 2 jobs from t.csv")
    assert [j["id"] for j in json.loads(Path("out.json").read_text())["jobs"]] == ["a", "#b"]


# ---------------------------------------------------------------------------------------------
# import-limits: errors name the CSV line and column


@pytest.mark.parametrize(
    ("rows", "args", "message"),
    [
        (
            CSV_HEAD + "a,0,1,1e12,K80\n",
            [],
            "t.csv: line 2: duration: job 'a' takes 1e+12 s on NC6 with 1 GPU(s), more than "
            "1e+09 s (gpuaas.limits)",
        ),
        (
            CSV_HEAD + "a,0,1,0.5,K80\n",
            [],
            "t.csv: line 2: duration: job 'a' takes 0.5 s on NC6 with 1 GPU(s), less than "
            "1 s (gpuaas.limits)",
        ),
        (
            CSV_HEAD + "a,0,1,100,K80\nb,1e12,1,100,K80\n",
            [],
            "t.csv: line 3: submit: 1e+12 s after the first job's submit (0), more than 1e+09 s "
            "(gpuaas.limits)",
        ),
        (
            "id,submit,gpus,duration,gpu,weight\na,0,1,100,K80,1e7\n",
            [],
            "t.csv: line 2: weight: must be <= 1e+06 (gpuaas.limits), got 1e+07",
        ),
        (
            "id,submit,gpus,model,epochs,steps_per_epoch\na,0,1,m,1e300,1e300\n",
            ["--throughputs", "thr.csv"],
            "t.csv: line 2: epochs x steps_per_epoch: 1e+300 x 1e+300 steps is beyond the "
            "floating-point numbers",
        ),
        (
            "id,submit,gpus,model,epochs,steps_per_epoch\na,0,1,m,1e5,1e10\n",
            ["--throughputs", "thr.csv"],
            "t.csv: line 2: epochs x steps_per_epoch: job 'a' takes 4e+14 s on NC6 with 1 GPU(s), "
            "more than 1e+09 s (gpuaas.limits)",
        ),
        (
            CSV_HEAD + "a,0,1,100,K80\n",
            ["--nodes", "10000000"],
            "--nodes: must be <= 1000000 (gpuaas.limits), got 10000000",
        ),
    ],
    ids=[
        "duration-long",
        "duration-short",
        "submit",
        "weight",
        "epochs-overflow",
        "epochs-long",
        "nodes",
    ],
)
def test_import_limits(tmp_path, monkeypatch, rows, args, message):
    """import-limits: a value beyond gpuaas.limits names the CSV line and column (it named the
    output's JSON path, e.g. jobs[0] (a).times.NC6[0]); --nodes is an option error, not the
    file's; epochs x steps_per_epoch overflowing is said (it was "no configuration can run
    it")."""
    res = _import(tmp_path, monkeypatch, {"t.csv": rows, "thr.csv": THR}, "csv", "t.csv", *args)
    _one_line(res, 2, message)
    assert not Path("out.json").exists()


# ---------------------------------------------------------------------------------------------
# import-many, simulate-progress: large inputs


def test_import_many(tmp_path, monkeypatch):
    """import-many: more than MAX_JOBS jobs to import are refused before any is timed (a
    10^6-row CSV took 75 s and 2.7 GB; now 8 s and 0.6 GB: the rows are read one at a time)."""
    rows = CSV_HEAD + "".join(f"j{i},{i},1,3600,K80\n" for i in range(100_001))
    t0 = time.process_time()
    res = _import(tmp_path, monkeypatch, {"t.csv": rows}, "csv", "t.csv")
    assert time.process_time() - t0 < 20
    _one_line(
        res,
        2,
        "t.csv: 100001 jobs to import; at most 100000 (gpuaas.limits): choose some with "
        "--limit or --window",
    )
    res = _import(tmp_path, monkeypatch, {}, "csv", "t.csv", "--limit", "3")
    assert res.output.startswith("imported 3 of 100001 jobs")


def test_simulate_progress_off_a_terminal(tmp_path, monkeypatch):
    """simulate-progress: off a terminal (a log file), a long simulation writes a progress line
    every LOG_INTERVAL = 10 s (it was silent for minutes); -q, none."""
    from gpuaas import simulator

    monkeypatch.setattr(simulator._ProgressBar, "LOG_INTERVAL", 0.0)
    res = CliRunner().invoke(cli, ["simulate", TRACE, "-m", "edf"])
    assert res.exit_code == 0
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("simulate [")]
    assert lines and lines[-1].startswith("simulate [##############################] 30/30 jobs")
    quiet = CliRunner().invoke(cli, ["simulate", TRACE, "-m", "edf", "-q"])
    assert "simulate [" not in quiet.stderr


# ---------------------------------------------------------------------------------------------

CASES = [
    "campaign-concurrent",
    "results-duplicate-cell",
    "stdout-short-write",
    "signal-temporaries",
    "time-tiny",
    "submit-restore",
    "output-is-input",
    "csv-hash-id",
    "csv-field-huge",
    "csv-bom",
    "pai-gpu-overflow",
    "import-limits",
    "import-epochs-overflow",
    "import-nodes",
    "import-many",
    "simulate-progress",
    "yaml-aliases",
    "long-values",
    "json-huge-integer",
    "milp-time-limit-huge",
]


def test_readme_lists_every_case():
    """instances/README.md has a row for every case of this file with the messages tested."""
    text = README.read_text()
    for name in CASES:
        assert f"| `{name}` |" in text, name
    for message in (
        "another campaign (pid 4242) is writing this results file; wait for it to end or write "
        "to another file",
        "is given twice (first on line 2): two campaigns wrote this file at once? keep one row "
        "per cell",
        "gpuaas: error: standard output: cannot write: File too large",
        "gpuaas: stopped by SIGTERM",
        "jobs[0] (a).times.NC6[0]: must be >= 1 s (gpuaas.limits), got 1e-07",
        "corrupt Rescheduler state: live.jobs[0] (a).times.NC6[0]: must be >= 1 s",
        "-o is the same file as SRC; it would be overwritten",
        "dropped: 1 commented out (line starting with #; quote an id that starts with #)",
        "line 3: not valid CSV: field larger than field limit (131072)",
        "inst_num x plan_gpu: job 'j1' asks for inf GPUs, more than 1e+09 (gpuaas.limits)",
        "line 2: duration: job 'a' takes 1e+12 s on NC6 with 1 GPU(s), more than 1e+09 s",
        "epochs x steps_per_epoch: 1e+300 x 1e+300 steps is beyond the floating-point numbers",
        "100001 jobs to import; at most 100000 (gpuaas.limits): choose some with --limit or "
        "--window",
        "its aliases expand to more than 100000 nodes (gpuaas.limits); write the values out or "
        "use fewer aliases",
        "not valid JSON: Exceeds the limit (4300 digits) for integer string conversion",
    ):
        assert message in text, message
