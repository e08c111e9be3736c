"""MILP benchmark table: HiGHS on generated snapshots at a relative gap, several seeds (P1 by
default, P1$ with `--objective dollars`).

Prints one row per size (N, J): median / max solve time, status counts, median final gap and
median B&B nodes, for each linearisation asked for. Example (issue 3's sizes):

    python scripts/bench_milp.py --seeds 5 --gap 0.05 --time-limit 120

Timings are wall-clock solve times (stats["seconds"]: build + solve + decode); on a shared
machine run it when the machine is otherwise idle, or say that it was not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter

from gpuaas.generator import generate_instance
from gpuaas.milp import milp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2x10,5x20,5x50,10x100", help="N x J list, e.g. 5x50,10x100")
    ap.add_argument("--seeds", type=int, default=5, help="snapshot seeds 0..S-1")
    ap.add_argument("--gap", type=float, default=0.05)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--linearisation", default="product", help="product, bigm, or both as a comma list (P1)"
    )
    ap.add_argument(
        "--objective", default="p1a", choices=("p1a", "dollars"), help="P1 (p1a) or P1$ (dollars)"
    )
    ap.add_argument("--json", dest="json_out", help="also write every run as JSON to this file")
    args = ap.parse_args()
    runs = []
    print(
        f"gap {args.gap:g}, time limit {args.time_limit:g} s, threads {args.threads}, "
        f"{args.seeds} seeds, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    print("| N | J | linearisation | median s | max s | status | median gap | median nodes |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        n, j = (int(x) for x in size.lower().split("x"))
        for lin in args.linearisation.split(","):
            rows = []
            for seed in range(args.seeds):
                inst = generate_instance(n, j, seed)
                sol = milp(
                    inst,
                    seed=seed,
                    gap=args.gap,
                    time_limit=args.time_limit,
                    threads=args.threads,
                    linearisation=lin,
                    objective=args.objective,
                )
                st = sol.stats
                rows.append(st)
                runs.append(
                    {
                        "nodes": n,
                        "jobs": j,
                        "seed": seed,
                        "linearisation": lin,
                        **{
                            k: st[k]
                            for k in (
                                "status",
                                "seconds",
                                "objective",
                                "bound",
                                "gap",
                                "solver_nodes",
                                "rows",
                                "columns",
                            )
                        },
                    }
                )
            secs = [r["seconds"] for r in rows]
            gaps = [r["gap"] for r in rows if r["gap"] is not None]
            status = ", ".join(f"{k} {v}" for k, v in Counter(r["status"] for r in rows).items())
            print(
                f"| {n} | {j} | {lin} | {statistics.median(secs):.2f} | {max(secs):.2f} | {status} "
                f"| {statistics.median(gaps):.4f} | {statistics.median(r['solver_nodes'] for r in rows):g} |",
                flush=True,
            )
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(runs, fh, indent=1)


if __name__ == "__main__":
    main()
