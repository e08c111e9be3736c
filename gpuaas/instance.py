"""Instance: the problem at one rescheduling point (P1), or a whole trace, as numpy arrays.

The JSON format (docs/design.md §10, schema `instances/instance.schema.json`) is parsed and
checked here; every error names the file, the field and the problem. Arrays are read-only:
a change makes a new Instance (`dataclasses.replace`, `subset`, `released`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from gpuaas import checks
from gpuaas.catalog import Catalog, bundled_catalogs, load_catalog
from gpuaas.colocation import Colocation, check_name, parse_table
from gpuaas.errors import InputError, brief
from gpuaas.files import read_json
from gpuaas.kernel_args import readonly
from gpuaas.limits import (
    MAX_DATA_GB,
    MAX_ID,
    MAX_JOB_CONFIGS,
    MAX_JOBS,
    MAX_MEMORY,
    MAX_NODES,
    MAX_SECONDS,
    MAX_VCPUS,
    MAX_WEIGHT,
    MIN_SECONDS,
)
from gpuaas.transfer import DEFAULT_DATA_GB, data_gb

DEFAULT_PARAMS = {"H": 3600.0, "mu": 1.0, "rho": 100.0, "overhead": 0.0, "startup": 0.0}
_TOP_FIELDS = {"catalog", "nodes", "time", "params", "jobs", "colocation"}
_JOB_FIELDS = {
    "id",
    "release",
    "due",
    "weight",
    "times",
    "workload",
    "progress",
    "placement",
    "checkpoint",
    "cpus",
    "memory",
    "data_gb",
    "data_at",
}
#: a job's demands beside GPUs (docs/design.md, "CPU and memory beside GPUs"): the Instance
#: and JobSpec field -> the catalog's capacity array it is held to
DEMANDS = {"cpus": "vcpus", "memory": "memory"}


def row_extremes(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(J,) per row of `times` (J, C) its largest finite value (-inf: none) and its least
    (NaN where the row has one), read-only: numpy's ``where(isfinite(times), times,
    -inf).max(axis=1)`` and ``times.min(axis=1)``, in one compiled pass instead of four over
    the whole array (the Rescheduler builds an Instance at every event). Where a value is zero
    or NaN, numpy's own (which of 0.0 and -0.0 its min and max return depends on its loops)."""
    (times,) = readonly(np.ascontiguousarray(times, dtype=np.float64))
    high, low, other = _row_extremes(times)
    if other:
        high = np.where(np.isfinite(times), times, -np.inf).max(axis=1)
        low = times.min(axis=1)
    high.setflags(write=False)
    low.setflags(write=False)
    return high, low


def remaining(work: np.ndarray, left: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, high, low), read-only: ``times = work * left[:, None]`` ((J, C) whole-job times
    by the share of each job's work left) and `row_extremes(times)`, in one compiled pass
    (the same products; numpy's extremes where a time is zero or NaN). An Instance's times."""
    work, left = readonly(
        np.ascontiguousarray(work, dtype=np.float64), np.ascontiguousarray(left, dtype=np.float64)
    )
    if not work.size:
        times = work * left[:, None]
        high, low = row_extremes(times) if len(times) else (np.zeros(0), np.zeros(0))
    else:
        times, high, low, other = _remaining(work, left)
        if other:
            high, low = row_extremes(times)
    for a in (times, high, low):
        a.setflags(write=False)
    return times, high, low


@njit(cache=True)
def _remaining(work, left):  # pragma: no cover - compiled
    """`remaining`'s pass: the times and their `_extremes` row by row, and whether some time
    is zero or NaN (then the extremes are not used)."""
    J, C = work.shape
    times = np.empty((J, C))
    high = np.empty(J)
    low = np.empty(J)
    other = False
    for j in range(J):
        f = left[j]
        for c in range(C):
            times[j, c] = work[j, c] * f
        high[j], low[j], bad = _extremes(times[j])
        other |= bad
    return times, high, low, other


def row_min(a: np.ndarray) -> np.ndarray:
    """numpy's ``a.min(axis=1)`` (also with ``initial=np.inf``) of a (J, C) float array, in
    the compiled pass of `row_extremes` (numpy's own where a value is zero or NaN)."""
    (a,) = readonly(np.ascontiguousarray(a, dtype=np.float64))
    _, low, other = _row_extremes(a)
    return a.min(axis=1, initial=np.inf) if other else low


def least_sum(values: np.ndarray, rows: np.ndarray, add: np.ndarray) -> np.ndarray:
    """``row_min(values[rows] + add)`` (`values` (J, C), `rows` (R,) int, `add` (R, C)): per
    row r the least of values[rows[r], c] + add[r, c], the same sums and the same least
    without the (R, C) gather and sum (numpy's own where a sum is zero or NaN)."""
    values, rows, add = readonly(
        np.ascontiguousarray(values, dtype=np.float64),
        np.ascontiguousarray(rows, dtype=np.int64),
        np.ascontiguousarray(add, dtype=np.float64),
    )
    low, other = _least_sum(values, rows, add)
    return row_min(values[rows] + add) if other else low


@njit(cache=True)
def _least_sum(values, rows, add):  # pragma: no cover - compiled
    """`least_sum`'s pass: the least of each row's sums (`_extremes`), and whether some sum is
    zero or NaN (then its result is not used)."""
    R, C = add.shape
    low = np.empty(R)
    row = np.empty(C)
    other = False
    for r in range(R):
        j = rows[r]
        for c in range(C):
            row[c] = values[j, c] + add[r, c]
        _, low[r], bad = _extremes(row)
        other |= bad
    return low, other


@njit(cache=True)
def _row_extremes(times):  # pragma: no cover - compiled
    """`row_extremes`'s pass (`_extremes` row by row), and whether some value is zero or NaN
    (then its results are not used)."""
    J = times.shape[0]
    high = np.empty(J)
    low = np.empty(J)
    other = False
    for j in range(J):
        high[j], low[j], bad = _extremes(times[j])
        other |= bad
    return high, low, other


@njit(cache=True, inline="always")
def _extremes(row):  # pragma: no cover - compiled
    """(largest finite value or -inf, least value, whether some value is zero or NaN) of one
    row, the one pass `_row_extremes`, `_remaining` and `_least_sum` share. Four columns at a
    time, each into its own least and largest (four independent chains of compare-and-select,
    not one): without zeros and NaNs the least and largest of the same values whichever way
    they are paired (no two differ but in sign)."""
    C = row.shape[0]
    l0 = l1 = l2 = l3 = np.inf
    h0 = h1 = h2 = h3 = -np.inf
    bad = False
    c = 0
    while c + 4 <= C:
        a = row[c]
        b = row[c + 1]
        d = row[c + 2]
        e = row[c + 3]
        bad |= (a != a) | (b != b) | (d != d) | (e != e)
        bad |= (a == 0.0) | (b == 0.0) | (d == 0.0) | (e == 0.0)
        l0 = a if a < l0 else l0
        l1 = b if b < l1 else l1
        l2 = d if d < l2 else l2
        l3 = e if e < l3 else l3
        h0 = a if (a > h0 and a < np.inf) else h0
        h1 = b if (b > h1 and b < np.inf) else h1
        h2 = d if (d > h2 and d < np.inf) else h2
        h3 = e if (e > h3 and e < np.inf) else h3
        c += 4
    while c < C:
        a = row[c]
        bad |= (a != a) | (a == 0.0)
        l0 = a if a < l0 else l0
        h0 = a if (a > h0 and a < np.inf) else h0
        c += 1
    return max(max(h0, h1), max(h2, h3)), min(min(l0, l1), min(l2, l3)), bad


def _ro(a: Any, dtype: Any) -> np.ndarray:
    out = np.array(a, dtype=dtype)
    out.setflags(write=False)
    return out


def _immutable(a: Any, dtype: Any) -> np.ndarray:
    """`_ro(a, dtype)`, but `a` itself where it is already immutable: a read-only C-contiguous
    array of `dtype` whose memory is held by read-only arrays only (its bases up to the one
    owning the memory: not a read-only view of writable memory). An Instance's own (J, C)
    `work` carried over by `dataclasses.replace` and the Rescheduler's fresh one
    (`gpuaas.rescheduler.view`) are not copied again, at every event."""
    if (
        isinstance(a, np.ndarray)
        and a.dtype == dtype
        and a.flags.c_contiguous
        and not a.flags.writeable
    ):
        b = a
        while isinstance(b.base, np.ndarray) and not b.base.flags.writeable:
            b = b.base
        if b.base is None and b.flags.owndata:
            return a
    return _ro(a, dtype)


@dataclass(frozen=True, eq=False)
class Instance:
    """Jobs, nodes and catalog at time T_c, with the arrays the solvers read.

    `work[j, c]` is the time (s) to run the whole job j with configuration c (inf: cannot run);
    `times[j, c] = work[j, c] * (1 - progress[j])` is t_jvg, the remaining time. `current_node`
    and `current_cfg` give where a job runs now (-1: waiting); they are inputs for baselines and
    warm starts, not constraints of P1, except for the running jobs `pinned` (a disruption
    limit, `RunConfig.max_moves`): every solution keeps those on their node and configuration.
    """

    catalog: Catalog
    nodes: int
    job_ids: tuple[str, ...]
    release: np.ndarray  # (J,) s
    due: np.ndarray  # (J,) absolute due date, s
    weight: np.ndarray  # (J,) omega_j, $/s
    work: np.ndarray  # (J, C) s, inf where the job cannot run
    progress: np.ndarray | None = None  # (J,) fraction of work done
    time: float = 0.0  # T_c
    H: float = DEFAULT_PARAMS["H"]
    mu: float = DEFAULT_PARAMS["mu"]
    rho: float = DEFAULT_PARAMS["rho"]
    overhead: float = DEFAULT_PARAMS["overhead"]  # s of work a moved running job loses
    startup: float = DEFAULT_PARAMS["startup"]  # s a VM opened or resized is billed but not usable
    current_node: np.ndarray | None = None  # (J,) int, -1 waiting
    current_cfg: np.ndarray | None = None  # (J,) int, -1 waiting
    pinned: np.ndarray | None = None  # (J,) bool: running jobs that must stay where they are
    checkpoint: np.ndarray | None = None  # (J,) s between a job's checkpoints; nan: the default
    hazard: np.ndarray | None = None  # (V,) interruptions per second of a VM held (spot types)
    outage: np.ndarray | None = None  # (V,) s an outage of each spot type is expected to last
    room: np.ndarray | None = None  # (V,) VMs of each type that may still open (a run's state)
    ready: np.ndarray | None = None  # (J,) when a running job's VM can run it (start-up); -inf: now
    # (J,) s of work moving running job j loses, where jobs differ (a run's state, as `ready`:
    # not in the file format); nan: `overhead`
    move_loss: np.ndarray | None = None
    cpus: np.ndarray | None = None  # (J,) vCPUs a job needs wherever it runs; 0: none declared
    memory: np.ndarray | None = None  # (J,) GiB a job needs wherever it runs; 0: none declared
    data_gb: np.ndarray | None = None  # (J,) GB of checkpoint a move between locations carries
    data_at: np.ndarray | None = None  # (J,) int: where its data is (`location_names`); -1: none
    workload: tuple[str, ...] | None = None  # (J,) each job's workload name; "": none given
    # the co-location table by workload name (`gpuaas.colocation.parse_table`); None: no slowdown
    colocation: Mapping[str, Mapping[str, float]] | None = None
    times: np.ndarray = field(init=False)  # (J, C) t_jvg, remaining
    rel_due: np.ndarray = field(init=False)  # (J,) d_j = due_j - T_c
    max_time: np.ndarray = field(init=False)  # (J,) M_j = max finite t_jvg
    min_time: np.ndarray = field(init=False)  # (J,) min t_jvg

    def __post_init__(self) -> None:
        J = len(self.job_ids)
        C = self.catalog.n_configs
        work = _immutable(self.work, np.float64).reshape(J, C)
        progress = np.zeros(J) if self.progress is None else self.progress
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        for k in DEMANDS:
            v = np.zeros(J) if getattr(self, k) is None else np.asarray(getattr(self, k))
            if v.size != J and not v.any():
                v = np.zeros(J)  # carried by `dataclasses.replace` to other jobs: none declared
            set_(k, _ro(v, np.float64).reshape(J))
        gb = np.full(J, DEFAULT_DATA_GB) if self.data_gb is None else np.asarray(self.data_gb)
        at = np.full(J, -1) if self.data_at is None else np.asarray(self.data_at)
        set_("data_gb", _ro(gb if gb.size == J else np.full(J, DEFAULT_DATA_GB), np.float64))
        set_("data_at", _ro(at if at.size == J else np.full(J, -1), np.int64))
        if (self.data_gb < 0).any() or (self.data_at >= len(self.catalog.places)).any():
            raise ValueError("data_gb must be >= 0 and data_at a location of the catalog")
        names = ("",) * J if self.workload is None else tuple(self.workload)
        if len(names) != J:
            names = ("",) * J  # carried by `dataclasses.replace` to other jobs: as data_gb's
        # a pass over every job's name only where some job names a workload (`tuple.count`
        # compares them in C: the Rescheduler builds an Instance at every event)
        for j, name in enumerate(names if names.count("") != J else ()):
            if name != "":
                check_name(name, None, f"jobs[{j}].workload")
        set_("workload", names)
        if self.colocation is not None:
            set_("colocation", parse_table(self.colocation))
        if self.has_demands:
            work = _ro(np.where(self.fits_alone(), work, np.inf), np.float64)
        set_("nodes", int(self.nodes))
        set_("job_ids", tuple(self.job_ids))
        set_("time", float(self.time))
        for k in DEFAULT_PARAMS:
            set_(k, float(getattr(self, k)))
        set_("work", work)
        for k in ("release", "due", "weight"):
            set_(k, _ro(getattr(self, k), np.float64).reshape(J))
        set_("progress", _ro(progress, np.float64).reshape(J))
        for k in ("current_node", "current_cfg"):
            v = getattr(self, k)
            set_(k, _ro(np.full(J, -1) if v is None else v, np.int64).reshape(J))
        pinned = np.zeros(J) if self.pinned is None else np.asarray(self.pinned, dtype=bool)
        if pinned.size != J and not pinned.any():
            pinned = np.zeros(J)  # carried by `dataclasses.replace` to other jobs: pins nothing
        set_("pinned", _ro(pinned, bool).reshape(J))
        self._check_demands(work)
        if (self.pinned & (self.current_cfg < 0)).any():
            j = int(np.flatnonzero(self.pinned & (self.current_cfg < 0))[0])
            raise InputError(None, f"jobs[{j}].placement.pinned", "a waiting job cannot be pinned")
        V = self.catalog.n_vms
        for k, n, default in (
            ("checkpoint", J, np.nan),
            ("ready", J, -np.inf),
            ("move_loss", J, np.nan),
            ("hazard", V, 0.0),
            ("outage", V, 0.0),
            ("room", V, np.inf),
        ):
            v = getattr(self, k)
            if k == "move_loss" and v is not None and np.size(v) != n and np.isnan(v).all():
                v = None  # carried by `dataclasses.replace` to other jobs: none given
            set_(k, _ro(np.full(n, default) if v is None else v, np.float64).reshape(n))
        # work * (1 - progress) per row and each row's extremes in one pass (`remaining`)
        times, high, low = remaining(work, 1.0 - self.progress)
        set_("times", times)
        set_("rel_due", _ro(self.due - self.time, np.float64))
        set_("max_time", high)
        set_("min_time", low)

    # -- resources beside GPUs (docs/design.md) ---------------------------------------------
    @property
    def has_demands(self) -> bool:
        """Whether some job declares CPUs or memory (else every rule of them is void)."""
        return bool(self.cpus.any() or self.memory.any())

    def fits_alone(self) -> np.ndarray:
        """(J, C) bool: configuration c's VM type holds job j's CPUs and memory."""
        return fits_alone(self.catalog, self.cpus, self.memory)

    def _check_demands(self, work: np.ndarray) -> None:
        """Every job fits some configuration, and a running job the one it runs on; a job that
        may run on a GPU-less type holds some part of it (its vCPUs or memory there)."""
        cat = self.catalog
        if cat.has_gpu_less:
            cols = cat.gpu_less[cat.cfg_vm]
            free = np.isfinite(work[:, cols]) & (gpu_less_shares(cat, self.cpus, self.memory) <= 0)
            for j in np.flatnonzero(free.any(axis=1))[:1]:
                v = int(cat.cfg_vm[np.flatnonzero(cols)[free[j]][0]])
                has = [r for r in DEMANDS.values() if np.isfinite(getattr(cat, r)[v])]
                raise InputError(
                    None,
                    f"jobs[{j}] ({self.job_ids[j]}).cpus",
                    f"the job may run on {cat.vm_names[v]}, which has no GPUs: it must declare "
                    f"the {' or '.join(has)} it holds there (> 0), its share of the VM",
                )
        if not self.has_demands:
            return
        for j in np.flatnonzero(~np.isfinite(work).any(axis=1))[:1]:
            raise InputError(
                None,
                f"jobs[{j}] ({self.job_ids[j]})",
                f"needs {self.cpus[j]:g} vCPUs and {self.memory[j]:g} GiB of memory: no VM type "
                "of the catalog it can run on has them",
            )
        placed = np.flatnonzero(self.current_cfg >= 0)
        for j in placed[~np.isfinite(work[placed, self.current_cfg[placed]])][:1]:
            vm = self.catalog.vm_names[self.catalog.cfg_vm[self.current_cfg[j]]]
            raise InputError(
                None,
                f"jobs[{j}] ({self.job_ids[j]}).placement",
                f"runs on {vm}, which lacks its {self.cpus[j]:g} vCPUs or "
                f"{self.memory[j]:g} GiB of memory",
            )

    def colocation_model(self) -> Colocation | None:
        """The jobs' co-location slowdown (`gpuaas.colocation.Colocation`); None: no table."""
        return Colocation.of(self.workload, self.colocation)

    # -- sizes ------------------------------------------------------------------------------
    @property
    def n_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def n_configs(self) -> int:
        return self.catalog.n_configs

    @property
    def moves_cost(self) -> bool:
        """Whether moving a running job costs anything (`overhead`, a job's `move_loss` or
        `startup` > 0); in the paper's setting (0 and 0) it does not, and methods need not see
        the incumbent."""
        return self.overhead > 0 or self.startup > 0 or bool((self.move_loss > 0).any())

    def job_overhead(self) -> np.ndarray:
        """(J,) s of work a move costs each job: its `move_loss`, else `overhead`."""
        return np.where(np.isnan(self.move_loss), self.overhead, self.move_loss)

    # -- derived instances ------------------------------------------------------------------
    def with_spot(self) -> Instance:
        """The instance on its catalog with spot variants (`Catalog.with_spot`): a variant runs
        each job as fast as its on-demand type."""
        cat = self.catalog.with_spot()
        if cat is self.catalog:
            return self
        work = cat.spot_work(self.work)
        return dataclasses.replace(
            self, catalog=cat, work=work, hazard=None, outage=None, room=None
        )

    def at_locations(self, names: list[str] | tuple[str, ...]) -> tuple[Instance, np.ndarray]:
        """The instance on the VM types offered at `names` (`Catalog.select`: locations,
        regions or clouds), for a run that keeps to them (``--locations``), and the indices of
        the configurations it keeps (the columns of other (J, C) arrays); a job that can run
        nowhere there is an InputError. Only before jobs run (nothing current: a trace)."""
        if (self.current_cfg >= 0).any():
            raise InputError(None, "--locations", "applies to a trace, not to jobs already running")
        cat, cfgs = self.catalog.select(names)
        work = self.work[:, cfgs]
        none = np.flatnonzero(~np.isfinite(work).any(axis=1))
        if none.size:
            raise InputError(
                None,
                "--locations",
                f"job {self.job_ids[none[0]]!r} can run on no VM type at {', '.join(names)}",
            )
        kept = dataclasses.replace(
            self, catalog=cat, work=work, hazard=None, outage=None, room=None
        )
        return kept, cfgs

    def job_spec(self, j: int) -> JobSpec:
        """Job j as a submission (`Rescheduler.submit`): its data, its progress, no placement."""
        return JobSpec(
            id=self.job_ids[j],
            release=float(self.release[j]),
            due=float(self.due[j]),
            weight=float(self.weight[j]),
            work=self.work[j],
            progress=float(self.progress[j]),
            checkpoint=None if math.isnan(self.checkpoint[j]) else float(self.checkpoint[j]),
            cpus=float(self.cpus[j]),
            memory=float(self.memory[j]),
            data_gb=float(self.data_gb[j]),
            data_at=int(self.data_at[j]),
            workload=self.workload[j],
        )

    def subset(self, jobs: Any) -> Instance:
        """The instance restricted to the jobs at the given indices (in that order)."""
        idx = np.asarray(jobs, dtype=np.int64).reshape(-1)
        return dataclasses.replace(
            self,
            job_ids=tuple(self.job_ids[i] for i in idx),
            release=self.release[idx],
            due=self.due[idx],
            weight=self.weight[idx],
            work=self.work[idx],
            progress=self.progress[idx],
            current_node=self.current_node[idx],
            current_cfg=self.current_cfg[idx],
            pinned=self.pinned[idx],
            checkpoint=self.checkpoint[idx],
            ready=self.ready[idx],
            move_loss=self.move_loss[idx],
            cpus=self.cpus[idx],
            memory=self.memory[idx],
            data_gb=self.data_gb[idx],
            data_at=self.data_at[idx],
            workload=tuple(self.workload[i] for i in idx.tolist()),
        )

    def released(self) -> Instance:
        """The jobs already submitted at `time` (release <= time): what `gpuaas solve` schedules."""
        return self.subset(np.flatnonzero(self.release <= self.time))

    # -- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The instance in the file format of docs/design.md §10 (explicit `times`)."""
        cat = self.catalog
        jobs = []
        for j, jid in enumerate(self.job_ids):
            times = times_object(self.work[j].tolist(), cat)
            job: dict[str, Any] = {
                "id": jid,
                "release": float(self.release[j]),
                "due": float(self.due[j]),
                "weight": float(self.weight[j]),
                "times": times,
            }
            if self.progress[j] > 0:
                job["progress"] = float(self.progress[j])
            if math.isfinite(self.checkpoint[j]):
                job["checkpoint"] = float(self.checkpoint[j])
            for k in DEMANDS:
                if getattr(self, k)[j] > 0:
                    job[k] = float(getattr(self, k)[j])
            job |= data_fields(cat, float(self.data_gb[j]), int(self.data_at[j]))
            if self.workload[j]:
                job["workload"] = self.workload[j]  # its name (beside `times`)
            c = int(self.current_cfg[j])
            if c >= 0:
                job["placement"] = {
                    "node": int(self.current_node[j]),
                    "vm": cat.vm_names[cat.cfg_vm[c]],
                    "gpus": int(cat.cfg_gpus[c]),
                }
                if self.pinned[j]:
                    job["placement"]["pinned"] = True
            jobs.append(job)
        params: dict[str, Any] = {k: getattr(self, k) for k in DEFAULT_PARAMS}
        if self.hazard.any():
            params["hazard"] = {
                cat.vm_names[v]: float(self.hazard[v] * 3600.0) for v in np.flatnonzero(self.hazard)
            }
        out = {
            # by name only where the name reads it back (a bundled catalog)
            "catalog": cat.name
            if cat.name in bundled_catalogs() and not cat.has_spot and not cat.quotas
            else cat.to_dict(),
            "nodes": self.nodes,
            "time": self.time,
            "params": params,
            "jobs": jobs,
        }
        if self.colocation is not None:
            out["colocation"] = {a: dict(row) for a, row in self.colocation.items()}
        return out

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> Instance:
        """Parse and check the instance format; errors name `source`, the field and the problem."""
        if not isinstance(data, dict):
            raise InputError(source, None, "top level must be a JSON object")
        unknown = set(data) - _TOP_FIELDS
        if unknown:
            raise InputError(source, None, f"unknown field(s) {sorted(unknown)}")
        for req in ("catalog", "nodes", "jobs"):
            if req not in data:
                raise InputError(source, req, "missing required field")
        catalog = load_catalog(data["catalog"], source)
        nodes = data["nodes"]
        checks.nodes(nodes, source)
        time = checks.number(
            data.get("time", 0.0), "time", source, minimum=0.0, maximum=MAX_SECONDS
        )
        params = data.get("params", {})
        if not isinstance(params, dict):
            raise InputError(
                source, "params", f"must be an object with {', '.join(DEFAULT_PARAMS)}"
            )
        hazard = _hazard(params.get("hazard", {}), catalog, source)
        params = {k: v for k, v in params.items() if k != "hazard"}
        bad = set(params) - set(DEFAULT_PARAMS)
        if bad:
            raise InputError(
                source,
                "params",
                f"unknown field(s) {sorted(bad)}; allowed: {', '.join(DEFAULT_PARAMS)}",
            )
        p = {
            k: checks.number(
                params.get(k, d),
                f"params.{k}",
                source,
                minimum=0.0,
                maximum=MAX_WEIGHT if k in ("mu", "rho") else MAX_SECONDS,
            )
            for k, d in DEFAULT_PARAMS.items()
        }
        if p["H"] <= 0:
            raise InputError(source, "params.H", "must be > 0")
        jobs = data["jobs"]
        if not isinstance(jobs, list):
            raise InputError(source, "jobs", "must be a list")
        if len(jobs) > MAX_JOBS:
            raise InputError(
                source, "jobs", f"{len(jobs)} jobs; at most {MAX_JOBS} (gpuaas.limits)"
            )
        if len(jobs) * catalog.n_configs > MAX_JOB_CONFIGS:
            raise InputError(
                source,
                "jobs",
                f"{len(jobs)} jobs x {catalog.n_configs} configurations; "
                f"at most {MAX_JOB_CONFIGS} pairs (gpuaas.limits)",
            )
        parsed = []
        seen: set[str] = set()
        for j, job in enumerate(jobs):
            spec = parse_job(job, catalog, source, f"jobs[{j}]")
            if spec.id in seen:
                raise InputError(source, f"jobs[{j}].id", f"duplicate job id {spec.id!r}")
            seen.add(spec.id)
            parsed.append(spec)
        _check_placements(parsed, catalog, nodes, source)
        colocation = None
        if "colocation" in data:
            colocation = parse_table(data["colocation"], source)
        work = np.array([spec.work for spec in parsed]).reshape(len(parsed), catalog.n_configs)
        return cls(
            catalog=catalog,
            nodes=nodes,
            job_ids=tuple(spec.id for spec in parsed),
            release=np.array([spec.release for spec in parsed]),
            due=np.array([spec.due for spec in parsed]),
            weight=np.array([spec.weight for spec in parsed]),
            work=work,
            progress=np.array([spec.progress for spec in parsed]),
            current_node=np.array([spec.node for spec in parsed], dtype=np.int64),
            current_cfg=np.array([spec.cfg for spec in parsed], dtype=np.int64),
            pinned=np.array([spec.pinned for spec in parsed], dtype=bool),
            checkpoint=np.array(
                [math.nan if spec.checkpoint is None else spec.checkpoint for spec in parsed]
            ),
            cpus=np.array([spec.cpus for spec in parsed]),
            memory=np.array([spec.memory for spec in parsed]),
            data_gb=np.array([spec.data_gb for spec in parsed]),
            data_at=np.array([spec.data_at for spec in parsed], dtype=np.int64),
            workload=tuple(spec.workload for spec in parsed),
            colocation=colocation,
            hazard=hazard,
            time=time,
            **p,
        )


@dataclass(frozen=True)
class JobSpec:
    """One job of the instance format: whole-job times per configuration (inf: cannot run).
    Built anywhere (the parser, a trace, Python code), it meets `check_job`'s limits."""

    id: str
    release: float
    due: float
    weight: float
    work: np.ndarray  # (C,)
    progress: float
    node: int = -1  # where the job runs now (placement), -1 waiting
    cfg: int = -1
    pinned: bool = False  # it must stay there (placement.pinned)
    checkpoint: float | None = None  # s between its checkpoints; None: the run's default
    cpus: float = 0.0  # vCPUs it needs wherever it runs (docs/design.md)
    memory: float = 0.0  # GiB it needs wherever it runs
    data_gb: float = DEFAULT_DATA_GB  # GB of checkpoint a move between locations carries
    data_at: int = -1  # where its data is (the catalog's `location_names`); -1: nowhere yet
    workload: str = ""  # its workload's name (the co-location table's); "": none given

    def __post_init__(self) -> None:
        check_job(self)

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-able (`work`: null where inf): the one serialiser of a job (a
        `Submission`'s, so its digest too, `from_dict` reads it back). The instance format
        (`Instance.to_dict`) and a saved state write the same fields but name the VM types
        (`times`, `placement`) where this form has catalog indices: it needs no catalog."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["work"] = work_list(self.work)
        for k in DEMANDS:  # none declared: the digest of a job is what it was before demands
            if not out[k]:
                del out[k]
        for k, default in (("data_gb", DEFAULT_DATA_GB), ("data_at", -1), ("workload", "")):
            if out[k] == default:
                del out[k]
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "job") -> JobSpec:
        """The JobSpec of a `to_dict` object (`node`, `cfg`, `pinned`, `checkpoint` may be
        left out: their defaults), checked (`check_job`); InputError naming the field."""
        if not isinstance(data, Mapping):
            raise InputError(None, where, f"must be an object, got {brief(data)}")
        fields = dataclasses.fields(cls)
        unknown = sorted(set(data) - {f.name for f in fields}, key=str)
        if unknown:
            raise InputError(None, f"{where}.{unknown[0]}", "unknown field of a job")
        missing = [
            f.name for f in fields if f.name not in data and f.default is dataclasses.MISSING
        ]
        if missing:
            raise InputError(None, f"{where}.{missing[0]}", "missing required field")
        data = {f.name: data.get(f.name, f.default) for f in fields}
        work = data["work"]
        if not isinstance(work, list) or not all(
            w is None or (isinstance(w, (int, float)) and not isinstance(w, bool)) for w in work
        ):
            raise InputError(
                None,
                f"{where}.work",
                f"must be a list of seconds (null: cannot run), got {brief(work)}",
            )
        row = np.array([math.inf if w is None else w for w in work], dtype=np.float64)
        node = checks.integer(data["node"], f"{where}.node", minimum=-1, maximum=MAX_NODES - 1)
        cfg = checks.integer(data["cfg"], f"{where}.cfg", minimum=-1, maximum=len(row) - 1)
        if (node < 0) != (cfg < 0) or (cfg >= 0 and not math.isfinite(row[cfg])):
            raise InputError(
                None, f"{where}.cfg", "a running job has a node and a configuration it runs on"
            )
        return cls(
            id=data["id"],
            release=data["release"],
            due=data["due"],
            weight=data["weight"],
            work=row,
            progress=data["progress"],
            node=node,
            cfg=cfg,
            pinned=checks.flag(data["pinned"], f"{where}.pinned"),
            checkpoint=data["checkpoint"],
            cpus=data["cpus"],
            memory=data["memory"],
            data_gb=data["data_gb"],
            data_at=checks.integer(data["data_at"], f"{where}.data_at", minimum=-1),
            workload=data["workload"],
        )


def fits_alone(catalog: Catalog, cpus: Any, memory: Any) -> np.ndarray:
    """(J, C) bool: configuration c's VM type holds job j's vCPUs and memory (the "alone" rule,
    docs/design.md); `cpus` and `memory` are (J,) (or scalars: one job, shape (1, C))."""
    ok = np.ones((np.size(cpus), catalog.n_configs), dtype=bool)
    for demand, value in (("cpus", cpus), ("memory", memory)):
        capacity = getattr(catalog, DEMANDS[demand])[catalog.cfg_vm]
        ok &= np.reshape(value, (-1, 1)) <= capacity[None, :]
    return ok


def gpu_less_shares(catalog: Catalog, cpus: Any, memory: Any) -> np.ndarray:
    """(J, C') the part of a VM of a GPU-less type that job j holds on each of the catalog's
    GPU-less configurations (v, 0) (C' of them, in index order): its largest share of the
    type's vCPUs or memory (those the type declares; docs/design.md, "CPU-only jobs")."""
    cols = np.flatnonzero(catalog.gpu_less[catalog.cfg_vm])
    out = np.zeros((np.size(cpus), cols.size))
    for demand, value in (("cpus", cpus), ("memory", memory)):
        capacity = getattr(catalog, DEMANDS[demand])[catalog.cfg_vm[cols]]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.reshape(value, (-1, 1)) / capacity[None, :]
        out = np.maximum(out, np.where(np.isfinite(capacity)[None, :], share, 0.0))
    return out


def check_job(
    job: JobSpec, catalog: Catalog | None = None, source: str | None = None, where: str = "job"
) -> None:
    """The limits every job meets however it enters (the instance parser, the importers,
    `Rescheduler.submit`, a `JobSpec` made in Python, a restored state), so that whatever is
    accepted can be simulated, saved and restored: a non-empty string id (at most MAX_ID
    characters); release in [0, MAX_SECONDS]; due within ±MAX_SECONDS; weight in [0, MAX_WEIGHT]; progress in [0, 1);
    whole-job times `work` inf (cannot run) or in [MIN_SECONDS, MAX_SECONDS], one at least
    finite. InputError naming `where` and, with `catalog`, the VM type and GPU count."""
    check_id(job.id, source, where)
    at = f"{where} ({job.id})"
    checks.number(job.release, f"{at}.release", source, minimum=0.0, maximum=MAX_SECONDS)
    checks.number(job.due, f"{at}.due", source, minimum=-MAX_SECONDS, maximum=MAX_SECONDS)
    checks.number(job.weight, f"{at}.weight", source, minimum=0.0, maximum=MAX_WEIGHT)
    if not 0.0 <= checks.number(job.progress, f"{at}.progress", source) < 1.0:
        raise InputError(source, f"{at}.progress", f"must be in [0, 1), got {job.progress!r}")
    if job.checkpoint is not None:
        checks.number(job.checkpoint, f"{at}.checkpoint", source, minimum=0.0, maximum=MAX_SECONDS)
    checks.number(job.cpus, f"{at}.cpus", source, minimum=0.0, maximum=MAX_VCPUS)
    checks.number(job.memory, f"{at}.memory", source, minimum=0.0, maximum=MAX_MEMORY)
    checks.number(job.data_gb, f"{at}.data_gb", source, minimum=0.0, maximum=MAX_DATA_GB)
    if job.workload != "":
        check_name(job.workload, source, f"{at}.workload")
    work = np.asarray(job.work, dtype=np.float64)
    bad = np.flatnonzero(~((work >= MIN_SECONDS) & (work <= MAX_SECONDS) | (work == np.inf)))
    if bad.size:
        c = int(bad[0])
        name = f"work[{c}]"
        if catalog is not None and work.size == catalog.n_configs:
            name = f"times.{catalog.vm_names[catalog.cfg_vm[c]]}[{c - int(catalog.cfg_first[catalog.cfg_vm[c]])}]"
        raise InputError(
            source,
            f"{at}.{name}",
            f"must be a time in [{MIN_SECONDS:g}, {MAX_SECONDS:g}] s (gpuaas.limits) or "
            f"inf (cannot run), got {float(work[c])!r}",
        )
    if not np.isfinite(work).any():
        raise InputError(source, f"{at}.work", "no configuration can run the job")


def check_id(jid: Any, source: str | None, where: str) -> None:
    """A job id: a non-empty string of at most `MAX_ID` characters (jobs submitted, saved and
    completed alike)."""
    if not isinstance(jid, str) or not jid:
        raise InputError(source, f"{where}.id", f"must be a non-empty string, got {brief(jid)}")
    if len(jid) > MAX_ID:
        raise InputError(
            source, f"{where}.id", f"{len(jid)} characters; at most {MAX_ID} (gpuaas.limits)"
        )


def parse_job(
    job: Any, catalog: Catalog, source: str | None, where: str, release: float = 0.0
) -> JobSpec:
    """Check one job object of the instance format (`release` is its default release time)."""
    if not isinstance(job, Mapping):
        raise InputError(source, where, "must be an object")
    extra = set(job) - _JOB_FIELDS
    if extra:
        raise InputError(source, where, f"unknown field(s) {sorted(extra)}")
    for req in ("id", "due", "weight"):
        if req not in job:
            raise InputError(source, f"{where}.{req}", "missing required field")
    jid = job["id"]
    check_id(jid, source, where)
    at = f"{where} ({jid})"
    progress = checks.number(job.get("progress", 0.0), f"{at}.progress", source, minimum=0.0)
    if progress >= 1.0:
        raise InputError(source, f"{at}.progress", f"must be in [0, 1), got {progress!r}")
    workload = job.get("workload")
    name = ""
    if isinstance(workload, str):  # named only: its co-location class (docs/design.md)
        name = check_name(workload, source, f"{at}.workload")
        if "times" not in job:
            raise InputError(
                source,
                f"{at}.workload",
                "a workload given by name needs 'times' (the performance model times a "
                "workload object)",
            )
    elif isinstance(workload, Mapping) and isinstance(workload.get("application"), str):
        name = workload["application"]
    if "times" in job:
        given = "times"
        work = _times(job["times"], catalog, source, f"{at}.times")
    elif "workload" in job:
        from gpuaas.performance import workload_times

        given = "workload"
        work = workload_times(job["workload"], catalog, source, f"{at}.workload")
    else:
        raise InputError(source, at, "needs 'times' (or 'workload' for the performance model)")
    if not np.isfinite(work).any():
        raise InputError(source, f"{at}.{given}", "no VM type of the catalog can run this job")
    outside = np.isfinite(work) & ((work > MAX_SECONDS) | (work < MIN_SECONDS))
    if given == "workload" and outside.any():
        c = int(np.flatnonzero(outside)[0])
        vm, g = catalog.vm_names[catalog.cfg_vm[c]], int(catalog.cfg_gpus[c])
        than = (
            f"more than {MAX_SECONDS:g}" if work[c] > MAX_SECONDS else f"less than {MIN_SECONDS:g}"
        )
        raise InputError(
            source,
            f"{at}.workload",
            f"the performance model gives {work[c]:.3g} s on {vm} with {g} GPU(s), {than} s",
        )
    node, cfg, pinned = _placement(job.get("placement"), catalog, work, source, f"{at}.placement")
    return JobSpec(
        id=jid,
        node=node,
        cfg=cfg,
        pinned=pinned,
        release=checks.number(
            job.get("release", release), f"{at}.release", source, minimum=0.0, maximum=MAX_SECONDS
        ),
        due=checks.number(
            job["due"], f"{at}.due", source, minimum=-MAX_SECONDS, maximum=MAX_SECONDS
        ),
        weight=checks.number(
            job["weight"], f"{at}.weight", source, minimum=0.0, maximum=MAX_WEIGHT
        ),
        work=np.asarray(work, dtype=np.float64),
        progress=progress,
        checkpoint=None
        if job.get("checkpoint") is None
        else checks.number(
            job["checkpoint"], f"{at}.checkpoint", source, minimum=0.0, maximum=MAX_SECONDS
        ),
        cpus=checks.number(
            job.get("cpus", 0.0), f"{at}.cpus", source, minimum=0.0, maximum=MAX_VCPUS
        ),
        memory=checks.number(
            job.get("memory", 0.0), f"{at}.memory", source, minimum=0.0, maximum=MAX_MEMORY
        ),
        data_gb=checks.number(
            job.get("data_gb", data_gb({"application": name} if name else None)),
            f"{at}.data_gb",
            source,
            minimum=0.0,
            maximum=MAX_DATA_GB,
        ),
        data_at=_location(job.get("data_at"), catalog, source, f"{at}.data_at"),
        workload=name,
    )


def data_fields(catalog: Catalog, gb: float, at: int) -> dict[str, Any]:
    """A job object's `data_gb` and `data_at` (a location's name; left out where -1) on a
    catalog with locations (`gpuaas.transfer`); none without: the inverse of `parse_job`'s."""
    if not catalog.places:
        return {}
    return {"data_gb": gb, **({"data_at": catalog.location_names[at]} if at >= 0 else {})}


def _location(name: Any, catalog: Catalog, source: str | None, where: str) -> int:
    """The index of location `name` in the catalog's `location_names` (None: -1)."""
    if name is None:
        return -1
    if name not in catalog.places:
        raise InputError(
            source,
            where,
            f"{brief(name)} is not a location of catalog {catalog.name} "
            f"({', '.join(catalog.places) or 'it has none'})",
        )
    return catalog.location_names.index(name)


def _check_placements(
    jobs: list[JobSpec], catalog: Catalog, nodes: int, source: str | None
) -> None:
    """Running jobs must fit their nodes: node < N, one VM type per node, GPUs within it."""
    node_vm: dict[int, int] = {}
    used: dict[int, int] = {}
    for j, spec in enumerate(jobs):
        if spec.node < 0:
            continue
        where = f"jobs[{j}] ({spec.id}).placement"
        if spec.node >= nodes:
            raise InputError(source, f"{where}.node", f"must be < nodes ({nodes}), got {spec.node}")
        v = int(catalog.cfg_vm[spec.cfg])
        if node_vm.setdefault(spec.node, v) != v:
            raise InputError(
                source,
                f"{where}.vm",
                f"node {spec.node} already runs a job on {catalog.vm_names[node_vm[spec.node]]}",
            )
        used[spec.node] = used.get(spec.node, 0) + int(catalog.cfg_gpus[spec.cfg])
        if used[spec.node] > catalog.gpus[v]:
            raise InputError(
                source,
                f"{where}.gpus",
                f"node {spec.node} ({catalog.vm_names[v]}) has only {int(catalog.gpus[v])} GPUs",
            )


def placement_config(
    node: Any, vm: Any, g: Any, catalog: Catalog, nodes: int, source: str | None, where: str
) -> tuple[int, int]:
    """(node, configuration) of a job placed on `node` with VM type `vm` and `g` GPUs, checked:
    the one reading of a placement for instance and solution files."""
    if isinstance(node, bool) or not isinstance(node, int) or not 0 <= node < nodes:
        raise InputError(
            source,
            f"{where}.node",
            f"must be null or an integer in 0..{nodes - 1}, got {brief(node)}",
        )
    if vm not in catalog.vm_names:
        raise InputError(source, f"{where}.vm", f"unknown VM type {brief(vm)}")
    v = catalog.vm_index(vm)
    G = int(catalog.gpus[v])
    if isinstance(g, bool) or not isinstance(g, int) or not (1 <= g <= G or g == G == 0):
        want = f"an integer in 1..{G}" if G else "0 (it has no GPUs)"
        raise InputError(source, f"{where}.gpus", f"must be {want} for {vm}, got {brief(g)}")
    return node, catalog.config(v, g)


def _placement(
    pl: Any, catalog: Catalog, work: np.ndarray, source: str | None, where: str
) -> tuple[int, int, bool]:
    """(node, configuration, pinned) of a running job's `{"node", "vm", "gpus"}` (and optional
    `"pinned"`: it must stay there); (-1, -1, False) when absent."""
    if pl is None:
        return -1, -1, False
    if not isinstance(pl, Mapping) or not {"node", "vm", "gpus"} <= set(pl) <= {
        "node",
        "vm",
        "gpus",
        "pinned",
    }:
        raise InputError(
            source,
            where,
            'must be {"node": int, "vm": VM type, "gpus": int[, "pinned": bool]} or null',
        )
    node, c = placement_config(pl["node"], pl["vm"], pl["gpus"], catalog, MAX_NODES, source, where)
    vm, g = pl["vm"], pl["gpus"]
    if not np.isfinite(work[c]):
        raise InputError(source, where, f"the job cannot run on {vm} with {g} GPU(s)")
    return node, c, checks.flag(pl.get("pinned", False), f"{where}.pinned", source)


def _times(times: Any, catalog: Catalog, source: str | None, where: str) -> np.ndarray:
    """Row of whole-job times per configuration from `{"VM": [t_g1, t_g2, ...]}` (null: cannot run)."""
    if not isinstance(times, dict):
        raise InputError(source, where, "must be an object mapping VM type to a list of seconds")
    row = np.full(catalog.n_configs, np.inf)
    if catalog.has_spot:  # a spot variant runs as fast as its on-demand type, unless given
        given = [catalog.vm_index(vm) for vm in times if vm in catalog.vm_names]
        for v, b in enumerate(catalog.base):
            if b >= 0 and v not in given and catalog.vm_names[b] in times:
                times = {**times, catalog.vm_names[v]: times[catalog.vm_names[b]]}
    for vm, ts in times.items():
        if vm not in catalog.vm_names:
            raise InputError(
                source, f"{where}.{vm}", f"unknown VM type for catalog {catalog.name!r}"
            )
        v = catalog.vm_index(vm)
        G = int(catalog.gpus[v])
        if not isinstance(ts, list) or len(ts) != max(G, 1):
            got = f"{len(ts)} entries" if isinstance(ts, list) else repr(ts)
            one = "one per GPU count 1..{G}" if G else "it has no GPUs: the time with 0 GPUs"
            raise InputError(
                source,
                f"{where}.{vm}",
                f"must be a list of {max(G, 1)} times ({one.format(G=G)}), got {got}",
            )
        for g, t in enumerate(ts, start=1 if G else 0):
            if t is None:
                continue
            at = f"{where}.{vm}[{max(g - 1, 0)}]"
            if (
                isinstance(t, bool)
                or not isinstance(t, (int, float))
                or not checks.is_finite(t)
                or t <= 0
            ):
                raise InputError(
                    source, at, f"must be a finite time > 0 s (or null), got {brief(t)}"
                )
            if not MIN_SECONDS <= t <= MAX_SECONDS:
                bound = f"<= {MAX_SECONDS:g}" if t > MAX_SECONDS else f">= {MIN_SECONDS:g}"
                raise InputError(source, at, f"must be {bound} s (gpuaas.limits), got {brief(t)}")
            row[catalog.config(v, g)] = float(t)
    return row


def _hazard(hazard: Any, catalog: Catalog, source: str | None) -> np.ndarray:
    """(V,) interruptions per second from `params.hazard`, {VM type: interruptions per hour}."""
    if not isinstance(hazard, Mapping):
        raise InputError(
            source, "params.hazard", "must be an object mapping VM type to interruptions per hour"
        )
    out = np.zeros(catalog.n_vms)
    for vm, rate in hazard.items():
        if vm not in catalog.vm_names:
            raise InputError(
                source, f"params.hazard.{vm}", f"unknown VM type for catalog {catalog.name!r}"
            )
        out[catalog.vm_index(vm)] = (
            checks.number(rate, f"params.hazard.{vm}", source, minimum=0.0, maximum=MAX_WEIGHT)
            / 3600.0
        )
    return out


def work_list(work: Any) -> list[float | None]:
    """A row of whole-job times as JSON writes it: null where a job cannot run (inf)."""
    return [w if w != math.inf else None for w in np.asarray(work, dtype=np.float64).tolist()]


def times_object(work: Any, catalog: Catalog) -> dict[str, list[Any]]:
    """The instance format's `times` of a row of whole-job times per configuration (inf or
    None: cannot run): `{"VM": [t_g1, t_g2, ...]}` for the VM types that can run the job (a
    spot variant only where it differs from its on-demand type, which it runs as by default)."""
    row = [None if w is None or w == math.inf else w for w in work]
    out = {}

    def of(v: int) -> list[Any]:
        return row[int(catalog.cfg_first[v]) : int(catalog.cfg_first[v] + catalog.cfg_count[v])]

    for v, name in enumerate(catalog.vm_names):
        ts, b = of(v), int(catalog.base[v])
        if b >= 0:  # a spot variant is written when it differs from its on-demand type's
            if ts != of(b):
                out[name] = ts
        elif any(t is not None for t in ts):
            out[name] = ts
    return out


def load_instance(path: str | Path) -> Instance:
    """Read an instance or trace JSON file (all its jobs; see `Instance.released`)."""
    return Instance.from_dict(read_json(path), str(path))
