"""Co-location slowdown (issue 44 item 2): jobs sharing a VM slow each other.

A job belongs to a workload class (`Colocation.workload`, -1: none), and a pairwise table
`Colocation.speed` gives the share of its speed alone a job of class a keeps next to one of
class b (1: no slowdown). On a VM its speed is the product over the other jobs there, the rule
of Eva's simulator (EuroSys '25, its contention table of 9 measured workloads), which
measures pairs only: a job next to two others is slowed by both. The table is the user's
(measured on their own workloads); with none every job keeps its speed.

**By name** (`parse_table`, `Colocation.of`): the instance format's top-level `colocation`,
``{workload: {workload beside it: speed}}``, names the workloads as jobs name theirs (a job's
`workload`, docs/design.md "Co-location slowdown"); a pair the table leaves out keeps full
speed. No default table ships: the one public measurement of jobs sharing a VM we found
(Eva's) has no license (Gavel's, MIT, is of jobs sharing one GPU, another slowdown), so the
default is no slowdown, and `gpuaas import eva --colocation` reads Eva's from the user's
checkout.

What reads it: the simulator's actual speeds (`gpuaas.producers.Execution`), the default
method's re-packing (`gpuaas.resources.consolidate`: it charges a VM the share of it whose
work is lost to slowdown beside the share left empty), and the Rescheduler, which passes the
table (or the one it learns, `gpuaas.rescheduler.speed`) to the methods in the Instance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.errors import InputError, brief
from gpuaas.limits import MAX_ID


class Groups(dict):
    """`Colocation.groups` checked once (a table of many groups is checked when built, not
    for each `Colocation` that shares it): {sorted classes 0 .. `classes` - 1, 2 or more:
    {class: speed in (0, 1]}}."""

    def __init__(self, groups: Mapping[tuple[int, ...], Mapping[int, float]], classes: int):
        super().__init__()
        for key, speeds in groups.items():
            key = tuple(int(a) for a in key)
            speeds = {int(a): float(x) for a, x in speeds.items()}
            if (
                len(key) < 2
                or list(key) != sorted(key)
                or not all(0 <= a < classes for a in key)
                or set(speeds) != set(key)
                or not all(0 < x <= 1 for x in speeds.values())
            ):
                raise InputError(
                    None,
                    "colocation.groups",
                    f"{key!r}: must be 2 or more sorted classes 0 .. {classes - 1}, each with "
                    f"a speed in (0, 1]",
                )
            self[key] = speeds
        self.classes = classes


@dataclass(frozen=True)
class Colocation:
    """Each job's workload class (J,) int (-1: none, never slowed nor slowing) and the speed
    table (W, W): speed[a, b] is the share of its speed a class-a job keeps next to a class-b
    job, in (0, 1].

    `groups` (optional): speeds measured for whole groups of jobs sharing a VM, where the
    product of the pairs is not what happens: {the group's classes, sorted (2 or more): {class:
    the speed each of its jobs keeps there}}. A node whose classed jobs form a listed group
    runs them at the group's speeds (its jobs of no class still run at 1); any other node at
    the pairs' product. Eva's simulator works this way: its contention table lists every group
    of up to 10 jobs and its simulator reads the group's entry, which for 3 or more jobs
    differs from the pairs' product (scripts/eva_setting.py, `contention_tables`)."""

    workload: np.ndarray
    speed: np.ndarray
    groups: Mapping[tuple[int, ...], Mapping[int, float]] | None = field(
        default=None, compare=False
    )

    def __post_init__(self) -> None:
        workload = np.asarray(self.workload, dtype=np.int64)
        speed = np.asarray(self.speed, dtype=np.float64)
        if speed.ndim != 2 or speed.shape[0] != speed.shape[1]:
            raise InputError(None, "colocation.speed", f"must be square, got {speed.shape}")
        if not np.all((speed > 0) & (speed <= 1)):
            raise InputError(None, "colocation.speed", "every speed must be in (0, 1]")
        if workload.ndim != 1 or np.any((workload < -1) | (workload >= speed.shape[0])):
            raise InputError(
                None, "colocation.workload", f"must name classes -1 .. {speed.shape[0] - 1}"
            )
        object.__setattr__(self, "workload", workload)
        object.__setattr__(self, "speed", speed)
        if self.groups is not None:
            groups = self.groups
            if not isinstance(groups, Groups) or groups.classes > speed.shape[0]:
                groups = Groups(groups, speed.shape[0])
            object.__setattr__(self, "groups", groups)

    @classmethod
    def of(
        cls, names: Sequence[str], table: Mapping[str, Mapping[str, float]] | None
    ) -> Colocation | None:
        """The jobs of workload `names` ("" : none) with a table by name (`parse_table`'s
        form; a pair it lacks: 1); None without a table."""
        if table is None:
            return None
        classes = sorted({*table, *(b for row in table.values() for b in row), *names} - {""})
        index = {x: a for a, x in enumerate(classes)}
        speed = np.ones((len(classes), len(classes)))
        for x, row in table.items():
            for y, value in row.items():
                speed[index[x], index[y]] = value
        return cls(np.array([index.get(x, -1) for x in names], dtype=np.int64), speed)

    def speeds(self, job_node: np.ndarray) -> np.ndarray:
        """(J,) each placed job's share of its speed alone on its node (1 for a job waiting
        or of no class): the product of the table over the other jobs on its node."""
        job_node = np.asarray(job_node)
        w = self.workload
        if w.shape != job_node.shape:
            raise InputError(
                None, "colocation.workload", f"has {w.size} jobs, the plan {job_node.size}"
            )
        out = np.ones(w.size)
        on = np.flatnonzero((job_node >= 0) & (w >= 0))
        if on.size < 2:
            return out
        pair = self.speed[w[on][:, None], w[on][None, :]]
        share = (job_node[on][:, None] == job_node[on][None, :]) & ~np.eye(on.size, dtype=bool)
        out[on] = np.prod(np.where(share, pair, 1.0), axis=1)
        if self.groups:
            order = on[np.argsort(job_node[on], kind="stable")]
            _, first, count = np.unique(job_node[order], return_index=True, return_counts=True)
            for start, size in zip(first[count > 1].tolist(), count[count > 1].tolist()):
                jobs = order[start : start + size]
                found = self.groups.get(tuple(sorted(w[jobs].tolist())))
                if found is not None:
                    out[jobs] = [found[a] for a in w[jobs].tolist()]
        return out


def check_name(name: Any, source: str | None, where: str) -> str:
    """A workload's name: a non-empty string of at most `MAX_ID` characters."""
    if not isinstance(name, str) or not name:
        raise InputError(source, where, f"must be a non-empty string, got {brief(name)}")
    if len(name) > MAX_ID:
        raise InputError(source, where, f"{len(name)} characters; at most {MAX_ID} (gpuaas.limits)")
    return name


def parse_table(
    value: Any, source: str | None = None, where: str = "colocation"
) -> dict[str, dict[str, float]]:
    """A co-location table by name, checked: ``{workload: {workload beside it: speed}}``,
    each speed the share of its speed alone the first keeps beside the second, in (0, 1]
    (a copy, rows and names sorted)."""
    if not isinstance(value, Mapping):
        raise InputError(
            source,
            where,
            f"must be an object mapping a workload to {{workload beside it: speed}}, got "
            f"{brief(value)}",
        )
    out: dict[str, dict[str, float]] = {}
    for a in sorted(value, key=str):
        check_name(a, source, f"{where} (a workload name)")
        row = value[a]
        if not isinstance(row, Mapping):
            raise InputError(
                source,
                f"{where}.{a}",
                f"must be an object mapping a workload to its speed beside it, got {brief(row)}",
            )
        out[a] = {}
        for b in sorted(row, key=str):
            check_name(b, source, f"{where}.{a} (a workload name)")
            at = f"{where}.{a}.{b}"
            speed = checks.number(row[b], at, source, positive=True)
            if speed > 1.0:
                raise InputError(
                    source,
                    at,
                    f"must be in (0, 1] (the share of its speed alone it keeps), got {speed!r}",
                )
            out[a][b] = speed
    return out
