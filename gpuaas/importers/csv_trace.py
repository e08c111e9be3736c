"""A plain CSV trace anyone can write from their scheduler's logs.

UTF-8, comma-separated, a header line naming the columns (any order), one job per line; lines
starting with ``#`` are comments (after the header the summary counts them as rows commented
out; quote a job id that starts with ``#``: ``"#7"``); an empty cell is an absent value.

| column | required | meaning |
|---|---|---|
| ``id`` | yes | unique job id |
| ``submit`` | yes | submission time, seconds (>= 0) |
| ``gpus`` | yes | GPUs requested (integer >= 1) |
| ``model`` | one of | model name of the throughput table, with ``steps`` or ``epochs`` and ``steps_per_epoch`` |
| ``steps``, ``epochs``, ``steps_per_epoch`` | with ``model`` | amount of work: steps, or epochs x steps per epoch |
| ``duration`` | one of | measured run time (s, > 0) on ``gpus`` GPUs of model ``gpu`` |
| ``gpu`` | no | GPU model the duration was measured on (needed for a duration job unless ``--any-gpu``) |
| ``due`` | no | absolute due date (s, same clock as ``submit``, not before it) |
| ``weight`` | no | tardiness weight ω ($/s, >= 0) |
"""

from __future__ import annotations

import math

from gpuaas.errors import InputError
from gpuaas.importers.csv_table import csv_rows
from gpuaas.importers.records import ImportReport, TraceJob
from gpuaas.throughputs import parse_float, parse_int

REQUIRED = ("id", "submit", "gpus")
OPTIONAL = ("model", "steps", "epochs", "steps_per_epoch", "duration", "gpu", "due", "weight")


def read_csv_trace(path: str) -> tuple[list[TraceJob], ImportReport]:
    """The jobs of a CSV trace (module docstring)."""
    source = str(path)
    report = ImportReport(source, 0, 0, 0, 0.0)
    jobs: list[TraceJob] = []
    seen: dict[str, int] = {}
    for n, cells in csv_rows(path, REQUIRED, OPTIONAL, report):
        at = f"line {n}"
        row = {k: v for k, v in cells.items() if v}
        for col in REQUIRED:
            if col not in row:
                raise InputError(source, f"{at}: {col}", "missing required value")
        jid = row["id"]
        if jid in seen:
            raise InputError(
                source, f"{at}: id", f"duplicate job id {jid!r} (first on line {seen[jid]})"
            )
        seen[jid] = n
        job = TraceJob(
            id=jid,
            line=n,
            submit=parse_float(row["submit"], source, f"{at}: submit", minimum=0.0),
            gpus=parse_int(row["gpus"], source, f"{at}: gpus", minimum=1),
        )
        if "model" in row and "duration" in row:
            raise InputError(source, at, "give model (with steps) or duration, not both")
        if "model" in row:
            job.model = row["model"]
            if "steps" in row:
                if "epochs" in row or "steps_per_epoch" in row:
                    raise InputError(source, at, "give steps or epochs x steps_per_epoch, not both")
                job.steps = parse_float(row["steps"], source, f"{at}: steps", positive=True)
            elif "epochs" in row and "steps_per_epoch" in row:
                epochs = parse_float(row["epochs"], source, f"{at}: epochs", positive=True)
                per = parse_float(
                    row["steps_per_epoch"], source, f"{at}: steps_per_epoch", positive=True
                )
                job.steps, job.work_column = epochs * per, "epochs x steps_per_epoch"
                if not math.isfinite(job.steps):
                    raise InputError(
                        source,
                        f"{at}: {job.work_column}",
                        f"{epochs:g} x {per:g} steps is beyond the floating-point numbers",
                    )
            else:
                raise InputError(
                    source,
                    f"{at}: steps",
                    "a model job needs steps (or epochs and steps_per_epoch)",
                )
        elif "duration" in row:
            job.duration = parse_float(row["duration"], source, f"{at}: duration", positive=True)
            job.gpu = row.get("gpu")
        else:
            raise InputError(source, at, "needs a model (with steps) or a duration")
        if "due" in row:
            job.due = parse_float(row["due"], source, f"{at}: due")
            if job.due < job.submit:  # a due date relative to submit, or another clock
                raise InputError(
                    source,
                    f"{at}: due",
                    f"is before submit ({job.due:g} < {job.submit:g}); due is an absolute time "
                    "on the submit clock",
                )
        if "weight" in row:
            job.weight = parse_float(row["weight"], source, f"{at}: weight", minimum=0.0)
        jobs.append(job)
    return jobs, report
