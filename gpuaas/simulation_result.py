"""The result of one simulation: costs, per-job metrics and counters, with the run's configuration.

`SimulationResult.to_dict` is the result format of docs/design.md §10 (`gpuaas simulate --json`);
`summary` is the human text of `gpuaas simulate`; a campaign flattens `to_dict` into a results
row (`gpuaas.experiments.cell.result_row`). The simulation itself: `gpuaas.simulator`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuaas.metrics import job_metrics, summary_lines
from gpuaas.run_config import RunConfig

if TYPE_CHECKING:
    from gpuaas.bounds import Bound


@dataclass
class SimulationResult:
    """Costs, per-job metrics and counters of one simulation, with its `RunConfig` (`config`;
    `method`, `seed`, `nodes`, `noise`, ... read it). `to_dict` is the result format of
    docs/design.md §10.

    `jobs` holds, per job: id, release, start (first), completion, due, tardiness_cost,
    jct (completion - release), waiting (jct minus time running: queued time, including after
    preemptions), running, migrations, preemptions, lost_work (fraction lost to restart
    overhead, as a fraction of the actual work), interruptions and interrupted_work (VMs lost
    under it and the fraction of its work they cost, part of lost_work), interruption_delay
    (seconds its interruptions delayed it: `gpuaas.producers.Execution`) and, with noise drawn
    per job (the uniform and lognormal models), actual_factor (actual / predicted duration).
    `to_dict` adds the job metrics of `gpuaas.metrics` (deadline-miss rate, tardiness,
    lateness, JCT and waiting percentiles) and, with noise, the `prediction_error` drawn
    (`gpuaas.noise.error_summary`).
    """

    config: RunConfig  # the run's configuration (its `nodes` the simulated N)
    total_cost: float
    vm_cost: float
    tardiness_cost: float
    jobs: list[dict[str, Any]]
    events: int
    migrations: int
    preemptions: int
    solver_seconds: list[float]
    wall_seconds: float
    cpu_seconds: float = 0.0  # process CPU time of the run (robust to a shared machine's load)
    solver_cpu_seconds: float = 0.0  # CPU time inside the solve calls (method wrapper included)
    lost_work_cost: float = 0.0  # $ of work lost to restarts (included in vm_cost)
    startup_cost: float = 0.0  # $ of VMs billed while starting up (included in vm_cost)
    egress_cost: float = 0.0  # $ of jobs' data moved between locations (in total_cost)
    transfers: int = 0  # moves of a job's data between locations (`gpuaas.transfer`)
    interruptions: int = 0  # VMs lost under running jobs (involuntary moves, apart)
    interruption_cost: float = 0.0  # $ of work interruptions lost (part of lost_work_cost)
    spot_cost: float = 0.0  # $ billed for spot VMs (part of vm_cost)
    interrupted_hours: float = 0.0  # hours of the jobs' (actual) work interruptions lost
    spot: str | None = None  # the availability replayed (seeded); None: on-demand only
    tick: float = 3600.0  # the rescheduling interval used
    #: with noise: the costs of the predicted run (the same run with exact predictions)
    predicted: dict[str, float] | None = None
    #: where `predicted` came from: "simulated" (`gpuaas.simulator.predicted_costs`), "given" (a
    #: cached value passed to `simulate`); None: no predicted run (no noise, oracle, or skipped)
    predicted_run: str | None = None
    prediction_error: dict[str, Any] | None = None
    bound: Bound | None = None  # lower bound on any schedule's cost (gpuaas.bound), same nodes
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def method(self) -> str:
        return self.config.method

    @property
    def seed(self) -> int:
        return self.config.seed

    @property
    def nodes(self) -> int:
        return self.config.nodes if self.config.nodes is not None else 0

    @property
    def noise(self) -> float:
        return self.config.noise

    @property
    def overhead(self) -> float:
        return self.config.overhead

    @property
    def startup(self) -> float:
        return self.config.startup

    @property
    def checkpoint(self) -> float:
        return self.config.checkpoint

    @property
    def notice(self) -> float | None:
        return self.config.notice

    @property
    def moves_per_job(self) -> float:
        """Migrations plus preemptions per job."""
        return (self.migrations + self.preemptions) / max(1, len(self.jobs))

    @property
    def max_job_moves(self) -> int:
        """The most migrations plus preemptions of one job (what `max_moves` caps)."""
        return max((j["migrations"] + j["preemptions"] for j in self.jobs), default=0)

    @property
    def interruptions_per_job(self) -> float:
        """Jobs interrupted (a job on a VM lost counts once per VM) per job."""
        return self.interruptions / max(1, len(self.jobs))

    @property
    def interruption_tardiness_cost(self) -> float:
        """$ of tardiness attributed to interruptions (part of tardiness_cost): per job, its
        weight x min(its tardiness, the delay its interruptions caused: `interruption_delay`),
        summed. 0 without interruptions; at most tardiness_cost. The job would have been at
        most that much less late without them (had it not been moved or waited otherwise)."""
        return float(
            sum(
                min(j["tardiness_cost"], j["weight"] * j.get("interruption_delay", 0.0))
                for j in self.jobs
            )
        )

    @property
    def interruption_delay_hours(self) -> float:
        """Hours by which interruptions delayed the jobs, summed (`interruption_delay`)."""
        return sum(j.get("interruption_delay", 0.0) for j in self.jobs) / 3600.0

    @property
    def cost_over_bound(self) -> float | None:
        """total_cost / bound (>= 1 with noise 0); None without a bound or when it is 0."""
        if self.bound is None or self.bound.bound <= 0:
            return None
        return self.total_cost / self.bound.bound

    @property
    def makespan(self) -> float:
        """Completion time of the last job."""
        return max((j["completion"] for j in self.jobs), default=0.0)

    def solver_stats(self) -> dict[str, float]:
        """Solver seconds per rescheduling point: mean, p95, max, total (0 when never called)."""
        s = np.asarray(self.solver_seconds, dtype=np.float64)
        if not s.size:
            return {"mean": 0.0, "p95": 0.0, "max": 0.0, "total": 0.0, "calls": 0}
        return {
            "mean": float(s.mean()),
            "p95": float(np.percentile(s, 95)),
            "max": float(s.max()),
            "total": float(s.sum()),
            "calls": int(s.size),
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-able result (docs/design.md §10 keys plus seed, nodes, solver_seconds, wall_seconds)."""
        out: dict[str, Any] = {
            "method": self.method,
            "seed": self.seed,
            "nodes": self.nodes,
            "total_cost": self.total_cost,
            "vm_cost": self.vm_cost,
            "tardiness_cost": self.tardiness_cost,
            "events": self.events,
            "migrations": self.migrations,
            "preemptions": self.preemptions,
            "moves_per_job": self.moves_per_job,
            "max_job_moves": self.max_job_moves,
            "lost_work_cost": self.lost_work_cost,
            "startup_cost": self.startup_cost,
            "egress_cost": self.egress_cost,
            "transfers": self.transfers,
            "makespan": self.makespan,
            "spot": self.spot,
            "interruptions": self.interruptions,
            "interruptions_per_job": self.interruptions_per_job,
            "interruption_cost": self.interruption_cost,
            "interrupted_hours": self.interrupted_hours,
            "interruption_delay_hours": self.interruption_delay_hours,
            "interruption_tardiness_cost": self.interruption_tardiness_cost,
            "spot_cost": self.spot_cost,
            **job_metrics(self.jobs),
            "solver_seconds": self.solver_stats(),
            "wall_seconds": self.wall_seconds,
            "cpu_seconds": self.cpu_seconds,
            "solver_cpu_seconds": self.solver_cpu_seconds,
            "noise": self.noise,
            "overhead": self.overhead,
            "startup": self.startup,
            "checkpoint": self.checkpoint,
            "notice": self.notice,
            "deadline_safe": self.config.deadline_safe,
            "tick": self.tick,
            "decision_interval": self.config.decision_interval,
            "jobs": self.jobs,
        }
        if self.prediction_error is not None:
            out["prediction_error"] = self.prediction_error
        if self.predicted is not None:
            out["predicted"] = self.predicted
            out["predicted_run"] = self.predicted_run
            out["cost_deviation"] = (
                (self.total_cost - self.predicted["total_cost"]) / self.predicted["total_cost"]
                if self.predicted["total_cost"]
                else 0.0
            )
        if self.bound is not None:
            b = self.bound.to_dict()
            out["bound"] = b.pop("bound")
            out["cost_over_bound"] = self.cost_over_bound
            out["bound_detail"] = b
        out.update(self.extra)
        return out

    def summary(self) -> str:
        """A few human-readable lines."""
        s = self.solver_stats()
        lines = [
            f"method        {self.method} (seed {self.seed}, {self.nodes} nodes)",
            f"total cost    {self.total_cost:.4f} $  = VM {self.vm_cost:.4f} + tardiness {self.tardiness_cost:.4f}"
            + (f" + egress {self.egress_cost:.4f}" if self.transfers else ""),
            *summary_lines(job_metrics(self.jobs), self.makespan),
            (
                f"events        {self.events} ({self.migrations} migrations, {self.preemptions} preemptions, "
                f"{self.moves_per_job:.2f} moves per job)"
            ),
            (
                f"reconfiguring restart overhead {self.overhead:g} s, VM start-up {self.startup:g} s: "
                f"{self.lost_work_cost:.4f} $ of lost work, {self.startup_cost:.4f} $ of start-up"
            ),
            *(
                [
                    f"locations     {self.transfers} moves of data between locations, {self.egress_cost:.4f} $ of egress"
                ]
                if self.transfers
                else []
            ),
            *(
                [
                    f"spot          {self.spot_cost:.4f} $ of spot VMs ({self.spot}); "
                    f"{self.interruptions} interruptions ({self.interruptions_per_job:.2f} per "
                    f"job) lost {self.interrupted_hours:.2f} h of work, {self.interruption_cost:.4f} $",
                    f"              they delayed jobs {self.interruption_delay_hours:.2f} h: "
                    f"{self.interruption_tardiness_cost:.4f} $ of the tardiness cost",
                ]
                if self.spot is not None
                else []
            ),
            (
                f"solver        mean {s['mean'] * 1e3:.2f} ms, p95 {s['p95'] * 1e3:.2f} ms, "
                f"max {s['max'] * 1e3:.2f} ms, total {s['total']:.2f} s of {self.wall_seconds:.2f} s wall"
            ),
        ]
        if self.bound is not None:
            ratio = self.cost_over_bound
            lines.append(
                f"bound         {self.bound.bound:.4f} $  cost / bound = "
                + ("-" if ratio is None else f"{ratio:.4f}")
                + " ("
                + ("spot " if self.bound.kind == "spot" else "")
                + f"{self.bound.binding.replace('_', '-')} bound"
                + ("; for actual times" if self.noise > 0 else "")
                + ")"
            )
        e = self.prediction_error
        if e is not None:
            lines.append(
                f"prediction    {e['model']} error, level {e['level']:g}: mean |actual/predicted"
                f" - 1| {e['mean_abs_error']:.3f}, {100 * e['off_by_2x']:.1f} % off by 2x or more"
                + ("; the method was told the actual times" if e.get("oracle") else "")
            )
        if self.predicted is not None:
            dev = self.to_dict()["cost_deviation"]
            lines.append(
                f"predicted     {self.predicted['total_cost']:.4f} $ (noise {self.noise:g}): "
                f"actual deviates by {100 * dev:+.2f} %"
            )
        return "\n".join(lines)
