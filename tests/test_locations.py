"""VM types offered at locations (zones of regions of clouds): catalogs, `--locations`."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from gpuaas.catalog import Catalog, load_catalog
from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.run_config import RunConfig
from gpuaas.simulator import simulate

ZONES = {
    "name": "two-regions",
    "provider": "AWS",
    "locations": {"us-east-1a": {"region": "us-east-1"}, "us-west-2b": {"region": "us-west-2"}},
    "vm_types": [
        {"name": "p3.2xlarge", "location": "us-east-1a", "gpu": "V100", "gpus": 1,
         "cost_per_hour": 3.06, "spot_per_hour": 1.2},
        {"name": "p3.8xlarge", "location": "us-east-1a", "gpu": "V100", "gpus": 4,
         "cost_per_hour": 12.24},
        {"name": "p3.2xlarge", "location": "us-west-2b", "gpu": "V100", "gpus": 1,
         "cost_per_hour": 3.06, "spot_per_hour": 0.95},
    ],
}  # fmt: skip


def test_a_type_at_a_location_is_named_for_it_and_round_trips():
    cat = Catalog.from_dict(ZONES)
    assert cat.vm_names == (
        "p3.2xlarge@us-east-1a",
        "p3.8xlarge@us-east-1a",
        "p3.2xlarge@us-west-2b",
    )
    assert [cat.places[x]["region"] for x in cat.locations] == [
        "us-east-1",
        "us-east-1",
        "us-west-2",
    ]
    assert cat.places["us-west-2b"] == {"region": "us-west-2", "cloud": "AWS"}  # the provider's
    spot = cat.with_spot()
    assert spot.vm_names[3:] == ("p3.2xlarge@us-east-1a:spot", "p3.2xlarge@us-west-2b:spot")
    assert spot.locations[3:] == ("us-east-1a", "us-west-2b")
    again = Catalog.from_dict(spot.to_dict())
    assert again.vm_names == spot.vm_names and again.places == spot.places
    assert spot.without_spot().locations == cat.locations


@pytest.mark.parametrize(
    "change, field, problem",
    [
        (lambda d: d["vm_types"][0].update(location="eu-west-1a"), "vm_types[0].location",
         "not one of the catalog's locations"),
        (lambda d: d["vm_types"][1].update(name="p3.8xlarge@us-east-1a"), "vm_types[1].name",
         "give the place as 'location'"),
        (lambda d: d["locations"].update({"x": "us-east-1"}), "locations.x", "region"),
        (lambda d: d["locations"].update({"a@b": {"region": "r"}}), "locations.a@b", "without"),
        (lambda d: d["vm_types"][2].update(location="us-east-1a"), "vm_types[2].name",
         "duplicate VM type 'p3.2xlarge@us-east-1a'"),
        (lambda d: d.pop("locations"), "vm_types[0].location", "none declared"),
    ],
)  # fmt: skip
def test_bad_locations_name_the_field(change, field, problem):
    data = json.loads(json.dumps(ZONES))
    change(data)
    with pytest.raises(InputError) as err:
        Catalog.from_dict(data, "zones.yaml")
    assert err.value.field == f"catalog.{field}" and problem in err.value.problem


def test_select_keeps_a_location_a_region_or_a_cloud_and_their_columns():
    cat = Catalog.from_dict(ZONES).with_spot()
    east, cfgs = cat.select(["us-east-1"])
    assert east.vm_names == (
        "p3.2xlarge@us-east-1a",
        "p3.8xlarge@us-east-1a",
        "p3.2xlarge@us-east-1a:spot",
    )
    assert east.vm_names[int(east.base[2])] == "p3.2xlarge@us-east-1a"  # variants keep their type
    assert [cat.vm_names[cat.cfg_vm[c]] for c in cfgs] == [east.vm_names[v] for v in east.cfg_vm]
    assert cat.select(["us-west-2b", "us-east-1a"])[0].n_vms == cat.n_vms
    assert cat.select(["AWS"])[0].n_vms == cat.n_vms
    with pytest.raises(InputError, match="'mars' is no location, region or cloud.*us-west-2b"):
        cat.select(["mars"])
    with pytest.raises(InputError, match="has no locations"):
        load_catalog("azure-2021").select(["eastus"])


def test_an_instance_at_some_locations_keeps_their_columns():
    trace = Instance.from_dict(generate_trace(2, 6, seed=4, catalog=ZONES))
    west, keep = trace.at_locations(["us-west-2"])
    assert np.array_equal(keep, trace.catalog.select(["us-west-2"])[1])
    assert west.catalog.vm_names == ("p3.2xlarge@us-west-2b",)
    assert np.array_equal(west.work, trace.work[:, keep])
    eight = trace.catalog.config(1, 4)  # p3.8xlarge@us-east-1a with its 4 GPUs
    only_eight = np.where(np.arange(trace.catalog.n_configs) == eight, trace.work, np.inf)
    picky = dataclasses.replace(trace, work=only_eight)
    assert picky.at_locations(["us-east-1a"])[0].catalog.n_vms == 2
    with pytest.raises(InputError, match="can run on no VM type at us-west-2"):
        picky.at_locations(["us-west-2"])


def test_a_run_at_one_location_uses_only_its_vm_types(tmp_path):
    trace = Instance.from_dict(generate_trace(2, 8, seed=5, catalog=ZONES))
    log = tmp_path / "events.jsonl"
    result = simulate(trace, "incremental", log=log, locations="us-west-2b", spot=True)
    used = {
        n["vm"] for line in map(json.loads, log.read_text().splitlines()) for n in line["nodes"]
    }
    assert used and used <= {"p3.2xlarge@us-west-2b", "p3.2xlarge@us-west-2b:spot"}
    assert result.config.locations == "us-west-2b"


def test_locations_must_name_places():
    assert RunConfig(locations=" us-east-1a, us-west-2 ").locations == "us-east-1a,us-west-2"
    for bad in ("", " , x", 3):
        with pytest.raises(InputError, match="must name places"):
            RunConfig(locations=bad)


def test_simulate_at_an_unknown_location_exits_2_without_output(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(generate_trace(2, 6, seed=4, catalog="aws-v100-zones")))
    out = tmp_path / "run.json"
    res = CliRunner().invoke(
        cli, ["simulate", str(path), "--locations", "eu-west-1", "-o", str(out)]
    )
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "--locations: 'eu-west-1' is no location, region or cloud" in res.output
    assert not out.exists()
    res = CliRunner().invoke(cli, ["catalogs"])
    assert "aws-v100-zones" in res.output and "gcp-h100-zones" in res.output


def test_the_availability_of_a_trace_whose_catalog_has_spot_variants_and_locations():
    """The availability is built for the on-demand types of a catalog that already carries spot
    variants and locations (was: ValueError, 12 locations for 6 VM types)."""
    from gpuaas.simulator import spot_availability

    cat = load_catalog("aws-v100-zones").with_spot()
    inst = Instance(
        catalog=cat,
        nodes=1,
        job_ids=("a",),
        release=np.zeros(1),
        due=np.array([36000.0]),
        weight=np.array([0.01]),
        work=np.full((1, cat.n_configs), 3600.0),
    )
    avail = spot_availability(inst, RunConfig.build(None, "incremental", spot=True))
    assert avail.source.startswith("model")
