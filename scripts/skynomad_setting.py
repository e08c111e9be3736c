"""SkyNomad's single-job setting (issue 42): its own policies in its own simulator, and gpuaas's
default method through gpuaas's Simulator, on the artifact's traces and settings.

    python scripts/skynomad_setting.py --data DIR --dataset v100|h100 --json --skynomad CHECKOUT

SkyNomad (NSDI '27; github.com/andylizf/skynomad-artifact, Apache-2.0) moves one job between
zones. Nothing of its code is in this repository: its policies run from the user's checkout
`--skynomad CHECKOUT` (``sky_spot/``, ``scripts_multi/benchmark_components/simulation_runner.
py``'s `run_single_simulation`, the function its sweeps call), in a child process of
`--python` (an interpreter with its requirements: numpy, configargparse; default the checkout's
``.venv/bin/python``). DIR is its converted traces, one folder per zone holding ``full.json``:
``data/converted_multi_region_aligned`` (V100, rebuilt by its ``artifact/prepare_data.sh``) or
``data/converted_multi_region_aligned_h100_16_merged`` (H100, unpacked by the same script).

**The settings** (`SETTINGS`) are the artifact's, from the configs that produced the paper's
Figure 9 (``scripts_multi/benchmark_components/configs/v100.py`` for 9b;
``deadline_sensitivity.py`` at ratio 1.5 for 9a, as ``research/plot_traces.py`` reads it): the
deadline is the artifact's window (its numbered windows' ticks less one: 1 106 x 195 s =
59.91 h for V100, 311 x 600 s = 51.83 h for H100), the job's work the deadline / 1.5 (39.94 h,
34.56 h), restart overhead 0.2 h, checkpoint 50 GB; windows are the sequential tiling of
``full.json`` by the deadline, V100 windows 3, 5, 7, 8, 14 (the config's), H100 all six. V100
runs three zones (us-east-1c, us-east-2b, us-west-2a: of the nine in the data) and the
config's strategy flags; H100 the six of "Global Diverse (6)" (of 13).

**Their policies** (artifact strategy names): ``skynomad`` (``unified_cost_model_rate_ratio``
for V100, ``unified_cost_model_risk`` for H100: what Figure 9 plots as SkyNomad),
``uniform-progress`` (``multi_region_rc_cr_threshold_eager_failover``: Uniform Progress moving
to the next zone on a preemption, the paper's UP(S)), ``uniform-progress-1zone``
(``rc_cr_threshold`` alone in each zone, mean over zones: the paper's UP) and ``optimal``
(``multi_region_oracle_dp``, the offline DP). A deadline their simulator misses raises there and
is counted. They bill whole ticks of the trace's per-tick spot price (``prices``), egress
checkpoint GB x the $/GB of ``sky_spot/migration_model.get_transfer_cost_usd`` per move between
regions (0 between zones of a region) and probes one minute each.

**gpuaas** (``default``): one job, due at the deadline with a tardiness weight of 0.1 $/s
(360 $ per hour late, a hard deadline as in scripts/spot_single_job.py), one VM type per zone
named ``TYPE@ZONE`` (the trace's instance type) at the zone's on-demand price and its spot
price's mean over the window, availability from `gpuaas.availability.skynomad` (1 while the
zone can hold a spot VM), decisions every tick, the restart overhead as the VM start-up (the
restart cost of a move between zones, beside the egress of its checkpoint). Its cost is billed twice: at the
constant prices it planned with (``mean_cost_mean_price``) and re-billed from its event log at
the per-tick series their simulator bills (``mean_cost``), by the second; both add the egress
their simulator bills for its moves (``egress``, ``moves``: checkpoint 50 GB x the $/GB between
the zones' regions, `move_egress`). gpuaas plans with the setting's 50 GB checkpoint
(`--gpuaas-checkpoint-gb`) at its own egress rates (`gpuaas.transfer`: on these AWS regions
the same as theirs; between GCP regions of one continent the same, between continents 0.08
$/GB where their rule bills 0.02).

**gpuaas's SkyNomad** (``skynomad-gpuaas``): gpuaas's own reading of the paper's policy
(`gpuaas.baselines.skynomad`, method ``skynomad``) in the same gpuaas run, billed the same way:
the check of that reimplementation against their ``skynomad`` figure. `--gpuaas NAMES` picks
gpuaas's runs (default both).

**One billing for all**: ``mean_cost`` bills every policy at the per-tick series (their
figures); ``mean_cost_mean_price`` bills every policy at each zone's window mean: their policies
rerun on copies of the traces whose ``prices`` hold that mean (`--no-mean-price`: skip).

**Sweeps** (`--sweep deadline|regions`, H100 as in their Figure 10): ratios 1.05-2.0 on the
Global Diverse zones, or the first 1-13 zones of their region-scaling order at ratio 1.2; one
cell each, keyed ``ratio=R`` or ``zones=N``.

Output (``--json``, ``-o``): ``{"<policy>": {"mean_cost", "deadlines_missed", "windows":
[per-window cost], "mean_cost_mean_price", "windows_mean_price", "cpu_seconds"}, "setting":
{...}}``, gpuaas's entries also with ``egress`` and ``moves`` per window; a sweep's:
``{"<cell>": {<that>}, "setting": {...}}``. Without `--skynomad`, the default alone.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Global Diverse (6) of the artifact's scenario_config.py: the H100 zones of Figure 9a
H100_ZONES = (
    "us-central1-a",
    "us-west1-a",
    "europe-west1-c",
    "europe-west3-c",
    "asia-southeast1-b",
    "asia-south2-b",
)
#: PROGRESSIVE_REGIONS_BY_SINGLE_COST of its scenario_config.py: the region-scaling order (Fig. 10b)
H100_SCALING = (
    "asia-southeast1-c",
    "asia-south2-b",
    "us-west1-b",
    "europe-west3-c",
    "us-west1-a",
    "us-east4-a",
    "europe-west1-c",
    "us-central1-c",
    "us-central1-b",
    "asia-southeast1-b",
    "us-central1-a",
    "us-east5-a",
    "us-east4-b",
)

SETTINGS: dict[str, dict[str, Any]] = {
    "v100": {
        "zones": ("us-east-1c", "us-east-2b", "us-west-2a"),
        "suffix": "_v100_1",
        "vm": ("V100", 1, "AWS"),  # p3.2xlarge
        "deadline_ticks": 1106,
        "ratio": 1.5,
        "windows": (3, 5, 7, 8, 14),
        "restart_h": 0.2,
        "checkpoint_gb": 50.0,
        "skynomad": "unified_cost_model_rate_ratio",
        "strategy_args": "--oracle-v rate_ratio --max-prediction-hours 1e9 --virtual-availability",
        "paper": {"skynomad": 41.73, "uniform-progress": 47.02, "optimal": 37.37},
    },
    "h100": {
        "zones": H100_ZONES,
        "suffix": "_h100_16",
        "vm": ("H100", 8, "GCP"),  # priced as a3-highgpu-8g (the artifact's price_info)
        "deadline_ticks": 311,
        "ratio": 1.5,
        "windows": (0, 1, 2, 3, 4, 5),
        "restart_h": 0.2,
        "checkpoint_gb": 50.0,
        "skynomad": "unified_cost_model_risk",
        "strategy_args": "",
        "paper": {"skynomad": 606.38, "uniform-progress": 795.01, "optimal": 571.38},
    },
}
#: our policy names -> the artifact's strategy names (None: the dataset's SkyNomad arm)
THEIRS = {
    "skynomad": None,
    "uniform-progress": "multi_region_rc_cr_threshold_eager_failover",
    "uniform-progress-1zone": "rc_cr_threshold",
    "optimal": "multi_region_oracle_dp",
}
#: gpuaas's runs: result key -> method (None: the default)
GPUAAS = {"default": None, "skynomad-gpuaas": "skynomad"}
WEIGHT = 0.1  # $/s late: 360 $/h, over 100 x any price here (a hard deadline)


# --------------------------------------------------------------------------- their simulator
def child(spec: dict) -> dict:
    """In the checkout's interpreter: each (policy, window, trace set) of `spec` through the
    artifact's `run_single_simulation`; per run the cost, or None for a missed deadline."""
    import logging

    checkout = Path(spec["checkout"])
    sys.path[:0] = [str(checkout), str(checkout / "scripts_multi")]
    logging.disable(logging.INFO)
    from benchmark_components.simulation_runner import run_single_simulation

    out = []
    for run in spec["runs"]:
        c0 = time.process_time()
        try:
            cost, migrations, *_ = run_single_simulation(
                strategy=run["strategy"],
                env_type=run["env"],
                trace_paths=run["paths"],
                task_duration_hours=spec["task_h"],
                deadline_hours=spec["deadline_h"],
                restart_overhead=spec["restart_h"],
                checkpoint_size=spec["checkpoint_gb"],
                output_dir=Path(spec["tmp"]),
                env_start_hours=run["start_h"],
                enforce_window_bound=True,
                strategy_argv=shlex.split(spec["strategy_args"]),
            )
        except ValueError as exc:
            if "Deadline exceeded" not in str(exc):
                raise
            cost, migrations = None, 0
        out.append({"cost": cost, "migrations": migrations, "cpu": time.process_time() - c0, **run})
    return {"runs": out}


def their_runs(args, setting, zones, data: Path, windows, deadline_h, task_h, tmp: Path, price):
    """Their policies on every window, in a child process; `price`: per window and zone the
    constant spot price to hold (traces rewritten under `tmp`), or None (the traces as they
    are). Returns {policy: [(cost or None, cpu s) per window]}."""
    tmp.mkdir(parents=True, exist_ok=True)
    runs = []
    for w_i, w in enumerate(windows):
        paths = {}
        for z in zones:
            src = data / f"{z}{setting['suffix']}" / "full.json"
            if price is None:
                paths[z] = str(src)
                continue
            doc = json.loads(src.read_text())
            doc["prices"] = [price[w_i][z]] * len(doc["data"])
            dst = tmp / f"w{w}" / f"{z}{setting['suffix']}" / "full.json"
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(json.dumps(doc))
            paths[z] = str(dst)
        for name, strategy in THEIRS.items():
            strategy = strategy or setting["skynomad"]
            if name == "uniform-progress-1zone":
                for z in zones:
                    runs.append(
                        {"policy": name, "window": w, "strategy": strategy, "env": "trace",
                         "paths": [paths[z]], "start_h": w * deadline_h}
                    )  # fmt: skip
            else:
                runs.append(
                    {"policy": name, "window": w, "strategy": strategy, "env": "multi_trace",
                     "paths": [paths[z] for z in zones], "start_h": w * deadline_h}
                )  # fmt: skip
    spec = {
        "checkout": str(args.skynomad),
        "runs": runs,
        "task_h": task_h,
        "deadline_h": deadline_h,
        "restart_h": setting["restart_h"],
        "checkpoint_gb": setting["checkpoint_gb"],
        "strategy_args": setting["strategy_args"],
        "tmp": str(tmp / "out"),
    }
    spec_file = tmp / "spec.json"
    spec_file.write_text(json.dumps(spec))
    proc = subprocess.run(
        [args.python, str(Path(__file__).resolve()), "--child", str(spec_file)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:]
        raise RuntimeError("their simulator failed: " + " | ".join(tail))
    done = json.loads(proc.stdout.strip().splitlines()[-1])["runs"]
    per: dict[str, dict[int, list]] = {}
    for r in done:
        per.setdefault(r["policy"], {}).setdefault(r["window"], []).append(r)
    out: dict[str, list] = {}
    for name, by_w in per.items():
        rows = []
        for w in windows:
            rs = by_w[w]
            missed = any(r["cost"] is None for r in rs)
            cost = None if missed else sum(r["cost"] for r in rs) / len(rs)  # 1zone: zone mean
            rows.append((cost, sum(r["cpu"] for r in rs)))
        out[name] = rows
    return out


# --------------------------------------------------------------------------- gpuaas
def gpuaas_window(
    traces,
    types,
    zones,
    start,
    deadline,
    work,
    gap,
    restart,
    checkpoint_gb,
    setting_gb,
    log,
    method=None,
):
    """gpuaas's `method` (None: the default) on one window: (cost at the window-mean prices,
    cost re-billed at the per-tick series, deadline met, CPU s, egress $, moves between zones);
    both costs include the egress their simulator bills for its moves (`move_egress`, at
    `setting_gb`)."""
    import numpy as np

    from gpuaas.availability.skynomad import zone_availability
    from gpuaas.instance import Instance
    from gpuaas.simulator import simulate

    first, last = int(start // gap), int((start + deadline) // gap)
    vms = []
    for z in zones:
        tr, vm = traces[z], types[z]
        vms.append(
            {
                "name": vm["type"],
                "location": z,
                "gpu": vm["gpu"],
                "gpus": vm["gpus"],
                "cost_per_hour": tr.on_demand,
                "spot_per_hour": float(np.mean(tr.spot[first:last])),
            }
        )
    job = {
        "id": "job",
        "release": 0.0,
        "due": deadline,
        "weight": WEIGHT,
        "times": {types[z]["name"]: [work] * v["gpus"] for z, v in zip(zones, vms)},
        # its checkpoint, whose moves between regions gpuaas prices (`gpuaas.transfer`)
        "data_gb": setting_gb if checkpoint_gb is None else checkpoint_gb,
    }
    inst = Instance.from_dict(
        {
            "catalog": {
                "name": "skynomad",
                "provider": types[zones[0]]["provider"],
                "locations": {z: {"region": region_of(z)} for z in zones},
                "vm_types": vms,
            },
            "nodes": 1,
            "params": {"H": gap},
            "jobs": [job],
        }
    )
    avail = zone_availability(
        {z: traces[z] for z in zones}, inst.catalog, start=start, length=deadline
    )
    c0 = time.process_time()
    res = simulate(
        inst,
        method,
        availability=avail,
        overhead=0.0,
        startup=restart,
        checkpoint=0.0,
        tick=gap,
        bound=False,
        log=log,
    )
    cpu = time.process_time() - c0
    met = res.jobs[0]["completion"] <= deadline + 1e-6
    egress, moves = move_egress(log, setting_gb, types[zones[0]]["provider"])
    return res.vm_cost + egress, rebill(log, avail) + egress, met, cpu, egress, moves


def rebill(log: Path, avail) -> float:
    """The VM cost of a gpuaas event log with spot billed at `avail.prices`' series (by the
    second) and on demand at its price."""
    total = 0.0
    for line in log.read_text().splitlines():
        ev = json.loads(line)
        for node in ev["nodes"]:
            vm, _, spot = node["vm"].partition(":")
            series = avail.prices[vm]
            if spot:
                total += integral(series, ev["start"], ev["end"])
            else:
                total += series.on_demand * (ev["end"] - ev["start"]) / 3600.0
    return total


def region_of(zone: str) -> str:
    """The region of an AWS or GCP zone (us-east-1c -> us-east-1, us-central1-a -> us-central1),
    as their `migration_model.parse_region_info` cuts it."""
    return zone[:-1].rstrip("-")


def egress_prices(provider: str) -> dict[tuple[str, str], float]:
    """$/GB per (source, destination) region: AWS's from gpuaas/catalogs/egress-aws.csv, the
    table their model reproduces for these regions; GCP none (their model's default, 0.02)."""
    if provider != "AWS":
        return {}
    rows = (ROOT / "gpuaas" / "catalogs" / "egress-aws.csv").read_text().splitlines()
    out = {}
    for line in rows:
        if line.startswith("#") or line.startswith("src_region"):
            continue
        src, dst, price = line.split(",")
        out[src, dst] = float(price)
    return out


def move_egress(log: Path, gb: float, provider: str) -> tuple[float, int]:
    """Egress $ and moves between zones of a one-job gpuaas event log, billed as their
    simulator bills a move: checkpoint `gb` x the $/GB between the zones' regions (0 within a
    region, 0.02 where the table has no pair)."""
    table = egress_prices(provider)
    total, moves, last = 0.0, 0, None
    for line in log.read_text().splitlines():
        for job in json.loads(line)["jobs"]:
            zone = job["vm"].partition(":")[0].rpartition("@")[2]
            if last is not None and zone != last:
                moves += 1
                src, dst = region_of(last), region_of(zone)
                if src != dst:
                    total += gb * table.get((src, dst), 0.02)
            last = zone
    return total, moves


def integral(series, t0: float, t1: float) -> float:
    """$ of one spot VM over [t0, t1) at a `PriceSeries`."""
    import numpy as np

    edges = np.clip(np.append(series.times, math.inf), t0, t1)
    return float(np.sum(np.diff(edges) * series.spot) / 3600.0)


def load_traces(data: Path, setting, zones):
    """Per zone the `ZoneTrace` of ``full.json``, and its VM type for gpuaas's catalog: name
    (price_info's instance or machine type), GPU model and count, provider."""
    from gpuaas.availability.skynomad import read_zone_trace
    from gpuaas.errors import InputError

    traces, types = {}, {}
    gpu, gpus, provider = setting["vm"]
    for z in zones:
        path = data / f"{z}{setting['suffix']}" / "full.json"
        if not path.is_file():
            raise InputError(str(data), None, f"no {z}{setting['suffix']}/full.json")
        tr = read_zone_trace(path, z)
        info = json.loads(path.read_text())["metadata"].get("price_info", {})
        vm = info.get("instance_type") or info.get("machine_type")
        if not vm or not math.isfinite(tr.on_demand):
            raise InputError(
                str(path), "metadata.price_info", "no instance type or on-demand price"
            )
        traces[z] = tr
        types[z] = {"name": f"{vm}@{z}", "type": vm, "gpu": gpu, "gpus": gpus, "provider": provider}
    return traces, types


def summary(costs: list, cpus: list) -> dict:
    """mean cost over the windows met, deadlines missed, per-window costs, CPU s."""
    met = [c for c in costs if c is not None]
    return {
        "mean_cost": round(sum(met) / len(met), 4) if met else None,
        "deadlines_missed": sum(c is None for c in costs),
        "windows": [None if c is None else round(c, 4) for c in costs],
        "cpu_seconds": round(sum(cpus), 1),
    }


#: their sweeps (H100, Global Diverse zones / the region-scaling order, all six windows):
#: deadline_sensitivity.py's ratios from 1.05 (1.0 leaves no room for one restart) and
#: region_scaling.py's 1..13 zones at ratio 1.2
SWEEPS = {
    "deadline": [("ratio", r) for r in (1.05, 1.1, 1.15, 1.2, 1.3, 1.5, 2.0)],
    "regions": [("zones", n) for n in range(1, len(H100_SCALING) + 1)],
}


def run_cell(args, setting, zones, ratio, windows, data, tmp: Path) -> dict[str, Any]:
    """Every policy on `windows` of one setting: {policy: summary}."""
    import numpy as np

    from gpuaas.errors import InputError

    tmp.mkdir(parents=True, exist_ok=True)
    traces, types = load_traces(data, setting, zones)
    ticks = setting["deadline_ticks"]
    gap = traces[zones[0]].gap
    deadline = ticks * gap
    work = deadline / ratio
    k = min(len(t.available) for t in traces.values()) // ticks
    if any(not 0 <= w < k for w in windows):
        raise InputError(None, "--windows", f"the data hold windows 0..{k - 1}")
    means = [
        {z: float(np.mean(traces[z].spot[w * ticks : (w + 1) * ticks])) for z in zones}
        for w in windows
    ]
    results: dict[str, Any] = {}
    if args.skynomad is not None:
        hours = (setting, zones, data, windows, deadline / 3600, work / 3600)
        series = their_runs(args, *hours, tmp, None)
        flat = None if args.no_mean_price else their_runs(args, *hours, tmp / "mean", means)
        for name, rows in series.items():
            results[name] = summary([c for c, _ in rows], [s for _, s in rows])
            if flat is not None:
                s = summary([c for c, _ in flat[name]], [s for _, s in flat[name]])
                results[name]["mean_cost_mean_price"] = s["mean_cost"]
                results[name]["windows_mean_price"] = s["windows"]
                results[name]["cpu_seconds"] += s["cpu_seconds"]
    for name, method in GPUAAS.items():
        if args.no_gpuaas or name not in args.gpuaas:
            continue
        planned, billed, cpus, egress, moves = [], [], [], [], []
        for w in windows:
            c_mean, c_series, met, cpu, e, m = gpuaas_window(
                traces,
                types,
                zones,
                w * deadline,
                deadline,
                work,
                gap,
                setting["restart_h"] * 3600,
                args.gpuaas_checkpoint_gb,
                setting["checkpoint_gb"],
                tmp / f"{name}-{w}.jsonl",
                method,
            )
            planned.append(c_mean if met else None)
            billed.append(c_series if met else None)
            cpus.append(cpu)
            egress.append(round(e, 4))
            moves.append(m)
        results[name] = summary(billed, cpus)
        s = summary(planned, cpus)
        results[name]["mean_cost_mean_price"] = s["mean_cost"]
        results[name]["windows_mean_price"] = s["windows"]
        results[name]["egress"] = egress
        results[name]["moves"] = moves
    results["setting"] = {
        "zones": zones,
        "windows": list(windows),
        "deadline_h": round(deadline / 3600, 4),
        "work_h": round(work / 3600, 4),
        "ratio": ratio,
    }
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="the artifact's converted traces (one folder per zone)")
    ap.add_argument("--dataset", choices=sorted(SETTINGS), default="v100")
    ap.add_argument("--skynomad", help="the user's checkout of andylizf/skynomad-artifact")
    ap.add_argument("--python", help="interpreter with its requirements (default CHECKOUT/.venv)")
    ap.add_argument("--windows", help="comma-separated window indices (default: the paper's)")
    ap.add_argument("--ratio", type=float, help="deadline / work (default 1.5, the paper's)")
    ap.add_argument(
        "--zones", type=int, help="H100: the first N zones of the region-scaling order (Fig. 10b)"
    )
    ap.add_argument(
        "--sweep",
        choices=sorted(SWEEPS),
        help="H100: their deadline-tightness (ratios 1.05-2.0) or region-count (1-13) sweep",
    )
    ap.add_argument("--no-mean-price", action="store_true", help="skip the mean-price reruns")
    ap.add_argument("--no-gpuaas", action="store_true", help="their policies only")
    ap.add_argument(
        "--gpuaas",
        default=",".join(GPUAAS),
        help=f"gpuaas's runs, comma-separated (default: {','.join(GPUAAS)})",
    )
    ap.add_argument(
        "--gpuaas-checkpoint-gb",
        type=float,
        help="the job's checkpoint (GB) whose moves gpuaas prices [default: the setting's, 50]",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("-o", "--output", help="write the JSON results to this file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(Path(args.child).read_text()))))
        return 0
    from gpuaas.errors import InputError
    from gpuaas.files import check_output, open_output

    try:
        if not args.data:
            raise InputError(None, "--data", "name the artifact's converted traces directory")
        data = Path(args.data)
        if not data.is_dir():
            raise InputError(args.data, "--data", "not a directory")
        setting = dict(SETTINGS[args.dataset])
        zones = list(setting["zones"])
        if args.zones is not None:
            if args.dataset != "h100" or not 1 <= args.zones <= len(H100_SCALING):
                raise InputError(None, "--zones", f"H100 only, 1..{len(H100_SCALING)}")
            zones = list(H100_SCALING[: args.zones])
        ratio = setting["ratio"] if args.ratio is None else args.ratio
        if not (math.isfinite(ratio) and ratio >= 1.0):
            raise InputError(None, "--ratio", f"must be >= 1, got {ratio}")
        if args.sweep and args.dataset != "h100":
            raise InputError(None, "--sweep", "their sweeps run on H100 (--dataset h100)")
        args.gpuaas = [x.strip() for x in args.gpuaas.split(",") if x.strip()]
        if unknown := sorted(set(args.gpuaas) - set(GPUAAS)):
            raise InputError(None, "--gpuaas", f"unknown {', '.join(unknown)}: {', '.join(GPUAAS)}")
        windows = setting["windows"]
        if args.windows:
            try:
                windows = tuple(int(w) for w in args.windows.split(","))
            except ValueError:
                raise InputError(None, "--windows", f"integers, got {args.windows!r}") from None
        if args.output:
            check_output(args.output)
        if args.skynomad is not None:
            checkout = Path(args.skynomad)
            if not (checkout / "sky_spot" / "env.py").is_file():
                raise InputError(args.skynomad, "--skynomad", "not a checkout: no sky_spot/env.py")
            if args.python is None:
                venv = checkout / ".venv" / "bin" / "python"
                args.python = str(venv) if venv.is_file() else sys.executable
        head = {
            "dataset": args.dataset,
            "restart_h": setting["restart_h"],
            "checkpoint_gb": setting["checkpoint_gb"],
            "skynomad_strategy": setting["skynomad"],
        }
        with tempfile.TemporaryDirectory(prefix="skynomad_setting") as tmp:
            tmp = Path(tmp)
            if args.sweep:
                results: dict[str, Any] = {}
                for i, (key, value) in enumerate(SWEEPS[args.sweep]):
                    cell_zones = list(H100_SCALING[:value]) if key == "zones" else zones
                    cell_ratio = value if key == "ratio" else 1.2  # region_scaling.py's ratio
                    print(f"skynomad_setting: {key}={value}", file=sys.stderr, flush=True)
                    results[f"{key}={value}"] = run_cell(
                        args, setting, cell_zones, cell_ratio, windows, data, tmp / str(i)
                    )
                results["setting"] = head
            else:
                results = run_cell(args, setting, zones, ratio, windows, data, tmp)
                results["setting"] = {**head, **results["setting"], "paper": setting["paper"]}
        text = json.dumps(results, indent=1)
        if args.output:
            with open_output(args.output) as fh:
                fh.write(text + "\n")
        if args.json or not args.output:
            print(text)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
