"""Catalog loading and the configuration arrays."""

import numpy as np
import pytest

from gpuaas.catalog import Catalog, bundled_catalogs, load_catalog
from gpuaas.errors import InputError


def test_azure_2021_is_table_2():
    """The bundled catalog holds the paper's Table 2 rows."""
    cat = load_catalog("azure-2021")
    assert cat.vm_names == ("NC6", "NC12", "NC24", "NV6", "NV12", "NV24", "NC48*", "NV48*")
    assert cat.gpus.tolist() == [1, 2, 4, 1, 2, 4, 8, 8]
    assert cat.cost_per_hour.tolist() == [0.56, 1.13, 2.25, 0.62, 1.24, 2.48, 4.48, 4.96]
    assert cat.gpu_models == ("K80",) * 3 + ("M60",) * 3 + ("K80", "M60")
    assert np.allclose(cat.cost * 3600, cat.cost_per_hour)
    assert "azure-2021" in bundled_catalogs()


def test_configuration_numbering_round_trips():
    """cfg_offset[v] + g - 1 indexes the configuration (v, g)."""
    cat = load_catalog("azure-2021")
    assert cat.n_configs == 30
    for v in range(cat.n_vms):
        for g in range(1, int(cat.gpus[v]) + 1):
            c = cat.config(v, g)
            assert (cat.cfg_vm[c], cat.cfg_gpus[c]) == (v, g)
    with pytest.raises(ValueError):
        cat.config(0, 2)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no-such-catalog", "unknown catalog 'no-such-catalog'"),
        ({"vm_types": []}, "catalog.vm_types: must be a non-empty list"),
        (
            {"vm_types": [{"name": "A", "gpu": "K80", "gpus": 0, "cost_per_hour": 1}]},
            "gpu: a VM type with 0 GPUs names no GPU model",
        ),
        (
            {"vm_types": [{"name": "A", "gpu": "K80", "gpus": 1, "cost_per_hour": -1}]},
            "cost_per_hour: must be > 0",
        ),
        (
            {"vm_types": [{"name": "A", "gpu": "K80", "gpus": 1}]},
            "missing field(s) ['cost_per_hour']",
        ),
        (
            {
                "vm_types": [
                    {"name": "A", "gpu": "K", "gpus": 1, "cost_per_hour": 1},
                    {"name": "A", "gpu": "K", "gpus": 1, "cost_per_hour": 1},
                ]
            },
            "duplicate VM type 'A'",
        ),
    ],
)
def test_bad_catalog_is_named(spec, message):
    """A malformed catalog raises InputError saying what is wrong where."""
    with pytest.raises(InputError) as exc:
        load_catalog(spec, "x.json")
    assert message in str(exc.value)
    assert str(exc.value).startswith("x.json") or "catalog" in str(exc.value)


def test_yaml_file_catalog(tmp_path):
    """A catalog can be a YAML file path."""
    p = tmp_path / "cat.yaml"
    p.write_text("vm_types:\n  - {name: A, gpu: T4, gpus: 2, cost_per_hour: 1.0}\n")
    cat = load_catalog(str(p))
    assert cat.vm_names == ("A",) and cat.n_configs == 2


# -- today's catalogs: provenance fields, spot prices, generated traces that simulate ------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from click.testing import CliRunner  # noqa: E402
from eventlog import check_against, recompute  # noqa: E402

from gpuaas.cli import cli  # noqa: E402
from gpuaas.generator import generate_trace  # noqa: E402
from gpuaas.instance import Instance  # noqa: E402
from gpuaas.simulator import simulate  # noqa: E402

README = Path(__file__).resolve().parent.parent / "instances" / "README.md"


@pytest.mark.parametrize("name", [n for n in bundled_catalogs() if n != "azure-2021"])
def test_bundled_catalog_names_provider_region_date_source(name):
    """Every catalog of today's prices says where and when its figures come from."""
    cat = load_catalog(name)
    assert {"provider", "region", "date", "source", "price_page"} <= set(cat.info)
    assert cat.info["source"].startswith("https://") and cat.name == name
    spot, price = cat.spot_per_hour, cat.cost_per_hour
    known = np.isfinite(spot)
    assert (spot[known] < price[known]).all()
    if cat.places:  # a zone catalog: a spot price at every location (of the types the data has)
        assert {x for x, k in zip(cat.locations, known) if k} == set(cat.places)
    else:
        assert known.sum() >= cat.n_vms - 1
    assert Catalog_round_trip(cat)


def Catalog_round_trip(cat):
    again = load_catalog(cat.to_dict())
    return (
        again.vm_names == cat.vm_names
        and again.info == cat.info
        and np.array_equal(again.spot_per_hour, cat.spot_per_hour, equal_nan=True)
    )


def test_gcp_prices_are_machine_plus_gpus_as_commented():
    """Each GCP price is the sum of the machine and accelerator rows its comment quotes."""
    import re

    cat = load_catalog("gcp-us-central1")
    text = (
        Path(__file__)
        .resolve()
        .parent.parent.joinpath("gpuaas", "catalogs", "gcp-us-central1.yaml")
        .read_text()
    )
    rows = re.findall(r"name: ([\w-]+),.*#\s*([\d.]+) \+ ([\d.]+); spot ([\d.]+) \+ ([\d.]+)", text)
    assert [r[0] for r in rows] == list(cat.vm_names)
    for name, m, g, ms, gs in rows:
        v = cat.vm_names.index(name)
        assert round(float(m) + float(g), 5) == cat.cost_per_hour[v], name
        assert round(float(ms) + float(gs), 5) == cat.spot_per_hour[v], name
    # One row per (GPU model, count) of a2-highgpu, a2-ultragpu, a3-highgpu and g2.
    offers = {(gpu, int(n)) for gpu, n in zip(cat.gpu_models, cat.gpus)}
    assert offers == {(gpu, n) for gpu in ("A100", "A100-80GB", "H100", "L4") for n in (1, 2, 4, 8)}


def test_paper_catalog_names_its_source():
    assert "Table 2" in load_catalog("azure-2021").info["source"]


@pytest.mark.parametrize("name", bundled_catalogs())
def test_generated_trace_simulates_on_each_catalog(name, tmp_path):
    """A §4.1 trace generated on the catalog simulates, and its event log adds up."""
    trace = Instance.from_dict(generate_trace(3, 24, seed=2, catalog=name))
    assert trace.catalog.name == name
    log = tmp_path / "events.jsonl"
    result = simulate(trace, "greedy", log=log).to_dict()
    assert check_against(recompute(log, trace), result, trace) == []
    used = {
        line["vm"] for rec in map(json.loads, log.read_text().splitlines()) for line in rec["nodes"]
    }
    assert used and used <= set(trace.catalog.vm_names)


def test_catalogs_command_lists_every_catalog():
    res = CliRunner().invoke(cli, ["catalogs"])
    assert res.exit_code == 0, res.output
    for name in bundled_catalogs():
        assert name in res.output
    assert "us-east-1" in res.output and "eastus" in res.output
    data = json.loads(CliRunner().invoke(cli, ["catalogs", "--json"]).output)
    assert {c["name"] for c in data} == set(bundled_catalogs())


#: Malformed provenance fields of an inline catalog: (case, change, message after "bad.json: ").
CATALOG_CASES = [
    (
        "catalog-date",
        ("date", "23/11/2026"),
        "catalog.date: must be a date YYYY-MM-DD, got '23/11/2026'",
    ),
    ("catalog-provider", ("provider", 3), "catalog.provider: must be a non-empty string, got 3"),
    ("catalog-name", ("name", [1]), "catalog.name: must be a string, got [1]"),
    (
        "catalog-spot",
        ("spot_per_hour", -1),
        "catalog.vm_types[0].spot_per_hour: must be > 0, got -1",
    ),
]


@pytest.mark.parametrize("key", ["name", "provider"])
def test_a_catalog_field_nested_thousands_deep_is_an_input_error(key):
    """A deeply nested value (100 000 lists) is reported, not a RecursionError while printing it
    (found by tests/test_fuzz.py's restored states)."""
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    spec = {key: deep, "vm_types": [{"name": "A", "gpu": "K80", "gpus": 1, "cost_per_hour": 1.0}]}
    with pytest.raises(
        InputError, match=rf"catalog.{key}: must be a .*string, got \[\[\[\[\[\.\.\.\]\]\]\]\]$"
    ):
        Catalog.from_dict(spec, "x.json")


@pytest.mark.parametrize("case", CATALOG_CASES, ids=[c[0] for c in CATALOG_CASES])
def test_catalog_provenance_errors(tmp_path, monkeypatch, case):
    """`gpuaas solve` on an instance whose inline catalog has a bad field: one line, exit 2."""
    name, (key, value), message = case
    cat = {"vm_types": [{"name": "A", "gpu": "K80", "gpus": 1, "cost_per_hour": 1.0}]}
    (cat["vm_types"][0] if key == "spot_per_hour" else cat)[key] = value
    inst = {
        "catalog": cat,
        "nodes": 1,
        "jobs": [{"id": "a", "due": 10, "weight": 0.1, "times": {"A": [5]}}],
    }
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text(json.dumps(inst))
    res = CliRunner().invoke(cli, ["solve", "bad.json", "-o", "out.json"])
    assert res.exit_code == 2 and res.output == f"gpuaas: error: bad.json: {message}\n"
    assert not (tmp_path / "out.json").exists()
    text = README.read_text()
    assert f"`{name}`" in text and f"bad.json: {message}" in text
