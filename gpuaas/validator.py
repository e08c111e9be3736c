"""Independent validator: feasibility of a Solution and its objectives, recomputed in plain Python.

Deliberately written apart from the numba kernels and numpy code (no shared code beyond reading
the Instance fields and the number of fill-price rounds), so that tests comparing the two catch
a mistake in either: P1$ (formulations/P1D.md, with its per-job LP and fill price written out
again) and f_OBJ (P1a).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gpuaas import transfer
from gpuaas.errors import brief
from gpuaas.instance import DEMANDS, Instance
from gpuaas.objective import OBJECTIVES
from gpuaas.pricing import FILL_ROUNDS
from gpuaas.solution import Solution

#: relative tolerance between a solution file's stated objective and the recomputed one
OBJECTIVE_RTOL = 1e-6


@dataclass
class ValidationReport:
    """`errors` lists every violated rule (empty: feasible); `f_obj` is f_OBJ (P1a) recomputed,
    `objective` P1$ (recomputed on first use: the per-job LPs in plain Python take a while)."""

    errors: list[str] = field(default_factory=list)
    f_obj: float = math.nan
    solution: Solution | None = field(default=None, repr=False)
    _dollars: float | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def objective(self) -> float:
        """P1$ of the solution, recomputed (nan when the arrays do not fit the instance)."""
        if self._dollars is None:
            self._dollars = math.nan if self.solution is None else dollars(self.solution)
        return self._dollars

    def value(self, objective: str) -> float:
        """The recomputed objective named `objective` ("dollars" or "p1a")."""
        return self.f_obj if objective == "p1a" else self.objective


def validate(solution: Solution, p1n: bool = False) -> ValidationReport:
    """Check capacity (GPUs; vCPUs and memory where jobs declare them), one VM type per node, job VM = node VM, <= N open nodes each hosting a
    job, runnable configurations, pinned jobs where they run now, the catalog's GPU quotas;
    P1n (exactly min(N, J) open nodes) only when `p1n`."""
    inst = solution.instance
    cat = inst.catalog
    N, J = inst.nodes, inst.n_jobs
    names = list(cat.vm_names)
    gpus_of_vm = [int(g) for g in cat.gpus]
    price = [float(c) / 3600.0 for c in cat.cost_per_hour]
    cfg_list = _configs(gpus_of_vm)
    node_vm = [int(x) for x in solution.node_vm]
    job_node = [int(x) for x in solution.job_node]
    job_cfg = [int(x) for x in solution.job_cfg]
    rep = ValidationReport()
    err = rep.errors.append

    if len(node_vm) != N or len(job_node) != J or len(job_cfg) != J:
        err(f"array sizes {len(node_vm)}/{len(job_node)}/{len(job_cfg)} do not match N={N}, J={J}")
        return rep
    priced = True  # every index in range and every time finite: P1$ can be recomputed
    for n, v in enumerate(node_vm):
        if not -1 <= v < len(names):
            err(f"node {n}: VM index {v} out of range")
            priced = False
    used = [0] * N
    needs = {k: [0.0] * N for k in DEMANDS}  # CPUs and memory of each node's jobs
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
        if inst.pinned[j] and (n, c) != (int(inst.current_node[j]), int(inst.current_cfg[j])):
            err(
                f"job {jid}: pinned to node {int(inst.current_node[j])} (a disruption limit) but moved"
            )
        if n == -1 and c == -1:
            worst = inst.H + max(runnable) - d
            total += inst.rho * float(inst.weight[j]) * max(0.0, worst)
            continue
        if n == -1 or c == -1:
            err(f"job {jid}: node {n} and configuration {c} must both be set or both be -1")
            priced = False
            continue
        if not 0 <= n < N:
            err(f"job {jid}: node {n} out of range 0..{N - 1}")
            priced = False
            continue
        if not 0 <= c < len(cfg_list):
            err(f"job {jid}: configuration {c} out of range")
            priced = False
            continue
        v, g = cfg_list[c]
        t = remaining[c]
        if not math.isfinite(t):
            err(f"job {jid}: cannot run on {names[v]} with {g} GPU(s)")
            priced = False
            continue
        if node_vm[n] != v:
            have = names[node_vm[n]] if 0 <= node_vm[n] < len(names) else "closed"
            err(f"job {jid}: needs {names[v]} but node {n} is {have}")
        used[n] += g
        for k in DEMANDS:
            needs[k][n] += float(getattr(inst, k)[j])
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
        for k, capacity in DEMANDS.items():
            have = float(getattr(cat, capacity)[v])
            if needs[k][n] > have * (1.0 + 1e-9):  # the sum's rounding is no excess
                err(f"node {n}: its jobs need {needs[k][n]:g} {k} but {names[v]} has {have:g}")
        total += inst.mu * (gpus_of_vm[v] - used[n])
        if hosted[n]:
            total += price[v] * first_end[n]
    total += _reconfiguration(inst, node_vm, job_node, job_cfg, cfg_list, gpus_of_vm, price)
    if n_open > N:
        err(f"{n_open} open nodes exceed N={N}")
    spot = [bool(b >= 0) for b in cat.base]
    for q in cat.quotas:  # the GPUs of the open VMs each quota counts
        total_q = 0
        for v in node_vm:
            if not 0 <= v < len(names) or cat.gpu_models[v] != q.gpu or spot[v] != q.spot:
                continue
            loc = cat.locations[v]
            if not q.at or q.at == loc or q.at in cat.places.get(loc, {}).values():
                total_q += gpus_of_vm[v]
        if total_q > q.gpus:
            where = q.at or "every place"
            kind = " spot" if q.spot else ""
            err(f"{total_q} {q.gpu}{kind} GPUs open at {where}, over their quota of {q.gpus}")
    if p1n and n_open != min(N, J):
        err(f"P1n: {n_open} open nodes, required exactly min(N, J) = {min(N, J)}")
    rep.f_obj = total
    if priced:
        rep.solution = solution
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
            share = _share_price(inst, j, v0, g0, price[v0])
            total += inst.overhead * (share + (float(inst.weight[j]) if late else 0.0))
    if inst.startup > 0:
        for n, v in enumerate(node_vm):
            if v >= 0 and now_type.get(n) != v:
                total += inst.startup * price[v]
    return total


def _configs(gpus: list[int]) -> list[tuple[int, int]]:
    """(VM type, GPUs) of every configuration in index order: (v, 1) .. (v, G_v) of each type,
    (v, 0) of a GPU-less one."""
    return [(v, g) for v, G in enumerate(gpus) for g in (range(1, G + 1) if G else [0])]


def _share(inst: Any, j: int, v: int, g: int) -> float:
    """The part of a VM of type v that job j holds on (v, g): g / G_v, or on a GPU-less type
    its largest share of the vCPUs or memory the type declares."""
    G = int(inst.catalog.gpus[v])
    if G:
        return g / G
    share = 0.0
    for k, capacity in DEMANDS.items():
        have = float(getattr(inst.catalog, capacity)[v])
        if math.isfinite(have):
            share = max(share, float(getattr(inst, k)[j]) / have)
    return share


def _share_price(inst: Any, j: int, v: int, g: int, price: float) -> float:
    """$/s of job j's part of a VM of type v priced `price` $/s on (v, g) (`_share`)."""
    G = int(inst.catalog.gpus[v])
    return price * g / G if G else price * _share(inst, j, v, g)


def _lp_values(
    times: list[float],
    slack: float,
    weight: float,
    price: list[float],
    switch: list[float],
    partner: list[int],
) -> list[float]:
    """The per-job LP (formulations/BOUND.md §1) of one job, read per configuration c: the least
    cost of a plan that runs c first, alone (price x time + tardiness) or, when c ends before
    the slack, mixed with a slower, cheaper configuration c2 so as to end at the slack (plus the
    switch to c2). When c is c2's on-demand `partner` (c2 spot on the same VM type), the mix
    runs c2 first and is c2's value (plus the switch to c)."""
    out = [math.inf] * len(times)
    for c, t in enumerate(times):
        if math.isfinite(t):
            out[c] = t * price[c] + weight * max(0.0, t - slack)
    for c1, t1 in enumerate(times):
        if not t1 < slack:
            continue
        a1 = t1 * price[c1]
        for c2, t2 in enumerate(times):
            if not (math.isfinite(t2) and t2 > slack) or t2 * price[c2] >= a1:
                continue
            f1 = (t2 - slack) / (t2 - t1)
            if partner[c2] == c1:
                out[c2] = min(out[c2], f1 * a1 + (1.0 - f1) * (t2 * price[c2]) + switch[c1])
            else:
                out[c1] = min(out[c1], f1 * a1 + (1.0 - f1) * (t2 * price[c2]) + switch[c2])
    return out


def _partners(cat: Any, cfgs: list[tuple[int, int]]) -> list[int]:
    """Per configuration (v, g): for a spot variant, the index of (its on-demand type, g), found
    by the type's name without the ``:spot`` suffix; -1 for an on-demand one."""
    index = {(cat.vm_names[v], g): c for c, (v, g) in enumerate(cfgs)}
    return [
        index[(cat.vm_names[v].removesuffix(":spot"), g)] if bool(cat.spot[v]) else -1
        for v, g in cfgs
    ]


def _fill_price(
    inst: Any, cfgs: list[tuple[int, int]], times: list[list[float]]
) -> list[list[float]]:
    """The fill price (`gpuaas.pricing.fill_price`) again, per job and configuration: each
    configuration's share of its VM price, then price_v x g / min(G_v, max(g, D_m)) with D_m
    the GPUs of model m that the jobs' cheapest plans ask for, until D repeats (at most
    FILL_ROUNDS rounds); a GPU-less type's (v, 0) at the job's share of it (`_share`)."""
    cat = inst.catalog
    vm_price = [float(c) / 3600.0 for c in cat.cost_per_hour]
    gpus = [int(g) for g in cat.gpus]
    # a spot variant packs apart from its on-demand type: a GPU model of its own
    model = [(cat.gpu_models[v], bool(cat.spot[v])) for v, _ in cfgs]
    partner = _partners(cat, cfgs)
    gpu_less = [c for c, (v, _) in enumerate(cfgs) if not gpus[v]]
    price = [vm_price[v] * (g / gpus[v]) if gpus[v] else 0.0 for v, g in cfgs]
    demand: dict[str, float] | None = None
    for _ in range(FILL_ROUNDS):
        rows = _per_job(inst, cfgs, price, gpu_less, vm_price)
        switches = [_switch(inst, cfgs, row, vm_price) for row in rows]
        asked = dict.fromkeys(model, 0.0)
        for j in range(inst.n_jobs):
            values = _lp_values(
                times[j],
                float(inst.due[j]) - inst.time,
                float(inst.weight[j]),
                rows[j],
                switches[j],
                partner,
            )
            if any(math.isfinite(x) for x in values):
                best = min(range(len(values)), key=values.__getitem__)
                asked[model[best]] += cfgs[best][1]
        if asked == demand:
            break
        demand = asked
        price = [
            vm_price[v] * g / min(gpus[v], max(g, demand[model[c]])) if gpus[v] else 0.0
            for c, (v, g) in enumerate(cfgs)
        ]
    return _per_job(inst, cfgs, price, gpu_less, vm_price)


def _per_job(
    inst: Any, cfgs: list[tuple[int, int]], price: list[float], gpu_less: list[int], vm_price
) -> list[list[float]]:
    """Per job, `price` with the GPU-less configurations at the job's share (`_share`); every
    job's row is `price` itself without them."""
    if not gpu_less:
        return [price] * inst.n_jobs
    out = []
    for j in range(inst.n_jobs):
        row = list(price)
        for c in gpu_less:
            v, g = cfgs[c]
            row[c] = vm_price[v] * _share(inst, j, v, g)
        out.append(row)
    return out


def _switch(inst: Any, cfgs: list[tuple[int, int]], price: list[float], vm_price) -> list[float]:
    """A switch's cost per configuration at `price`: the lost work and a start-up."""
    return [inst.overhead * price[c] + inst.startup * vm_price[v] for c, (v, _) in enumerate(cfgs)]


class Priced(NamedTuple):
    """What P1$ prices, recomputed plainly for one instance (`priced`)."""

    instance: Any
    configs: list[tuple[int, int]]  # (VM type, GPUs) per configuration
    vm_price: list[float]  # $/s per VM type
    times: list[list[float]]  # remaining time per job and configuration
    price: list[list[float]]  # the fill price per job and configuration
    switch: list[list[float]]  # a switch's cost per job and configuration: lost work, start-up
    partner: list[int]  # per configuration: a spot one's on-demand configuration, else -1


def priced(inst: Any) -> Priced:
    """The fill price and switch costs of `inst`, for `run_value` and `wait_value`."""
    cat = inst.catalog
    gpus = [int(g) for g in cat.gpus]
    vm_price = [float(c) / 3600.0 for c in cat.cost_per_hour]
    cfgs = _configs(gpus)
    times = [
        [float(inst.work[j][c]) * (1.0 - float(inst.progress[j])) for c in range(len(cfgs))]
        for j in range(inst.n_jobs)
    ]
    price = _fill_price(inst, cfgs, times)
    switch = [_switch(inst, cfgs, row, vm_price) for row in price]
    return Priced(inst, cfgs, vm_price, times, price, switch, _partners(cat, cfgs))


def run_value(p: Priced, j: int, c: int) -> float:
    """P1$'s value of running job j on configuration c: its GPUs at the fill price for H s (or
    to its end, with its tardiness), then its best plan from T_c + H for the work left, a
    configuration other than c after its switch."""
    inst, H = p.instance, p.instance.H
    slack, weight = float(inst.due[j]) - inst.time, float(inst.weight[j])
    t = p.times[j][c]
    price, switch = p.price[j], p.switch[j]
    if t <= H:
        return t * price[c] + weight * max(0.0, t - slack) + _moving(p, j, c)
    left = 1.0 - H / t
    after = _lp_values([x * left for x in p.times[j]], slack - H, weight, price, switch, p.partner)
    here = _location(p, c)  # a later switch to another location moves the data from here
    return (
        H * price[c]
        + min(
            x + (0.0 if k == c else switch[k] + _moving(p, j, k, here)) for k, x in enumerate(after)
        )
        + _moving(p, j, c)
    )


def _location(p: Priced, c: int) -> int:
    """The index of configuration c's location in the catalog's places (-1: none)."""
    cat = p.instance.catalog
    name = cat.locations[p.configs[c][0]]
    return list(cat.places).index(name) if name else -1


def _moving(p: Priced, j: int, c: int, at: int | None = None) -> float:
    """The move of job j's data from location `at` (default: where it is) to configuration c's
    location, recomputed plainly from the places' per-GB price and seconds (`gpuaas.transfer`):
    its egress, and the copy's seconds at c's GPU share of its VM price plus the job's weight
    when it is late on every configuration."""
    inst = p.instance
    cat = inst.catalog
    at = int(inst.data_at[j]) if at is None else at
    gb = float(inst.data_gb[j])
    v, g = p.configs[c]
    dst = cat.locations[v]
    if at < 0 or gb <= 0 or not dst:
        return 0.0
    src, dst = cat.places[list(cat.places)[at]], cat.places[dst]
    seconds = gb * transfer.seconds_per_gb(src, dst)
    late = float(inst.due[j]) - inst.time < min(p.times[j])
    rate = _share_price(inst, j, v, g, p.vm_price[v]) + (float(inst.weight[j]) if late else 0.0)
    return gb * transfer.per_gb(src, dst) + seconds * rate


def wait_value(p: Priced, j: int) -> float:
    """P1$'s value of job j waiting: its best plan from T_c + H, plus the start-up share of
    that plan's first configuration."""
    inst = p.instance
    slack = float(inst.due[j]) - inst.time - inst.H
    price = p.price[j]
    later = _lp_values(p.times[j], slack, float(inst.weight[j]), price, p.switch[j], p.partner)
    return min(x + inst.startup * price[k] + _moving(p, j, k) for k, x in enumerate(later))


def dollars(solution: Solution) -> float:
    """P1$ (formulations/P1D.md) of a solution of the right sizes, in plain Python: each running
    job's `run_value`, each waiting job's `wait_value`, H x each open VM's price less its jobs'
    fill prices (at least 0), and the reconfiguration terms (`_reconfiguration`)."""
    inst = solution.instance
    p = priced(inst)
    node_vm = [int(x) for x in solution.node_vm]
    job_node = [int(x) for x in solution.job_node]
    job_cfg = [int(x) for x in solution.job_cfg]
    paid = [0.0] * inst.nodes
    total = 0.0
    for j in range(inst.n_jobs):
        n, c = job_node[j], job_cfg[j]
        if c < 0:
            total += wait_value(p, j)
        else:
            paid[n] += p.price[j][c]
            total += run_value(p, j, c)
    for n, v in enumerate(node_vm):
        if v >= 0:
            total += inst.H * max(0.0, p.vm_price[v] - paid[n])
    gpus = [int(g) for g in inst.catalog.gpus]
    return total + _reconfiguration(inst, node_vm, job_node, job_cfg, p.configs, gpus, p.vm_price)


def check_file(
    instance: Instance, data: Any, source: str | None = None, p1n: bool = False
) -> ValidationReport:
    """`gpuaas check`: a solution file (the parsed JSON) against `instance`.

    Structure errors (unknown job ids, malformed entries) are InputErrors from
    `Solution.from_dict`. Besides feasibility (`validate`), the report lists a job given more
    than once, a job of the instance the file leaves out (a postponed job is listed with node
    null), and a stated ``objective`` (absent or null: none stated) that is not a finite
    number or differs from the recomputed one by more than `OBJECTIVE_RTOL` (relative): P1$
    when the file's ``objective_function`` is "dollars", f_OBJ when it is "p1a" or absent (files
    written before P1$ stated f_OBJ).
    """
    rep = validate(Solution.from_dict(instance, data, source), p1n=p1n)
    listed = Counter(jb["id"] for jb in data["jobs"])
    for jid, k in listed.items():
        if k > 1:
            rep.errors.append(f"job {jid}: listed {k} times")
    for jid in instance.job_ids:
        if jid not in listed:
            rep.errors.append(f"job {jid}: missing (every job is listed; node null when postponed)")
    kind = data.get("objective_function", "p1a")
    if kind not in OBJECTIVES:
        rep.errors.append(
            f"objective_function: the file says {brief(kind)}, not one of {', '.join(OBJECTIVES)}"
        )
    elif data.get("objective") is not None:  # null or absent: no objective stated
        claimed = data["objective"]
        if isinstance(claimed, bool) or not isinstance(claimed, (int, float)):
            rep.errors.append(f"objective: the file says {brief(claimed)}, not a number")
        elif not math.isfinite(claimed):
            rep.errors.append(f"objective: the file says {claimed!r}, not a finite number")
        elif not math.isclose(
            claimed, rep.value(kind), rel_tol=OBJECTIVE_RTOL, abs_tol=OBJECTIVE_RTOL
        ):
            rep.errors.append(
                f"objective: the file says {claimed:.10g}, recomputed {rep.value(kind):.10g}"
            )
    return rep
