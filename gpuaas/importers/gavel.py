"""Gavel's job traces: tab-separated ``.trace`` files, one job per line.

Gavel (Narayanan et al., OSDI 2020, github.com/stanford-futuredata/gavel) wrote three layouts
over its history, told apart here by the number of tab-separated fields (as its own
``scheduler/utils.py`` ``parse_trace`` read them):

- 10 fields (current): job type, command, working directory, num_steps_arg, needs_data_dir,
  total_steps, scale_factor, priority_weight, SLO, arrival_time;
- 9 fields (2020): the same without the working directory;
- 7 fields (2019, e.g. the Philly-derived ``traces/msr/*.trace``): job type, command,
  num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor; Gavel skipped lines
  with scale factor 0 and so does this reader (counted in the report).

Mapped: job type -> model (looked up in the throughput table, e.g. Gavel's
``simulation_throughputs.json``), total_steps -> steps, scale_factor -> requested GPUs,
arrival_time (s) -> submit time, SLO >= 0 -> due = release + SLO x the job's fastest time (Gavel
multiplies the SLO by its job duration). Dropped: command, working directory,
num_steps_arg, needs_data_dir, priority_weight (a fairness weight, not a tardiness cost).
Job ids are ``j<line number>``.
"""

from __future__ import annotations

from gpuaas.errors import InputError
from gpuaas.files import read_text
from gpuaas.importers.records import ImportReport, TraceJob
from gpuaas.throughputs import parse_float, parse_int

#: Field names of each layout, by field count.
LAYOUTS = {
    10: (
        "job_type",
        "command",
        "working_directory",
        "num_steps_arg",
        "needs_data_dir",
        "total_steps",
        "scale_factor",
        "priority_weight",
        "SLO",
        "arrival_time",
    ),
    9: (
        "job_type",
        "command",
        "num_steps_arg",
        "needs_data_dir",
        "total_steps",
        "scale_factor",
        "priority_weight",
        "SLO",
        "arrival_time",
    ),
    7: (
        "job_type",
        "command",
        "num_steps_arg",
        "needs_data_dir",
        "total_steps",
        "arrival_time",
        "scale_factor",
    ),
}


def read_gavel(path: str) -> tuple[list[TraceJob], ImportReport]:
    """The jobs of a Gavel ``.trace`` file."""
    source = str(path)
    jobs: list[TraceJob] = []
    report = ImportReport(source, 0, 0, 0, 0.0)
    for n, line in enumerate(read_text(path, "trace").splitlines(), start=1):
        if not line.strip():
            continue
        report.read += 1
        fields = line.split("\t")
        layout = LAYOUTS.get(len(fields))
        if layout is None:
            raise InputError(
                source,
                f"line {n}",
                f"has {len(fields)} tab-separated field(s); a Gavel "
                "trace line has 10 (or 9, or 7 in the 2019 layout)",
            )
        row = dict(zip(layout, fields))
        at = f"line {n}"
        model = row["job_type"].strip()
        if not model:
            raise InputError(source, f"{at}: job_type", "must be a non-empty job type")
        steps = parse_int(row["total_steps"], source, f"{at}: total_steps", minimum=1)
        arrival = parse_float(row["arrival_time"], source, f"{at}: arrival_time", minimum=0.0)
        if len(fields) == 7:
            scale = parse_int(row["scale_factor"], source, f"{at}: scale_factor", minimum=0)
            if scale == 0:
                report.drop("scale factor 0 (Gavel skips them too)")
                continue
        else:
            scale = parse_int(row["scale_factor"], source, f"{at}: scale_factor", minimum=1)
        slo = None
        if "SLO" in row:
            value = parse_float(row["SLO"], source, f"{at}: SLO")
            slo = value if value >= 0 else None  # Gavel: a negative SLO means none
            parse_float(row["priority_weight"], source, f"{at}: priority_weight", minimum=0.0)
        jobs.append(
            TraceJob(
                id=f"j{n}",
                submit=arrival,
                gpus=scale,
                line=n,
                model=model,
                steps=float(steps),
                due_factor=slo,
                work_column="total_steps",
            )
        )
    return jobs, report
