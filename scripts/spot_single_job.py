"""Can't Be Late's single-job setting on its own traces: Greedy and Uniform Progress against
on-demand, per trace, deadline and changeover delay, with the reference of tests/cant_be_late.py.

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
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from cant_be_late import greedy, on_demand, simulate, uniform_progress  # noqa: E402

from gpuaas.availability.readers import read_spot_traces  # noqa: E402
from gpuaas.files import read_json, write_atomic  # noqa: E402

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", type=Path, help="the user's copy of skypilot-org/spot-traces")
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", help="markdown file to write (default: print only)")
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
        f"--samples {args.samples} --seed {args.seed}` (reference: `tests/cant_be_late.py`; "
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
    text = "\n".join(head + lines + means + t3_head + table3 + ["", summary]) + "\n"
    print(text)
    if args.output:
        write_atomic(args.output, text)


if __name__ == "__main__":
    main()
