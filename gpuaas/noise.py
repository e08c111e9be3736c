"""Simulated prediction error: how a job's actual durations differ from the predicted ones.

Every decision uses predicted times; the simulator runs jobs for their *actual* times, the
predicted ones times a factor f (actual / predicted) per job and configuration. One level `a`
(`RunConfig.noise`: the mean absolute relative error E|f - 1|) and one of three models:

| model | f of job j on configuration c | what it stands for |
|---|---|---|
| `uniform` | 1 + U(-2a, 2a), one per job | the paper's "mean error below 11 %" (§2.2); the draws of every earlier release |
| `lognormal` | exp(σ Z_j), one per job | production runtime predictions: 3Sigma (Park et al., EuroSys '18) finds 8-23 % of them off by 2x or more in three cluster traces |
| `lognormal-config` | exp(σ/√2 Z_j + σ/2 (Z_jm + Z_jmg)) | the same, half of its log-variance per (job, GPU model m, GPU count g): a GPU model's speed and the scaling on g GPUs, which one factor per job cannot show |

σ solves E|exp(σZ) - 1| = exp(σ²/2)(2Φ(σ) - 1) = a (`lognormal_sigma`), so the three models
have the same mean absolute error at the same level: a = 0.1, 0.2, 0.4 give σ = 0.125, 0.246,
0.466 and 0.0 %, 0.5 % and 13.7 % of factors off by 2x or more (2Φ(-ln 2 / σ)); 3Sigma's
8-23 % is a = 0.33-0.52 (σ = 0.40-0.58). Levels are below `MAX_NOISE[model]` (uniform factors
must stay > 0).
Log-normal factors have median 1 (as likely 2x slower as 2x faster) and mean exp(σ²/2). In
`lognormal-config` the configurations of one GPU model and GPU count (the same GPUs in VMs of
several sizes) share their factor, and each marginal factor is log-normal with σ.

The draws come from their own seeded stream (SeedSequence([seed, 1])); `uniform` draws exactly
the J numbers it always drew, so earlier figures stay comparable.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpuaas.instance import Instance

#: the error models (module docstring)
NOISE_MODELS = ("uniform", "lognormal", "lognormal-config")
DEFAULT_NOISE_MODEL = "uniform"
#: the levels (mean absolute relative error) each model takes are below these: uniform factors
#: stay > 0; log-normal ones reach past 3Sigma's 23 % off by 2x
MAX_NOISE = {"uniform": 0.5, "lognormal": 1.0, "lognormal-config": 1.0}


def lognormal_sigma(level: float) -> float:
    """σ of a median-1 log-normal factor whose mean absolute relative error is `level`:
    the root of exp(σ²/2)(2Φ(σ) - 1) = level (increasing in σ), by bisection."""
    if level <= 0.0:
        return 0.0
    lo, hi = 0.0, 4.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.exp(mid * mid / 2.0) * math.erf(mid / math.sqrt(2.0)) < level:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def draw_factors(trace: Instance, seed: int, level: float, model: str) -> np.ndarray:
    """(J, C) actual / predicted duration of each job on each configuration (all 1 at level 0);
    the log-normal models through `log_parts`."""
    J, C = trace.n_jobs, trace.catalog.n_configs
    if level <= 0.0:
        return np.ones((J, C))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))  # the noise stream
    if model == "uniform":
        per_job = 1.0 + rng.uniform(-2 * level, 2 * level, size=J)
        return np.repeat(per_job[:, None], C, axis=1)
    job, config = log_parts(trace, rng, level, model)
    return np.exp(job[:, None] + config)


def log_parts(
    trace: Instance, rng: np.random.Generator, level: float, model: str
) -> tuple[np.ndarray, np.ndarray]:
    """The log of a log-normal model's factors in two parts: the job's own (J,), shared by its
    configurations, and the configuration's (J, C) (0 for `lognormal`), drawn from `rng` in
    this order."""
    J, C = trace.n_jobs, trace.catalog.n_configs
    sigma = lognormal_sigma(level)
    if model == "lognormal":
        return sigma * rng.standard_normal(J), np.zeros((J, C))
    if model != "lognormal-config":
        raise ValueError(f"unknown noise model {model!r}")
    cat = trace.catalog
    gpu_model = cat.gpu_model_id[cat.cfg_vm]  # (C,)
    gpus = cat.cfg_gpus - 1  # (C,)
    job = rng.standard_normal(J)
    per_model = rng.standard_normal((J, int(gpu_model.max()) + 1))
    per_count = rng.standard_normal((J, int(gpu_model.max()) + 1, int(cat.gpus.max())))
    config = sigma / 2.0 * (per_model[:, gpu_model] + per_count[:, gpu_model, gpus])
    return sigma / math.sqrt(2.0) * job, config


def actual_trace(trace: Instance, factors: np.ndarray) -> Instance:
    """The trace with its actual durations as the predicted ones (what an oracle is told)."""
    import dataclasses

    return dataclasses.replace(trace, work=trace.work * factors)


def error_summary(trace: Instance, factors: np.ndarray, level: float, model: str) -> dict[str, Any]:
    """The prediction error drawn, over the (job, configuration) pairs a job can run on:
    model, level, σ (log-normal models), mean |f - 1|, the share off by 2x or more (f >= 2 or
    f <= 1/2), and the least and largest factor."""
    f = factors[np.isfinite(trace.work)] if trace.n_jobs else np.ones(0)
    off = (f >= 2.0) | (f <= 0.5)
    return {
        "model": model,
        "level": level,
        "sigma": lognormal_sigma(level) if model != "uniform" else None,
        "mean_abs_error": float(np.abs(f - 1.0).mean()) if f.size else 0.0,
        "off_by_2x": float(off.mean()) if f.size else 0.0,
        "min_factor": float(f.min()) if f.size else 1.0,
        "max_factor": float(f.max()) if f.size else 1.0,
    }
