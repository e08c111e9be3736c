"""The Alibaba PAI GPU cluster trace of 2020 (``cluster-trace-gpu-v2020``): job and task tables.

The trace (github.com/alibaba/clusterdata, ``cluster-trace-gpu-v2020/README.md``) ships
headerless CSV tables; this reader takes the two it needs, ``pai_job_table.csv`` and
``pai_task_table.csv``: SRC is the directory that holds them, or the job table (the task table
is read from the same directory). A first line that starts with ``job_name`` is taken as a
header and skipped.

- job table: job_name, inst_id, user, status, start_time, end_time
- task table: job_name, task_name, inst_num, status, start_time, end_time, plan_cpu,
  plan_mem, plan_gpu, gpu_type

Mapped, per job: job_name -> id; the job's start_time (its submission: the README says the gap
to the earliest task start is the scheduling wait) -> submit time; run time = latest task
end_time - earliest task start_time -> duration; requested GPUs = ceil(sum over tasks of
inst_num x plan_gpu / 100) (plan_gpu is in percent of one GPU, so fractional requests round up
to whole GPUs); gpu_type of the task requesting the most GPUs -> the GPU model the duration was
measured on (``MISC``, older GPUs, matches no catalog: use ``--any-gpu``).
Assumed: the job needs its whole run time on that many GPUs of one VM. Dropped jobs (counted):
status other than Terminated (the README: only Terminated jobs succeeded), no task row, no GPU
requested (CPU-only), zero run time. Dropped columns: inst_id, user, task_name, plan_cpu,
plan_mem and the other tables (instances, sensors, machines, group tags).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from gpuaas.errors import InputError
from gpuaas.files import csv_fields, read_text
from gpuaas.importers.records import ImportReport, TraceJob
from gpuaas.limits import MAX_COUNT
from gpuaas.throughputs import parse_float

JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
TASK_COLUMNS = (
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
)
JOB_FILE, TASK_FILE = "pai_job_table.csv", "pai_task_table.csv"


def read_pai(src: str) -> tuple[list[TraceJob], ImportReport]:
    """The jobs of the PAI trace at `src` (a directory, or the job table file)."""
    path = Path(src)
    job_path = path / JOB_FILE if path.is_dir() else path
    task_path = job_path.parent / TASK_FILE
    if not path.is_dir() and not path.exists():
        raise InputError(str(src), None, "no such file or directory")
    tasks: dict[str, list[tuple[int, dict[str, str]]]] = {}
    for n, row in _rows(task_path, TASK_COLUMNS):
        tasks.setdefault(row["job_name"], []).append((n, row))
    jobs: list[TraceJob] = []
    report = ImportReport(str(job_path), 0, 0, 0, 0.0)
    tsrc = str(task_path)
    for n, row in _rows(job_path, JOB_COLUMNS):
        report.read += 1
        source, at = str(job_path), f"line {n}"
        if not row["job_name"]:
            raise InputError(source, f"{at}: job_name", "missing required value")
        if row["status"] != "Terminated":
            report.drop(f"status {row['status'] or 'empty'}")
            continue
        submit = _time(row, "start_time", source, at)
        _time(row, "end_time", source, at)
        mine = tasks.get(row["job_name"], [])
        if not mine:
            report.drop("without task rows")
            continue
        starts, ends, best = [], [], (0.0, "")
        total_gpu = 0.0
        for tn, task in mine:
            tat = f"line {tn}"
            start, end = _time(task, "start_time", tsrc, tat), _time(task, "end_time", tsrc, tat)
            if end < start:
                raise InputError(
                    tsrc,
                    f"{tat}: end_time",
                    f"is before start_time ({task['end_time']} < {task['start_time']})",
                )
            inst = parse_float(task["inst_num"] or "0", tsrc, f"{tat}: inst_num", minimum=0.0)
            plan = parse_float(task["plan_gpu"] or "0", tsrc, f"{tat}: plan_gpu", minimum=0.0)
            starts.append(start)
            ends.append(end)
            total_gpu += inst * plan / 100.0
            if not total_gpu <= MAX_COUNT:  # inf too: inst_num x plan_gpu overflowed
                raise InputError(
                    tsrc,
                    f"{tat}: inst_num x plan_gpu",
                    f"job {row['job_name']!r} asks for {total_gpu:.3g} GPUs, more than "
                    f"{MAX_COUNT:g} (gpuaas.limits)",
                )
            if inst * plan > best[0]:
                best = (inst * plan, task["gpu_type"])
        if total_gpu <= 0:
            report.drop("without GPUs (CPU-only)")
            continue
        duration = max(ends) - min(starts)
        if duration <= 0:
            report.drop("with zero run time")
            continue
        jobs.append(
            TraceJob(
                id=row["job_name"],
                submit=submit,
                gpus=max(1, math.ceil(total_gpu - 1e-9)),
                line=n,
                duration=duration,
                gpu=best[1] or None,
            )
        )
    return jobs, report


def _time(row: dict[str, str], key: str, source: str, at: str) -> float:
    if not row[key]:
        raise InputError(source, f"{at}: {key}", "missing required value")
    return parse_float(row[key], source, f"{at}: {key}", minimum=0.0)


def _rows(path: Path, columns: tuple[str, ...]):
    """(line number, {column: value}) of a headerless (or headed) PAI table."""
    source = str(path)
    if not os.path.exists(path):
        raise InputError(
            source,
            None,
            "no such file (the PAI importer needs pai_job_table.csv and "
            "pai_task_table.csv in one directory)",
        )
    text = read_text(path, "CSV")
    for n, line in enumerate(text.splitlines(), start=1):
        fields = csv_fields(line, source, f"line {n}")
        if not fields or (n == 1 and fields[0] == "job_name"):
            continue
        if len(fields) != len(columns):
            raise InputError(
                source,
                f"line {n}",
                f"has {len(fields)} field(s); expected {len(columns)}: {','.join(columns)}",
            )
        yield n, {c: v.strip() for c, v in zip(columns, fields)}
