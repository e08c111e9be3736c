"""The plots people read campaign results from (matplotlib, Agg backend; the `plot` extra).

From result rows (`gpuaas.experiments.rows`: a campaign's or a comparison's file), with the
numbers of `gpuaas.experiments.analysis`: total cost by method and scenario with the ratio to
EDF (the paper's Fig. 3), percentage cost reduction of path relinking over each method,
min/mean/max (Fig. 4, eq. 3), and solver time per event against N (Fig. 5). Methods appear in
the paper's order with their registry labels. From one simulation's event log
(docs/design.md §10) and its trace: a Gantt chart of nodes (VM type per interval) and jobs (GPUs per
job, due dates marked), and the cumulative cost over time. From simulation results (`gpuaas
simulate --json`, whose per-job records campaign rows do not keep): the CDFs of JCT and lateness.
Every function writes PNG, SVG or PDF, chosen by the output file's extension, through a
temporary file (no partial output).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from gpuaas.errors import InputError, brief
from gpuaas.experiments.analysis import (
    BASELINE,
    REFERENCE,
    bound_table,
    cost_table,
    label,
    order,
    pct_reductions,
    row_run,
    run_name,
    scenario,
    solver_time_per_event,
)
from gpuaas.files import check_output, open_output, read_json
from gpuaas.limits import HORIZON
from gpuaas.metrics import job_metrics, lateness

FORMATS = (".png", ".svg", ".pdf")
# the paper's Fig. 4 colours: min orange, mean blue, max green
_MIN, _MEAN, _MAX = "tab:orange", "tab:blue", "tab:green"


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise InputError(None, None, "plots need matplotlib: pip install 'gpuaas[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _check_output(out: str | Path) -> Path:
    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise InputError(
            str(out), None, f"unknown image format {out.suffix!r}; use one of {', '.join(FORMATS)}"
        )
    check_output(out)
    return out


def _save(fig: Any, out: Path) -> None:
    """Save through `gpuaas.files.open_output` (no partial image), in the format of the suffix."""
    plt = _pyplot()
    try:
        with open_output(out, binary=True) as fh:
            fig.savefig(fh, format=out.suffix.lower().lstrip("."), dpi=130, bbox_inches="tight")
    finally:
        plt.close(fig)


def _colors(labels: list[str]) -> dict[str, Any]:
    """A distinct colour per label; never grey, which the Gantt chart uses for waiting."""
    plt = _pyplot()
    t10, t20 = plt.get_cmap("tab10"), plt.get_cmap("tab20")
    palette = [t10(i) for i in (0, 1, 2, 3, 4, 5, 6, 8, 9)] + [
        t20(i) for i in (1, 3, 5, 7, 9, 11, 17, 19)
    ]
    return {lab: palette[i % len(palette)] for i, lab in enumerate(labels)}


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _ok(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ok = [r for r in rows if r.get("status") == "ok" and r.get("total_cost") is not None]
    if not ok:
        raise InputError(None, None, "the results hold no successful simulation to plot")
    return ok


def _title(scen: str, rows: list[dict[str, Any]]) -> str:
    """A column's title: "<pattern> arrivals" for generated traces, else the trace's name."""
    return f"{scen} arrivals" if any(r.get("arrivals") == scen for r in rows) else Path(scen).name


def plot_costs(rows: list[dict[str, Any]], out: str | Path, reference: str = BASELINE) -> Path:
    """Mean total cost by method and scenario, with the ratio to `reference` (paper Fig. 3)
    and the distance to the lower bound.

    One column per arrival pattern: bars of the mean total cost (VM + tardiness, $)
    per node count N and method; below them each method's mean cost divided by the
    reference method's mean cost in the same scenario; and, when the results have bounds,
    each method's mean of cost / bound (`gpuaas bound` on the cell's trace and node count:
    1 is the lowest cost any schedule could reach).
    """
    out = _check_output(out)
    plt = _pyplot()
    table = cost_table(rows)
    over_bound = bound_table(rows)
    arrivals = sorted({k[0] for k in table})
    labels = order(k[2] for k in table)
    colors = _colors(labels)
    has_ref = any(k[2] == reference for k in table)
    ratios = [3] + [2] * (has_ref + bool(over_bound))
    fig, axes = plt.subplots(
        len(ratios),
        len(arrivals),
        squeeze=False,
        figsize=(max(6.0, 4.8 * len(arrivals)), 1.5 * sum(ratios)),
        gridspec_kw={"height_ratios": ratios},
    )
    width = 0.8 / len(labels)
    for col, arr in enumerate(arrivals):
        ns = sorted({k[1] for k in table if k[0] == arr})
        ax = axes[0][col]
        for i, lab in enumerate(labels):
            xs = [x + (i - (len(labels) - 1) / 2) * width for x in range(len(ns))]
            ys = [table.get((arr, n, lab), math.nan) for n in ns]
            ax.bar(xs, ys, width, color=colors[lab], label=label(lab))
        ax.set_xticks(range(len(ns)), [str(n) for n in ns])
        ax.set_xlabel("nodes N")
        ax.set_title(_title(arr, rows))
        ax.grid(axis="y", which="both", alpha=0.3)
        if col == 0:
            ax.set_ylabel("mean total cost ($)")
        if has_ref:
            ax2 = axes[1][col]
            for lab in labels:
                pts = [
                    (str(n), table[(arr, n, lab)] / table[(arr, n, reference)])
                    for n in ns
                    if (arr, n, lab) in table and table.get((arr, n, reference), 0) > 0
                ]
                if pts:
                    ax2.plot(
                        [p[0] for p in pts],
                        [p[1] for p in pts],
                        "o-",
                        color=colors[lab],
                        label=label(lab),
                    )
            ax2.axhline(1.0, color="black", lw=0.8, ls="--")
            ax2.set_ylim(bottom=0)
            ax2.set_xlabel("nodes N")
            ax2.grid(alpha=0.3)
            if col == 0:
                ax2.set_ylabel(f"cost / cost of {label(reference)}")
        if over_bound:
            ax3 = axes[-1][col]
            for lab in labels:
                pts = [
                    (str(n), over_bound[(arr, n, lab)]) for n in ns if (arr, n, lab) in over_bound
                ]
                if pts:
                    ax3.plot(
                        [p[0] for p in pts],
                        [p[1] for p in pts],
                        "o-",
                        color=colors[lab],
                        label=label(lab),
                    )
            ax3.axhline(1.0, color="black", lw=0.8, ls="--")
            ax3.set_ylim(bottom=min(0.9, *(v for k, v in over_bound.items() if k[0] == arr)))
            ax3.set_xlabel("nodes N")
            ax3.grid(alpha=0.3)
            if col == 0:
                ax3.set_ylabel("cost / lower bound")
    fig.suptitle(
        "Total cost (VM + tardiness) after all jobs complete"
        + (f"; ratio to {reference}" if has_ref else f" ({reference} not in the results)")
        + ("; distance to the lower bound" if over_bound else "")
    )
    fig.tight_layout()
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="center left", bbox_to_anchor=(1.0, 0.5), title="method")
    _save(fig, out)
    return out


def plot_pct(rows: list[dict[str, Any]], out: str | Path, reference: str = REFERENCE) -> Path:
    """Percentage cost reduction of `reference` over every other method: min, mean, max (Fig. 4)."""
    out = _check_output(out)
    plt = _pyplot()
    if not any(r["method"] == reference for r in _ok(rows)):
        raise InputError(
            None, None, f"the results hold no successful {reference} simulation to compare with"
        )
    pct = {k: v for k, v in pct_reductions(rows, reference).items() if k[1] != reference}
    if not pct:
        raise InputError(None, None, f"no other method shares a trace and seed with {reference}")
    arrivals = sorted({k[0] for k in pct})
    fig, axes = plt.subplots(
        1, len(arrivals), squeeze=False, sharey=True, figsize=(max(6.0, 4.8 * len(arrivals)), 4.8)
    )
    for col, arr in enumerate(arrivals):
        ax = axes[0][col]
        labels = order(k[1] for k in pct if k[0] == arr)
        xs = range(len(labels))
        for off, (name, fn, color) in zip(
            (-0.27, 0.0, 0.27), (("min", min, _MIN), ("mean", _mean, _MEAN), ("max", max, _MAX))
        ):
            ax.bar(
                [x + off for x in xs],
                [fn(pct[(arr, lab)]) for lab in labels],
                0.27,
                color=color,
                label=name,
            )
        ax.axhline(0.0, color="black", lw=0.8)
        ax.set_xticks(list(xs), [label(lab) for lab in labels], rotation=35, ha="right")
        ax.set_title(_title(arr, rows))
        ax.grid(axis="y", alpha=0.3)
        if col == 0:
            ax.set_ylabel(f"cost reduction of {label(reference)} (%)")
    axes[0][0].legend(title="over simulations")
    fig.suptitle(
        f"Percentage cost reduction of {label(reference)}: (C_method - C_ref) / C_method (eq. 3)"
    )
    fig.tight_layout()
    _save(fig, out)
    return out


def plot_solver_time(rows: list[dict[str, Any]], out: str | Path, clock: str = "wall") -> Path:
    """Mean solver time per rescheduling event against N, per method (paper Fig. 5)."""
    out = _check_output(out)
    plt = _pyplot()
    acc: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for r in _ok(rows):
        t = solver_time_per_event(r, clock)
        if t is not None:
            acc[(scenario(r), row_run(r), r["nodes"])].append(t)
    if not acc:
        raise InputError(None, None, f"the results hold no {clock} solver times")
    arrivals = sorted({k[0] for k in acc})
    labels = order(k[1] for k in acc)
    colors = _colors(labels)
    fig, axes = plt.subplots(
        1, len(arrivals), squeeze=False, sharey=True, figsize=(max(6.0, 4.8 * len(arrivals)), 4.5)
    )
    for col, arr in enumerate(arrivals):
        ax = axes[0][col]
        for lab in labels:
            ns = sorted(k[2] for k in acc if k[0] == arr and k[1] == lab)
            if ns:
                ys = [max(_mean(acc[(arr, lab, n)]), 1e-6) for n in ns]
                ax.plot(ns, ys, "o-", color=colors[lab], label=label(lab))
        ax.set_yscale("log")
        ax.set_xticks(sorted({k[2] for k in acc if k[0] == arr}))
        ax.set_xlabel("nodes N")
        ax.set_title(_title(arr, rows))
        ax.grid(which="both", alpha=0.3)
        if col == 0:
            ax.set_ylabel(
                f"mean solver {'CPU ' if clock == 'cpu' else ''}time per event (s, log scale)"
            )
    fig.suptitle(
        "Solver time per rescheduling event" + (" (process CPU time)" if clock == "cpu" else "")
    )
    fig.tight_layout()
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="center left", bbox_to_anchor=(1.0, 0.5), title="method")
    _save(fig, out)
    return out


# ---------------------------------------------------------------------------------------------
# one simulation: event log + trace


def read_event_log(
    path: str | Path, trace: Any = None, trace_name: str | None = None
) -> list[dict[str, Any]]:
    """The intervals of an event log (JSON lines, docs/design.md §10), checked field by field; with
    `trace` (an Instance or a file), also that its jobs and VM types are the trace's (a log of
    another simulation is an InputError naming `trace_name`)."""
    source = str(path)
    inst = None if trace is None else _trace(trace)
    name = trace_name or (str(trace) if isinstance(trace, (str, Path)) else "the trace")
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise InputError(source, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(
            source, None, f"not UTF-8 text (byte {exc.start}); JSON files are UTF-8"
        ) from None
    out = []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(source, f"line {i}", f"not valid JSON: {exc.msg}") from None
        except RecursionError:
            raise InputError(source, f"line {i}", "not valid JSON: nested too deeply") from None
        except ValueError as exc:  # an integer of more digits than Python converts
            raise InputError(source, f"line {i}", f"not valid JSON: {exc}") from None
        _check_interval(rec, inst, InputError(source, f"line {i}", ""), name)
        out.append(rec)
    if not out:
        raise InputError(source, None, "the event log holds no interval")
    return out


def _check_interval(rec: Any, inst: Any, at: InputError, trace_name: Any) -> None:
    """One event-log line: {"start", "end", "nodes": [{"node", "vm"}], "jobs": [{"id", "node",
    "vm", "gpus"}]} with numbers where numbers go and, given the trace, its jobs and VM types."""

    def fail(problem: str) -> None:
        raise InputError(at.source, at.field, problem)

    def number(x: Any) -> bool:
        return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)

    def integer(x: Any) -> bool:
        return not isinstance(x, bool) and isinstance(x, int) and x >= 0

    if not isinstance(rec, dict) or not {"start", "end", "nodes", "jobs"} <= set(rec):
        fail("expected an object with start, end, nodes and jobs")
    if not number(rec["start"]) or not number(rec["end"]):
        fail("start and end must be finite numbers of seconds")
    if not rec["end"] >= rec["start"]:
        fail(f"interval ends ({rec['end']}) before it starts ({rec['start']})")
    if not isinstance(rec["nodes"], list) or not isinstance(rec["jobs"], list):
        fail("nodes and jobs must be lists")
    for nd in rec["nodes"]:
        if (
            not isinstance(nd, dict)
            or not integer(nd.get("node"))
            or not isinstance(nd.get("vm"), str)
        ):
            fail(f'a node must be {{"node": integer, "vm": name}}, got {brief(nd)}')
    for jb in rec["jobs"]:
        if (
            not isinstance(jb, dict)
            or not isinstance(jb.get("id"), str)
            or not integer(jb.get("node"))
            or not isinstance(jb.get("vm"), str)
            or not integer(jb.get("gpus"))
            or jb["gpus"] < 1
        ):
            fail(f'a job must be {{"id", "node", "vm", "gpus"}}, got {brief(jb)}')
    if inst is None:
        return
    cat = inst.catalog
    for item in rec["nodes"] + rec["jobs"]:
        if item["vm"] not in cat.vm_names:
            fail(f"VM type {brief(item['vm'])} is not in the catalog of {trace_name}")
    ids = set(inst.job_ids)
    for jb in rec["jobs"]:
        if jb["id"] not in ids:
            fail(f"job {brief(jb['id'])} is not in {trace_name}")
        g = int(cat.gpus[cat.vm_index(jb["vm"])])
        if jb["gpus"] > g:
            fail(f"job {jb['id']!r} has {jb['gpus']} GPUs of {jb['vm']}, which has {g}")


def _name(trace: Any) -> str:
    return str(trace) if isinstance(trace, (str, Path)) else "the trace"


def _trace(trace: Any) -> Any:
    from gpuaas.instance import Instance, load_instance

    return trace if isinstance(trace, Instance) else load_instance(trace)


def completions(intervals: list[dict[str, Any]]) -> dict[str, float]:
    """Each job's completion time: the end of the last interval it runs in."""
    done: dict[str, float] = {}
    for rec in intervals:
        for j in rec["jobs"]:
            done[j["id"]] = max(done.get(j["id"], -math.inf), rec["end"])
    return done


def cost_over_time(intervals: list[dict[str, Any]], trace: Any) -> dict[str, list[float]]:
    """Cumulative VM, tardiness and total cost ($) at each interval end, from the log alone.

    VM cost accrues as price x length per open node; a job's tardiness cost
    w_j * max(0, C_j - due_j) is counted at its completion C_j.
    """
    inst = _trace(trace)
    cat = inst.catalog
    price = {name: float(cat.cost[v]) for v, name in enumerate(cat.vm_names)}
    due = dict(zip(inst.job_ids, inst.due.tolist()))
    weight = dict(zip(inst.job_ids, inst.weight.tolist()))
    tard_at: dict[float, float] = defaultdict(float)
    for jid, c in completions(intervals).items():
        if jid not in due:
            raise InputError(None, None, f"job {jid!r} of the event log is not in the trace")
        tard_at[c] += weight[jid] * max(0.0, c - due[jid])
    t = [intervals[0]["start"]]
    vm, tard = [0.0], [0.0]
    for rec in sorted(intervals, key=lambda r: r["start"]):
        try:
            vm.append(
                vm[-1] + sum(price[n["vm"]] for n in rec["nodes"]) * (rec["end"] - rec["start"])
            )
        except KeyError as exc:
            raise InputError(
                None,
                None,
                f"VM type {exc.args[0]!r} of the event log is not in the trace's catalog",
            ) from None
        tard.append(tard[-1] + tard_at.pop(rec["end"], 0.0))
        t.append(rec["end"])
    return {
        "time": t,
        "vm_cost": vm,
        "tardiness_cost": tard,
        "total_cost": [a + b for a, b in zip(vm, tard)],
    }


def plot_cost_over_time(events: str | Path, trace: Any, out: str | Path) -> Path:
    """Cumulative VM, tardiness and total cost of one simulation over time (from its event log)."""
    out = _check_output(out)
    plt = _pyplot()
    inst = _trace(trace)
    c = cost_over_time(read_event_log(events, inst, _name(trace)), inst)
    # tardiness is charged at completions: two points per interval end draw its steps exactly
    hours = [x / 3600.0 for x in c["time"] for _ in (0, 1)][1:]
    vm = [x for x in c["vm_cost"] for _ in (0, 1)][1:]
    td = c["tardiness_cost"]
    tard = [v for i in range(len(td)) for v in (td[max(i - 1, 0)], td[i])][1:]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(hours, [a + b for a, b in zip(vm, tard)], color="black", lw=2, label="total")
    ax.plot(hours, vm, color="tab:blue", label="VM rental")
    ax.plot(hours, tard, color="tab:red", label="tardiness (charged at completion)")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("cumulative cost ($)")
    ax.set_title(
        f"Cumulative cost: total ${c['total_cost'][-1]:,.2f} "
        f"(VM ${c['vm_cost'][-1]:,.2f} + tardiness ${c['tardiness_cost'][-1]:,.2f})"
    )
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    _save(fig, out)
    return out


def _segments(
    intervals: list[dict[str, Any]], items: str, key: str, value: str
) -> dict[Any, list[list[Any]]]:
    """Per node (or job): [start, end, value] runs, consecutive intervals with the same value merged."""
    runs: dict[Any, list[list[Any]]] = defaultdict(list)
    for rec in sorted(intervals, key=lambda r: r["start"]):
        for it in rec[items]:
            v = it[value]
            seg = runs[it[key]]
            if seg and seg[-1][2] == v and abs(seg[-1][1] - rec["start"]) < 1e-9:
                seg[-1][1] = rec["end"]
            else:
                seg.append([rec["start"], rec["end"], v])
    return runs


def plot_gantt(events: str | Path, trace: Any, out: str | Path) -> Path:
    """Gantt chart of one simulation: nodes (VM type per interval) and jobs (GPUs; due dates).

    Top: one row per node, coloured by the VM type it runs. Bottom: one row per job in release
    order, coloured by its GPU count while it runs, a thin grey line while it waits after its
    release, and a black tick at its due date (red when the job completed late).
    """
    out = _check_output(out)
    plt = _pyplot()
    from matplotlib.patches import Patch

    inst = _trace(trace)
    intervals = read_event_log(events, inst, _name(trace))
    h = 1 / 3600.0
    nodes = _segments(intervals, "nodes", "node", "vm")
    jobs = _segments(intervals, "jobs", "id", "gpus")
    done = completions(intervals)
    vms = [
        v for v in inst.catalog.vm_names if any(s[2] == v for seg in nodes.values() for s in seg)
    ]
    vm_color = _colors(vms)
    max_g = max([s[2] for seg in jobs.values() for s in seg] + [1])
    gcmap = plt.get_cmap("viridis")
    g_color = {g: gcmap((g - 1) / max(1, max_g - 1) * 0.9) for g in range(1, max_g + 1)}
    order = sorted(range(inst.n_jobs), key=lambda j: (inst.release[j], inst.job_ids[j]))
    n_rows = len(nodes)
    fig_h = min(3.0 + 0.28 * n_rows + 0.08 * inst.n_jobs, 30.0)
    fig, (axn, axj) = plt.subplots(
        2,
        1,
        sharex=True,
        figsize=(11, fig_h),
        gridspec_kw={"height_ratios": [max(1, n_rows), max(2, inst.n_jobs / 2.5)]},
    )
    for row, node in enumerate(sorted(nodes)):
        for s, e, vm in nodes[node]:
            axn.barh(
                row,
                (e - s) * h,
                left=s * h,
                height=0.8,
                color=vm_color[vm],
                edgecolor="white",
                lw=0.3,
            )
    axn.set_yticks(range(n_rows), [f"node {n}" for n in sorted(nodes)])
    axn.set_ylim(n_rows - 0.5, -0.5)  # first node on top
    axn.set_ylabel("nodes")
    axn.set_title("Nodes: VM type rented per interval")
    axn.legend(
        handles=[Patch(color=vm_color[v], label=v) for v in vms],
        title="VM type",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    for row, j in enumerate(order):
        jid = inst.job_ids[j]
        seg = jobs.get(jid, [])
        start = seg[0][0] if seg else None
        if start is not None and start > inst.release[j]:
            axj.plot([inst.release[j] * h, start * h], [row, row], color="0.75", lw=1)
        for s, e, g in seg:
            axj.barh(row, (e - s) * h, left=s * h, height=0.8, color=g_color[g], lw=0)
        is_late = jid in done and done[jid] > inst.due[j] + 1e-6
        axj.plot(inst.due[j] * h, row, marker="|", ms=9, mew=2, color="red" if is_late else "black")
    axj.set_ylim(inst.n_jobs - 0.5, -0.5)  # first released on top
    axj.set_ylabel(f"jobs ({inst.n_jobs}, by release)")
    if inst.n_jobs <= 40:
        axj.set_yticks(range(inst.n_jobs), [inst.job_ids[j] for j in order], fontsize=7)
    else:
        axj.set_yticks([])
    axj.set_xlabel("time (h)")
    axj.set_title(
        "Jobs: GPUs assigned while running; | due date (red: completed late); grey: waiting"
    )
    handles = [Patch(color=g_color[g], label=str(g)) for g in range(1, max_g + 1)]
    axj.legend(handles=handles, title="GPUs", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for ax in (axn, axj):
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    _save(fig, out)
    return out


# ---------------------------------------------------------------------------------------------
# simulation results: per-job distributions

#: the per-job fields the CDF plot and `gpuaas.metrics` read from a simulation result
_JOB_FIELDS = ("release", "completion", "due", "jct", "waiting")


def read_simulation(path: str | Path) -> dict[str, Any]:
    """A simulation result (`gpuaas simulate --json`, `SimulationResult.to_dict`) with its jobs'
    numeric fields checked; a file of another kind is an InputError naming the field."""
    source = str(path)
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise InputError(
            source, None, 'not a simulation result (gpuaas simulate --json): no "jobs" list'
        )
    if not data["jobs"]:
        raise InputError(source, "jobs", "no completed job to plot")
    for i, job in enumerate(data["jobs"]):
        if not isinstance(job, dict):
            raise InputError(source, f"jobs[{i}]", "must be an object")
        for name in _JOB_FIELDS:
            x = job.get(name)
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not abs(x) <= HORIZON:
                raise InputError(
                    source,
                    f"jobs[{i}].{name}",
                    f"must be a number of seconds within ±{HORIZON:.3g} (gpuaas.limits), "
                    f"got {brief(x)}",
                )
    return data


def plot_cdf(results: list[str | Path], out: str | Path) -> Path:
    """Empirical CDFs over the jobs of one or more simulations: JCT, and lateness
    (completion - due; right of 0 the job missed its due date), one curve per result file.

    The legend gives each simulation's deadline-miss rate and 95th-percentile JCT
    (`gpuaas.metrics`); JCT is on a log axis, lateness on a symmetric log axis (linear within
    one hour of the due date), both in hours.
    """
    if not results:
        raise InputError(None, "results", "give at least one simulation result file")
    out = _check_output(out)
    plt = _pyplot()
    sims = [read_simulation(p) for p in results]
    names = [
        f"{label(run_name(str(d.get('method', '?'))))} seed {d.get('seed', '?')}" for d in sims
    ]
    if len(set(names)) < len(names):  # the same method and seed twice: tell them by file
        names = [f"{n} ({Path(p).name})" for n, p in zip(names, results)]
    colors = _colors(names)
    fig, (ax_jct, ax_late) = plt.subplots(1, 2, figsize=(12, 4.8))
    for name, d in zip(names, sims):
        m = job_metrics(d["jobs"])
        text = (
            f"{name}: {100 * m['deadline_miss_rate']:.1f} % late, "
            f"JCT p95 {m['jct_p95'] / 3600:.1f} h"
        )
        ax_jct.ecdf([j["jct"] / 3600 for j in d["jobs"]], color=colors[name], label=text)
        ax_late.ecdf([lateness(j) / 3600 for j in d["jobs"]], color=colors[name])
    ax_jct.set_xscale("log")
    ax_jct.set_xlabel("job completion time, completion - release (h, log scale)")
    ax_late.set_xscale("symlog", linthresh=1.0)
    ax_late.axvline(0.0, color="black", lw=0.8, ls="--")
    ax_late.set_xlabel("lateness, completion - due (h; > 0: late; symmetric log scale)")
    for ax in (ax_jct, ax_late):
        ax.set_ylabel("share of jobs")
        ax.set_ylim(0, 1.0)
        ax.grid(which="both", alpha=0.3)
    fig.suptitle("Distribution over jobs of the completion time and the lateness")
    fig.tight_layout()
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1)
    _save(fig, out)
    return out


def check_plot_output(out: str | Path) -> Path:
    """`out` as an image path this module can write (PNG, SVG or PDF; its directory exists):
    InputError otherwise, before the work that produces the figure."""
    return _check_output(out)


def _on_curve(label: str, curve: str) -> bool:
    return label == curve or label.startswith(f"{curve} w=")


def plot_cost_jct(
    results: dict[str, dict[str, Any]], out: str | Path, curve: str = "gpuaas"
) -> Path:
    """Cost against mean JCT: one point per scheduler of `results` ({label: {"cost",
    "jct_mean_h", "weight"?}}), label `curve` and the labels ``"<curve> w=..."`` joined as a
    curve in order of their "weight" (annotated): ``scripts/eva_setting.py``'s sweep of the
    value of time."""
    plt = _pyplot()
    out = _check_output(out)
    if not results:
        raise InputError(None, None, "no results to plot")
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    swept = sorted(
        ((r.get("weight", 0.0), r) for k, r in results.items() if _on_curve(k, curve)),
        key=lambda x: x[0],
    )
    others = [k for k in results if not _on_curve(k, curve)]
    colors = _colors(others)
    for k in others:
        r = results[k]
        ax.scatter(r["jct_mean_h"], r["cost"], color=colors[k], zorder=3)
        ax.annotate(k, (r["jct_mean_h"], r["cost"]), textcoords="offset points", xytext=(5, 4))
    if swept:
        xs = [r["jct_mean_h"] for _, r in swept]
        ys = [r["cost"] for _, r in swept]
        ax.plot(xs, ys, "o-", color="black", zorder=4, label=f"{curve} (weight $/h late)")
        for (w, _), x, y in zip(swept, xs, ys):
            ax.annotate(f"{w:g}", (x, y), textcoords="offset points", xytext=(5, -12))
        ax.legend(loc="best")
    ax.set_xlabel("mean JCT (h)")
    ax.set_ylabel("cost ($)")
    ax.grid(True, alpha=0.3)
    _save(fig, out)
    return out
