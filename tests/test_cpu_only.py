"""CPU-only jobs and GPU-less VM types (docs/design.md, "CPU-only jobs"): a VM type of 0 GPUs
has one configuration (v, 0), a CPU-only job runs there holding its largest share of the
type's vCPUs or memory. Every method's plan passes the independent validator, the MILP equals
a brute force on tiny mixed instances, the bound stays below simulated costs, simulations
reconcile, and bad input is refused naming its field."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from bruteforce import brute_force, brute_force_dollars
from eventlog import check_against, recompute
from test_milp import close

from gpuaas.bounds import bound
from gpuaas.catalog import Catalog
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.methods import METHODS, solve
from gpuaas.simulator import simulate
from gpuaas.validator import validate


def mixed_catalog(rng: np.random.Generator) -> Catalog:
    """1-2 GPU types of 1-2 GPUs and 1-2 GPU-less types, all with vCPUs and memory."""
    G = rng.integers(1, 3, int(rng.integers(1, 3)))
    K = int(rng.integers(1, 3))
    gpus = np.concatenate([G, np.zeros(K, dtype=np.int64)])
    vcpus = np.concatenate([8 * G, rng.choice([4, 8, 16], K)])
    memory = np.concatenate([32.0 * G, rng.choice([8.0, 16.0, 32.0], K)])
    price = np.concatenate([np.round(rng.uniform(0.8, 2.5, G.size) * G, 2),
                            np.round(vcpus[G.size:] * rng.uniform(0.03, 0.06, K), 2)])  # fmt: skip
    names = tuple(f"G{v}" for v in range(G.size)) + tuple(f"C{v}" for v in range(K))
    models = ("V100",) * G.size + ("",) * K
    return Catalog("inline", names, models, gpus, price, vcpus=vcpus, memory=memory)


def mixed_instance(seed: int, jobs: int | None = None, nodes: int | None = None) -> Instance:
    """A seeded tiny instance over `mixed_catalog`: GPU jobs (times on the GPU types) and
    CPU-only jobs (times on the GPU-less types), each with vCPUs and memory it needs."""
    rng = np.random.default_rng(seed)
    cat = mixed_catalog(rng)
    N = int(rng.integers(1, 3)) if nodes is None else nodes
    J = int(rng.integers(2, 5)) if jobs is None else jobs
    C = cat.n_configs
    less = cat.gpu_less[cat.cfg_vm]
    cpu_only = rng.random(J) < 0.5
    cpu_only[0], cpu_only[-1] = True, False  # one of each at least
    base = rng.uniform(0.5, 12, J) * 3600
    speed = rng.uniform(0.7, 1.5, cat.n_vms)
    g = np.maximum(cat.cfg_gpus, 1)
    work = base[:, None] / speed[cat.cfg_vm][None, :] / g[None, :] ** 0.6
    work[cpu_only[:, None] != less[None, :]] = np.inf
    work[rng.random((J, C)) < 0.2] = np.inf
    for j in np.flatnonzero(~np.isfinite(work).any(axis=1)):
        work[j, np.flatnonzero(less == cpu_only[j])[-1]] = base[j]
    cpus = rng.choice([1.0, 2.0, 4.0, 6.0], J)
    memory = rng.choice([2.0, 4.0, 8.0, 12.0], J)
    fits = (cpus[:, None] <= cat.vcpus[cat.cfg_vm]) & (memory[:, None] <= cat.memory[cat.cfg_vm])
    for j in np.flatnonzero(~(fits & np.isfinite(work)).any(axis=1)):
        cpus[j], memory[j] = 1.0, 2.0  # every type here holds that
    tmin = np.where(np.isfinite(work), work, np.inf).min(axis=1)
    due = tmin * rng.uniform(0.5, 3.0, J)
    weight = rng.uniform(0.003, 0.015, J)
    return Instance(
        cat, N, tuple(f"j{i}" for i in range(J)), np.zeros(J), due, weight, work,
        H=3600.0, cpus=cpus, memory=memory, mu=float(rng.choice([0.0, 0.002])),
    )  # fmt: skip


def test_numbering():
    """(v, 0) is one configuration per GPU-less type; cfg_offset[v] + g - 1 indexes every
    configuration, GPU-less ones included; a catalog without them is numbered as before."""
    cat = Catalog("x", ("A", "C", "B"), ("V100", "", "K80"), np.array([2, 0, 1]), np.ones(3),
                  vcpus=[8, 4, 4], memory=[64.0, 8.0, 32.0])  # fmt: skip
    assert cat.n_configs == 4
    assert cat.cfg_vm.tolist() == [0, 0, 1, 2] and cat.cfg_gpus.tolist() == [1, 2, 0, 1]
    assert [cat.config(v, g) for v, g in ((0, 1), (0, 2), (1, 0), (2, 1))] == [0, 1, 2, 3]
    assert cat.cfg_offset.tolist() == [0, 3, 3] and cat.cfg_first.tolist() == [0, 2, 3]
    assert [list(cat.configs(v)) for v in range(3)] == [[0, 1], [2], [3]]
    assert not cat.has_config(0, 0) and not cat.has_config(1, 1)
    again = Catalog.from_dict(cat.to_dict())
    assert again.gpus.tolist() == [2, 0, 1] and "gpu" not in cat.to_dict()["vm_types"][1]
    plain = Catalog("x", ("A", "B"), ("V100", "K80"), np.array([2, 1]), np.ones(2))
    assert plain.cfg_offset.tolist() == plain.cfg_first.tolist() == [0, 2]
    assert not plain.has_gpu_less


@pytest.mark.parametrize("objective", ["dollars", "p1a"])
def test_milp_equals_brute_force_on_mixed_instances(objective):
    """On 60 tiny mixed instances (GPU jobs and CPU-only jobs, GPU and GPU-less types, vCPU and
    memory limits) the MILP optimum equals the brute force, and the validator agrees."""
    from gpuaas.milp import milp

    bad = []
    for k in range(60):
        inst = mixed_instance(k)
        if objective == "dollars":
            best, _ = brute_force_dollars(inst)
            sol = milp(inst, gap=0.0)
            value, rep = sol.objective, validate(sol)
            value_v = rep.objective
        else:
            best, _ = brute_force(inst).optimum(False, inst)
            sol = milp(inst, objective="p1a", gap=0.0, p1n=False)
            rep = validate(sol)
            value, value_v = sol.f_obj, rep.f_obj
        if not (sol.stats["status"] == "optimal" and rep.ok and close(value, best)
                and close(value_v, best)):  # fmt: skip
            bad.append((k, best, value, value_v, rep.errors))
    assert not bad


def with_running(inst: Instance, seed: int) -> Instance:
    """`inst` with its first jobs running where the MILP would place them (an incumbent), and
    moves costing `overhead` and `startup`."""
    from gpuaas.milp import milp

    sol = milp(inst, gap=0.0)
    rng = np.random.default_rng(seed)
    keep = (sol.job_cfg >= 0) & (rng.random(inst.n_jobs) < 0.6)
    node = np.where(keep, sol.job_node, -1)
    cfg = np.where(keep, sol.job_cfg, -1)
    return dataclasses.replace(
        inst, current_node=node, current_cfg=cfg, overhead=120.0, startup=60.0,
        progress=np.where(keep, 0.3, 0.0),
    )  # fmt: skip


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_plans_cpu_only_jobs_validly(method):
    """Every method's plan of instances with CPU-only jobs and GPU-less types (half with an
    incumbent) passes the independent validator, and places some CPU-only job on a GPU-less
    type (those that can place anything: see `UNPLACED`)."""
    placed = 0
    for k in range(10):
        inst = mixed_instance(100 + k, jobs=6, nodes=3)
        if k % 2:
            inst = with_running(inst, k)
        sol = solve(inst, method, seed=k, time_limit=5.0)
        rep = validate(sol)
        assert rep.ok, (k, rep.errors)
        assert close(sol.objective, rep.objective), (k, sol.objective, rep.objective)
        cat = inst.catalog
        on = sol.job_cfg >= 0
        placed += int(cat.gpu_less[cat.cfg_vm[sol.job_cfg[on]]].sum())
    assert placed >= 1, method


def mixed_trace(seed: int, jobs: int = 10) -> Instance:
    """`mixed_instance`'s jobs released over two hours, as a trace file would give them."""
    inst = mixed_instance(seed, jobs=jobs, nodes=3)
    data = inst.to_dict()
    for k, job in enumerate(data["jobs"]):
        job["release"] = 720.0 * k
        job["due"] = job["due"] + 720.0 * k
    return Instance.from_dict(data)


def test_format_round_trip():
    """A GPU-less type is written with gpus 0 and no gpu model; a CPU-only job's times on it
    are a list of one time (its configuration (v, 0)); both read back the same."""
    inst = mixed_instance(3)
    data = json.loads(json.dumps(inst.to_dict()))
    less = [vm for vm in data["catalog"]["vm_types"] if vm["gpus"] == 0]
    assert less and all("gpu" not in vm and "vcpus" in vm for vm in less)
    cpu_job = data["jobs"][0]
    assert set(cpu_job["times"]) <= {vm["name"] for vm in less}
    assert all(len(t) == 1 for t in cpu_job["times"].values())
    again = Instance.from_dict(data)
    assert np.array_equal(again.work, inst.work) and np.array_equal(again.cpus, inst.cpus)


def test_bad_input_names_the_field():
    """A GPU-less type without vCPUs or memory, naming a GPU model, a CPU-only job without
    demands or larger than every GPU-less type, a time list of the wrong length and a placement
    with GPUs on a GPU-less type are refused, each naming its field."""
    data = mixed_instance(3).to_dict()
    c = next(i for i, vm in enumerate(data["catalog"]["vm_types"]) if vm["gpus"] == 0)
    name = data["catalog"]["vm_types"][c]["name"]

    def refused(change, match):
        bad = json.loads(json.dumps(data))
        change(bad)
        with pytest.raises(InputError, match=match):
            Instance.from_dict(bad)

    def no_resources(d):
        del d["catalog"]["vm_types"][c]["vcpus"], d["catalog"]["vm_types"][c]["memory"]

    refused(no_resources, rf"vm_types\[{c}\]\.vcpus: a VM type with 0 GPUs must declare")
    refused(
        lambda d: d["catalog"]["vm_types"][c].update(gpu="V100"),
        rf"vm_types\[{c}\]\.gpu: a VM type with 0 GPUs names no GPU model",
    )

    def no_demands(d):
        d["jobs"][0].pop("cpus"), d["jobs"][0].pop("memory")

    refused(no_demands, r"jobs\[0\] \(j0\)\.cpus: the job may run on C\d, which has no GPUs")
    refused(
        lambda d: d["jobs"][0].update(cpus=1000.0),
        r"jobs\[0\] \(j0\): needs 1000 vCPUs .* no VM type of the catalog it can run on",
    )
    refused(
        lambda d: d["jobs"][0]["times"].update({name: [100.0, 200.0]}),
        rf"times\.{name}: must be a list of 1 times \(it has no GPUs",
    )
    t = next(iter(data["jobs"][0]["times"]))
    refused(
        lambda d: d["jobs"][0].update(placement={"node": 0, "vm": t, "gpus": 1}),
        r"placement\.gpus: must be 0 \(it has no GPUs\)",
    )


def test_simulation_reconciles_and_bound_stays_below():
    """Traces with CPU-only jobs simulate with every family of method; each event log
    reconciles (costs and every job's work, `tests/eventlog.py`), no node of any interval holds
    more vCPUs or memory than its type, and the bound (per-job and capacity LP) stays below
    every simulated cost."""
    for seed in (1, 2):
        trace = mixed_trace(seed)
        b = bound(trace).bound
        assert b > 0
        cat = trace.catalog
        for method in ("incremental", "greedy", "randomized-greedy", "edf", "milp"):
            with tempfile.TemporaryDirectory() as tmp:
                log = Path(tmp) / "log.jsonl"
                result = simulate(trace, method, log=log)
                assert check_against(recompute(log, trace), result.to_dict(), trace) == []
                for line in log.read_text().splitlines():
                    held: dict[int, list[float]] = {}
                    vm_of: dict[int, str] = {}
                    for job in json.loads(line)["jobs"]:
                        j = trace.job_ids.index(job["id"])
                        h = held.setdefault(job["node"], [0.0, 0.0])
                        h[0] += trace.cpus[j]
                        h[1] += trace.memory[j]
                        vm_of[job["node"]] = job["vm"]
                    for n, (k, m) in held.items():
                        v = cat.vm_index(vm_of[n])
                        assert k <= cat.vcpus[v] and m <= cat.memory[v] + 1e-9, (method, line)
            assert b <= result.total_cost + 1e-9, (seed, method, b, result.total_cost)
            assert result.to_dict()["jobs_completed"] == trace.n_jobs, method
