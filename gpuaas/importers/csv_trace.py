"""A plain CSV trace anyone can write from their scheduler's logs.

UTF-8, comma-separated, a header line naming the columns (any order), one job per line; lines
starting with ``#`` are comments; an empty cell is an absent value.

| column | required | meaning |
|---|---|---|
| ``id`` | yes | unique job id |
| ``submit`` | yes | submission time, seconds (>= 0) |
| ``gpus`` | yes | GPUs requested (integer >= 1) |
| ``model`` | one of | model name of the throughput table, with ``steps`` or ``epochs`` and ``steps_per_epoch`` |
| ``steps``, ``epochs``, ``steps_per_epoch`` | with ``model`` | amount of work: steps, or epochs x steps per epoch |
| ``duration`` | one of | measured run time (s, > 0) on ``gpus`` GPUs of model ``gpu`` |
| ``gpu`` | no | GPU model the duration was measured on (needed for a duration job unless ``--any-gpu``) |
| ``due`` | no | absolute due date (s, same clock as ``submit``) |
| ``weight`` | no | tardiness weight ω ($/s, >= 0) |
"""

from __future__ import annotations

from gpuaas.errors import InputError
from gpuaas.files import csv_fields, read_text
from gpuaas.importers.records import ImportReport, TraceJob
from gpuaas.throughputs import parse_float, parse_int

REQUIRED = ("id", "submit", "gpus")
OPTIONAL = ("model", "steps", "epochs", "steps_per_epoch", "duration", "gpu", "due", "weight")


def read_csv_trace(path: str) -> tuple[list[TraceJob], ImportReport]:
    """The jobs of a CSV trace (module docstring)."""
    source = str(path)
    lines = [
        (n, line)
        for n, line in enumerate(read_text(path, "CSV").splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise InputError(source, None, f"empty trace; expected a header with {', '.join(REQUIRED)}")
    header_no, header = lines[0]
    names = [h.strip() for h in csv_fields(header, source, f"line {header_no}")]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise InputError(source, f"line {header_no}", f"missing column(s) {', '.join(missing)}")
    unknown = [c for c in names if c not in REQUIRED + OPTIONAL]
    if unknown:
        raise InputError(
            source,
            f"line {header_no}",
            f"unknown column(s) {', '.join(unknown)}; allowed: {', '.join(REQUIRED + OPTIONAL)}",
        )
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise InputError(source, f"line {header_no}", f"column(s) {', '.join(dup)} given twice")
    jobs: list[TraceJob] = []
    seen: dict[str, int] = {}
    for n, line in lines[1:]:
        at = f"line {n}"
        fields = csv_fields(line, source, at)
        if len(fields) != len(names):
            raise InputError(source, at, f"has {len(fields)} field(s), the header has {len(names)}")
        row = {k: v.strip() for k, v in zip(names, fields) if v.strip()}
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
                job.steps = parse_float(
                    row["epochs"], source, f"{at}: epochs", positive=True
                ) * parse_float(
                    row["steps_per_epoch"], source, f"{at}: steps_per_epoch", positive=True
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
        if "weight" in row:
            job.weight = parse_float(row["weight"], source, f"{at}: weight", minimum=0.0)
        jobs.append(job)
    return jobs, ImportReport(source, len(jobs), 0, 0, 0.0)
