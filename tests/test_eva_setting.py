"""scripts/eva_setting.py: Eva's scheduling state <-> gpuaas, on a fake state in Eva's layout.

Nothing of Eva's repository (no license) is used: the objects below have the attributes its
master hands a scheduler (jobs, tasks, instances, instance types). The end-to-end run needs a
checkout of Eva (``GPUAAS_EVA``: its path; ``GPUAAS_EVA_PYTHON``: an interpreter with its
requirements, if not this one) and minutes: skipped without one.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuaas import methods
from gpuaas.errors import InputError
from gpuaas.solution import Solution

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "eva_setting.py"
RESULT = ROOT / "scripts" / "results" / "eva-setting.json"  # the newest gpuaas entry
spec = importlib.util.spec_from_file_location("eva_setting", SCRIPT)
eva_setting = importlib.util.module_from_spec(spec)
spec.loader.exec_module(eva_setting)


class It:
    def __init__(self, name, family, capacity, cost):
        self.name, self.family, self.capacity, self.cost = name, family, np.array(capacity), cost


class Task:
    def __init__(self, tid, demand, at=None, throughputs=(), delays=(1, 10, 1)):
        self.id = tid
        self.demand_dict = {f: list(demand) for f in ("p3", "c7i")}
        self.committed_instance_id = at
        self.observed_throughputs = list(throughputs)
        self.fetch_delay, self.build_delay, self.upload_delay = delays


class Job:
    def __init__(self, jid, arrival, duration, migrating=False, init_delay=2):
        self.id, self.task_ids = jid, [jid]
        self.arrival_time, self.duration, self.total_iters = arrival, duration, duration * 2.0
        self.migrating = migrating
        self.init_delay = init_delay

    def is_reconfigurable(self):
        return not self.migrating


class Inst:
    def __init__(self, it_id, types):
        self.instance_type_id, self.instance_type_name = it_id, types[it_id].name


#: Eva's catalog layout ([GPUs, CPUs, memory GB], $/h), a few of its types
TYPES = {
    0: It("p3.2xlarge", "p3", [1, 4, 61], 3.06),
    1: It("p3.8xlarge", "p3", [4, 16, 244], 12.24),
    2: It("c7i.large", "c7i", [0, 1, 4], 0.08925),
    3: It("c7i.2xlarge", "c7i", [0, 4, 16], 0.357),
}


def state(due_factor=1.0, weight=3.06, job1_cpus=2):
    """Job 0 runs on instance 7 (p3.8xlarge), 20 % done; job 1 waits; job 2 is CPU-only and
    waits; job 3 is being migrated (not reconfigurable) to instance 9 (p3.2xlarge)."""
    tasks = {
        0: Task(0, [1, 12, 16], at=7, throughputs=[2.0, 2.0]),  # 2 x 2/s x 300 s of 6 000
        1: Task(1, [1, job1_cpus, 8]),
        2: Task(2, [0, 3, 8]),
        3: Task(3, [1, 2, 8], at=9),
    }
    jobs = {
        0: Job(0, 100.0, 3000.0, init_delay=143),
        1: Job(1, 700.0, 5000.0),
        2: Job(2, 800.0, 2000.0),
        3: Job(3, 650.0, 4000.0, migrating=True),
    }
    instances = {7: Inst(1, TYPES), 9: Inst(0, TYPES)}
    cat = eva_setting.eva_catalog(eva_setting.types_by_name(TYPES), "test")
    rnd = eva_setting.EvaRound(
        catalog=cat,
        jobs=jobs,
        tasks=tasks,
        instances=instances,
        instance_types=TYPES,
        unfinished=[0, 1, 2, 3],
        current_config={7: [0]},
        time=900.0,
        interval=300.0,
        due_factor=due_factor,
        weight=weight,
        overhead=170.0,
        startup=230.0,
    )
    return rnd


def new_ids():
    n = iter(range(-2, -100, -1))
    return lambda: next(n)


def test_eva_state_is_the_instance_of_its_gpu_jobs():
    rnd = state(due_factor=2.0, weight=7.2)
    inst, cat = rnd.instance, rnd.catalog
    assert inst.job_ids == ("0", "1", "3") and rnd.cpu_jobs == [2]
    assert rnd.phys == [7, 9]  # the current config's GPU instance, and job 3's destination
    assert list(cat.vm_names) == ["p3.2xlarge", "p3.8xlarge"]  # the CPU types are not gpuaas's
    assert inst.cpus.tolist() == [24.0, 4.0, 4.0]  # Eva's CPUs are 2 vCPUs each
    assert inst.memory.tolist() == [16.0, 8.0, 8.0]
    assert inst.H == 300.0  # the plan holds until Eva's next round
    assert inst.progress.tolist() == pytest.approx([0.2, 0.0, 0.0])
    assert inst.due.tolist() == [100 + 2 * 3000, 700 + 2 * 5000, 650 + 2 * 4000]
    assert inst.weight.tolist() == pytest.approx([7.2 / 3600] * 3)
    small, big = cat.config(0, 1), cat.config(1, 1)
    # job 0's 24 vCPUs fit only the p3.8xlarge; on exactly its one GPU, at its duration
    assert np.isfinite(inst.work[0]).tolist() == [c == big for c in range(cat.n_configs)]
    assert inst.work[0, big] == 3000.0 and inst.work[1, small] == 5000.0
    assert inst.current_node.tolist() == [0, -1, 1]
    assert inst.current_cfg.tolist() == [big, -1, small]
    assert inst.pinned.tolist() == [False, False, True]
    assert (inst.overhead, inst.startup, inst.time) == (84.5, 230.0, 900.0)  # own losses' mean


def test_the_default_methods_plan_is_evas_planned_config():
    rnd = state()
    sol = methods.solve(rnd.instance, methods.DEFAULT_METHOD, seed=1)
    planned = rnd.plan(sol, new_ids())
    placed = sorted(t for ids in planned.values() for t in ids)
    assert placed == [0, 1, 2, 3]  # every unfinished task, once
    where = {t: key for key, ids in planned.items() for t in ids}
    assert where[3] == 9  # pinned: Eva is migrating it there
    assert where[0] == 7  # running: kept on its instance (or the plan kept it there)
    assert isinstance(where[2], tuple) and where[2][1] == 3  # CPU-only: cheapest that holds it
    for key, ids in planned.items():
        assert rnd._fits(ids, key)
        it = TYPES[key[1] if isinstance(key, tuple) else {7: 1, 9: 0}[key]]
        if it.family == "p3":  # the gpuaas plan's node types are the instances' types
            assert all(t in (0, 1, 3) for t in ids)


def test_a_running_job_the_plan_postpones_keeps_running():
    rnd = state()
    inst, cat = rnd.instance, rnd.catalog
    big, small = cat.config(1, 1), cat.config(0, 1)
    # node 0 keeps the p3.8xlarge with job 1 only; job 0 (running there) is postponed
    sol = Solution(inst, [1, 0, -1, -1, -1], [-1, 0, 1], [-1, big, small], "hand")
    planned = rnd.plan(sol, new_ids())
    assert sorted(planned[7]) == [0, 1] and planned[9] == [3]
    assert rnd.kept_postponed == 1
    # the plan closes its instance: kept open for it alone
    rnd = state()
    sol = Solution(rnd.instance, [-1, 0, 0, -1, -1], [-1, 2, 1], [-1, small, small], "hand")
    planned = rnd.plan(sol, new_ids())
    assert planned[7] == [0]
    # the plan fills its instance: moved alone to the cheapest type that holds it
    rnd = state(job1_cpus=6)  # 6 + 12 CPUs > the p3.8xlarge's 16
    sol = Solution(rnd.instance, [1, 0, -1, -1, -1], [-1, 0, 1], [-1, big, small], "hand")
    planned = rnd.plan(sol, new_ids())
    assert planned[7] == [1] and planned[9] == [3]
    moved = [key for key, ids in planned.items() if ids == [0]]
    assert len(moved) == 1 and moved[0][1] == 1  # a new p3.8xlarge, the cheapest with 12 CPUs


def test_scheduler_rounds_keep_a_stable_plan():
    """Two rounds of Eva's master: new instances get ids, and an unchanged state is kept."""
    sched = eva_setting.GpuaasScheduler(overhead=170.0, startup=230.0)
    tasks = {0: Task(0, [1, 12, 16]), 1: Task(1, [1, 2, 8]), 2: Task(2, [0, 3, 8])}
    jobs = {0: Job(0, 0.0, 9000.0), 1: Job(1, 0.0, 9000.0), 2: Job(2, 0.0, 9000.0)}
    common = dict(contention_map={}, up_instance_ids=set(), event_occurred=True)
    alone = sched.generate_planned_config(
        {1: jobs[1]}, {1: tasks[1]}, {}, TYPES, unfinished_job_ids={1}, current_config={},
        time=0, real_reconfig=False, **common,
    )  # fmt: skip
    assert [(key[1], ids) for key, ids in alone.items()] == [(0, [1])]
    first = sched.generate_planned_config(
        jobs, tasks, {}, TYPES, unfinished_job_ids={0, 1, 2}, current_config={}, time=300,
        **common,
    )  # fmt: skip
    assert all(isinstance(key, tuple) and key[0] < 0 for key in first)
    # Eva launches them (ids 0, 1, ...), commits the tasks and reports throughput
    instances, current = {}, {}
    for iid, (key, ids) in enumerate(first.items()):
        instances[iid] = Inst(key[1], TYPES)
        current[iid] = list(ids)
        for t in ids:
            tasks[t].committed_instance_id = iid
            tasks[t].observed_throughputs.append(2.0)
    second = sched.generate_planned_config(
        jobs, tasks, instances, TYPES, unfinished_job_ids={0, 1, 2}, current_config=current,
        time=600, **common,
    )  # fmt: skip
    assert second == current
    assert sched.get_report()["rounds"] == 2


def test_summary_of_evas_report():
    job = lambda a, e, s: {"arrival_time": a, "end_timestamp": e, "history": [{"status": s}]}  # noqa: E731
    report = {"jobs": {"0": job(0, 3600, "FINISHED"), "1": job(0, 7200, "FINISHED")}}
    out = eva_setting.summarize(report, 123.456)
    assert out["cost"] == 123.46 and out["jct_mean_h"] == 1.5 and out["jobs"] == 2
    report["jobs"]["2"] = job(0, None, "EXECUTING")
    with pytest.raises(InputError, match="1 jobs did not finish"):
        eva_setting.summarize(report, 1.0)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--eva", "/nonexistent"], "not a checkout of Eva"),
        (["--eva", str(ROOT), "--schedulers", "Eva,Tetris"], "unknown 'Tetris'"),
        (["--eva", str(ROOT), "--weights", "1,x"], "--weights"),
    ],
)
def test_bad_arguments_one_line_exit_2(args, message, tmp_path):
    if args[1] == str(ROOT):  # a fake checkout: the files the script looks for
        fake = tmp_path / "eva" / "src"
        (fake / "pai_trace" / "traces").mkdir(parents=True)
        (fake / "eva_simulate.py").write_text("")
        (fake / eva_setting.TRACE).write_text("{}")
        args = ["--eva", str(fake.parent), *args[2:]]
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


@pytest.mark.skipif(not os.environ.get("GPUAAS_EVA"), reason="needs a checkout of Eva (GPUAAS_EVA)")
def test_in_evas_simulator(tmp_path):
    """gpuaas's entry of scripts/results/eva-setting.json (the newest; the older files
    record earlier code), run again in Eva's simulator on pai_200 (the user's checkout; a few
    minutes): every job finishes, the same figures."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--eva", os.environ["GPUAAS_EVA"], "--json"]
        + ["--schedulers", "gpuaas", "--work", str(tmp_path)]
        + ["--python", os.environ.get("GPUAAS_EVA_PYTHON", sys.executable)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["gpuaas"]
    committed = json.loads(RESULT.read_text())["gpuaas"]
    assert out["jobs"] == 200
    for key in ("cost", "jct_mean_h", "jct_p95_h", "weight", "due_factor"):
        assert out[key] == committed[key], key
    for key in ("rounds", "kept_postponed"):  # the solver's seconds aside
        assert out["scheduler"][key] == committed["scheduler"][key], key


def test_move_costs_from_evas_files(tmp_path):
    """Start-up: the largest GPU type's three delays; overhead: the largest init + fetch +
    build delays of the trace."""
    src = tmp_path / "src"
    (src / "simulation" / "config").mkdir(parents=True)
    (src / "pai_trace" / "traces").mkdir(parents=True)
    delays = lambda i, r, w: {
        "instantiate_delay": i,
        "run_worker_delay": r,
        "worker_register_delay": w,
    }  # noqa: E731
    types = {
        "p3.2xlarge": {"capacity": [1, 8, 61], **delays(22, 51, 100)},
        "p3.8xlarge": {"capacity": [4, 32, 244], **delays(37, 60, 132)},
        "c7i.large": {"capacity": [0, 2, 4], **delays(7, 98, 500)},  # no GPU: not counted
    }
    (src / eva_setting.SIM_TYPES).write_text(json.dumps({"instance_types": types}))
    task = lambda f, b: {"fetch_delay": f, "build_image_delay": b}  # noqa: E731
    trace = {
        "0": {"init_delay": 80, "tasks": {"0": task(1, 10)}},
        "1": {"init_delay": 160, "tasks": {"1": task(1, 10)}},
        "2": {"init_delay": 10, "tasks": {"2": task(100, 10)}},
    }
    (src / eva_setting.TRACE).write_text(json.dumps(trace))
    assert eva_setting.move_costs(src) == (37 + 60 + 132, 160 + 1 + 10)


def test_missing_contention_table_is_rebuilt_by_evas_generator(tmp_path, capsys):
    src = tmp_path / "src"
    gen = src / eva_setting.CONTENTION_GENERATOR
    gen.parent.mkdir(parents=True)
    # a stand-in for Eva's generator: writes the table where Eva's does, with the hash seed
    gen.write_text(
        "import os\nopen('contention_map.pkl', 'w').write(os.environ['PYTHONHASHSEED'])\n"
    )
    eva_setting.ensure_contention_map(src, sys.executable)
    assert (src / eva_setting.CONTENTION_MAP).read_text() == "0"
    assert "missing; rebuilding it" in capsys.readouterr().err
    eva_setting.ensure_contention_map(src, sys.executable)  # present: nothing said
    assert capsys.readouterr().err == ""


def test_cost_jct_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from gpuaas.plots import plot_cost_jct

    results = {
        "Eva": {"cost": 25263.0, "jct_mean_h": 18.63},
        "No-Packing": {"cost": 35858.0, "jct_mean_h": 17.67},
        "gpuaas": {"cost": 32000.0, "jct_mean_h": 18.7, "weight": 20.0},
        "gpuaas w=1": {"cost": 33000.0, "jct_mean_h": 19.5, "weight": 1.0},
    }
    out = plot_cost_jct(results, tmp_path / "curve.png")
    assert out.stat().st_size > 1000
    with pytest.raises(InputError, match="image format"):
        plot_cost_jct(results, tmp_path / "curve.txt")


def test_variant_options_checked_by_the_method():
    assert eva_setting.parse_variant("polish_nodes=50") == {"polish_nodes": 50}
    with pytest.raises(InputError, match="unknown option"):
        eva_setting.parse_variant("tabu=3")
    with pytest.raises(InputError, match="KEY=VALUE"):
        eva_setting.parse_variant("polish_nodes")


def test_colocation_from_evas_contention_table(tmp_path):
    """Eva's contention table (its pickle: sorted class names -> each one's speed, in key
    order) becomes the default method's `Colocation` as Eva's simulator reads it: asymmetric
    pairs by class, a pair the table lacks at 1, and a group of 3 or more at the group's own
    entry (``dict(zip(key, speeds))``, the last of a class winning), not the pairs' product
    (which the script used before: 0.8 x 0.7 for vit beside sage and vit); no table: None."""
    import pickle

    table = {
        ("sage_node0", "vit_node0"): [0.9, 0.8],
        ("vit_node0", "vit_node0"): [0.7, 0.7],
        ("sage_node0", "vit_node0", "vit_node0"): [0.5, 0.6, 0.3],
        ("sage_node0",): [1.0],
        ("gcn_node0",): [1.0],
    }
    path = tmp_path / "contention_map.pkl"
    path.write_bytes(pickle.dumps(table))
    contention = eva_setting.ContentionTable.load(str(path))
    assert contention.classes == ["gcn_node0", "sage_node0", "vit_node0"]
    co = eva_setting.colocation(contention, ["vit_node0", "sage_node0", "vit_node0", "gcn_node0"])
    assert co.workload.tolist() == [2, 1, 2, 0]
    assert co.speed[1, 2] == 0.9 and co.speed[2, 1] == 0.8 and co.speed[2, 2] == 0.7
    assert co.speed[0, 1] == 1.0 and co.speed[1, 1] == 1.0  # pairs the table lacks
    # sage with two vits: the group's entry, as Eva's simulator runs them
    assert np.allclose(co.speeds(np.array([0, 0, 0, 1])), [0.3, 0.5, 0.3, 1.0])
    # a pair and a group the table lacks (gcn beside sage and vit): the pairs' product
    assert np.allclose(co.speeds(np.array([0, 0, 1, 0])), [0.8, 0.9, 1.0, 1.0])
    assert np.allclose(co.speeds(np.array([0, 1, 0, 1])), [0.7, 1.0, 0.7, 1.0])
    assert eva_setting.colocation(None, ["vit_node0"]) is None


def test_a_move_costs_each_job_its_own_migration_time():
    """A moved job loses its own migration time as Eva's master counts it (its task's fetch +
    build + upload delays and its init delay: 155 s for job 0, 14 s for job 3), not the
    trace's largest for every job (the script's `overhead`, 170 s here, before); the scalar
    `overhead` is their mean over the running jobs. Moving job 0 is dearer than job 3."""
    import dataclasses

    from gpuaas.reconfiguration import reconfiguration_terms

    inst = state().instance
    assert inst.move_loss.tolist() == [155.0, 14.0, 14.0]  # jobs 0, 1, 3 (GPU jobs)
    assert inst.overhead == (155.0 + 14.0) / 2  # jobs 0 and 3 run
    kappa, _ = reconfiguration_terms(inst)
    per_second, _ = reconfiguration_terms(dataclasses.replace(inst, move_loss=None, overhead=1.0))
    assert kappa[1] == 0.0 and per_second[2] > 0  # job 1 waits: nothing to lose
    assert kappa == pytest.approx(per_second * [155.0, 0.0, 14.0])


def test_a_run_whose_rpc_found_no_server_is_run_again(tmp_path, capsys):
    """Eva's simulator draws its ports at random and starts its servers in threads: a run whose
    RPC found no server ("Connection refused") is run again (at most `RETRIES` times), any
    other failure is reported at once."""
    fake = tmp_path / "fake_python"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        "from pathlib import Path\n"
        "work = Path(sys.argv[sys.argv.index('--work') + 1])\n"
        "n = len(list(work.glob('attempt*')))\n"
        "(work / f'attempt{n}').write_text('')\n"
        "if n < int((work / 'refusals').read_text()):\n"
        "    print('Failed to connect to remote host: Connection refused'); sys.exit(1)\n"
        "job = {'arrival_time': 0, 'end_timestamp': 3600, 'history': [{'status': 'FINISHED'}]}\n"
        "(work / 'report.json').write_text(json.dumps({'jobs': {'0': job}}))\n"
        "print('Total cost: 12.5')\n"
    )
    fake.chmod(0o755)
    for refusals, ok in ((eva_setting.RETRIES, True), (eva_setting.RETRIES + 1, False)):
        work = tmp_path / f"w{refusals}"
        work.mkdir()
        (work / "refusals").write_text(str(refusals))
        if ok:
            out = eva_setting.run_one(tmp_path, str(fake), "Eva", work, {})
            assert out["cost"] == 12.5 and out["jobs"] == 1
        else:
            with pytest.raises(InputError, match="simulation failed"):
                eva_setting.run_one(tmp_path, str(fake), "Eva", work, {})
        assert len(list(work.glob("attempt*"))) == min(refusals, eva_setting.RETRIES) + 1
        assert capsys.readouterr().err.count("again") == min(refusals, eva_setting.RETRIES)
