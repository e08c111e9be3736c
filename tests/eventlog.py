"""Independent recomputation of a simulation from its event log file and the trace alone.

Deliberately plain Python on JSON data (no gpuaas simulator or rescheduler code), so tests that
compare it with `SimulationResult` catch a mistake in either. Reused by the baselines' tests.

Usage::

    rec = recompute("events.jsonl", trace)  # trace: gpuaas Instance (its JSON form is read)
    rec.errors            # capacity / consistency violations, empty when the log is sound
    rec.vm_cost, rec.tardiness_cost, rec.total_cost
    rec.work[job_id]      # sum of length / whole-job time on the configuration it ran on
    rec.completion[job_id]
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Recomputed:
    """What the event log says: costs, each job's work and completion, and any violation."""

    vm_cost: float = 0.0
    tardiness_cost: float = 0.0
    work: dict[str, float] = field(default_factory=dict)
    completion: dict[str, float] = field(default_factory=dict)
    intervals: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def total_cost(self) -> float:
        return self.vm_cost + self.tardiness_cost


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The event log's records, one per line."""
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def recompute(path: str | Path, trace: Any, work_tol: float = 1e-9) -> Recomputed:
    """Recompute VM cost, tardiness, capacity and work from the log at `path`.

    `trace` is the simulated Instance; only its JSON form (`to_dict`) and its catalog's JSON
    form are read. Intervals must be in time order and contiguous; every node at most once per
    interval, jobs only on open nodes of their VM type, GPUs per node within the VM's count.
    A job completes at the end of its last interval; tardiness = weight * max(0, that - due).
    """
    data = trace.to_dict()
    cat = trace.catalog.to_dict()
    price = {vm["name"]: vm["cost_per_hour"] / 3600.0 for vm in cat["vm_types"]}
    gpus = {vm["name"]: vm["gpus"] for vm in cat["vm_types"]}
    jobs = {j["id"]: j for j in data["jobs"]}
    rec = Recomputed()
    err = rec.errors.append
    prev_end = None
    for k, line in enumerate(read_log(path)):
        rec.intervals += 1
        start, end = line["start"], line["end"]
        length = end - start
        if length < 0:
            err(f"interval {k}: ends ({end}) before it starts ({start})")
        if prev_end is not None and start != prev_end:
            err(f"interval {k}: starts at {start}, previous ended at {prev_end}")
        prev_end = end
        node_vm: dict[int, str] = {}
        ready: dict[int, float] = {}
        for nd in line["nodes"]:
            ready[nd["node"]] = nd.get("ready", 0.0)
            if nd["node"] in node_vm:
                err(f"interval {k}: node {nd['node']} listed twice")
            node_vm[nd["node"]] = nd["vm"]
            rec.vm_cost += price[nd["vm"]] * length
        used: dict[int, int] = {}
        seen: set[str] = set()
        for jb in line["jobs"]:
            jid, n, vm, g = jb["id"], jb["node"], jb["vm"], jb["gpus"]
            if jid in seen:
                err(f"interval {k}: job {jid} runs twice")
            seen.add(jid)
            if node_vm.get(n) != vm:
                err(f"interval {k}: job {jid} on node {n} as {vm}, node is {node_vm.get(n)}")
            used[n] = used.get(n, 0) + g
            t = jobs[jid]["times"][vm][g - 1]
            if t is None:
                err(f"interval {k}: job {jid} runs on {vm} x{g}, which it cannot")
                continue
            # a node still starting up (VM start-up) bills but does no work before `ready`
            worked = max(0.0, end - max(start, ready.get(n, 0.0)))
            rec.work[jid] = rec.work.get(jid, 0.0) + worked / t
            rec.completion[jid] = end
        for n, u in used.items():
            if n in node_vm and u > gpus[node_vm[n]]:
                err(f"interval {k}: node {n} uses {u} GPUs, {node_vm[n]} has {gpus[node_vm[n]]}")
    for jid, end in rec.completion.items():
        rec.tardiness_cost += jobs[jid]["weight"] * max(0.0, end - jobs[jid]["due"])
    return rec


def check_against(
    rec: Recomputed, result: dict[str, Any], trace: Any, rel: float = 1e-6, work_tol: float = 1e-9
) -> list[str]:
    """Differences between the recomputation and a simulation result (`to_dict()`); [] if none.

    Each job's work must sum to 1 + its lost_work (restart overhead), times its actual_factor
    when the run had noise; jobs that start with progress p need 1 - p.
    """
    problems = list(rec.errors)
    for key in ("vm_cost", "tardiness_cost", "total_cost"):
        a, b = getattr(rec, key), result[key]
        if not math.isclose(a, b, rel_tol=rel, abs_tol=1e-9):
            problems.append(f"{key}: log gives {a!r}, result says {b!r}")
    initial = {j["id"]: j.get("progress", 0.0) for j in trace.to_dict()["jobs"]}
    by_id = {j["id"]: j for j in result["jobs"]}
    if set(by_id) != set(initial):
        problems.append(f"{len(initial) - len(by_id)} job(s) of the trace did not complete")
    for jid, job in by_id.items():
        want = (1.0 - initial[jid] + job.get("lost_work", 0.0)) * job.get("actual_factor", 1.0)
        got = rec.work.get(jid, 0.0)
        if abs(got - want) > work_tol * max(1.0, want):
            problems.append(f"job {jid}: work sums to {got!r}, expected {want!r}")
        if jid in rec.completion and not math.isclose(
            rec.completion[jid], job["completion"], rel_tol=1e-12, abs_tol=1e-6
        ):
            problems.append(
                f"job {jid}: log ends at {rec.completion[jid]}, result {job['completion']}"
            )
    return problems
