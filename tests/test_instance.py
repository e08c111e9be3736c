"""The instance format: parsing, defaults, round trip, and every malformed input of instances/README.md."""

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.instance import Instance, load_instance
from gpuaas.performance import workload_times

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "instances" / "README.md"

#: A small valid instance; every malformed case below changes one thing in it.
BASE = {
    "catalog": "azure-2021",
    "nodes": 2,
    "time": 0,
    "jobs": [
        {
            "id": "a",
            "due": 90000,
            "weight": 0.01,
            "times": {"NC6": [36000], "NC12": [36000, 20000]},
        },
        {"id": "b", "due": 50000, "weight": 0.005, "workload": {"application": "resnet50"}},
    ],
}


def _set(path, value):
    """A mutation of BASE setting (or, with value DEL, deleting) the field at `path`."""

    def mutate(d):
        *parents, last = path
        for p in parents:
            d = d[p]
        if value is DEL:
            del d[last]
        else:
            d[last] = value

    return mutate


DEL = object()
INLINE_A10G = {"vm_types": [{"name": "G5", "gpu": "A10G", "gpus": 4, "cost_per_hour": 12.0}]}

#: (case, what is wrong, mutation of BASE or raw file text, error after "gpuaas: error: ").
CASES = [
    (
        "bad-json",
        "not JSON (truncated)",
        '{"catalog": "azure-2021", "nodes": 2,',
        "bad.json: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 38",
    ),
    (
        "empty-file",
        "empty file",
        "",
        "bad.json: not valid JSON: Expecting value at line 1 column 1",
    ),
    (
        "not-utf8",
        "not UTF-8 text",
        b"\xff\xfe{}",
        "bad.json: not UTF-8 text (byte 0); JSON files are UTF-8",
    ),
    ("top-list", "top level is a list", "[]", "bad.json: top level must be a JSON object"),
    (
        "unknown-top",
        "unknown top-level field (`node`)",
        _set(("node",), 3),
        "bad.json: unknown field(s) ['node']",
    ),
    (
        "missing-nodes",
        "missing `nodes`",
        _set(("nodes",), DEL),
        "bad.json: nodes: missing required field",
    ),
    (
        "missing-jobs",
        "missing `jobs`",
        _set(("jobs",), DEL),
        "bad.json: jobs: missing required field",
    ),
    (
        "missing-catalog",
        "missing `catalog`",
        _set(("catalog",), DEL),
        "bad.json: catalog: missing required field",
    ),
    (
        "nodes-string",
        "`nodes` a string",
        _set(("nodes",), "2"),
        "bad.json: nodes: must be a positive integer, got '2'",
    ),
    (
        "nodes-zero",
        "`nodes` 0",
        _set(("nodes",), 0),
        "bad.json: nodes: must be a positive integer, got 0",
    ),
    (
        "nodes-float",
        "`nodes` 2.0 (a float)",
        _set(("nodes",), 2.0),
        "bad.json: nodes: must be a positive integer, got 2.0",
    ),
    (
        "unknown-catalog",
        "unknown catalog name",
        _set(("catalog",), "aws-2030"),
        "bad.json: catalog: unknown catalog 'aws-2030'; bundled: aws-regions, aws-us-east-1, aws-v100-zones, azure-2021, azure-eastus, gcp-h100-zones, gcp-us-central1",
    ),
    (
        "missing-catalog-file",
        "catalog YAML file missing",
        _set(("catalog",), "nope.yaml"),
        "bad.json: catalog: nope.yaml: no such file",
    ),
    (
        "catalog-type",
        "`catalog` a number",
        _set(("catalog",), 7),
        "bad.json: catalog: must be a catalog name or an object with 'vm_types'",
    ),
    (
        "catalog-gpus",
        "inline catalog, VM type with 0 GPUs naming a GPU model",
        _set(
            ("catalog",), {"vm_types": [{"name": "X", "gpu": "K80", "gpus": 0, "cost_per_hour": 1}]}
        ),
        "bad.json: catalog.vm_types[0].gpu: a VM type with 0 GPUs names no GPU model",
    ),
    (
        "catalog-dup-vm",
        "inline catalog, duplicate VM type",
        _set(
            ("catalog",),
            {"vm_types": [{"name": "X", "gpu": "K80", "gpus": 1, "cost_per_hour": 1}] * 2},
        ),
        "bad.json: catalog.vm_types[1].name: duplicate VM type 'X'",
    ),
    (
        "catalog-quota-place",
        "inline catalog, a quota at a place it does not have",
        _set(
            ("catalog",), {**INLINE_A10G, "quotas": [{"at": "us-east-1", "gpu": "A10G", "gpus": 8}]}
        ),
        "bad.json: catalog.quotas[0].at: 'us-east-1' is no location, region or cloud of the catalog (it declares no locations)",
    ),
    (
        "catalog-quota-gpu",
        "inline catalog, a quota of a GPU model it does not have",
        _set(("catalog",), {**INLINE_A10G, "quotas": [{"gpu": "H100", "gpus": 8}]}),
        "bad.json: catalog.quotas[0].gpu: 'H100' is no GPU model of the catalog's VM types (A10G)",
    ),
    (
        "catalog-quota-negative",
        "inline catalog, a quota of -8 GPUs",
        _set(("catalog",), {**INLINE_A10G, "quotas": [{"gpu": "A10G", "gpus": -8}]}),
        "bad.json: catalog.quotas[0].gpus: must be an integer >= 0, got -8",
    ),
    (
        "catalog-quota-fraction",
        "inline catalog, a quota of 2.5 GPUs",
        _set(("catalog",), {**INLINE_A10G, "quotas": [{"gpu": "A10G", "gpus": 2.5}]}),
        "bad.json: catalog.quotas[0].gpus: must be an integer >= 0, got 2.5",
    ),
    (
        "time-negative",
        "`time` negative",
        _set(("time",), -5),
        "bad.json: time: must be >= 0, got -5",
    ),
    (
        "time-nan",
        "`time` NaN (Python's json reads `NaN`)",
        _set(("time",), math.nan),
        "bad.json: time: must be finite, got nan",
    ),
    (
        "params-unknown",
        "unknown parameter `h`",
        _set(("params",), {"h": 3600}),
        "bad.json: params: unknown field(s) ['h']; allowed: H, mu, rho, overhead, startup",
    ),
    ("params-H", "`params.H` 0", _set(("params",), {"H": 0}), "bad.json: params.H: must be > 0"),
    (
        "params-overhead",
        "`params.overhead` negative",
        _set(("params",), {"overhead": -1}),
        "bad.json: params.overhead: must be >= 0, got -1",
    ),
    (
        "placement-shape",
        "`placement` without `gpus`",
        _set(("jobs", 0, "placement"), {"node": 0, "vm": "NC6"}),
        'bad.json: jobs[0] (a).placement: must be {"node": int, "vm": VM type, "gpus": int[, "pinned": bool]} or null',
    ),
    (
        "placement-pinned",
        "`placement.pinned` not a bool",
        _set(("jobs", 0, "placement"), {"node": 0, "vm": "NC6", "gpus": 1, "pinned": 1}),
        "bad.json: jobs[0] (a).placement.pinned: must be true or false, got 1",
    ),
    (
        "placement-vm",
        "`placement.vm` unknown",
        _set(("jobs", 0, "placement"), {"node": 0, "vm": "X", "gpus": 1}),
        "bad.json: jobs[0] (a).placement.vm: unknown VM type 'X'",
    ),
    (
        "placement-gpus",
        "`placement.gpus` 3 on NC12",
        _set(("jobs", 0, "placement"), {"node": 0, "vm": "NC12", "gpus": 3}),
        "bad.json: jobs[0] (a).placement.gpus: must be an integer in 1..2 for NC12, got 3",
    ),
    (
        "placement-cannot-run",
        "placement on a configuration the job cannot run",
        _set(("jobs", 0, "placement"), {"node": 0, "vm": "NC24", "gpus": 1}),
        "bad.json: jobs[0] (a).placement: the job cannot run on NC24 with 1 GPU(s)",
    ),
    (
        "placement-node",
        "`placement.node` >= N",
        _set(("jobs", 0, "placement"), {"node": 2, "vm": "NC6", "gpus": 1}),
        "bad.json: jobs[0] (a).placement.node: must be < nodes (2), got 2",
    ),
    (
        "placement-clash",
        "two running jobs on one node with different VM types",
        lambda d: (
            d["jobs"][0].update(placement={"node": 0, "vm": "NC6", "gpus": 1}),
            d["jobs"][1].update(placement={"node": 0, "vm": "NC12", "gpus": 1}),
        ),
        "bad.json: jobs[1] (b).placement.vm: node 0 already runs a job on NC6",
    ),
    (
        "jobs-object",
        "`jobs` an object",
        _set(("jobs",), {"a": {}}),
        "bad.json: jobs: must be a list",
    ),
    (
        "job-string",
        "a job is a string",
        _set(("jobs", 0), "a"),
        "bad.json: jobs[0]: must be an object",
    ),
    (
        "job-unknown",
        "unknown job field (`deadline`)",
        _set(("jobs", 0, "deadline"), 5),
        "bad.json: jobs[0]: unknown field(s) ['deadline']",
    ),
    (
        "job-missing-id",
        "job without `id`",
        _set(("jobs", 0, "id"), DEL),
        "bad.json: jobs[0].id: missing required field",
    ),
    (
        "job-missing-due",
        "job without `due`",
        _set(("jobs", 1, "due"), DEL),
        "bad.json: jobs[1].due: missing required field",
    ),
    (
        "job-missing-weight",
        "job without `weight`",
        _set(("jobs", 0, "weight"), DEL),
        "bad.json: jobs[0].weight: missing required field",
    ),
    (
        "id-number",
        "`id` a number",
        _set(("jobs", 0, "id"), 7),
        "bad.json: jobs[0].id: must be a non-empty string, got 7",
    ),
    (
        "duplicate-id",
        "duplicate job ids",
        _set(("jobs", 1, "id"), "a"),
        "bad.json: jobs[1].id: duplicate job id 'a'",
    ),
    (
        "due-string",
        "`due` a string",
        _set(("jobs", 0, "due"), "tomorrow"),
        "bad.json: jobs[0] (a).due: must be a number, got 'tomorrow'",
    ),
    (
        "due-nan",
        "`due` NaN",
        _set(("jobs", 0, "due"), math.nan),
        "bad.json: jobs[0] (a).due: must be finite, got nan",
    ),
    (
        "weight-negative",
        "`weight` negative",
        _set(("jobs", 0, "weight"), -0.01),
        "bad.json: jobs[0] (a).weight: must be >= 0, got -0.01",
    ),
    (
        "weight-inf",
        "`weight` Infinity",
        _set(("jobs", 0, "weight"), math.inf),
        "bad.json: jobs[0] (a).weight: must be finite, got inf",
    ),
    (
        "release-negative",
        "`release` negative",
        _set(("jobs", 0, "release"), -1),
        "bad.json: jobs[0] (a).release: must be >= 0, got -1",
    ),
    (
        "progress-one",
        "`progress` 1 (job already done)",
        _set(("jobs", 0, "progress"), 1),
        "bad.json: jobs[0] (a).progress: must be in [0, 1), got 1.0",
    ),
    (
        "no-times",
        "job with neither `times` nor `workload`",
        _set(("jobs", 0, "times"), DEL),
        "bad.json: jobs[0] (a): needs 'times' (or 'workload' for the performance model)",
    ),
    (
        "times-list",
        "`times` a list",
        _set(("jobs", 0, "times"), [36000]),
        "bad.json: jobs[0] (a).times: must be an object mapping VM type to a list of seconds",
    ),
    (
        "times-unknown-vm",
        "`times` names an unknown VM type",
        _set(("jobs", 0, "times", "NC7"), [1.0]),
        "bad.json: jobs[0] (a).times.NC7: unknown VM type for catalog 'azure-2021'",
    ),
    (
        "times-length",
        "`times` list length is not the VM's GPU count",
        _set(("jobs", 0, "times", "NC12"), [36000]),
        "bad.json: jobs[0] (a).times.NC12: must be a list of 2 times (one per GPU count 1..2), got 1 entries",
    ),
    (
        "times-scalar",
        "`times` entry a number, not a list",
        _set(("jobs", 0, "times", "NC6"), 36000),
        "bad.json: jobs[0] (a).times.NC6: must be a list of 1 times (one per GPU count 1..1), got 36000",
    ),
    (
        "time-negative-entry",
        "negative time",
        _set(("jobs", 0, "times", "NC12"), [36000, -5]),
        "bad.json: jobs[0] (a).times.NC12[1]: must be a finite time > 0 s (or null), got -5",
    ),
    (
        "time-zero-entry",
        "zero time",
        _set(("jobs", 0, "times", "NC6"), [0]),
        "bad.json: jobs[0] (a).times.NC6[0]: must be a finite time > 0 s (or null), got 0",
    ),
    (
        "time-nan-entry",
        "NaN time",
        _set(("jobs", 0, "times", "NC6"), [math.nan]),
        "bad.json: jobs[0] (a).times.NC6[0]: must be a finite time > 0 s (or null), got nan",
    ),
    (
        "time-string-entry",
        "time a string",
        _set(("jobs", 0, "times", "NC6"), ["10h"]),
        "bad.json: jobs[0] (a).times.NC6[0]: must be a finite time > 0 s (or null), got '10h'",
    ),
    (
        "no-vm-can-run",
        "no VM type can run the job (all null)",
        _set(("jobs", 0, "times"), {"NC6": [None]}),
        "bad.json: jobs[0] (a).times: no VM type of the catalog can run this job",
    ),
    (
        "times-empty",
        "`times` empty",
        _set(("jobs", 0, "times"), {}),
        "bad.json: jobs[0] (a).times: no VM type of the catalog can run this job",
    ),
    (
        "workload-app",
        "workload: unknown application",
        _set(("jobs", 1, "workload"), {"application": "bert"}),
        "bad.json: jobs[1] (b).workload.application: unknown application 'bert'; known: alexnet, resnet50, vgg19, deepspeech",
    ),
    (
        "workload-epochs",
        "workload: epochs 0",
        _set(("jobs", 1, "workload", "epochs"), 0),
        "bad.json: jobs[1] (b).workload.epochs: must be a positive integer, got 0",
    ),
    (
        "workload-framework",
        "workload: framework not modelled for the application",
        _set(("jobs", 1, "workload"), {"application": "deepspeech", "framework": "pytorch"}),
        "bad.json: jobs[1] (b).workload.framework: 'pytorch' is not modelled for deepspeech; known: tensorflow",
    ),
    (
        "workload-field",
        "workload: unknown field",
        _set(("jobs", 1, "workload", "gpus"), 4),
        "bad.json: jobs[1] (b).workload: unknown field(s) ['gpus']; allowed: application, framework, epochs, batch_size, files",
    ),
    (
        "workload-unknown-gpu",
        "workload on a catalog whose GPUs the model does not know",
        lambda d: (_set(("catalog",), INLINE_A10G)(d), _set(("jobs", 0), d["jobs"][1])(d)),
        "bad.json: jobs[0] (b).workload: no VM type of the catalog can run this job",
    ),
    (
        "workload-name-alone",
        "workload given by name without `times`",
        _set(("jobs", 1, "workload"), "resnet50"),
        "bad.json: jobs[1] (b).workload: a workload given by name needs 'times' (the performance model times a workload object)",
    ),
    (
        "workload-name-empty",
        "workload name an empty string",
        _set(("jobs", 0, "workload"), ""),
        "bad.json: jobs[0] (a).workload: must be a non-empty string, got ''",
    ),
    (
        "colocation-list",
        "`colocation` a list",
        _set(("colocation",), [0.9]),
        "bad.json: colocation: must be an object mapping a workload to {workload beside it: speed}, got [0.9]",
    ),
    (
        "colocation-row",
        "`colocation` row a number",
        _set(("colocation",), {"resnet50": 0.9}),
        "bad.json: colocation.resnet50: must be an object mapping a workload to its speed beside it, got 0.9",
    ),
    (
        "colocation-speed-string",
        "co-location speed a string",
        _set(("colocation",), {"resnet50": {"vgg19": "fast"}}),
        "bad.json: colocation.resnet50.vgg19: must be a number, got 'fast'",
    ),
    (
        "colocation-speed-zero",
        "co-location speed 0",
        _set(("colocation",), {"resnet50": {"vgg19": 0}}),
        "bad.json: colocation.resnet50.vgg19: must be > 0, got 0",
    ),
    (
        "colocation-speed-above-1",
        "co-location speed above 1 (a speed-up)",
        _set(("colocation",), {"resnet50": {"vgg19": 1.2}}),
        "bad.json: colocation.resnet50.vgg19: must be in (0, 1] (the share of its speed alone it keeps), got 1.2",
    ),
    (
        "colocation-name-empty",
        "co-location table with an empty workload name",
        _set(("colocation",), {"resnet50": {"": 0.9}}),
        "bad.json: colocation.resnet50 (a workload name): must be a non-empty string, got ''",
    ),
]


def _write(tmp: Path, case) -> None:
    _, _, spec, _ = case
    if isinstance(spec, bytes):
        (tmp / "bad.json").write_bytes(spec)
    elif isinstance(spec, str):
        (tmp / "bad.json").write_text(spec)
    else:
        data = copy.deepcopy(BASE)
        spec(data)
        (tmp / "bad.json").write_text(json.dumps(data))


def test_base_instance_is_valid():
    """The instance every malformed case starts from loads and solves."""
    inst = Instance.from_dict(copy.deepcopy(BASE), "base")
    assert inst.n_jobs == 2 and inst.nodes == 2


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_malformed_input_one_line_exit_2_no_output(tmp_path, monkeypatch, case):
    """`gpuaas solve` on the malformed input: exit 2, the one-line message, no traceback, no -o file."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, case)
    res = CliRunner().invoke(cli, ["solve", "bad.json", "-o", "out.json"])
    assert res.exit_code == 2, res.output
    assert res.output == f"gpuaas: error: {case[3]}\n"
    assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)
    assert not (tmp_path / "out.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_missing_file(tmp_path, monkeypatch):
    """A missing instance file is a one-line error too, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["solve", "missing.json", "-o", "out.json"])
    assert res.exit_code == 2 and res.output == "gpuaas: error: missing.json: no such file\n"
    assert list(tmp_path.iterdir()) == []


def test_readme_table_lists_every_case():
    """instances/README.md shows each malformed case with its exact message."""
    text = README.read_text()
    for name, _, _, message in CASES + [("missing-file", "", "", "missing.json: no such file")]:
        assert f"`{name}`" in text, name
        assert message.replace("|", "\\|") in text, name


def test_defaults_and_derived_arrays():
    """Omitted release/progress/time/params take their defaults; d_j and M_j follow."""
    inst = Instance.from_dict(copy.deepcopy(BASE))
    assert inst.time == 0 and (inst.H, inst.mu, inst.rho) == (3600, 1, 100)
    assert inst.release.tolist() == [0, 0] and inst.progress.tolist() == [0, 0]
    assert inst.rel_due.tolist() == [90000, 50000]
    assert inst.max_time[0] == 36000 and inst.min_time[0] == 20000
    assert np.isinf(inst.work[0, 3:]).all()  # only NC6 and NC12 given


def test_workload_computes_times_and_times_win():
    """A job with only a workload gets the model's times; with both, explicit times are used."""
    inst = Instance.from_dict(copy.deepcopy(BASE))
    assert np.array_equal(inst.work[1], workload_times({"application": "resnet50"}, inst.catalog))
    both = copy.deepcopy(BASE)
    both["jobs"][0]["workload"] = {"application": "vgg19"}
    assert np.array_equal(Instance.from_dict(both).work[0], inst.work[0])


def test_round_trip_through_to_dict(tmp_path):
    """to_dict -> file -> load_instance gives the same arrays (bundled example and a snapshot)."""
    for inst in (
        load_instance(ROOT / "instances" / "example.json"),
        Instance.from_dict(copy.deepcopy(BASE)),
    ):
        path = tmp_path / "rt.json"
        path.write_text(json.dumps(inst.to_dict()))
        back = load_instance(path)
        for k in ("release", "due", "weight", "work", "progress", "times"):
            assert np.array_equal(getattr(back, k), getattr(inst, k)), k
        assert back.job_ids == inst.job_ids and back.time == inst.time and back.nodes == inst.nodes


def test_bundled_example_is_a_rescheduling_point():
    """instances/example.json: N = 4, 12 released jobs, some already late, some partly done."""
    inst = load_instance(ROOT / "instances" / "example.json")
    assert inst.nodes == 4 and inst.released().n_jobs == 12
    assert (inst.rel_due < 0).any() and (inst.rel_due > inst.min_time).any()
    assert (inst.progress > 0).any() and (inst.progress == 0).any()


def test_input_error_fields():
    """InputError carries source, field and problem separately."""
    bad = copy.deepcopy(BASE)
    bad["jobs"][0]["times"]["NC12"] = [1.0]
    with pytest.raises(InputError) as err:
        Instance.from_dict(bad, "x.json")
    assert (err.value.source, err.value.field) == ("x.json", "jobs[0] (a).times.NC12")
