"""The row schema: one row per simulation, the same for every command that writes results.

`gpuaas campaign` and `gpuaas compare` write these rows (CSV or Parquet, columns in this
order); `gpuaas plot`, `gpuaas.experiments.analysis` and the report scripts read them. This
table is the schema's only description (`docs/experiments.md` explains the pipeline around it).

Parameters of the cell (what was simulated):

============================  ====  ===========================================================
column                        type  meaning
============================  ====  ===========================================================
cell                          str   the cell's key, unique in a results file (what resume matches)
trace                         str   the trace file of a cell over a given trace (`gpuaas compare`,
                                    a spec's ``traces``); empty for a generated trace
arrivals                      str   arrival pattern of a generated trace (§4.1); empty otherwise
nodes                         int   N of the trace
jobs                          int   J of the trace
trace_seed                    int   seed of a generated trace; empty otherwise
method                        str   registered method name (`gpuaas.methods`)
seed                          int   the method's seed (one per seed-independent method and trace)
node_multiplier               int   m: the simulation had m x N nodes (§4.5)
sim_nodes                     int   m x N
noise                         float mean absolute relative error of actual durations
overhead                      float seconds of work lost per migration or preemption
startup                       float seconds a VM opened or resized is billed before it works
options                       str   the method's options, canonical JSON
catalog                       str   VM catalog name
(setting)                           then one column per further run setting, named by its
                                    `Setting.column` (`gpuaas.run_config`): what it was; empty
                                    where it does not act (a spot setting without spot). The
                                    list, with each one's meaning: scripts/campaigns/README.md
============================  ====  ===========================================================

What the simulation measured (`gpuaas.simulate`; costs in $, times in s; the job metrics from
`late_jobs` to `max_waiting` are defined, with their tolerance and percentile method, in
`gpuaas.metrics`):

============================  ====  ===========================================================
status                        str   "ok", or "failed" (then `error` says why; metrics empty)
total_cost                    float VM + tardiness cost after every job completed
vm_cost, tardiness_cost       float its two parts
events                        int   rescheduling events
migrations, preemptions       int   jobs moved between nodes / stopped while running
moves_per_job                 float (migrations + preemptions) / jobs
max_job_moves                 int   the most migrations + preemptions of one job
lost_work_cost                float VM cost of the work lost to moves (overhead)
startup_cost                  float VM cost of start-up time billed before VMs work
jobs_completed                int   jobs that completed
late_jobs                     int   jobs that completed after their due date (by > 10^-6 s)
deadline_miss_rate            float late_jobs / jobs_completed
tardiness_p50                 float median over all jobs of max(0, completion - due)
tardiness_p95, tardiness_p99  float its 95th and 99th percentiles
lateness_of_late_p50          float median of completion - due over the late jobs only (empty
                                    when no job is late)
lateness_of_late_p95          float its 95th percentile
lateness_of_late_p99          float its 99th percentile
mean_jct                      float mean job completion time (completion - release)
jct_p50, jct_p95, jct_p99     float its median, 95th and 99th percentiles
max_jct                       float its maximum
mean_waiting                  float mean time between release and completion that a job does
                                    not run (queued, preempted, waiting for its VM to start)
waiting_p95, max_waiting      float its 95th percentile and maximum
makespan                      float completion of the last job
solver_calls                  int   calls of the method
tick                          float periodic rescheduling interval used
predicted_total_cost,         float with noise: the costs of the predicted durations
predicted_vm_cost,
predicted_tardiness_cost
cost_deviation                float with noise: relative difference actual / predicted
prediction_error              float with noise: mean |actual / predicted - 1| drawn, over the
                                    (job, configuration) pairs a job can run on
off_by_2x                     float with noise: their share off by 2x or more
error                         str   the exception of a failed cell
extra                         str   any other scalar of the simulation result, JSON
bound                         float `gpuaas.bound` of the trace on sim_nodes nodes (with spot:
                                    the spot-aware bound, formulations/BOUND.md)
cost_over_bound               float total_cost / bound (1: no schedule costs less)
upper                         float with the spec's `upper` (noise 0, no spot): `gpuaas.upper`
                                    of the trace on sim_nodes nodes with the row's overhead and
                                    startup (a schedule costs this; its portfolio is cut by a
                                    time limit, so it depends on the machine's speed)
cost_over_upper               float total_cost / upper (below 1: this run beats the portfolio)
bound_kind                    str   which bound: "spot" (the spot-aware bound of the availability
                                    replayed) or "on-demand" (on-demand VMs only)
interruptions                 int   jobs on a VM the provider took back (involuntary moves)
interruptions_per_job         float interruptions / jobs
interruption_cost             float VM cost of the work interruptions lost (in lost_work_cost)
interrupted_hours             float hours of the jobs' work interruptions lost
spot_cost                     float the part of vm_cost billed for spot VMs
interruption_delay_hours      float hours interruptions delayed the jobs: lost work, then waiting
                                    until each ran again (`gpuaas.producers.Execution`)
interruption_tardiness_cost   float tardiness cost attributed to interruptions: per job weight x
                                    min(tardiness, its delay), summed (<= tardiness_cost)
egress_cost                   float $ of jobs' data moved between locations (in total_cost;
                                    `gpuaas.transfer`; 0 on a catalog without locations)
transfers                     int   moves of a job's data between locations
============================  ====  ===========================================================

Wall-clock measurements (`TIMING_COLUMNS`: they differ between two runs of the same cell):

============================  ====  ===========================================================
solver_seconds_mean, _p95,    float the method's time per call, and in total
_max, _total
wall_seconds, cpu_seconds     float the whole simulation's wall and process CPU time
solver_cpu_seconds            float the method's process CPU time in total
cell_seconds                  float the cell, trace generation and bound included
worker                        str   host:pid of the process that ran the cell
timing_extra                  str   any other timing of the simulation result, JSON
============================  ====  ===========================================================

Files written before a column existed (`ADDED_COLUMNS`) are still read, with that column
empty, and are rewritten with every column when a campaign resumes them.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from gpuaas.metrics import NAMES as JOB_METRICS
from gpuaas.run_config import settings

#: the cell's parameters of the first results files, in their order
_FIRST = [
    "cell",
    "trace",
    "arrivals",
    "nodes",
    "jobs",
    "trace_seed",
    "method",
    "seed",
    "node_multiplier",
    "sim_nodes",
    "noise",
    "overhead",
    "startup",
    "options",
    "catalog",
]
#: the columns of the run settings (`gpuaas.run_config.Setting.column`), in `RunConfig`'s order
SETTING_COLUMNS = {s.column: (name, s) for name, _, s in settings() if s.column is not None}
#: the cell's parameters: those of the first files, then every other run setting's
PARAM_COLUMNS = _FIRST + [c for c in SETTING_COLUMNS if c not in _FIRST]
#: what a simulation with spot capacity measured about it (empty without)
SPOT_COLUMNS = [
    "interruptions",
    "interruptions_per_job",
    "interruption_cost",
    "interrupted_hours",
    "spot_cost",
    "interruption_delay_hours",
    "interruption_tardiness_cost",
]
#: what the simulation measured (one number per column; `extra` holds any other scalar as JSON)
METRIC_COLUMNS = [
    "status",
    "total_cost",
    "vm_cost",
    "tardiness_cost",
    "events",
    "migrations",
    "preemptions",
    "moves_per_job",
    "max_job_moves",
    "lost_work_cost",
    "startup_cost",
    *JOB_METRICS,
    "makespan",
    "solver_calls",
    "tick",
    "predicted_total_cost",
    "predicted_vm_cost",
    "predicted_tardiness_cost",
    "cost_deviation",
    "prediction_error",
    "off_by_2x",
    "error",
    "extra",
    "bound",
    "cost_over_bound",
    "bound_kind",
    *SPOT_COLUMNS,
    "upper",
    "cost_over_upper",
    "egress_cost",
    "transfers",
]
#: wall-clock measurements: they differ from run to run and between backends
TIMING_COLUMNS = [
    "solver_seconds_mean",
    "solver_seconds_p95",
    "solver_seconds_max",
    "solver_seconds_total",
    "wall_seconds",
    "cpu_seconds",
    "solver_cpu_seconds",
    "cell_seconds",
    "worker",
    "timing_extra",
]
COLUMNS = PARAM_COLUMNS + METRIC_COLUMNS + TIMING_COLUMNS
#: columns added since the first results files; files without them are still read (values None)
ADDED_COLUMNS = [
    "trace",
    "startup",
    "moves_per_job",
    "lost_work_cost",
    "startup_cost",
    "bound",
    "cost_over_bound",
    "deadline_miss_rate",
    "tardiness_p50",
    "tardiness_p95",
    "tardiness_p99",
    "lateness_of_late_p50",
    "lateness_of_late_p95",
    "lateness_of_late_p99",
    "jct_p50",
    "jct_p95",
    "jct_p99",
    "waiting_p95",
    "max_job_moves",
    "prediction_error",
    "off_by_2x",
    *(c for c in SETTING_COLUMNS if c not in _FIRST),
    *SPOT_COLUMNS,
    "upper",
    "cost_over_upper",
    "bound_kind",
    "egress_cost",
    "transfers",
]

#: the type of each setting's column, by the values it takes (`Setting.values`)
_KINDS = {"seed": int, "nodes": int, "count": int, "switch": bool, "method": str, "name": str}
_KINDS.update(options=str, source=str, names=str)
INT_COLUMNS = {
    "nodes",
    "jobs",
    "trace_seed",
    "node_multiplier",
    "events",
    "migrations",
    "preemptions",
    "jobs_completed",
    "late_jobs",
    "solver_calls",
    "max_job_moves",
    "interruptions",
    "transfers",
}
BOOL_COLUMNS: set[str] = set()
STR_COLUMNS = {
    "cell",
    "trace",
    "arrivals",
    "catalog",
    "status",
    "error",
    "extra",
    "bound_kind",
    "worker",
    "timing_extra",
}
for _column, (_, _setting) in SETTING_COLUMNS.items():
    {int: INT_COLUMNS, bool: BOOL_COLUMNS, str: STR_COLUMNS}.get(
        _KINDS.get(_setting.values, float), set()
    ).add(_column)


def readable_header(header: list[str]) -> bool:
    """Whether a file with these columns is a results file of this or an earlier version: the
    current columns in order, some of `ADDED_COLUMNS` possibly missing."""
    return header == [c for c in COLUMNS if c in header] and set(COLUMNS) - set(header) <= set(
        ADDED_COLUMNS
    )


def format_value(value: Any) -> str:
    """A value as CSV text: "" for None, floats by repr (exact round trip)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(float(value))  # numpy floats are floats whose repr names the type
    return str(value)


def parse_value(column: str, text: str) -> Any:
    """A CSV field back as the column's type (None for "")."""
    if text == "":
        return None
    if column in STR_COLUMNS:
        return text
    if column in INT_COLUMNS:
        return int(text)
    if column in BOOL_COLUMNS:
        return text == "True"
    return float(text)


def csv_line(row: dict[str, Any]) -> str:
    """One row as a CSV line in `COLUMNS` order (missing columns empty)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([format_value(row.get(c)) for c in COLUMNS])
    return buf.getvalue()


def to_csv(rows: list[dict[str, Any]]) -> str:
    """Rows as CSV text, header first."""
    return csv_line(dict(zip(COLUMNS, COLUMNS))) + "".join(csv_line(r) for r in rows)


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows without their timing columns, sorted by cell: equal for equal campaigns on any backend."""
    out = [{c: r[c] for c in COLUMNS if c not in TIMING_COLUMNS} for r in rows]
    return sorted(out, key=lambda r: r["cell"])
