"""Independent recomputation of a simulation from its event log file and the trace alone.

Deliberately plain Python on JSON data (no gpuaas simulator or rescheduler code), so tests that
compare it with `SimulationResult` catch a mistake in either. Reused by the baselines' tests.

Usage::

    rec = recompute("events.jsonl", trace)  # trace: gpuaas Instance (its JSON form is read)
    rec.errors            # capacity / consistency violations, empty when the log is sound
    rec.vm_cost, rec.tardiness_cost, rec.total_cost, rec.spot_cost
    rec.work[job_id]      # sum of length / whole-job time on the configuration it ran on
    rec.completion[job_id]
    check_against(rec, result, trace)  # [] when the log and the result agree

Spot VMs are the VM types named ``NAME:spot`` (billed at NAME's ``spot_per_hour``). With
`capacity` (a function (on-demand VM type, time) -> spot VMs that can be held, None: no limit)
every interval is checked against it. `check_against` recomputes every restart's lost work
from the placements alone: a job leaving its place (migrated, preempted) loses the result's
`overhead` seconds of work, one whose node is listed as ``interrupted`` at the interval's end
also the work since its last checkpoint (the result's `checkpoint` or the job's own, every so
many seconds of running since it last (re)started; none when the result's `notice` fits in the
provider's warning), at most its progress; the losses must match each job's `lost_work` and
`interrupted_work`, and their dollars the result's `interruption_cost`; each interruption
delays its job by the work it lost (in seconds) and the time until the job's next run begins
working, which must match the job's `interruption_delay`.

Co-location slowdown (the trace's top-level ``colocation`` table, jobs' ``workload`` names):
in each interval a job's seconds count at the table's product over the other named jobs
listed on its node (a pair the table lacks: 1), recomputed here from the JSON alone; its
"seconds worked" are then seconds of work at full speed, checkpoints included.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuaas import transfer

SPOT = ":spot"
#: the providers' interruption warnings (s), as the cloud documents them (docs/spot.md)
WARNING = {"AWS": 120.0, "GCP": 30.0, "Azure": 30.0}


@dataclass
class Recomputed:
    """What the event log says: costs, each job's work and completion, and any violation."""

    vm_cost: float = 0.0
    tardiness_cost: float = 0.0
    spot_cost: float = 0.0
    work: dict[str, float] = field(default_factory=dict)
    last_work: dict[str, float] = field(default_factory=dict)  # ... of it in its last interval
    completion: dict[str, float] = field(default_factory=dict)
    # per job, its runs in order: [place (node, vm, gpus), seconds worked, interrupted at end,
    # end, when it began working (its first interval's start, or its node's ready if later)]
    runs: dict[str, list[list[Any]]] = field(default_factory=dict)
    interruptions: int = 0  # jobs on an interrupted node
    intervals: int = 0
    egress_cost: float = 0.0  # jobs' data moved between locations
    transfers: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def total_cost(self) -> float:
        return self.vm_cost + self.tardiness_cost + self.egress_cost


def location_of(vm: str) -> str | None:
    """The location a VM type name says (``TYPE@LOCATION`` or its ``:spot`` variant)."""
    base = vm[: -len(SPOT)] if vm.endswith(SPOT) else vm
    return base.split("@", 1)[1] if "@" in base else None


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The event log's records, one per line."""
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def prices(catalog: dict[str, Any]) -> tuple[dict[str, float], dict[str, int]]:
    """$/s and GPUs per VM type name of a catalog's JSON form, spot variants included (a type
    offered at a location is named NAME@LOCATION)."""
    price, gpus = {}, {}
    for vm in catalog["vm_types"]:
        name = vm["name"] + (f"@{vm['location']}" if "location" in vm else "")
        price[name] = vm["cost_per_hour"] / 3600.0
        gpus[name] = vm["gpus"]
        if "spot_per_hour" in vm:
            price[name + SPOT] = vm["spot_per_hour"] / 3600.0
            gpus[name + SPOT] = vm["gpus"]
    return price, gpus


def times_of(job: dict[str, Any], vm: str) -> list[Any]:
    """A job's whole-job times on VM type `vm` (a spot variant: its on-demand type's unless
    the job gives its own)."""
    times = job["times"]
    if vm not in times and vm.endswith(SPOT):
        return times[vm[: -len(SPOT)]]
    return times[vm]


def recompute(
    path: str | Path, trace: Any, work_tol: float = 1e-9, capacity: Any = None
) -> Recomputed:
    """Recompute VM cost, tardiness, capacity and work from the log at `path`.

    `trace` is the simulated Instance; only its JSON form (`to_dict`) and its catalog's JSON
    form are read. Intervals must be in time order and contiguous; every node at most once per
    interval, jobs only on open nodes of their VM type, GPUs per node within the VM's count,
    interrupted nodes open; with `capacity`, spot VMs of a type at most its count.
    A job completes at the end of its last interval; tardiness = weight * max(0, that - due).
    """
    data = trace.to_dict()
    cat = trace.catalog.to_dict()
    price, gpus = prices(cat)
    jobs = {j["id"]: j for j in data["jobs"]}
    places = cat.get("locations", {})
    data_at = {jid: j.get("data_at") for jid, j in jobs.items()}
    table = data.get("colocation") or {}
    name = {jid: j.get("workload") if isinstance(j.get("workload"), str) else None
            for jid, j in jobs.items()}  # fmt: skip
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
            if nd["vm"].endswith(SPOT):
                rec.spot_cost += price[nd["vm"]] * length
        if capacity is not None:
            held: dict[str, int] = {}
            for vm in node_vm.values():
                if vm.endswith(SPOT):
                    held[vm] = held.get(vm, 0) + 1
            for vm, n in held.items():
                limit = capacity(vm[: -len(SPOT)], start)
                if limit is not None and n > limit:
                    err(f"interval {k}: {n} {vm} VMs held, {limit} available")
        lost = set(line.get("interrupted", []))
        for n in lost:
            if n not in node_vm:
                err(f"interval {k}: node {n} interrupted but not open")
        used: dict[int, int] = {}
        seen: set[str] = set()
        on_node: dict[int, list[str]] = {}
        for jb in line["jobs"]:
            on_node.setdefault(jb["node"], []).append(jb["id"])
        for jb in line["jobs"]:
            jid, n, vm, g = jb["id"], jb["node"], jb["vm"], jb["gpus"]
            if jid in seen:
                err(f"interval {k}: job {jid} runs twice")
            seen.add(jid)
            if node_vm.get(n) != vm:
                err(f"interval {k}: job {jid} on node {n} as {vm}, node is {node_vm.get(n)}")
            used[n] = used.get(n, 0) + g
            t = times_of(jobs[jid], vm)[g - 1]
            if t is None:
                err(f"interval {k}: job {jid} runs on {vm} x{g}, which it cannot")
                continue
            # data moved between locations: when the job first runs at a location other than
            # its data's (the route's $ and s per GB are gpuaas.transfer's, as prices are the
            # catalog's), from when its node is up plus the copy's seconds
            loc, src, gb = location_of(vm), data_at[jid], jobs[jid].get("data_gb", 0.0)
            own = jb.get("ready", 0.0)
            if loc is not None and loc != src:
                if src is not None and gb > 0:
                    route = (places[src], places[loc])
                    rec.egress_cost += gb * transfer.per_gb(*route)
                    rec.transfers += 1
                    due = max(start, ready.get(n, 0.0)) + gb * transfer.seconds_per_gb(*route)
                    if not math.isclose(max(own, ready.get(n, 0.0)), due, abs_tol=1e-6):
                        err(f"interval {k}: job {jid}'s data arrives at {own}, not {due}")
                data_at[jid] = loc
            # a node still starting up (VM start-up) bills but does no work before `ready`,
            # a job whose data is on its way none before its own
            worked = max(0.0, end - max(start, ready.get(n, 0.0), own))
            if table and name[jid]:  # co-location: the pairs' product over its node's others
                row = table.get(name[jid], {})
                for other in on_node[n]:
                    if other != jid and name[other]:
                        worked *= row.get(name[other], 1.0)
            rec.work[jid] = rec.work.get(jid, 0.0) + worked / t
            rec.last_work[jid] = worked / t
            rec.completion[jid] = end
            runs = rec.runs.setdefault(jid, [])
            place = (n, vm, g)
            if runs and runs[-1][0] == place and not runs[-1][2] and runs[-1][3] == start:
                runs[-1][1] += worked
                runs[-1][3] = end
            else:
                runs.append([place, worked, False, end, max(start, ready.get(n, 0.0), own)])
            if n in lost:
                runs[-1][2] = True
                rec.interruptions += 1
        for n, u in used.items():
            if n in node_vm and u > gpus[node_vm[n]]:
                err(f"interval {k}: node {n} uses {u} GPUs, {node_vm[n]} has {gpus[node_vm[n]]}")
    for jid, end in rec.completion.items():
        rec.tardiness_cost += jobs[jid]["weight"] * max(0.0, end - jobs[jid]["due"])
    return rec


def losses(
    rec: Recomputed, trace: Any, result: dict[str, Any]
) -> tuple[dict[str, float], dict[str, float], float, dict[str, float]]:
    """Per job, the fraction of its (actual) work lost to restarts and to interruptions, the
    dollars the interruptions lost (at the lost configuration's GPU share of its price) and
    the seconds its interruptions delayed it (each one's lost work in seconds, then until its
    next run began working), from the runs of the log alone (module docstring)."""
    data = trace.to_dict()
    cat = trace.catalog.to_dict()
    price, gpus = prices(cat)
    warning = WARNING.get(cat.get("provider", ""), 0.0)
    notice = result.get("notice")
    saves = notice is not None and notice <= warning
    overhead = result.get("overhead", 0.0)
    factor = {j["id"]: j.get("actual_factor", 1.0) for j in result["jobs"]}
    lost, interrupted, dollars, delay = {}, {}, 0.0, {}
    for job in data["jobs"]:
        jid = job["id"]
        every = job.get("checkpoint", result.get("checkpoint", 0.0))
        progress = job.get("progress", 0.0)
        lost[jid] = interrupted[jid] = delay[jid] = 0.0
        runs = rec.runs.get(jid, [])
        for i, (place, worked, cut, end, _) in enumerate(runs):
            n, vm, g = place
            t = times_of(job, vm)[g - 1] * factor.get(jid, 1.0)
            progress += worked / t
            if i == len(runs) - 1 and not cut:
                break  # it completed there
            seconds = overhead
            if cut and every > 0 and not saves:
                seconds += math.fmod(worked, every)
            loss = min(progress, seconds / t) if seconds > 0 else 0.0
            progress -= loss
            lost[jid] += loss
            if cut:
                interrupted[jid] += loss
                dollars += loss * t / factor.get(jid, 1.0) * price[vm] * g / gpus[vm]
                delay[jid] += loss * t + runs[i + 1][4] - end
    return lost, interrupted, dollars, delay


def check_against(
    rec: Recomputed,
    result: dict[str, Any],
    trace: Any,
    rel: float = 1e-6,
    work_tol: float = 1e-9,
    told_late: bool = False,
) -> list[str]:
    """Differences between the recomputation and a simulation result (`to_dict()`); [] if none.

    Each job's work must sum to 1 + its lost_work (restart overhead), times its actual_factor
    when the run had noise; jobs that start with progress p need 1 - p. With `told_late` (a
    decision interval: a job's completion is told at the next decision, its GPUs held until
    then) the job must have done that much by the end of its last interval and not before
    it. The losses recomputed
    from the log (`losses`) must equal the result's per job, and so must the spot VMs' cost,
    the interruptions and (without noise) the dollars interruptions lost.
    """
    problems = list(rec.errors)
    for key in ("vm_cost", "tardiness_cost", "total_cost"):
        a, b = getattr(rec, key), result[key]
        if not math.isclose(a, b, rel_tol=rel, abs_tol=1e-9):
            problems.append(f"{key}: log gives {a!r}, result says {b!r}")
    for key in ("spot_cost", "interruptions", "egress_cost", "transfers"):
        a, b = getattr(rec, key), result.get(key, 0)
        if not math.isclose(a, b, rel_tol=rel, abs_tol=1e-9):
            problems.append(f"{key}: log gives {a!r}, result says {b!r}")
    initial = {j["id"]: j.get("progress", 0.0) for j in trace.to_dict()["jobs"]}
    by_id = {j["id"]: j for j in result["jobs"]}
    if set(by_id) != set(initial):
        problems.append(f"{len(initial) - len(by_id)} job(s) of the trace did not complete")
    lost, interrupted, dollars, delay = losses(rec, trace, result)
    for jid, job in by_id.items():
        want = (1.0 - initial[jid] + job.get("lost_work", 0.0)) * job.get("actual_factor", 1.0)
        got, tol = rec.work.get(jid, 0.0), work_tol * max(1.0, want)
        if told_late:
            if not got - rec.last_work.get(jid, 0.0) - tol <= want <= got + tol:
                problems.append(f"job {jid}: work sums to {got!r}, not done in its last interval")
        elif abs(got - want) > tol:
            problems.append(f"job {jid}: work sums to {got!r}, expected {want!r}")
        for name, mine, tol in (
            ("lost_work", lost, 1e-7),
            ("interrupted_work", interrupted, 1e-7),
            ("interruption_delay", delay, 1e-6),  # seconds
        ):
            theirs = job.get(name, 0.0)
            if abs(mine[jid] - theirs) > tol * max(1.0, theirs):
                problems.append(
                    f"job {jid}: the log loses {mine[jid]!r} of its work to {name}, the result {theirs!r}"
                )
        if jid in rec.completion and not math.isclose(
            rec.completion[jid], job["completion"], rel_tol=1e-12, abs_tol=1e-6
        ):
            problems.append(
                f"job {jid}: log ends at {rec.completion[jid]}, result {job['completion']}"
            )
    if not result.get("noise") and not math.isclose(
        dollars, result.get("interruption_cost", 0.0), rel_tol=1e-6, abs_tol=1e-9
    ):
        problems.append(
            f"interruption_cost: log gives {dollars!r}, result says {result.get('interruption_cost')!r}"
        )
    return problems
