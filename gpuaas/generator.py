"""Seeded generator of job traces (paper §4.1) and of single rescheduling-point snapshots.

Both return a dict in the instance format of docs/design.md §10 with explicit ``times`` (whole-job
seconds per VM type and GPU count, rounded to 0.1 s), so any tool reads them without the
performance model; each job also keeps the ``workload`` it was timed from (``times`` wins).

Jobs (the same for traces and snapshots): an (application, framework) pair of the paper's
Table 3 drawn uniformly; a batch size drawn from the application's list below; a target 1-GPU
K80 duration drawn log-uniformly in [10 h, 300 h] ("tens to hundreds of hours", §2.1); a
dataset drawn among the application's sizes that reach the target in 2 to 100 epochs (so
nobody trains AlexNet for 2 000 epochs); and the whole number of epochs nearest the target
within [10 h, 300 h], so the 1-GPU K80 times lie in [10 h, 300 h].
Due date: release + U[min t, 3 min t], min t = min over configurations of the whole-job time;
weight ω ~ U[0.003, 0.015] $/s (§4.1).

Arrivals of a trace (first job at time 0, then the inter-arrival gaps):

- ``exponential``: gaps ~ Exp(mean 75 000 s / N) (§4.1).
- ``high`` / ``low``: a Poisson process of rate ε·k_max·λ and ε·k_max·λ/4 (§4.1, after [9]);
  λ = 1 / (mean over the trace's jobs of min t), k_max = N x the most GPUs one job can get
  (the largest VM type). ε is tuned as the paper says, so that the peak (high) rate matches
  the ~135 submissions per hour DL2 [30] reports for a cluster of a few thousand GPUs. We take
  that cluster to be the paper's own largest scenario (Fig. 2: N = 1000 nodes of up to 8 GPUs,
  K_ref = 8000 GPUs), which gives ε = 135 / h / (K_ref·λ) and a high rate of
  135 / h x k_max / K_ref, i.e. 0.135·N jobs per hour with 8-GPU VMs — about 2.8 times the
  exponential rate (0.048·N per hour) and the low rate 0.7 times it. This reproduces the order
  the paper observes for the number of concurrent jobs (high > exponential > mixed > low,
  §4.4) and the closeness of mixed and exponential results (§4.1).
- ``mixed``: alternating runs of high-rate and low-rate gaps, starting high, each run 8 to 12
  submissions long (uniform; "approximately every 10 submissions").

One numpy Generator per purpose (jobs, arrivals, due dates, weights, snapshot state), spawned
from ``np.random.SeedSequence(seed)``: no global seeding, and the job list of a seed does not
depend on the arrival pattern.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.catalog import Catalog, bundled_catalogs, load_catalog
from gpuaas.errors import InputError
from gpuaas.instance import DEFAULT_PARAMS, Instance
from gpuaas.limits import MAX_JOBS, MAX_SECONDS
from gpuaas.performance import GPUS, TABLE3_JOBS, job_time, workload_times

ARRIVALS = ("exponential", "high", "low", "mixed")

#: Mean inter-arrival of the exponential pattern is this divided by N (s) [§4.1].
EXPONENTIAL_MEAN_S = 75_000.0
#: Peak submissions per hour of the real cluster the high rate is tuned to [§4.1, ref. 30].
PEAK_PER_HOUR = 135.0
#: GPUs of that cluster: the paper's Fig. 2 system, N = 1000 nodes x 8 GPUs.
REFERENCE_GPUS = 8000.0
#: Length of a high or low run of the mixed pattern, in submissions (inclusive bounds).
MIXED_RUN = (8, 12)
#: Target 1-GPU (K80) duration of a job, hours, drawn log-uniformly.
DURATION_HOURS = (10.0, 300.0)
#: A dataset is drawn among those that reach the target duration in this many epochs.
EPOCHS = (2.0, 100.0)
#: Tardiness weight range, $/s [§4.1].
WEIGHT_RANGE = (0.003, 0.015)
#: Due date = release + U[DUE_FACTOR] x min t [§4.1].
DUE_FACTOR = (1.0, 3.0)
#: Default time of a snapshot (s): late enough that every job's release is >= 0.
SNAPSHOT_TIME = 1_000_000.0

#: Batch sizes and dataset sizes (files) the generator draws from, per application.
BATCH_SIZES: dict[str, tuple[int, ...]] = {
    "alexnet": (128, 256, 512),
    "resnet50": (32, 64, 128),
    "vgg19": (16, 32, 64),
    "deepspeech": (8, 16, 32),
}
#: ImageNet subsets (130k as in Table 3, half of ImageNet-1k, ImageNet-1k, ImageNet-21k) and
#: LibriSpeech splits (100 h, 460 h, 960 h).
DATASET_FILES: dict[str, tuple[int, ...]] = {
    "alexnet": (130_000, 640_000, 1_281_167, 14_197_122),
    "resnet50": (130_000, 640_000, 1_281_167, 14_197_122),
    "vgg19": (130_000, 640_000, 1_281_167, 14_197_122),
    "deepspeech": (28_539, 132_553, 281_241),
}
_REFERENCE_GPU = "K80"
_STREAMS = ("jobs", "arrivals", "due", "weights", "snapshot")


def arrival_rates(nodes: int, catalog: Catalog, mean_min_time: float) -> dict[str, float]:
    """The Poisson rates of §4.1 (per second) and the quantities they derive from.

    Parameters
    ----------
    nodes : int
        N, the number of nodes.
    catalog : Catalog
        Sets k_max = N x max G_v.
    mean_min_time : float
        Mean over the jobs of their minimum whole-job time (s); λ is its reciprocal.

    Returns
    -------
    dict
        ``lambda``, ``k_max``, ``eps``, ``high``, ``low`` (rates in 1/s) and ``exponential``
        (1 / mean exponential gap), for comparison.
    """
    lam = 1.0 / float(mean_min_time)
    k_max = nodes * int(catalog.gpus.max())
    eps = PEAK_PER_HOUR / 3600.0 / (REFERENCE_GPUS * lam)
    high = eps * k_max * lam
    return {
        "lambda": lam,
        "k_max": float(k_max),
        "eps": eps,
        "high": high,
        "low": high / 4.0,
        "exponential": nodes / EXPONENTIAL_MEAN_S,
    }


def generate_trace(
    nodes: int,
    jobs: int | None = None,
    seed: int = 0,
    *,
    arrivals: str = "exponential",
    catalog: str | dict[str, Any] | Catalog = "azure-2021",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """A job trace as §4.1 describes, in the instance format (time 0, default H, mu, rho).

    Parameters
    ----------
    nodes : int
        N >= 1.
    jobs : int, optional
        J >= 1; default 10 N.
    seed : int
        Non-negative seed; the same seed gives the same trace, bit for bit.
    arrivals : {"exponential", "high", "low", "mixed"}
        Inter-arrival pattern (module docstring).
    catalog : str, dict or Catalog
        Bundled catalog name, YAML path, inline mapping or Catalog; written by name when
        bundled, inline otherwise.
    progress : callable, optional
        Called with each step's description (`gpuaas.progress.Progress`).

    Returns
    -------
    dict
        ``{"catalog", "nodes", "time": 0.0, "params", "jobs": [...]}`` with jobs sorted by
        release and ids ``j0``, ``j1``, ...
    """
    nodes, jobs, seed = _check_sizes(nodes, jobs, seed, 10)
    if arrivals not in ARRIVALS:
        raise InputError(
            None, "arrivals", f"unknown pattern {arrivals!r}; choose from {', '.join(ARRIVALS)}"
        )
    cat = _catalog(catalog)
    rng = _rngs(seed)
    workloads, work = _draw_jobs(rng["jobs"], jobs, cat, progress)
    min_t = work.min(axis=1)
    gaps = _gaps(rng["arrivals"], arrivals, nodes, cat, float(min_t.mean()), jobs - 1)
    release = np.concatenate(([0.0], np.cumsum(gaps)))
    due = release + rng["due"].uniform(*DUE_FACTOR, size=jobs) * min_t
    weight = rng["weights"].uniform(*WEIGHT_RANGE, size=jobs)
    return _instance_dict(cat, catalog, nodes, 0.0, workloads, work, release, due, weight, None)


def generate_snapshot(
    nodes: int,
    jobs: int | None = None,
    seed: int = 0,
    *,
    time: float = SNAPSHOT_TIME,
    catalog: str | dict[str, Any] | Catalog = "azure-2021",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """One rescheduling point with `jobs` concurrent jobs, all released by `time`.

    For solver tests and benchmarks (e.g. N = 100, J = 450, the paper's largest concurrency,
    §4.4). Each job was released `age` ~ U[0, 2 min t] ago (clipped at `time`), its due date
    follows the §4.1 rule from that release, so d_j = due - time spreads over
    [-2 min t, 3 min t]: about 1 job in 8 is already late, others are easy. Half the jobs
    (drawn at random) have run: progress ~ U[0, min(0.95, age / min t)].

    Parameters
    ----------
    nodes : int
        N >= 1.
    jobs : int, optional
        J >= 1; default ceil(4.5 N) (450 at N = 100).
    seed : int
        Non-negative seed.
    time : float
        T_c (s), >= 0.
    catalog : str, dict or Catalog
        As in `generate_trace`.
    progress : callable, optional
        As in `generate_trace`.

    Returns
    -------
    dict
        The instance format with ``time`` = `time` and ``progress`` on jobs that have run.
    """
    nodes, jobs, seed = _check_sizes(nodes, jobs, seed, 4.5)
    checks.number(time, "time", minimum=0.0, maximum=MAX_SECONDS)
    cat = _catalog(catalog)
    rng = _rngs(seed)
    workloads, work = _draw_jobs(rng["jobs"], jobs, cat, progress)
    min_t = work.min(axis=1)
    state = rng["snapshot"]
    age = np.minimum(state.uniform(0.0, 2.0, size=jobs) * min_t, float(time))
    ran = state.random(jobs) < 0.5
    progress = np.where(
        ran, state.uniform(0.0, 1.0, size=jobs) * np.minimum(0.95, age / min_t), 0.0
    )
    release = float(time) - age
    order = np.argsort(release, kind="stable")
    due = release + rng["due"].uniform(*DUE_FACTOR, size=jobs) * min_t
    weight = rng["weights"].uniform(*WEIGHT_RANGE, size=jobs)
    return _instance_dict(
        cat,
        catalog,
        nodes,
        float(time),
        [workloads[i] for i in order],
        work[order],
        release[order],
        due[order],
        weight[order],
        progress[order],
    )


def generate_instance(
    nodes: int, jobs: int | None = None, seed: int = 0, **options: Any
) -> Instance:
    """`generate_snapshot` loaded as an Instance (what solver tests and benchmarks take).

    Parameters
    ----------
    nodes, jobs, seed, **options
        As in `generate_snapshot` (``time``, ``catalog``).

    Returns
    -------
    Instance
    """
    return Instance.from_dict(generate_snapshot(nodes, jobs, seed, **options), "generated snapshot")


# -- internals -------------------------------------------------------------------------------


def _check_sizes(nodes: Any, jobs: Any, seed: Any, per_node: float) -> tuple[int, int, int]:
    n = checks.nodes(nodes)
    default_jobs = math.ceil(per_node * n)
    if jobs is None and default_jobs > MAX_JOBS:
        raise InputError(
            None,
            "jobs",
            f"the default ({default_jobs} for {n} nodes) is more than "
            f"{MAX_JOBS} (gpuaas.limits); give --jobs",
        )
    j = default_jobs if jobs is None else checks.jobs(jobs)
    return n, j, checks.seed(seed)


def _catalog(spec: str | dict[str, Any] | Catalog) -> Catalog:
    cat = spec if isinstance(spec, Catalog) else load_catalog(spec)
    if not any(m.upper() in GPUS for m in cat.gpu_models):
        raise InputError(
            None,
            "catalog",
            f"catalog {cat.name!r} has no GPU model the performance "
            f"model knows ({', '.join(GPUS)})",
        )
    return cat


def _rngs(seed: int) -> dict[str, np.random.Generator]:
    children = np.random.SeedSequence(seed).spawn(len(_STREAMS))
    return {name: np.random.default_rng(s) for name, s in zip(_STREAMS, children)}


def _draw_jobs(
    rng: np.random.Generator,
    n: int,
    cat: Catalog,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Workloads of n jobs and their whole-job times (n, C), rounded to 0.1 s."""
    lo, hi = (math.log(h * 3600.0) for h in DURATION_HOURS)
    workloads, rows = [], []
    for i in range(n):
        if progress is not None and i % 1000 == 0:
            progress(f"drawing job {i + 1} of {n}")
        app, fw = TABLE3_JOBS[rng.integers(len(TABLE3_JOBS))]
        batch = int(rng.choice(BATCH_SIZES[app]))
        target = math.exp(rng.uniform(lo, hi))
        epoch_of = {
            f: job_time(app, _REFERENCE_GPU, 1, framework=fw, epochs=1, batch_size=batch, files=f)
            for f in DATASET_FILES[app]
        }
        fits = [f for f, e in epoch_of.items() if EPOCHS[0] <= target / e <= EPOCHS[1]]
        files = int(rng.choice(fits)) if fits else max(epoch_of)
        epoch = epoch_of[files]
        low = math.ceil(DURATION_HOURS[0] * 3600.0 / epoch)
        high = math.floor(DURATION_HOURS[1] * 3600.0 / epoch)
        epochs = max(low, min(round(target / epoch), high))
        wl = {
            "application": app,
            "framework": fw,
            "epochs": epochs,
            "batch_size": batch,
            "files": files,
        }
        workloads.append(wl)
        rows.append(workload_times(wl, cat))
    work = np.round(np.array(rows).reshape(n, cat.n_configs), 1)
    return workloads, work


def _gaps(
    rng: np.random.Generator, pattern: str, nodes: int, cat: Catalog, mean_min_time: float, n: int
) -> np.ndarray:
    """n inter-arrival gaps (s) of the pattern."""
    if pattern == "exponential":
        return rng.exponential(EXPONENTIAL_MEAN_S / nodes, size=n)
    rates = arrival_rates(nodes, cat, mean_min_time)
    if pattern in ("high", "low"):
        return rng.exponential(1.0 / rates[pattern], size=n)
    return rng.exponential(1.0, size=n) / _mixed_rates(rng, n, rates["high"], rates["low"])


def _mixed_rates(rng: np.random.Generator, n: int, high: float, low: float) -> np.ndarray:
    """Rate of each of n gaps: runs of MIXED_RUN submissions, alternately high and low."""
    rate = np.empty(n)
    i, is_high = 0, True
    while i < n:
        run = int(rng.integers(MIXED_RUN[0], MIXED_RUN[1] + 1))
        rate[i : i + run] = high if is_high else low
        i, is_high = i + run, not is_high
    return rate


def _instance_dict(
    cat: Catalog,
    spec: Any,
    nodes: int,
    time: float,
    workloads: list[dict[str, Any]],
    work: np.ndarray,
    release: np.ndarray,
    due: np.ndarray,
    weight: np.ndarray,
    progress: np.ndarray | None,
) -> dict[str, Any]:
    """The instance-format dict (docs/design.md §10) of generated jobs."""
    last = float(max(release.max(initial=0.0), due.max(initial=0.0)))
    if last > MAX_SECONDS:
        raise InputError(
            None,
            "jobs",
            f"the jobs would span {last:.3g} s, more than the {MAX_SECONDS:g} s "
            "limit of instance files (gpuaas.limits); use fewer jobs or more nodes",
        )
    jobs = []
    for j, wl in enumerate(workloads):
        times = {}
        for v, name in enumerate(cat.vm_names):
            row = work[j, cat.cfg_offset[v] : cat.cfg_offset[v] + cat.gpus[v]]
            if np.isfinite(row).all():
                times[name] = [float(t) for t in row]
        job: dict[str, Any] = {
            "id": f"j{j}",
            "release": float(release[j]),
            "due": float(due[j]),
            "weight": float(weight[j]),
            "times": times,
            "workload": wl,
        }
        if progress is not None and progress[j] > 0:
            job["progress"] = float(progress[j])
        jobs.append(job)
    bundled = isinstance(spec, str) and spec in bundled_catalogs()
    return {
        "catalog": spec if bundled else cat.to_dict(),
        "nodes": nodes,
        "time": time,
        "params": {k: DEFAULT_PARAMS[k] for k in ("H", "mu", "rho")},
        "jobs": jobs,
    }
