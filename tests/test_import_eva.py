"""The `eva` import format: Eva's trace JSON and EC2 config, on hand-written samples.

Nothing of Eva's repository (no license) is used: the samples are written here in its layout.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from eventlog import check_against, recompute

from gpuaas.bounds import bound
from gpuaas.cli import cli
from gpuaas.importers import build_trace, read_trace
from gpuaas.importers.eva import UNMEASURED, read_eva_catalog
from gpuaas.instance import load_instance
from gpuaas.simulator import simulate

README = Path(__file__).resolve().parent.parent / "instances" / "README.md"


def task(demand, family="any"):
    return {"name": "node0", "demand": {family: demand}, "shm_size": 4, "image_id": 1}


def job(name, arrival, duration, *tasks):
    return {
        "name": name,
        "arrival_time": arrival,
        "duration": duration,
        "init_delay": 60,
        "full_throughput": 1.0,
        "total_iters": duration,
        "support_throughput_aware": True,
        "tasks": {str(k): t for k, t in enumerate(tasks)},
    }


#: one-GPU job on any family, a CPU-only job, a two-task job on p3, a one-GPU job on g5
TRACE = {
    "0": job("resnet18[0]", 600, 7200, task([1, 12, 16])),
    "1": job("openfoam[0]", 900, 3600, task([0, 8, 30])),
    "2": job("gpt2[0]", 1200, 5400, task([1, 4, 23], "p3"), task([1, 4, 23], "p3")),
    "3": job("vit[0]", 1500, 1800, task([1, 8, 30], "g5")),
}
#: Eva's EC2 config layout: [GPUs, CPU cores, memory GB], $/hour, family
CONFIG = {
    "region": "us-east-1",
    "instance_types": {
        "p3.2xlarge": {"capacity": [1, 4, 61], "cost": 3.06, "family": "p3"},
        "p3.8xlarge": {"capacity": [4, 16, 244], "cost": 12.24, "family": "p3"},
        "c7i.large": {"capacity": [0, 1, 4], "cost": 0.08925, "family": "c7i"},
        "c7i.4xlarge": {"capacity": [0, 8, 32], "cost": 0.714, "family": "c7i"},
    },
}


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data, indent=4))
    return str(p)


def run(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(cli, args)


def test_gpu_jobs_mapped_cpu_only_dropped_with_the_format_defaults(tmp_path, monkeypatch):
    """`gpuaas import eva trace.json`: aws-us-east-1, "any" on V100, a job's demands summed
    over its tasks on one VM of its family's GPU, Eva's CPUs as two vCPUs each (a type that
    lacks them cannot run the job), the CPU-only job dropped and counted: the catalog has no
    GPU-less type."""
    write(tmp_path, "t.json", TRACE)
    res = run(["import", "eva", "t.json", "-o", "out.json"], tmp_path, monkeypatch)
    assert res.exit_code == 0, res.output
    assert "3 of 4 jobs" in res.output and "catalog aws-us-east-1" in res.output
    assert "dropped: 1 CPU-only (catalog aws-us-east-1 has no GPU-less type)" in res.output
    assert "changed: 1 tasks placed on one VM, demands summed;" in res.output
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["catalog"] == "aws-us-east-1"
    jobs = {j["id"]: j for j in data["jobs"]}
    assert sorted(jobs) == ["0", "2", "3"]
    assert [jobs[k]["release"] for k in ("0", "2", "3")] == [0.0, 600.0, 900.0]
    assert jobs["0"]["times"] == {  # 24 vCPUs: not on a p3.2xlarge (8)
        "p3.8xlarge": [7200.0, None, None, None],
        "p3.16xlarge": [7200.0] + [None] * 7,
    }
    assert (jobs["0"]["cpus"], jobs["0"]["memory"]) == (24.0, 16.0)
    assert (jobs["2"]["cpus"], jobs["2"]["memory"]) == (16.0, 46.0)
    assert jobs["2"]["times"] == {
        "p3.8xlarge": [None, 5400.0, None, None],
        "p3.16xlarge": [None, 5400.0] + [None] * 6,
    }
    assert set(jobs["3"]["times"]) == {"g5.12xlarge", "g5.48xlarge"}  # 16 vCPUs, 30 GiB
    assert jobs["3"]["times"]["g5.12xlarge"] == [1800.0, None, None, None]


def test_eva_config_is_the_catalog_of_its_gpu_types(tmp_path, monkeypatch):
    """Eva's EC2 config as --catalog: its GPU types (V100 by family) and its CPU types as
    GPU-less types; the GPU jobs' times on p3 equal those on the bundled catalog, whose p3
    prices are the same; the CPU-only job runs its duration on the CPU type that holds it."""
    cat = read_eva_catalog(write(tmp_path, "ec2_config.json", CONFIG))
    assert cat.vm_names == ("p3.2xlarge", "p3.8xlarge", "c7i.large", "c7i.4xlarge")
    assert cat.gpu_models == ("V100", "V100", "", "") and list(cat.gpus) == [1, 4, 0, 0]
    assert list(cat.cost_per_hour) == [3.06, 12.24, 0.08925, 0.714]
    assert cat.info["region"] == "us-east-1"
    assert list(cat.vcpus) == [8, 32, 2, 16] and list(cat.memory) == [61, 244, 4, 32]
    write(tmp_path, "t.json", TRACE)
    res = run(
        ["import", "eva", "t.json", "--catalog", "ec2_config.json", "-o", "out.json"],
        tmp_path,
        monkeypatch,
    )
    assert res.exit_code == 2 and "job '3'" in res.output and "no configuration" in res.output
    res = run(
        ["import", "eva", "t.json", "--catalog", "ec2_config.json", "--skip-unrunnable"]
        + ["-o", "out.json"],
        tmp_path,
        monkeypatch,
    )
    assert res.exit_code == 0, res.output
    own = json.loads((tmp_path / "out.json").read_text())
    assert own["catalog"]["vm_types"][0] == {
        "name": "p3.2xlarge",
        "gpu": "V100",
        "gpus": 1,
        "cost_per_hour": 3.06,
        "vcpus": 8,
        "memory": 61.0,
    }
    jobs, rep = read_trace("eva", str(tmp_path / "t.json"))
    bundled, _ = build_trace(
        [j for j in jobs if j.id != "3"], "t.json", catalog="aws-us-east-1", measured_on="V100"
    )
    cpu_only = next(j for j in own["jobs"] if j["id"] == "1")
    assert cpu_only["times"] == {"c7i.4xlarge": [3600.0]}  # 16 vCPUs, 30 GiB: not c7i.large
    assert (cpu_only["cpus"], cpu_only["memory"]) == (16.0, 30.0)
    for a, b in zip([j for j in own["jobs"] if j["id"] != "1"], bundled["jobs"]):
        assert a["id"] == b["id"] and a["cpus"] == b["cpus"] and a["memory"] == b["memory"]
        assert a["times"] == {vm: t for vm, t in b["times"].items() if vm in a["times"]}
        assert a["times"] and set(a["times"]) <= {"p3.2xlarge", "p3.8xlarge"}


def test_imported_trace_simulates_reconciled_above_its_bound(tmp_path, monkeypatch):
    write(tmp_path, "t.json", TRACE)
    res = run(["import", "eva", "t.json", "-o", "out.json"], tmp_path, monkeypatch)
    assert res.exit_code == 0, res.output
    trace = load_instance(tmp_path / "out.json")
    log = tmp_path / "log.jsonl"
    result = simulate(trace, "greedy", log=log).to_dict()
    assert check_against(recompute(log, trace), result, trace) == []
    assert bound(trace).bound <= result["total_cost"] + 1e-6


BAD = [
    (
        "eva-duration",
        "bad.json",
        '{\n "0": {"arrival_time": 5, "duration": 0, "tasks": {"0": {"demand": {"any": [1, 2, 3]}}}}\n}\n',
        "bad.json: line 2: job '0': duration: must be > 0, got 0",
    ),
    (
        "eva-missing-duration",
        "bad.json",
        '{"0": {"arrival_time": 5, "tasks": {"0": {"demand": {"any": [1, 2, 3]}}}}}\n',
        "bad.json: line 1: job '0': duration: missing required value",
    ),
    (
        "eva-demand",
        "bad.json",
        '{"0": {"arrival_time": 5, "duration": 10,\n "tasks": {"0": {"demand": {"any": [1, 2]}}}}}\n',
        "bad.json: line 1: job '0': tasks.0.demand: must be [GPUs, CPUs, memory], got [1, 2]",
    ),
    (
        "eva-gpus",
        "bad.json",
        '{"a": {"arrival_time": 5, "duration": 10, "tasks": {"0": {"demand": {"any": [0.5, 2, 3]}}}}}\n',
        "bad.json: line 1: job 'a': tasks.0.demand: GPUs: must be an integer >= 0, got 0.5",
    ),
    (
        "eva-family",
        "bad.json",
        '{"0": {"arrival_time": 5, "duration": 10, "tasks": {"0": {"demand": {"x9": [1, 2, 3]}}}}}\n',
        "bad.json: line 1: job '0': tasks.0.demand: unknown GPU instance family 'x9'; known: "
        "any, p2, p3, p4d, p5, g4dn, g5, g6",
    ),
    (
        "eva-not-object",
        "bad.json",
        "[1, 2]\n",
        "bad.json: must be an object of jobs by key, got [1, 2]",
    ),
    (
        "eva-catalog-family",
        "cat.json",
        '{"instance_types": {"z.large": {"capacity": [1, 1, 4], "cost": 0.1, "family": "z"}}}',
        "cat.json: instance_types.z.large.family: unknown GPU instance family 'z'; known: p2, p3, "
        "p4d, p5, g4dn, g5, g6",
    ),
    (
        "eva-contention-cell",
        "con.csv",
        ",resnet18_node0,gpt2_node0\nresnet18_node0,0.9,fast\ngpt2_node0,0.8,x\n",
        "con.csv: line 2: gpt2_node0: must be a throughput share or x (not measured), got 'fast'",
    ),
    (
        "eva-contention-fields",
        "con.csv",
        ",resnet18_node0,gpt2_node0\nresnet18_node0,0.9\n",
        "con.csv: line 2: has 2 fields, the header 3",
    ),
    (
        "eva-contention-speed",
        "con.csv",
        ",resnet18_node0\nresnet18_node0,1.5\n",
        "con.csv: contention.resnet18_node0.resnet18_node0: must be in (0, 1] (the share of its "
        "speed alone it keeps), got 1.5",
    ),
]
OK = '{"0": {"arrival_time": 5, "duration": 10, "tasks": {"0": {"demand": {"any": [1, 2, 3]}}}}}'


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_malformed_eva_inputs_one_line_exit_2_no_output(tmp_path, monkeypatch, case):
    name, fname, content, message = case
    write(tmp_path, fname, content)
    args = ["import", "eva", fname, "-o", "out.json"]
    if fname == "cat.json":
        write(tmp_path, "ok.json", OK)
        args = ["import", "eva", "ok.json", "--catalog", "cat.json", "-o", "out.json"]
    if fname == "con.csv":
        write(tmp_path, "ok.json", OK)
        args = ["import", "eva", "ok.json", "--colocation", "con.csv", "-o", "out.json"]
    before = sorted(p.name for p in tmp_path.iterdir())
    res = run(args, tmp_path, monkeypatch)
    assert res.exit_code == 2, res.output
    assert res.output == f"gpuaas: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_contention_csv_becomes_the_traces_colocation_table(tmp_path, monkeypatch):
    """`--colocation CSV` (Eva's contention matrix layout; made-up numbers here): each row's
    speeds beside each column's workload, ``x`` at Eva's generator's default; every job named
    as Eva keys the table; the imported trace simulates at those speeds, reconciled. Without
    the option no table; with another format an error."""
    write(tmp_path, "t.json", TRACE)
    csv = ",resnet18_node0,gpt2_node0\nresnet18_node0,0.9,0.7\ngpt2_node0,x,1\n"
    write(tmp_path, "con.csv", csv)
    args = ["import", "eva", "t.json", "--colocation", "con.csv", "-o", "out.json"]
    res = run(args, tmp_path, monkeypatch)
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["colocation"] == {
        "gpt2_node0": {"gpt2_node0": 1.0, "resnet18_node0": UNMEASURED},
        "resnet18_node0": {"gpt2_node0": 0.7, "resnet18_node0": 0.9},
    }
    assert [j["workload"] for j in data["jobs"]] == ["resnet18_node0", "gpt2_node0", "vit_node0"]
    trace = load_instance(tmp_path / "out.json")
    log = tmp_path / "log.jsonl"
    result = simulate(trace, "incremental", log=log, bound=False).to_dict()
    assert check_against(recompute(log, trace), result, trace) == []
    res = run(["import", "eva", "t.json", "-o", "plain.json"], tmp_path, monkeypatch)
    assert "colocation" not in json.loads((tmp_path / "plain.json").read_text())
    write(tmp_path, "g.csv", "id,submit,gpus,duration\n")
    res = run(
        ["import", "csv", "g.csv", "--colocation", "con.csv", "-o", "x.json"], tmp_path, monkeypatch
    )
    assert res.exit_code == 2 and res.output == (
        "gpuaas: error: --colocation: reads Eva's contention table: the eva format only\n"
    )


def test_readme_lists_every_eva_import_error():
    text = README.read_text()
    for name, *_, message in BAD:
        assert f"`{name}`" in text, name
        assert message.replace("|", "\\|") in text, name


def test_demand_nodes_add_the_cpu_only_jobs_nodes_to_the_gpu_jobs(tmp_path):
    """The "demand" rule with GPU-less types: GPU jobs and CPU-only jobs never share a VM, so
    N is the GPU jobs' N over the GPU types plus the CPU-only jobs' N over the GPU-less types
    (here 1 + 4; pooling every job's vCPUs over the largest type any job runs on gave 3, too
    few nodes for four CPU-only jobs that each fill a c7i.4xlarge)."""
    trace = {k: v for k, v in TRACE.items() if k in ("0", "2")}
    trace.update({f"c{i}": job(f"openfoam[{i}]", 600, 7200, task([0, 8, 30])) for i in range(4)})
    jobs, _ = read_trace("eva", write(tmp_path, "t.json", trace))
    cat = read_eva_catalog(write(tmp_path, "ec2_config.json", CONFIG))

    def n(kept):
        out, _ = build_trace(kept, "t.json", catalog=cat, nodes="demand", measured_on="V100")
        return out["nodes"]

    gpu = [j for j in jobs if j.gpus > 0]
    cpu = [j for j in jobs if j.gpus == 0]
    assert (n(gpu), n(cpu), n(jobs)) == (1, 4, 5)
