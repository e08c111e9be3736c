"""`build_trace`: the jobs read from a trace timed on a catalog into a normal trace dict.

The rules (throughput table or measured duration, release shift, drawn due dates and weights,
unrunnable jobs) are in the `gpuaas.importers` docstring.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.catalog import Catalog, bundled_catalogs, load_catalog
from gpuaas.errors import InputError
from gpuaas.generator import DUE_FACTOR, WEIGHT_RANGE
from gpuaas.importers.records import ImportReport, TraceJob
from gpuaas.instance import DEFAULT_PARAMS, DEMANDS, Instance, fits_alone
from gpuaas.limits import MAX_JOBS, MAX_SECONDS, MAX_WEIGHT, MIN_SECONDS
from gpuaas.throughputs import SCALING, ThroughputTable

GPU_COUNTS = ("any", "requested")
#: the rules `--nodes` may name instead of a number (`build_trace`)
NODE_RULES = ("jobs", "demand")
#: the share of the trace's time its GPU demand may exceed what N nodes hold ("demand" rule)
DEMAND_QUANTILE = 0.95


def parse_window(text: str | None) -> tuple[float, float]:
    """``START:END`` in seconds of the trace clock (either side may be empty) -> (start, end)."""
    if text is None:
        return 0.0, math.inf
    parts = text.split(":")
    if len(parts) != 2:
        raise InputError(None, "--window", f"must be START:END in seconds, got {text!r}")
    bounds = []
    for part, default in zip(parts, (0.0, math.inf)):
        try:
            bounds.append(float(part) if part.strip() else default)
        except ValueError:
            raise InputError(
                None, "--window", f"must be START:END in seconds, got {text!r}"
            ) from None
    if not bounds[0] < bounds[1]:
        raise InputError(None, "--window", f"START must be < END, got {text!r}")
    return bounds[0], bounds[1]


def build_trace(
    jobs: list[TraceJob],
    source: str,
    *,
    catalog: str | Catalog = "azure-2021",
    throughputs: ThroughputTable | None = None,
    nodes: int | str | None = None,
    seed: int = 1,
    limit: int | None = None,
    window: tuple[float, float] | None = None,
    gpu_counts: str = "any",
    scaling: str = "none",
    any_gpu: bool = False,
    measured_on: str | None = None,
    skip_unrunnable: bool = False,
    report: ImportReport | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], ImportReport]:
    """A trace dict (instance format) of `jobs` on `catalog`, checked by `Instance.from_dict`.

    Parameters
    ----------
    jobs : list of TraceJob
        As read from `source` (any order; sorted here by submit time, then line).
    catalog : str or Catalog
        Bundled name, YAML path or Catalog; written by name when bundled, inline otherwise.
    throughputs : ThroughputTable, optional
        Required when a job is given as model + steps.
    nodes : int or {"jobs", "demand"}, optional
        N, or the rule that sets it: "jobs" (the default) ceil(J / 10), as the paper's traces
        have J = 10 N; "demand" from the trace's GPU demand (`demand_nodes`).
    seed : int
        Seed of the due-date and weight draws.
    limit, window
        Keep the first `limit` jobs whose submit time is in [start, end).
    gpu_counts : {"any", "requested"}
        Model + steps jobs may run on every GPU count the table has ("any", the paper's model:
        the scheduler chooses g), or only on the count the trace requested.
    scaling : {"none", "linear"}
        Throughput table scaling rule (`gpuaas.throughputs`).
    any_gpu : bool
        Duration jobs run equally fast on every GPU model (else only on the one they name).
    measured_on : str, optional
        GPU model of the measured durations of jobs whose trace does not name one.
    skip_unrunnable : bool
        Drop jobs no configuration can run instead of raising.
    report : ImportReport, optional
        Counts from the reader (rows it dropped); updated and returned.
    progress : callable, optional
        Called with each step's description (`gpuaas.progress.Progress`).
    """
    if gpu_counts not in GPU_COUNTS:
        raise InputError(
            None, "--gpu-counts", f"must be one of {', '.join(GPU_COUNTS)}, got {gpu_counts!r}"
        )
    if scaling not in SCALING:
        raise InputError(None, "--scaling", f"must be one of {', '.join(SCALING)}, got {scaling!r}")
    if isinstance(nodes, str) and nodes not in NODE_RULES:
        raise InputError(
            None,
            "--nodes",
            f"must be an integer >= 1 or one of {', '.join(NODE_RULES)}, got {nodes!r}",
        )
    count = None if isinstance(nodes, str) else nodes
    for name, value, low in (("--nodes", count, 1), ("--limit", limit, 1), ("--seed", seed, 0)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < low
        ):
            raise InputError(None, name, f"must be an integer >= {low}, got {value!r}")
    cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
    report = report or ImportReport(source, len(jobs), 0, 0, 0.0)
    start, end = window or (0.0, math.inf)
    ordered = sorted(jobs, key=lambda j: (j.submit, j.line))
    kept = [j for j in ordered if start <= j.submit < end]
    report.drop("outside --window", len(ordered) - len(kept))
    if limit is not None and len(kept) > limit:
        report.drop("past --limit", len(kept) - limit)
        kept = kept[:limit]
    if len(kept) > MAX_JOBS:  # before timing them: that would take minutes and gigabytes
        raise InputError(
            source,
            None,
            f"{len(kept)} jobs to import; at most {MAX_JOBS} (gpuaas.limits): "
            "choose some with --limit or --window",
        )
    say = progress or (lambda step: None)
    rows, timed = [], []
    for k, job in enumerate(kept):
        if k % 1000 == 0:
            say(f"timing job {k + 1} of {len(kept)} on {cat.name}")
        if not job.gpus and not cat.has_gpu_less:
            report.drop(f"CPU-only (catalog {cat.name} has no GPU-less type)")
            continue
        if job.duration is not None and job.gpu is None and measured_on is not None:
            job = replace(job, gpu=measured_on)
        work = _work(job, source, cat, throughputs, gpu_counts, scaling, any_gpu)
        _check_times(job, work, source, cat)
        if job.cpus or job.memory:  # the "alone" rule (docs/design.md)
            work = np.where(fits_alone(cat, job.cpus, job.memory)[0], work, np.inf)
        if not np.isfinite(work).any():
            if skip_unrunnable:
                report.drop(f"not runnable on {cat.name}")
                continue
            raise InputError(
                source,
                f"line {job.line}",
                f"job {job.id!r}: no configuration of "
                f"catalog {cat.name!r} can run it ({_why(job, throughputs)}); "
                "--skip-unrunnable drops such jobs",
            )
        rows.append(work)
        timed.append(job)
        if job.changed:
            report.change(job.changed)
    if not timed:
        raise InputError(source, None, "no job left to import")
    seen: set[str] = set()
    for job in timed:
        if job.id in seen:
            raise InputError(source, f"line {job.line}: id", f"duplicate job id {job.id!r}")
        seen.add(job.id)
    work = np.array(rows)
    offset = timed[0].submit
    release = np.array([j.submit for j in timed]) - offset
    fastest = work.min(axis=1)
    due_rng, weight_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    drawn_due = release + due_rng.uniform(*DUE_FACTOR, size=len(timed)) * fastest
    drawn_weight = weight_rng.uniform(*WEIGHT_RANGE, size=len(timed))
    out_jobs = []
    for k, job in enumerate(timed):
        _check_numbers(job, float(release[k]), offset, source)
        if job.due is not None:
            due = job.due - offset
        elif job.due_factor is not None:
            due = float(release[k] + job.due_factor * fastest[k])
        else:
            due = float(drawn_due[k])
            report.drawn_due += 1
        weight = job.weight
        if weight is None:
            weight = float(drawn_weight[k])
            report.drawn_weight += 1
        out_jobs.append(
            {
                "id": job.id,
                "release": float(release[k]),
                "due": float(due),
                "weight": float(weight),
                "times": _times_dict(work[k], cat),
                **{d: float(getattr(job, d)) for d in DEMANDS if getattr(job, d)},
                **({"workload": job.workload} if job.workload else {}),
            }
        )
    if nodes == "demand":
        n = demand_nodes(timed, work, cat)
    elif count is None:
        n = max(1, math.ceil(len(timed) / 10))
    else:
        n = count
    checks.nodes(n, None, "--nodes")
    bundled = isinstance(catalog, str) and catalog in bundled_catalogs()
    data = {
        "catalog": catalog if bundled else cat.to_dict(),
        "nodes": n,
        "time": 0.0,
        "params": dict(DEFAULT_PARAMS),
        "jobs": out_jobs,
    }
    say(f"checking the trace of {len(out_jobs)} jobs")
    Instance.from_dict(data, source)  # the output is a valid trace, or this is a bug
    report.kept, report.nodes, report.offset = len(timed), n, float(offset)
    return data, report


def _work(
    job: TraceJob,
    source: str,
    cat: Catalog,
    table: ThroughputTable | None,
    gpu_counts: str,
    scaling: str,
    any_gpu: bool,
) -> np.ndarray:
    """Whole-job seconds per configuration of `cat` (inf: cannot run)."""
    if job.model is not None:
        at = f"line {job.line}: model"
        if table is None:
            raise InputError(
                source,
                at,
                f"job {job.id!r} names model {job.model!r}: give a throughput table (--throughputs)",
            )
        model = table_model(job, table)
        if model is None:
            raise InputError(
                source, at, f"unknown model {job.model!r}: not in throughput table {table.name}"
            )
        steps = job.steps
        if steps is None:  # the measured duration anchors the work
            rate = table.rate(model, job.gpu or "", job.gpus, scaling)
            if rate is None:
                raise InputError(
                    source,
                    at,
                    f"job {job.id!r}: throughput table {table.name} has no rate for {model!r} "
                    f"on {job.gpus} x {job.gpu or 'unknown GPU'} to anchor its measured duration",
                )
            steps = job.duration * rate
        allowed = {job.gpus} if gpu_counts == "requested" else None
        return table.job_times(model, float(steps), cat, gpus=allowed, scaling=scaling)
    return duration_work(cat, job.gpus, float(job.duration), job.gpu, any_gpu)


def duration_work(
    cat: Catalog, gpus: int, duration: float, gpu: str | None, any_gpu: bool = False
) -> np.ndarray:
    """Whole-job seconds per configuration of a job measured at `duration` s on `gpus` GPUs of
    model `gpu`: that time on exactly `gpus` GPUs of that model (of any model: `any_gpu`), inf
    elsewhere (a measured duration says nothing of other counts). A CPU-only job (`gpus` 0)
    takes it on every GPU-less type ((v, 0); docs/design.md, "CPU-only jobs")."""
    out = np.full(cat.n_configs, np.inf)
    for v, model in enumerate(cat.gpu_models):
        if not gpus:
            if not cat.gpus[v]:
                out[cat.config(v, 0)] = float(duration)
        elif gpus <= int(cat.gpus[v]) and (any_gpu or (gpu or "").upper() == model.upper()):
            out[cat.config(v, gpus)] = float(duration)
    return out


def _check_times(job: TraceJob, work: np.ndarray, source: str, cat: Catalog) -> None:
    """The limits of `gpuaas.instance.check_job` on a job's times, named by its line and the
    column they come from (the output trace would name only its own JSON path)."""
    where = f"line {job.line}: {job.work_column or ('duration' if job.model is None else 'steps')}"
    finite = np.isfinite(work)
    for c in np.flatnonzero(finite & ((work > MAX_SECONDS) | (work < MIN_SECONDS)))[:1]:
        vm, g = cat.vm_names[cat.cfg_vm[c]], int(cat.cfg_gpus[c])
        than = (
            f"more than {MAX_SECONDS:g}" if work[c] > MAX_SECONDS else f"less than {MIN_SECONDS:g}"
        )
        raise InputError(
            source,
            where,
            f"job {job.id!r} takes {work[c]:.3g} s on {vm} with {g} GPU(s), {than} s "
            "(gpuaas.limits)",
        )


def _check_numbers(job: TraceJob, release: float, offset: float, source: str) -> None:
    """Release, due date and weight within `gpuaas.limits`, named by line and column."""
    at = f"line {job.line}"
    if release > MAX_SECONDS:
        raise InputError(
            source,
            f"{at}: submit",
            f"{release:.3g} s after the first job's submit ({offset:g}), more than "
            f"{MAX_SECONDS:g} s (gpuaas.limits)",
        )
    if job.due is not None and abs(job.due - offset) > MAX_SECONDS:
        raise InputError(
            source,
            f"{at}: due",
            f"{job.due - offset:.3g} s from the first job's submit ({offset:g}), beyond "
            f"±{MAX_SECONDS:g} s (gpuaas.limits)",
        )
    if job.weight is not None and job.weight > MAX_WEIGHT:
        raise InputError(
            source,
            f"{at}: weight",
            f"must be <= {MAX_WEIGHT:g} (gpuaas.limits), got {job.weight:g}",
        )


def table_model(job: TraceJob, table: ThroughputTable) -> str | None:
    """The table's model that times `job`: its own name, else its stand-in, else None."""
    for name in (job.model, job.table_model):
        if name is not None and name in table.models:
            return name
    return None


def demand_nodes(jobs: list[TraceJob], work: np.ndarray, cat: Catalog) -> int:
    """N of the "demand" rule: the GPUs the trace's jobs hold at once, exceeded only
    1 - DEMAND_QUANTILE of the time, over the GPUs of the catalog's largest VM, rounded up;
    where jobs declare vCPUs or memory and the catalog limits them, the same for each of
    those over the largest VM some job can run on, and the largest N of the three. CPU-only
    jobs (no GPU) and GPU jobs never share a VM (a GPU-less type has no GPU, and a CPU-only
    job runs on GPU-less types only): each kind gets its N over the types it runs on, and N is
    their sum (a trace of GPU jobs alone: the GPU jobs' N).

    Each job holds its requested GPUs from its submission for its measured duration (else its
    fastest time on that GPU count, else its fastest time): the demand as the trace's users
    stated it, with no queueing; the time runs from the first submission to the last.
    """
    gpus = np.array([j.gpus for j in jobs], dtype=np.float64)
    kinds = [np.flatnonzero(gpus > 0), np.flatnonzero(gpus == 0)]
    return max(1, sum(_demand_nodes([jobs[i] for i in k], work[k], cat) for k in kinds if k.size))


def _demand_nodes(jobs: list[TraceJob], work: np.ndarray, cat: Catalog) -> int:
    """`demand_nodes` of jobs of one kind (all with GPUs, or all without)."""
    submit = np.array([j.submit for j in jobs])
    gpus = np.array([j.gpus for j in jobs], dtype=np.float64)
    at_count = np.where(cat.cfg_gpus[None, :] == gpus[:, None], work, np.inf).min(axis=1)
    fastest = np.where(np.isfinite(at_count), at_count, work.min(axis=1))
    held = np.array([j.duration if j.duration is not None else f for j, f in zip(jobs, fastest)])
    amounts = [(gpus, float(cat.gpus.max()))] if gpus.any() else []
    usable = np.unique(cat.cfg_vm[np.isfinite(work).any(axis=0)])  # types some job can run on
    for demand, capacity in DEMANDS.items():
        need = np.array([getattr(j, demand) for j in jobs], dtype=np.float64)
        largest = float(getattr(cat, capacity)[usable].max()) if usable.size else math.inf
        if need.any() and math.isfinite(largest):
            amounts.append((need, largest))
    n = 1
    for amount, largest in amounts:
        level, share = gpu_demand(submit, held, amount)
        order = np.argsort(level)
        cum = np.cumsum(share[order])
        if cum.size == 0 or cum[-1] <= 0:  # every job submitted at the same instant
            q = float(amount.sum())
        else:
            q = float(level[order][np.searchsorted(cum, DEMAND_QUANTILE * cum[-1])])
        n = max(n, math.ceil(q / largest - 1e-9))
    return n


def gpu_demand(
    submit: np.ndarray, held: np.ndarray, gpus: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(GPUs in use, seconds at that level) of each interval between consecutive job starts and
    ends inside [first submission, last submission], jobs holding `gpus` from `submit` for `held`."""
    at = np.concatenate([submit, submit + held])
    delta = np.concatenate([gpus, -gpus])
    order = np.lexsort((delta, at))
    at, level = at[order], np.cumsum(delta[order])
    lo, hi = submit.min(), submit.max()
    seconds = np.clip(at[1:], lo, hi) - np.clip(at[:-1], lo, hi)
    return level[:-1], seconds


def _why(job: TraceJob, table: ThroughputTable | None) -> str:
    if job.cpus or job.memory:
        return f"needs {job.cpus:g} vCPUs and {job.memory:g} GiB of memory beside " + _why(
            dataclasses.replace(job, cpus=0.0, memory=0.0), table
        )
    if job.model is not None:
        model = table_model(job, table) if table else job.model
        have = sorted({(u, g) for m, u, g in table.rates if m == model}) if table else []
        return f"the table has {model!r} on " + ", ".join(f"{u} x{g}" for u, g in have)
    return f"measured on {job.gpus} x {job.gpu or 'unknown GPU'}"


def _times_dict(row: np.ndarray, cat: Catalog) -> dict[str, list[float | None]]:
    times: dict[str, list[float | None]] = {}
    for v, name in enumerate(cat.vm_names):
        seg = row[cat.cfg_first[v] : cat.cfg_first[v] + cat.cfg_count[v]]
        if np.isfinite(seg).any():
            times[name] = [float(t) if math.isfinite(t) else None for t in seg]
    return times
