"""Inputs that must not hang or lie (issue 39): spot capacity on a catalog without spot prices,
availability files and models beyond the limits, input files that are devices or too large, and
an availability that changes too often for a simulation to end. Each answer is one line, exit
code 2, no output file (instances/README.md, "Availability errors" and "Limits")."""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.errors import SolverError
from gpuaas.generator import generate_trace
from gpuaas.instance import load_instance
from gpuaas.limits import MAX_INPUT_BYTES, MAX_SPOT_EVENTS
from gpuaas.simulator import Simulator

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "instances" / "trace-small.json"
P3_SAMPLE = ROOT / "instances" / "spot" / "bamboo-p3-sample.csv"


def refused(tmp_path, monkeypatch, args, message):
    """`gpuaas ARGS -o out.json`: exit 2, exactly `message` on one line, no new file."""
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    res = CliRunner().invoke(cli, [*args, "-o", "out.json"])
    assert res.exit_code == 2, res.output
    assert res.output == f"gpuaas: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.fixture
def aws_trace(tmp_path):
    path = tmp_path / "aws.json"
    path.write_text(json.dumps(generate_trace(2, jobs=3, seed=1, catalog="aws-us-east-1")))
    return path.name


# -- case 7: spot capacity needs spot prices -------------------------------------------------


@pytest.mark.parametrize("command", ["simulate", "compare", "bound"])
@pytest.mark.parametrize("option", [["--spot"], ["--availability", "model"]])
def test_spot_on_a_catalog_without_spot_prices(tmp_path, monkeypatch, command, option):
    refused(
        tmp_path,
        monkeypatch,
        [command, str(TRACE), *option, *(["-q"] if command == "compare" else [])],
        "--spot: catalog azure-2021 has no VM type with a spot price (spot_per_hour); use a "
        "catalog with them (gpuaas catalogs, column spot)",
    )


def test_availability_for_a_type_without_spot_price(tmp_path, monkeypatch, aws_trace):
    item = f"p5.4xlarge={P3_SAMPLE}"
    refused(
        tmp_path,
        monkeypatch,
        ["simulate", aws_trace, "--availability", item],
        f"--availability: {item}: VM type 'p5.4xlarge' has no spot price in catalog "
        "aws-us-east-1, so no spot capacity to replay; name a type with one "
        "(gpuaas catalogs --json)",
    )


@pytest.mark.parametrize("where", ["generated", "given"])
def test_spot_campaign_on_a_catalog_without_spot_prices(tmp_path, where):
    """A campaign with a `spot` axis on a catalog without spot prices is refused by its spec,
    as `--spot` is (it would run on demand while its rows say spot)."""
    from gpuaas.experiments.spec import load_spec

    head = (
        f"traces: [{TRACE}]\n"
        if where == "given"
        else "nodes: [2]\narrivals: [low]\nseeds: [1]\ncatalog: azure-2021\n"
    )
    spec = tmp_path / "s.yaml"
    spec.write_text(head + "methods: [incremental]\nspot: [model]\n")
    with pytest.raises(Exception) as err:
        load_spec(spec)
    assert str(err.value) == (
        f"{spec}: spot: catalog azure-2021 has no VM type with a spot price (spot_per_hour); "
        "use a catalog with them (gpuaas catalogs, column spot)"
    ), str(err.value)
    spec.write_text(head + "methods: [incremental]\n")
    assert load_spec(spec).catalog  # without the axis the same spec loads


# -- case 10: availability files beyond the limits -------------------------------------------

AVAILABILITY_FILES = {
    "huge-count": (
        "x_v100_1.json",
        '{"metadata": {"gap_seconds": 600}, "data": [1, 1000000000000000000000000000000]}',
        "x_v100_1.json: data[1]: must be <= 1000000000 (gpuaas.limits), got "
        "1000000000000000000000000000000",
    ),
    "huge-gap": (
        "x_v100_1.json",
        '{"metadata": {"gap_seconds": 1e308}, "data": [1, 0]}',
        "x_v100_1.json: metadata.gap_seconds: must be in [1, 1e+09] s (gpuaas.limits), got 1e+308",
    ),
    "log-count": (
        "p3.2xlarge=c.txt",
        "2021-12-11, 11:11:30, 1e30\n",
        "c.txt: line 1: count: must be <= 1000000000 (gpuaas.limits), got '1e30'",
    ),
    "log-offset": (
        "p3.2xlarge=c.txt",
        "2021-12-11, 11:11:30, 5\n2021-12-11, 11:11:40+05:00, 4\n",
        "c.txt: line 2: time: has a UTC offset, unlike line 1; give every line one or none",
    ),
}


@pytest.mark.parametrize("command", ["simulate", "compare", "bound"])
@pytest.mark.parametrize("case", sorted(AVAILABILITY_FILES))
def test_availability_files_beyond_the_limits(tmp_path, monkeypatch, aws_trace, command, case):
    item, content, message = AVAILABILITY_FILES[case]
    (tmp_path / item.rpartition("=")[2]).write_text(content)
    args = [command, aws_trace, "--availability", item]
    if command == "compare":
        args += ["--methods", "managed-spot", "-q"]  # -q: no "compare: ..." header line
    refused(tmp_path, monkeypatch, args, message)


# -- case 11: the availability model's parameters and cost are bounded ------------------------

MODELS = {
    "model:rate=1e300": "--availability: model: rate: must be in [0, 3600] per hour (at most one "
    "a second; gpuaas.availability.model), got '1e300'",
    "model:rate=3600": "--availability: model:rate=3600.0,spell_rate=type,spell_mean=type,count=any,"
    "family=0,seed=1: "
    "would draw about 2.11e+07 capacity changes and interruptions over 210 h on 2 slot(s) of "
    "14 VM type(s), more than 1000000 (gpuaas.limits); lower rate or spell_rate",
    "model:spell_rate=3600,spell_mean=0.001": "--availability: model:rate=bucket,"
    "spell_rate=3600.0,spell_mean=0.001,count=any,family=0,seed=1: would draw about 4.6e+06 capacity changes and "
    "interruptions over 210 h on 2 slot(s) of 14 VM type(s), more than 1000000 "
    "(gpuaas.limits); lower rate or spell_rate",
}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_model_refused_before_drawing(tmp_path, monkeypatch, aws_trace, model):
    """Refused before a single event is drawn (was: a ValueError, gigabytes, or minutes)."""
    refused(tmp_path, monkeypatch, ["simulate", aws_trace, "--availability", model], MODELS[model])


# -- case 12: inputs are regular files of bounded size ----------------------------------------


def test_device_or_fifo_as_input_is_refused_before_reading(tmp_path, monkeypatch, aws_trace):
    """A link to /dev/zero as a trace or an availability file, a FIFO without a writer: refused
    at once (was: 2.7 GB read in 14 s before failing; a FIFO waits for a writer forever)."""
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "zero_v100_1.json").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.json")
    device = "is a character device; inputs are read from regular files"
    refused(tmp_path, monkeypatch, ["simulate", "zero.json"], f"zero.json: {device}")
    refused(
        tmp_path,
        monkeypatch,
        ["simulate", aws_trace, "--availability", "zero_v100_1.json"],
        f"zero_v100_1.json: {device}",
    )
    refused(
        tmp_path,
        monkeypatch,
        ["solve", "fifo.json"],
        "fifo.json: is a FIFO (a pipe); inputs are read from regular files",
    )


def test_input_larger_than_the_limit_is_refused_before_reading(tmp_path, monkeypatch):
    with open(tmp_path / "big.json", "wb") as fh:  # sparse: no disk used
        fh.truncate(MAX_INPUT_BYTES + 1)
    refused(
        tmp_path,
        monkeypatch,
        ["solve", "big.json"],
        f"big.json: is {MAX_INPUT_BYTES + 1} bytes, more than the {MAX_INPUT_BYTES} (512 MiB) "
        "an input may have (gpuaas.limits)",
    )


def test_availability_entries_are_capped(tmp_path, monkeypatch, aws_trace):
    """10^6 + 1 counts: refused after parsing 2 MB; 2 x 10^7 (40 MB, was accepted after 23 s
    and 750 MB): refused by its size before parsing."""
    doc = {"metadata": {"gap_seconds": 1}, "data": [0] * (MAX_SPOT_EVENTS + 1)}
    (tmp_path / "many_v100_1.json").write_text(json.dumps(doc, separators=(",", ":")))
    refused(
        tmp_path,
        monkeypatch,
        ["simulate", aws_trace, "--availability", "many_v100_1.json"],
        f"many_v100_1.json: data: {MAX_SPOT_EVENTS + 1} counts, more than {MAX_SPOT_EVENTS} "
        "(gpuaas.limits)",
    )
    with open(tmp_path / "huge_v100_1.json", "wb") as fh:
        fh.truncate(40_000_041)
    refused(
        tmp_path,
        monkeypatch,
        ["simulate", aws_trace, "--availability", "huge_v100_1.json"],
        "huge_v100_1.json: is 40000041 bytes, more than the 16777216 (16 MiB) an input may have "
        "(gpuaas.limits)",
    )


# -- case 14: an availability that changes too often for the event limit ---------------------


@pytest.fixture
def one_job(tmp_path):
    """One job of at least 1639.6 s (its fastest configuration) released at 0."""
    path = tmp_path / "one.json"
    path.write_text(json.dumps(generate_trace(1, jobs=1, seed=1, catalog="aws-us-east-1")))
    return path


def flipping(tmp_path, n):
    """A Can't Be Late file whose capacity flips between 0 and 1 every second, n ticks."""
    path = tmp_path / "flip_v100_1.json"
    path.write_text(json.dumps({"metadata": {"gap_seconds": 1}, "data": [i % 2 for i in range(n)]}))
    return path.name


def test_availability_changing_too_often_is_refused_before_the_run(tmp_path, monkeypatch, one_job):
    """1 499 changes while the job must still run, more than its 1 000 events: refused at once,
    naming the file (was: 49 s of simulation, then exit 3 blaming the events per job)."""
    name = flipping(tmp_path, 1500)
    refused(
        tmp_path,
        monkeypatch,
        ["simulate", one_job.name, "--availability", name],
        f"{name}: the spot availability changes at 1499 distinct times while the trace's jobs "
        "are certainly running, more than the 1000 rescheduling events a simulation of 1 job(s) "
        "may take (1000 per job and one a tick within the jobs' windows, gpuaas.limits); replay a "
        "coarser availability",
    )


def test_event_limit_names_the_availability(tmp_path, monkeypatch, one_job):
    """A run stopped by the event limit says how many of its events the availability caused."""
    monkeypatch.chdir(tmp_path)
    name = flipping(tmp_path, 600)
    # the job runs on p3.2xlarge alone and managed-spot takes its spot whenever it can: a change
    # of capacity while no spot is held or taken is no rescheduling point (`Plan.replanned`)
    job = json.loads(one_job.read_text())
    job["jobs"][0]["times"] = {"p3.2xlarge": job["jobs"][0]["times"]["p3.2xlarge"]}
    only = tmp_path / "only-p3.json"
    only.write_text(json.dumps(job))
    sim = Simulator(load_instance(only), "managed-spot", availability=name, spot=True, seed=1)
    assert sim.market.least_steps(sim.actual) == 599  # a lower bound: the run takes 601
    sim.max_events = 50
    with pytest.raises(SolverError) as exc:
        sim.run()
    assert str(exc.value) == (
        "simulation stopped at t=50 s after 51 events: more than 1000 rescheduling events per "
        "job and one a tick within the jobs' windows (gpuaas.limits), 50 of them at changes of "
        f"the spot availability {name}; it cannot end"
    )
