"""Trace importers (gavel, alibaba-pai-2020, csv) on hand-written samples, and throughput tables.

No data from the public traces: every sample here is written by hand in the documented layout.
"""

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from eventlog import check_against, recompute

from gpuaas.catalog import load_catalog
from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.importers import build_trace, parse_window, read_trace
from gpuaas.instance import Instance, load_instance
from gpuaas.simulator import simulate
from gpuaas.throughputs import load_throughputs, parse_throughputs

README = Path(__file__).resolve().parent.parent / "instances" / "README.md"

#: A Gavel-style throughput JSON (figures made up for the test, in Gavel's layout).
GAVEL_JSON = {
    "k80": {
        "('ResNet-18 (batch size 32)', 1)": {"null": 2.0, "('x', 1)": [1, 1]},
        "('ResNet-18 (batch size 32)', 2)": {"null": 3.0},
        "('ResNet-18 (batch size 32)', 4)": {"null": 5.0},
        "('LM (batch size 20)', 1)": {"null": 4.0},
        "('LM (batch size 20)', 2)": {"null": 0.0},
    },
    "v100": {"('ResNet-18 (batch size 32)', 1)": {"null": 8.0}},
    "k80_unconsolidated": {"('ResNet-18 (batch size 32)', 1)": {"null": 99.0}},
}

# Three jobs in the current 10-field layout; a job with an SLO of 2.
GAVEL_10 = (
    "ResNet-18 (batch size 32)\tpython3 main.py\tcifar10\t--num_steps\t1\t3600\t1\t1\t-1.000000\t0\n"
    "LM (batch size 20)\tpython3 main.py\tlm\t--steps\t1\t7200\t1\t1\t2.000000\t600.5\n"
    "ResNet-18 (batch size 32)\tpython3 main.py\tcifar10\t--num_steps\t1\t36000\t4\t1\t-1.000000\t1200\n"
)
# The 2019 7-field layout (Philly-derived msr traces): arrival before scale factor; 0 is skipped.
GAVEL_7 = (
    "ResNet-18 (batch size 32)\tcd %s && python3 main.py\t--num_steps\t1\t3600\t0.000000\t1\n"
    "LM (batch size 20)\tcd %s && python3 main.py\t--steps\t1\t400\t10.000000\t0\n"
    "LM (batch size 20)\tcd %s && python3 main.py\t--steps\t1\t400\t20.000000\t1\n"
)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text if isinstance(text, str) else json.dumps(text))
    return str(p)


def run(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(cli, args)


def times_of(job, vm):
    return job["times"][vm]


# -- gavel ------------------------------------------------------------------------------------


def test_gavel_maps_steps_scale_and_arrival(tmp_path):
    """times = total_steps / Gavel's isolated throughput; absent (gpu, count) stays null."""
    trace = write(tmp_path, "t.trace", GAVEL_10)
    table = load_throughputs(write(tmp_path, "thr.json", GAVEL_JSON))
    jobs, rep = read_trace("gavel", trace)
    data, rep = build_trace(
        jobs, trace, catalog="azure-2021", throughputs=table, nodes=2, report=rep
    )
    Instance.from_dict(data, "out")
    j1, lm, j3 = data["jobs"]
    assert [j["id"] for j in data["jobs"]] == ["j1", "j2", "j3"]
    assert [j["release"] for j in data["jobs"]] == [0.0, 600.5, 1200.0]
    assert times_of(j1, "NC24") == [1800.0, 1200.0, None, 720.0]  # 3600 / (2, 3, -, 5)
    assert times_of(j1, "NC48*")[4:] == [None] * 4
    assert "NV6" not in j1["times"]  # M60 is not in the table
    assert times_of(lm, "NC12") == [1800.0, None]  # throughput 0 = does not run
    assert lm["due"] == pytest.approx(600.5 + 2.0 * 1800.0)  # SLO x fastest time
    assert j3["times"]["NC24"] == [18000.0, 12000.0, None, 7200.0]  # any GPU count by default
    assert rep.drawn_due == 2 and rep.drawn_weight == 3


def test_gavel_requested_gpu_counts_and_old_layout(tmp_path):
    """--gpu-counts requested keeps the trace's scale factor; the 7-field layout skips scale 0."""
    trace = write(tmp_path, "old.trace", GAVEL_7)
    table = load_throughputs(write(tmp_path, "thr.json", GAVEL_JSON))
    jobs, rep = read_trace("gavel", trace)
    assert [j.line for j in jobs] == [1, 3] and rep.dropped == {
        "scale factor 0 (Gavel skips them too)": 1
    }
    data, _ = build_trace(jobs, trace, throughputs=table, gpu_counts="requested", report=rep)
    assert data["jobs"][0]["times"]["NC24"] == [1800.0, None, None, None]
    assert data["jobs"][1]["release"] == 20.0 and data["nodes"] == 1  # ceil(2 / 10)


def test_gavel_json_keeps_only_consolidated_positive_rates(tmp_path):
    table = load_throughputs(write(tmp_path, "thr.json", GAVEL_JSON))
    assert table.rates[("ResNet-18 (batch size 32)", "K80", 1)] == 2.0
    assert ("LM (batch size 20)", "K80", 2) not in table.rates
    assert all(gpu in ("K80", "V100") for _, gpu, _ in table.rates)


def test_seeded_draws_follow_the_paper_rules(tmp_path):
    """due - release in [1, 3] x fastest time, weight in [0.003, 0.015]; same seed, same file."""
    rows = "id,submit,gpus,model,steps\n" + "".join(
        f"j{i},{i * 100},1,alexnet/pytorch,{1000 + i}\n" for i in range(40)
    )
    src = write(tmp_path, "t.csv", rows)
    table = load_throughputs("performance-model")
    a, _ = build_trace(*_read("csv", src), throughputs=table, seed=7)
    b, _ = build_trace(*_read("csv", src), throughputs=table, seed=7)
    c, _ = build_trace(*_read("csv", src), throughputs=table, seed=8)
    assert a == b and a != c
    inst = Instance.from_dict(a)
    ratio = (inst.due - inst.release) / inst.min_time
    assert ratio.min() >= 1.0 and ratio.max() <= 3.0
    assert inst.weight.min() >= 0.003 and inst.weight.max() <= 0.015


def _read(fmt, src):
    jobs, rep = read_trace(fmt, src)
    return (jobs, src)


# -- csv --------------------------------------------------------------------------------------

CSV = """# a hand-written trace
id,submit,gpus,model,steps,epochs,steps_per_epoch,duration,gpu,due,weight
a,100,1,resnet50/pytorch,2000,,,,,,
b,160,2,vgg19/tensorflow,,3,500,,,90000,0.01
c,300,2,,,,,7200,K80,,
d,400,4,,,,,3600,M60,,0.004
"""


def test_csv_maps_every_column(tmp_path):
    src = write(tmp_path, "t.csv", CSV)
    table = load_throughputs("performance-model")
    jobs, rep = read_trace("csv", src)
    data, _ = build_trace(jobs, src, throughputs=table, nodes=3, report=rep)
    a, b, c, d = data["jobs"]
    assert [j["release"] for j in data["jobs"]] == [0.0, 60.0, 200.0, 300.0]
    rate = table.rates[("resnet50/pytorch", "K80", 1)]
    assert a["times"]["NC6"] == [pytest.approx(2000 / rate)]
    assert b["times"]["NC6"] == [pytest.approx(1500 / table.rates[("vgg19/tensorflow", "K80", 1)])]
    assert b["due"] == 90000 - 100 and b["weight"] == 0.01  # given due date shifted with the trace
    assert c["times"] == {
        "NC12": [None, 7200.0],
        "NC24": [None, 7200.0, None, None],
        "NC48*": [None, 7200.0] + [None] * 6,
    }
    assert set(d["times"]) == {"NV24", "NV48*"} and d["weight"] == 0.004


def test_duration_jobs_on_any_gpu_and_unrunnable(tmp_path):
    """A duration measured on an unknown GPU is an error, or runs anywhere with --any-gpu."""
    src = write(tmp_path, "t.csv", "id,submit,gpus,duration,gpu\nx,0,2,100,P100\ny,5,16,100,K80\n")
    jobs, rep = read_trace("csv", src)
    with pytest.raises(
        InputError, match=r"line 2: job 'x': no configuration of catalog 'azure-2021'"
    ):
        build_trace(jobs, src)
    data, rep = build_trace(jobs, src, any_gpu=True, skip_unrunnable=True, report=rep)
    assert [j["id"] for j in data["jobs"]] == ["x"] and rep.dropped == {
        "not runnable on azure-2021": 1
    }
    assert set(data["jobs"][0]["times"]) == {"NC12", "NC24", "NV12", "NV24", "NC48*", "NV48*"}


def test_window_and_limit(tmp_path):
    src = write(
        tmp_path,
        "t.csv",
        "id,submit,gpus,duration,gpu\n" + "".join(f"j{i},{i * 10},1,50,K80\n" for i in range(10)),
    )
    jobs, rep = read_trace("csv", src)
    data, rep = build_trace(jobs, src, window=parse_window("25:75"), limit=3, report=rep)
    assert [j["id"] for j in data["jobs"]] == ["j3", "j4", "j5"] and data["jobs"][0][
        "release"
    ] == 0.0
    assert rep.dropped == {"outside --window": 5, "past --limit": 2}
    assert parse_window(":100") == (0.0, 100.0) and parse_window("5:") == (5.0, math.inf)


# -- alibaba-pai-2020 -------------------------------------------------------------------------

PAI_JOBS = """j1,i1,u1,Terminated,1000.0,5000.0
j2,i2,u1,Failed,1100.0,1200.0
j3,i3,u2,Terminated,1200.0,9000.0
j4,i4,u2,Terminated,1300.0,1500.0
j5,i5,u3,Running,1400.0,
"""
PAI_TASKS = """j1,worker,2.0,Terminated,1100.0,4100.0,600.0,29.3,100.0,V100
j1,ps,1.0,Terminated,1050.0,4200.0,400.0,10.0,,
j3,tensorflow,1.0,Terminated,1500.0,8500.0,600.0,29.3,50.0,T4
j4,worker,1.0,Terminated,1300.0,1500.0,600.0,29.3,,
"""


def test_pai_job_and_task_tables(tmp_path):
    """Terminated GPU jobs only; duration = task span; GPUs = ceil(sum inst_num x plan_gpu / 100)."""
    (tmp_path / "pai_job_table.csv").write_text(PAI_JOBS)
    (tmp_path / "pai_task_table.csv").write_text(PAI_TASKS)
    jobs, rep = read_trace("alibaba-pai-2020", str(tmp_path))
    assert rep.dropped == {"status Failed": 1, "status Running": 1, "without GPUs (CPU-only)": 1}
    by = {j.id: j for j in jobs}
    assert (by["j1"].gpus, by["j1"].duration, by["j1"].gpu, by["j1"].submit) == (
        2,
        3150.0,
        "V100",
        1000.0,
    )
    assert (by["j3"].gpus, by["j3"].duration, by["j3"].gpu) == (1, 7000.0, "T4")
    data, rep = build_trace(jobs, str(tmp_path), catalog="azure-eastus", report=rep)
    j1, j3 = data["jobs"]
    assert j1["times"] == {"NC12s_v3": [None, 3150.0], "NC24s_v3": [None, 3150.0, None, None]}
    assert j3["times"] == {"NC4as_T4_v3": [7000.0], "NC64as_T4_v3": [7000.0, None, None, None]}
    assert j3["release"] == 200.0


# -- malformed input: one line naming file, line and field ------------------------------------

#: (case, format, file name, content, error after "gpuaas: error: ").
BAD = [
    (
        "gavel-fields",
        "gavel",
        "bad.trace",
        "ResNet-18 (batch size 32)\tcmd\t1\t2\n",
        "bad.trace: line 1: has 4 tab-separated field(s); a Gavel trace line has 10 (or 9, or 7 in the 2019 layout)",
    ),
    (
        "gavel-negative-arrival",
        "gavel",
        "bad.trace",
        GAVEL_10.replace("\t600.5\n", "\t-600.5\n"),
        "bad.trace: line 2: arrival_time: must be >= 0, got '-600.5'",
    ),
    (
        "gavel-steps",
        "gavel",
        "bad.trace",
        GAVEL_10.replace("\t3600\t", "\tmany\t"),
        "bad.trace: line 1: total_steps: must be an integer, got 'many'",
    ),
    (
        "gavel-unknown-model",
        "gavel",
        "bad.trace",
        GAVEL_10.replace("LM (batch size 20)", "BERT"),
        "bad.trace: line 2: model: unknown model 'BERT': not in throughput table thr.json",
    ),
    (
        "csv-missing-value",
        "csv",
        "bad.csv",
        "id,submit,gpus,duration,gpu\na,0,,10,K80\n",
        "bad.csv: line 2: gpus: missing required value",
    ),
    (
        "csv-missing-column",
        "csv",
        "bad.csv",
        "id,gpus,duration\na,1,10\n",
        "bad.csv: line 1: missing column(s) submit",
    ),
    (
        "csv-negative-submit",
        "csv",
        "bad.csv",
        "id,submit,gpus,duration,gpu\na,-5,1,10,K80\n",
        "bad.csv: line 2: submit: must be >= 0, got '-5'",
    ),
    (
        "csv-negative-duration",
        "csv",
        "bad.csv",
        "id,submit,gpus,duration,gpu\na,5,1,-10,K80\n",
        "bad.csv: line 2: duration: must be > 0, got '-10'",
    ),
    (
        "csv-due-before-submit",
        "csv",
        "bad.csv",
        "id,submit,gpus,duration,gpu,due\na,1000,1,60,K80,10\n",
        "bad.csv: line 2: due: is before submit (10 < 1000); due is an absolute time on the "
        "submit clock",
    ),
    (
        "csv-unknown-column",
        "csv",
        "bad.csv",
        "id,submit,gpus,duration,wieght\na,0,1,10,1\n",
        "bad.csv: line 1: unknown column(s) wieght; allowed: id, submit, gpus, model, steps, epochs, steps_per_epoch, duration, gpu, due, weight",
    ),
    (
        "csv-no-work",
        "csv",
        "bad.csv",
        "id,submit,gpus,gpu\na,0,1,K80\n",
        "bad.csv: line 2: needs a model (with steps) or a duration",
    ),
    (
        "csv-duplicate-id",
        "csv",
        "bad.csv",
        "id,submit,gpus,duration,gpu\na,0,1,10,K80\na,5,1,10,K80\n",
        "bad.csv: line 3: id: duplicate job id 'a' (first on line 2)",
    ),
    (
        "csv-unknown-model",
        "csv",
        "bad.csv",
        "id,submit,gpus,model,steps\na,0,1,bert,100\n",
        "bad.csv: line 2: model: unknown model 'bert': not in throughput table thr.json",
    ),
    (
        "csv-short-row",
        "csv",
        "bad.csv",
        "id,submit,gpus,duration,gpu\na,0,1\n",
        "bad.csv: line 2: has 3 field(s), the header has 5",
    ),
    (
        "pai-end-before-start",
        "alibaba-pai-2020",
        "pai",
        (
            "j1,i1,u1,Terminated,1000.0,5000.0\n",
            "j1,w,1.0,Terminated,4000.0,3000.0,600.0,29.3,100.0,V100\n",
        ),
        "pai/pai_task_table.csv: line 1: end_time: is before start_time (3000.0 < 4000.0)",
    ),
    (
        "pai-missing-start",
        "alibaba-pai-2020",
        "pai",
        (
            "j1,i1,u1,Terminated,,5000.0\n",
            "j1,w,1.0,Terminated,4000.0,4500.0,600.0,29.3,100.0,V100\n",
        ),
        "pai/pai_job_table.csv: line 1: start_time: missing required value",
    ),
    (
        "pai-fields",
        "alibaba-pai-2020",
        "pai",
        ("j1,i1,u1,Terminated\n", ""),
        "pai/pai_job_table.csv: line 1: has 4 field(s); expected 6: job_name,inst_id,user,status,start_time,end_time",
    ),
    (
        "throughput-duplicate",
        "csv",
        "bad.csv",
        "id,submit,gpus,model,steps\na,0,1,m,100\n",
        "thr.csv: line 3: (m, K80, 1) given twice",
    ),
    (
        "throughput-rate",
        "csv",
        "bad.csv",
        "id,submit,gpus,model,steps\na,0,1,m,100\n",
        "thr.csv: line 2: steps_per_second: must be > 0, got '0'",
    ),
]

BAD += [
    (
        "ef-missing-column",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,num_gpu\na,0,1\n",
        "bad.csv: line 1: missing column(s) duration",
    ),
    (
        "ef-unknown-column",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,num_gpu,duration,user\na,0,1,60,x\n",
        "bad.csv: line 1: unknown column(s) user; allowed: job_id, submission_time, num_gpu, "
        "duration, num_iteration, model_name, deadline, batch_size",
    ),
    (
        "ef-gpus",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,duration,num_gpu\na,0,60,1\nb,5,60,0.5\n",
        "bad.csv: line 3: num_gpu: must be an integer, got '0.5'",
    ),
    (
        "ef-duration",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,duration,num_gpu\na,0,0,1\n",
        "bad.csv: line 2: duration: must be > 0, got '0'",
    ),
    (
        "ef-missing-deadline",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
        "a,0,10,m,,64,1,60\n",
        "bad.csv: line 2: deadline: missing required value",
    ),
    (
        "ef-duplicate-id",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,duration,num_gpu\na,0,60,1\na,5,60,1\n",
        "bad.csv: line 3: job_id: duplicate job id 'a' (first on line 2)",
    ),
    (
        "ef-short-row",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,duration,num_gpu\na,0,60\n",
        "bad.csv: line 2: has 3 field(s), the header has 4",
    ),
    (
        "ef-deadline-before-submission",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
        "a,1000,10,m,-1e8,64,1,60\n",
        "bad.csv: line 2: deadline: is before submission_time (-1e+08 < 1000)",
    ),
    (
        "ef-no-anchor",
        "elasticflow",
        "bad.csv",
        "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
        "a,0,10,m,100,64,1,60\n",
        "bad.csv: line 2: model: job 'a': throughput table thr.csv has no rate for 'm' on "
        "1 x A100 to anchor its measured duration",
    ),
]

THR_CSV = {
    "throughput-duplicate": "model,gpu,gpus,steps_per_second\nm,K80,1,2\nm,k80,1,3\n",
    "throughput-rate": "model,gpu,gpus,steps_per_second\nm,K80,1,0\n",
}


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_malformed_rows_one_line_exit_2_no_output(tmp_path, monkeypatch, case):
    """`gpuaas import`: exit 2, exactly this line on stderr, no traceback, no output file."""
    name, fmt, fname, content, message = case
    if fmt == "alibaba-pai-2020":
        (tmp_path / fname).mkdir()
        (tmp_path / fname / "pai_job_table.csv").write_text(content[0])
        (tmp_path / fname / "pai_task_table.csv").write_text(content[1])
    else:
        write(tmp_path, fname, content)
    if name in THR_CSV:
        thr = write(tmp_path, "thr.csv", THR_CSV[name])
    elif fmt == "gavel" or name == "csv-unknown-model":
        thr = write(tmp_path, "thr.json", GAVEL_JSON)
    else:
        thr = write(tmp_path, "thr.csv", "model,gpu,gpus,steps_per_second\nm,K80,1,2\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    res = run(
        ["import", fmt, fname, "--throughputs", Path(thr).name, "-o", "out.json"],
        tmp_path,
        monkeypatch,
    )
    assert res.exit_code == 2, res.output
    assert res.output == f"gpuaas: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# -- elasticflow ---------------------------------------------------------------------------------

SAMPLE = Path(__file__).resolve().parent.parent / "instances" / "elasticflow-sample.csv"
EF_RAW = "job_id,submission_time,duration,num_gpu\nb,500,7200,4\na,100,3600,16\n"


def test_elasticflow_sample_imports_with_the_documented_defaults(tmp_path, monkeypatch):
    """`gpuaas import elasticflow cluster.csv -o t.json` as it stands: gcp-us-central1, the
    performance-model table, durations anchored on A100, N from the GPU demand; the measured
    duration is the time on the requested A100 count (folded onto 8 GPUs above 8)."""
    res = run(["import", "elasticflow", str(SAMPLE), "-o", "t.json"], tmp_path, monkeypatch)
    assert res.exit_code == 0, res.output
    assert "260 of 260 jobs" in res.output and "catalog gcp-us-central1" in res.output
    assert "2 over 8 GPUs folded onto one 8-GPU VM" in res.output
    data = json.loads((tmp_path / "t.json").read_text())
    rows = list(csv.DictReader(line for line in SAMPLE.open() if not line.startswith("#")))
    assert data["catalog"] == "gcp-us-central1" and len(data["jobs"]) == len(rows) == 260
    offset = min(float(r["submission_time"]) for r in rows)
    vm = {1: "a2-highgpu-1g", 2: "a2-highgpu-2g", 4: "a2-highgpu-4g", 8: "a2-highgpu-8g"}
    by_id = {j["id"]: j for j in data["jobs"]}
    for r in rows:
        job, g, d = by_id[r["job_id"]], int(r["num_gpu"]), float(r["duration"])
        assert job["release"] == float(r["submission_time"]) - offset
        assert job["due"] == float(r["deadline"]) - offset
        fold = max(1, g / 8)
        assert job["times"][vm[min(g, 8)]][min(g, 8) - 1] == pytest.approx(d * fold, rel=1e-9)
    # N: the 95th percentile of the GPUs held (from submission, for the duration) over 8
    level, events = 0, []
    for r in rows:
        g, d = int(r["num_gpu"]), float(r["duration"])
        s = float(r["submission_time"])
        events += [(s, g), (s + d, -g)]
    events.sort(key=lambda e: (e[0], e[1]))
    lo, hi = min(e[0] for e in events), max(float(r["submission_time"]) for r in rows)
    spans = []
    for (t, dg), (t2, _) in zip(events, events[1:]):
        level += dg
        spans.append((level, max(0.0, min(t2, hi) - max(t, lo))))
    spans.sort()
    total, acc = sum(w for _, w in spans), 0.0
    p95 = next(lev for lev, w in spans if (acc := acc + w) >= 0.95 * total)
    assert data["nodes"] == math.ceil(p95 / 8)


def test_elasticflow_raw_layout_runs_at_the_requested_count(tmp_path):
    """Without a model the job runs in its duration on exactly its GPUs of the measured-on GPU;
    a 16-GPU job keeps its GPU-seconds on 8; the due date is drawn."""
    src = write(tmp_path, "raw.csv", EF_RAW)
    jobs, rep = read_trace("elasticflow", src)
    data, rep = build_trace(jobs, src, catalog="gcp-us-central1", measured_on="A100", report=rep)
    a, b = data["jobs"]
    assert (a["id"], a["release"], b["release"]) == ("a", 0.0, 400.0)
    assert a["times"] == {"a2-highgpu-8g": [None] * 7 + [7200.0]}
    assert b["times"]["a2-highgpu-4g"] == [None, None, None, 7200.0]
    assert set(b["times"]) == {"a2-highgpu-4g", "a2-highgpu-8g"} and rep.drawn_due == 2
    with pytest.raises(InputError, match="measured on 8 x unknown GPU"):
        build_trace(jobs, src, catalog="gcp-us-central1")


def test_elasticflow_model_names_the_table_before_its_stand_in(tmp_path):
    """A table with the trace's own model name times it; otherwise MODEL_MAP's stand-in does."""
    src = write(
        tmp_path,
        "ef.csv",
        "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
        "a,0,10,bert,9000,64,2,3000\n",
    )
    own = parse_throughputs(
        "model,gpu,gpus,steps_per_second\nbert,A100,1,1\nbert,A100,2,1.5\n", "t"
    )
    jobs, _ = read_trace("elasticflow", src)
    data, _ = build_trace(jobs, src, catalog="gcp-us-central1", throughputs=own, measured_on="A100")
    assert data["jobs"][0]["times"]["a2-highgpu-2g"] == [4500.0, 3000.0]  # 4500 steps
    model = load_throughputs("performance-model")
    data, _ = build_trace(
        jobs, src, catalog="gcp-us-central1", throughputs=model, measured_on="A100"
    )
    steps = 3000 * model.rates[("vgg19/pytorch", "A100", 2)]
    one = data["jobs"][0]["times"]["a2-highgpu-1g"][0]
    assert one == pytest.approx(steps / model.rates[("vgg19/pytorch", "A100", 1)])


def test_nodes_rules(tmp_path, monkeypatch):
    """--nodes takes a number, `jobs` (ceil(J / 10)) or `demand`; anything else is one line."""
    write(tmp_path, "raw.csv", EF_RAW + "c,900,3600,8\n")  # 8 GPUs in [100, 500), then 12
    for nodes, expect in (("3", 3), ("jobs", 1), ("demand", 2)):
        res = run(
            ["import", "elasticflow", "raw.csv", "--nodes", nodes, "-o", "o.json"],
            tmp_path,
            monkeypatch,
        )
        assert res.exit_code == 0, res.output
        assert json.loads((tmp_path / "o.json").read_text())["nodes"] == expect
    res = run(
        ["import", "elasticflow", "raw.csv", "--nodes", "many", "-o", "x.json"],
        tmp_path,
        monkeypatch,
    )
    assert res.exit_code == 2 and not (tmp_path / "x.json").exists()
    assert (
        res.output
        == "gpuaas: error: --nodes: must be an integer >= 1 or one of jobs, demand, got 'many'\n"
    )


def test_readme_lists_every_import_error():
    """instances/README.md shows each malformed import case with its exact message."""
    text = README.read_text()
    for name, *_, message in BAD:
        assert f"`{name}`" in text, name
        assert message.replace("|", "\\|") in text, name


def test_gavel_needs_a_throughput_table(tmp_path, monkeypatch):
    write(tmp_path, "t.trace", GAVEL_10)
    res = run(["import", "gavel", "t.trace", "-o", "out.json"], tmp_path, monkeypatch)
    assert (
        res.exit_code == 2
        and "--throughputs: the gavel format needs a throughput table" in res.output
    )


# -- round trip: import -> simulate -> reconciled event log ------------------------------------


@pytest.mark.parametrize("method", ["greedy", "edf"])
def test_imported_traces_simulate_with_a_reconciled_event_log(tmp_path, monkeypatch, method):
    """The CLI's output is a normal trace: it loads, simulates, and the event log adds up."""
    write(
        tmp_path,
        "t.trace",
        GAVEL_10 + GAVEL_10.replace("\t0\n", "\t5000\n").replace("\t1200\n", "\t9000\n"),
    )
    write(tmp_path, "thr.json", GAVEL_JSON)
    write(tmp_path, "t.csv", CSV)
    for fmt, src, thr in (("gavel", "t.trace", "thr.json"), ("csv", "t.csv", "performance-model")):
        out = f"{fmt}.json"
        res = run(
            ["import", fmt, src, "--throughputs", thr, "--nodes", "2", "-o", out],
            tmp_path,
            monkeypatch,
        )
        assert res.exit_code == 0, res.output
        assert re.match(r"imported \d+ of \d+ jobs from ", res.output)
        trace = load_instance(tmp_path / out)
        log = tmp_path / f"{fmt}-{method}.jsonl"
        result = simulate(trace, method, log=log).to_dict()
        assert check_against(recompute(log, trace), result, trace) == []


# -- throughput tables --------------------------------------------------------------------------


def test_throughput_csv_scaling_rule():
    table = parse_throughputs("model,gpu,gpus,steps_per_second\nm,V100,1,2\nm,V100,4,6\n", "t.csv")
    cat = load_catalog("azure-eastus")
    none = table.job_times("m", 60.0, cat)
    lin = table.job_times("m", 60.0, cat, scaling="linear")
    c = lambda vm, g: cat.config(cat.vm_index(vm), g)  # noqa: E731
    assert none[c("NC12s_v3", 2)] == math.inf and lin[c("NC12s_v3", 2)] == pytest.approx(15.0)
    assert none[c("NC24s_v3", 4)] == lin[c("NC24s_v3", 4)] == pytest.approx(10.0)
    assert np.isinf(lin[c("NC4as_T4_v3", 1)])  # another GPU model is never extrapolated


def test_bundled_throughput_table_is_the_performance_model():
    """Every figure of the bundled table is derived from gpuaas.performance (and stays so)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "mk", Path(__file__).resolve().parent.parent / "scripts" / "make_throughput_table.py"
    )
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    assert mk.OUT.read_text() == mk.render()
    from gpuaas.performance import job_time

    table = load_throughputs("performance-model")
    one_epoch = job_time("resnet50", "V100", 4, epochs=1)  # Table 3 batch and dataset
    steps = math.ceil(130_000 / 64)
    assert steps / table.rates[("resnet50/pytorch", "V100", 4)] == pytest.approx(
        one_epoch, rel=1e-5
    )


def test_readme_quick_start_sample_imports(tmp_path, monkeypatch):
    """The README's first import command works on the bundled hand-written sample."""
    sample = Path(__file__).resolve().parent.parent / "instances" / "trace-sample.csv"
    res = run(
        [
            "import",
            "csv",
            str(sample),
            "--throughputs",
            "performance-model",
            "--catalog",
            "aws-us-east-1",
            "-o",
            "trace.json",
        ],
        tmp_path,
        monkeypatch,
    )
    assert res.exit_code == 0, res.output
    trace = load_instance(tmp_path / "trace.json")
    assert trace.n_jobs == 6 and trace.catalog.name == "aws-us-east-1"
    assert (
        "quick start" not in res.output
        and "--catalog aws-us-east-1 -o trace.json"
        in README.parent.parent.joinpath("README.md").read_text()
    )
