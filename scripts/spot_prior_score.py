#!/usr/bin/env python
"""How strong the prior of the capacity-drop rate should be, measured on the data at hand.

`gpuaas.rescheduler.spot_estimates.market_rate` estimates a spot type's drops per hour with
capacity as (r W + drops) / (W + hours with capacity), W = PRIOR_DROPS / SPELL_RATE hours: a
Gamma prior of PRIOR_DROPS drops at the family's spell rate r. This script replays that
estimate (the function itself, with PRIOR_DROPS set to each value of `--priors`) on zone
traces as a run would see them: a window starts every hour of a trace; after t hours of it the
estimate is compared with the drops of the next H hours (hours with capacity and drops counted
as `spot_estimates.set_capacity` counts them: a drop from k to k' is (k - k') / k). Two scores,
each relative to PRIOR_DROPS = 1, summed over the windows and the zones (lower is better):

- calibration: the Poisson deviance of the drops seen in the next H hours against the
  estimate x the hours with capacity in them;
- ordering: over every pair of zones of a setting, the difference of their future rates where
  the estimates order the two the other way (what a choice between zones turns on).

    python scripts/spot_prior_score.py --skynomad-data $GPUAAS_SKYNOMAD_DATA \\
        --spot-traces $GPUAAS_SPOT_TRACES

Data (the user's copies; nothing of them is in the repository): SkyNomad's converted V100 and
H100 traces (``converted_multi_region_aligned``, ``..._h100_16_merged``: one folder per zone,
0/1 availability) and Can't Be Late's V100 traces (``availability/16-node/*``: counts of 16,
``availability/1-node/aws-10-26-2022/*v100*``). Results: docs/spot.md, "What the Rescheduler
learns of each type's capacity".
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import gpuaas.rescheduler.spot_estimates as est
from gpuaas.availability.model import family_table
from gpuaas.availability.skynomad import read_zones

sys.path.insert(0, str(Path(__file__).resolve().parent))
from skynomad_setting import SETTINGS  # noqa: E402  (the settings' zones, one place)

V100_SETTING = SETTINGS["v100"]["zones"]
H100_SETTING = SETTINGS["h100"]["zones"]


def cumulative(gap: float, counts: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(tick hours, A, D): A[i] hours with capacity in ticks [0, i), D[i] the drops that end
    those ticks' stretches (a drop at tick i counted with tick i - 1)."""
    prev = counts[:-1]
    drop = np.where((counts[1:] < prev) & (prev > 0), (prev - counts[1:]) / np.maximum(prev, 1), 0)
    g = gap / 3600.0
    hours = np.concatenate(([0.0], np.cumsum(np.where(counts > 0, g, 0.0))))
    drops = np.concatenate(([0.0], np.cumsum(np.append(drop, 0.0))))
    return g, hours, drops


def estimate(prior: float, rate: float, hours: np.ndarray, drops: np.ndarray) -> np.ndarray:
    """`market_rate` with PRIOR_DROPS = `prior`, for arrays of hours with capacity and drops."""
    saved = est.PRIOR_DROPS
    est.PRIOR_DROPS = prior
    try:
        s = SimpleNamespace(market={0: (hours * 3600.0, drops, None, 1)})
        return est.market_rate(s, 0, 0.0, rate)
    finally:
        est.PRIOR_DROPS = saved


def windows(g: float, n: int, t: float, horizon: float) -> tuple[np.ndarray, int, int]:
    it, ih = round(t / g), round(horizon / g)
    return np.arange(0, max(0, n - it - ih), max(1, round(1.0 / g))), it, ih


def scores(zones: dict, rate: float, priors: list[float], ts, horizon: float, n: int):
    """Per prior: (deviance, misordering) per t, summed over zones (pairs) and windows."""
    data = {z: cumulative(*v) for z, v in zones.items()}
    g = next(iter(data.values()))[0]
    dev = np.zeros((len(ts), len(priors)))
    order = np.zeros((len(ts), len(priors)))
    for i, t in enumerate(ts):
        s, it, ih = windows(g, n, t, horizon)
        if len(s) == 0:
            continue
        guess, future = {}, {}
        for z, (_, hours, drops) in data.items():
            seen_h, seen_d = hours[s + it] - hours[s], drops[s + it] - drops[s]
            fut_h, fut_d = hours[s + it + ih] - hours[s + it], drops[s + it + ih] - drops[s + it]
            guess[z] = [estimate(p, rate, seen_h, seen_d) for p in priors]
            future[z] = np.where(fut_h > 0.5, fut_d / np.maximum(fut_h, 1e-9), np.nan)
            for k in range(len(priors)):
                mu = np.maximum(guess[z][k] * fut_h, 1e-12)
                ratio = np.where(fut_d > 0, fut_d / mu, 1.0)
                dev[i, k] += (2 * (fut_d * np.log(ratio) - (fut_d - mu))).sum()
        for a, b in itertools.combinations(data, 2):
            diff = future[a] - future[b]
            ok = np.isfinite(diff)
            for k in range(len(priors)):
                d = guess[a][k] - guess[b][k]
                wrong = np.where(np.abs(d) < 1e-12, 0.5, np.sign(d) != np.sign(diff))
                order[i, k] += (np.abs(diff) * wrong)[ok].sum()
    return dev, order


def skynomad(directory: Path) -> tuple[dict, int]:
    zones = {z: (tr.gap, tr.available.astype(np.int64)) for z, tr in read_zones(directory).items()}
    return zones, min(len(c) for _, c in zones.values())


def spot_traces(pattern: str) -> tuple[dict, int]:
    zones = {}
    for path in sorted(glob.glob(pattern)):
        doc = json.loads(Path(path).read_text())
        zones[path] = (float(doc["metadata"]["gap_seconds"]), np.asarray(doc["data"], np.int64))
    return zones, min(len(c) for _, c in zones.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skynomad-data", help="SkyNomad's data folder (converted traces)")
    ap.add_argument("--spot-traces", help="a copy of Can't Be Late's spot traces")
    ap.add_argument("--priors", type=float, nargs="+", default=[0.25, 0.5, 1, 2, 3, 5, 10])
    ap.add_argument("--horizons", type=float, nargs="+", default=[6, 40])
    args = ap.parse_args()
    priors = sorted(set(args.priors) | {1.0})
    spells = {f: v[0] for f, v in family_table().items()}
    sets = []
    if args.skynomad_data:
        d = Path(args.skynomad_data)
        v100 = skynomad(d / "converted_multi_region_aligned")
        h100 = skynomad(d / "converted_multi_region_aligned_h100_16_merged")
        sub = lambda zs, keep: ({z: v for z, v in zs[0].items() if z in keep}, zs[1])  # noqa: E731
        sets += [
            ("SkyNomad V100, the setting's 3 zones", sub(v100, V100_SETTING), spells["V100"]),
            ("SkyNomad V100, 9 zones", v100, spells["V100"]),
            ("SkyNomad H100, the setting's 6 zones", sub(h100, H100_SETTING), spells["H100"]),
            ("SkyNomad H100, 13 zones", h100, spells["H100"]),
        ]
    if args.spot_traces:
        a = Path(args.spot_traces) / "availability"
        sets += [
            ("Can't Be Late 16-node V100", spot_traces(f"{a}/16-node/*/*.json"), spells["V100"]),
            (
                "Can't Be Late 1-node V100 2022-10-26",
                spot_traces(f"{a}/1-node/aws-10-26-2022/*v100*.json"),
                spells["V100"],
            ),
        ]
    shown = (0.5, 1.5, 6.0, 24.0)
    every = tuple(np.arange(0.25, 36.01, 0.25))
    ts = tuple(sorted(set(shown) | set(every)))
    one = priors.index(1.0)
    print("PRIOR_DROPS: " + ", ".join(f"{p:g}" for p in priors) + " (scores / PRIOR_DROPS 1)")
    for title, (zones, n), rate in sets:
        print(f"\n## {title} ({len(zones)} zones, prior rate {rate:g}/h)\n")
        print("| score | H h | t h | " + " | ".join(f"{p:g}" for p in priors) + " |")
        print("|---|---|---|" + "---|" * len(priors))
        for horizon in args.horizons:
            dev, order = scores(zones, rate, priors, ts, horizon, n)
            for name, m in (("deviance", dev), ("misordering", order)):
                if name == "misordering" and len(zones) < 2:
                    continue
                rows = [(f"{t:g}", m[ts.index(t)]) for t in shown]
                rows.append(("0.25-36", m[[ts.index(t) for t in every]].sum(axis=0)))
                for label, row in rows:
                    rel = row / row[one] if row[one] > 0 else row * np.nan
                    cells = " | ".join(f"{x:.3f}" for x in rel)
                    print(f"| {name} | {horizon:g} | {label} | {cells} |")


if __name__ == "__main__":
    main()
