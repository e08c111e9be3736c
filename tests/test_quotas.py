"""GPU quotas per model and place (issue 42): the catalog field, every method's plan within
them (`gpuaas.quotas.respect`, the MILP's rows), the validator, the simulator and the bound."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from bruteforce import brute_force, brute_force_dollars, within_quotas
from click.testing import CliRunner
from eventlog import check_against, recompute
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_milp import close, tiny_instance, with_incumbent

from gpuaas import quotas
from gpuaas.catalog import Catalog, Quota
from gpuaas.cli import cli
from gpuaas.errors import InputError, SolverError
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.methods import METHODS, solve
from gpuaas.milp import build_model, milp
from gpuaas.rescheduler import check_solution
from gpuaas.simulator import simulate
from gpuaas.solution import Solution
from gpuaas.validator import validate

ZONES = {
    "name": "two-regions",
    "provider": "AWS",
    "locations": {
        "us-east-1a": {"region": "us-east-1"},
        "us-east-1c": {"region": "us-east-1"},
        "us-west-2b": {"region": "us-west-2"},
    },
    "vm_types": [
        {"name": "p3.2xlarge", "location": "us-east-1a", "gpu": "V100", "gpus": 1,
         "cost_per_hour": 3.06, "spot_per_hour": 1.2},
        {"name": "p3.8xlarge", "location": "us-east-1a", "gpu": "V100", "gpus": 4,
         "cost_per_hour": 12.24},
        {"name": "p3.2xlarge", "location": "us-east-1c", "gpu": "V100", "gpus": 1,
         "cost_per_hour": 3.06},
        {"name": "p3.2xlarge", "location": "us-west-2b", "gpu": "V100", "gpus": 1,
         "cost_per_hour": 3.6, "spot_per_hour": 0.95},
        {"name": "p3.8xlarge", "location": "us-west-2b", "gpu": "V100", "gpus": 4,
         "cost_per_hour": 14.4},
        {"name": "g4dn.xlarge", "location": "us-west-2b", "gpu": "T4", "gpus": 1,
         "cost_per_hour": 0.526},
    ],
    "quotas": [
        {"at": "us-east-1", "gpu": "V100", "gpus": 4},
        {"at": "us-west-2b", "gpu": "V100", "gpus": 2, "spot": True},
        {"gpu": "T4", "gpus": 0},
    ],
}  # fmt: skip


def test_quotas_count_their_types_and_survive_spot_select_and_round_trip():
    cat = Catalog.from_dict(ZONES)
    assert cat.quotas[0] == Quota("V100", 4, "us-east-1")
    # us-east-1 holds the three on-demand V100 types of its two zones; the T4 quota everywhere
    assert cat.quota_members.astype(int).tolist() == [
        [1, 1, 1, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 1],
    ]
    spot = cat.with_spot()
    assert spot.quotas == cat.quotas
    assert spot.quota_members[1].nonzero()[0].tolist() == [7]  # p3.2xlarge@us-west-2b:spot
    assert spot.quota_members[0, : cat.n_vms].tolist() == cat.quota_members[0].tolist()
    assert spot.without_spot().quotas == cat.quotas
    again = Catalog.from_dict(spot.to_dict())
    assert again.quotas == cat.quotas and again.vm_names == spot.vm_names
    assert Catalog.from_dict(cat.to_dict()).to_dict() == cat.to_dict()
    east, _ = spot.select(["us-east-1"])  # T4 is no model there any more: its quota goes
    assert [q.gpu for q in east.quotas] == ["V100", "V100"]
    assert Catalog.from_dict(east.to_dict()).quotas == east.quotas
    trace = Instance.from_dict(generate_trace(2, 4, seed=1, catalog=ZONES))
    assert Instance.from_dict(trace.to_dict()).catalog.quotas == cat.quotas
    assert "quotas" not in Catalog.from_dict({**ZONES, "quotas": []}).to_dict()


@pytest.mark.parametrize(
    "quota, field, problem",
    [
        ({"at": "eu-west-1", "gpu": "V100", "gpus": 4}, "quotas[0].at",
         "'eu-west-1' is no location, region or cloud of the catalog"),
        ({"at": "us-east-1", "gpu": "A100", "gpus": 4}, "quotas[0].gpu",
         "'A100' is no GPU model of the catalog's VM types (T4, V100)"),
        ({"gpu": "V100", "gpus": -1}, "quotas[0].gpus", "must be an integer >= 0, got -1"),
        ({"gpu": "V100", "gpus": 2.5}, "quotas[0].gpus", "must be an integer >= 0, got 2.5"),
        ({"gpu": "V100", "gpus": "8"}, "quotas[0].gpus", "must be an integer >= 0"),
        ({"gpu": "V100", "gpus": 4, "spot": "yes"}, "quotas[0].spot", "must be true or false"),
        ({"gpu": "V100", "gpus": 4, "zone": "x"}, "quotas[0]", "unknown field(s) ['zone']"),
        ({"gpu": "V100"}, "quotas[0]", "missing field(s) ['gpus']"),
        ("V100: 4", "quotas[0]", "must be an object"),
    ],
)  # fmt: skip
def test_bad_quotas_name_the_field(quota, field, problem):
    data = {**json.loads(json.dumps(ZONES)), "quotas": [quota]}
    with pytest.raises(InputError) as err:
        Catalog.from_dict(data, "zones.yaml")
    assert err.value.source == "zones.yaml"
    assert err.value.field == f"catalog.{field}" and problem in err.value.problem
    twice = {**ZONES, "quotas": [{"gpu": "V100", "gpus": 4}, {"gpu": "V100", "gpus": 8}]}
    with pytest.raises(InputError, match=r"quotas\[1\]: a second quota of V100 GPUs at every"):
        Catalog.from_dict(twice)
    with pytest.raises(InputError, match=r"catalog.quotas: must be a list"):
        Catalog.from_dict({**ZONES, "quotas": {"V100": 4}})
    plain = {"vm_types": [{"name": "a", "gpu": "V100", "gpus": 1, "cost_per_hour": 1}]}
    with pytest.raises(InputError, match="it declares no locations"):
        Catalog.from_dict({**plain, "quotas": [{"at": "us-east-1", "gpu": "V100", "gpus": 1}]})
    assert Catalog.from_dict({**plain, "quotas": [{"gpu": "V100", "gpus": 1}]}).quotas


def test_a_bad_quota_exits_2_with_one_line_and_no_output(tmp_path):
    data = generate_trace(2, 4, seed=1, catalog=ZONES)
    data["catalog"]["quotas"] = [{"at": "us-east-1", "gpu": "V100", "gpus": -4}]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "run.json"
    res = CliRunner().invoke(cli, ["simulate", str(path), "-o", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.output.strip().count("\n") == 0
    assert "catalog.quotas[0].gpus: must be an integer >= 0, got -4" in res.output
    assert not out.exists()


#: the methods that plan within quotas (the MILP's rows, the list schedule's choice); the
#: others' plans are repaired (`gpuaas.quotas.respect`)
PLANNED = ("milp", "edf", "fifo", "ps")


def crowded(quota: int | None) -> Instance:
    """Six jobs due soon that run fastest on 4 GPUs, on on-demand V100 types of us-east-1 (cheap)
    and us-west-2b (dearer): unconstrained, every method opens more than 4 GPUs in us-east-1;
    `quota` (None: none) caps them."""
    data = json.loads(json.dumps(ZONES))
    data["quotas"] = [] if quota is None else [{"at": "us-east-1", "gpu": "V100", "gpus": quota}]
    cat = Catalog.from_dict(data)
    J = 6
    base = np.random.default_rng(0).uniform(2, 6, J) * 3600
    work = base[:, None] / cat.cfg_gpus[None, :] ** 0.8
    work[:, cat.gpu_models.index("T4") :] = np.inf  # the T4 type is the last one
    ids = tuple(f"j{i}" for i in range(J))
    return Instance(cat, 6, ids, np.zeros(J), base * 0.6, np.full(J, 0.01), work)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_keeps_to_a_quota_it_would_exceed(method):
    """Without the quota the method's plan holds more than 4 V100 GPUs in us-east-1; with it,
    at most 4, and the plan validates (repaired by `gpuaas.quotas.respect` in `solve`, but
    for the methods that plan within it, `PLANNED`)."""
    free = solve(crowded(None), method, seed=1, time_limit=5.0)
    inst = crowded(4)
    assert quotas.held(inst.catalog, free.node_vm)[0] > 4
    sol = solve(inst, method, seed=1, time_limit=5.0)
    assert quotas.held(inst.catalog, sol.node_vm)[0] <= 4
    assert validate(sol).ok, validate(sol).errors
    if method in PLANNED:
        assert "quota_moves" not in sol.stats  # planned within the quota: nothing repaired
    assert validate(solve(crowded(0), method, seed=1, time_limit=5.0)).ok


def test_validator_and_check_solution_refuse_a_plan_over_a_quota():
    inst = crowded(4)
    over = Solution(inst, np.array([1, 1, -1, -1, -1, -1]), np.array([0, 1, -1, -1, -1, -1]),
                    np.array([4, 4, -1, -1, -1, -1]), "x")  # fmt: skip
    assert validate(over).errors == ["8 V100 GPUs open at us-east-1, over their quota of 4"]
    with pytest.raises(SolverError, match="8 V100 GPUs open at us-east-1, over its quota of 4"):
        check_solution(over)
    fixed = quotas.respect(over)
    assert validate(fixed).ok and fixed.stats["quota_moves"] >= 1
    pinned = dataclasses.replace(
        inst, current_node=over.job_node, current_cfg=over.job_cfg,
        pinned=over.job_node >= 0,
    )  # fmt: skip
    stuck = quotas.respect(Solution(pinned, over.node_vm, over.job_node, over.job_cfg))
    assert not validate(stuck).ok  # pinned nodes never move: the excess is reported


def test_the_milp_has_a_row_per_quota_and_none_without():
    assert "quota" not in build_model(crowded(None)).families
    model = build_model(crowded(4))
    assert model.families["quota"] == slice(model.families["quota"].start,
                                            model.families["quota"].start + 1)  # fmt: skip


def with_quota(inst: Instance, seed: int) -> Instance:
    """`inst` with a quota on its first GPU model of 0 up to its largest type's GPUs."""
    rng = np.random.default_rng(500 + seed)
    cat = inst.catalog
    model = cat.gpu_models[0]
    cap = int(rng.integers(0, int(cat.gpus.max()) + 1))
    return dataclasses.replace(inst, catalog=dataclasses.replace(cat, quotas=(Quota(model, cap),)))


@pytest.mark.parametrize("objective", ["dollars", "p1a"])
def test_milp_with_a_quota_equals_brute_force(objective):
    """On 60 tiny instances with a random quota (half with an incumbent for P1$) the MILP
    optimum equals a brute force that skips VM multisets over the quota, the validator agrees,
    and on some the quota costs something: the row binds."""
    bad, binding = [], 0
    for k in range(60):
        plain = tiny_instance(k)
        if objective == "dollars" and k % 2:
            plain = with_incumbent(plain, k)
        inst = with_quota(plain, k)
        if objective == "dollars":
            best, _ = brute_force_dollars(inst)
            free, _ = brute_force_dollars(plain)
            sol = milp(inst, gap=0.0)
            value = sol.objective
        else:
            best, _ = brute_force(inst).optimum(False, inst)
            free, _ = brute_force(plain).optimum(False, plain)
            sol = milp(inst, objective="p1a", gap=0.0, p1n=False)
            value = sol.f_obj
        rep = validate(sol)
        if not (sol.stats["status"] == "optimal" and rep.ok and close(value, best)):
            bad.append((k, best, value, rep.errors))
        binding += best > free * (1 + 1e-6) + 1e-9
    assert not bad
    assert binding >= 3, binding


def test_brute_force_counts_quotas_as_the_package_does():
    inst = crowded(4)
    for types in ((0, 0, 0, 0), (0, 0, 0, 0, 2), (1,), (1, 0), (3, 4, 4), (-1, 1, -1)):
        node_vm = np.array(types, dtype=np.int64)
        assert within_quotas(inst, types) == (not quotas.over(inst.catalog, node_vm))


def test_a_simulation_with_quotas_reconciles_and_never_exceeds_them(tmp_path):
    """A trace on the nine-zone V100 catalog with a us-east-1 quota and an AWS-wide one: without
    them the runs open more; with them no interval holds more, and the event log reconciles."""
    from gpuaas.catalog import load_catalog

    data = generate_trace(4, 10, seed=3, catalog="aws-v100-zones")
    cat = load_catalog("aws-v100-zones").to_dict()
    limits = {"us-east-1": 4, "AWS": 10}
    cat["quotas"] = [{"at": k, "gpu": "V100", "gpus": v} for k, v in limits.items()]
    data["catalog"] = cat
    trace = Instance.from_dict(data)
    free = Instance.from_dict({**data, "catalog": {**cat, "quotas": []}})
    regions = {k: v["region"] for k, v in trace.catalog.places.items()}

    def most(log) -> tuple[int, int]:
        east = every = 0
        for interval in map(json.loads, log.read_text().splitlines()):
            gpus = [(n["vm"].split("@")[1], trace.catalog.gpus[trace.catalog.vm_index(n["vm"])])
                    for n in interval["nodes"]]  # fmt: skip
            east = max(east, sum(g for z, g in gpus if regions[z] == "us-east-1"))
            every = max(every, sum(g for _, g in gpus))
        return east, every

    for method in ("incremental", "greedy", "edf"):
        log = tmp_path / f"{method}-free.jsonl"
        simulate(free, method, log=log)
        east, every = most(log)
        assert east > limits["us-east-1"] or every > limits["AWS"], method
        log = tmp_path / f"{method}.jsonl"
        result = simulate(trace, method, log=log).to_dict()
        assert check_against(recompute(log, trace), result, trace) == []
        east, every = most(log)
        assert east <= limits["us-east-1"] and every <= limits["AWS"], (method, east, every)


FAST = ("greedy", "incremental", "edf", "dp-fastb", "managed-spot", "skynomad", "milp")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.integers(0, 10_000),
    cap=st.integers(0, 12),
    at=st.sampled_from(["us-east-1a", "us-east-1", "us-west-2", "AWS", ""]),
    method=st.sampled_from(FAST),
    spot=st.booleans(),
)
def test_no_method_exceeds_a_random_quota(seed, cap, at, method, spot):
    data = generate_trace(3, 6, seed=seed % 50, catalog=ZONES)
    quota = {"at": at, "gpu": "V100", "gpus": cap, "spot": spot}
    data["catalog"]["quotas"] = [{k: v for k, v in quota.items() if v != ""}]
    inst = Instance.from_dict(data)
    inst = inst.with_spot() if spot else inst
    sol = solve(inst, method, seed=seed, time_limit=5.0)
    assert not quotas.over(inst.catalog, sol.node_vm)
    assert validate(sol).ok, validate(sol).errors


def test_the_bound_rises_with_a_binding_quota_and_stays_below_every_run():
    """With 4 V100 GPUs in all of AWS the capacity LP (a row per quota and slot) rises above
    the bound without the quota, and stays below every simulated run within the quota."""
    from gpuaas.bounds import bound
    from gpuaas.catalog import load_catalog

    data = generate_trace(8, 16, seed=3, catalog="aws-v100-zones")
    cat = load_catalog("aws-v100-zones").to_dict()
    free = Instance.from_dict({**data, "catalog": cat})
    trace = Instance.from_dict(
        {**data, "catalog": {**cat, "quotas": [{"at": "AWS", "gpu": "V100", "gpus": 4}]}}
    )
    loose, tight = bound(free), bound(trace)
    assert loose.kind == tight.kind and tight.bound > loose.bound * 1.02
    for method in ("greedy", "edf"):
        assert tight.bound <= simulate(trace, method).total_cost + 1e-9, method
