"""The smoke grid: every registered method simulated on a few small traces, with the default
and the paper's reconfiguration costs, and each total cost pinned in `smoke_results.json`.

`tests/test_results.py` simulates every cell again and fails when a cost moved by more than
`TOLERANCE` (relative): the runs are seeded and deterministic, so any change is a change in
what a method decides, never noise. A change that moves results re-pins them and says so,
with the figures, in its commit message and CHANGELOG::

    python tests/smoke.py            # prints every cell: pinned, now, relative change
    python tests/smoke.py --write    # re-pins (tests/smoke_results.json)

The MILP (gap 1e-4, no time limit: deterministic) and hierarchical run on the first four jobs
of one trace; the others on all jobs of every trace, and on `instances/trace-small.json`
(the README's trace) the heuristics and EDF with the default costs; on a larger trace (`LARGER`)
the default method. The spot methods run with
spot capacity from the availability model (its defaults, seeded by the run), and the default
method once more with it (costs ``default+spot`` and ``paper+spot``).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = Path(__file__).with_name("smoke_results.json")
#: relative change of a total cost that fails the test (the runs are deterministic: 0 on one
#: machine; the margin covers floating-point differences between numpy builds)
TOLERANCE = 1e-6
#: (name, nodes, jobs, seed, arrivals) of the generated traces
TRACES = [
    ("exp", 2, 6, 1, "exponential"),
    ("high", 2, 6, 2, "high"),
    ("low", 2, 6, 3, "low"),
]
#: a trace large enough for ties in the node matching (several optimal assignments of solver
#: nodes to physical ones, `gpuaas.rescheduler.matching`): the default method only
LARGER = ("ties", 10, 60, 4, "high")
#: methods whose per-event MILPs make them slow: four jobs of the first trace
MILP_METHODS = {"milp": {"gap": 1e-4}, "hierarchical": {"gap": 1e-4}}
README_METHODS = ("incremental", "path-relinking", "randomized-greedy", "greedy", "edf")
#: methods that only make sense with spot capacity: always simulated with it
SPOT_ONLY = ("on-demand", "managed-spot", "uniform-progress", "skynomad")


@cache
def trace(name: str):
    """The trace of a cell (an Instance)."""
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance, load_instance

    if name == "trace-small":
        return load_instance(ROOT / "instances" / "trace-small.json")
    _, nodes, jobs, seed, arrivals = next(t for t in (*TRACES, LARGER) if t[0] == name)
    inst = Instance.from_dict(generate_trace(nodes, jobs, seed, arrivals=arrivals))
    return inst


def cells() -> list[tuple[str, str, str]]:
    """(trace, method, costs) of every cell; costs "default" or "paper"."""
    from gpuaas.methods import METHODS

    out = []
    for name, *_ in TRACES:
        for method in METHODS:
            if method in MILP_METHODS and name != TRACES[0][0]:
                continue
            out += [(name, method, costs) for costs in ("default", "paper")]
        out += [(name, "incremental", costs) for costs in ("default+spot", "paper+spot")]
    out += [("trace-small", method, "default") for method in README_METHODS]
    out += [(LARGER[0], "incremental", "default")]
    return out


def key(cell: tuple[str, str, str]) -> str:
    return "/".join(cell)


def total_cost(cell: tuple[str, str, str]) -> float:
    """The simulated total cost ($) of a cell, seed 1."""
    import gpuaas

    name, method, costs = cell
    inst = trace(name)
    options = MILP_METHODS.get(method, {})
    if method in MILP_METHODS:
        inst = inst.subset(range(4))
    reconfiguration = dict(gpuaas.PAPER_COSTS) if costs.startswith("paper") else {}
    spot = method in SPOT_ONLY or costs.endswith("+spot")
    result = gpuaas.simulate(
        inst, method, seed=1, bound=False, spot=spot, **reconfiguration, **options
    )
    return result.total_cost


def pinned() -> dict[str, float]:
    return json.loads(PINS.read_text())


if __name__ == "__main__":
    old = pinned() if PINS.exists() else {}
    new = {}
    for cell in cells():
        k = key(cell)
        new[k] = total_cost(cell)
        before = old.get(k)
        change = "" if before is None else f"{(new[k] - before) / before:+.2%}"
        print(f"{k:40} {before if before is not None else '-':>14} {new[k]:14.4f} {change}")
    if "--write" in sys.argv[1:]:
        PINS.write_text(json.dumps(new, indent=1) + "\n")
        print(f"pinned {len(new)} cells in {PINS}")
