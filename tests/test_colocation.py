"""Co-location slowdown end to end (issue 44 item 2): the table in the instance format and in
Python, the simulator's actual speeds (reconciled by tests/eventlog.py), the decisions' table
(`RunConfig.colocation`) and the pairs the speed model learns online."""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import math
import os
from pathlib import Path

import eventlog
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuaas.cli import cli
from gpuaas.colocation import Colocation
from gpuaas.errors import InputError, StateError
from gpuaas.instance import Instance, JobSpec, load_instance
from gpuaas.rescheduler import Rescheduler
from gpuaas.rescheduler.speed import learned
from gpuaas.run_config import RunConfig
from gpuaas.simulator import Simulator, simulate, trace_bound

ROOT = Path(__file__).resolve().parents[1]
#: two one-GPU jobs that must share the one 2-GPU VM (N = 1): a of workload r, b of g
TRACE = {
    "catalog": {"vm_types": [{"name": "X", "gpu": "V100", "gpus": 2, "cost_per_hour": 2.0}]},
    "nodes": 1,
    "jobs": [
        {"id": "a", "due": 3600, "weight": 0.01, "times": {"X": [3600, None]}, "workload": "r"},
        {"id": "b", "due": 3600, "weight": 0.01, "times": {"X": [7200, None]}, "workload": "g"},
    ],
    "colocation": {"r": {"g": 0.5}, "g": {"r": 0.8}},
}


def trace(table=TRACE["colocation"], scale=1.0) -> Instance:
    data = copy.deepcopy(TRACE)
    for job in data["jobs"]:
        job["times"]["X"][0] *= scale
    if table is None:
        del data["colocation"]
    else:
        data["colocation"] = table
    return Instance.from_dict(data, "trace.json")


def test_the_table_and_names_round_trip_and_build_the_speeds():
    """Instance.to_dict writes the table and each job's name; `colocation_model` gives each
    job its product over the others on its node (a pair left out: 1)."""
    inst = trace()
    back = Instance.from_dict(inst.to_dict())
    assert back.workload == ("r", "g") and back.colocation == {"r": {"g": 0.5}, "g": {"r": 0.8}}
    model = back.colocation_model()
    assert model.speeds(np.array([0, 0])).tolist() == [0.5, 0.8]
    assert model.speeds(np.array([0, 1])).tolist() == [1.0, 1.0]
    assert back.subset([1]).workload == ("g",) and back.job_spec(0).workload == "r"
    # a workload object names the job by its application
    obj = Instance.from_dict(
        {
            "catalog": "azure-2021",
            "nodes": 1,
            "jobs": [{"id": "x", "due": 1, "weight": 0, "workload": {"application": "vgg19"}}],
        }
    )
    assert obj.workload == ("vgg19",) and obj.colocation_model() is None


def test_an_instance_without_a_table_is_as_before():
    """No table, no names: nothing new in the file form, no slowdown model."""
    inst = trace(table=None)
    assert "colocation" not in inst.to_dict() and inst.colocation_model() is None
    plain = Instance.from_dict(_without_names())
    assert "workload" not in str(plain.to_dict()) and plain.workload == ("", "")


def _without_names() -> dict:
    data = copy.deepcopy(TRACE)
    del data["colocation"]
    for job in data["jobs"]:
        del job["workload"]
    return data


@pytest.mark.parametrize(
    "change, field, problem",
    [
        ({"colocation": {"r": {"g": 1.5}}}, "colocation.r.g", "must be in (0, 1]"),
        ({"colocation": {"r": {"g": -1}}}, "colocation.r.g", "must be > 0"),
        ({"colocation": {"r": {"g": math.nan}}}, "colocation.r.g", "must be finite"),
        ({"colocation": {"r": [0.5]}}, "colocation.r", "must be an object"),
        ({"colocation": {"": {"g": 0.5}}}, "colocation (a workload name)", "non-empty string"),
        ({"workload": ("r", 7)}, "jobs[1].workload", "non-empty string"),
    ],
)
def test_python_instances_are_checked(change, field, problem):
    """An Instance made in Python meets the file's checks: InputError naming the field."""
    base = trace()
    kw = {"workload": base.workload, "colocation": base.colocation, **change}
    with pytest.raises(InputError) as exc:
        Instance(
            catalog=base.catalog,
            nodes=1,
            job_ids=base.job_ids,
            release=base.release,
            due=base.due,
            weight=base.weight,
            work=base.work,
            **kw,
        )
    assert exc.value.field == field and problem in exc.value.problem


def test_a_job_spec_and_the_run_config_are_checked():
    with pytest.raises(InputError, match="workload: must be a non-empty string"):
        JobSpec("a", 0.0, 1.0, 0.0, np.array([10.0]), 0.0, workload=3)
    with pytest.raises(InputError, match="colocation: unknown mode 'guess'"):
        RunConfig(colocation="guess")
    with pytest.raises(InputError, match="colocation.r.g"):
        Rescheduler("azure-2021", 1, colocation={"r": {"g": 2}})


def test_the_simulator_runs_co_located_jobs_at_the_tables_speed(tmp_path):
    """a (1 h alone) runs at 0.5 beside b: 2 h after its VM's 120 s start-up; b (2 h alone)
    makes 0.8 x 2 h beside a, then the rest alone. The event log recomputes every job's work
    and the costs with its own product of the table (tests/eventlog.py)."""
    for table, ends in ((TRACE["colocation"], [7320.0, 8760.0]), (None, [3720.0, 7320.0])):
        tr = trace(table)
        log = tmp_path / "events.jsonl"
        res = simulate(tr, "incremental", log=log, bound=False).to_dict()
        assert [j["completion"] for j in res["jobs"]] == pytest.approx(ends)
        rec = eventlog.recompute(log, tr)
        assert eventlog.check_against(rec, res, tr) == []


def test_the_event_log_catches_a_wrong_speed(tmp_path):
    """The recomputation depends on the table: the same log against a table with another
    speed does not reconcile (the check can fail)."""
    tr = trace()
    log = tmp_path / "events.jsonl"
    res = simulate(tr, "incremental", log=log, bound=False).to_dict()
    other = trace({"r": {"g": 0.6}, "g": {"r": 0.8}})
    assert any(
        "work sums" in p for p in eventlog.check_against(eventlog.recompute(log, other), res, other)
    )


def test_what_the_decisions_get():
    """`colocation`: the given table (default), none ("ignore"), the learned one ("learn")."""
    tr = trace()
    for mode, want in (("table", tr.colocation), ("ignore", None), ("learn", None)):
        sim = Simulator(tr, "incremental", colocation=mode)
        sim.step()
        inst = sim.rescheduler.instance()
        assert inst.colocation == want, mode
        assert inst.workload == (("r", "g") if want else ("", ""))


def test_a_state_keeps_the_table_and_the_learned_pairs():
    """Saved and restored: the table, the jobs' names and the learned evidence; a corrupt
    evidence entry is a StateError naming it."""
    tr = trace(scale=10.0)
    sim = Simulator(tr, "incremental", colocation="learn", tick=600)
    for _ in range(4):
        sim.step()
    state = sim.rescheduler.state()
    back = Rescheduler.restore(state)
    s = back.run_state
    assert s.colocation == tr.colocation and s.colocation_seen
    assert s.colocation_seen == sim.rescheduler.run_state.colocation_seen
    assert [j.workload for j in s.jobs.values()] == ["r", "g"]
    bad = copy.deepcopy(state)
    bad["live"]["colocation_seen"][0][0] = ""
    with pytest.raises(StateError, match=r"live.colocation_seen\[0\]\[0\]"):
        Rescheduler.restore(bad)


@settings(max_examples=6, deadline=None)
@given(
    st.floats(0.3, 1.0).map(lambda x: round(x, 2)), st.floats(0.3, 1.0).map(lambda x: round(x, 2))
)
def test_learned_pairs_converge_on_a_synthetic_run(s_rg, s_gr):
    """Without a table for the decisions ("learn"), the progress reports of two co-located
    jobs teach the speed model each pair's speed: within 1 % after 10 h together."""
    tr = trace({"r": {"g": s_rg}, "g": {"r": s_gr}}, scale=10.0)
    tr = Instance.from_dict({**tr.to_dict(), "jobs": [
        {**j, "times": {"X": [36000.0, None]}} for j in tr.to_dict()["jobs"]
    ]})  # fmt: skip
    sim = Simulator(tr, "incremental", colocation="learn", tick=600)
    while sim.step() is not None and len(sim.rescheduler.run_state.jobs) == 2:
        pass
    got = learned(sim.rescheduler.run_state.colocation_seen)
    assert got["r"]["g"] == pytest.approx(s_rg, rel=0.01)
    assert got["g"]["r"] == pytest.approx(s_gr, rel=0.01)
    # the decisions then get the learned table
    assert sim.rescheduler.instance().colocation == got


def test_colocation_of_by_name():
    """Names the table lacks keep full speed; a job without a name is never slowed."""
    model = Colocation.of(["r", "", "z"], {"r": {"z": 0.5}})
    assert model.speeds(np.array([0, 0, 0])).tolist() == [0.5, 1.0, 1.0]
    assert Colocation.of(["r"], None) is None


def test_group_speeds_replace_the_pairs_product():
    """A node whose classed jobs form a listed group runs them at the group's speeds, not at
    the pairs' product (Eva's simulator, 3 or more jobs); another node, or a group the table
    does not list, at the product; a job of no class at 1 and outside the group."""
    speed = np.array([[0.9, 0.8], [0.7, 0.6]])
    groups = {(0, 0, 1): {0: 0.5, 1: 0.4}, (0, 1): {0: 0.8, 1: 0.7}}
    model = Colocation(np.array([0, 0, 1, -1, 0, 1, 1, 1, 1]), speed, groups)
    got = model.speeds(np.array([0, 0, 0, 0, 1, 1, 2, 2, 2]))
    # node 0: group (0, 0, 1) listed; node 1: the pair; node 2: (1, 1, 1) not listed
    assert np.allclose(got, [0.5, 0.5, 0.4, 1.0, 0.8, 0.7, 0.36, 0.36, 0.36])
    pairs = Colocation(model.workload, speed).speeds(np.array([0, 0, 0, 0, 1, 1, 2, 2, 2]))
    assert np.allclose(pairs[:3], [0.9 * 0.8, 0.9 * 0.8, 0.49])  # what the pairs would say
    with pytest.raises(InputError, match="sorted classes"):
        Colocation(np.array([0]), speed, {(1, 0): {0: 0.5, 1: 0.5}})
    with pytest.raises(InputError, match="sorted classes"):
        Colocation(np.array([0]), speed, {(0, 1): {0: 1.5, 1: 0.5}})


@pytest.mark.skipif(not os.environ.get("GPUAAS_EVA"), reason="needs GPUAAS_EVA, a checkout of Eva")
def test_results_sample(tmp_path):
    """scripts/results/colocation-setting.json's cheapest run ("GPUs alone"), again on pai_200
    imported with Eva's contention table from the checkout: every figure but the seconds."""
    eva = Path(os.environ["GPUAAS_EVA"]) / "src"
    out = tmp_path / "pai200.json"
    args = ["import", "eva", str(eva / "pai_trace/traces/pai_200.json"), "-o", str(out)]
    args += ["--colocation", str(eva / "simulation/contention_map/contention_matrix.csv")]
    assert CliRunner().invoke(cli, args).exit_code == 0
    spec = importlib.util.spec_from_file_location("cs", ROOT / "scripts" / "colocation_setting.py")
    cs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cs)
    tr = load_instance(out)
    want = json.loads((ROOT / "scripts/results/colocation-setting.json").read_text())["GPUs alone"]
    got = cs.run(tr, "GPUs alone", trace_bound(dataclasses.replace(tr, colocation=None)))
    for key, value in want.items():
        if key != "seconds":
            assert got[key] == pytest.approx(value, rel=1e-9), key


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.floats(0.4, 1.0), min_size=3, max_size=3),
    st.integers(0, 2**32 - 1),
)
def test_learned_pairs_separate_companions_that_vary(speeds, seed):
    """The least squares of `learn_colocation`: a job of workload a reported beside varying
    sets of companions (1-3 jobs of b, c, d, repeats allowed) at the product of the true
    speeds; the learned speeds come within 1 % of each pair's."""
    from types import SimpleNamespace

    from gpuaas.rescheduler.speed import learn_colocation

    truth = dict(zip("bcd", speeds))
    rng = np.random.default_rng(seed)
    s = SimpleNamespace(colocation_seen=())
    job = SimpleNamespace(workload="a")
    for _ in range(60):
        company = list(rng.choice(list("bcd"), size=int(rng.integers(1, 4))))
        product = math.prod(truth[b] for b in company)
        learn_colocation(s, job, company, 3600.0, 3600.0 * product)
    got = learned(s.colocation_seen)["a"]
    for b, want in truth.items():
        assert got[b] == pytest.approx(want, rel=0.01), b
