"""gpuaas.availability: the common type, the trace readers (committed MIT sample; the user's copy
of the Can't Be Late traces when GPUAAS_SPOT_TRACES names it) and the parametric model."""

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuaas.availability import UNLIMITED, Availability, Capacity, load_availability
from gpuaas.availability.model import (
    SPELL_MEAN,
    SPELL_RATE,
    SpotModel,
    bucket_rate,
    model_availability,
    parse_model,
    spot_advisor_buckets,
    type_params,
)
from gpuaas.availability.readers import read_node_events, read_spot_traces
from gpuaas.catalog import load_catalog
from gpuaas.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "instances" / "spot" / "bamboo-p3-sample.csv"
README = ROOT / "instances" / "README.md"
AWS = load_catalog("aws-us-east-1")
USER_TRACES = os.environ.get("GPUAAS_SPOT_TRACES")


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


# -- the type ---------------------------------------------------------------------------------


def test_capacity_merges_equal_neighbours_and_answers_by_time():
    cap = Capacity([0.0, 10.0, 20.0, 30.0], [2, 2, 0, 3])
    assert list(cap.times) == [0.0, 20.0, 30.0] and list(cap.counts) == [2, 0, 3]
    assert [cap.at(t) for t in (0, 19.9, 20, 29, 30, 1e9)] == [2, 2, 0, 0, 3, 3]
    assert cap.fraction_available(40.0) == pytest.approx(30 / 40)


def test_events_are_time_ordered_capacity_first_and_excess_follows_capacity():
    a = Availability(
        {"b": Capacity([0, 5], [1, 0]), "a": Capacity([0, 5, 9], [3, 1, 0])},
        {"a": [[5, 1], [2, 0]]},
    )
    ev = a.events()
    assert [(e.time, e.vm, e.count, e.slot) for e in ev] == [
        (2.0, "a", None, 0),
        (5.0, "a", 1, None),
        (5.0, "b", 0, None),
        (5.0, "a", None, 1),
        (9.0, "a", 0, None),
    ]
    assert a.excess("a", 3, 5.0) == 2 and a.excess("a", 1, 5.0) == 0
    assert a.count("not-listed", 0.0) == 0
    assert [e.time for e in a.events(start=5.0)] == [9.0]


# -- readers ----------------------------------------------------------------------------------


def test_bamboo_sample_counts_follow_add_and_remove():
    cap, end = read_node_events(str(SAMPLE))
    lines = [ln for ln in SAMPLE.read_text().splitlines() if ln and not ln.startswith("#")]
    held = set()
    for ln in lines:  # replay the file independently: the count after each time's events
        ms, ev, node = ln.split(",")
        (held.add if ev == "add" else held.remove)(node)
        if ln is lines[-1] or lines[lines.index(ln) + 1].split(",")[0] != ms:
            assert cap.at(int(ms) / 1000) == len(held)
    assert end == int(lines[-1].split(",")[0]) / 1000
    a = load_availability(f"p3.2xlarge={SAMPLE}", AWS)
    assert set(a.capacity) == {"p3.2xlarge"} and a.count("p3.2xlarge", 0.0) == 18


def test_spot_traces_json_reads_counts_per_tick_from_a_start(tmp_path):
    path = write(
        tmp_path, "us-west-2a_v100_1.json", {"metadata": {"gap_seconds": 600}, "data": [1, 1, 0, 1]}
    )
    cap, end = read_spot_traces(path)
    assert [cap.at(t) for t in (0, 1199, 1200, 1800, 5000)] == [1, 1, 0, 1, 1] and end == 2400
    cap, end = read_spot_traces(path, start=900)
    assert [cap.at(t) for t in (0, 299, 300, 900)] == [1, 1, 0, 1] and end == 1500
    a = load_availability(path, AWS)  # default VM type from the name: one V100
    assert set(a.capacity) == {"p3.2xlarge"}


BAD = [
    ("json-gap", "x_v100_1.json", {"metadata": {"gap_seconds": 0}, "data": [1]}, "p3.2xlarge=", "x_v100_1.json: metadata.gap_seconds: must be a number > 0, got 0"),
    ("json-no-metadata", "x_v100_1.json", {"data": [1]}, "", "x_v100_1.json: metadata.gap_seconds: missing required field"),
    ("json-count", "x_v100_1.json", {"metadata": {"gap_seconds": 600}, "data": [1, -1]}, "", "x_v100_1.json: data[1]: must be an integer >= 0, got -1"),
    ("json-data", "x_v100_1.json", {"metadata": {"gap_seconds": 600}, "data": []}, "", "x_v100_1.json: data: must be a non-empty list of counts"),
    ("json-count-huge", "x_v100_1.json", {"metadata": {"gap_seconds": 600}, "data": [1, 10**30]}, "", "x_v100_1.json: data[1]: must be <= 1000000000 (gpuaas.limits), got 1000000000000000000000000000000"),
    ("json-gap-huge", "x_v100_1.json", {"metadata": {"gap_seconds": 1e308}, "data": [1, 0]}, "", "x_v100_1.json: metadata.gap_seconds: must be in [1, 1e+09] s (gpuaas.limits), got 1e+308"),
    ("json-span", "x_v100_1.json", {"metadata": {"gap_seconds": 1e9}, "data": [1, 0]}, "", "x_v100_1.json: data: 2 counts of 1e+09 s cover 2e+09 s, more than 1e+09 s (gpuaas.limits)"),
    ("json-no-vm", "x_k80_1.json", {"metadata": {"gap_seconds": 600}, "data": [1]}, "", "--availability: x_k80_1.json: catalog aws-us-east-1 has no type with 1 K80 GPU(s); name the VM type: VM=PATH"),
    ("csv-no-vm", "n.csv", "0,add,a\n", "", "--availability: n.csv: name the VM type: VM=PATH"),
    ("csv-unknown-vm", "n.csv", "0,add,a\n", "p9.huge=", "--availability: p9.huge=n.csv: unknown VM type 'p9.huge' in catalog aws-us-east-1"),
    ("csv-fields", "n.csv", "0,add\n", "p3.2xlarge=", "n.csv: line 1: has 2 field(s); expected 3: milliseconds,add|remove,node"),
    ("csv-time", "n.csv", "60000,add,a\n0,add,b\n", "p3.2xlarge=", "n.csv: line 2: milliseconds: goes back in time (0 < 60000)"),
    ("csv-event", "n.csv", "0,join,a\n", "p3.2xlarge=", "n.csv: line 1: event: must be add or remove, got 'join'"),
    ("csv-remove", "n.csv", "0,add,a\n10,remove,b\n", "p3.2xlarge=", "n.csv: line 2: node: 'b' removed but not held"),
    ("csv-ms", "n.csv", "soon,add,a\n", "p3.2xlarge=", "n.csv: line 1: milliseconds: must be an integer, got 'soon'"),
    ("csv-no-spot-price", "n.csv", "0,add,a\n", "p5.4xlarge=", "--availability: p5.4xlarge=n.csv: VM type 'p5.4xlarge' has no spot price in catalog aws-us-east-1, so no spot capacity to replay; name a type with one (gpuaas catalogs --json)"),
    ("csv-ms-huge", "n.csv", "0,add,a\n1e20,add,b\n", "p3.2xlarge=", "n.csv: line 2: milliseconds: 100000000000000000000 ms is more than 1e+09 s (gpuaas.limits)"),
    ("suffix", "t.dat", "x", "p3.2xlarge=", "--availability: p3.2xlarge=t.dat: a trace file is .json (Can't Be Late), .csv (Bamboo / Parcae node events) or .txt (Bamboo's GCP count logs)"),
    ("txt-no-vm", "c.txt", "2021-12-11, 11:11:30, 5\n", "", "--availability: c.txt: name the VM type: VM=PATH"),
    ("txt-fields", "c.txt", "2021-12-11, 5\n", "p3.2xlarge=", "c.txt: line 1: has 2 field(s); expected 3: YYYY-MM-DD, HH:MM:SS, count"),
    ("txt-date", "c.txt", "2021-13-11, 11:11:30, 5\n", "p3.2xlarge=", "c.txt: line 1: expected a date and a time (YYYY-MM-DD, HH:MM:SS), got '2021-13-11, 11:11:30, 5'"),
    ("txt-count", "c.txt", "2021-12-11, 11:11:30, many\n", "p3.2xlarge=", "c.txt: line 1: count: must be an integer, got 'many'"),
    ("txt-time", "c.txt", "2021-12-11, 11:11:30, 5\n2021-12-11, 11:00:00, 4\n", "p3.2xlarge=", "c.txt: line 2: time: goes back in time ('2021-12-11, 11:00:00, 4')"),
    ("txt-count-huge", "c.txt", "2021-12-11, 11:11:30, 1e30\n", "p3.2xlarge=", "c.txt: line 1: count: must be <= 1000000000 (gpuaas.limits), got '1e30'"),
    ("txt-offset", "c.txt", "2021-12-11, 11:11:30, 5\n2021-12-11, 11:11:40+05:00, 4\n", "p3.2xlarge=", "c.txt: line 2: time: has a UTC offset, unlike line 1; give every line one or none"),
    ("txt-span", "c.txt", "0001-01-01, 00:00:00, 5\n9999-12-31, 23:59:59, 4\n", "p3.2xlarge=", "c.txt: line 2: time: 3.16e+11 s after the first line, more than 1e+09 s (gpuaas.limits)"),
    ("txt-empty", "c.txt", "# nothing\n", "p3.2xlarge=", "c.txt: no lines; expected YYYY-MM-DD, HH:MM:SS, count"),
    ("model-key", None, None, "model:rat=1", "--availability: model: rat=1: expected key=value with key rate, spell_rate, spell_mean, count, family or seed"),
    ("model-rate", None, None, "model:rate=-1", "--availability: model: rate: must be a finite number >= 0, got '-1'"),
    ("model-mean", None, None, "model:spell_mean=0", "--availability: model: spell_mean: must be a finite number > 0, got '0'"),
    ("model-rate-huge", None, None, "model:rate=1e300", "--availability: model: rate: must be in [0, 3600] per hour (at most one a second; gpuaas.availability.model), got '1e300'"),
    ("model-spell-rate", None, None, "model:spell_rate=1e5", "--availability: model: spell_rate: must be in [0, 3600] per hour (at most one a second; gpuaas.availability.model), got '1e5'"),
    ("model-mean-tiny", None, None, "model:spell_mean=1e-9", "--availability: model: spell_mean: must be in [0.000278, 2.78e+05] hours (1 s to 1e+09 s; gpuaas.availability.model), got '1e-9'"),
    ("model-events", None, None, "model:rate=2", "--availability: model:rate=2.0,spell_rate=type,spell_mean=type,count=any,family=0,seed=0: would draw about 2.58e+06 capacity changes and interruptions over 1.44e+03 h on 64 slot(s) of 14 VM type(s), more than 1000000 (gpuaas.limits); lower rate or spell_rate"),
]  # fmt: skip


@pytest.mark.parametrize("name,fname,content,prefix,message", BAD, ids=[b[0] for b in BAD])
def test_bad_availability_sources_give_one_line(
    tmp_path, monkeypatch, name, fname, content, prefix, message
):
    monkeypatch.chdir(tmp_path)
    if fname:
        write(tmp_path, fname, content)
    with pytest.raises(InputError) as exc:
        load_availability(prefix + (fname or ""), AWS)
    assert str(exc.value) == message


def test_readme_lists_every_availability_error():
    text = README.read_text()
    for name, *_, message in BAD:
        assert f"`{name}`" in text, name
        assert message.replace("|", "\\|") in text, name


@pytest.mark.skipif(not USER_TRACES, reason="GPUAAS_SPOT_TRACES names no copy of spot-traces")
def test_user_copy_of_cant_be_late_traces_reads_every_file():
    """Every availability file of the user's copy reads; 1-node values are the 0/1 of the raw
    JSON tick by tick (1 = available), and multi-node counts stay within the VMs requested."""
    root = Path(USER_TRACES)
    files = sorted(root.glob("availability/*/*/*.json"))
    assert files
    for path in files:
        raw = json.loads(path.read_text())
        cap, end = read_spot_traces(str(path))
        gap = raw["metadata"]["gap_seconds"]
        assert end == len(raw["data"]) * gap
        got = [cap.at(i * gap) for i in range(len(raw["data"]))]
        assert got == raw["data"]
        assert max(got) <= (16 if "16-node" in str(path) else 1)


# -- the model --------------------------------------------------------------------------------


def test_bucket_defaults_cover_the_aws_catalog_and_the_rate_matches_the_monthly_fraction():
    buckets = spot_advisor_buckets()
    spot_types = [v for v, s in zip(AWS.vm_names, AWS.spot_per_hour) if math.isfinite(s)]
    assert set(spot_types) <= set(buckets) | {"p5.4xlarge"}
    assert 1 - math.exp(-bucket_rate(">20%") * 730) == pytest.approx(0.25)
    assert bucket_rate("<5%") < bucket_rate("10-15%") < bucket_rate(">20%")


def test_model_defaults_and_parse():
    assert parse_model("model") == SpotModel(None, None, None, 0)
    assert parse_model("model:rate=0.5,seed=7", seed=1) == SpotModel(0.5, None, None, 7)
    assert parse_model("model:count=16,family=1") == SpotModel(count=16, family=True)
    for bad in ("count=-1", "count=1.5", "family=2"):
        with pytest.raises(InputError, match=bad.partition("=")[0]):
            parse_model(f"model:{bad}")
    a = load_availability("model", AWS, horizon=3600.0, slots=2)
    assert set(a.capacity) == {
        v for v, s in zip(AWS.vm_names, AWS.spot_per_hour) if math.isfinite(s)
    }


def test_model_is_seeded():
    one = model_availability(AWS, SpotModel(rate=0.3, seed=4), horizon=86400.0, slots=3)
    two = model_availability(AWS, SpotModel(rate=0.3, seed=4), horizon=86400.0, slots=3)
    three = model_availability(AWS, SpotModel(rate=0.3, seed=5), horizon=86400.0, slots=3)
    assert one.events() == two.events() != three.events()


@settings(max_examples=25, deadline=None)
@given(
    rate=st.floats(0.0, 2.0),
    spell_rate=st.floats(0.0, 1.0),
    spell_mean=st.floats(0.05, 5.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_model_spells_never_overlap_and_counts_never_negative(rate, spell_rate, spell_mean, seed):
    cat = load_catalog("gcp-us-central1")
    a = model_availability(
        cat, SpotModel(rate, spell_rate, spell_mean, seed), horizon=5 * 86400.0, slots=4
    )
    for vm, cap in a.capacity.items():
        assert np.all(np.diff(cap.times) > 0) and cap.times[0] == 0  # pieces are disjoint
        assert set(cap.counts.tolist()) <= {0, UNLIMITED} and cap.counts[0] == UNLIMITED
        assert np.all(cap.counts[1:] != cap.counts[:-1])  # spells alternate, never overlap
        ev = a.interruptions[vm]
        assert np.all(ev[:, 0] >= 0) and np.all(ev[:, 0] < a.end) and np.all(ev[:, 1] < 4)


@settings(max_examples=10, deadline=None)
@given(rate=st.floats(0.05, 1.0), seed=st.integers(0, 2**32 - 1))
def test_empirical_interruption_rate_converges_to_the_parameter(rate, seed):
    """Interruptions per slot-hour over 64 slots x 1000 h: within 5 standard deviations of a
    Poisson count with mean rate x 64 000, and spell fractions near their stationary value."""
    horizon, slots = 1000 * 3600.0, 64
    a = model_availability(AWS, SpotModel(rate, 0.25, 1.0, seed), horizon=horizon, slots=slots)
    n = len(a.interruptions["p3.2xlarge"])
    mean = rate * slots * 1000
    assert abs(n - mean) <= 5 * math.sqrt(mean)
    frac = a.capacity["p3.2xlarge"].fraction_available(horizon)
    assert frac == pytest.approx(1 / (1 + 0.25 * 1.0), abs=0.08)  # mean up 4 h, down 1 h


def test_model_defaults_are_per_gpu_family():
    """V100 and H100 have spells from their public traces, T4 and A100 partial drops, A10G and
    L4 their Spot Advisor bucket alone (families.csv)."""
    p = {AWS.vm_names[v]: type_params(AWS, v) for v in range(AWS.n_vms)}
    assert (p["p3.2xlarge"].spell_rate, p["p3.2xlarge"].spell_mean) == (SPELL_RATE, SPELL_MEAN)
    assert p["p5.48xlarge"].spell_rate > 0 and p["p5.48xlarge"].rate > 0.2
    assert p["g4dn.xlarge"].spell_rate == 0 and p["g4dn.xlarge"].rate > 0.6
    assert p["g6.xlarge"].spell_rate == 0 and p["g6.xlarge"].rate == pytest.approx(
        bucket_rate(">20%")
    )
    a = model_availability(AWS, parse_model("model"), horizon=30 * 86400.0, slots=2)
    assert len(a.capacity["g6.xlarge"].times) == 1 < len(a.capacity["p3.2xlarge"].times)


def test_model_count_and_family_spells():
    a = model_availability(
        AWS, parse_model("model:count=3,family=1,seed=2"), horizon=30 * 86400.0, slots=2
    )
    v100 = [a.capacity[n] for n in ("p3.2xlarge", "p3.8xlarge", "p3.16xlarge")]
    assert all(np.array_equal(c.times, v100[0].times) for c in v100)  # one draw per family
    assert set(v100[0].counts.tolist()) == {0, 3}
    b = model_availability(AWS, parse_model("model:seed=2"), horizon=30 * 86400.0, slots=2)
    assert not np.array_equal(b.capacity["p3.2xlarge"].times, b.capacity["p3.8xlarge"].times)
