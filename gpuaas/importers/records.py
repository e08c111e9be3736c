"""The records every trace reader produces: `TraceJob` per job and the `ImportReport` counts."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)  # slots: a million rows of a public trace take a third of the memory
class TraceJob:
    """One job read from a trace, before it is timed on a catalog."""

    id: str
    submit: float  # s, in the trace's own clock
    gpus: int  # GPUs the trace's user requested (0: a CPU-only job, on GPU-less types)
    line: int  # line of the source file, for errors
    model: str | None = None  # with steps (or an anchoring duration): timed by the table
    steps: float | None = None
    duration: float | None = None  # measured run time on `gpus` GPUs of model `gpu`
    table_model: str | None = None  # the table's stand-in for `model` when it lacks that name
    changed: str | None = None  # how the reader altered the job (counted when it is kept)
    gpu: str | None = None
    due: float | None = None  # absolute, trace clock
    weight: float | None = None
    due_factor: float | None = None  # due = release + due_factor x fastest time (Gavel's SLO)
    work_column: str | None = None  # the column its times come from (default duration / steps)
    cpus: float = 0.0  # vCPUs it needs wherever it runs (docs/design.md); 0: none declared
    memory: float = 0.0  # GiB it needs wherever it runs
    workload: str | None = None  # its workload's name (a co-location table's, `gpuaas.colocation`)


@dataclass
class ImportReport:
    """What an import kept and dropped, for the CLI's summary line."""

    source: str
    read: int
    kept: int
    nodes: int
    offset: float  # trace time that became 0
    dropped: dict[str, int] = field(default_factory=dict)
    drawn_due: int = 0
    drawn_weight: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # kept jobs altered, by how

    def drop(self, reason: str, n: int = 1) -> None:
        if n:
            self.dropped[reason] = self.dropped.get(reason, 0) + n

    def change(self, how: str, n: int = 1) -> None:
        if n:
            self.changed[how] = self.changed.get(how, 0) + n

    def summary(self) -> str:
        parts = [f"{self.kept} of {self.read} jobs from {self.source}, N = {self.nodes}"]
        if self.dropped:
            parts.append(
                "dropped: " + ", ".join(f"{n} {r}" for r, n in sorted(self.dropped.items()))
            )
        if self.changed:
            parts.append(
                "changed: " + ", ".join(f"{n} {h}" for h, n in sorted(self.changed.items()))
            )
        parts.append(f"due dates drawn for {self.drawn_due}, weights for {self.drawn_weight}")
        return "; ".join(parts)
