"""scripts/upper_report.py on ITP clusters from a directory (`--itp-dir`, `--clusters`): each
cluster imported as `gpuaas import elasticflow` does, its row beside the rows already there."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuaas.bounds import bound
from gpuaas.cli import cli
from gpuaas.instance import Instance
from gpuaas.simulator import simulate

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("upper_report", ROOT / "scripts" / "upper_report.py")
ur = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ur)

#: a cluster CSV in the repository's layout: 18 GPUs held for a quarter of its span, so N = 3
CLUSTER = (
    "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
    "a,100,10,resnet50,4000,64,8,3000\n"
    "b,400,10,bert,6000,32,8,3600\n"
    "c,900,10,vgg16,3000,64,2,1200\n"
    "d,5000,10,gpt2,9000,16,4,1800\n"
)
#: a generated row already in the CSV (kept as it is)
KEPT = {
    **dict.fromkeys(ur.COLUMNS, ""),
    **{"nodes": "10", "jobs": "100", "arrivals": "high", "trace_seed": "81", "restart": "0"},
    **{"bound": "1.0", "binding": "per_job", "default": "3.0", "best": "x seed 1", "upper": "2.0"},
}


def test_itp_dir_rows_are_the_imported_clusters(tmp_path, monkeypatch):
    """A cluster of `--itp-dir` gets the row of its import (N, J, bound, the default's cost as
    `gpuaas simulate` gives it, the cheapest run), the CSV's rows stay, a rerun computes
    nothing, the table names the cluster (`--itp-limit`: its first jobs, as `gpuaas import
    --limit`) and the page keeps its reading; a cluster missing from the directory is one line."""
    monkeypatch.setattr(ur, "PORTFOLIO", (("incremental", 1), ("greedy", 1)))
    (tmp_path / "cluster03.csv").write_text(CLUSTER)
    out, md = tmp_path / "upper.csv", tmp_path / "upper.md"
    ur.write(out, [KEPT])
    argv = ["--itp-dir", str(tmp_path), "--clusters", "3", "--restarts", "0", "-o", str(out)]
    ur.main([*argv, "--md", str(md)])
    kept, new = ur.read(out)
    assert kept == KEPT
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["import", "elasticflow", "cluster03.csv", "-o", "t.json"])
    assert res.exit_code == 0, res.output
    trace = Instance.from_dict(json.loads((tmp_path / "t.json").read_text()))
    default = simulate(trace, seed=1, overhead=0.0, startup=0.0, bound=False).total_cost
    runs = new["runs"].split(";")
    assert (new["arrivals"], new["nodes"], new["jobs"]) == ("itp-cluster03", "3", "4")
    assert trace.nodes == 3 and len(runs) == 2 and runs[0].startswith("incremental:1:")
    assert float(new["bound"]) == pytest.approx(bound(trace).bound, rel=1e-12)
    assert float(new["default"]) == pytest.approx(default, rel=1e-12)
    assert float(new["bound"]) <= float(new["upper"]) <= float(new["default"])
    assert float(new["upper"]) == pytest.approx(min(float(r.split(":")[2]) for r in runs), abs=1e-4)
    assert "| 3 | 4 | ITP cluster 3 | 0 |" in md.read_text()
    ur.main([*argv, "--itp-limit", "2", "--md", str(md)])  # gpuaas import --limit 2
    first = ur.read(out)[2]
    res = CliRunner().invoke(
        cli, ["import", "elasticflow", "cluster03.csv", "--limit", "2", "-o", "t2.json"]
    )
    assert "imported 2 of 4 jobs" in res.output and ", N = 1;" in res.output, res.output
    assert (first["arrivals"], first["nodes"], first["jobs"]) == ("itp-cluster03-first2", "1", "2")
    assert "| 1 | 2 | ITP cluster 3, first 2 jobs | 0 |" in md.read_text()

    def nothing(*args):
        raise AssertionError("a row in the CSV is computed again")

    monkeypatch.setattr(ur, "row", nothing)
    md.write_text(md.read_text() + "- cluster 3: read by hand\n")
    ur.main([*argv, "--report-only", "--md", str(md)])
    assert md.read_text().count(ur.NOTES) == 1
    assert md.read_text().endswith(ur.NOTES + "\n- cluster 3: read by hand\n")
    ur.main(argv)
    ur.main([*argv, "--itp-limit", "2"])
    with pytest.raises(SystemExit, match="cluster04.csv: no such file"):
        ur.main([*argv[:3], "3,4", "-o", str(out)])


def test_rebound_recomputes_only_the_bound(tmp_path):
    """`--rebound` computes each row's bound again from its trace (generated, or the ITP
    cluster of `--itp-dir`), keeps the upper and default values, and writes the table; an ITP
    row without `--itp-dir` keeps its bound."""
    (tmp_path / "cluster03.csv").write_text(CLUSTER)
    itp = {**KEPT, "arrivals": "itp-cluster03", "trace_seed": "0", "nodes": "3", "jobs": "4"}
    out, md = tmp_path / "upper.csv", tmp_path / "upper.md"
    ur.write(out, [KEPT, itp])
    ur.main(["--rebound", "-o", str(out)])
    gen, kept = ur.read(out)
    trace = Instance.from_dict(ur.generate_trace(10, seed=81, arrivals="high"))
    assert float(gen["bound"]) == pytest.approx(bound(trace).bound, rel=1e-12)
    assert {k: gen[k] for k in ("default", "upper", "best")} == {
        "default": "3.0",
        "upper": "2.0",
        "best": "x seed 1",
    }
    assert kept == itp
    ur.main(["--rebound", "--itp-dir", str(tmp_path), "-o", str(out), "--md", str(md)])
    _, new = ur.read(out)
    low = bound(ur.itp_trace(str(tmp_path / "cluster03.csv")))
    assert float(new["bound"]) == pytest.approx(low.bound, rel=1e-12)
    assert new["binding"] == low.binding and new["upper"] == "2.0"
    assert "ITP cluster 3" in md.read_text()


def test_redefault_reruns_only_the_defaults_run(tmp_path):
    """`--redefault` simulates each row's default run again (seed 1, noise 0, the row's restart
    cost), replaces `default` and its entry in `runs`, keeps the other runs, and lowers the
    upper value where the new run is cheaper; where the default's old run was the cheapest and
    the new one is dearer, `best` says so. An ITP row without `--itp-dir` is kept."""
    from gpuaas.simulator import simulate

    (tmp_path / "cluster03.csv").write_text(CLUSTER)
    trace = ur.itp_trace(str(tmp_path / "cluster03.csv"))
    cost = simulate(trace, "incremental", seed=1, overhead=600.0, startup=120.0, noise=0.0,
                    bound=False).total_cost  # fmt: skip
    itp = {**KEPT, "arrivals": "itp-cluster03", "trace_seed": "0", "nodes": "3", "jobs": "4",
           "restart": "600", "default": "1000000.0", "upper": "900000.0", "best": "greedy seed 1",
           "runs": "incremental:1:1000000.0000;greedy:1:900000.0000"}  # fmt: skip
    cheap = {**itp, "restart": "0", "upper": "1.0", "best": "incremental seed 1"}
    out = tmp_path / "upper.csv"
    ur.write(out, [itp, cheap])
    ur.main(["--redefault", "-o", str(out)])
    assert ur.read(out) == [itp, cheap]
    ur.main(["--redefault", "--itp-dir", str(tmp_path), "-o", str(out)])
    new, kept = ur.read(out)
    assert float(new["default"]) == cost and float(new["upper"]) == cost
    assert new["runs"] == f"incremental:1:{cost:.4f};greedy:1:900000.0000"
    assert new["best"] == "incremental seed 1"
    assert kept["upper"] == "1.0" and kept["best"] == "incremental seed 1, earlier code"
    assert kept["runs"].endswith(";greedy:1:900000.0000")


def test_add_vm_schedule_adds_the_member_to_the_rows_asked_for(tmp_path):
    """`--add-vm-schedule` runs the never-moving schedule alone for the rows of `--itp-dir
    --clusters` (and `--nodes`) already in the CSV: `vm-schedule:1:cost` joins their runs, the
    upper value is the cheaper of the two (its `best` "vm-schedule" where the member is
    cheaper), other rows stay as they were, and a rerun adds nothing."""
    from gpuaas.upper import upper

    (tmp_path / "cluster03.csv").write_text(CLUSTER)
    trace = ur.itp_trace(str(tmp_path / "cluster03.csv"))
    itp = {**KEPT, "arrivals": "itp-cluster03", "trace_seed": "0", "nodes": "3", "jobs": "4",
           "restart": "600", "runs": "incremental:1:1000000.0000", "upper": "1000000.0"}  # fmt: skip
    out, md = tmp_path / "upper.csv", tmp_path / "upper.md"
    ur.write(out, [KEPT, itp])
    argv = ["--itp-dir", str(tmp_path), "--clusters", "3", "--restarts", "600", "-o", str(out)]
    ur.main(["--add-vm-schedule", *argv, "--md", str(md)])
    kept, new = ur.read(out)
    assert kept == KEPT
    top = upper(trace, portfolio=(("incremental", 1),), time_limit=1e6, vm_schedule=True)
    cost = next(c for m, _, c in top.runs if m == "vm-schedule")
    assert new["runs"] == f"incremental:1:1000000.0000;vm-schedule:1:{cost:.4f}"
    assert float(new["upper"]) == cost and new["best"] == "vm-schedule"
    assert "vm-schedule |" in md.read_text()
    ur.main(["--add-vm-schedule", *argv])
    assert ur.read(out) == [kept, new]
