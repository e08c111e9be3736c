"""VM types offered at locations (zones of regions of clouds): catalogs, `--locations`."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import yaml
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


def test_aws_regions_is_aws_us_east_1_in_six_regions_each_in_the_egress_table():
    """The bundled `aws-regions` (scripts/make_region_catalog.py): aws-us-east-1's types at one
    location per region; its us-east-1 figures are aws-us-east-1's (the same snapshot), and
    every pair of its regions has an egress price of the AWS table, not the internet fallback."""
    from gpuaas import transfer

    one, cat = load_catalog("aws-us-east-1"), load_catalog("aws-regions")
    assert cat.location_names == (
        "us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1"
    )  # fmt: skip
    assert all(cat.places[x] == {"region": x, "cloud": "AWS"} for x in cat.location_names)
    east = cat.select(["us-east-1"])[0]
    assert east.vm_names == tuple(f"{n}@us-east-1" for n in one.vm_names)
    assert np.array_equal(east.cost_per_hour, one.cost_per_hour)
    assert np.array_equal(east.spot_per_hour, one.spot_per_hour, equal_nan=True)
    assert np.array_equal(east.vcpus, one.vcpus) and np.array_equal(east.memory, one.memory)
    dearer = cat.select(["ap-northeast-1"])[0]
    assert (dearer.cost_per_hour > one.cost_per_hour).all()  # the regions' prices differ
    table = transfer.aws_table()
    price, _ = transfer.transfer_matrix(cat)
    for i, a in enumerate(cat.location_names):
        for j, b in enumerate(cat.location_names):
            assert price[i, j] == (0.0 if a == b else table[a, b])
    assert transfer.move(cat, 5, 0, 100.0)[0] == pytest.approx(9.0)  # out of Tokyo: $0.09/GB
    listed = CliRunner().invoke(cli, ["catalogs"]).output.splitlines()
    assert next(x for x in listed if x.startswith("aws-regions")).split()[-1] == "6"  # locations


def test_a_run_on_two_regions_of_aws_regions_reconciles_and_pays_the_tables_egress(tmp_path):
    from eventlog import check_against, recompute

    data = generate_trace(1, 4, seed=5, catalog="aws-regions")
    for j, job in enumerate(data["jobs"]):
        job["data_gb"] = 200.0
        job["data_at"] = ["us-east-1", "us-west-2"][j % 2]
    trace = Instance.from_dict(data)
    log = tmp_path / "events.jsonl"
    two = "us-east-1,us-west-2"
    result = simulate(trace, "incremental", log=log, locations=two, seed=2).to_dict()
    used = {
        n["vm"] for line in map(json.loads, log.read_text().splitlines()) for n in line["nodes"]
    }
    assert used and {v.split("@")[1] for v in used} <= set(two.split(","))
    assert check_against(recompute(log, trace), result, trace) == []
    assert result["transfers"] > 0  # both ways $0.02/GB in AWS's table
    assert result["egress_cost"] == pytest.approx(result["transfers"] * 200.0 * 0.02)


ROWS = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch
p3.2xlarge,V100,1.0,8.0,61.0,,3.06,0.370700,us-east-1,use1-az1,x86_64
p3.2xlarge,V100,1.0,8.0,61.0,,3.06,0.200000,us-east-1,use1-atl2-az1,x86_64
p3.2xlarge,V100,1.0,8.0,61.0,,3.06,,us-east-1,use1-az3,x86_64
p3.2xlarge,V100,1.0,8.0,61.0,,3.06,0.404100,us-east-1,use1-az5,x86_64
p3.2xlarge,V100,1.0,8.0,61.0,,4.234,0.423400,ap-northeast-2,apne2-az1,x86_64
g5.48xlarge,A10G,8.0,192.0,768.0,,23.62246,23.622500,ap-northeast-1,apne1-az1,x86_64
g5.48xlarge,A10G,8.0,192.0,768.0,,20.3681,20.368100,eu-central-1,euc1-az2,x86_64
g5.48xlarge,A10G,8.0,192.0,768.0,,20.3681,7.227300,eu-central-1,euc1-az3,x86_64
m5.large,,,2.0,8.0,,0.096,0.03,us-east-1,use1-az1,x86_64
"""  # SkyPilot's rows (commit 00148f2 of catalogs/v8/aws/vms.csv), GpuInfo left out


def _region_script():
    import importlib.util
    import sys
    from pathlib import Path

    scripts = Path(__file__).resolve().parents[1] / "scripts"
    sys.path.insert(0, str(scripts))  # it imports make_zone_catalogs, its neighbour
    try:
        spec = importlib.util.spec_from_file_location(
            "make_region_catalog", scripts / "make_region_catalog.py"
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(scripts))
    return module


def test_the_region_catalogs_spot_is_the_lowest_offer_of_a_regions_regular_zones():
    """Local Zones (use1-atl2-az1), zones without a spot price and zones whose spot is the
    on-demand price to SkyPilot's four decimals (23.6225 for 23.62246) are no offer; regions
    and types outside the catalog are skipped; a type whose zones disagree on demand is an error."""
    import csv
    import io

    script = _region_script()
    rows = list(csv.DictReader(io.StringIO(ROWS)))
    assert script.region_prices(rows) == {
        ("p3.2xlarge", "us-east-1"): (3.06, 0.3707),
        ("g5.48xlarge", "ap-northeast-1"): (23.62246, None),
        ("g5.48xlarge", "eu-central-1"): (20.3681, 7.2273),
    }
    text = script.regions_yaml(rows)
    cat = Catalog.from_dict(yaml.safe_load(text))
    assert cat.vm_names == (
        "p3.2xlarge@us-east-1", "g5.48xlarge@eu-central-1", "g5.48xlarge@ap-northeast-1"
    )  # fmt: skip
    assert "On demand only (no spot offer in any regular zone): g5.48xlarge@ap-northeast-1." in text
    rows[3]["Price"] = "3.1"
    with pytest.raises(ValueError, match="on-demand 3.06 and 3.1"):
        script.region_prices(rows)
