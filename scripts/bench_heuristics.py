#!/usr/bin/env python
"""Median warm solve time of Greedy, Randomized Greedy and Path Relinking (paper parameters).

    python scripts/bench_heuristics.py [--repeats 7] [--sizes 10:45,50:225,100:450]
                                       [--open-rules largest,config]

Prints one row per size and node-opening rule with each method's median ``stats.seconds``
(the solver's own time, numba compilation excluded) and its f_OBJ, on generated snapshots
(`generate_instance`).
"""

from __future__ import annotations

import argparse
import statistics

from gpuaas.generator import generate_instance
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.path_relinking import path_relinking
from gpuaas.heuristics.randomized_greedy import randomized_greedy
from gpuaas.heuristics.state import OPEN_RULES, warm_up

METHODS = {
    "greedy": greedy,
    "randomized-greedy": randomized_greedy,
    "path-relinking": path_relinking,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--sizes", default="10:45,50:225,100:450", help="N:J pairs, comma separated")
    ap.add_argument("--seed", type=int, default=1, help="instance and solver seed")
    ap.add_argument("--open-rules", default=",".join(OPEN_RULES), help="comma-separated rules")
    args = ap.parse_args()
    for fn in METHODS.values():
        warm_up(fn)
    print(
        f"{'N':>4} {'J':>4} {'open_rule':>9} "
        + " ".join(f"{m + ' s':>20} {'f_OBJ':>12}" for m in METHODS)
    )
    for pair in args.sizes.split(","):
        n, j = (int(x) for x in pair.split(":"))
        inst = generate_instance(n, j, seed=args.seed)
        for rule in args.open_rules.split(","):
            cells = []
            for fn in METHODS.values():
                runs = [fn(inst, seed=args.seed, open_rule=rule) for _ in range(args.repeats)]
                med = statistics.median(r.stats["seconds"] for r in runs)
                cells.append(f"{med:>20.4f} {runs[0].f_obj:>12.6g}")
            print(f"{n:>4} {j:>4} {rule:>9} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
