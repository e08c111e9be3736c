"""How much of the per-configuration error's cost is the configurations' own: the default told
each job's own error but not its configurations'.

Under `lognormal-config` a job's log error is its own part plus its configuration's
(`gpuaas.noise.log_parts`). This script replays every trace of scripts/campaigns/prediction.yaml
(N = 10, 20; three patterns; traces 1-3; solver seed 1; 600 s restart, start-up 0) with each
job's own part known (its predicted times x exp(own part)) and the configurations' part as the
only error (the simulator's execution with factors exp(configuration part), progress reported,
the speed model on), and writes one CSV row per (N, arrivals, trace seed, level): the total
cost. `scripts/prediction_report.py --job-part` sets it against the runs told everything.

    python scripts/prediction_job_part.py -o scripts/results/prediction-job-part.csv

Run again with the same output, it adds the rows that are missing.
"""

from __future__ import annotations

import argparse
import csv
import itertools
from pathlib import Path

import numpy as np

from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.noise import actual_trace, log_parts
from gpuaas.producers import Execution
from gpuaas.simulator import Simulator

SPEC = Path(__file__).resolve().parent / "campaigns" / "prediction.yaml"
COLUMNS = ["nodes", "arrivals", "trace_seed", "noise", "total_cost"]


def told_own_part(trace: Instance, seed: int, level: float) -> float:
    """The default's total cost told each job's own error, not its configurations'."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))  # gpuaas.noise's stream
    own, config = log_parts(trace, rng, level, "lognormal-config")
    told = actual_trace(trace, np.repeat(np.exp(own)[:, None], trace.n_configs, axis=1))
    sim = Simulator(told, "incremental", seed=seed, overhead=600.0, startup=0.0)
    sim.execution = Execution(told, np.exp(config), report=True, config=sim.config)
    sim.producers[1] = sim.execution
    return sim.run().total_cost


def main() -> None:
    import yaml

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    spec = yaml.safe_load(SPEC.read_text())
    done: set[tuple[str, ...]] = set()
    if Path(args.output).exists():  # resume: the rows written stay, the others are run
        with open(args.output, newline="") as fh:
            done = {tuple(r[:4]) for r in list(csv.reader(fh))[1:]}
    with open(args.output, "a" if done else "w", newline="") as fh:
        out = csv.writer(fh)
        if not done:
            out.writerow(COLUMNS)
        for n, arrivals, seed, level in itertools.product(
            spec["nodes"], spec["arrivals"], spec["seeds"], spec["noise"]
        ):
            if (str(n), arrivals, str(seed), str(level)) in done:
                continue
            data = generate_trace(n, round(spec["jobs_per_node"] * n), arrivals=arrivals, seed=seed)
            trace = Instance.from_dict(data)
            cost = told_own_part(trace, spec["solver_seeds"][0], level)
            out.writerow([n, arrivals, seed, level, repr(cost)])
            fh.flush()


if __name__ == "__main__":
    main()
