"""A cell: one simulation of an experiment, and the results row it becomes (`rows.COLUMNS`).

A cell names a trace (generated from its parameters, or a given one carried along), a method,
its seed and options, a node multiplier, the prediction error (level, model, or the method told
the actual times), the reconfiguration costs, the speed model and the disruption limits. `run_cell` simulates
it (`gpuaas.simulate`, with the lower bound of the trace on the simulated node count) and
flattens the result into one row; a cell that raises becomes a "failed" row, so that a campaign
goes on. Rows never depend on the process that ran them: only `rows.TIMING_COLUMNS` differ.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from gpuaas.experiments.rows import COLUMNS, PARAM_COLUMNS, SPOT_COLUMNS
from gpuaas.metrics import NAMES as JOB_METRICS
from gpuaas.noise import DEFAULT_NOISE_MODEL
from gpuaas.reconfiguration import DEFAULT_CHECKPOINT, DEFAULT_OVERHEAD, DEFAULT_STARTUP

_RESULT_KEYS = {
    "method",
    "seed",
    "nodes",
    "total_cost",
    "vm_cost",
    "tardiness_cost",
    "jobs",
    "events",
    "migrations",
    "preemptions",
    "solver_seconds",
    "wall_seconds",
    "cpu_seconds",
    "solver_cpu_seconds",
    "makespan",
    "noise",
    "overhead",
    "startup",
    "tick",
    "predicted",
    "prediction_error",
    "cost_deviation",
    "moves_per_job",
    "max_job_moves",
    "lost_work_cost",
    "startup_cost",
    "bound",
    "cost_over_bound",
    "bound_detail",
    "spot",
    "checkpoint",
    "notice",
    "interruptions",
    "interruptions_per_job",
    "interruption_cost",
    "interrupted_hours",
    "spot_cost",
    *JOB_METRICS,
}


@dataclass(frozen=True)
class Cell:
    """One simulation: a trace, a method, a seed, a node count, reconfiguration costs and spot
    capacity (`spot`: the availability source, None: on-demand only).

    A generated trace is named by (arrivals, nodes, jobs, trace_seed, catalog); a given trace by
    its file name `trace`, its Instance travelling with the cell in `instance` (so that remote
    workers need no file).
    """

    arrivals: str | None
    nodes: int  # N of the trace
    jobs: int  # J of the trace
    trace_seed: int | None
    method: str
    seed: int  # the solver's seed
    node_multiplier: int = 1  # the simulation runs with node_multiplier * nodes nodes
    noise: float = 0.0
    overhead: float = DEFAULT_OVERHEAD  # seconds of work lost per migration or preemption
    startup: float = DEFAULT_STARTUP  # seconds a VM opened or resized is billed before it works
    options: str = "{}"  # solver options, canonical JSON
    catalog: str = "azure-2021"
    trace: str | None = None  # a given trace's file name
    tick: float | None = None  # rescheduling interval; None: the method's own, else H
    noise_model: str = DEFAULT_NOISE_MODEL
    oracle: bool = False  # the method is told the actual durations
    learn_speed: bool = True
    max_moves: int | None = None  # voluntary moves per job
    moves_per_hour: int | None = None  # voluntary moves per hour
    spot: str | None = None  # the availability replayed (spot capacity on); None: on-demand only
    checkpoint: float = DEFAULT_CHECKPOINT  # s between the jobs' checkpoints
    notice: float | None = None  # s to write a checkpoint on an interruption notice
    instance: Any = field(default=None, compare=False, repr=False)  # a given trace
    # the bound of a given trace, computed once (`with_bounds`); False: none (the warm-up)
    bound: Any = field(default=None, compare=False, repr=False)

    @property
    def config(self) -> Any:
        """The cell's run configuration (`gpuaas.run_config.RunConfig`): its simulation runs
        with `node_multiplier` x `nodes` nodes; a spot model without its own seed is seeded by
        the trace's seed and the solver's (`availability_source`)."""
        from gpuaas.run_config import RunConfig

        return RunConfig(
            method=self.method,
            seed=self.seed,
            nodes=self.nodes * self.node_multiplier,
            overhead=self.overhead,
            startup=self.startup,
            tick=self.tick,
            noise=self.noise,
            noise_model=self.noise_model,
            oracle=self.oracle,
            learn_speed=self.learn_speed,
            max_moves=self.max_moves,
            moves_per_hour=self.moves_per_hour,
            options=json.loads(self.options),
            spot=self.spot is not None,
            availability=self.availability_source,
            checkpoint=self.checkpoint,
            notice=self.notice,
        )

    @property
    def availability_source(self) -> str | None:
        """The availability the simulation replays: `spot`, a model without a seed of its own
        seeded by (trace seed, solver seed), so that each trace of a campaign meets its own
        draw and every method on it the same one."""
        src = self.spot
        if src is None or not (src == "model" or src.startswith("model:")) or "seed=" in src:
            return src
        seed = (self.trace_seed or 0) * 1000 + self.seed
        return f"{src}{',' if ':' in src else ':'}seed={seed}"

    @property
    def key(self) -> str:
        """A readable identifier, unique within a campaign (the results file's `cell` column)."""
        if self.trace is not None:
            k = f"{Path(self.trace).stem}-{self.method}-s{self.seed}-x{self.node_multiplier}"
        else:
            k = (
                f"{self.arrivals}-N{self.nodes}-J{self.jobs}-t{self.trace_seed}-{self.method}"
                f"-s{self.seed}-x{self.node_multiplier}"
            )
        if self.noise:
            k += f"-noise{self.noise:g}"
            if self.noise_model != DEFAULT_NOISE_MODEL:
                k += f"-{self.noise_model}"
            if self.oracle:
                k += "-oracle"
        if not self.learn_speed:
            k += "-nolearn"
        if self.max_moves is not None:
            k += f"-moves{self.max_moves}"
        if self.moves_per_hour is not None:
            k += f"-mph{self.moves_per_hour}"
        if self.overhead:
            k += f"-ovh{self.overhead:g}"
        if self.startup:
            k += f"-up{self.startup:g}"
        if self.tick is not None:
            k += f"-tick{self.tick:g}"
        if self.options != "{}":
            k += "-o" + hashlib.sha1(self.options.encode()).hexdigest()[:8]
        if self.catalog != "azure-2021" and self.trace is None:
            k += f"-{self.catalog}"
        if self.spot is not None:
            k += "-spot" + (
                "" if self.spot == "model" else hashlib.sha1(self.spot.encode()).hexdigest()[:8]
            )
            if self.checkpoint != DEFAULT_CHECKPOINT:
                k += f"-ckpt{self.checkpoint:g}"
            if self.notice is not None:
                k += f"-notice{self.notice:g}"
        return k

    def params(self) -> dict[str, Any]:
        """The cell's parameter columns."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["cell"] = self.key
        d["sim_nodes"] = self.nodes * self.node_multiplier
        if self.spot is None:
            d["checkpoint"] = None  # only spot runs are interrupted
        return {c: d[c] for c in PARAM_COLUMNS}


def make_trace(cell: Cell) -> Any:
    """The cell's trace as an Instance: the given one, or the generated one (seeded: the same
    on every machine)."""
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance

    if cell.instance is not None:
        return cell.instance
    data = generate_trace(
        cell.nodes,
        jobs=cell.jobs,
        arrivals=cell.arrivals,
        seed=cell.trace_seed,
        catalog=cell.catalog,
    )
    return Instance.from_dict(data, f"generated trace {cell.key}")


def result_row(cell: Cell, result: dict[str, Any]) -> dict[str, Any]:
    """Flatten a simulation result (SimulationResult.to_dict()) into the cell's results row."""
    solver = result.get("solver_seconds") or {}
    predicted = result.get("predicted") or {}
    error = result.get("prediction_error") or {}
    # any other scalar is kept as JSON; one named for seconds is a measurement, not a result
    other = {
        k: v
        for k, v in result.items()
        if k not in _RESULT_KEYS and isinstance(v, int | float | str | bool)
    }
    extra = {k: v for k, v in other.items() if "seconds" not in k}
    timing = {k: v for k, v in other.items() if "seconds" in k}
    row = cell.params()
    row.update(
        {
            "status": "ok",
            "total_cost": float(result["total_cost"]),
            "vm_cost": float(result["vm_cost"]),
            "tardiness_cost": float(result["tardiness_cost"]),
            "events": int(result["events"]),
            "migrations": int(result["migrations"]),
            "preemptions": int(result["preemptions"]),
            "moves_per_job": result.get("moves_per_job"),
            "max_job_moves": result.get("max_job_moves"),
            "lost_work_cost": result.get("lost_work_cost"),
            "startup_cost": result.get("startup_cost"),
            **{k: result.get(k) for k in JOB_METRICS},  # gpuaas.metrics, in to_dict
            "makespan": result.get("makespan"),
            "solver_calls": solver.get("calls"),
            "tick": result.get("tick"),
            "predicted_total_cost": predicted.get("total_cost"),
            "predicted_vm_cost": predicted.get("vm_cost"),
            "predicted_tardiness_cost": predicted.get("tardiness_cost"),
            "cost_deviation": result.get("cost_deviation"),
            "prediction_error": error.get("mean_abs_error"),
            "off_by_2x": error.get("off_by_2x"),
            "bound": result.get("bound"),
            "cost_over_bound": result.get("cost_over_bound"),
            **{k: result.get(k) if cell.spot is not None else None for k in SPOT_COLUMNS},
            "error": None,
            "extra": json.dumps(extra, sort_keys=True) if extra else None,
            "solver_seconds_mean": solver.get("mean"),
            "solver_seconds_p95": solver.get("p95"),
            "solver_seconds_max": solver.get("max"),
            "solver_seconds_total": solver.get("total"),
            "wall_seconds": result.get("wall_seconds"),
            "cpu_seconds": result.get("cpu_seconds"),
            "solver_cpu_seconds": result.get("solver_cpu_seconds"),
            "timing_extra": json.dumps(timing, sort_keys=True) if timing else None,
        }
    )
    return {c: row.get(c) for c in COLUMNS}  # every column, in the schema's order


def failed_row(cell: Cell, error: str, seconds: float | None = None) -> dict[str, Any]:
    """The row of a cell whose simulation raised: its parameters, status "failed" and the error."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(cell.params())
    row.update(status="failed", error=error, cell_seconds=seconds, worker=_worker_name())
    return row


def _worker_name() -> str:
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


def simulate_cell(cell: Cell) -> dict[str, Any]:
    """Simulate the cell and return its results row; errors propagate (`gpuaas compare`)."""
    t0 = time.perf_counter()
    row = result_row(cell, cell_simulation(cell).to_dict())
    row["cell_seconds"] = time.perf_counter() - t0
    row["worker"] = _worker_name()
    return row


def cell_simulation(cell: Cell) -> Any:
    """The cell's `SimulationResult` (its trace generated, its bound attached; with noise, the
    run with exact predictions shared by the cells of every error on the trace, `_predicted`)."""
    from gpuaas.simulator import simulate

    trace = make_trace(cell)
    # no tick given: the simulator uses the method's own period (DP: 15 min) [§4.2.1]
    bound = cell.bound if cell.bound is not None else cell_bound(cell, trace)
    key = None
    if cell.noise and not cell.oracle:
        exact = replace(cell, noise=0.0, noise_model=DEFAULT_NOISE_MODEL, instance=None, bound=None)
        key = (exact.key, exact.trace)
    result = simulate(trace, config=cell.config, bound=bound, predicted=_predicted.get(key))
    if key is not None:
        if len(_predicted) >= 256:
            _predicted.clear()
        _predicted[key] = result.predicted
    return result


#: this process's costs of runs with exact predictions, by the exact cell's key (`cell_simulation`)
_predicted: dict[tuple[Any, ...], Any] = {}


def run_cell(cell: Cell) -> dict[str, Any]:
    """Generate the cell's trace, simulate it and return its results row; never raises.

    An exception inside the simulation becomes a row with status "failed" and the error, so a
    failing cell is recorded and the campaign goes on.
    """
    t0 = time.perf_counter()
    try:
        return simulate_cell(cell)
    except Exception as exc:  # noqa: BLE001 - a failing cell is data, not a crash
        return failed_row(cell, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)


_bounds: dict[tuple[Any, ...], Any] = {}  # this process's bounds by (trace, simulated nodes)


def _actual(cell: Cell) -> tuple[Any, ...]:
    """What the actual durations of a cell's trace depend on besides the trace (none without
    noise): the level, the model and the seed of the noise stream."""
    return (cell.noise, cell.noise_model, cell.seed) if cell.noise else ()


def _bound_of(cell: Cell, trace: Any, market: Any) -> Any:
    """`gpuaas.bound` of the cell's trace with its actual durations, on its simulated nodes
    (with spot, the spot-aware bound within the availability `market`)."""
    from gpuaas.noise import actual_trace, draw_factors
    from gpuaas.simulator import trace_bound

    if cell.noise:
        trace = actual_trace(trace, draw_factors(trace, cell.seed, cell.noise, cell.noise_model))
    return trace_bound(trace, cell.nodes * cell.node_multiplier, availability=market)


def cell_bound(cell: Cell, trace: Any) -> Any:
    """`gpuaas.bound` of the cell's generated trace (its actual durations) on its simulated
    node count (with spot, within the availability the simulation replays), computed once per
    process for all the methods and seeds that share them (a given trace's bound comes with
    its cells: `with_bounds`)."""
    from gpuaas.simulator import spot_availability

    market = None if cell.spot is None else spot_availability(trace, cell.config)
    if cell.instance is not None:
        return _bound_of(cell, trace, market)
    key = (
        cell.arrivals,
        cell.nodes,
        cell.jobs,
        cell.trace_seed,
        cell.catalog,
        cell.nodes * cell.node_multiplier,
        *_actual(cell),
        None if market is None else market.source,
    )
    if key not in _bounds:
        if len(_bounds) >= 64:
            _bounds.clear()
        _bounds[key] = _bound_of(cell, trace, market)
    return _bounds[key]


def with_bounds(cells: Iterable[Cell]) -> list[Cell]:
    """The cells, those over a given trace with its bound on their node count attached,
    computed here once per (trace, node count, actual durations, availability) instead of
    once per cell in the workers."""
    done: dict[tuple[Any, ...], Any] = {}
    out = []
    for c in cells:
        if c.instance is not None and c.bound is None:
            key = (str(c.trace), c.nodes * c.node_multiplier, *_actual(c), c.availability_source)
            if key not in done:
                done[key] = cell_bound(c, c.instance)
            c = replace(c, bound=done[key])
        out.append(c)
    return out


def warm_up(methods: Iterable[str] = (), numba_cache_dir: str | None = None) -> dict[str, Any]:
    """Load (or compile once) every numba kernel a campaign uses, before the first cell runs.

    Runs a tiny simulation per method so that cells measure solving, not compilation. With
    `numba_cache_dir` it first points numba at that directory (it must be set before gpuaas's
    kernels are imported, i.e. in a fresh worker). Returns what the worker uses, for the log.
    """
    if numba_cache_dir:
        os.environ["NUMBA_CACHE_DIR"] = str(numba_cache_dir)
        if "numba" in sys.modules:
            from numba.core import config

            config.reload_config()
    t0 = time.perf_counter()
    errors = {}
    for method in methods:
        cell = Cell("exponential", 1, 3, 0, method, 0, bound=False)  # kernels only, no bound LP
        row = run_cell(cell)
        if row["status"] != "ok":
            errors[method] = row["error"]
    from numba.core import config

    return {
        "worker": _worker_name(),
        "seconds": time.perf_counter() - t0,
        "numba_cache_dir": config.CACHE_DIR or "(next to the sources)",
        "errors": errors,
    }
