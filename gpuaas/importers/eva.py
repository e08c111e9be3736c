"""Eva's job traces and EC2 catalogs (Eva, EuroSys '25, ``uw-mad-dash/Eva``; read from the
user's checkout: the repository has no license, so nothing of it is shipped here).

**Trace** (e.g. ``src/pai_trace/traces/pai_200.json``): one JSON object, job key -> job::

    {"name": "resnet18[0]", "arrival_time": 960, "duration": 12430, "init_delay": 80,
     "full_throughput": 2.1, "total_iters": 26103, "support_throughput_aware": true,
     "tasks": {"0": {"name": "node0", "demand": {"any": [1, 12, 16]}, "shm_size": 4, ...}}}

A task's demand is ``[GPUs, CPU cores, memory GB]`` on any instance family (``"any"``) or on one
named family (``"p3"``). Mapped: the job key -> id, arrival_time (s) -> submit, duration (s:
total_iters / full_throughput, the job alone on its VM) -> its run time on exactly its GPUs (the
tasks' GPUs summed) of the GPU model its family holds (`FAMILY_GPU`; ``"any"``: the format's
``--measured-on``, V100, the GPU of Eva's p3 instances), the workload name before ``[`` and its first task's name -> the job's workload name
(``resnet18_node0``: Eva's contention table's key); the tasks' CPUs x `VCPUS_PER_CPU` -> cpus (Eva counts a CPU as a core of
two vCPUs: its p3.2xlarge has 4, AWS's 8 vCPUs) and their memory (GB, as AWS's GiB) -> memory,
which gpuaas holds the job to (docs/design.md). A job of several tasks (Eva gang-schedules
tasks on separate instances) runs on one VM with the tasks' demands summed (counted as
changed). A **CPU-only job** (no task demands a GPU) runs its duration on every CPU type
(c7i, r7i: GPU-less types, docs/design.md "CPU-only jobs") that holds its CPUs and memory,
never on a GPU type (gpuaas's choice: Eva may place one there, paying the GPU VM's price).
Ignored: init_delay
(Eva's per-start set-up; gpuaas charges ``--overhead`` per move instead), the image, fetch,
kill and upload delays, shm_size. Due dates and weights are not in the trace: drawn by the
paper's rules.

**Co-location slowdown** (``--colocation``: Eva's
``src/simulation/contention_map/contention_matrix.csv``, read from the user's checkout, never
shipped): a CSV whose header names the workloads (its first cell empty) and each row a
workload and its throughput beside each column's, as a share of its throughput alone;
``x`` (not measured) is `UNMEASURED`, the value Eva's own generator
(``generate_contention_map.py``) gives such a pair. It becomes the trace's ``colocation``
table (`gpuaas.colocation`), which gpuaas's simulator runs the jobs at. Eva's simulator reads
the pickle that generator writes from this CSV, whose two speeds of a pair can come out
swapped (it sorts a pair's names without its values; which pairs depends on the hash seed);
the CSV is the measurement.

**Catalog** (``src/simulation/config/ec2_config.json``): ``{"region": ..., "instance_types":
{name: {"capacity": [GPUs, CPU cores, memory GB], "cost": $/hour, "family": ...}}}``. Its
instance types with GPUs become a gpuaas catalog (GPU model by family, `FAMILY_GPU`; vcpus =
CPUs x `VCPUS_PER_CPU`, memory as given), its CPU types (c7i, r7i) GPU-less types (0 GPUs,
no GPU model) with their vCPUs and memory, whose one configuration runs CPU-only jobs.
"""

from __future__ import annotations

import json
from typing import Any

from gpuaas import checks
from gpuaas.catalog import Catalog
from gpuaas.colocation import parse_table
from gpuaas.errors import InputError, brief
from gpuaas.files import csv_fields, read_json, read_text
from gpuaas.importers.records import ImportReport, TraceJob
from gpuaas.limits import MAX_ID, MAX_MEMORY, MAX_VCPUS

#: GPU model of each AWS GPU instance family (AWS's instance-type pages); Eva's config names
#: the family, not the GPU.
FAMILY_GPU = {
    "p2": "K80",
    "p3": "V100",
    "p4d": "A100",
    "p5": "H100",
    "g4dn": "T4",
    "g5": "A10G",
    "g6": "L4",
}
#: GPU model of a job demanding ``"any"`` family: the GPU of Eva's GPU instances (p3)
MEASURED_ON = "V100"
#: vCPUs of one of Eva's CPUs: its configs give a p3.2xlarge 4 CPUs, a c7i.large 1 (AWS: 8, 2)
VCPUS_PER_CPU = 2
#: the speed Eva's contention-map generator gives a pair its CSV marks ``x`` (not measured)
UNMEASURED = 0.95
GANG = "tasks placed on one VM, demands summed"


def read_eva(path: str) -> tuple[list[TraceJob], ImportReport]:
    """The jobs of an Eva trace JSON (module docstring), GPU and CPU-only."""
    source = str(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(source, None, f"must be an object of jobs by key, got {brief(data)}")
    lines = _key_lines(read_text(path, "JSON"))
    report = ImportReport(source, len(data), 0, 0, 0.0)
    jobs = []
    for key, job in data.items():
        line = lines.get(key, 0)
        at = f"line {line}: job {key!r}"
        _require(source, at, ": ", job, ("arrival_time", "duration", "tasks"))
        submit = checks.number(job["arrival_time"], f"{at}: arrival_time", source, minimum=0.0)
        duration = checks.number(job["duration"], f"{at}: duration", source, positive=True)
        tasks = job["tasks"]
        if not isinstance(tasks, dict) or not tasks:
            raise InputError(
                source, f"{at}: tasks", f"must be a non-empty object, got {brief(tasks)}"
            )
        gpus, cpus, memory, families, names = 0, 0.0, 0.0, set(), []
        for tkey, task in tasks.items():
            g, c, m, family = _task_demand(task, source, f"{at}: tasks.{tkey}.demand")
            gpus, cpus, memory = gpus + g, cpus + c, memory + m
            families.add(family)
            if isinstance(task, dict) and isinstance(task.get("name"), str):
                names.append(task["name"])
        gpu_families = {f for f in families if f != "any"}
        if len({FAMILY_GPU[f] for f in gpu_families}) > 1:
            raise InputError(
                source,
                f"{at}: tasks",
                f"its tasks name families of different GPUs: {sorted(gpu_families)}",
            )
        jobs.append(
            TraceJob(
                id=str(key),
                submit=submit,
                gpus=gpus,
                line=line,
                duration=duration,
                gpu=FAMILY_GPU[gpu_families.pop()] if gpu_families else None,
                changed=GANG if len(tasks) > 1 else None,
                work_column="duration",
                cpus=cpus * VCPUS_PER_CPU,
                memory=memory,
                workload=_workload(job.get("name"), names),
            )
        )
    return jobs, report


def _workload(name: Any, tasks: list[str]) -> str | None:
    """A job's workload name as Eva's contention table keys it: its name before ``[``, then
    its first task's name (``resnet18_node0``); None without both."""
    if not isinstance(name, str) or not name.split("[")[0] or not tasks or not tasks[0]:
        return None
    return f"{name.split('[')[0]}_{tasks[0]}"[:MAX_ID]


def read_eva_contention(path: str) -> dict[str, dict[str, float]]:
    """Eva's contention CSV (module docstring) as a co-location table by workload name."""
    source = str(path)
    lines = read_text(path, "CSV").splitlines()
    rows = [(k, csv_fields(line, source, f"line {k}")) for k, line in enumerate(lines, 1)]
    rows = [(k, r) for k, r in rows if any(x.strip() for x in r)]
    if len(rows) < 2:
        raise InputError(source, None, "must have a header of workloads and a row per workload")
    header = [x.strip() for x in rows[0][1]]
    table: dict[str, dict[str, float]] = {}
    for k, row in rows[1:]:
        if len(row) != len(header):
            raise InputError(
                source, f"line {k}", f"has {len(row)} fields, the header {len(header)}"
            )
        name = row[0].strip()
        out = table.setdefault(name, {})
        for col, cell in zip(header[1:], row[1:]):
            cell = cell.strip()
            if cell == "x":
                out[col] = UNMEASURED
                continue
            try:
                out[col] = float(cell)
            except ValueError:
                raise InputError(
                    source,
                    f"line {k}: {col}",
                    f"must be a throughput share or x (not measured), got {brief(cell)}",
                ) from None
    return parse_table(table, source, "contention")


def _task_demand(task: Any, source: str, at: str) -> tuple[int, float, float, str]:
    """(GPUs, CPUs, memory, family or "any") of one task's demand ``{family: [GPUs, CPUs,
    memory]}``."""
    demand = task.get("demand") if isinstance(task, dict) else None
    if not isinstance(demand, dict) or len(demand) != 1:
        raise InputError(
            source,
            at,
            f'must be one {{"any" or family: [GPUs, CPUs, memory]}}, got {brief(demand)}',
        )
    ((family, value),) = demand.items()
    if not isinstance(value, list) or len(value) != 3:
        raise InputError(source, at, f"must be [GPUs, CPUs, memory], got {brief(value)}")
    g = checks.integer(value[0], f"{at}: GPUs", source, minimum=0)
    cpus = checks.number(value[1], f"{at}: CPUs", source, minimum=0.0, maximum=MAX_VCPUS)
    memory = checks.number(value[2], f"{at}: memory", source, minimum=0.0, maximum=MAX_MEMORY)
    if g and family != "any" and family not in FAMILY_GPU:
        raise InputError(
            source,
            at,
            f"unknown GPU instance family {family!r}; known: any, {', '.join(FAMILY_GPU)}",
        )
    return g, cpus, memory, family if g else "any"


def _key_lines(text: str) -> dict[str, int]:
    """Line of each top-level key of the JSON object `text` (already known to be valid)."""
    decoder = json.JSONDecoder()
    lines: dict[str, int] = {}
    pos = text.index("{") + 1
    while True:
        while text[pos] in " \t\n,":
            pos += 1
        if text[pos] == "}":
            return lines
        key, end = decoder.raw_decode(text, pos)
        lines[key] = text.count("\n", 0, pos) + 1
        pos = end
        while text[pos] in " \t\n:":
            pos += 1
        _, pos = decoder.raw_decode(text, pos)


def _require(source: str, at: str, sep: str, value: object, names: tuple[str, ...]) -> None:
    """InputError unless `value` is an object holding every one of `names` (field `at`)."""
    if not isinstance(value, dict):
        raise InputError(source, at, f"must be an object, got {brief(value)}")
    for name in names:
        if name not in value:
            raise InputError(source, f"{at}{sep}{name}", "missing required value")


def read_eva_catalog(path: str) -> Catalog:
    """The instance types of Eva's EC2 config (module docstring) as a gpuaas catalog."""
    source = str(path)
    data = read_json(path)
    types = data.get("instance_types") if isinstance(data, dict) else None
    region = data.get("region") if isinstance(data, dict) else None
    return eva_catalog(types, source, region, gpu_less=True)


def eva_catalog(
    types: Any, source: str | None, region: Any = None, gpu_less: bool = False
) -> Catalog:
    """The GPU instance types of Eva's ``{name: {"capacity", "cost", "family"}}`` (its config's
    ``instance_types``, or its master's instance types at run time) as a gpuaas catalog, and
    with `gpu_less` its CPU types too (the importer's; `scripts/eva_setting.py` runs CPU-only
    jobs itself and hands gpuaas the GPU types alone)."""
    if not isinstance(types, dict) or not types:
        raise InputError(source, "instance_types", "must be a non-empty object of instance types")
    vms = []
    for name, it in types.items():
        at = f"instance_types.{name}"
        _require(source, at, ".", it, ("capacity", "cost", "family"))
        cap = it["capacity"]
        if not isinstance(cap, list) or len(cap) != 3:
            raise InputError(
                source, f"{at}.capacity", f"must be [GPUs, CPUs, memory], got {brief(cap)}"
            )
        gpus = checks.integer(cap[0], f"{at}.capacity: GPUs", source, minimum=0)
        cost = checks.number(it["cost"], f"{at}.cost", source, positive=True)
        if gpus == 0 and not gpu_less:
            continue  # a CPU instance, left out
        family = it["family"]
        if gpus and family not in FAMILY_GPU:
            raise InputError(
                source,
                f"{at}.family",
                f"unknown GPU instance family {family!r}; known: {', '.join(FAMILY_GPU)}",
            )
        vms.append(
            {
                "name": name,
                **({"gpu": FAMILY_GPU[family]} if gpus else {}),  # a CPU type: GPU-less
                "gpus": gpus,
                "cost_per_hour": cost,
                "vcpus": checks.integer(cap[1], f"{at}.capacity: CPUs", source, minimum=1)
                * VCPUS_PER_CPU,
                "memory": checks.number(cap[2], f"{at}.capacity: memory", source, positive=True),
            }
        )
    if not any(vm["gpus"] for vm in vms) and not gpu_less:
        raise InputError(source, "instance_types", "has no instance type with GPUs")
    info = {"provider": "AWS"}
    if isinstance(region, str) and region.strip():
        info["region"] = region
    return Catalog.from_dict({"name": "eva", **info, "vm_types": vms}, source)
