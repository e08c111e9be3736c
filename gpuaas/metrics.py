"""What users read from a simulation besides its cost: deadline misses, lateness, JCT, waiting.

Computed once, here, from the per-job records of a simulation (`SimulationResult.jobs`, the
"jobs" of the result JSON); the result JSON, the `simulate` summary, the campaign rows
(`gpuaas.experiments.rows`), `gpuaas compare`'s table and `gpuaas plot cdf` take them from
`job_metrics`. For job j released at r_j, due at d_j and completed at C_j (seconds):

- **lateness** L_j = C_j - d_j (negative: early). The job *misses its deadline* (is late) when
  L_j > `TOLERANCE` (`gpuaas.rescheduler.TIME_TOL`, 10^-6 s), the simulator's time resolution
  (events closer than that are one event): a completion at its due date up to floating-point
  noise is on time.
- ``late_jobs``, ``deadline_miss_rate``: the late jobs, and their share of the completed jobs.
- ``tardiness_p50 / _p95 / _p99``: percentiles over *all* jobs of the tardiness T_j = L_j if
  the job is late, else 0 (the paper's max(0, C_j - d_j)): "95 % of jobs end at most
  tardiness_p95 s after their due date"; 0 while at most about 5 % of the jobs are late.
- ``lateness_of_late_p50 / _p95 / _p99``: percentiles of L_j over the late jobs only: how late
  the jobs that miss are; None when no job is late.
- ``mean_jct``, ``jct_p50 / _p95 / _p99``, ``max_jct``: job completion time C_j - r_j.
- ``mean_waiting``, ``waiting_p95``, ``max_waiting``: the time between release and completion
  that the job does not run (queued before its start or after a preemption, or waiting for its
  VM to start up): jct minus running, as the Rescheduler records it.

Percentiles are `numpy.percentile`'s default, linear interpolation between the closest ranks
(Hyndman and Fan's type 7). Every metric is None when no job completed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from gpuaas.rescheduler import TIME_TOL as TOLERANCE  # seconds late that are still on time

#: the percentiles reported
PERCENTILES = (50, 95, 99)


def _names(metric: str) -> list[str]:
    """The percentile names of a metric: jct_p50, jct_p95, jct_p99."""
    return [f"{metric}_p{q}" for q in PERCENTILES]


#: the metrics `job_metrics` returns, in the order of the result JSON and the row schema
NAMES = [
    "jobs_completed",
    "late_jobs",
    "deadline_miss_rate",
    *_names("tardiness"),
    *_names("lateness_of_late"),
    "mean_jct",
    *_names("jct"),
    "max_jct",
    "mean_waiting",
    "waiting_p95",
    "max_waiting",
]


def lateness(job: Mapping[str, Any]) -> float:
    """L_j = completion - due of a job record (seconds; negative: early)."""
    return float(job["completion"]) - float(job["due"])


def is_late(job: Mapping[str, Any]) -> bool:
    """Whether a job record completed more than `TOLERANCE` after its due date."""
    return lateness(job) > TOLERANCE


def _percentiles(values: list[float], metric: str) -> dict[str, float | None]:
    if not values:
        return dict.fromkeys(_names(metric))
    p = np.percentile(np.asarray(values, dtype=np.float64), PERCENTILES)
    return dict(zip(_names(metric), p.tolist()))


def job_metrics(jobs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The metrics of `NAMES` from completed job records (release, completion, due, jct, waiting).

    Parameters
    ----------
    jobs : iterable of mappings
        `SimulationResult.jobs` (or `Rescheduler.completions().values()`); records without a
        completion are not completed and are left out.

    Returns
    -------
    dict
        `NAMES` -> int, float or None (module docstring).
    """
    done = [j for j in jobs if j.get("completion") is not None]
    if not done:
        return dict.fromkeys(NAMES) | {"jobs_completed": 0}
    late = [lateness(j) for j in done if is_late(j)]
    tardiness = [lateness(j) if is_late(j) else 0.0 for j in done]
    jct = [float(j["jct"]) for j in done]
    # jct - running: a job that ran its whole JCT can come out a few ulps below 0 by rounding
    wait = [max(0.0, float(j["waiting"])) for j in done]
    out: dict[str, Any] = {
        "jobs_completed": len(done),
        "late_jobs": len(late),
        "deadline_miss_rate": len(late) / len(done),
        **_percentiles(tardiness, "tardiness"),
        **_percentiles(late, "lateness_of_late"),
        "mean_jct": sum(jct) / len(jct),  # in job order, as rows were always summed
        **_percentiles(jct, "jct"),
        "max_jct": max(jct),
        "mean_waiting": sum(wait) / len(wait),
        "waiting_p95": float(np.percentile(wait, 95)),
        "max_waiting": max(wait),
    }
    return {k: out[k] for k in NAMES}


def summary_lines(m: Mapping[str, Any], makespan: float) -> list[str]:
    """The `simulate` summary's lines on jobs, in hours, from `job_metrics`' dict `m`."""

    def hours(*names: str) -> str:
        return " / ".join("-" if m[n] is None else f"{m[n] / 3600:.2f}" for n in names) + " h"

    return [
        f"jobs          {m['jobs_completed']} completed, {m['late_jobs'] or 0} late "
        f"(deadline-miss rate {100 * (m['deadline_miss_rate'] or 0.0):.1f} %), "
        f"makespan {makespan / 3600:.2f} h",
        f"JCT           mean / p50 / p95 / p99 {hours('mean_jct', *_names('jct'))}; "
        f"waiting mean / p95 {hours('mean_waiting', 'waiting_p95')}",
        f"lateness      of late jobs p50 / p95 / p99 {hours(*_names('lateness_of_late'))}; "
        f"tardiness of all p95 / p99 {hours('tardiness_p95', 'tardiness_p99')}",
    ]
