"""Results files you can trust (issue 40, item 7): every file of scripts/results is in its index with
the command that regenerates it, links to it resolve, and a sample of each reruns to the same
values with today's code (timing columns aside). The index, scripts/results/README.md, says
which check samples each file."""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import math
import os
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "scripts" / "results"
ARCHIVE = RESULTS / "archive"
KINDS = {"row", "report", "resume", "points", "repriced", "eva", "figure", "notes", "command"}
KINDS |= {"skynomad"}  # scripts/skynomad_setting.py's results (issue 42)
KINDS |= {"colocation"}  # scripts/colocation_setting.py's results (issue 44 item 2)
#: the environment variable naming the data a given trace's rows need (no data is committed)
GAVEL = "GPUAAS_GAVEL"  # a clone of github.com/stanford-futuredata/gavel at c4fa400
ITP = "GPUAAS_ITP"  # a folder of the ITP clusters imported as itpNN.json (scripts/results/itp.md)
SPOT = "GPUAAS_SPOT_TRACES"  # a copy of github.com/skypilot-org/spot-traces


def script(name: str):
    """A module of scripts/ (they are not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def index() -> dict[str, dict[str, str]]:
    """The rows of scripts/results/README.md's table: file -> what, command, sample."""
    out = {}
    for line in (RESULTS / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            name, what, command, sample = (c.strip() for c in line.strip("|").split(" | "))
            out[name.strip("`")] = {"what": what, "command": command, "sample": sample.strip("`")}
    return out


def first_command(entry: dict[str, str]) -> str:
    return re.search(r"`([^`]+)`", entry["command"]).group(1)


def of_kind(*kinds: str) -> list[str]:
    return sorted(f for f, e in index().items() if e["sample"] in kinds)


def live_files() -> list[str]:
    return sorted(
        str(p.relative_to(RESULTS))
        for p in RESULTS.rglob("*")
        if p.is_file() and ARCHIVE not in p.parents and p.name != "README.md"
    )


def test_index_and_links():
    """Every live file is in the index with a command and a sample, and what a figure, a
    notes page or a command file rests on is itself there; every file of the archive is in the
    archive's README; every link to scripts/results from the README, docs/ and formulations/
    resolves, and one into the archive says "frozen"."""
    entries = index()
    assert sorted(entries) == live_files()
    for name, e in entries.items():
        assert e["what"] and e["command"] and e["sample"] in KINDS, name
    sampled = {f for f, e in entries.items() if e["sample"] not in ("figure", "notes", "command")}
    for name, e in entries.items():
        text = e["command"] + (
            (RESULTS / name).read_text(encoding="utf-8") if e["sample"] != "figure" else ""
        )
        if e["sample"] in ("figure", "notes", "command"):
            assert any(f in text for f in sampled), f"{name} names no sampled file"
        if e["sample"] == "command":
            for path in re.findall(r"scripts/results/[\w./-]+\.\w+", text):
                assert (ROOT / path).exists(), (name, path)
    archived = (ARCHIVE / "README.md").read_text(encoding="utf-8")
    for p in ARCHIVE.rglob("*"):
        if p.is_file() and p.name != "README.md":
            rel = p.relative_to(ARCHIVE)
            assert f"`{rel}`" in archived or f"`{rel.parent}/" in archived, rel
    bad = []
    for pattern in ("README.md", "docs/**/*.md", "formulations/**/*.md"):
        for page in ROOT.glob(pattern):
            for para in page.read_text(encoding="utf-8").split("\n\n"):
                for path in re.findall(r"scripts/results/[\w./-]*[\w/]", para):
                    if not (ROOT / path).exists():
                        bad.append(f"{page.relative_to(ROOT)}: {path} does not exist")
                    elif "/archive/" in path and "frozen" not in para.lower():
                        bad.append(f"{page.relative_to(ROOT)}: {path} not said to be frozen")
    assert not bad, bad


# --- rows: simulated again --------------------------------------------------------------------


def needs(row: dict) -> set[str]:
    """The data a row's cell needs beyond the repository."""
    out = set()
    if row["trace"]:
        out.add(ITP if "itp" in Path(row["trace"]).name else GAVEL)
    if SPOT in str(row.get("spot") or ""):
        out.add(SPOT)
    return out


def timed(row: dict) -> bool:
    """Whether a row's method stops at a time limit (the MILP's `time_limit`): its decisions
    depend on the machine's speed and load, so it cannot be rerun to the same values."""
    return "time_limit" in str(row.get("options") or "")


def samples(rows: list[dict]) -> list[dict]:
    """The cheapest row of the default method and the cheapest row overall (by CPU seconds),
    among the rows whose data is at hand and whose method no time limit stops."""
    from gpuaas.methods import DEFAULT_METHOD

    ok = [
        r
        for r in rows
        if r["status"] == "ok" and not timed(r) and all(os.environ.get(n) for n in needs(r))
    ]
    cost = lambda r: r["cpu_seconds"] if r["cpu_seconds"] is not None else float("inf")  # noqa: E731
    picks = []
    for group in ([r for r in ok if r["method"] == DEFAULT_METHOD], ok):
        if group and min(group, key=cost) not in picks:
            picks.append(min(group, key=cost))
    return picks


@pytest.fixture(scope="session")
def given_traces(tmp_path_factory) -> dict[str, object]:
    """The given traces rows name, as far as their data is at hand: name -> Instance."""
    from gpuaas.instance import load_instance

    out: dict[str, object] = {}
    tmp = tmp_path_factory.mktemp("traces")
    gavel = os.environ.get(GAVEL)
    if gavel:
        for name, catalog in (("philly.json", "azure-2021"), ("philly-aws.json", "aws-us-east-1")):
            files = {}
            for f in (
                "scheduler/simulation_throughputs.json",
                "scheduler/traces/msr/seed=0/2869ce.trace",
            ):
                files[f] = tmp / Path(f).name
                files[f].write_bytes(
                    subprocess.run(
                        ["git", "-C", gavel, "show", f"HEAD:{f}"], check=True, capture_output=True
                    ).stdout
                )
            subprocess.run(
                [sys.executable, "-m", "gpuaas", "import", "gavel", str(tmp / "2869ce.trace"),
                 "--throughputs", str(tmp / "simulation_throughputs.json"), "--catalog", catalog,
                 "--nodes", "20", "-o", str(tmp / name)],
                check=True, capture_output=True,
            )  # fmt: skip
            out[name] = load_instance(tmp / name)
        out["/work/data/gavel-philly-533.json"] = out["philly.json"]  # an earlier run's name
    itp = os.environ.get(ITP)
    if itp:
        for f in Path(itp).glob("itp*.json"):
            out[f"../../itp/{f.name}"] = load_instance(f)
    return out


#: floats agree to this relative tolerance: a rerun on other hardware or after a change of
#: summation order differs in the last digit (prediction-job-part.csv: 6229.085830633705 then
#: ...707 on the same code); any change of a decision moves a cost by far more
RTOL = 1e-9


def same(old, new) -> bool:
    if isinstance(old, float) and isinstance(new, float):
        return math.isclose(old, new, rel_tol=RTOL, abs_tol=RTOL)
    return old == new


def check_rows(name: str, given: dict, tmp_path: Path, only: str | None = None) -> None:
    """Simulate the sample rows of a results file again and compare every non-timing column
    (a column the file lacks, or leaves empty, is not compared), read back as written."""
    from gpuaas.experiments.cell import cell_simulation, result_row, with_bounds
    from gpuaas.experiments.rows import TIMING_COLUMNS
    from gpuaas.experiments.store import read_results, write_csv

    rerun = script("rerun_rows")
    rows = read_results(RESULTS / name)
    picks = samples(rows) if only is None else [r for r in rows if r["cell"] == only]
    if not picks:
        pytest.skip(
            f"{name}: every row needs data not at hand ({GAVEL}, {ITP}, {SPOT}) or stops at a time limit"
        )
    for row in picks:
        (cell,) = with_bounds([rerun.row_cell(row, given)])
        write_csv(tmp_path / "new.csv", [result_row(cell, cell_simulation(cell).to_dict())])
        (new,) = read_results(tmp_path / "new.csv")
        diff = [
            f"{row['cell']} {c}: {row[c]!r} -> {new[c]!r}"
            for c in row
            if c not in TIMING_COLUMNS and row[c] is not None and not same(row[c], new[c])
        ]
        assert not diff, f"{name}: {diff}"


@pytest.mark.slow
@pytest.mark.parametrize("name", of_kind("row"))
def test_sample_row(name, given_traces, tmp_path):
    check_rows(name, given_traces, tmp_path)


def test_fast_sample_row(given_traces, tmp_path):
    """In the default run: the cheapest row of the small campaign and the default's cheapest
    of the quality campaign."""
    from gpuaas.experiments.store import read_results

    check_rows("campaign-small.csv", given_traces, tmp_path,
               only=samples(read_results(RESULTS / "campaign-small.csv"))[-1]["cell"])  # fmt: skip
    check_rows("quality.csv", given_traces, tmp_path,
               only=samples(read_results(RESULTS / "quality.csv"))[0]["cell"])  # fmt: skip


# --- reports and the other scripts --------------------------------------------------------------


def run_command(command: str, own: str, out: Path) -> str:
    """Run an index command with its own file's path replaced by `out`; its standard output. A
    `python scripts/X.py` command runs in this process (no interpreter start-up per report)."""
    argv = shlex.split(os.path.expandvars(command))
    argv = [str(out) if a == f"scripts/results/{own}" else a for a in argv]
    if argv[0] == "python" and argv[1].endswith(".py"):
        stdout, saved = io.StringIO(), (sys.argv, os.getcwd())
        sys.argv = argv[1:]
        os.chdir(ROOT)
        try:
            with contextlib.redirect_stdout(stdout):
                runpy.run_path(str(ROOT / argv[1]), run_name="__main__")
        except SystemExit as end:
            assert end.code in (None, 0), f"{command}: exit {end.code}"
        finally:
            sys.argv = saved[0]
            os.chdir(saved[1])
        return stdout.getvalue()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(f, marks=pytest.mark.slow) if "$GPUAAS_" in first_command(index()[f]) else f
        for f in of_kind("report")
    ],
)
def test_report_tables(name, tmp_path):
    """A report's command on the committed rows gives every table line the file has."""
    command = first_command(index()[name])
    for var in re.findall(r"\$(GPUAAS_\w+)", command):
        if not os.environ.get(var):
            pytest.skip(f"{var} names no copy of the data")
    out = tmp_path / "report.md"
    stdout = run_command(command, name, out)
    made = table_lines(out.read_text(encoding="utf-8") if out.exists() else stdout)
    committed = set((RESULTS / name).read_text(encoding="utf-8").splitlines())
    assert made and not [line for line in made if line not in committed], name


#: per file of sample `resume`: the columns that name a row and those compared (None: every
#: column but the timings). upper.csv's `runs`, and so its upper value, also gather the runs of
#: upper.md's later commands (more seeds of the default, the search, the vm-schedule member),
#: so the first command's row is compared on its bound and its default
RESUMED = {
    "prediction-job-part.csv": (("nodes", "arrivals", "trace_seed", "noise"), ("total_cost",)),
    "upper.csv": (
        ("nodes", "jobs", "arrivals", "trace_seed", "restart"),
        ("bound", "binding", "default"),
    ),
    "normal-load.csv": (("cell",), None),
    "decision-interval.csv": (("cell",), None),
    "put-back-rounds.csv": (("cell",), None),
    "put-back-rounds-normal.csv": (("cell",), None),
    "unmove.csv": (("cell",), None),
    "unmove-seeds.csv": (("cell",), None),
    "unmove-seeds-off.csv": (("cell",), None),
    "high-load-seeds-off.csv": (("cell",), None),
    "high-load-seeds-put-back.csv": (("cell",), None),
    "high-load-seeds-unmove.csv": (("cell",), None),
    "high-load-seeds-both.csv": (("cell",), None),
}


def test_resumed_files_are_described():
    assert sorted(RESUMED) == of_kind("resume")


@pytest.mark.slow
@pytest.mark.parametrize("name", of_kind("resume"))
def test_resumed_row(name, tmp_path):
    """Its command, resuming the file without its first row, writes that row again: the same
    figures (floats to `RTOL`) under the same key, the other rows as they were."""
    from gpuaas.experiments.rows import TIMING_COLUMNS

    key, compared = RESUMED[name]
    text = (RESULTS / name).read_text(encoding="utf-8")
    lines = text.splitlines()
    first = next(csv.DictReader(io.StringIO(text)))
    partial = tmp_path / name
    partial.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    run_command(first_command(index()[name]), name, partial)
    resumed = partial.read_text(encoding="utf-8")
    committed = set(lines)
    assert len([line for line in resumed.splitlines() if line not in committed]) <= 1
    again = list(csv.DictReader(io.StringIO(resumed)))
    assert len(again) == len(lines) - 1
    (row,) = [r for r in again if all(r[k] == first[k] for k in key)]
    columns = compared or [c for c in first if c not in TIMING_COLUMNS]

    def value(v: str):
        try:
            return float(v)
        except ValueError:
            return v

    diff = [c for c in columns if not same(value(first[c]), value(row[c]))]
    assert not diff, [(c, first[c], row[c]) for c in diff]


@pytest.mark.slow
@pytest.mark.parametrize("name", of_kind("points"))
def test_objective_point(name, tmp_path):
    """The first point of one cell of a `points` page (objective-points.md), with its script (no
    forks): the same row of its points table but the MILP's seconds."""
    out = tmp_path / "points.md"
    command = first_command(index()[name])
    options = " --nodes 5 --arrivals exponential --overheads 0 --per-cell 1 --fork-above 1e9"
    run_command(command + options, name, out)

    def points(text: str) -> dict[tuple, list[str]]:
        """The points table's rows (12 columns; the fork table has fewer) by N, arrivals,
        restart and event."""
        rows = [line.split("|")[1:-1] for line in table_lines(text)]
        return {tuple(r[:4]): r for r in rows if len(r) == 12 and r[0].strip().isdigit()}

    committed = points((RESULTS / name).read_text(encoding="utf-8"))
    made = {k: r for k, r in points(out.read_text(encoding="utf-8")).items() if k[0] == " 5 "}
    assert made
    for key, row in made.items():
        assert row[:-1] == committed[key][:-1], (row, committed.get(key))


@pytest.mark.slow
@pytest.mark.parametrize("name", of_kind("repriced"))
def test_repriced_row(name, tmp_path):
    """One trace of a repriced table, with its script on its spec cut to that trace."""
    import yaml

    command = first_command(index()[name])
    spec_path = next(a for a in shlex.split(command) if a.endswith(".yaml"))
    spec = yaml.safe_load((ROOT / spec_path).read_text())
    spec.update(nodes=spec["nodes"][:1], arrivals=spec["arrivals"][:1], seeds=spec["seeds"][:1])
    spec.update(methods=["incremental"], spot=[None], exclude=[])
    small = tmp_path / "spec.yaml"
    small.write_text(yaml.safe_dump(spec))
    out = tmp_path / "repriced.md"
    run_command(command.replace(spec_path, str(small)), name, out)
    made = table_lines(out.read_text(encoding="utf-8"))[2:]
    committed = set((RESULTS / name).read_text(encoding="utf-8").splitlines())
    assert len(made) == 1 and made[0] in committed, made


@pytest.mark.slow
def test_benchmark_scripts_run_small(tmp_path):
    """The benchmark scripts behind the frozen bench-*.md of the archive still run (a small
    size; their timings are not compared)."""
    for argv, shows in (
        (["bench_simulator.py", "--sizes", "4x12", "--methods", "greedy"], "| greedy |"),
        (["bench_state.py", "--completed", "50", "--repeat", "3"], "50 completed"),
        (["bench_scale.py", "--no-generated", "--clusters", "--simulate", "2"], "| 2 | 20 |"),
    ):
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / argv[0]), *argv[1:]],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0 and shows in done.stdout, (argv, done.stdout, done.stderr)


def test_csv_rows_of_the_index_are_campaign_rows():
    """A `row` file is one the row machinery reads (one header, a cell column)."""
    for name in of_kind("row"):
        with open(RESULTS / name, newline="") as fh:
            assert "cell" in next(csv.reader(fh)), name
