"""SkyNomad's traces as availability per location (`gpuaas.availability.skynomad`), on the
bundled sample (instances/spot/skynomad) and on small files written here."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from gpuaas.availability import PriceSeries, load_availability
from gpuaas.availability.skynomad import read_zone_trace, zone_availability, zone_of
from gpuaas.catalog import Catalog
from gpuaas.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "instances" / "spot" / "skynomad"
README = ROOT / "instances" / "README.md"
V100_ZONES = ("us-east-1c", "us-east-2b", "us-west-2a")


def catalog(zones, vm="p3.2xlarge", spot=0.95, extra=()):
    types = [
        {
            "name": vm,
            "location": z,
            "gpu": "V100",
            "gpus": 1,
            "cost_per_hour": 3.06,
            "spot_per_hour": spot,
        }
        for z in zones
    ]
    places = {z: {"region": z[:-1]} for z in (*zones, *V100_ZONES)}
    return Catalog.from_dict(
        {"name": "zones", "provider": "AWS", "locations": places, "vm_types": types + list(extra)}
    )


def test_sample_reads_preempted_convention_and_prices_per_zone():
    """`data` 1 = preempted: capacity is 1 - data[i] on tick i, tick by tick; each zone's
    capacity and per-tick prices go to its TYPE@ZONE type, with the on-demand price."""
    cat = catalog(V100_ZONES)
    a = load_availability(f"skynomad:{SAMPLE / 'v100'}", cat)
    assert set(a.capacity) == set(a.prices) == {f"p3.2xlarge@{z}" for z in V100_ZONES}
    for z in V100_ZONES:
        doc = json.loads((SAMPLE / "v100" / f"{z}_v100_1" / "full.json").read_text())
        gap = doc["metadata"]["gap_seconds"]
        cap, price = a.capacity[f"p3.2xlarge@{z}"], a.prices[f"p3.2xlarge@{z}"]
        for i in range(0, len(doc["data"]), 7):
            assert cap.at(i * gap + 1) == 1 - doc["data"][i]
            assert price.at(i * gap + 1) == doc["prices"][i]
        assert price.on_demand == 3.06
        assert cap.fraction_available(a.end) == pytest.approx(1 - np.mean(doc["data"]))
    assert a.end == 1330 * 195  # the shortest trace
    # us-east-1c is preempted most of the time there, us-west-2a is not (README's sample)
    assert a.capacity["p3.2xlarge@us-east-1c"].fraction_available(a.end) < 0.25
    assert a.capacity["p3.2xlarge@us-west-2a"].fraction_available(a.end) > 0.75


def test_every_type_at_a_zone_gets_its_capacity_and_other_types_none():
    big = {"name": "p3.8xlarge", "location": "us-east-1c", "gpu": "V100", "gpus": 4, "cost_per_hour": 12.24,
           "spot_per_hour": 3.7}  # fmt: skip
    plain = {"name": "p3.2xlarge", "gpu": "V100", "gpus": 1, "cost_per_hour": 3.06,
             "spot_per_hour": 0.9}  # fmt: skip
    cat = catalog(V100_ZONES, extra=(big, plain))
    a = load_availability(f"skynomad:{SAMPLE / 'v100'}", cat)
    assert a.capacity["p3.8xlarge@us-east-1c"] is a.capacity["p3.2xlarge@us-east-1c"]
    assert "p3.2xlarge" not in a.capacity and a.count("p3.2xlarge", 0.0) == 0


def test_start_cuts_each_trace_and_window_reads_a_numbered_file(tmp_path):
    cat = catalog(V100_ZONES)
    full = load_availability(f"skynomad:{SAMPLE / 'v100'}", cat)
    late = load_availability(f"skynomad:{SAMPLE / 'v100'},start=10", cat)
    assert late.end == full.end - 36000
    vm = "p3.2xlarge@us-east-2b"
    for t in (0.0, 1000.0, 50000.0):
        assert late.count(vm, t) == full.count(vm, t + 36000)
        assert late.prices[vm].at(t) == full.prices[vm].at(t + 36000)
    zone = tmp_path / "us-east-2b_v100_1"
    zone.mkdir()
    doc = {"metadata": {"gap_seconds": 60, "price_info": {"on_demand_price": 3.06, "price": 1.0}},
           "data": [1, 0, 0]}  # fmt: skip
    (zone / "2.json").write_text(json.dumps(doc))
    a = load_availability(f"skynomad:{tmp_path},window=2", catalog(["us-east-2b"]))
    assert [a.count(vm, t) for t in (0, 60, 120)] == [0, 1, 1]
    assert a.prices[vm].mean(180) == 1.0  # price_info.price throughout when no `prices`


def test_h100_sample_zones_from_folder_names_and_a_file_per_zone(tmp_path):
    zones = ("us-central1-a", "europe-west1-c", "asia-southeast1-b")
    cat = catalog(zones, vm="a3-highgpu-8g", spot=18.0)
    a = load_availability(f"skynomad:{SAMPLE / 'h100'}", cat)
    assert a.end == 432 * 600
    assert a.prices["a3-highgpu-8g@europe-west1-c"].on_demand == pytest.approx(90.868740288)
    # one file per zone, no sub-folders
    for z in zones:
        src = SAMPLE / "h100" / f"{z}_h100_16" / "full.json"
        (tmp_path / f"{z}_h100_16.json").write_text(src.read_text())
    b = load_availability(f"skynomad:{tmp_path}", cat)
    for vm in a.capacity:
        assert np.array_equal(a.capacity[vm].times, b.capacity[vm].times)
        assert np.array_equal(a.capacity[vm].counts, b.capacity[vm].counts)
    assert zone_of("us-east-1c_v100_1") == "us-east-1c" and zone_of("eu-x") == "eu-x"


def test_price_series_mean_is_time_weighted():
    p = PriceSeries(np.array([0.0, 10.0, 30.0]), np.array([1.0, 2.0, 4.0]), 5.0)
    assert p.mean(40) == pytest.approx((10 * 1 + 20 * 2 + 10 * 4) / 40)
    assert p.mean(5) == 1.0 and p.at(29.9) == 2.0 and p.on_demand == 5.0
    assert math.isnan(PriceSeries(np.array([0.0]), np.array([1.0])).on_demand)


def test_zone_availability_length_bounds_the_end():
    tr = read_zone_trace(SAMPLE / "v100" / "us-east-2b_v100_1" / "full.json")
    assert tr.zone == "us-east-2b"  # from price_info.zone
    a = zone_availability({"us-east-2b": tr}, catalog(["us-east-2b"]), start=195, length=3600)
    assert a.end == 3600


GOOD = {"metadata": {"gap_seconds": 60, "price_info": {"on_demand_price": 3.06}},
        "data": [0, 1], "prices": [1.0, 1.1]}  # fmt: skip

BAD = [
    ("skynomad-dir", None, None, "skynomad:{tmp}/none", "--availability: {tmp}/none: not a directory of SkyNomad traces"),
    ("skynomad-empty", "", None, "skynomad:{tmp}", "--availability: {tmp}: holds no trace: expected a sub-folder per zone (<zone>_<gpu>_<n>/full.json) or a <zone>.json per zone"),
    ("skynomad-no-file", "us-east-1c_v100_1/3.json", GOOD, "skynomad:{tmp}", "--availability: {tmp}/us-east-1c_v100_1: has no full.json"),
    ("skynomad-zone", "eu-west-9a_v100_1/full.json", GOOD, "skynomad:{tmp}", "--availability: {tmp}/eu-west-9a_v100_1/full.json: zone 'eu-west-9a' matches no VM type of catalog zones: name one TYPE@eu-west-9a (a VM type offered at a location is named TYPE@LOCATION)"),
    ("skynomad-data", "us-east-1c_v100_1/full.json", {**GOOD, "data": [0, 2]}, "skynomad:{tmp}", "{tmp}/us-east-1c_v100_1/full.json: data[1]: must be 0 (available) or 1 (preempted), got 2"),
    ("skynomad-prices", "us-east-1c_v100_1/full.json", {**GOOD, "prices": [1.0]}, "skynomad:{tmp}", "{tmp}/us-east-1c_v100_1/full.json: prices: must be a list of 2 prices, one per entry of data"),
    ("skynomad-price", "us-east-1c_v100_1/full.json", {**GOOD, "prices": [1.0, -1]}, "skynomad:{tmp}", "{tmp}/us-east-1c_v100_1/full.json: prices[1]: must be in [0, 1e+06] $/h (gpuaas.limits), got -1"),
    ("skynomad-no-price", "us-east-1c_v100_1/full.json", {"metadata": {"gap_seconds": 60}, "data": [0]}, "skynomad:{tmp}", "{tmp}/us-east-1c_v100_1/full.json: prices: missing: give prices (one per tick) or metadata.price_info.price"),
    ("skynomad-gap", "us-east-1c_v100_1/full.json", {**GOOD, "metadata": {}}, "skynomad:{tmp}", "{tmp}/us-east-1c_v100_1/full.json: metadata.gap_seconds: missing required field"),
    ("skynomad-json", "us-east-1c_v100_1/full.json", "{", "skynomad:{tmp}", "{tmp}/us-east-1c_v100_1/full.json: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    ("skynomad-start", "us-east-1c_v100_1/full.json", GOOD, "skynomad:{tmp},start=1", "--availability: {tmp}/us-east-1c_v100_1/full.json: start must be in [0, 120) s, got 3600"),
    ("skynomad-twice", "us-east-1c_k80_1/full.json", GOOD, "skynomad:{tmp}", "--availability: {tmp}/us-east-1c_v100_1/full.json: zone 'us-east-1c' again (also {tmp}/us-east-1c_k80_1/full.json): one trace a zone"),
    ("skynomad-option", "us-east-1c_v100_1/full.json", GOOD, "skynomad:{tmp},win=1", "--availability: skynomad:{tmp},win=1: unknown option 'win=1': window=N, start=H or counts=RUNS"),
    ("skynomad-counts-dir", "us-east-1c_v100_1/full.json", GOOD, "skynomad:{tmp},counts={tmp}/none", "--availability: {tmp}/none: counts: not a directory of probe rounds"),
    ("skynomad-counts-empty", "us-east-1c_v100_1/full.json", GOOD, "skynomad:{tmp},counts={tmp}", "--availability: {tmp}: counts: holds no probe round (*.json)"),
]  # fmt: skip

ROUND = {"scheduled_at": "2025-10-03T17:10:00-07:00", "interval_sec": 600,
         "zone_results": {"us-east-1c": {"instances_created": 3, "instances_requested": 16}}}  # fmt: skip
START = {**GOOD, "metadata": {**GOOD["metadata"], "start_time": "2025-10-04T00:10:00+00:00"}}
#: (name, trace, round, message) of a probe directory `runs/` beside the trace
BAD_COUNTS = [
    ("skynomad-counts-created", START, {**ROUND, "zone_results": {"us-east-1c": {"instances_created": -1}}}, "{tmp}/runs/r.json: zone_results.us-east-1c.instances_created: must be an integer in [0, 1000000000] (gpuaas.limits), got -1"),
    ("skynomad-counts-time", START, {**ROUND, "scheduled_at": "17:10"}, "{tmp}/runs/r.json: scheduled_at: must be an ISO 8601 time with its offset, got '17:10'"),
    ("skynomad-counts-zone", START, {**ROUND, "zone_results": {}}, "--availability: {tmp}/t/us-east-1c_v100_1/full.json: counts: no probe round of 'us-east-1c'"),
    ("skynomad-counts-start", GOOD, ROUND, "--availability: {tmp}/t/us-east-1c_v100_1/full.json: counts: the trace has no metadata.start_time to match rounds"),
    ("skynomad-counts-late", START, {**ROUND, "scheduled_at": "2025-10-05T00:00:00+00:00"}, "--availability: {tmp}/t/us-east-1c_v100_1/full.json: counts: no probe round of zone 'us-east-1c' before its start"),
]  # fmt: skip


@pytest.mark.parametrize("name,fname,content,source,message", BAD, ids=[b[0] for b in BAD])
def test_bad_skynomad_sources_give_one_line(tmp_path, name, fname, content, source, message):
    if fname:
        path = tmp_path / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    if name == "skynomad-twice":  # a second trace of the same zone
        (tmp_path / "us-east-1c_v100_1").mkdir()
        (tmp_path / "us-east-1c_v100_1" / "full.json").write_text(json.dumps(content))
    with pytest.raises(InputError) as exc:
        load_availability(source.format(tmp=tmp_path), catalog(V100_ZONES))
    assert str(exc.value) == message.format(tmp=tmp_path)


@pytest.mark.parametrize("name,trace,rnd,message", BAD_COUNTS, ids=[b[0] for b in BAD_COUNTS])
def test_bad_probe_rounds_give_one_line(tmp_path, name, trace, rnd, message):
    (tmp_path / "t" / "us-east-1c_v100_1").mkdir(parents=True)
    (tmp_path / "t" / "us-east-1c_v100_1" / "full.json").write_text(json.dumps(trace))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.json").write_text(json.dumps(rnd))
    with pytest.raises(InputError) as exc:
        load_availability(f"skynomad:{tmp_path}/t,counts={tmp_path}/runs", catalog(V100_ZONES))
    assert str(exc.value) == message.format(tmp=tmp_path)


def test_counts_give_each_type_its_share_of_the_zones_gpus(tmp_path):
    """`counts=RUNS`: a zone's capacity in GPUs per tick from the probe round of that tick
    (16, 3, none: the round before, 0 launched, then 9), each type floor(GPUs / its GPUs)
    VMs; without it the same trace gives every type 1 while any probe launched."""
    h100 = [
        {"name": f"a3-highgpu-{g}g", "location": "us-central1-a", "gpu": "H100", "gpus": g,
         "cost_per_hour": 11.0 * g, "spot_per_hour": 2.4 * g}
        for g in (1, 2, 8)
    ]  # fmt: skip
    cat = Catalog.from_dict({"name": "h", "provider": "GCP", "vm_types": h100,
                             "locations": {"us-central1-a": {"region": "us-central1"}}})  # fmt: skip
    doc = {"metadata": {"gap_seconds": 600, "start_time": "2025-10-04T00:10:00+00:00",
                        "price_info": {"on_demand_price": 88.0, "price": 19.0}},
           "data": [0, 0, 0, 1, 0]}  # fmt: skip
    (tmp_path / "t" / "us-central1-a_h100_16").mkdir(parents=True)
    (tmp_path / "t" / "us-central1-a_h100_16" / "full.json").write_text(json.dumps(doc))
    runs = tmp_path / "runs"
    runs.mkdir()
    for minute, n in ((10, 16), (20, 3), (40, 0), (50, 9)):  # no round at 00:30
        rnd = {"scheduled_at": f"2025-10-03T17:{minute}:00.002-07:00", "interval_sec": 600,
               "zone_results": {"us-central1-a": {"instances_created": n},
                                "us-west1-a": {"instances_created": 16}}}  # fmt: skip
        (runs / f"r{minute}.json").write_text(json.dumps(rnd))
    a = load_availability(f"skynomad:{tmp_path}/t,counts={runs}", cat)
    ticks = [i * 600 + 300 for i in range(5)]
    for g, want in ((1, [16, 3, 3, 0, 9]), (2, [8, 1, 1, 0, 4]), (8, [2, 0, 0, 0, 1])):
        cap = a.capacity[f"a3-highgpu-{g}g@us-central1-a"]
        assert [cap.at(t) for t in ticks] == want, g
    plain = load_availability(f"skynomad:{tmp_path}/t", cat)
    for g in (1, 2, 8):
        assert [plain.capacity[f"a3-highgpu-{g}g@us-central1-a"].at(t) for t in ticks] == [
            1, 1, 1, 0, 1
        ]  # fmt: skip


def test_readme_lists_every_skynomad_error():
    text = README.read_text()
    for name, *_, message in [*BAD, *BAD_COUNTS]:
        assert f"`{name}`" in text, name
        assert message.format(tmp="DIR").replace("|", "\\|") in text, name


def test_egress_table_is_the_artifacts_every_ordered_pair():
    """gpuaas/catalogs/egress-aws.csv: 34 regions, every ordered pair once, prices in $/GB
    as SkyNomad's migration model bills the V100 zones' regions."""
    path = ROOT / "gpuaas" / "catalogs" / "egress-aws.csv"
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("#")]
    rows = list(csv.DictReader(lines))
    pairs = {(r["src_region"], r["dst_region"]): float(r["usd_per_gb"]) for r in rows}
    regions = {s for s, _ in pairs} | {d for _, d in pairs}
    assert len(rows) == len(pairs) == 1122 == len(regions) * (len(regions) - 1)
    assert all(s != d and 0 < p < 1 for (s, d), p in pairs.items())
    assert pairs["us-east-1", "us-east-2"] == pairs["us-east-2", "us-east-1"] == 0.01
    assert pairs["us-east-1", "us-west-2"] == pairs["us-west-2", "us-east-2"] == 0.02


@pytest.mark.skipif(
    not os.environ.get("GPUAAS_SKYNOMAD_DATA"),
    reason="GPUAAS_SKYNOMAD_DATA names no copy of the artifact's data/ (prepare_data.sh run)",
)
def test_user_copy_of_skynomad_traces_reads_every_zone():
    root = Path(os.environ["GPUAAS_SKYNOMAD_DATA"])
    for sub, vm, n in (("converted_multi_region_aligned", "p3.2xlarge", 9),
                       ("converted_multi_region_aligned_h100_16_merged", "a3-highgpu-8g", 13)):  # fmt: skip
        zones = [zone_of(p.name) for p in sorted((root / sub).iterdir()) if p.is_dir()]
        assert len(zones) == n
        a = load_availability(f"skynomad:{root / sub}", catalog(zones, vm=vm))
        assert len(a.capacity) == n and all(
            0 < c.fraction_available(a.end) <= 1 for c in a.capacity.values()
        )


# -- scripts/skynomad_setting.py: the gpuaas side (their policies need the user's checkout) ----


def setting_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "skynomad_setting", ROOT / "scripts" / "skynomad_setting.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_setting_rebills_gpuaas_at_the_series_and_equals_its_bill_at_constant_prices(tmp_path):
    """The default on 6 h of the V100 sample (from 13 h: the spot price moves within it):
    re-billed from its event log at a constant series it is the Simulator's own bill; at the
    per-tick series it differs by the prices."""
    import dataclasses

    mod = setting_script()
    setting = mod.SETTINGS["v100"]
    zones = ["us-east-2b"]  # spot a third of the window there, at 0.918-0.9195 $/h
    traces, types = mod.load_traces(SAMPLE / "v100", setting, zones)
    assert types["us-east-2b"]["name"] == "p3.2xlarge@us-east-2b"
    start, deadline, work, gap = 13 * 3600.0, 6 * 3600.0, 4 * 3600.0, 195.0
    args = (types, zones, start, deadline, work, gap, 720.0, None, 50.0)
    first, last = int(start // gap), int((start + deadline) // gap)  # as gpuaas_window's
    flat = {
        z: dataclasses.replace(t, spot=np.full(len(t.spot), float(np.mean(t.spot[first:last]))))
        for z, t in traces.items()
    }
    c_mean, c_series, met, _, egress, moves = mod.gpuaas_window(flat, *args, tmp_path / "a.jsonl")
    assert met and c_series == pytest.approx(c_mean, rel=1e-9)
    c_mean2, c_series2, *_ = mod.gpuaas_window(traces, *args, tmp_path / "b.jsonl")
    assert c_mean2 == pytest.approx(c_mean, rel=1e-9)  # the same plan: the same mean prices
    assert c_series2 != pytest.approx(c_series, rel=1e-6)  # the price moves per tick
    assert egress == moves == 0  # one zone


def test_setting_egress_is_per_move_between_regions(tmp_path):
    mod = setting_script()
    log = tmp_path / "log.jsonl"
    spans = [["p3.2xlarge@us-west-2a:spot"], ["p3.2xlarge@us-east-2b:spot"], [],
             ["p3.2xlarge@us-east-2a"], ["p3.2xlarge@us-east-1c:spot"]]  # fmt: skip
    log.write_text("\n".join(json.dumps({"jobs": [{"vm": vm} for vm in s]}) for s in spans) + "\n")
    # us-west-2 -> us-east-2 0.02, us-east-2b -> us-east-2a free, us-east-2 -> us-east-1 0.01
    assert mod.move_egress(log, 50.0, "AWS") == (pytest.approx(1.5), 3)
    assert mod.region_of("us-central1-a") == "us-central1" and mod.region_of("us-east-1c") == (
        "us-east-1"
    )


def test_setting_script_refuses_bad_input_in_one_line(tmp_path, capsys):
    mod = setting_script()
    assert mod.main(["--dataset", "v100"]) == 2
    assert (
        capsys.readouterr().err == "error: --data: name the artifact's converted traces directory\n"
    )
    assert mod.main(["--data", str(SAMPLE / "v100"), "--windows", "5"]) == 2
    assert capsys.readouterr().err == "error: --windows: the data hold windows 0..0\n"
    assert mod.main(["--data", str(tmp_path), "--skynomad", str(tmp_path)]) == 2
    assert "not a checkout: no sky_spot/env.py" in capsys.readouterr().err
    assert mod.main(["--data", str(SAMPLE / "v100"), "--gpuaas", "default,nope"]) == 2
    assert capsys.readouterr().err == "error: --gpuaas: unknown nope: default, skynomad-gpuaas\n"


def test_cli_replays_skynomad_zones_and_refuses_a_bad_dir_in_one_line(tmp_path, monkeypatch):
    """`gpuaas simulate --availability skynomad:DIR` on a trace of TYPE@ZONE types."""
    from click.testing import CliRunner

    from gpuaas.cli import cli

    monkeypatch.chdir(tmp_path)
    types = "\n".join(
        f"  - {{name: p3.2xlarge, location: {z}, gpu: V100, gpus: 1, cost_per_hour: 3.06, "
        f"spot_per_hour: 0.95}}"
        for z in V100_ZONES
    )
    places = "\n".join(f"  {z}: {{region: {z[:-1]}}}" for z in V100_ZONES)
    (tmp_path / "cat.yaml").write_text(
        f"name: zones\nprovider: AWS\nlocations:\n{places}\nvm_types:\n{types}\n"
    )
    gen = ["generate", "--catalog", "cat.yaml", "--jobs", "3", "--nodes", "1", "-o", "t.json"]
    assert CliRunner().invoke(cli, gen).exit_code == 0
    res = CliRunner().invoke(
        cli, ["simulate", "t.json", "--availability", f"skynomad:{SAMPLE / 'v100'}"]
    )
    assert res.exit_code == 0, res.output
    assert f"spot VMs (skynomad:{SAMPLE / 'v100'})" in res.output
    res = CliRunner().invoke(cli, ["simulate", "t.json", "--availability", "skynomad:none"])
    assert res.exit_code == 2
    assert res.output == "gpuaas: error: --availability: none: not a directory of SkyNomad traces\n"


@pytest.mark.skipif(
    not os.environ.get("GPUAAS_SKYNOMAD_DATA"),
    reason="GPUAAS_SKYNOMAD_DATA names no copy of the artifact's data/ (prepare_data.sh run)",
)
@pytest.mark.parametrize(
    "name", ["setting-v100", "setting-v100-all", "setting-h100", "sweep-deadline", "sweep-regions"]
)
def test_results_default_windows(name):
    """scripts/results/skynomad-<name>.json: gpuaas's default on the first and last window
    (of a sweep: of its first and last cell) again, the same costs, egress and moves
    (scripts/results/README.md, sample `skynomad`)."""
    import tempfile

    mod = setting_script()
    saved = json.loads((ROOT / "scripts" / "results" / f"skynomad-{name}.json").read_text())
    dataset = saved["setting"]["dataset"]
    sub = {"v100": "converted_multi_region_aligned",
           "h100": "converted_multi_region_aligned_h100_16_merged"}[dataset]  # fmt: skip
    data = Path(os.environ["GPUAAS_SKYNOMAD_DATA"]) / sub
    cells = [k for k in saved if k != "setting"]
    cells = [saved] if "default" in saved else [saved[cells[0]], saved[cells[-1]]]
    args = mod.argparse.Namespace(
        skynomad=None, no_gpuaas=False, gpuaas=["default"], gpuaas_checkpoint_gb=None
    )
    for cell in cells:
        windows = cell["setting"]["windows"]
        pick = [0, len(windows) - 1]
        with tempfile.TemporaryDirectory() as tmp:
            got = mod.run_cell(
                args, mod.SETTINGS[dataset], cell["setting"]["zones"], cell["setting"]["ratio"],
                [windows[i] for i in pick], data, Path(tmp),
            )["default"]  # fmt: skip
        want = cell["default"]
        for key in ("windows", "windows_mean_price", "egress", "moves"):
            assert got[key] == pytest.approx([want[key][i] for i in pick], rel=1e-6), key
