#!/usr/bin/env python
"""Where a run's VM dollars went, from its event log (`gpuaas simulate ... --log FILE`).

Per VM type: the dollars its open nodes cost, the part of them on GPUs no job held (idle) and
its node-hours; then the jobs' changes of place between consecutive intervals (node or
configuration), by VM type before and after and whether the job stayed on its node (a resize
or a new GPU count) or changed node. Used for scripts/results/upper.md, "Where the default
loses on clusters 9 and 8". Spot nodes are priced at the catalog's spot price, so a run on a
replayed spot price series adds up to its VM cost only roughly.

    python scripts/log_spend.py LOG --catalog gcp-us-central1 [--top 12]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import numpy as np

from gpuaas.catalog import load_catalog


def spend(log: str, catalog: str) -> tuple[Counter, Counter, Counter, Counter]:
    """(dollars, idle dollars, node-hours) per VM type and changes of place per (VM type
    before, after, "same node" or "other node")."""
    cat = load_catalog(catalog)
    if np.isfinite(cat.spot_per_hour).any():
        cat = cat.with_spot()  # spot variants (``NAME:spot``) at the catalog's spot price
    price = dict(zip(cat.vm_names, cat.cost_per_hour))
    gpus = dict(zip(cat.vm_names, cat.gpus))
    cost, idle, hours, moves = Counter(), Counter(), Counter(), Counter()
    before: dict[str, tuple[int, str, int]] = {}
    with open(log) as f:
        for line in f:
            row = json.loads(line)
            if "start" not in row:
                continue
            h = (row["end"] - row["start"]) / 3600.0
            held = Counter()
            for j in row["jobs"]:
                held[j["node"]] += j["gpus"]
            for n in row["nodes"]:
                vm = n["vm"]
                cost[vm] += price[vm] * h
                if gpus[vm]:  # a GPU-less VM has no idle GPUs
                    idle[vm] += price[vm] * h * (gpus[vm] - held[n["node"]]) / gpus[vm]
                hours[vm] += h
            now = {j["id"]: (j["node"], j["vm"], j["gpus"]) for j in row["jobs"]}
            for jid, place in now.items():
                was = before.get(jid)
                if was is not None and was != place:
                    where = "same node" if was[0] == place[0] else "other node"
                    moves[(was[1], place[1], where)] += 1
            before = now
    return cost, idle, hours, moves


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--catalog", required=True, help="the run's catalog (bundled name or file)")
    ap.add_argument("--top", type=int, default=12, help="rows of the changes of place")
    a = ap.parse_args()
    cost, idle, hours, moves = spend(a.log, a.catalog)
    print("| VM type | $ | idle GPUs $ | node-hours |\n|---|---|---|---|")
    for vm, c in cost.most_common():
        print(f"| {vm} | {c:,.0f} | {idle[vm]:,.0f} | {hours[vm]:,.0f} |")
    print(f"| all | {sum(cost.values()):,.0f} | {sum(idle.values()):,.0f} | |")
    print(f"\nchanges of place: {sum(moves.values())}\n")
    print("| from | to | where | count |\n|---|---|---|---|")
    for (a_vm, b_vm, where), k in moves.most_common(a.top):
        print(f"| {a_vm} | {b_vm} | {where} | {k} |")


if __name__ == "__main__":
    main()
