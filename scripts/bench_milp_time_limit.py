"""MILP time limits: does `--method milp --time-limit L` stop within 10 % of L?

For each snapshot seed (the instance of `gpuaas generate --nodes 20 --jobs 100 --snapshot
--seed S`) and each limit L, times `gpuaas.solve(instance, "milp", time_limit=L)` in this
process (warm start, model build, HiGHS, check: everything the method does) and, with --cli,
the whole command `gpuaas solve FILE --method milp --time-limit L --json` (process start-up,
reading the file and writing the answer too). Prints a markdown table and the load average.

    python scripts/bench_milp_time_limit.py --limits 2,5,10 --seeds 1,2,3 --cli
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import gpuaas
from gpuaas.generator import generate_snapshot
from gpuaas.instance import Instance
from gpuaas.methods import solve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--limits", default="2,5,10", help="time limits (s), comma separated")
    ap.add_argument("--seeds", default="1,2,3", help="snapshot seeds, comma separated")
    ap.add_argument("--cli", action="store_true", help="also time the whole gpuaas command")
    args = ap.parse_args()
    limits = [float(x) for x in args.limits.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    print(
        f"N = {args.nodes}, J = {args.jobs}, gpuaas {gpuaas.__version__}, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start"
    )
    print("| limit s | seed | solve s | / limit | command s | status | objective | greedy | gap |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            data = generate_snapshot(args.nodes, args.jobs, seed)
            path = os.path.join(tmp, f"n{args.nodes}-s{seed}.json")
            with open(path, "w") as fh:
                json.dump(data, fh)
            inst = Instance.from_dict(data, path).released()
            greedy = solve(inst, "greedy").f_obj  # also compiles / loads the kernels
            for limit in limits:
                t0 = time.perf_counter()
                sol = solve(inst, "milp", seed=seed, time_limit=limit, objective="p1a")
                wall = time.perf_counter() - t0
                cmd = ""
                if args.cli:
                    t1 = time.perf_counter()
                    subprocess.run(
                        [
                            sys.executable,
                            "-m",
                            "gpuaas",
                            "solve",
                            path,
                            "--method",
                            "milp",
                            "--time-limit",
                            str(limit),
                            "--seed",
                            str(seed),
                            "--objective",
                            "p1a",
                            "--json",
                        ],
                        check=True,
                        capture_output=True,
                    )
                    cmd = f"{time.perf_counter() - t1:.2f}"
                st = sol.stats
                gap = "" if st.get("gap") is None else f"{st['gap']:.3f}"
                print(
                    f"| {limit:g} | {seed} | {wall:.2f} | {wall / limit:.2f} | {cmd} | {st['status']} | "
                    f"{sol.f_obj:.6g} | {greedy:.6g} | {gap} |",
                    flush=True,
                )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
