#!/usr/bin/env python
"""What spot prices alone would save: the on-demand-only default's schedule repriced at spot.

For each trace of a spot campaign (scripts/campaigns/spot-*.yaml: N, arrivals, trace seeds) the
default method is simulated on on-demand VMs only with its event log; every VM-hour of the log is
then billed at its type's spot price where the type has one (on demand otherwise), the
tardiness kept. The ratio to the run's total cost is what the same schedule would cost with
spot capacity that never runs out and never interrupts: a reference for the default's
"total / OD" of the spot campaigns (scripts/spot_report.py), not a bound (another schedule may do better still).

    python scripts/spot_repriced.py scripts/campaigns/spot-aws.yaml -o scripts/results/spot-repriced-aws.md
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
from pathlib import Path

from gpuaas.catalog import load_catalog
from gpuaas.experiments.spec import load_spec
from gpuaas.files import write_atomic
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import simulate


def repriced(
    log: Path, on_demand: dict[str, float], spot: dict[str, float]
) -> tuple[float, float, float]:
    """The VM-hours of an event log at on-demand prices, at spot prices where the type has one
    (nan: none), and the on-demand $ of the types without one."""
    od = sp = no_spot = 0.0
    for line in log.read_text().splitlines():
        interval = json.loads(line)
        hours = (interval["end"] - interval["start"]) / 3600.0
        for node in interval["nodes"]:
            vm = node["vm"]
            od += hours * on_demand[vm]
            if math.isnan(spot[vm]):
                sp += hours * on_demand[vm]
                no_spot += hours * on_demand[vm]
            else:
                sp += hours * spot[vm]
    return od, sp, no_spot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    spec = load_spec(args.spec)
    (catalog,) = spec.catalog
    cat = load_catalog(catalog)
    on_demand = dict(zip(cat.vm_names, cat.cost_per_hour))
    spot = dict(zip(cat.vm_names, cat.spot_per_hour))
    out = [
        f"# The on-demand-only schedule repriced at spot ({catalog})",
        "",
        f"`python scripts/spot_repriced.py {args.spec}`: the default method on on-demand VMs "
        "only (solver seed 1, restart 600 s, start-up 120 s), its VM-hours billed at the spot "
        "price wherever the type has one; total = VMs + the run's tardiness.",
        "",
        "| N | arrivals | trace seed | on-demand total $ | repriced total $ | repriced / on demand "
        "| VM $ share on types without spot |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in spec.nodes:
            for arrivals in spec.arrivals:
                for seed in spec.seeds:
                    jobs = max(1, round(spec.jobs_per_node * n))  # as the campaign's cells
                    data = generate_trace(n, jobs, seed, arrivals=arrivals, catalog=catalog)
                    log = Path(tmp) / f"{n}-{arrivals}-{seed}.jsonl"
                    r = simulate(Instance.from_dict(data), seed=1, log=log, bound=False)
                    od, sp, only_od = repriced(log, on_demand, spot)
                    ratio = (sp + r.tardiness_cost) / r.total_cost
                    ratios.append(ratio)
                    out.append(
                        f"| {n} | {arrivals} | {seed} | {r.total_cost:.2f} "
                        f"| {sp + r.tardiness_cost:.2f} | {ratio:.3f} | {only_od / od:.1%} |"
                    )
    out += [
        "",
        f"Repriced / on demand: mean {statistics.fmean(ratios):.3f}, "
        f"{min(ratios):.3f}-{max(ratios):.3f} per trace.",
    ]
    text = "\n".join(out) + "\n"
    if args.output:
        write_atomic(args.output, text)
    print(text, end="")


if __name__ == "__main__":
    main()
