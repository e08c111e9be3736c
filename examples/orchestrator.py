"""A minimal orchestrator: feed events to a Rescheduler and apply each Plan to a small cloud.

The cloud (`Cloud`) is in memory: a VM takes `BOOT` seconds to become ready, a job runs on a
ready VM at its *true* speed (here 15 % slower than predicted, so progress reports matter), a
job stopped (preempted or migrated) resumes from a checkpoint `OVERHEAD` seconds old. The
orchestrator loop:

1. waits for the next thing that happens: a job arrives, a job finishes on the cloud, or the
   plan's `next_tick` comes;
2. tells the Rescheduler, as one batch of typed events with ids (`Submission`, `Completion`,
   `ProgressReport` of every running job as the cloud measures it, or a `Tick`);
3. applies the Plan: preempt and migrate away (stop), close and resize VMs, open VMs, start
   jobs (they run once their VM is ready).

It saves the Rescheduler's state as a service would (the static part once, the live part after
every event, the completion and id logs appended), restarts from it half-way, and redelivers the last
batch (same ids) to show that a redelivered event gets the same plan and changes nothing.

    python examples/orchestrator.py
"""

from __future__ import annotations

import heapq
import json

from gpuaas import Rescheduler
from gpuaas.rescheduler import STATE_VERSION, Completion, ProgressReport, Submission, Tick

BOOT = 120.0  # s a VM takes to become ready (the Rescheduler's `startup`)
OVERHEAD = 600.0  # s of work a stopped job redoes (the Rescheduler's `overhead`)
SLOWER = 1.15  # true time / predicted time of every job
CATALOG = "azure-2021"

JOBS = [  # (arrival s, job object of the instance format: whole-job times per VM and GPU count)
    (
        0.0,
        {
            "id": "resnet",
            "due": 30000.0,
            "weight": 0.01,
            "times": {
                "NC6": [36000.0],
                "NC12": [36000.0, 20000.0],
                "NC24": [36000.0, 20000.0, 14000.0, 11000.0],
            },
        },
    ),
    (
        600.0,
        {
            "id": "alexnet",
            "due": 9000.0,
            "weight": 0.012,
            "times": {"NC6": [9000.0], "NC12": [9000.0, 5000.0]},
        },
    ),
    (
        1800.0,
        {
            "id": "vgg",
            "due": 12000.0,
            "weight": 0.02,
            "times": {"NC6": [8000.0], "NC12": [8000.0, 4500.0]},
        },
    ),
    (
        7200.0,
        {
            "id": "lstm",
            "due": 20000.0,
            "weight": 0.005,
            "times": {"NC6": [6000.0], "NC12": [6000.0, 3500.0]},
        },
    ),
]


class Cloud:
    """VMs that boot in BOOT s; jobs that run at their true speed and lose OVERHEAD s when stopped."""

    def __init__(self, times: dict[str, dict[str, list[float]]]) -> None:
        self.times = times  # job id -> predicted times, as submitted
        self.vms: dict[int, tuple[str, float]] = {}  # node -> (VM type, ready at)
        self.jobs: dict[str, dict] = {}  # running job id -> node, seconds, progress, since
        self.progress: dict[str, float] = {}  # every job's true fraction done
        self.bill = 0.0

    def open(self, node: int, vm: str, at: float) -> None:
        self.vms[node] = (vm, at + BOOT)

    def close(self, node: int) -> None:
        del self.vms[node]

    def start(self, jid: str, node: int, vm: str, gpus: int, at: float) -> None:
        seconds = self.times[jid][vm][gpus - 1] * SLOWER
        self.jobs[jid] = {"node": node, "seconds": seconds, "since": at}
        self.progress.setdefault(jid, 0.0)

    def stop(self, jid: str) -> None:
        run = self.jobs.pop(jid)
        self.progress[jid] = max(0.0, self.progress[jid] - OVERHEAD / run["seconds"])

    def advance(self, at: float, prices: dict[str, float], since: float) -> None:
        """Run every job from `since` to `at` (once its VM is ready) and bill the VMs."""
        self.bill += sum(prices[vm] for vm, _ in self.vms.values()) * (at - since)
        for jid, run in self.jobs.items():
            begin = max(run["since"], self.vms[run["node"]][1], since)
            if at > begin:
                self.progress[jid] += (at - begin) / run["seconds"]

    def next_finish(self, now: float) -> tuple[float, str | None]:
        """When the first running job finishes, and which."""
        best = (float("inf"), None)
        for jid, run in self.jobs.items():
            begin = max(now, self.vms[run["node"]][1])
            best = min(best, (begin + (1.0 - self.progress[jid]) * run["seconds"], jid))
        return best


def apply(plan, cloud: Cloud, at: float) -> None:
    """Carry out a Plan, in its order: stop, close / resize, open, start."""
    for a in plan.preempt:
        cloud.stop(a.id)
    for a in plan.migrate:
        cloud.stop(a.id)
    for a in plan.close:
        cloud.close(a.node)
    for a in plan.resize:
        cloud.close(a.node)
        cloud.open(a.node, a.new, at)
    for a in plan.open:
        cloud.open(a.node, a.vm, at)
    for a in plan.start:
        cloud.start(a.id, a.node, a.vm, a.gpus, at)
    for a in plan.migrate:
        cloud.start(a.id, a.new.node, a.new.vm, a.new.gpus, at)


def main() -> dict:
    r = Rescheduler(CATALOG, nodes=2, seed=1, overhead=OVERHEAD, startup=BOOT)
    prices = {vm: float(c) for vm, c in zip(r.catalog.vm_names, r.catalog.cost)}
    cloud = Cloud({job["id"]: job["times"] for _, job in JOBS})
    arrivals = [(t, i, job) for i, (t, job) in enumerate(JOBS)]
    heapq.heapify(arrivals)
    # a service's store: the format version and the static part once
    saved = {"version": STATE_VERSION, "config": r.config_state(), "live": None}
    saved |= {"completed": [], "ids": []}
    clock, next_tick, k, last = 0.0, float("inf"), 0, None
    done: list[str] = []
    while arrivals or cloud.jobs or r.unfinished():
        finish, who = cloud.next_finish(clock)
        t = min(arrivals[0][0] if arrivals else float("inf"), finish, next_tick)
        cloud.advance(t, prices, clock)
        clock = t
        batch = []
        if who is not None and finish <= t:
            cloud.jobs.pop(who)
            batch.append(Completion(t, who, id=f"e{k}-done-{who}"))
            done.append(who)
        while arrivals and arrivals[0][0] <= t:
            _, _, job = heapq.heappop(arrivals)
            batch.append(Submission(t, job, id=f"e{k}-submit-{job['id']}"))
        batch += [
            ProgressReport(t, jid, min(cloud.progress[jid], 0.999), id=f"e{k}-progress-{jid}")
            for jid in cloud.jobs
        ]
        batch = batch or [Tick(t, id=f"e{k}-tick")]
        plan = r.handle(batch)
        apply(plan, cloud, t)
        next_tick, k, last = plan.next_tick, k + 1, (batch, plan)
        # what a service saves after every event: the live part, and the new completions
        saved["live"] = r.live_state()
        saved["completed"] += r.completion_log(len(saved["completed"]))
        saved["ids"] += r.id_log(len(saved["ids"]))
        if k == 6:  # the process restarts: continue from what was saved
            r = Rescheduler.restore(json.loads(json.dumps(saved)))
            print(f"restarted at t={r.time:g} s from the saved state")
    batch, plan = last
    before = json.dumps(r.state())
    again = r.handle(batch)  # the last batch delivered twice (same ids)
    same = again.to_dict() == plan.to_dict() and json.dumps(r.state()) == before
    print(f"redelivered batch: same plan, nothing changed: {same}")
    print(f"{len(done)} jobs done at t={clock / 3600:.2f} h: {', '.join(done)}")
    print(
        f"planned cost {r.vm_cost + r.tardiness_cost:.2f} $ (VM {r.vm_cost:.2f} $); cloud bill {cloud.bill:.2f} $"
    )
    return {"done": done, "same": same, "bill": cloud.bill, "vm_cost": r.vm_cost}


if __name__ == "__main__":
    main()
