"""CPU seconds of each phase of one simulation: the method and the bookkeeping around it.

Wraps the Rescheduler's and the simulator's functions with a CPU-time counter (per call, so a
few percent of overhead) and simulates the trace with the default method (solver seed 1, no
bound), then prints one JSON object: the total, the events, the total cost (to check that two
revisions decided the same) and each phase's CPU seconds. Run it on another checkout with that
checkout first on PYTHONPATH to compare revisions (scripts/results/archive/bench-scale-issue43.md):

    python -m gpuaas generate --nodes 300 --jobs 3000 --seed 1 -o n300.json
    PYTHONPATH=. python scripts/bench_phases.py n300.json
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections import defaultdict

import gpuaas.producers as producers
import gpuaas.rescheduler.accounting as accounting
import gpuaas.rescheduler.apply as apply
import gpuaas.rescheduler.core as core
import gpuaas.rescheduler.state as state
import gpuaas.rescheduler.view as view
import gpuaas.simulator as simulator
from gpuaas import load_instance, simulate

SECONDS: dict[str, float] = defaultdict(float)


def counted(owner, name: str, label: str | None = None) -> None:
    """Replace `owner.name` by a wrapper adding its CPU seconds to SECONDS[label or name]."""
    f = getattr(owner, name)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        try:
            return f(*args, **kwargs)
        finally:
            SECONDS[label or name] += time.process_time() - t0

    setattr(owner, name, wrapper)


def main() -> None:
    counted(accounting, "advance")
    counted(state, "savepoint")
    core.savepoint = state.savepoint  # imported by name
    counted(view, "instance")
    counted(apply, "solve", "method")
    for name in ("apply", "target", "check_solution", "match_nodes"):
        counted(apply, name)
    counted(core.intake, "check", "intake")
    counted(core.Rescheduler, "handle")
    for cls in (producers.Releases, producers.Execution, producers.Ticks):
        for name in ("next_time", "events", "planned"):
            counted(cls, name, f"{cls.__name__}.{name}")
    counted(simulator.Simulator, "_guard")
    counted(simulator.Simulator, "step")
    t0 = time.process_time()
    d = simulate(load_instance(sys.argv[1]), seed=1, bound=False).to_dict()
    phases = {k: round(v, 3) for k, v in sorted(SECONDS.items(), key=lambda kv: -kv[1])}
    total = time.process_time() - t0
    print(json.dumps({"cpu_s": total, "events": d["events"], "cost": d["total_cost"], **phases}))


if __name__ == "__main__":
    main()
