"""Eva's setting as a benchmark (issue 44 item 3): gpuaas's default method as one more
scheduler in Eva's own simulator, beside Eva's five, on its pai_200 trace.

    python scripts/eva_setting.py --eva DIR --json                     # the six schedulers
    python scripts/eva_setting.py --eva DIR --json --weights 1,3,10,30,100 --plot curve.png

Eva (EuroSys '25, ``uw-mad-dash/Eva``) has no license: nothing of it is in this repository.
Everything of it runs from the user's checkout `--eva DIR`, unchanged: each scheduler is one
run of its ``src/eva_simulate.py`` (its simulator, master and accounting) on the config its
``src/experiment_driver_200.py`` writes (`generate_config`: pai_200, its EC2 catalog, the
300 s scheduling interval, its contention table ``simulation/contention_map/contention_map.pkl``;
rebuilt by its own ``generate_contention_map.py`` with ``PYTHONHASHSEED=0`` when missing, which
the script says on stderr). Each run is a child process (``--python``: an interpreter with
Eva's requirements and gpuaas's; ``PYTHONHASHSEED=0``) in ``DIR/src``. gpuaas takes part as
the class `GpuaasScheduler` below, set on Eva's scheduler registry (the module
``master.scheduler``, where its master looks up ``scheduler.class_name``) before the run: it
has the interface of Eva's schedulers (``generate_planned_config``, ``get_report``). Cost is
the simulator's own total ("Total cost:" in its log), JCT completion - arrival of every job
from its report.

**At each 300 s round** Eva's master hands the scheduler its state (jobs, tasks, instances,
instance types, the current config {instance id: task ids}); `GpuaasScheduler` turns it into
a gpuaas `Instance` (`eva_instance`), calls the default method through
`gpuaas.methods.solve` (its plan within every VM's vCPUs and memory,
`gpuaas.resources.fit`), and turns the plan back into Eva's planned config (`eva_plan`):

- the catalog: Eva's GPU instance types (p3) with their prices, CPUs x 2 as vCPUs
  (`gpuaas.importers.eva.eva_catalog`); a job's demand ``[GPUs, CPUs, memory]``, its CPUs x 2
  as vCPUs, its work the trace's duration (alone) on exactly its GPUs
  (`gpuaas.importers.build.duration_work`); its progress the iterations Eva's workers
  reported (each round's measured throughput x the interval) over its total;
- a GPU instance of the current config is a node (its jobs placed there); a job Eva is
  migrating (not reconfigurable) is pinned to its instance; a VM starts up in `startup` s
  (Eva's largest p3 instantiate + run-worker + register delays); a moved job loses its own
  migration time as Eva's master counts it (`migration_time`: its task's fetch + build +
  upload delays and its init delay, 20-173 s on pai_200), the Instance's `move_loss`, and
  the scalar `overhead` is their mean over the running jobs (before: the trace's largest,
  171 s, for every job: 25 300 $ against 25 214 $);
- Eva's contention table reaches the default method as a `gpuaas.colocation.Colocation`
  (`ContentionTable`: each GPU job's workload class as Eva's simulator keys the table, the
  pairs' speeds, and the table's own entry for every group of 3 or more, which Eva's
  simulator reads and which is not the pairs' product; before: the pairs alone, 25 368 $
  against 25 300 $): its re-packing counts the VM time slowdown loses (`--no-colocation`:
  without);
- the plan holds until Eva's next round: the instance's interval H is Eva's (300 s; at
  gpuaas's default of 1 h: 25 439 $ against 25 368 $ before the group speeds and per-job
  move losses, scripts/results/eva-setting.md);
- the plan's nodes are matched to the instances (`gpuaas.rescheduler.matching.match_nodes`,
  the Rescheduler's rule): a node kept with its type is its instance, any other open node a
  new instance of its type (Eva cannot resize); a running job the plan postpones keeps
  running where it is (Eva's reconfiguration has no preemption to the queue): on its
  instance, kept open for it if the plan closes it, or alone on a new instance of the
  cheapest type that holds it if the plan fills its instance.

**No due dates in Eva's trace**: a job's value of time is a due date and a weight: due =
arrival + `due_factor` x its standalone duration, and `weight` $ per hour late (`--weight`,
`--due-factor`); `--weights` sweeps the weight, one more run each, for the cost / mean-JCT
curve (`--plot`: against the five schedulers' points).

**CPU-only jobs** (19 of pai_200; gpuaas has no zero-GPU configurations yet): each runs alone
on the cheapest of Eva's instance types that holds it, from its first round to its end (the
rule of Eva's No-Packing scheduler, which spends on them what Eva's does).

`--variant KEY=VALUE` adds a run of the default method with those options (e.g.
``polish_nodes=50``, its P1$ MILP polish), at `--weight`.

Output (``--json``, ``-o``): ``{"<scheduler>": {"cost" $, "jct_mean_h", "jct_p95_h", "jobs",
"seconds"}}``, gpuaas's entry under "gpuaas" (with its weight, due factor and counters:
rounds planned, solver seconds, running jobs the plan postponed), the sweep's under
"gpuaas w=<weight>", a variant's under "gpuaas <its options>".
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpuaas import methods  # noqa: E402
from gpuaas.catalog import Catalog  # noqa: E402
from gpuaas.colocation import Colocation, Groups  # noqa: E402
from gpuaas.errors import InputError  # noqa: E402
from gpuaas.files import check_output, open_output  # noqa: E402
from gpuaas.importers.build import duration_work  # noqa: E402
from gpuaas.importers.eva import FAMILY_GPU, VCPUS_PER_CPU, eva_catalog  # noqa: E402
from gpuaas.instance import Instance  # noqa: E402
from gpuaas.rescheduler.matching import check_solution, match_nodes  # noqa: E402
from gpuaas.solution import Solution  # noqa: E402

#: Eva's five schedulers (experiment_driver_200's list): label -> class in master.scheduler
EVA_SCHEDULERS = {
    "No-Packing": "NaiveScheduler",
    "Eva": "EVAGangScheduler",
    "Stratus": "StratusScheduler",
    "Owl": "OwlScheduler",
    "Synergy": "SynergyScheduler",
}
GPUAAS = "gpuaas"
GPUAAS_CLASS = "GpuaasScheduler"
TRACE = "pai_trace/traces/pai_200.json"
CONTENTION_MAP = "simulation/contention_map/contention_map.pkl"
CONTENTION_GENERATOR = "simulation/contention_map/generate_contention_map.py"
#: the simulator's instance-type delays (its ec2_config_virt.json) and its trace's job delays
SIM_TYPES = "simulation/config/ec2_config_virt.json"
START_DELAYS = ("instantiate_delay", "run_worker_delay", "worker_register_delay")
MOVE_DELAYS = ("fetch_delay", "build_image_delay")
#: the default value of time: due at arrival + DUE_FACTOR x duration, WEIGHT $/h late after
DUE_FACTOR = 1.0
#: $/h late: above the p3.8xlarge's 12.24 $/h most jobs need for their CPUs, so a late job is
#: worth running (below it P1$ postpones running jobs, which Eva cannot preempt)
WEIGHT = 20.0
#: a job's measured progress is held below 1 until Eva reports it finished
MAX_PROGRESS = 0.99
COST_LINE = re.compile(r"Total cost: ([0-9.eE+-]+)")
#: a run of Eva's simulator whose RPC found no server (its ports are drawn at random, its
#: servers start in threads; seen once in 11 runs on a loaded machine) is run again, this many
#: times at most: the same run, a deterministic one
REFUSED = re.compile(r"Failed to connect to remote host: Connection refused")
RETRIES = 2


# -- Eva's state -> a gpuaas Instance -> Eva's planned config (no Eva import: duck-typed) ------


def types_by_name(instance_types: Mapping[Any, Any]) -> dict[str, dict[str, Any]]:
    """Eva's instance types (id -> object with name, family, capacity, cost) as the mapping
    `eva_catalog` reads."""
    return {
        it.name: {
            "capacity": np.asarray(it.capacity).tolist(),
            "cost": float(it.cost),
            "family": it.family,
        }
        for it in instance_types.values()
    }


def gpu_demand(task: Any, families: set[str]) -> tuple[str, list[float]] | None:
    """(family, [GPUs, CPUs, memory]) of a task's demand on a GPU family, None if it needs no
    GPU (a CPU-only task)."""
    for family in sorted(families):
        demand = task.demand_dict.get(family)
        if demand is not None and demand[0] > 0:
            return family, [float(x) for x in demand]
    return None


def workload_name(job: Any, task: Any) -> str:
    """A task's workload class as Eva's simulator keys its contention table: the job's name
    without its ``[k]`` index, then the task's name (``resnet18_node0``)."""
    return f"{job.name.split('[')[0]}_{task.name}"


class ContentionTable:
    """Eva's contention table (the pickle its simulator reads: {sorted workload classes: each
    one's speed, in key order}) as gpuaas's `Colocation` reads it, built once: the classes
    (sorted names), the pairs' speed matrix and every group of 2 or more as
    `gpuaas.colocation.Groups`. A job's speed in a group is what Eva's simulator gives it,
    ``dict(zip(key, speeds))[its class]``: for 3 or more jobs that is not the product of the
    pairs (its generator lists each group's speeds in an order of its own, not the sorted
    key's), so the pairs alone would tell the method other speeds than the simulator's. Eva's
    own schedulers do not read the table: its master learns each group's speeds from the
    throughputs it observes (they get that map)."""

    def __init__(self, table: Mapping[tuple, Sequence[float]]) -> None:
        self.classes = sorted({x for key in table for x in key})
        self.index = {x: a for a, x in enumerate(self.classes)}
        W = len(self.classes)
        self.speed = np.ones((W, W))
        groups: dict[tuple[int, ...], dict[int, float]] = {}
        for key, value in table.items():
            if len(key) < 2:
                continue
            of = dict(zip(key, (float(x) for x in value)))  # Eva's simulator's rule
            if len(key) == 2:
                x, y = key
                self.speed[self.index[x], self.index[y]] = of[x]
                self.speed[self.index[y], self.index[x]] = of[y]
            groups[tuple(sorted(self.index[x] for x in key))] = {
                self.index[x]: v for x, v in of.items()
            }
        self.groups = Groups(groups, W)

    @classmethod
    def load(cls, path: str) -> ContentionTable:
        import pickle

        with open(path, "rb") as fh:
            return cls(pickle.load(fh))  # the user's own Eva checkout's file

    def colocation(self, names: Sequence[str]) -> Colocation:
        """The jobs of workload classes `names` (a class the table lacks: never slowed)."""
        workload = np.array([self.index.get(x, -1) for x in names], dtype=np.int64)
        return Colocation(workload, self.speed, self.groups)


def colocation(contention: ContentionTable | None, names: Sequence[str]) -> Colocation | None:
    """The jobs of workload classes `names` with the speeds of Eva's contention table
    (`ContentionTable`); None without a table."""
    return None if contention is None else contention.colocation(names)


def migration_time(job: Any, tasks: Mapping[int, Any]) -> float:
    """The seconds of work a move costs job `job` in Eva's simulator as its master counts them
    (`Job.get_migration_cost`'s time): its tasks' largest fetch + build + upload delays and its
    own init delay."""
    return float(
        max(
            tasks[t].fetch_delay + tasks[t].build_delay + tasks[t].upload_delay
            for t in job.task_ids
        )
        + job.init_delay
    )


def cheapest_fit(task: Any, instance_types: Mapping[Any, Any]) -> Any:
    """The id of the cheapest instance type that holds `task` alone (Eva's No-Packing rule)."""
    best = None
    for it_id, it in instance_types.items():
        demand = task.demand_dict.get(it.family)
        if demand is None or np.any(np.asarray(demand) > np.asarray(it.capacity)):
            continue
        if best is None or it.cost < instance_types[best].cost:
            best = it_id
    if best is None:
        raise InputError(None, f"task {task.id}", "no instance type of Eva's catalog holds it")
    return best


class EvaRound:
    """One scheduling round of Eva's master as gpuaas sees it: the GPU jobs as an `Instance`
    (`instance`), and the way back to Eva's planned config (`plan`)."""

    def __init__(
        self,
        *,
        catalog: Catalog,
        jobs: Mapping[int, Any],
        tasks: Mapping[int, Any],
        instances: Mapping[int, Any],
        instance_types: Mapping[Any, Any],
        unfinished: Sequence[int],
        current_config: Mapping[Any, list[int]],
        time: float,
        interval: float,
        due_factor: float,
        weight: float,
        overhead: float,
        startup: float,
        contention_map: ContentionTable | None = None,
    ) -> None:
        self.catalog, self.jobs, self.tasks = catalog, jobs, tasks
        self.instances, self.instance_types = instances, instance_types
        families = {it.family for it in instance_types.values() if it.capacity[0] > 0}
        self.gpu_jobs, self.cpu_jobs, self.demand = [], [], {}
        for jid in sorted(unfinished):
            job = jobs[jid]
            if len(job.task_ids) != 1:
                raise InputError(
                    None, f"job {jid}", "has several tasks: the gpuaas scheduler runs one-task jobs"
                )
            found = gpu_demand(tasks[job.task_ids[0]], families)
            if found is None:
                self.cpu_jobs.append(jid)
            else:
                self.gpu_jobs.append(jid)
                self.demand[jid] = found
        vm_of = {name: v for v, name in enumerate(catalog.vm_names)}
        self.vm_of = vm_of
        # nodes: the GPU instances of the current config, and those migrating jobs go to
        phys = {i for i in current_config if instances[i].instance_type_name in vm_of}
        for jid in self.gpu_jobs:
            if not jobs[jid].is_reconfigurable():
                committed = tasks[jobs[jid].task_ids[0]].committed_instance_id
                if committed is not None:
                    phys.add(committed)
        self.phys = sorted(phys)
        K, J = len(self.phys), len(self.gpu_jobs)
        self.old_vm = np.full(K + J, -1, dtype=np.int64)
        for p, iid in enumerate(self.phys):
            self.old_vm[p] = vm_of[instances[iid].instance_type_name]
        C = catalog.n_configs
        work = np.full((J, C), np.inf)
        progress, release, due = np.zeros(J), np.zeros(J), np.zeros(J)
        cpus, memory = np.zeros(J), np.zeros(J)
        cur_node, cur_cfg = np.full(J, -1), np.full(J, -1)
        pinned = np.zeros(J, dtype=bool)
        index = {iid: p for p, iid in enumerate(self.phys)}
        for k, jid in enumerate(self.gpu_jobs):
            job, task = jobs[jid], tasks[jobs[jid].task_ids[0]]
            family, (g, c, m) = self.demand[jid]
            work[k] = duration_work(catalog, int(g), float(job.duration), FAMILY_GPU[family])
            cpus[k], memory[k] = c * VCPUS_PER_CPU, m
            done = float(np.sum(task.observed_throughputs)) * interval / float(job.total_iters)
            progress[k] = min(done, MAX_PROGRESS)
            release[k] = min(float(job.arrival_time), time)
            due[k] = float(job.arrival_time) + due_factor * float(job.duration)
            where = task.committed_instance_id
            if where in index:
                cur_node[k] = index[where]
                cur_cfg[k] = catalog.config(int(self.old_vm[index[where]]), int(g))
                pinned[k] = not job.is_reconfigurable()
        # a move costs each job its own migration time (Eva's master's figure); the scalar
        # `overhead` (the keep rules' and the spot rules') is their mean over the running jobs
        # (over all of them if none runs)
        own = np.array([migration_time(jobs[j], tasks) for j in self.gpu_jobs])
        running = cur_node >= 0
        if own.size:
            overhead = float(own[running].mean() if running.any() else own.mean())
        self.instance = Instance(
            catalog=catalog,
            nodes=max(K + J, 1),
            job_ids=tuple(str(j) for j in self.gpu_jobs),
            release=release,
            due=due,
            weight=np.full(J, weight / 3600.0),
            work=work,
            progress=progress,
            time=time,
            overhead=overhead,
            startup=startup,
            current_node=cur_node,
            current_cfg=cur_cfg,
            pinned=pinned,
            H=interval,
            cpus=cpus,
            memory=memory,
            move_loss=own,
        )
        self.colocation = None
        if contention_map is not None:
            names = [workload_name(jobs[j], tasks[jobs[j].task_ids[0]]) for j in self.gpu_jobs]
            self.colocation = colocation(contention_map, names)
        self.current_config = current_config
        self.time = time
        self.kept_postponed = 0  # running jobs the plan postponed, kept running (class docstring)

    def plan(self, sol: Any, new_id: Any) -> dict[Any, list[int]]:
        """Eva's planned config of solution `sol` of `instance`: {instance id or (new id,
        instance type id): task ids}; `new_id()` gives the negative ids of new instances."""
        inst, cat = self.instance, self.catalog
        check_solution(sol)
        fixed = np.unique(inst.current_node[inst.pinned])
        perm = match_nodes(
            self.old_vm,
            sol.node_vm,
            inst.current_node,
            inst.current_cfg,
            sol.job_node,
            sol.job_cfg,
            fixed=fixed,
        )
        it_of = {it.name: it_id for it_id, it in self.instance_types.items()}
        K = len(self.phys)
        key_of: dict[int, Any] = {}
        for s in np.flatnonzero(sol.node_vm >= 0).tolist():
            p, v = int(perm[s]), int(sol.node_vm[s])
            if p < K and self.old_vm[p] == v:
                key_of[s] = self.phys[p]
            else:
                key_of[s] = (new_id(), it_of[cat.vm_names[v]])
        planned: dict[Any, list[int]] = {key: [] for key in key_of.values()}
        postponed = []
        for k, jid in enumerate(self.gpu_jobs):
            task_id = self.jobs[jid].task_ids[0]
            s = int(sol.job_node[k])
            if s >= 0:
                planned[key_of[s]].append(task_id)
            elif inst.current_node[k] >= 0:
                postponed.append(k)
        for k in postponed:  # Eva cannot send a running job back to the queue: it stays
            task_id = self.jobs[self.gpu_jobs[k]].task_ids[0]
            here = self.phys[int(inst.current_node[k])]
            if here not in planned:
                planned[here] = [task_id]
            elif self._fits(planned[here] + [task_id], here):
                planned[here].append(task_id)
            else:
                planned[(new_id(), cheapest_fit(self.tasks[task_id], self.instance_types))] = [
                    task_id
                ]
            self.kept_postponed += 1
        for jid in self.cpu_jobs:  # CPU-only: alone on the cheapest type that holds it, kept
            task_id = self.jobs[jid].task_ids[0]
            where = self.tasks[task_id].committed_instance_id
            if where is not None and where in self.current_config:
                planned.setdefault(where, []).append(task_id)
            elif where is not None and not self.jobs[jid].is_reconfigurable():
                planned.setdefault(where, []).append(task_id)
            else:
                it_id = cheapest_fit(self.tasks[task_id], self.instance_types)
                planned[(new_id(), it_id)] = [task_id]
        for key, task_ids in planned.items():
            if not self._fits(task_ids, key):
                raise AssertionError(f"planned instance {key} overfull: {task_ids}")
        return {key: ids for key, ids in planned.items() if ids}

    def _fits(self, task_ids: list[int], key: Any) -> bool:
        """Whether the tasks fit the capacity of instance `key` (an id or (new id, type id))."""
        it_id = key[1] if isinstance(key, tuple) else self.instances[key].instance_type_id
        it = self.instance_types[it_id]
        used = np.zeros(len(it.capacity))
        for t in task_ids:
            used = used + np.asarray(self.tasks[t].demand_dict[it.family], dtype=float)
        return bool(np.all(used <= np.asarray(it.capacity)))


class GpuaasScheduler:
    """gpuaas's default method as a scheduler of Eva's master (the interface of its
    ``master.scheduler`` classes: ``generate_planned_config``, ``get_report``)."""

    def __init__(
        self,
        *,
        interval: float = 300.0,
        due_factor: float = DUE_FACTOR,
        weight: float = WEIGHT,
        overhead: float = 0.0,
        startup: float = 0.0,
        method: str = methods.DEFAULT_METHOD,
        seed: int = 1,
        options: Mapping[str, Any] | None = None,
        contention_table: str | None = None,
    ) -> None:
        self.interval, self.due_factor, self.weight = interval, due_factor, weight
        self.overhead, self.startup, self.method, self.seed = overhead, startup, method, seed
        self.options = dict(options or {})
        self.contention = ContentionTable.load(contention_table) if contention_table else None
        self.catalog: Catalog | None = None
        self._next = -1
        self.stats = {"rounds": 0, "solver_seconds": 0.0, "kept_postponed": 0}

    def _new_id(self) -> int:
        self._next -= 1
        return self._next

    def get_report(self) -> dict[str, Any]:
        return dict(self.stats)

    def generate_planned_config(
        self,
        jobs,
        tasks,
        instances,
        instance_types,
        contention_map,
        up_instance_ids,
        unfinished_job_ids,
        current_config,
        time,
        event_occurred,
        real_reconfig=True,
    ):
        if not real_reconfig:  # Eva's master sizing one arriving job's migration cost
            return {
                (self._new_id(), cheapest_fit(tasks[t], instance_types)): [t]
                for jid in unfinished_job_ids
                for t in jobs[jid].task_ids
            }
        if self.catalog is None:
            self.catalog = eva_catalog(types_by_name(instance_types), "Eva's master")
        rnd = EvaRound(
            catalog=self.catalog,
            jobs=jobs,
            tasks=tasks,
            instances=instances,
            instance_types=instance_types,
            unfinished=list(unfinished_job_ids),
            current_config=current_config,
            time=float(time),
            interval=self.interval,
            due_factor=self.due_factor,
            weight=self.weight,
            overhead=self.overhead,
            startup=self.startup,
            contention_map=self.contention,
        )
        if not rnd.gpu_jobs and not rnd.cpu_jobs:
            return {}
        start = _clock()
        if rnd.gpu_jobs:
            seed = self.seed + self.stats["rounds"]
            options = dict(self.options)
            if rnd.colocation is not None:
                options["colocation"] = rnd.colocation
            sol = methods.solve(rnd.instance, self.method, seed=seed, **options)
        else:
            sol = _empty(rnd.instance)
        self.stats["solver_seconds"] += _clock() - start
        self.stats["rounds"] += 1
        planned = rnd.plan(sol, self._new_id)
        self.stats["kept_postponed"] += rnd.kept_postponed
        return planned


def _clock() -> float:
    return time.perf_counter()


def _empty(inst: Instance) -> Solution:
    return Solution.empty(inst, "none")


# -- running Eva's simulator -----------------------------------------------------------------


def move_costs(src: Path) -> tuple[float, float]:
    """(startup, overhead) s from Eva's files: its largest GPU-type start-up (instantiate +
    run worker + register) and its trace's largest init_delay + fetch + build delays."""
    types = json.loads((src / SIM_TYPES).read_text())["instance_types"]
    startup = max(sum(it[d] for d in START_DELAYS) for it in types.values() if it["capacity"][0])
    trace = json.loads((src / TRACE).read_text())
    overhead = max(
        job["init_delay"] + max(sum(t[d] for d in MOVE_DELAYS) for t in job["tasks"].values())
        for job in trace.values()
    )
    return float(startup), float(overhead)


def child(src: Path, label: str, work: Path, args: dict[str, Any]) -> None:
    """Run one scheduler in Eva's simulator in this process (the parent's child process)."""
    os.chdir(src)
    sys.path.insert(0, str(src))
    import experiment_driver_200 as driver  # Eva's: its config, its ports
    import master.scheduler as registry  # Eva's scheduler registry

    class Scheduler(GpuaasScheduler):
        def generate_planned_config(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().generate_planned_config(*args, **kwargs)
            except BaseException:  # in Eva's scheduler thread: its simulator would wait forever
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(3)

    setattr(registry, GPUAAS_CLASS, Scheduler)
    used: set[int] = set()
    ports = {}
    for name in ("simulator_port", "event_receiver_port", "eva_port", "master_port", "worker_port"):
        ports[name] = driver.generate_port(used)
        used.add(ports[name])
    cls = GPUAAS_CLASS if label.startswith(GPUAAS) else EVA_SCHEDULERS[label]
    config = driver.generate_config(cls, TRACE, str(work / "report.json"), ports)
    if cls == GPUAAS_CLASS:
        args = dict(args)
        table = str(src / CONTENTION_MAP) if args.pop("contention", True) else None
        config["scheduler"]["args"] = {
            "interval": config["scheduling_interval"],
            "contention_table": table,
            **args,
        }
    (work / "config.json").write_text(json.dumps(config, indent=1))
    import eva_simulate

    sys.argv = ["eva_simulate.py", "--config-path", str(work / "config.json"), "--logging"]
    eva_simulate.main()


def run_one(src: Path, python: str, label: str, work: Path, args: dict[str, Any]) -> dict[str, Any]:
    """One scheduler's simulation in a child process: its cost, JCT and time."""
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [python, str(Path(__file__).resolve()), "--child", label, "--eva", str(src.parent)]
    cmd += ["--work", str(work), "--child-args", json.dumps(args)]
    for attempt in range(1 + RETRIES):
        start = time.time()
        with open(work / "log.txt", "w") as log:
            done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        seconds = time.time() - start
        text = (work / "log.txt").read_text()
        costs = COST_LINE.findall(text)
        if done.returncode == 0 or not REFUSED.search(text) or attempt == RETRIES:
            break
        print(f"eva_setting: {label}: {REFUSED.pattern} (Eva's RPC); again", file=sys.stderr)
    if done.returncode != 0 or not costs:
        tail = " | ".join(text.strip().splitlines()[-3:])
        raise InputError(str(work / "log.txt"), None, f"{label}'s simulation failed: {tail}")
    report = json.loads((work / "report.json").read_text())
    out = summarize(report, float(costs[-1]))
    if label.startswith(GPUAAS):  # its counters (Eva's schedulers report their whole history)
        out["scheduler"] = report["scheduler"]
    return {**out, "seconds": round(seconds, 1)}


def summarize(report: Mapping[str, Any], cost: float) -> dict[str, Any]:
    """Cost and JCT (h: end - arrival of every job) of Eva's report; every job must finish."""
    jobs = report["jobs"].values()
    jct = [
        (j["end_timestamp"] - j["arrival_time"]) / 3600.0
        for j in jobs
        if j["history"] and j["history"][-1]["status"] == "FINISHED"
    ]
    if len(jct) != len(jobs):
        raise InputError(None, "report", f"{len(jobs) - len(jct)} jobs did not finish")
    out = {
        "cost": round(cost, 2),
        "jct_mean_h": round(float(np.mean(jct)), 3),
        "jct_p95_h": round(float(np.percentile(jct, 95)), 2),
        "jobs": len(jct),
    }
    return out


def ensure_contention_map(src: Path, python: str) -> None:
    """Rebuild Eva's contention table by its own generator (PYTHONHASHSEED=0) if missing."""
    if (src / CONTENTION_MAP).exists():
        return
    print(f"eva_setting: {CONTENTION_MAP} missing; rebuilding it (a few minutes)", file=sys.stderr)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    gen = src / CONTENTION_GENERATOR
    done = subprocess.run([python, gen.name], cwd=gen.parent, env=env, capture_output=True)
    if done.returncode != 0 or not (src / CONTENTION_MAP).exists():
        raise InputError(str(gen), None, "could not rebuild the contention table")


def parse_weights(text: str | None) -> list[float]:
    if not text:
        return []
    try:
        ws = [float(x) for x in text.split(",")]
    except ValueError:
        raise InputError(
            None, "--weights", f"must be numbers separated by commas, got {text!r}"
        ) from None
    if any(not (math.isfinite(w) and w >= 0) for w in ws):
        raise InputError(None, "--weights", f"must be finite $/h >= 0, got {text!r}")
    return ws


def parse_variant(text: str) -> dict[str, Any]:
    """``KEY=VALUE[,KEY=VALUE]`` -> options of the default method (values as JSON scalars),
    checked by the method on a one-job instance."""
    options: dict[str, Any] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise InputError(None, "--variant", f"must be KEY=VALUE[,KEY=VALUE], got {text!r}")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    methods.check_options(methods.DEFAULT_METHOD, options, time_limit=False)
    methods.check_option_values(methods.DEFAULT_METHOD, options)
    return options


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eva", required=True, help="the user's checkout of uw-mad-dash/Eva")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument(
        "--schedulers",
        default=",".join([*EVA_SCHEDULERS, GPUAAS]),
        help="which to run (default: all six)",
    )
    ap.add_argument(
        "--due-factor",
        type=float,
        default=DUE_FACTOR,
        help="due date = arrival + this x the job's standalone duration",
    )
    ap.add_argument("--weight", type=float, default=WEIGHT, help="$ per hour late (gpuaas)")
    ap.add_argument("--weights", help="also run gpuaas at each of these weights ($/h, commas)")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="also run gpuaas with these options of its method (KEY=VALUE[,KEY=VALUE])",
    )
    ap.add_argument(
        "--no-colocation",
        action="store_true",
        help="gpuaas plans without Eva's contention table (what ignoring slowdown costs)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", help="write the JSON results to this file")
    ap.add_argument("--plot", help="the cost / mean-JCT curve (PNG, SVG or PDF)")
    ap.add_argument("--work", help="keep each run's config, log and report here")
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter with Eva's and gpuaas's requirements"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-args", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        src = Path(args.eva).expanduser().resolve() / "src"
        if args.child:
            child(src, args.child, Path(args.work), json.loads(args.child_args))
            return 0
        if not (src / "eva_simulate.py").is_file() or not (src / TRACE).is_file():
            raise InputError(
                args.eva, None, f"not a checkout of Eva: no src/eva_simulate.py, src/{TRACE}"
            )
        labels = [s.strip() for s in args.schedulers.split(",") if s.strip()]
        for s in labels:
            if s not in EVA_SCHEDULERS and s != GPUAAS:
                raise InputError(
                    None,
                    "--schedulers",
                    f"unknown {s!r}; known: {', '.join([*EVA_SCHEDULERS, GPUAAS])}",
                )
        for name, value in (("--due-factor", args.due_factor), ("--weight", args.weight)):
            if not (math.isfinite(value) and value >= 0):
                raise InputError(None, name, f"must be finite and >= 0, got {value}")
        sweep = parse_weights(args.weights)
        variants = [parse_variant(text) for text in args.variant]
        if args.output:
            check_output(args.output)
        if args.plot:
            from gpuaas.plots import check_plot_output

            check_plot_output(args.plot)
        ensure_contention_map(src, args.python)
        startup, overhead = move_costs(src)
        base = {
            "due_factor": args.due_factor,
            "overhead": overhead,
            "startup": startup,
            "seed": args.seed,
            "contention": not args.no_colocation,
        }
        runs = [(s, {**base, "weight": args.weight}) for s in labels]
        runs += [(f"{GPUAAS} w={w:g}", {**base, "weight": w}) for w in sweep]
        runs += [
            (f"{GPUAAS} {text}", {**base, "weight": args.weight, "options": opts})
            for text, opts in zip(args.variant, variants)
        ]
        results: dict[str, Any] = {}
        with tempfile.TemporaryDirectory(prefix="eva_setting") as tmp:
            root = Path(args.work) if args.work else Path(tmp)
            for label, extra in runs:
                print(f"eva_setting: running {label}", file=sys.stderr, flush=True)
                results[label] = run_one(
                    src, args.python, label, root / label.replace(" ", "_"), extra
                )
                if label.startswith(GPUAAS):
                    results[label]["weight"] = extra["weight"]
                    results[label]["due_factor"] = extra["due_factor"]
                    results[label]["colocation"] = extra["contention"]
                    if extra.get("options"):
                        results[label]["options"] = extra["options"]
        if args.plot:
            from gpuaas.plots import plot_cost_jct

            plot_cost_jct(results, args.plot)
        if args.output:
            with open_output(args.output) as fh:
                fh.write(json.dumps(results, indent=1) + "\n")
        if args.json:
            print(json.dumps(results, indent=1))
        else:
            for label, r in results.items():
                print(
                    f"{label:14s} {r['cost']:10.0f} $  mean JCT {r['jct_mean_h']:6.2f} h  p95 {r['jct_p95_h']:6.1f} h"
                )
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
