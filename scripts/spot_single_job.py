"""Can't Be Late's single-job setting on its own traces: Greedy and Uniform Progress against
on-demand, per trace, deadline and changeover delay, with the reference of tests/cant_be_late.py,
then the same policies and gpuaas's default method through gpuaas's Simulator.

    python scripts/spot_single_job.py SPOT_TRACES_DIR -o scripts/results/spot-single-job.md

SPOT_TRACES_DIR is the user's copy of github.com/skypilot-org/spot-traces (no license: never
committed here); the eight 2-week 1-node files of availability/1-node/aws-10-26-2022 are read
through `gpuaas.availability.readers.read_spot_traces` (1 = available). Per trace, `--samples`
start ticks are drawn once (seeded) and shared by every cell and policy, as the paper samples
300 starts per trace. The job is 48 h; costs are in spot-price units with the paper's prices
(p3.2xlarge on-demand $3.06, spot $0.9731 / h: k = 3.14) and reported as savings against
on-demand from the start (which pays one changeover too).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from cant_be_late import greedy, on_demand, simulate, uniform_progress  # noqa: E402

from gpuaas.availability import Availability, Capacity  # noqa: E402
from gpuaas.availability.readers import read_spot_traces  # noqa: E402
from gpuaas.files import read_json, write_atomic  # noqa: E402
from gpuaas.instance import Instance  # noqa: E402
from gpuaas.simulator import SimulationResult  # noqa: E402
from gpuaas.simulator import simulate as gpuaas_simulate  # noqa: E402

TRACES = "availability/1-node/aws-10-26-2022"
WORK_H = 48.0
DEADLINES_H = (52.0, 70.0, 92.0)
CHANGEOVERS_H = (0.02, 0.2, 0.4)
K = 3.06 / 0.9731  # the authors' simulator: sky_spot/utils.py COSTS (p3.2xlarge, us-west-2)
#: Table 3 of the paper: job fraction 0.8 (R(0) = 60 h), d = 0.2 h, the eight 2-week traces, 300
#: starts each: mean on-demand and spot compute hours.
TABLE3 = {"greedy": (30.8, 17.2), "uniform-progress": (25.1, 22.9), "omniscient": (20.7, 27.4)}
POLICIES = {
    "greedy": (greedy, None),
    "uniform-progress": (uniform_progress, None),
    "uniform-progress, switch point": (
        uniform_progress,
        0.7,
    ),  # the paper's §A.8 loose-deadline use
}


#: the single-job setting in gpuaas: one VM type at the paper's prices, AWS's 120 s warning
CATALOG = {
    "name": "cant-be-late",
    "provider": "AWS",
    "vm_types": [
        {
            "name": "p3.2xlarge",
            "gpu": "V100",
            "gpus": 1,
            "cost_per_hour": 3.06,
            "spot_per_hour": 0.9731,
        },
    ],
}
#: tardiness weight ($/s) of the job in gpuaas: 360 $ per hour late, 118 x the on-demand price,
#: so that the deadline is as hard for gpuaas's methods as for Can't Be Late
WEIGHT = 0.1


def gpuaas_run(
    avail, gap: float, work: float, deadline: float, d: float, method: str, log=None, **options
) -> SimulationResult:
    """One job of `work` s due at `deadline` s through gpuaas's Simulator, spot capacity 1
    while `avail[i]` (tick i of `gap` s) and 0 otherwise, changeover d as the VM start-up (no
    restart loss, continuous checkpoints), decisions every tick (H = tick = gap)."""
    trace = Instance.from_dict(
        {
            "catalog": CATALOG,
            "nodes": 1,
            "params": {"H": gap},
            "jobs": [
                {
                    "id": "job",
                    "release": 0.0,
                    "due": deadline,
                    "weight": WEIGHT,
                    "times": {"p3.2xlarge": [work]},
                },
            ],
        }
    )
    cap = Capacity(np.arange(len(avail)) * gap, np.asarray(avail, dtype=np.int64))
    availability = Availability({"p3.2xlarge": cap}, end=len(avail) * gap, source="ticks")
    return gpuaas_simulate(
        trace,
        method,
        availability=availability,
        overhead=0.0,
        startup=d,
        checkpoint=0.0,
        tick=gap,
        bound=False,
        log=log,
        **options,
    )


def load(directory: Path) -> dict[str, tuple[list[bool], float]]:
    """Per trace name: availability per tick and the gap (s)."""
    out = {}
    for path in sorted((directory / TRACES).glob("*.json")):
        cap, length = read_spot_traces(str(path))  # validates the file
        gap = float(read_json(path)["metadata"]["gap_seconds"])
        out[path.stem] = ([cap.at(i * gap) > 0 for i in range(round(length / gap))], gap)
    if not out:
        raise SystemExit(f"no *.json under {directory / TRACES}: give the spot-traces directory")
    return out


def cell(avail, gap, starts, deadline_h, d_h):
    """Per policy: mean cost, mean spot and on-demand hours, deadlines missed."""
    work, deadline, d = WORK_H * 3600, deadline_h * 3600, d_h * 3600
    span = math.ceil(deadline / gap) + 2
    res = {}
    for name, (policy, switch) in POLICIES.items():
        runs = [
            simulate(avail[s : s + span], gap, work, deadline, d, policy, K, switch) for s in starts
        ]
        res[name] = (
            np.mean([r.cost for r in runs]),
            np.mean([r.spot_hours for r in runs]),
            np.mean([r.od_hours for r in runs]),
            sum(not r.met for r in runs),
        )
    od = simulate([False] * span, gap, work, deadline, d, on_demand, K)
    return res, od.cost


#: the policies run through gpuaas's Simulator: (method, options), and their reference
SIMULATED = {
    "uniform-progress": ("uniform-progress", {}, uniform_progress),
    "greedy": ("uniform-progress", {"greedy": True}, greedy),
    "default": ("incremental", {}, None),
}


def gpuaas_cell(avail, gap, starts, deadline_h, d_h):
    """Per simulated policy: costs (spot-price units), on-time flags; the reference's costs."""
    work, deadline, d = WORK_H * 3600, deadline_h * 3600, d_h * 3600
    span = math.ceil(deadline / gap) + 2
    out = {}
    for name, (method, options, ref) in SIMULATED.items():
        costs, met, refs = [], [], []
        for s in starts:
            res = gpuaas_run(avail[s : s + span], gap, work, deadline, d, method, **options)
            costs.append(res.vm_cost / 0.9731)
            met.append(res.jobs[0]["completion"] <= deadline + 1e-6)
            if ref is not None:
                refs.append(simulate(avail[s : s + span], gap, work, deadline, d, ref, K).cost)
        out[name] = (np.array(costs), np.array(met), np.array(refs))
    return out


def _timed_cell(*args):
    """`gpuaas_cell` and the CPU seconds it took (in a worker process)."""
    c0 = time.process_time()
    return gpuaas_cell(*args), time.process_time() - c0


def gpuaas_tables(traces, starts, samples, jobs=1):
    """The markdown of the Simulator's runs: per cell, savings and deadlines missed; the CPU
    seconds they took (`jobs` processes)."""
    tasks = [
        (name, (avail, gap, starts[name][:samples], deadline_h, d_h))
        for name, (avail, gap) in traces.items()
        for deadline_h in DEADLINES_H
        for d_h in CHANGEOVERS_H
    ]
    with Pool(jobs) as pool:
        done = pool.starmap(_timed_cell, [args for _, args in tasks])
    per: dict[tuple[float, float], list] = {}
    for (name, (*_, deadline_h, d_h)), (res, _) in zip(tasks, done, strict=True):
        # on demand from the start, billed by the second: one changeover and the work
        od = K * (WORK_H + d_h)
        per.setdefault((deadline_h, d_h), []).append((name, res, od))
    lines = [
        "| deadline h | d h | UP (reference) | UP (gpuaas) | greedy (reference) | greedy (gpuaas) "
        "| default | default / UP cost | traces where default > UP | missed (UP, greedy, default) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    worse_cells = 0
    for (deadline_h, d_h), rows in per.items():
        save = {k: [] for k in ("ref-up", "up", "ref-greedy", "greedy", "default")}
        ratio, worse, missed = [], 0, [0, 0, 0]
        for _, res, od in rows:
            save["ref-up"].append(1 - res["uniform-progress"][2].mean() / od)
            save["up"].append(1 - res["uniform-progress"][0].mean() / od)
            save["ref-greedy"].append(1 - res["greedy"][2].mean() / od)
            save["greedy"].append(1 - res["greedy"][0].mean() / od)
            save["default"].append(1 - res["default"][0].mean() / od)
            up, de = res["uniform-progress"][0].mean(), res["default"][0].mean()
            ratio.append(de / up)
            worse += de > up * (1 + 1e-9)
            for i, k in enumerate(("uniform-progress", "greedy", "default")):
                missed[i] += int((~res[k][1]).sum())
        up_all = np.mean([r["uniform-progress"][0].mean() for _, r, _ in rows])
        de_all = np.mean([r["default"][0].mean() for _, r, _ in rows])
        worse_cells += de_all > up_all * (1 + 1e-9)
        m = {k: np.mean(v) for k, v in save.items()}
        lines.append(
            f"| {deadline_h:g} | {d_h:g} | {m['ref-up']:.1%} | {m['up']:.1%} | "
            f"{m['ref-greedy']:.1%} | {m['greedy']:.1%} | {m['default']:.1%} | "
            f"{de_all / up_all:.3f} | {worse}/{len(rows)} | {missed[0]}, {missed[1]}, {missed[2]} |"
        )
    return lines, worse_cells, len(per), sum(cpu for _, cpu in done)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", type=Path, help="the user's copy of skypilot-org/spot-traces")
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--gpuaas-samples",
        type=int,
        default=100,
        help="starts per trace simulated by gpuaas (the first of the reference's)",
    )
    ap.add_argument("-o", "--output", help="markdown file to write (default: print only)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="processes for the Simulator's runs")
    args = ap.parse_args()
    clock = time.process_time()
    traces = load(args.traces)
    rng = np.random.default_rng(args.seed)
    starts = {}
    for name, (avail, gap) in traces.items():
        last = len(avail) - math.ceil(max(DEADLINES_H + (60.0,)) * 3600 / gap) - 2
        starts[name] = rng.integers(0, last, size=args.samples)
    lines = [
        "| trace | spot avail. | deadline h | d h | greedy saving | UP saving | UP / greedy cost "
        "| UP (switch 0.7) saving | missed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    wins = cells = 0
    mean: dict[tuple[float, float], list[np.ndarray]] = {}
    for name, (avail, gap) in traces.items():
        frac = float(np.mean(avail))
        for deadline_h in DEADLINES_H:
            for d_h in CHANGEOVERS_H:
                res, od_cost = cell(avail, gap, starts[name], deadline_h, d_h)
                g, u = res["greedy"], res["uniform-progress"]
                w = res["uniform-progress, switch point"]
                saved = 1 - np.array([g[0], u[0], w[0]]) / od_cost
                mean.setdefault((deadline_h, d_h), []).append(saved)
                cells += 1
                wins += u[0] <= g[0] + 1e-9
                lines.append(
                    f"| {name} | {frac:.2f} | {deadline_h:g} | {d_h:g} | {1 - g[0] / od_cost:.1%} "
                    f"| {1 - u[0] / od_cost:.1%} | {u[0] / g[0]:.3f} | {1 - w[0] / od_cost:.1%} "
                    f"| {g[3] + u[3] + w[3]} |"
                )
    means = [
        "",
        "Mean saving over the eight traces per cell (UP >= greedy: traces where UP saves at least "
        "as much as greedy):",
        "",
        "| deadline h | d h | greedy | UP | UP (switch 0.7) | UP >= greedy |",
        "|---|---|---|---|---|---|",
    ]
    for (deadline_h, d_h), saved in mean.items():
        a = np.array(saved)
        m = a.mean(axis=0)
        means.append(
            f"| {deadline_h:g} | {d_h:g} | {m[0]:.1%} | {m[1]:.1%} | {m[2]:.1%} "
            f"| {int(np.sum(a[:, 1] >= a[:, 0] - 1e-12))}/{len(a)} |"
        )
    # Table 3 of the paper: job fraction 0.8, d = 0.2 h, averaged over the eight traces.
    t3 = {p: np.zeros(2) for p in TABLE3 if p in POLICIES}
    for name, (avail, gap) in traces.items():
        res, _ = cell(avail, gap, starts[name], 60.0, 0.2)
        for p in t3:
            t3[p] += np.array([res[p][2], res[p][1]]) / len(traces)
    table3 = [
        "| policy | on-demand h (ours) | spot h (ours) | on-demand h (paper) | spot h (paper) |",
        "|---|---|---|---|---|",
    ]
    for p in t3:
        table3.append(
            f"| {p} | {t3[p][0]:.1f} | {t3[p][1]:.1f} | {TABLE3[p][0]} | {TABLE3[p][1]} |"
        )
    ours_ratio = t3["uniform-progress"][1] / t3["greedy"][1]
    paper_ratio = TABLE3["uniform-progress"][1] / TABLE3["greedy"][1]
    summary = (
        f"Uniform Progress no dearer than greedy in {wins} of {cells} cells. Table 3 cell: spot "
        f"hours of Uniform Progress / greedy = {ours_ratio:.2f} (paper {paper_ratio:.2f}). "
        f"{args.samples} starts per trace, seed {args.seed}; "
        f"{time.process_time() - clock:.0f} CPU s."
    )
    files = ", ".join(f"`{name}.json`" for name in traces)
    head = [
        "# Can't Be Late, single job: our reference vs the paper",
        "",
        f"`python scripts/spot_single_job.py SPOT_TRACES -o scripts/results/spot-single-job.md "
        f"--samples {args.samples} --seed {args.seed} --gpuaas-samples {args.gpuaas_samples}` "
        "(reference: `tests/cant_be_late.py`; "
        'notes, data source and differences: `docs/spot.md`, "Can\'t Be Late reference").',
        "",
        f"Files read ({TRACES}/ of the user's copy of skypilot-org/spot-traces): {files}.",
        "48 h job; savings are 1 - cost / cost of on-demand from the start, costs with the "
        "paper's prices (k = 3.06 / 0.9731); `missed`: deadlines missed by any policy.",
        "",
    ]
    t3_head = [
        "",
        "Table 3 of the paper (job fraction 0.8: deadline 60 h, d = 0.2 h, the eight traces):",
        "",
    ]
    sim: list[str] = []
    if args.gpuaas_samples > 0:
        rows, worse, n, cpu = gpuaas_tables(traces, starts, args.gpuaas_samples, args.jobs)
        sim = [
            "",
            "## Through gpuaas's Simulator",
            "",
            f"The first {args.gpuaas_samples} starts of each trace, simulated by gpuaas "
            "(`gpuaas_run`: one p3.2xlarge at the paper's prices, spot capacity 1 while the "
            "trace says available, changeover d as the VM start-up, decisions every tick) with "
            "`uniform-progress`, `uniform-progress` with `greedy: true` and the default method "
            "`incremental`; the reference (`tests/cant_be_late.py`) on the same starts. Mean "
            "saving over the eight traces against on-demand from the start; gpuaas bills by the "
            "second where the reference bills whole ticks, so its savings are a little higher "
            "(decisions agree tick by tick: `tests/test_spot_baselines.py`). `default / UP "
            "cost`: the default's mean cost over gpuaas's Uniform Progress's; `missed`: "
            "deadlines missed out of 8 x starts (on demand from the start meets every one).",
            "",
            *rows,
            "",
            f"The default is dearer than Uniform Progress in {worse} of {n} cells "
            f"({cpu:.0f} CPU s).",
        ]
    text = "\n".join(head + lines + means + t3_head + table3 + ["", summary] + sim) + "\n"
    print(text)
    if args.output:
        write_atomic(args.output, text)


if __name__ == "__main__":
    main()
