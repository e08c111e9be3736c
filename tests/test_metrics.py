"""Job metrics (gpuaas.metrics): definitions on hand-computed cases, invariants, and the same
numbers in the result JSON, the campaign rows, compare's table and the event log."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st

from gpuaas.cli import cli
from gpuaas.experiments import analysis
from gpuaas.experiments.compare import compare
from gpuaas.experiments.rows import ADDED_COLUMNS, COLUMNS, TIMING_COLUMNS
from gpuaas.experiments.store import read_results
from gpuaas.instance import load_instance
from gpuaas.metrics import NAMES, TOLERANCE, job_metrics
from gpuaas.simulator import simulate

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "instances" / "trace-small.json")


def job(release: float, completion: float, due: float, running: float | None = None) -> dict:
    """A completed job record as the Rescheduler writes it."""
    jct = completion - release
    run = jct if running is None else running
    return {
        "release": release,
        "completion": completion,
        "due": due,
        "jct": jct,
        "waiting": jct - run,
        "running": run,
    }


def test_metrics_by_hand() -> None:
    """Four jobs, lateness -100, +5e-7 (within the tolerance: on time), +10 and +30 s.

    Tardiness over all jobs [0, 0, 10, 30], linear interpolation: p50 at rank 1.5 -> 5,
    p95 at rank 2.85 -> 10 + 0.85 x 20 = 27, p99 at 2.97 -> 29.4. Lateness of the 2 late jobs
    [10, 30]: p50 20, p95 29, p99 29.8. JCT [100, 200, 300, 400]: p50 250, p95 385, p99 397.
    Waiting [0, 50, 0, 100]: mean 37.5, p95 at rank 2.85 -> 50 + 0.85 x 50 = 92.5."""
    jobs = [
        job(0, 100, 200),
        job(0, 200, 200 - 5e-7, running=150),
        job(0, 300, 290),
        job(0, 400, 370, running=300),
    ]
    m = job_metrics(jobs)
    assert list(m) == NAMES
    assert (m["jobs_completed"], m["late_jobs"], m["deadline_miss_rate"]) == (4, 2, 0.5)
    assert [m[f"tardiness_p{q}"] for q in (50, 95, 99)] == pytest.approx([5, 27, 29.4])
    assert [m[f"lateness_of_late_p{q}"] for q in (50, 95, 99)] == pytest.approx([20, 29, 29.8])
    assert [m[f"jct_p{q}"] for q in (50, 95, 99)] == pytest.approx([250, 385, 397])
    assert (m["mean_jct"], m["max_jct"]) == (250.0, 400.0)
    assert (m["mean_waiting"], m["max_waiting"]) == (37.5, 100.0)
    assert m["waiting_p95"] == pytest.approx(92.5)


def test_no_late_job_and_no_job() -> None:
    """Without a late job the late jobs' lateness is None (not 0); without jobs every metric is."""
    m = job_metrics([job(0, 100, 200), job(10, 50, 50 + TOLERANCE)])
    assert m["late_jobs"] == 0 and m["deadline_miss_rate"] == 0.0 and m["tardiness_p99"] == 0.0
    assert m["lateness_of_late_p50"] is None and m["lateness_of_late_p99"] is None
    assert job_metrics([]) == dict.fromkeys(NAMES) | {"jobs_completed": 0}


@example([(1.0, 524287.1603136729, 0.0, 1.0)])  # ran its whole JCT: waiting -5.8e-11 by rounding
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1e6),  # release
            st.floats(1e-3, 1e6),  # jct
            st.floats(-1e6, 1e6),  # due - release
            st.floats(0, 1),  # running share of the jct
        ),
        min_size=1,
        max_size=40,
    )
)
def test_metric_invariants(data: list[tuple[float, float, float, float]]) -> None:
    """Percentiles ordered and within their values' range; the miss rate counts exactly the
    jobs with positive tardiness; late jobs are late by more than the tolerance."""
    jobs = [job(r, r + d, r + dd, running=s * d) for r, d, dd, s in data]
    m = job_metrics(jobs)
    late = [j["completion"] - j["due"] for j in jobs if j["completion"] - j["due"] > TOLERANCE]
    assert m["late_jobs"] == len(late) and m["deadline_miss_rate"] == len(late) / len(jobs)
    for name in ("tardiness", "jct"):
        p = [m[f"{name}_p{q}"] for q in (50, 95, 99)]
        assert p == sorted(p)
    assert 0.0 <= m["tardiness_p50"] and m["tardiness_p99"] <= max(late, default=0.0)
    assert min(j["jct"] for j in jobs) <= m["jct_p50"] <= m["jct_p99"] <= m["max_jct"]
    if late:
        p = [m[f"lateness_of_late_p{q}"] for q in (50, 95, 99)]
        assert min(late) <= p[0] <= p[1] <= p[2] <= max(late)
    assert 0.0 <= m["mean_waiting"] <= m["max_waiting"] + 1e-9


def test_result_rows_and_event_log_agree(tmp_path: Path) -> None:
    """The result JSON carries `job_metrics` of its jobs; compare's row carries the same values;
    the deadline misses and JCTs recomputed from the event log and the trace alone match."""
    from gpuaas.plots import completions, read_event_log

    trace = load_instance(SMALL)
    log = tmp_path / "events.jsonl"
    result = simulate(trace, "greedy", seed=1, log=log)
    d = result.to_dict()
    assert {k: d[k] for k in NAMES} == job_metrics(result.jobs)
    assert d["late_jobs"] > 0  # the case exercises misses
    # the jobs are all weighted: a late job is one with a tardiness cost
    assert d["late_jobs"] == sum(j["tardiness_cost"] > 0 for j in result.jobs)
    (row,) = compare(trace, ["greedy"], [1])
    assert {k: row[k] for k in NAMES} == {k: d[k] for k in NAMES}
    done = completions(read_event_log(log, trace))
    release = dict(zip(trace.job_ids, trace.release.tolist()))
    due = dict(zip(trace.job_ids, trace.due.tolist()))
    from_log = [
        {"release": release[j], "completion": c, "due": due[j], "jct": c - release[j]}
        for j, c in done.items()
    ]
    assert sum(j["completion"] - j["due"] > TOLERANCE for j in from_log) == d["late_jobs"]
    jct = sorted(j["jct"] for j in from_log)
    assert jct == pytest.approx(sorted(j["jct"] for j in result.jobs), abs=1e-6)
    summary = result.summary()
    assert f"{d['late_jobs']} late" in summary and "p95" in summary


def test_compare_table_shows_metrics_and_older_files_without_them(tmp_path: Path) -> None:
    """compare's table has the miss rate, the late jobs' p95 lateness and the p95 JCT (hours)
    of its rows; a results file written before the metric columns reads, summarizes with those
    metrics None ('-' in the table) and plots."""
    res = CliRunner().invoke(cli, ["compare", SMALL, "--methods", "greedy", "-q"])
    assert res.exit_code == 0, res.output
    head, _, line = res.output.splitlines()[-3:]
    assert "miss %" in head and "late p95 h" in head and "JCT p95 h" in head
    (row,) = compare(load_instance(SMALL), ["greedy"], [1])
    (s,) = analysis.summarize([row])
    cols = line.split()
    assert f"{100 * s['deadline_miss_rate']:.1f}" == cols[8]
    assert f"{s['lateness_of_late_p95'] / 3600:.2f}" == cols[9]
    assert f"{s['jct_p95'] / 3600:.1f}" == cols[10]

    old = tmp_path / "old.csv"
    new_cols = [c for c in ADDED_COLUMNS if c in NAMES]
    with open(old, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([c for c in COLUMNS if c not in new_cols])
        w.writerow([row[c] if row[c] is not None else "" for c in COLUMNS if c not in new_cols])
    (back,) = read_results(old)
    assert back["deadline_miss_rate"] is None and back["late_jobs"] == row["late_jobs"]
    (s,) = analysis.summarize([back])
    assert s["jct_p95"] is None and s["mean_jct"] == pytest.approx(row["mean_jct"])
    table = analysis.format_table([s]).splitlines()[-1].split()
    assert table[8:11] == ["-", "-", "-"]
    pytest.importorskip("matplotlib")
    res = CliRunner().invoke(cli, ["plot", "costs", str(old), "-o", str(tmp_path / "c.png")])
    assert res.exit_code == 0, res.output


def test_summary_averages_lateness_of_late_over_simulations_with_late_jobs() -> None:
    """A run's late-job lateness is the mean over its simulations that had late jobs."""
    base = {"status": "ok", "method": "x", "seed": 1, "total_cost": 1.0, "vm_cost": 1.0}
    base |= {"tardiness_cost": 0.0, "node_multiplier": 1, "sim_nodes": 2, "trace": "t"}
    rows = [
        dict(base, deadline_miss_rate=0.0, lateness_of_late_p95=None),
        dict(base, seed=2, deadline_miss_rate=0.2, lateness_of_late_p95=7200.0),
        dict(base, seed=3, deadline_miss_rate=0.1, lateness_of_late_p95=3600.0),
    ]
    (s,) = analysis.summarize(rows)
    assert s["deadline_miss_rate"] == pytest.approx(0.1)
    assert s["lateness_of_late_p95"] == pytest.approx(5400.0)


def test_result_json_reads_back_for_the_cdf(tmp_path: Path) -> None:
    """`simulate --json -o` writes the metrics and the per-job records the CDF plot reads."""
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["simulate", SMALL, "-m", "edf", "-q", "--json", "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert {k: data[k] for k in NAMES} == job_metrics(data["jobs"])


def test_rerun_rows_fills_an_older_file_and_same_results_tells_filled_from_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """scripts/rerun_rows.py on a file without the metric columns gives the rows of today's
    compare, resumes from its JSON, and same_results.py --filled passes it; a moved value fails."""
    import runpy

    from gpuaas.experiments.store import write_csv

    rows = compare(load_instance(SMALL), ["greedy", "edf"], [1], name="small.json")
    old = tmp_path / "old.csv"
    write_csv(old, [dict(r, late_jobs=None, jct_p95=None) for r in rows])

    def script(name: str, *args: str) -> tuple[int, str]:
        monkeypatch.setattr("sys.argv", [name, *args])
        with pytest.raises(SystemExit) as exit_:
            runpy.run_path(str(ROOT / "scripts" / name), run_name="__main__")
        return exit_.value.code, capsys.readouterr().out

    rerun = [str(old), "--trace", f"small.json={SMALL}", "--json-dir", str(tmp_path / "sims")]
    assert script("rerun_rows.py", *rerun, "-o", str(tmp_path / "new.csv"))[0] == 0
    code, out = script("rerun_rows.py", *rerun, "-o", str(tmp_path / "again.csv"))
    assert code == 0 and "from " in out and "simulated" not in out  # resumed from the JSON
    new = read_results(tmp_path / "new.csv")
    assert read_results(tmp_path / "again.csv") == [dict(r, cell_seconds=None) for r in new]
    kept = [c for c in COLUMNS if c not in TIMING_COLUMNS]
    assert [{c: r[c] for c in kept} for r in new] == [{c: r[c] for c in kept} for r in rows]
    code, out = script("same_results.py", "--filled", str(old), str(tmp_path / "new.csv"))
    assert code == 0 and "identical; 4 values empty" in out, out
    assert script("same_results.py", str(old), str(tmp_path / "new.csv"))[0] == 1
    write_csv(old, [dict(rows[0], total_cost=1.0), rows[1]])
    code, out = script("same_results.py", "--filled", str(old), str(tmp_path / "new.csv"))
    assert code == 1 and "total_cost" in out
