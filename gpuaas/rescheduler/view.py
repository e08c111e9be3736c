"""What a `RunState` looks like from outside: the P1 Instance a method solves, the status of
every unfinished job and open node. Nothing here changes the state."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from gpuaas.instance import Instance
from gpuaas.rescheduler import budget, speed, spot_estimates
from gpuaas.rescheduler.records import INSTANCE_VIEW, JobStatus, NodeStatus
from gpuaas.rescheduler.state import RunState


def instance(s: RunState, at: float | None = None, full: Iterable[int] = ()) -> Instance:
    """The P1 instance of all unfinished jobs at time `at` (default: the clock): the fields
    of `records.INSTANCE_VIEW`, whole-job times at each job's estimated speed (`speed.work`),
    the running jobs the disruption limits pin (`budget.pinned`); configurations of VM types at
    their capacity (and of the types `full`) are left out (inf), except each running job's
    own; `room` says how many more VMs of each type may open."""
    at = (s.time or 0.0) if at is None else at
    cat, cols, rows = s.catalog, s.cols, s.order()
    columns = {**cols.hot, **cols.static}
    arrays: dict[str, Any] = {
        k: columns[field][rows] for k, field in INSTANCE_VIEW.items() if k != "work"
    }
    arrays["pinned"] = budget.pinned(s, rows, at)
    work = np.take(cols.work, rows, axis=0)  # cols.work[rows]: the same copy, faster
    for i in np.flatnonzero(cols.evidence[rows]).tolist():  # at its estimated speed
        work[i] = speed.work(s, cols.job[rows[i]])
    full = sorted({*spot_estimates.full(s), *full}) if s.capacity else sorted(full)
    if full and len(rows):
        work = work.copy()
        off = np.isin(cat.cfg_vm, full)
        own = arrays["current_cfg"]
        keep = work[np.arange(len(rows)), np.maximum(own, 0)]
        work[:, off] = np.inf
        work[own >= 0, own[own >= 0]] = keep[own >= 0]
    work.setflags(write=False)  # this one array, immutable: the Instance takes it uncopied
    return Instance(
        catalog=cat,
        nodes=s.config.nodes,
        job_ids=tuple(s.jobs),
        work=work,
        time=at,
        H=s.H,
        mu=s.mu,
        rho=s.rho,
        overhead=s.config.overhead,
        startup=s.config.startup,
        hazard=spot_estimates.hazard(s, at) if cat.has_spot else None,
        outage=spot_estimates.outage(s, at) if cat.has_spot else None,
        room=spot_estimates.room(s, full),
        ready=_ready(s, arrays["current_node"], cols.hot["data_ready"][rows]),
        **_colocation(s),
        **arrays,
    )


def _colocation(s: RunState) -> dict[str, Any]:
    """The Instance's co-location table the decisions get (`speed.decision_table`) and the
    jobs' workload names, or nothing (no slowdown)."""
    table = speed.decision_table(s)
    if table is None:
        return {}
    return {"colocation": table, "workload": tuple(j.workload for j in s.jobs.values())}


def _ready(s: RunState, node: np.ndarray, data: np.ndarray) -> np.ndarray:
    """(J,) when each job runs where it is (`node`, -1: waiting): its node's start-up over,
    its data there (`data`, `apply.move_data`); -inf: waiting."""
    nodes, _, ready = s.node_arrays()
    at = np.full(s.config.nodes + 1, -np.inf)  # the last: a waiting job's
    at[nodes] = ready
    return np.where(node >= 0, np.maximum(at[node], data), -np.inf)


def unfinished(s: RunState) -> list[JobStatus]:
    """A `JobStatus` per unfinished job, in submission order; a running job's `eta` is when it
    ends at its estimated speed where it runs (`speed`: its estimated actual / predicted time
    there)."""
    vm, gpus, nodes = s.cfg_vm, s.cfg_gpus, s.nodes
    now = s.time or 0.0
    out = []
    make = JobStatus._make
    for j in s.jobs.values():
        c = j.cfg
        if c < 0:
            out.append(make((j.id, j.progress, -1, -1, None, None, None, j.start, None, None)))
            continue
        ready = max(nodes[j.node].ready, j.data_ready)
        r = speed.ratio(s, j, c) if j.observed or j.measured else 1.0  # `estimate`'s None
        eta = max(now, ready) + float(j.work[c]) * r * (1.0 - j.progress)
        out.append(make((j.id, j.progress, j.node, c, vm[c], gpus[c], ready, j.start, eta, r)))
    return out


def open_nodes(s: RunState) -> list[NodeStatus]:
    """A `NodeStatus` per open physical node, in node order."""
    names = s.catalog.vm_names
    return [NodeStatus(p, names[n.vm], n.ready) for p, n in s.nodes.items()]
