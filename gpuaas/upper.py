"""An upper value of the optimum of a trace: the cheapest of several complete schedules.

`upper(trace)` simulates the runs of `PORTFOLIO` in order, every duration known (noise 0: the
actual durations are the predicted ones), while its time limit lasts, and keeps the cheapest.
Every run is a complete, feasible schedule of the trace on N nodes (the Rescheduler checks each
plan; its event log reconciles with its costs, `tests/eventlog.py`), billed with the run's
restart overhead and VM start-up, so no optimal schedule with those costs costs more: the
optimum lies between `gpuaas.bound` and `upper`.

`default_seeds=K` (`gpuaas bound --upper --default-seeds K`) also runs the default at seeds
1..K (after the portfolio): its randomized constructions draw differently per seed, and on the
generated high-load traces at 600 s restart its seeds 1-8 spread by 4-8 %, so more of them
lower the upper value (scripts/results/upper.md gives the rows run with K = 8).

What it is not: the optimum, nor a clairvoyant method. Each run decides online (it sees a job at
its release, its duration exactly); only the choice among runs is made in hindsight. A large
`upper / bound` therefore says that the bound, the methods, or both are short, not which.
Tried and not kept (issue 43; `scripts/clairvoyant_probe.py`, upper.md "Clairvoyant members,
tried"): the default run on the trace with due dates from the capacity LP's plan (each job's
completion there), and squeaky-wheel rounds moving late jobs' due dates earlier, both billed
at the true due dates: at the LP's automatic slot (9 h to a day on these traces) the capacity
rows do not bind, its plan is the per-job bound's and says nothing about when to run what
(0.998-1.77 x the default's cost); at 1-hour slots the LP has a million columns and HiGHS does
not finish in 300 s; the rounds are no cheaper than as many seeds. Not tried: a look-ahead
method (the methods plan every job of an Instance as released, and the Rescheduler refuses a
submission before its release) and a large-neighbourhood search over time windows (the MILP
models one rescheduling point, not a schedule over time).
"""

from __future__ import annotations

import io
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuaas import checks
from gpuaas.errors import InputError
from gpuaas.files import open_output
from gpuaas.instance import Instance

if TYPE_CHECKING:
    from gpuaas.simulation_result import SimulationResult

#: the runs tried, in order (method, seed): the default first (so `upper` is never above the
#: default's cost once it has run), then what finishes fast, then more seeds and slower methods
PORTFOLIO: tuple[tuple[str, int], ...] = (
    ("incremental", 1),
    ("greedy", 1),
    ("incremental", 2),
    ("randomized-greedy", 1),
    ("incremental", 3),
    ("path-relinking", 1),
)
#: seconds for the runs when no time limit is given (the first run always completes)
DEFAULT_TIME_LIMIT = 600.0


@dataclass
class Upper:
    """The upper value of one trace (`to_dict`: `gpuaas bound --upper --json`'s `upper_run`).

    `upper` is the cheapest run's total cost (VM + tardiness, restart and start-up included),
    `method` and `seed` name it, `runs` lists every run tried as (method, seed, total cost) in
    order, `log` is the cheapest run's event log (JSON lines) when asked for and `result` its
    `SimulationResult`.
    """

    upper: float
    method: str
    seed: int
    nodes: int
    overhead: float
    startup: float
    seconds: float
    runs: list[tuple[str, int, float]] = field(default_factory=list)
    log: str | None = None
    result: SimulationResult | None = field(default=None, repr=False)  # the cheapest run's

    def to_dict(self) -> dict[str, Any]:
        return {
            "upper": self.upper,
            "method": self.method,
            "seed": self.seed,
            "nodes": self.nodes,
            "overhead": self.overhead,
            "startup": self.startup,
            "seconds": self.seconds,
            "runs": [{"method": m, "seed": s, "total_cost": c} for m, s, c in self.runs],
        }

    def summary(self) -> str:
        tried = ", ".join(f"{m} seed {s}: {c:.4f}" for m, s, c in self.runs)
        return (
            f"upper         {self.upper:.4f} $  (a schedule on {self.nodes} nodes costs this: "
            f"{self.method} seed {self.seed}, the cheapest of {len(self.runs)} runs; "
            f"restart {self.overhead:g} s, start-up {self.startup:g} s)\n"
            f"runs          {tried}"
        )


def upper(
    trace: Instance,
    nodes: int | None = None,
    overhead: float | None = None,
    startup: float | None = None,
    time_limit: float | None = None,
    portfolio: tuple[tuple[str, int], ...] | None = None,
    log: bool = False,
    progress: Callable[[str], None] | None = None,
    default_seeds: int | None = None,
) -> Upper:
    """The cheapest run of `portfolio` on `trace` (module docstring).

    Parameters
    ----------
    trace : Instance
        All jobs with their releases (the simulator replays it from its first release).
    nodes : int, optional
        N; default the trace's.
    overhead, startup : float, optional
        Restart overhead and VM start-up (s) of every run (default: the simulator's, 600 and 120).
    time_limit : float, optional
        Seconds for the runs (default `DEFAULT_TIME_LIMIT`): a run starts only while time is
        left; the first always runs, and a run started is never cut short.
    portfolio : tuple of (method, seed), optional
        The runs, in order (default `PORTFOLIO`).
    log : bool
        Keep the cheapest run's event log (`Upper.log`).
    progress : callable, optional
        Called with each run's description.
    default_seeds : int, optional
        Also the default method at seeds 1 .. K: the ones `portfolio` lacks are appended to it,
        after its runs (so the time limit cuts them first). Off by default; see
        `scripts/results/upper.md` for what more seeds buy.

    Returns
    -------
    Upper
    """
    from gpuaas.methods import METHODS
    from gpuaas.simulator import Simulator

    t0 = _time.perf_counter()
    if not isinstance(trace, Instance):
        raise InputError(None, "trace", "must be an Instance (see gpuaas.load_instance)")
    checks.optional_number(time_limit, "time_limit", positive=True)
    portfolio = PORTFOLIO if portfolio is None else portfolio
    if default_seeds is not None:
        k = checks.integer(default_seeds, "default_seeds", minimum=1, maximum=1000)
        portfolio = tuple(portfolio) + extra_seeds(tuple(portfolio), k)
    if not portfolio:
        raise InputError(None, "portfolio", "must name at least one (method, seed) run")
    for method, _ in portfolio:
        if method not in METHODS:
            raise InputError(None, "portfolio", f"unknown method {method!r}")
    settings: dict[str, Any] = {"noise": 0.0}
    for name, value in (("nodes", nodes), ("overhead", overhead), ("startup", startup)):
        if value is not None:
            settings[name] = value
    say = progress or (lambda step: None)
    deadline = t0 + (DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit))
    best: Upper | None = None
    runs: list[tuple[str, int, float]] = []
    for method, seed in portfolio:
        if best is not None and _time.perf_counter() >= deadline:
            break
        say(f"upper: simulating {method} seed {seed}")
        sim = Simulator(trace, method, seed=seed, **settings)
        lines = io.StringIO() if log else None
        sim.log_lines = lines
        result = sim.run()
        sim.log_lines = None
        runs.append((method, seed, result.total_cost))
        if best is None or result.total_cost < best.upper:
            best = Upper(
                upper=result.total_cost,
                method=method,
                seed=seed,
                nodes=result.nodes,
                overhead=sim.config.overhead,
                startup=sim.config.startup,
                seconds=0.0,
                log=None if lines is None else lines.getvalue(),
                result=result,
            )
    assert best is not None  # the first run always runs
    best.runs = runs
    best.seconds = _time.perf_counter() - t0
    return best


def extra_seeds(portfolio: tuple[tuple[str, int], ...], k: int) -> tuple[tuple[str, int], ...]:
    """The runs of the default method at seeds 1 .. `k` that `portfolio` lacks, in seed order."""
    from gpuaas.methods import DEFAULT_METHOD

    have = set(portfolio)
    return tuple((DEFAULT_METHOD, s) for s in range(1, k + 1) if (DEFAULT_METHOD, s) not in have)


def write_log(result: Upper, path: str | Path) -> None:
    """Write the cheapest run's event log (`upper(..., log=True)`) to `path`."""
    if result.log is None:
        raise InputError(None, "log", "the upper value was computed without its event log")
    with open_output(Path(path)) as fh:
        fh.write(result.log)
