#!/usr/bin/env python
"""The cost of one event with 0 and with K completed jobs in a Rescheduler's state, and the
state's size (issue 23): an event must cost the same however many jobs completed before.

A Rescheduler (azure-2021, 2 nodes, greedy) holds 4 unfinished jobs and either no completed
job or K (default 10 000: a state of the format-2 release with K completion records appended,
restored). Each event is an hourly tick, measured two ways, in CPU seconds (`process_time`),
median of `--repeat` ticks:

- **tick**: `Rescheduler.tick` alone;
- **tick + save**: the tick and what a durable service writes after it: the JSON of the live
  part and of the new completion records (`live_state()`, `completion_log(n)`), or, with a
  release that has no parts (format 2), the JSON of the whole `state()`.

    python scripts/bench_state.py                      # this checkout
    PYTHONPATH=/path/to/old/checkout python scripts/bench_state.py   # an older release

Run both on the same machine, one after the other, and compare the ratios (K / 0).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from gpuaas import Rescheduler

TIMES = {"NC6": [1e8], "NC12": [1e8, 6e7], "NC24": [1e8, 6e7, 4e7, 3e7]}


def base() -> Rescheduler:
    r = Rescheduler("azure-2021", nodes=2, method="greedy", seed=1)
    jobs = [{"id": f"u{i}", "due": 1e9, "weight": 0.01, "times": TIMES} for i in range(4)]
    r.submit(jobs, at=0.0)
    return r


def with_completed(k: int) -> Rescheduler:
    """The base Rescheduler with `k` completion records (written in format 2, then restored)."""
    r = base()
    if k == 0:
        return r
    r.tick(1.0)  # a completion comes after its start, at or before the clock
    state = r.state()
    if state.get("version") != 2:  # today's format: go through the format-2 layout
        try:  # the job fields formats 3 on added (a format-2 state holding one is refused)
            from gpuaas.rescheduler.migrations import ADDED

            later = {f for added in ADDED.values() for f in added.get("job", ())}
        except ImportError:  # a commit before the migrations module
            later = {"interruptions"}
        live, conf = state["live"], state["config"]
        run = conf["run"]
        state = {
            "version": 2,
            "catalog": conf["catalog"],
            "nodes": run["nodes"],
            "method": run["method"],
            "seed": run["seed"],
            "params": conf["params"],
            "overhead": run["overhead"],
            "startup": run["startup"],
            "solver_options": run["options"],
            "time": live["time"],
            "events": live["events"],
            "node_vm": [None] * run["nodes"],
            "node_ready": [0.0] * run["nodes"],
            "jobs": [{k: v for k, v in d.items() if k not in later} for d in live["jobs"]],
            "completed": [],
            **{k: live[k] for k in ("vm_cost", "tardiness_cost", "lost_work_cost", "startup_cost")},
            "migrations": live["migrations"],
            "preemptions": live["preemptions"],
        }
        for n in live["nodes"]:
            state["node_vm"][n["node"]] = n["vm"]
            state["node_ready"][n["node"]] = n["ready"]
    state["completed"] = [
        {
            "id": f"done{i}",
            "release": 0.0,
            "start": 0.0,
            "completion": 0.5,
            "due": 1.0,
            "weight": 0.01,
            "tardiness_cost": 0.0,
            "jct": 0.5,
            "waiting": 0.0,
            "running": 0.5,
            "migrations": 0,
            "preemptions": 0,
            "lost_work": 0.0,
        }
        for i in range(k)
    ]
    return Rescheduler.restore(json.loads(json.dumps(state)))


def save(r: Rescheduler, saved: int) -> int:
    """What a service writes after an event; returns the completion records saved so far."""
    if hasattr(r, "live_state"):
        json.dumps(r.live_state())
        new = r.completion_log(saved)
        json.dumps(new)
        return saved + len(new)
    json.dumps(r.state())
    return saved


def measure(k: int, repeat: int) -> dict[str, float]:
    r = with_completed(k)
    saved = len(r.completions())
    tick, both = [], []
    t = 3600.0
    for _ in range(repeat):
        c0 = time.process_time()
        r.tick(t)
        c1 = time.process_time()
        saved = save(r, saved)
        c2 = time.process_time()
        tick.append(c1 - c0)
        both.append(c2 - c0)
        t += 3600.0
    out = {"tick": statistics.median(tick), "tick+save": statistics.median(both)}
    state = r.state()
    out["state_bytes"] = len(json.dumps(state))
    if hasattr(r, "live_state"):
        out["live_bytes"] = len(json.dumps(r.live_state()))
        out["log_bytes"] = len(json.dumps(r.completion_log()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--completed", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    measure(0, 5)  # compile the kernels first
    rows = {k: measure(k, args.repeat) for k in (0, args.completed)}
    k = args.completed
    for what in ("tick", "tick+save"):
        a, b = rows[0][what], rows[k][what]
        print(
            f"{what:10s} 0 completed: {a * 1e3:.3f} ms   {k} completed: {b * 1e3:.3f} ms   ratio {b / a:.2f}"
        )
    for key in ("state_bytes", "live_bytes", "log_bytes"):
        if key in rows[k]:
            print(f"{key:11s} 0 completed: {rows[0][key]:,} B   {k} completed: {rows[k][key]:,} B")


if __name__ == "__main__":
    main()
