"""One rescheduling point's plan: solve the state's Instance, apply the Solution, say what changed.

`reschedule` builds the Instance of the unfinished jobs (`view.instance`), calls the method
(`gpuaas.methods.solve`, again without the VM types it overfilled: `solve`), cuts a plan over
the hour's budget of moves (`budget.cut`) and plans again, checks the Solution, maps its
abstract nodes onto the physical ones (`gpuaas.rescheduler.matching`) and applies the
difference to the `RunState` (`apply`): VMs opened (billed `startup` seconds before their jobs
run), resized or closed, jobs started, migrated or preempted (losing work by the restart rule,
`accounting.lose_work`). The `Plan` it returns lists those changes and the target state.
"""

from __future__ import annotations

import dataclasses
import time as _time

import numpy as np

from gpuaas import transfer
from gpuaas.errors import SolverError
from gpuaas.instance import Instance
from gpuaas.methods import METHODS, solve
from gpuaas.reconfiguration import moved, ready_time, startup_cost
from gpuaas.rescheduler import accounting, budget, spot_estimates, view
from gpuaas.rescheduler.matching import check_solution, match_nodes
from gpuaas.rescheduler.records import (
    CloseVM,
    Job,
    MigrateJob,
    MoveData,
    Node,
    OpenVM,
    Place,
    Plan,
    PlannedJob,
    PlannedNode,
    PreemptJob,
    ResizeVM,
    StartJob,
)
from gpuaas.rescheduler.state import RunState, touch
from gpuaas.solution import Solution


def reschedule(s: RunState, at: float, quiet: bool = False, capacity_only: bool = False) -> Plan:
    """Solve and apply at `at` (the events applied); the clock and event count move on.

    `capacity_only`: the point is only a change of spot capacity; for a method whose
    `Method.spot_points_keep_running` (the default), every running job is pinned
    (`Instance.pinned`), so that it places the waiting jobs and leaves the rest to the next
    arrival, completion or tick: replayed capacity changes within the hour, re-planning every
    job at each change moved on-demand jobs for nothing, and jobs on spot went back and forth
    between a zone flapping every 10 minutes and a stable one (docs/spot.md).

    `quiet`: besides, no spot VM is held; a solution that holds none either, where neither it
    nor the last plan leaves a job waiting for spot (the method's ``waiting_for_spot``), is not
    applied (`unchanged`): spot capacity changes a decision only by being used, so a run whose
    spot never pays is the run without spot."""
    method = s.config.method
    inst = view.instance(s, at)
    entry = METHODS.get(method)
    if capacity_only and entry is not None and entry.spot_points_keep_running:
        inst = dataclasses.replace(inst, pinned=inst.pinned | (inst.current_cfg >= 0))
    seconds = cpu = 0.0
    left = budget.moves_left(s, at)
    if inst.n_jobs:
        seed = int(np.random.SeedSequence([s.config.seed, s.events]).generate_state(1)[0])
        sol, seconds, cpu = solve_checked(s, inst, at, seed)
        waiting = int(sol.stats.get("waiting_for_spot", 0))
        if quiet and not (holds_spot(s, sol.node_vm) or waiting or s.spot_waiting):
            return unchanged(s, inst, at, seconds, cpu)
        s.spot_waiting = waiting
        running = inst.current_cfg >= 0
        moving = np.flatnonzero(moved(inst, sol.job_node, sol.job_cfg) & running)
        if left is not None and len(moving) > left:
            # over the hourly budget: the `left` moving jobs of least slack may move, the
            # method plans again around every other running job
            inst = budget.cut(inst, moving, left)
            sol, more, more_cpu = solve_checked(s, inst, at, seed)
            seconds, cpu = seconds + more, cpu + more_cpu
    elif quiet:
        return unchanged(s, inst, at, seconds, cpu)
    else:
        sol = Solution.empty(inst, method)
        s.spot_waiting = 0
    plan = apply(s, sol, at, inst)
    budget.spend(s, at, len(plan.migrate) + len(plan.preempt), left, sol.method or method)
    plan.solver_seconds, plan.solver_cpu_seconds = seconds, cpu
    s.time = at
    s.events += 1
    return plan


def holds_spot(s: RunState, node_vm: np.ndarray) -> bool:
    """Some node of `node_vm` (-1: closed) is a spot VM."""
    return bool(s.catalog.spot[node_vm[node_vm >= 0]].any())


def unchanged(s: RunState, inst: Instance, at: float, seconds: float, cpu: float) -> Plan:
    """The plan of a quiet point (`reschedule`): nothing changes (`Rescheduler.handle` puts
    the state back as it was, but for the capacity: the clock, the event count, the seeds of
    later points and the progress are the run's without spot)."""
    kept = Solution(inst, s.node_vm(), inst.current_node, inst.current_cfg)
    plan = Plan(
        time=at,
        method=s.config.method,
        objective=lambda: kept.objective,
        next_tick=at + s.config.interval(s.H),
        replanned=False,
    )
    plan.nodes, plan.jobs = target(s)
    plan.solver_seconds, plan.solver_cpu_seconds = seconds, cpu
    return plan


def solve_checked(
    s: RunState, inst: Instance, at: float, seed: int
) -> tuple[Solution, float, float]:
    """The method's checked Solution, its own seconds and the process CPU seconds. A method
    blind to VM counts: the types it overfilled are left out, until it solves within them;
    one that overfills a type already left out keeps its first solution, which `apply`
    refuses."""
    method, options = s.config.method, s.config.call_options()
    t0, c0 = _time.perf_counter(), _time.process_time()
    sol = solve(inst, method, seed=seed, **options)
    over, out = spot_estimates.over_capacity(s, sol), set()
    while over and not over <= out:
        out |= over | set(np.flatnonzero(inst.room == 0).tolist())
        retry = dataclasses.replace(view.instance(s, at, full=out), pinned=inst.pinned)
        retry = solve(retry, method, seed=seed, **options)
        over = spot_estimates.over_capacity(s, retry)
        sol = sol if over else retry
    cpu = _time.process_time() - c0
    seconds = float(sol.stats.get("seconds", _time.perf_counter() - t0))
    check_solution(sol)
    return sol, seconds, cpu


def apply(s: RunState, sol: Solution, at: float, inst: Instance) -> Plan:
    """Map solver nodes onto physical ones, apply the solution, return the differences;
    `inst` is the instance solved (the jobs' places, in `RunState.jobs` order); the nodes of
    its pinned jobs stay where they are, and so must the jobs."""
    method, startup = sol.method or s.config.method, s.config.startup
    names = s.catalog.vm_names
    # job i of `inst` is `s.jobs`' i-th: its record by its row (`RunState.order`), for the
    # jobs the plan changes alone, not a list of every record
    record, rows = s.cols.job, s.order()
    cur_node, cur_cfg, pinned = inst.current_node, inst.current_cfg, inst.pinned
    old_vm = s.node_vm()
    fixed = np.unique(cur_node[pinned]) if pinned.any() else None
    perm = match_nodes(old_vm, sol.node_vm, cur_node, cur_cfg, sol.job_node, sol.job_cfg, fixed)
    new_vm = np.full(s.config.nodes, -1, dtype=np.int64)
    new_vm[perm] = sol.node_vm
    plan = Plan(
        time=at,
        method=s.config.method,
        objective=lambda: sol.objective,  # P1$ of a whole plan: computed if read
        next_tick=at + s.config.interval(s.H),
    )
    # the nodes whose VM changes (opened, closed or resized), in node order
    changed = np.flatnonzero(old_vm != new_vm).tolist()
    s.renode.update(changed)
    for v, k in s.capacity.items():
        kept = int(np.count_nonzero((old_vm == v) & (new_vm == v)))
        if np.count_nonzero(new_vm == v) > max(k, kept):
            raise SolverError(
                f"{method}: holds {np.count_nonzero(new_vm == v)} "
                f"{names[v]} VMs, more than the {k} its capacity allows"
            )
    if changed:  # the other nodes keep their records (`RunState.nodes` stays in node order)
        before, nodes = s.nodes, dict(s.nodes)
        for p, old, new in zip(changed, old_vm[changed].tolist(), new_vm[changed].tolist()):
            if old < 0:
                plan.open.append(OpenVM(p, names[new]))
            elif new < 0:
                plan.close.append(CloseVM(p, names[old]))
                del nodes[p]
                continue
            else:
                plan.resize.append(ResizeVM(p, names[old], names[new]))
            nodes[p] = Node(new, ready_time(at, startup))
            if startup > 0:
                s.startup_cost += startup_cost(s.price[new], startup)
        # in node order (the keys sorted, not the (key, record) pairs: the same order)
        s.nodes = {p: nodes[p] for p in sorted(nodes)} if plan.open else nodes
        _node_arrays(s, before, changed, new_vm)

    cfg_vm, cfg_gpus = s.cfg_vm, s.cfg_gpus

    def place(n: int, c: int) -> Place:
        return Place(n, cfg_vm[c], cfg_gpus[c])

    new_node = np.where(sol.job_node >= 0, perm[np.maximum(sol.job_node, 0)], -1)
    changed = np.flatnonzero((new_node != cur_node) | (sol.job_cfg != cur_cfg)).tolist()
    for i, n, c in zip(changed, new_node[changed].tolist(), sol.job_cfg[changed].tolist()):
        job = record[rows[i]]
        if pinned[i]:
            raise SolverError(
                f"{method}: moves job {job.id}, pinned by the "
                f"disruption limit of {s.config.max_moves} moves per job"
            )
        touch(s, job)
        job.segment = 0.0  # it (re)starts: its checkpoint clock too
        if job.cfg < 0:
            plan.start.append(StartJob(job.id, n, cfg_vm[c], cfg_gpus[c], job.progress))
            if job.start is None:
                job.start = at
            # a measured progress (not one predicted since) anchors the evidence
            measured = job.reported is not None and job.progress == job.reported
            job.anchor = (job.progress, job.running) if measured else None
        else:
            job.anchor = None  # a new placement: its speed is counted from the next report
            lost = accounting.lose_work(s, job)
            old = place(job.node, job.cfg)
            if c < 0:
                job.preemptions += 1
                s.preemptions += 1
                plan.preempt.append(PreemptJob(job.id, old.node, old.vm, old.gpus, lost))
            else:
                job.migrations += 1
                s.migrations += 1
                plan.migrate.append(MigrateJob(job.id, old, place(n, c), lost))
        if c >= 0:
            move_data(s, job, n, c, at, plan)
        job.node, job.cfg = n, c
        s.replan[job.id] = None
    plan.nodes, plan.jobs = target(s)
    return plan


def _node_arrays(s: RunState, before: dict[int, Node], changed: list[int], vm: np.ndarray) -> None:
    """`RunState.node_arrays` of the new `s.nodes` from those of `before` (if cached): the
    nodes `changed` (in node order) opened, closed or resized, `vm` every node's VM type now
    (-1: closed). The arrays a pass over every node's record gives (the changed nodes'
    `ready` is their record's), at the cost of a few array operations."""
    cache = s.node_cache
    if cache[0] is not before:
        return
    _, nodes, _, ready = cache
    full = np.full(s.config.nodes, -np.inf)
    full[nodes] = ready
    now = s.nodes
    for p in changed:
        n = now.get(p)
        if n is not None:
            full[p] = n.ready
    nodes = np.flatnonzero(vm >= 0)
    s.node_cache = (now, nodes, vm[nodes], full[nodes])


def move_data(s: RunState, job: Job, n: int, c: int, at: float, plan: Plan) -> None:
    """Job `job` starts on node `n` (open) with configuration `c` at `at`: where that is
    another location than its data's, the data moves there (`gpuaas.transfer`): its egress is
    charged, the job runs only once the data is there (after its node's start-up), a
    `MoveData` tells the caller; its data is where it runs from now on."""
    cat = s.catalog
    if not cat.places:
        return
    loc = int(cat.location_index[cat.cfg_vm[c]])
    if loc < 0 or loc == job.data_at:
        return
    if job.data_at >= 0 and job.data_gb > 0:
        dollars, seconds = transfer.move(cat, job.data_at, loc, job.data_gb)
        s.egress_cost += dollars
        s.transfers += 1
        job.data_ready = max(at, s.nodes[n].ready) + seconds
        names = cat.location_names
        plan.transfer.append(
            MoveData(job.id, names[job.data_at], names[loc], job.data_gb, dollars, job.data_ready)
        )
    job.data_at = loc


def target(s: RunState) -> tuple[list[PlannedNode], list[PlannedJob]]:
    """A plan's target state: a `PlannedNode` per open node and a `PlannedJob` per job, the
    last plan's where nothing changed (they are immutable; `RunState.planned`): a plan lists
    every open node and unfinished job, an event changes a few. The last plan's jobs are
    `RunState.jobs` before the event, in its order; those submitted, completed or placed anew
    since are `RunState.replan`, in the order they changed, the nodes opened, closed or
    resized `RunState.renode` (after a restore, with no last plan, all are planned anew)."""
    names, cfg_vm, cfg_gpus = s.catalog.vm_names, s.cfg_vm, s.cfg_gpus
    # the last plan's, changed in place (not copied: a pass over every job and node; a failed
    # event's `state.rollback` then drops them, and the next plan lists every job and node
    # anew; a quiet point changes none)
    last_nodes, last_jobs = s.planned
    if s.renode or s.replan:
        s.planned_changed = True
    nodes = last_nodes
    added = False
    for p in s.renode:
        n = s.nodes.get(p)
        if n is None:
            nodes.pop(p, None)
        else:
            added = added or p not in nodes
            nodes[p] = PlannedNode(p, names[n.vm])
    if added:
        nodes = {p: nodes[p] for p in sorted(nodes)}
    if len(nodes) != len(s.nodes):  # no last plan (a restore)
        nodes = {p: PlannedNode(p, names[n.vm]) for p, n in s.nodes.items()}
    s.renode = set()

    def planned(j: Job) -> PlannedJob:
        c = j.cfg
        if c < 0:
            return PlannedJob(j.id, None, None, None)
        return PlannedJob(j.id, j.node, cfg_vm[c], cfg_gpus[c])

    jobs = s.jobs
    now = last_jobs if last_jobs or not jobs else {}
    for jid in s.replan if now else ():
        job = jobs.get(jid)
        if job is None:
            now.pop(jid, None)  # completed
        else:
            now[jid] = planned(job)  # a new job goes last, as in `jobs`
    if len(now) != len(jobs):
        now = {jid: planned(j) for jid, j in jobs.items()}
    s.replan = {}
    s.planned = (nodes, now)
    # the values themselves (C-speed copies, not a Python loop over every job)
    return list(nodes.values()), list(now.values())
