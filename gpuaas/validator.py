"""Independent validator: feasibility of a Solution and its f_OBJ, recomputed in plain Python.

Deliberately written apart from the numba kernels (no shared code beyond reading the Instance
fields), so that tests comparing the two catch a mistake in either.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gpuaas.errors import brief
from gpuaas.instance import Instance
from gpuaas.solution import Solution

#: relative tolerance between a solution file's stated objective and the recomputed one
OBJECTIVE_RTOL = 1e-6


@dataclass
class ValidationReport:
    """`errors` lists every violated rule (empty: feasible); `objective` is f_OBJ recomputed."""

    errors: list[str] = field(default_factory=list)
    objective: float = math.nan

    @property
    def ok(self) -> bool:
        return not self.errors


def validate(solution: Solution, p1n: bool = False) -> ValidationReport:
    """Check capacity, one VM type per node, job VM = node VM, <= N open nodes each hosting a
    job, runnable configurations; P1n (exactly min(N, J) open nodes) only when `p1n`."""
    inst = solution.instance
    cat = inst.catalog
    N, J = inst.nodes, inst.n_jobs
    names = list(cat.vm_names)
    gpus_of_vm = [int(g) for g in cat.gpus]
    price = [float(c) / 3600.0 for c in cat.cost_per_hour]
    cfg_list = [(v, g) for v in range(len(names)) for g in range(1, gpus_of_vm[v] + 1)]
    node_vm = [int(x) for x in solution.node_vm]
    job_node = [int(x) for x in solution.job_node]
    job_cfg = [int(x) for x in solution.job_cfg]
    rep = ValidationReport()
    err = rep.errors.append

    if len(node_vm) != N or len(job_node) != J or len(job_cfg) != J:
        err(f"array sizes {len(node_vm)}/{len(job_node)}/{len(job_cfg)} do not match N={N}, J={J}")
        return rep
    for n, v in enumerate(node_vm):
        if not -1 <= v < len(names):
            err(f"node {n}: VM index {v} out of range")
    used = [0] * N
    hosted = [0] * N
    first_end = [math.inf] * N
    total = 0.0
    for j in range(J):
        jid = inst.job_ids[j]
        n, c = job_node[j], job_cfg[j]
        d = float(inst.due[j]) - inst.time
        remaining = [
            float(inst.work[j][k]) * (1.0 - float(inst.progress[j])) for k in range(len(cfg_list))
        ]
        runnable = [t for t in remaining if math.isfinite(t)]
        if n == -1 and c == -1:
            worst = inst.H + max(runnable) - d
            total += inst.rho * float(inst.weight[j]) * max(0.0, worst)
            continue
        if n == -1 or c == -1:
            err(f"job {jid}: node {n} and configuration {c} must both be set or both be -1")
            continue
        if not 0 <= n < N:
            err(f"job {jid}: node {n} out of range 0..{N - 1}")
            continue
        if not 0 <= c < len(cfg_list):
            err(f"job {jid}: configuration {c} out of range")
            continue
        v, g = cfg_list[c]
        t = remaining[c]
        if not math.isfinite(t):
            err(f"job {jid}: cannot run on {names[v]} with {g} GPU(s)")
            continue
        if node_vm[n] != v:
            have = names[node_vm[n]] if 0 <= node_vm[n] < len(names) else "closed"
            err(f"job {jid}: needs {names[v]} but node {n} is {have}")
        used[n] += g
        hosted[n] += 1
        first_end[n] = min(first_end[n], t)
        total += float(inst.weight[j]) * max(0.0, t - d)
    n_open = 0
    for n, v in enumerate(node_vm):
        if v < 0:
            continue
        n_open += 1
        if hosted[n] == 0:
            err(f"node {n}: open ({names[v]}) but hosts no job")
        if used[n] > gpus_of_vm[v]:
            err(f"node {n}: {used[n]} GPUs assigned but {names[v]} has {gpus_of_vm[v]}")
        total += inst.mu * (gpus_of_vm[v] - used[n])
        if hosted[n]:
            total += price[v] * first_end[n]
    total += _reconfiguration(inst, node_vm, job_node, job_cfg, cfg_list, gpus_of_vm, price)
    if n_open > N:
        err(f"{n_open} open nodes exceed N={N}")
    if p1n and n_open != min(N, J):
        err(f"P1n: {n_open} open nodes, required exactly min(N, J) = {min(N, J)}")
    rep.objective = total
    return rep


def _reconfiguration(
    inst: Any,
    node_vm: list[int],
    job_node: list[int],
    job_cfg: list[int],
    cfg_list: list[tuple[int, int]],
    gpus_of_vm: list[int],
    price: list[float],
) -> float:
    """The reconfiguration terms of P1's extension, recomputed plainly: each running job moved
    off its node or configuration loses `overhead` s at its configuration's GPU-share price (and
    its weight x overhead when it is late on every configuration); each open node whose VM type
    is not the one its running jobs use now pays `startup` s of its VM's price. Written apart
    from `gpuaas.reconfiguration` on purpose: it is the independent check of those formulas."""
    total = 0.0
    now_type: dict[int, int] = {}
    for j in range(inst.n_jobs):
        n0, c0 = int(inst.current_node[j]), int(inst.current_cfg[j])
        if c0 < 0:
            continue
        v0, g0 = cfg_list[c0]
        now_type[n0] = v0
        if (job_node[j], job_cfg[j]) != (n0, c0) and inst.overhead > 0:
            remaining = [float(w) * (1.0 - float(inst.progress[j])) for w in inst.work[j]]
            late = float(inst.due[j]) - inst.time < min(remaining)
            share = price[v0] * g0 / gpus_of_vm[v0]
            total += inst.overhead * (share + (float(inst.weight[j]) if late else 0.0))
    if inst.startup > 0:
        for n, v in enumerate(node_vm):
            if v >= 0 and now_type.get(n) != v:
                total += inst.startup * price[v]
    return total


def check_file(
    instance: Instance, data: Any, source: str | None = None, p1n: bool = False
) -> ValidationReport:
    """`gpuaas check`: a solution file (the parsed JSON) against `instance`.

    Structure errors (unknown job ids, malformed entries) are InputErrors from
    `Solution.from_dict`. Besides feasibility (`validate`), the report lists a job given more
    than once, a job of the instance the file leaves out (a postponed job is listed with node
    null), and a stated ``objective`` (absent or null: none stated) that is not a finite number or differs from the
    recomputed f_OBJ by more than `OBJECTIVE_RTOL` (relative).
    """
    rep = validate(Solution.from_dict(instance, data, source), p1n=p1n)
    listed = Counter(jb["id"] for jb in data["jobs"])
    for jid, k in listed.items():
        if k > 1:
            rep.errors.append(f"job {jid}: listed {k} times")
    for jid in instance.job_ids:
        if jid not in listed:
            rep.errors.append(f"job {jid}: missing (every job is listed; node null when postponed)")
    if data.get("objective") is not None:  # null or absent: no objective stated
        claimed = data["objective"]
        if isinstance(claimed, bool) or not isinstance(claimed, (int, float)):
            rep.errors.append(f"objective: the file says {brief(claimed)}, not a number")
        elif not math.isfinite(claimed):
            rep.errors.append(f"objective: the file says {claimed!r}, not a finite number")
        elif not math.isclose(
            claimed, rep.objective, rel_tol=OBJECTIVE_RTOL, abs_tol=OBJECTIVE_RTOL
        ):
            rep.errors.append(
                f"objective: the file says {claimed:.10g}, recomputed {rep.objective:.10g}"
            )
    return rep
