"""The speed model: each job's actual / predicted time, learned from what is measured of it.

Predicted times are wrong (`gpuaas.noise`): a job slower than predicted looks nearly done
until it is late. The Rescheduler therefore keeps, per job and configuration c it ran on, the
seconds it was observed running there (E_c) and the predicted seconds of the progress it made
in them (W_c = progress made x predicted whole-job time on c), from consecutive progress
reports on one placement (`Job.observed`); and, per configuration, the ratio a throughput
report measured (`Job.measured`). From them it estimates the ratio r_c = actual / predicted
time of the job on every configuration, shrunk toward the prediction (r = 1) while evidence is
thin, in log space (a Gaussian prior on log r, centred on the prediction, and observations whose
weight grows with the seconds observed: the posterior mean, i.e. a credibility weight):

    log r̂_c = log(E_c / W_c)            (c's observed ratio; a measured one when reported)
    L       = Σ_c w_c log r̂_c / (K + Σ_c w_c)          shared by all the job's configurations
    log r_c = L + w_c / (w_c + K) (log r̂_c - L)        refined where the job ran

with w_c = E_c (a measured configuration: at least K) and K = `CREDIBILITY` seconds: K
seconds of observed progress weigh as much as the prediction. A measured configuration's
estimate is its measurement (log r_c = log r̂_c). Configurations the job never ran on get the
shared L: the error of a job's time is partly the job's own (its size, its input) and partly
the configuration's (scaling on g GPUs, a GPU model's speed), and only the first carries over.

Every method sees the estimate (the Instance's whole-job times are the predicted ones x r);
progress between reports, the work a restart loses and the ETA of `Rescheduler.unfinished`
use it too. Without evidence r = 1 exactly, so exact predictions change nothing.

**Co-location** (`gpuaas.colocation`; `RunConfig.colocation`). A job that shared its VM ran
slower than alone by the product of its pairs' speeds. Its own ratio absorbs that where it
runs, whatever the decisions know: the per-job plans model no co-location, and this is how
they see it (counting the seconds as those it would have taken alone, so that only the
re-packing saw the slowdown, cost 7 % more on Eva's pai_200 in gpuaas's simulator,
`scripts/results/eva-setting.md`). With "learn", each report of a job of workload a that
shared its node with jobs of workloads b_1..b_k (the jobs placed there at the report: the
company of the interval since the last event, when reports come at every event, as the
simulator sends them) also says that its log ratio against the prediction, y = log(E / W),
is Σ_b n_b θ_ab, n_b the jobs of workload b beside it and θ_ab = -log (speed of a beside b):
one row, weighing its E seconds, of a least-squares problem per workload a, kept as its
normal equations G_a = Σ E n nᵀ, h_a = Σ E n y (`colocation_seen`). The learned
θ_a = (G_a + K I)^-1 h_a (ridge: shrunk toward no slowdown while evidence is thin, like r),
the learned speed exp(-max(0, θ_ab)). A job's own error, mean zero over the jobs of a
workload, averages out. Jobs without a workload name neither teach nor are taught. With "ignore", a slowed job's own
ratio absorbs its slowdown.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gpuaas.rescheduler.records import touch

if TYPE_CHECKING:
    from gpuaas.rescheduler.records import Job
    from gpuaas.rescheduler.state import RunState

#: seconds of observed progress that weigh as much as the prediction (module docstring): the
#: first minutes of a run (framework start, data-loader warm-up, autotuning) measure a speed
#: below the steady one, so a few minutes of it should not override the prediction
CREDIBILITY = 60.0
#: the share of a job's (log) error that is the job's own and carries over to its other
#: configurations (the rest is the configuration's) before the cluster's completed jobs say
#: otherwise (`pooled_share`), and how many jobs' worth of evidence that guess weighs
JOB_SHARE = 1.0
PRIOR_JOBS = 5.0
#: estimated ratios are kept within [1 / MAX_RATIO, MAX_RATIO] (a job reported stalled)
MAX_RATIO = 100.0

#: the normal equations of each workload a's co-location slowdowns (module docstring):
#: (a, b, c, G_a[b, c]) and (a, b, "", h_a[b])
PairEvidence = tuple[tuple[str, str, str, float], ...]
#: (configuration, seconds observed, predicted seconds of the progress made in them)
Observed = tuple[tuple[int, float, float], ...]
#: (configuration, actual / predicted ratio measured by a throughput report)
Measured = tuple[tuple[int, float], ...]


def observe(observed: Observed, c: int, seconds: float, predicted: float) -> Observed:
    """`observed` with `seconds` more on configuration c, in which the job made progress worth
    `predicted` seconds (a new tuple: records are never changed in place)."""
    out = dict((k, (e, w)) for k, e, w in observed)
    e, w = out.get(c, (0.0, 0.0))
    out[c] = (e + seconds, w + predicted)
    return tuple((k, e, w) for k, (e, w) in sorted(out.items()))


def measure(measured: Measured, c: int, ratio: float) -> Measured:
    """`measured` with configuration c's ratio replaced by `ratio`."""
    out = dict(measured)
    out[c] = ratio
    return tuple(sorted(out.items()))


def ratios(
    observed: Observed,
    measured: Measured,
    n_configs: int,
    learn: bool,
    credibility: float = CREDIBILITY,
    job_share: float = JOB_SHARE,
) -> np.ndarray | None:
    """(C,) estimated actual / predicted time per configuration (module docstring); None when
    nothing applies (r = 1 everywhere). Without `learn` only measured configurations change."""
    if not measured and not (learn and observed):
        return None
    log_hat: dict[int, float] = {}
    seconds: dict[int, float] = {}
    if learn:
        for c, e, w in observed:
            if e > 0.0:
                log_hat[c] = _clamp(math.log(e / w) if w > 0.0 else math.inf)
                seconds[c] = e
    for c, m in measured:
        log_hat[c] = _clamp(math.log(m))
        seconds[c] = max(seconds.get(c, 0.0), credibility)
    # y_c = u + v_c + noise: var u = share, var v_c = 1 - share, var noise = K / E_c (units
    # of the prior's variance); û and v̂_c are the posterior means
    spread = {c: (1.0 - job_share) + credibility / seconds[c] for c in log_hat}
    precision = 1.0 / job_share + sum(1.0 / s for s in spread.values())
    shared = sum(log_hat[c] / spread[c] for c in log_hat) / precision if learn else 0.0
    out = np.full(n_configs, shared)
    for c, lh in log_hat.items():
        own = 1.0 - job_share
        out[c] = shared + own / (own + credibility / seconds[c]) * (lh - shared)
    out = np.exp(out)
    for c, m in measured:
        out[c] = min(MAX_RATIO, max(1.0 / MAX_RATIO, m))
    return out


#: (observations, Σ y², degrees of freedom, Σ within-job squares) over completed jobs
Pool = tuple[int, float, int, float]
EMPTY_POOL: Pool = (0, 0.0, 0, 0.0)


def pool(stats: Pool, observed: Observed) -> Pool:
    """`stats` with a completed job's evidence: the log ratio y_c of each configuration it was
    observed on for at least `CREDIBILITY` seconds, and, with two or more, their spread around
    the job's mean (what the configurations' own errors add). Each y_c is kept within
    log MAX_RATIO as the job's own estimate is (a progress report of 1e-313 made it inf, and
    the pool, then the saved state, inf and nan)."""
    ys = [_clamp(math.log(e / w)) for _, e, w in observed if e >= CREDIBILITY and w > 0.0]
    if not ys:
        return stats
    n, sq, dof, within = stats
    mean = sum(ys) / len(ys)
    return (
        n + len(ys),
        sq + sum(y * y for y in ys),
        dof + len(ys) - 1,
        within + sum((y - mean) ** 2 for y in ys),
    )


def pooled_share(stats: Pool) -> float:
    """The job share the completed jobs give (empirical Bayes): 1 - (the spread between a
    job's configurations) / (the spread of all log ratios), blended with `JOB_SHARE` weighing
    `PRIOR_JOBS` jobs; in [0.05, 1]."""
    n, sq, dof, within = stats
    if not n or not dof or sq <= 0.0:  # no completed job's spread (a pool restored so too)
        return JOB_SHARE
    seen = min(1.0, max(0.0, 1.0 - (within / dof) / (sq / n)))
    share = (PRIOR_JOBS * JOB_SHARE + dof * seen) / (PRIOR_JOBS + dof)
    return max(0.05, share)


def _clamp(log_ratio: float) -> float:
    top = math.log(MAX_RATIO)
    return min(top, max(-top, log_ratio))


# -- a job's estimate in a running system (`state.RunState`) ------------------------------------


def report(s: RunState, job: Job, p: float) -> None:
    """Measured progress p: the evidence of its speed since the last measurement on this
    placement, then p replaces the predicted progress."""
    touch(s, job)
    learn = s.config.colocation == "learn"
    if (s.config.learn_speed or learn) and job.anchor is not None and job.cfg >= 0:
        p0, run0 = job.anchor
        seconds = job.running - run0
        if seconds > 0.0:
            made = max(0.0, p - p0) * float(job.work[job.cfg])
            if learn and made > 0.0:
                learn_colocation(s, job, beside(s, job), seconds, made)
            if s.config.learn_speed:
                job.observed = observe(job.observed, hardware_of(s, job.cfg), seconds, made)
                flag(job)
    job.progress = job.reported = p
    job.anchor = (p, job.running) if job.cfg >= 0 else None


def throughput(s: RunState, job: Job, seconds: float) -> None:
    """A throughput report: the job's whole-job time where it runs is `seconds`."""
    touch(s, job)
    job.measured = measure(job.measured, hardware_of(s, job.cfg), seconds / job.work[job.cfg])
    flag(job)


def flag(job: Job) -> None:
    """The job's columns (if attached) learn that it has speed evidence (`Columns.evidence`)."""
    if job.cols is not None:
        job.cols.evidence[job.row] = bool(job.observed or job.measured)


def estimate(s: RunState, job: Job) -> np.ndarray | None:
    """(C,) the job's estimated actual / predicted times (None: the predictions), cached
    while its evidence is the same (`RunState.speed_cache`)."""
    if not job.observed and not job.measured:
        return None
    share = pooled_share(s.speed_pool)
    hit = s.speed_cache.get(job.id)
    if hit is None or hit[0] is not job.observed or hit[1] is not job.measured or hit[2] != share:
        r = ratios(
            job.observed,
            job.measured,
            s.catalog.n_configs,
            s.config.learn_speed,
            job_share=share,
        )
        if r is not None and s.hardware is not None:
            r = r[s.hardware]
        hit = s.speed_cache[job.id] = (job.observed, job.measured, share, r)
    return hit[3]


def hardware_of(s: RunState, c: int) -> int:
    """Configuration c's hardware: its own, or a spot variant's on-demand configuration."""
    return c if s.hardware is None else int(s.hardware[c])


def ratio(s: RunState, job: Job, c: int) -> float:
    """The job's estimated actual / predicted time on configuration c."""
    r = estimate(s, job)
    return 1.0 if r is None else float(r[c])


def work(s: RunState, job: Job) -> np.ndarray:
    """(C,) the job's whole-job times at its estimated speed."""
    r = estimate(s, job)
    return job.work if r is None else job.work * r


# -- co-location (module docstring) ----------------------------------------------------------


def decision_table(s: RunState) -> dict[str, dict[str, float]] | None:
    """The co-location table the decisions get (`RunConfig.colocation`): the given one, the
    learned one, or None."""
    mode = s.config.colocation
    if mode == "table":
        return s.colocation
    if mode == "learn" and s.colocation_seen:
        return learned(s.colocation_seen)
    return None


def learned(seen: PairEvidence, credibility: float = CREDIBILITY) -> dict[str, dict[str, float]]:
    """The table of the learned evidence (module docstring): per workload a, the ridge
    least-squares slowdowns θ = (G + K I)^-1 h of its companions, each pair's speed
    exp(-max(0, θ_b)) (at most 1, shrunk toward 1 while evidence is thin)."""
    by: dict[str, tuple[dict[tuple[str, str], float], dict[str, float]]] = {}
    for a, b, c, v in seen:
        gram, h = by.setdefault(a, ({}, {}))
        if c:
            gram[(b, c)] = v
        else:
            h[b] = v
    out: dict[str, dict[str, float]] = {}
    for a, (gram, h) in by.items():
        names = sorted(h)
        index = {b: i for i, b in enumerate(names)}
        m = np.eye(len(names)) * credibility
        for (b, c), v in gram.items():
            m[index[b], index[c]] += v
        theta = np.linalg.solve(m, np.array([h[b] for b in names]))
        out[a] = {b: math.exp(-max(0.0, float(t))) for b, t in zip(names, theta)}
    return out


def beside(s: RunState, job: Job) -> list[str]:
    """The workload names of the other jobs on the job's node ("" for one without)."""
    rows = s.order()
    node = s.cols.hot["node"][rows]
    others = np.flatnonzero(node == job.node).tolist()
    jobs = s.cols.job
    return [jobs[rows[i]].workload for i in others if jobs[rows[i]] is not job]


def learn_colocation(
    s: RunState, job: Job, company: list[str], seconds: float, made: float
) -> None:
    """The evidence of a report of `job` beside `company` on its pairs' speeds (module
    docstring); none where a job or a companion has no name."""
    named = [b for b in company if b]
    if not job.workload or not named or len(named) != len(company):
        return
    y = _clamp(math.log(seconds / made))
    counts: dict[str, int] = {}
    for b in named:
        counts[b] = counts.get(b, 0) + 1
    a = job.workload
    seen = {(x, b, c): v for x, b, c, v in s.colocation_seen}
    for b, nb in counts.items():
        seen[(a, b, "")] = seen.get((a, b, ""), 0.0) + seconds * nb * y
        for c, nc in counts.items():
            seen[(a, b, c)] = seen.get((a, b, c), 0.0) + seconds * nb * nc
    s.colocation_seen = tuple((x, b, c, v) for (x, b, c), v in sorted(seen.items()))
