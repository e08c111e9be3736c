"""A cell: one simulation of an experiment, and the results row it becomes (`rows.COLUMNS`).

A cell names a trace (generated from its parameters, or a given one carried along), a run
configuration (`gpuaas.run_config.RunConfig`: the method, its seed and options, every run
setting) and a node multiplier. `run_cell` simulates
it (`gpuaas.simulate`, with the lower bound of the trace on the simulated node count) and
flattens the result into one row; a cell that raises becomes a "failed" row, so that a campaign
goes on. Rows never depend on the process that ran them: only `rows.TIMING_COLUMNS` differ.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gpuaas.experiments.rows import COLUMNS, PARAM_COLUMNS, SPOT_COLUMNS
from gpuaas.metrics import NAMES as JOB_METRICS
from gpuaas.noise import DEFAULT_NOISE_MODEL
from gpuaas.run_config import RunConfig, canonical_options, settings

_RESULT_KEYS = {
    "egress_cost",
    "transfers",
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
    "predicted_run",
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
    "deadline_safe",
    "interruptions",
    "interruptions_per_job",
    "interruption_cost",
    "interrupted_hours",
    "interruption_delay_hours",
    "interruption_tardiness_cost",
    "spot_cost",
    *JOB_METRICS,
}
#: the run settings (name -> Setting), in key order
SETTINGS = {name: s for name, _, s in settings()}
#: the catalog of a generated trace that its key does not name
DEFAULT_CATALOG = "azure-2021"


@dataclass(frozen=True)
class Cell:
    """One simulation: a trace and a run configuration (`run`) with a node multiplier.

    A generated trace is named by (arrivals, nodes, jobs, trace_seed, catalog); a given trace by
    its file name `trace`, its Instance travelling with the cell in `instance` (so that remote
    workers need no file). `run` is the run as the spec sets it: its `nodes` None (the
    simulation has `node_multiplier` x `nodes`), its `availability` the spec's source; `config`
    is the run simulated. The run's settings read as the cell's (`cell.method`, `cell.noise`).
    `Cell.of` builds one from the parameters of a results row.
    """

    arrivals: str | None
    nodes: int  # N of the trace
    jobs: int  # J of the trace
    trace_seed: int | None
    run: RunConfig
    node_multiplier: int = 1  # the simulation runs with node_multiplier * nodes nodes
    catalog: str = DEFAULT_CATALOG
    trace: str | None = None  # a given trace's file name
    instance: Any = field(default=None, compare=False, repr=False)  # a given trace
    # the bound of a given trace, computed once (`with_bounds`); False: none (the warm-up)
    bound: Any = field(default=None, compare=False, repr=False)
    # the upper value (`gpuaas.upper`): False none (default), True computed in the worker
    # (`cell_upper`), a number: given (`with_bounds`)
    upper: Any = field(default=False, compare=False, repr=False)

    def __hash__(self) -> int:  # a RunConfig's options (a dict) do not hash: the key does
        return hash(self.key)

    def __getattr__(self, name: str) -> Any:
        """A setting of the run (`RunConfig` field): `cell.method`, `cell.noise`, ..."""
        if name in SETTINGS and "run" in self.__dict__:
            return getattr(self.run, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def of(
        cls,
        arrivals: str | None,
        nodes: int,
        jobs: int,
        trace_seed: int | None,
        method: str,
        seed: int,
        node_multiplier: int = 1,
        *,
        catalog: str = DEFAULT_CATALOG,
        trace: str | None = None,
        instance: Any = None,
        bound: Any = None,
        spot: str | None = None,
        options: Mapping[str, Any] | str | None = None,
        **run: Any,
    ) -> Cell:
        """A cell from its parameters as a results row names them: `spot` the availability
        source (None: on-demand only), `options` a mapping or its JSON; the other settings are
        `RunConfig` fields."""
        if isinstance(options, str):
            options = json.loads(options)
        config = RunConfig(
            method=method,
            seed=seed,
            options=options or {},
            spot=spot is not None,
            availability=spot,
            **run,
        )
        return cls(
            arrivals,
            nodes,
            jobs,
            trace_seed,
            config,
            node_multiplier,
            catalog,
            trace,
            instance,
            bound,
        )

    @classmethod
    def from_params(cls, row: Mapping[str, Any], **given: Any) -> Cell:
        """The cell of a results row's parameter columns (an empty one, a column newer than
        the row's file, at its default; the settings without a column, the tick and the
        notice, from `given`, with the instance of a given trace)."""
        from gpuaas.experiments.rows import PARAM_COLUMNS

        params = {k: row.get(k) for k in PARAM_COLUMNS if k not in ("cell", "sim_nodes")}
        by_column = {s.column: name for name, s in SETTINGS.items() if s.column}
        run = {by_column[k]: params.pop(k) for k in list(params) if k in by_column}
        run = {k: v for k, v in run.items() if v is not None}  # empty: the default
        run["spot"] = run.pop("availability", None)
        return cls.of(**params, **run, **given)

    @property
    def sim_nodes(self) -> int:
        """The simulation's node count."""
        return self.nodes * self.node_multiplier

    @property
    def config(self) -> RunConfig:
        """The run simulated: `run` on `node_multiplier` x `nodes` nodes, a spot model without
        its own seed seeded by the trace's seed and the solver's (`availability_source`)."""
        return replace(self.run, nodes=self.sim_nodes, availability=self.availability_source)

    @property
    def availability_source(self) -> str | None:
        """The availability the simulation replays: the run's, a model without a seed of its
        own seeded by (trace seed, solver seed), so that each trace of a campaign meets its own
        draw and every method on it the same one."""
        src = self.run.availability
        if src is None or not (src == "model" or src.startswith("model:")) or "seed=" in src:
            return src
        seed = (self.trace_seed or 0) * 1000 + self.run.seed
        return f"{src}{',' if ':' in src else ':'}seed={seed}"

    @property
    def key(self) -> str:
        """A readable identifier, unique within a campaign (the results file's `cell` column):
        the trace, the method, its seed and multiplier, then each setting's part
        (`Setting.key`) in `RunConfig`'s order, the catalog of a generated trace after the
        options."""
        run = self.run
        if self.trace is not None:
            k = f"{Path(self.trace).stem}-{run.method}-s{run.seed}-x{self.node_multiplier}"
        else:
            k = (
                f"{self.arrivals}-N{self.nodes}-J{self.jobs}-t{self.trace_seed}-{run.method}"
                f"-s{run.seed}-x{self.node_multiplier}"
            )
        for name, s in SETTINGS.items():
            if s.needs is None or getattr(run, s.needs):
                k += s.key_part(getattr(run, name))
            if name == "options" and self.catalog != DEFAULT_CATALOG and self.trace is None:
                k += f"-{self.catalog}"
        return k

    def value(self, name: str) -> Any:
        """A setting's value as its results column holds it (None: the setting does not act)."""
        s = SETTINGS[name]
        if s.needs is not None and not getattr(self.run, s.needs):
            return None
        if name == "nodes":
            return self.sim_nodes
        if name == "options":
            return canonical_options(self.run.options)
        return getattr(self.run, name)

    def params(self) -> dict[str, Any]:
        """The cell's parameter columns."""
        d = {
            "cell": self.key,
            "trace": self.trace,
            "arrivals": self.arrivals,
            "nodes": self.nodes,
            "jobs": self.jobs,
            "trace_seed": self.trace_seed,
            "node_multiplier": self.node_multiplier,
            "catalog": self.catalog,
        }
        d.update({s.column: self.value(name) for name, s in SETTINGS.items() if s.column})
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
            "bound_kind": (result.get("bound_detail") or {}).get("kind"),
            **{k: result.get(k) if cell.run.spot else None for k in SPOT_COLUMNS},
            "egress_cost": result.get("egress_cost"),
            "transfers": result.get("transfers"),
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
    if cell.upper is not False:
        value = cell_upper(cell)
        row["upper"] = value
        row["cost_over_upper"] = None if not value else row["total_cost"] / value
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
        exact_run = replace(cell.run, noise=0.0, noise_model=DEFAULT_NOISE_MODEL)
        exact = replace(cell, run=exact_run, instance=None, bound=None)
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
    return trace_bound(
        trace,
        cell.sim_nodes,
        availability=market,
        overhead=cell.run.overhead,
        startup=cell.run.startup,
    )


def cell_bound(cell: Cell, trace: Any) -> Any:
    """`gpuaas.bound` of the cell's generated trace (its actual durations) on its simulated
    node count (with spot, within the availability the simulation replays), computed once per
    process for all the methods and seeds that share them (a given trace's bound comes with
    its cells: `with_bounds`)."""
    from gpuaas.simulator import spot_availability

    market = spot_availability(trace, cell.config) if cell.run.spot else None
    if cell.instance is not None:
        return _bound_of(cell, trace, market)
    key = (
        cell.arrivals,
        cell.nodes,
        cell.jobs,
        cell.trace_seed,
        cell.catalog,
        cell.sim_nodes,
        *_actual(cell),
        None if market is None else (market.source, cell.run.overhead, cell.run.startup),
    )
    return _memo(_bounds, key, lambda: _bound_of(cell, trace, market))


def _memo(
    cache: dict[tuple[Any, ...], Any], key: tuple[Any, ...], compute: Callable[[], Any]
) -> Any:
    """`cache[key]`, computed once; the cache is emptied beyond 64 entries (a process's
    bounds and upper values by trace)."""
    if key not in cache:
        if len(cache) >= 64:
            cache.clear()
        cache[key] = compute()
    return cache[key]


def with_bounds(cells: Iterable[Cell]) -> list[Cell]:
    """The cells, those over a given trace with its bound on their node count attached,
    computed here once per (trace, node count, actual durations, availability and, with
    spot, the restart costs) instead of once per cell in the workers; likewise its upper value
    when asked (`Cell.upper`)."""
    done: dict[tuple[Any, ...], Any] = {}
    uppers: dict[tuple[Any, ...], Any] = {}
    out = []
    for c in cells:
        if c.instance is not None and c.bound is None:
            key = (str(c.trace), c.sim_nodes, *_actual(c), c.availability_source)
            if c.run.spot:  # the spot bound charges the run's restarts (`gpuaas.bound`)
                key += (c.run.overhead, c.run.startup)
            if key not in done:
                done[key] = cell_bound(c, c.instance)
            c = replace(c, bound=done[key])
        if c.instance is not None and c.upper is True:
            key = (str(c.trace), c.sim_nodes, c.overhead, c.startup)
            if key not in uppers:
                uppers[key] = cell_upper(c)
            c = replace(c, upper=uppers[key])
        out.append(c)
    return out


_uppers: dict[tuple[Any, ...], Any] = {}  # this process's upper values (`cell_upper`)


def cell_upper(cell: Cell) -> float | None:
    """The upper value of the cell's trace (`gpuaas.upper`, default portfolio and time limit)
    on its simulated nodes with its restart overhead and start-up, computed once per process
    for the cells that share them; None with noise or spot (not defined there)."""
    if cell.upper is not True and cell.upper is not False:
        return cell.upper
    if cell.noise or cell.run.spot:
        return None
    from gpuaas.upper import upper

    key = (
        cell.trace,
        cell.arrivals,
        cell.nodes,
        cell.jobs,
        cell.trace_seed,
        cell.catalog,
        cell.sim_nodes,
        cell.overhead,
        cell.startup,
    )
    return _memo(
        _uppers,
        key,
        lambda: (
            upper(
                make_trace(cell), nodes=cell.sim_nodes, overhead=cell.overhead, startup=cell.startup
            ).upper
        ),
    )


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
        cell = Cell.of("exponential", 1, 3, 0, method, 0, bound=False)  # kernels only
        row = run_cell(cell)
        if row["status"] != "ok":
            errors[method] = row["error"]
    # the bound's kernels too (its per-job LP takes read-only arrays: a specialisation of its
    # own), called directly so that no run counts it as a trace's bound
    from gpuaas.bounds import bound
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance

    bound(Instance.from_dict(generate_trace(1, jobs=3, arrivals="exponential", seed=0)), nodes=1)
    from numba.core import config

    return {
        "worker": _worker_name(),
        "seconds": time.perf_counter() - t0,
        "numba_cache_dir": config.CACHE_DIR or "(next to the sources)",
        "errors": errors,
    }
