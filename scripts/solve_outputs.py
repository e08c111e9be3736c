#!/usr/bin/env python
"""Every method's `gpuaas solve --json` on the bundled instances and on generated snapshots, in
one JSON file, timing aside: run before and after a change that must not move results, then
compare the two files (`cmp` or `diff`; exit 0 of `--compare` means identical).

    python scripts/solve_outputs.py /tmp/before.json        # on the old commit
    python scripts/solve_outputs.py /tmp/after.json         # on the new one
    python scripts/solve_outputs.py --compare /tmp/before.json /tmp/after.json

Inputs: `instances/example.json`, `instances/trace-small.json` (its released jobs) and the
snapshots `gpuaas generate --snapshot --nodes 5 --seed S` for S = 1..3 on azure-2021 and
aws-us-east-1 (with a 600 s restart and a 120 s start-up, so the incumbent rules act). Every
registered method, seed 1; the MILP with a 0.05 gap (deterministic: one thread, no time limit),
on P1$ (its default) and on P1 (`milp p1a`). Each solution states P1$ (`objective`) and f_OBJ
(`f_obj`). `hierarchical` keeps its controllers' wall-clock time limit: a solution reached at a
time limit depends on the machine's load and is listed as not compared.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def stopped(stats: dict) -> bool:
    """Whether a MILP (or a controller of `hierarchical`) stopped at its wall-clock time limit,
    with an incumbent ("time_limit") or with its warm start only ("warm_start"): where it
    stopped, and so the solution, depends on the machine's speed and load."""
    said = json.dumps(stats.get("status")) + json.dumps(stats.get("statuses"))
    return "time_limit" in said or "warm_start" in said


def decided(stats: dict) -> dict:
    """The stats without what is measured rather than decided (every `*seconds` field, also
    in nested stats such as `incremental`'s `polish`)."""
    return {
        k: decided(v) if isinstance(v, dict) else v
        for k, v in stats.items()
        if not k.endswith("seconds")
    }


def instances() -> dict[str, object]:
    from gpuaas.generator import generate_snapshot
    from gpuaas.instance import Instance, load_instance

    out = {}
    for name in ("example.json", "trace-small.json"):
        out[name] = load_instance(ROOT / "instances" / name).released()
    for catalog in ("azure-2021", "aws-us-east-1"):
        for seed in (1, 2, 3):
            inst = Instance.from_dict(generate_snapshot(5, seed=seed, catalog=catalog))
            out[f"snapshot-{catalog}-{seed}"] = dataclasses.replace(
                inst, overhead=600.0, startup=120.0
            )
    return out


def outputs() -> dict[str, object]:
    from gpuaas.methods import METHODS, solve

    runs = [(m, m, {}) for m in METHODS] + [("milp p1a", "milp", {"objective": "p1a"})]
    res = {}
    for name, inst in instances().items():
        for key, method, options in runs:
            if method == "milp":
                options = {"gap": 0.05, "threads": 1, **options}
            solution = solve(inst, method, seed=1, **options)
            sol = solution.to_dict()
            sol["f_obj"] = solution.f_obj
            res[f"{name} {key}"] = sol
    return res


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--compare":
        a, b = (json.loads(Path(p).read_text()) for p in argv[1:])
        for sol in (*a.values(), *b.values()):
            sol["stats"] = decided(sol["stats"])
        timed = sorted(
            k for k in a.keys() & b.keys() if stopped(a[k]["stats"]) or stopped(b[k]["stats"])
        )
        diff = sorted(k for k in a.keys() | b.keys() if k not in timed and a.get(k) != b.get(k))
        for k in diff:
            print(f"differs: {k}")
        for k in timed:
            print(f"not compared (a MILP stopped at its time limit): {k}")
        same = len(a) - len(timed)
        print(
            f"{same} of {len(a)} solutions compared: "
            + ("identical" if not diff else f"{len(diff)} differ")
        )
        return 1 if diff else 0
    if len(argv) != 1:
        print(__doc__)
        return 2
    Path(argv[0]).write_text(json.dumps(outputs(), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
