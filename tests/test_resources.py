"""CPU and memory beside GPUs (docs/design.md): catalog and job fields, the "alone" rule, the
validator's node sums and the MILP's rows against brute force with a binding CPU constraint."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from bruteforce import brute_force, brute_force_dollars
from eventlog import check_against, recompute
from test_milp import close, tiny_instance, with_incumbent

from gpuaas.bounds import bound
from gpuaas.catalog import Catalog
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.methods import METHODS, solve
from gpuaas.milp import build_model, milp
from gpuaas.rescheduler import Rescheduler
from gpuaas.simulator import simulate
from gpuaas.solution import Solution
from gpuaas.validator import validate


def with_demands(inst: Instance, seed: int) -> Instance:
    """`inst` on the same catalog with 2-4 vCPUs and 16-64 GiB per GPU, its jobs needing
    2-6 vCPUs and 4-40 GiB (none where no type, or not the one a running job is on, holds
    them): two jobs often fit a type's GPUs but not its vCPUs or memory."""
    rng = np.random.default_rng(1000 + seed)
    cat = inst.catalog
    per_gpu = rng.integers(2, 5, cat.n_vms)
    cat = Catalog(
        cat.name,
        cat.vm_names,
        cat.gpu_models,
        cat.gpus,
        cat.cost_per_hour,
        vcpus=per_gpu * cat.gpus,
        memory=rng.choice([16.0, 32.0, 64.0], cat.n_vms) * cat.gpus,
    )
    J = inst.n_jobs
    cpus = rng.integers(2, 7, J).astype(float)
    memory = rng.uniform(4, 40, J).round(1)
    fits = (cpus[:, None] <= cat.vcpus[cat.cfg_vm]) & (memory[:, None] <= cat.memory[cat.cfg_vm])
    none = ~(fits & np.isfinite(inst.work)).any(axis=1)
    running = inst.current_cfg >= 0
    none[running] |= ~fits[running, inst.current_cfg[running]]
    cpus[none], memory[none] = 0.0, 0.0  # a job no type holds is an error: let those fit
    return dataclasses.replace(inst, catalog=cat, cpus=cpus, memory=memory)


def two_jobs(cpus: float) -> Instance:
    """One type of 2 GPUs and 8 vCPUs at 2 $/h; two 1-GPU jobs of 1 h due in 1 h needing `cpus` each."""
    cat = Catalog("inline", ("V2",), ("V100",), np.array([2]), np.array([2.0]), vcpus=[8])
    work = np.array([[3600.0, 1800.0], [3600.0, 1800.0]])
    work[:, 1] = np.inf
    return Instance(
        cat, 2, ("a", "b"), np.zeros(2), np.full(2, 3600.0), np.full(2, 0.01), work,
        cpus=np.full(2, cpus),
    )  # fmt: skip


def test_cpu_constraint_binds_milp_and_validator():
    """Together the two jobs fit the GPUs but not the vCPUs (2 x 6 > 8): the MILP opens two
    VMs, the validator refuses the shared plan; with 4 vCPUs each they share one VM."""
    for cpus, nodes in ((6.0, 2), (4.0, 1)):
        inst = two_jobs(cpus)
        sol = milp(inst, gap=0.0)
        assert validate(sol).ok
        assert int((sol.node_vm >= 0).sum()) == nodes and (sol.job_cfg == 0).all()
    shared = Solution(two_jobs(6.0), np.array([0, -1]), np.array([0, 0]), np.array([0, 0]), "x")
    assert validate(shared).errors == ["node 0: its jobs need 12 cpus but V2 has 8"]


@pytest.mark.parametrize("objective", ["dollars", "p1a"])
def test_milp_with_demands_equals_brute_force(objective):
    """On 120 tiny instances with vCPU and memory limits (half with an incumbent for P1$) the
    MILP optimum equals a brute force that prunes placements over a node's vCPUs or memory,
    the validator agrees, and on at least 5 the limits cost something (the optimum without
    them is cheaper): the rows bind."""
    bad, binding = [], 0
    for k in range(120):
        plain = tiny_instance(k)
        if objective == "dollars" and k % 2:
            plain = with_incumbent(plain, k)
        inst = with_demands(plain, k)
        if not inst.has_demands:
            continue
        if objective == "dollars":
            best, _ = brute_force_dollars(inst)
            free, _ = brute_force_dollars(dataclasses.replace(plain, work=inst.work))
            sol = milp(inst, gap=0.0)
            value = sol.objective
        else:
            best, _ = brute_force(inst).optimum(False, inst)
            free, _ = brute_force(dataclasses.replace(plain, work=inst.work)).optimum(False, inst)
            sol = milp(inst, objective="p1a", gap=0.0, p1n=False)
            value = sol.f_obj
        rep = validate(sol)
        if not (sol.stats["status"] == "optimal" and rep.ok and close(value, best)):
            bad.append((k, best, value, rep.errors))
        binding += best > free * (1 + 1e-6)
    assert not bad
    assert binding >= 5, binding


def test_without_demands_nothing_changes():
    """An instance that declares no demands: the same work, no new rows, the same JSON."""
    inst = tiny_instance(3)
    assert not inst.has_demands and inst.fits_alone().all()
    model = build_model(inst)
    assert not {"cpus", "memory"} & set(model.families)
    assert "cpus" not in json.dumps(inst.to_dict()) and "vcpus" not in json.dumps(inst.to_dict())
    again = Instance.from_dict(inst.to_dict())
    assert np.array_equal(again.work, inst.work) and not again.has_demands
    assert inst.job_spec(0).to_dict().keys() == {
        "id", "release", "due", "weight", "work", "progress", "node", "cfg", "pinned",
        "checkpoint",
    }  # fmt: skip


def test_alone_rule_and_format_round_trip():
    """A configuration whose type lacks the job's vCPUs or memory cannot run it (inf); the
    fields round-trip through the format; a job no type holds, or running where it does not
    fit, is an InputError naming it."""
    data = {
        "catalog": {
            "vm_types": [
                {"name": "small", "gpu": "V100", "gpus": 1, "cost_per_hour": 3, "vcpus": 8},
                {"name": "big", "gpu": "V100", "gpus": 4, "cost_per_hour": 12, "memory": 244},
            ]
        },
        "nodes": 2,
        "jobs": [
            {"id": "a", "due": 9000, "weight": 0.01, "times": {"small": [3600]}},
            {
                "id": "b",
                "due": 9000,
                "weight": 0.01,
                "cpus": 12,
                "memory": 100,
                "times": {"small": [3600], "big": [3600, 1800, None, None]},
            },
        ],
    }
    inst = Instance.from_dict(data)
    assert list(inst.catalog.vcpus) == [8, np.inf] and list(inst.catalog.memory) == [np.inf, 244]
    assert np.isfinite(inst.work[0, 0]) and inst.work[1, 0] == np.inf
    assert inst.work[1, 2] == 1800.0
    out = inst.to_dict()
    assert out["jobs"][1]["cpus"] == 12 and out["jobs"][1]["memory"] == 100
    assert out["catalog"]["vm_types"][0]["vcpus"] == 8
    assert "memory" not in out["catalog"]["vm_types"][0]
    assert np.array_equal(Instance.from_dict(out).work, inst.work)
    spec = inst.job_spec(1)
    assert spec.cpus == 12 and type(spec).from_dict(spec.to_dict()).memory == 100
    data["jobs"][1]["memory"] = 300
    with pytest.raises(InputError, match=r"jobs\[1\] \(b\): needs 12 vCPUs and 300 GiB"):
        Instance.from_dict(data)
    data["jobs"][1]["memory"] = 100
    data["jobs"][1]["placement"] = {"node": 0, "vm": "small", "gpus": 1}
    with pytest.raises(InputError, match=r"placement: runs on small, which lacks"):
        Instance.from_dict(data)
    data["catalog"]["vm_types"][0]["vcpus"] = 0
    with pytest.raises(InputError, match=r"vm_types\[0\].vcpus: must be a positive integer"):
        Instance.from_dict(data)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_plans_within_vcpus_and_memory(method):
    """Every method's plan (through `gpuaas.methods.solve`, which fits it) passes the
    validator's vCPU and memory sums on tiny instances where packing by GPUs alone overfills
    nodes; at least one of them needed `fit`."""
    fitted = 0
    for k in range(12):
        inst = with_demands(with_incumbent(tiny_instance(k), k) if k % 2 else tiny_instance(k), k)
        sol = solve(inst, method, seed=k, time_limit=5.0)
        assert validate(sol).ok, (k, validate(sol).errors)
        fitted += sol.stats.get("resource_moves", 0) > 0
    if method in ("greedy", "path-relinking", "incremental"):
        assert fitted >= 1, method


def test_simulation_with_demands_reconciles_and_never_overfills(tmp_path):
    """A trace whose jobs need vCPUs and memory simulates; its event log reconciles; no node of
    any interval holds more vCPUs or memory than its type; the state saved mid-run restores
    with the demands."""
    inst = two_jobs(6.0)
    data = inst.to_dict()
    data["jobs"] = [dict(data["jobs"][k % 2], id=f"j{k}", release=600.0 * k) for k in range(6)]
    trace = Instance.from_dict(data)
    assert trace.cpus.tolist() == [6.0] * 6
    for method in ("incremental", "greedy", "edf"):
        log = tmp_path / f"{method}.jsonl"
        result = simulate(trace, method, log=log).to_dict()
        assert check_against(recompute(log, trace), result, trace) == []
        for line in log.read_text().splitlines():
            interval = json.loads(line)
            per_node: dict[int, float] = {}
            for job in interval["jobs"]:
                per_node[job["node"]] = per_node.get(job["node"], 0.0) + 6.0
            assert max(per_node.values(), default=0.0) <= 8.0, (method, interval)
    r = Rescheduler(trace.catalog, nodes=2)
    r.submit(trace.job_spec(0), at=0.0)
    again = Rescheduler.restore(json.loads(json.dumps(r.state())))
    assert again.instance().cpus.tolist() == [6.0]
    assert again.state()["live"]["jobs"][0]["cpus"] == 6.0


def test_bound_prices_vcpu_and_memory_shares_and_stays_below_every_run():
    """The per-job bound charges a job the best weighted share of its VM's GPUs, vCPUs and
    memory (gpuaas.per_job): above the GPU share alone where vCPUs bind, below the total of
    every simulated method."""
    inst = two_jobs(6.0)
    data = inst.to_dict()
    data["jobs"] = [
        dict(data["jobs"][0], id=f"j{k}", release=900.0 * k, due=900.0 * k + 7200) for k in range(5)
    ]
    trace = Instance.from_dict(data)
    gpu_only = bound(dataclasses.replace(trace, cpus=None)).bound
    b = bound(trace).bound
    # each job: 6 of 8 vCPUs for an hour of a 2 $/h VM = 1.5 $ (GPU share: 1 $)
    assert close(gpu_only, 5.0) and close(b, 7.5)
    for method in ("incremental", "greedy", "edf", "milp"):
        assert b <= simulate(trace, method).total_cost + 1e-9, method


def alone_state(seed: int) -> Instance:
    """A seeded point where every running job sits alone on its own VM: 2-3 types of 1-4 GPUs
    with 8 vCPUs and 32 GiB per GPU, prices linear in GPUs or not; 4-8 jobs of 1-2 GPUs needing
    2-16 vCPUs and 4-64 GiB (what a type holds), most running, a few waiting; random overhead
    and start-up. Jobs whose vCPUs or memory fill their VM more than their GPUs do can often
    share one VM."""
    rng = np.random.default_rng(5000 + seed)
    V = int(rng.integers(2, 4))
    gpus = np.sort(rng.choice([1, 2, 4], V, replace=False))
    price = np.round(gpus * rng.uniform(2.5, 3.5) * rng.uniform(0.9, 1.1, V), 2)
    cat = Catalog(
        "inline", tuple(f"V{v}" for v in range(V)), ("V100",) * V, gpus, price,
        vcpus=8 * gpus, memory=32.0 * gpus,
    )  # fmt: skip
    J = int(rng.integers(4, 9))
    cpus = rng.choice([2.0, 4.0, 8.0, 16.0], J)
    memory = rng.uniform(4, 64, J).round(1)
    work = np.full((J, cat.n_configs), np.inf)
    hours = rng.uniform(0.5, 30, J) * 3600
    for c in range(cat.n_configs):
        g, v = int(cat.cfg_gpus[c]), int(cat.cfg_vm[c])
        ok = (g <= 2) & (cpus <= cat.vcpus[v]) & (memory <= cat.memory[v])
        work[ok, c] = hours[ok] / g**0.8
    node, cfg = np.full(J, -1), np.full(J, -1)
    for j in range(J):
        ok = np.flatnonzero(np.isfinite(work[j]))
        if rng.random() < 0.8:
            node[j], cfg[j] = j, int(rng.choice(ok))
    return Instance(
        cat, J, tuple(f"j{j}" for j in range(J)), np.zeros(J),
        hours * rng.uniform(1, 3, J), np.full(J, 20 / 3600), work,
        progress=rng.uniform(0, 0.5, J), current_node=node, current_cfg=cfg,
        overhead=float(rng.choice([0.0, 300.0, 1200.0])), startup=float(rng.choice([0, 120.0])),
        cpus=cpus, memory=memory,
    )  # fmt: skip


def judged(sol: Solution, colocation=None) -> float:
    """What `consolidate` minimises (`gpuaas.resources._Judge`), moves counted once."""
    from gpuaas.objective import dollar_terms
    from gpuaas.resources import _demands, _Judge

    inst = sol.instance
    judge = _Judge(inst, dollar_terms(inst), *_demands(inst), colocation)
    return sum(judge(sol.node_vm, sol.job_node, sol.job_cfg))


def test_consolidate_never_overfills_nor_judges_worse():
    """`consolidate` on 60 points where each running job sits alone (kept as it is): every plan
    passes the validator, what it minimises is never above the kept state's (its moves'
    part is P1$'s, `gpuaas.reconfiguration.reconfiguration_cost`), and it frees VMs on many
    of them; the default method's plans pass too. Without demands it returns the plan
    itself."""
    from gpuaas.objective import dollar_terms
    from gpuaas.reconfiguration import reconfiguration_cost
    from gpuaas.resources import _demands, _Judge, consolidate

    freed = 0
    for k in range(60):
        inst = alone_state(k)
        run = inst.current_cfg >= 0
        node_vm = np.full(inst.nodes, -1)
        node_vm[inst.current_node[run]] = inst.catalog.cfg_vm[inst.current_cfg[run]]
        kept = Solution(inst, node_vm, inst.current_node.copy(), inst.current_cfg.copy(), "kept")
        assert validate(kept).ok
        out = consolidate(kept, move_weight=1.0 + k % 4)
        assert validate(out).ok, (k, validate(out).errors)
        before, after = judged(kept), judged(out)
        assert after <= before + 1e-9 * abs(before), (k, before, after)
        moves = _Judge(inst, dollar_terms(inst), *_demands(inst), None)(
            out.node_vm, out.job_node, out.job_cfg
        )[1]
        assert close(moves, reconfiguration_cost(inst, out.node_vm, out.job_node, out.job_cfg))
        freed += int((out.node_vm >= 0).sum()) < int((node_vm >= 0).sum())
        assert validate(solve(inst, "incremental", seed=k)).ok
    assert freed >= 10, freed
    plain = tiny_instance(1)
    sol = solve(plain, "greedy")
    assert consolidate(sol) is sol


def test_default_method_consolidates_where_the_judge_drops(monkeypatch):
    """On the 40 first of those points the default method's plan (with `consolidate`) never
    judges worse than the same method without it (its plan only fitted) and better on
    several, with fewer VMs open."""
    import gpuaas.heuristics.default.method as default
    from gpuaas.resources import consolidate, fit

    better = fewer = 0
    for k in range(40):
        inst = alone_state(k)
        monkeypatch.setattr(default, "consolidate", consolidate)
        packed = solve(inst, "incremental", seed=k)
        monkeypatch.setattr(default, "consolidate", lambda sol, move_weight, colocation: fit(sol))
        plain = solve(inst, "incremental", seed=k)
        assert judged(packed) <= judged(plain) + 1e-9 * judged(plain), k
        better += judged(packed) < judged(plain) - 1e-6
        fewer += (packed.node_vm >= 0).sum() < (plain.node_vm >= 0).sum()
    assert better >= 5 and fewer >= 5, (better, fewer)


def test_consolidate_parts_jobs_that_slow_each_other():
    """Two 1-GPU jobs on one 2-GPU VM (a node each costs the same per GPU): together without a
    co-location table, apart when each keeps half its speed beside the other (the VM time
    lost to slowdown is dearer than a second VM), together again when the table says they
    do not slow each other; the speeds are the table's product over a node's other jobs."""
    from gpuaas.colocation import Colocation
    from gpuaas.resources import consolidate

    cat = Catalog(
        "inline", ("V1", "V2"), ("V100", "V100"), np.array([1, 2]), np.array([1.0, 2.0]),
        vcpus=[8, 16],
    )  # fmt: skip
    work = np.full((2, cat.n_configs), 36000.0)
    work[:, 2] = np.inf  # no job on both GPUs
    inst = Instance(
        cat, 2, ("a", "b"), np.zeros(2), np.full(2, 72000.0), np.full(2, 0.01), work,
        cpus=np.full(2, 2.0),
    )  # fmt: skip
    shared = Solution(inst, np.array([1, -1]), np.array([0, 0]), np.array([1, 1]), "x")
    slow = Colocation(np.array([0, 1]), np.array([[1.0, 0.5], [0.5, 1.0]]))
    fast = Colocation(np.array([0, 1]), np.ones((2, 2)))
    assert slow.speeds(np.array([0, 0])).tolist() == [0.5, 0.5]
    assert slow.speeds(np.array([0, 1])).tolist() == [1.0, 1.0]
    assert consolidate(shared).job_node.tolist() == [0, 0]
    apart = consolidate(shared, colocation=slow)
    assert validate(apart).ok and apart.job_node[0] != apart.job_node[1]
    assert judged(apart, slow) < judged(shared, slow)
    assert consolidate(shared, colocation=fast).job_node.tolist() == [0, 0]
    with pytest.raises(InputError):
        Colocation(np.array([0, 2]), np.ones((2, 2)))
    with pytest.raises(InputError):
        Colocation(np.array([0, 1]), np.zeros((2, 2)))


def test_consolidate_exchanges_jobs_to_pair_those_that_do_not_slow_each_other():
    """Four 1-GPU jobs of 8 vCPUs on two full 2-GPU VMs, the two of class 0 together and the
    two of class 1 together, where a job keeps 0.6 of its speed beside its own class and all
    of it beside the other: no VM can close and no job move alone, so an exchange pairs
    them 0 with 1 (the plan passes the validator and judges better)."""
    from gpuaas.colocation import Colocation
    from gpuaas.resources import consolidate

    cat = Catalog("inline", ("V2",), ("V100",), np.array([2]), np.array([2.0]), vcpus=[16])
    work = np.full((4, cat.n_configs), 36000.0)
    work[:, 1] = np.inf
    inst = Instance(
        cat, 4, tuple("abcd"), np.zeros(4), np.full(4, 72000.0), np.full(4, 0.01), work,
        cpus=np.full(4, 8.0), current_node=np.array([0, 0, 1, 1]), current_cfg=np.zeros(4, int),
        overhead=60.0,
    )  # fmt: skip
    table = Colocation(np.array([0, 0, 1, 1]), np.array([[0.6, 1.0], [1.0, 0.6]]))
    kept = Solution(inst, np.array([0, 0, -1, -1]), inst.current_node.copy(), np.zeros(4, int), "x")
    out = consolidate(kept, colocation=table)
    assert validate(out).ok
    pairs = sorted(sorted(table.workload[out.job_node == n].tolist()) for n in (0, 1))
    assert pairs == [[0, 1], [0, 1]], out.job_node
    assert judged(out, table) < judged(kept, table)
    assert consolidate(kept).job_node.tolist() == [0, 0, 1, 1]
