"""The JSON Schemas in instances/ agree with the parser on bundled, generated and malformed files."""

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from test_instance import BASE, CASES

from gpuaas.catalog import bundled_catalogs, load_catalog
from gpuaas.cli import cli
from gpuaas.generator import ARRIVALS, generate_snapshot, generate_trace
from gpuaas.instance import Instance, load_instance
from gpuaas.performance import APPLICATIONS
from gpuaas.solution import Solution

INSTANCES = Path(__file__).resolve().parents[1] / "instances"
INSTANCE_SCHEMA = json.loads((INSTANCES / "instance.schema.json").read_text())
SOLUTION_SCHEMA = json.loads((INSTANCES / "solution.schema.json").read_text())
INSTANCE = jsonschema.Draft202012Validator(INSTANCE_SCHEMA)
SOLUTION = jsonschema.Draft202012Validator(SOLUTION_SCHEMA)

#: Malformed cases of tests/test_instance.py that only the parser can catch, and why.
PARSER_ONLY = {
    "nodes-float": "JSON Schema counts 2.0 as an integer",
    "missing-catalog-file": "the schema cannot see whether a YAML path exists",
    "catalog-dup-vm": "uniqueness of a field inside objects is not expressible",
    "duplicate-id": "uniqueness of a field inside objects is not expressible",
    "time-nan": "NaN is not JSON; the schema validator compares it as a number",
    "due-nan": "NaN is not JSON",
    "weight-inf": "Infinity is not JSON",
    "time-nan-entry": "NaN is not JSON",
    "workload-unknown-gpu": "which GPU models the performance model knows is not in the schema",
    "placement-vm": "a placement's VM type depends on the catalog",
    "placement-gpus": "a placement's GPU range depends on its VM type",
    "placement-cannot-run": "whether the job can run there depends on its times",
    "placement-node": "node < N relates two fields",
    "placement-clash": "one VM type per node relates several jobs",
}


def _assert_valid(validator, data):
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(data)]
    assert errors == []


def test_schemas_are_draft_2020_12():
    """Both schema files are valid JSON Schema draft 2020-12 documents."""
    for schema in (INSTANCE_SCHEMA, SOLUTION_SCHEMA):
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(schema)


def test_schema_lists_match_the_code():
    """Bundled catalogs, applications, frameworks and azure-2021 list lengths match the package."""
    assert INSTANCE_SCHEMA["properties"]["catalog"]["anyOf"][0]["enum"] == bundled_catalogs()
    wl = INSTANCE_SCHEMA["$defs"]["workload"]["properties"]
    assert wl["application"]["enum"] == list(APPLICATIONS)
    assert set(wl["framework"]["enum"]) == {f for a in APPLICATIONS.values() for f in a.frameworks}
    az = INSTANCE_SCHEMA["$defs"]["azure_2021_times"]
    cat = load_catalog("azure-2021")
    assert az["propertyNames"]["enum"] == list(cat.vm_names)
    for name, g in zip(cat.vm_names, cat.gpus):
        assert (
            az["properties"][name]["maxItems"] == g
            and az["properties"][name].get("minItems", 1) == g
        )


@pytest.mark.parametrize("name", ["example.json", "trace-small.json"])
def test_bundled_files_validate(name):
    """The bundled example and trace validate against the instance schema."""
    _assert_valid(INSTANCE, json.loads((INSTANCES / name).read_text()))


def test_generated_files_validate():
    """Generated traces (every arrival pattern, an inline catalog) and snapshots validate."""
    inline = {"vm_types": [{"name": "K", "gpu": "K80", "gpus": 2, "cost_per_hour": 1.0}]}
    for data in (
        [generate_trace(3, seed=s, arrivals=a) for s in (0, 1) for a in ARRIVALS]
        + [generate_snapshot(4, 15, seed=s) for s in (0, 1)]
        + [generate_trace(2, 6, seed=0, catalog=inline)]
    ):
        _assert_valid(INSTANCE, json.loads(json.dumps(data)))


def test_base_and_round_trip_validate():
    """The malformed cases' valid base and an Instance.to_dict output validate."""
    _assert_valid(INSTANCE, BASE)
    _assert_valid(INSTANCE, Instance.from_dict(copy.deepcopy(BASE)).to_dict())


@pytest.mark.parametrize("case", [c for c in CASES if callable(c[2])], ids=lambda c: c[0])
def test_malformed_instances_are_rejected(case):
    """Each malformed case is rejected by the schema, except the few only the parser can catch."""
    data = copy.deepcopy(BASE)
    case[2](data)
    assert INSTANCE.is_valid(data) == (case[0] in PARSER_ONLY)


def test_solutions_validate(tmp_path):
    """`gpuaas solve --json` output and Solution.to_dict with a postponed job validate."""
    out = tmp_path / "sol.json"
    res = CliRunner().invoke(
        cli,
        ["solve", str(INSTANCES / "example.json"), "--method", "greedy", "--json", "-o", str(out)],
    )
    assert res.exit_code == 0, res.output
    _assert_valid(SOLUTION, json.loads(out.read_text()))
    inst = Instance.from_dict(copy.deepcopy(BASE))
    cat = inst.catalog
    sol = Solution(
        inst,
        [cat.vm_index("NC12"), -1],
        [0, -1],
        [cat.config(cat.vm_index("NC12"), 2), -1],
        "hand",
        {"seconds": 0.0, "seed": 1},
    )
    data = sol.to_dict()
    assert data["jobs"][1] == {"id": "b", "node": None, "vm": None, "gpus": None}
    _assert_valid(SOLUTION, data)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.pop("stats"),
        lambda d: d["stats"].pop("seconds"),
        lambda d: d["jobs"][0].update(gpus=0),
        lambda d: d["jobs"][0].update(node=None),  # node null but vm and gpus set
        lambda d: d["jobs"][1].update(vm="NC6"),  # postponed job with a VM type
        lambda d: d["nodes"][0].update(node=-1),
        lambda d: d.update(extra=1),
    ],
)
def test_malformed_solutions_are_rejected(change):
    """Solutions with missing stats, bad GPU counts or half-postponed jobs do not validate."""
    inst = load_instance(INSTANCES / "example.json").subset([0, 1])
    cat = inst.catalog
    v = cat.vm_index("NV24")
    data = Solution(
        inst, [v, -1, -1, -1], [0, -1], [cat.config(v, 2), -1], "hand", {"seconds": 0.1, "seed": 0}
    ).to_dict()
    _assert_valid(SOLUTION, data)
    change(data)
    assert not SOLUTION.is_valid(data)
