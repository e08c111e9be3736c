"""Seeded random rescheduling points for the heuristics' tests (N 1..100, J 1..500).

Times follow the shape of the paper's performance model (a 1-GPU K80 time of 10-300 h, an
M60 factor, sub-linear speed-up g^alpha), with some jobs unable to run on a GPU model, some
with progress, some already late, so that every branch of the heuristics is exercised.
"""

from __future__ import annotations

import numpy as np

from gpuaas.catalog import load_catalog
from gpuaas.instance import Instance

CATALOG = load_catalog("azure-2021")


def random_instance(seed: int, nodes: int | None = None, jobs: int | None = None) -> Instance:
    """A random single rescheduling point; N and J drawn in 1..100 and 1..500 unless given."""
    rng = np.random.default_rng(seed)
    cat = CATALOG
    N = int(nodes if nodes is not None else rng.integers(1, 101))
    J = int(jobs if jobs is not None else rng.integers(1, 501))
    base = rng.uniform(10, 300, J) * 3600.0
    m60 = rng.uniform(0.6, 1.1, J)
    alpha = rng.uniform(0.4, 0.95, J)
    is_m60 = np.array([cat.gpu_models[v] == "M60" for v in cat.cfg_vm])
    g = cat.cfg_gpus.astype(float)
    work = (
        base[:, None] * np.where(is_m60[None, :], m60[:, None], 1.0) / g[None, :] ** alpha[:, None]
    )
    work *= rng.uniform(0.97, 1.03, work.shape)  # VM types of one GPU model differ slightly
    no_k80 = rng.random(J) < 0.1
    no_m60 = (rng.random(J) < 0.1) & ~no_k80
    work[no_k80[:, None] & ~is_m60[None, :]] = np.inf
    work[no_m60[:, None] & is_m60[None, :]] = np.inf
    progress = np.where(rng.random(J) < 0.3, rng.uniform(0, 0.9, J), 0.0)
    now = float(rng.uniform(0, 1e5))
    min_t = np.min(work, axis=1) * (1 - progress)
    due = now + min_t * rng.uniform(-0.5, 3.0, J)
    return Instance(
        catalog=cat,
        nodes=N,
        job_ids=tuple(f"j{i}" for i in range(J)),
        release=np.zeros(J),
        due=due,
        weight=rng.uniform(0.003, 0.015, J),
        work=work,
        progress=progress,
        time=now,
    )


def tiny_instance(
    work_rows: list[dict[tuple[str, int], float]],
    due: list[float],
    nodes: int,
    weight: float = 0.01,
) -> Instance:
    """A hand-made instance: per job {(vm, g): seconds}; absent configurations cannot run."""
    cat = CATALOG
    J = len(work_rows)
    work = np.full((J, cat.n_configs), np.inf)
    for j, row in enumerate(work_rows):
        for (vm, g), t in row.items():
            work[j, cat.config(cat.vm_index(vm), g)] = t
    return Instance(
        catalog=cat,
        nodes=nodes,
        job_ids=tuple(f"j{i}" for i in range(J)),
        release=np.zeros(J),
        due=np.array(due, dtype=float),
        weight=np.full(J, weight),
        work=work,
    )
