"""Co-location slowdown in gpuaas's own simulator (issue 44 item 2): what planning with, learning
or ignoring a trace's slowdown table costs, and what ignoring CPU and memory too would.

    gpuaas import eva $GPUAAS_EVA/src/pai_trace/traces/pai_200.json -o pai200.json \\
        --colocation $GPUAAS_EVA/src/simulation/contention_map/contention_matrix.csv
    python scripts/colocation_setting.py pai200.json --json -o scripts/results/colocation-setting.json

The trace needs a `colocation` table (Eva's, read from the user's checkout: nothing of it is in
this repository, and the output holds measured figures only). Each run is one `gpuaas.simulate`
of the default method with the run defaults and seed 1 (`gpuaas simulate`'s; `--seeds`:
others, each run's key then ``"<run> s<seed>"``); the simulator runs the jobs at the table's speeds
in every run but "no slowdown":

- ``table``: the decisions get the table (`RunConfig.colocation` "table", the default);
- ``learn``: they learn pairwise factors from co-located jobs' progress ("learn");
- ``ignore``: they know nothing of it ("ignore"): what planning while ignoring it costs;
- ``no slowdown``: the trace without its table (neither the simulator nor the decisions);
- ``GPUs alone``: the trace without the jobs' CPU and memory demands, decisions ignoring
  the slowdown: the plan packs by GPUs alone, and its event log is counted against the
  demands it ignored.

Every run's event log is checked against the jobs' vCPU and memory demands: ``overfull``
intervals (some node's jobs need more vCPUs or memory than its type has) and the node-hours
over. The bound (`gpuaas.bound`, default options) is the trace's without slowdown, valid for
every run (slowdown only lengthens jobs). Output (``--json``): ``{"<run>": {"cost", "vm_cost",
"tardiness_cost", "bound", "cost_over_bound", "migrations", "jct_mean_h", "overfull_intervals",
"intervals", "overfull_node_hours", "node_hours", "seconds"}}``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpuaas.errors import InputError  # noqa: E402
from gpuaas.files import check_output, open_output, to_json  # noqa: E402
from gpuaas.instance import Instance, load_instance  # noqa: E402
from gpuaas.simulator import simulate, trace_bound  # noqa: E402

RUNS = ("table", "learn", "ignore", "no slowdown", "GPUs alone")
SEED = 1  # `gpuaas simulate`'s default: "no slowdown" is `gpuaas simulate TRACE`


def overfull(log: Path, trace: Instance) -> dict[str, float]:
    """Intervals of the event log where some node's jobs need more vCPUs or memory than its
    VM type has (the demands of `trace`), and the node-hours over."""
    cat = trace.catalog
    cpus = dict(zip(trace.job_ids, trace.cpus.tolist()))
    memory = dict(zip(trace.job_ids, trace.memory.tolist()))
    out = {"overfull_intervals": 0, "intervals": 0, "overfull_node_hours": 0.0, "node_hours": 0.0}
    with open(log) as fh:
        for line in fh:
            rec = json.loads(line)
            hours = (rec["end"] - rec["start"]) / 3600.0
            need: dict[int, list[float]] = {}
            for job in rec["jobs"]:
                use = need.setdefault(job["node"], [0.0, 0.0])
                use[0] += cpus[job["id"]]
                use[1] += memory[job["id"]]
            over = 0
            for node in rec["nodes"]:
                v = cat.vm_index(node["vm"])
                use = need.get(node["node"], [0.0, 0.0])
                over += bool(use[0] > cat.vcpus[v] + 1e-9 or use[1] > cat.memory[v] + 1e-9)
            out["intervals"] += 1
            out["overfull_intervals"] += int(over > 0)
            out["overfull_node_hours"] += over * hours
            out["node_hours"] += len(rec["nodes"]) * hours
    return out


def run(trace: Instance, name: str, bound: Any, seed: int = SEED) -> dict[str, Any]:
    """One run (module docstring), its figures."""
    sim_trace, mode = trace, "table"
    if name in ("learn", "ignore"):
        mode = name
    elif name == "no slowdown":
        sim_trace = dataclasses.replace(trace, colocation=None)
    elif name == "GPUs alone":
        zero = np.zeros(trace.n_jobs)
        sim_trace, mode = dataclasses.replace(trace, cpus=zero, memory=zero), "ignore"
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "events.jsonl"
        res = simulate(sim_trace, colocation=mode, seed=seed, log=log, bound=bound)
        fit = overfull(log, trace)
    jct = [j["completion"] - j["release"] for j in res.jobs]
    return {
        "cost": res.total_cost,
        "vm_cost": res.vm_cost,
        "tardiness_cost": res.tardiness_cost,
        "bound": bound.bound,
        "cost_over_bound": res.total_cost / bound.bound,
        "migrations": res.migrations,
        "jct_mean_h": float(np.mean(jct)) / 3600.0,
        **fit,
        "seconds": time.perf_counter() - t0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "trace", help="a trace with a colocation table (gpuaas import eva --colocation)"
    )
    ap.add_argument("--runs", default=",".join(RUNS), help=f"comma-separated of {', '.join(RUNS)}")
    ap.add_argument("--seeds", default=str(SEED), help="comma-separated seeds of the runs")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("-o", "--output", help="also write the JSON here")
    args = ap.parse_args(argv)
    try:
        if args.output:
            check_output(args.output)
        trace = load_instance(args.trace)
        if trace.colocation is None:
            raise InputError(args.trace, "colocation", "missing: the runs need a slowdown table")
        names = [n for n in args.runs.split(",") if n]
        for n in names:
            if n not in RUNS:
                raise InputError(None, "--runs", f"unknown run {n!r}; known: {', '.join(RUNS)}")
        bound = trace_bound(dataclasses.replace(trace, colocation=None))
        seeds = [int(k) for k in args.seeds.split(",")]
        out = {}
        for seed in seeds:
            for n in names:
                key = n if seeds == [SEED] else f"{n} s{seed}"
                out[key] = run(trace, n, bound, seed)
                ratio = out[key]["cost_over_bound"]
                print(f"{key}: {out[key]['cost']:.0f} $ ({ratio:.3f} x the bound)", file=sys.stderr)
    except InputError as exc:
        print(f"colocation_setting: error: {exc}", file=sys.stderr)
        return 2
    text = to_json(out, indent=1)
    if args.json:
        print(text)
    if args.output:
        with open_output(args.output) as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
