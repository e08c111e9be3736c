"""Campaigns: a YAML grid of simulations run locally or on a Dask cluster into one results file.

A spec (YAML) names node counts, arrival patterns, trace seeds, methods, node multipliers,
solver options and the job-count factor; `expand` turns it into independent `Cell`s. Each cell
generates its trace (seeded, so any machine builds the same one) and simulates it; `run_cell`
turns the simulation result into one flat row. `run_campaign` sends the cells that the results
file does not hold yet to a runner (a Dask cluster, local processes or this process), streams
each finished row to the file (so an interrupted campaign resumes where it stopped) and records
a failing cell with its error instead of stopping. Rows never depend on the runner: only the
timing columns (`TIMING_COLUMNS`) differ between two runs of the same spec.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gpuaas.errors import InputError
from gpuaas.files import check_output, open_output, read_yaml, write_atomic
from gpuaas.generator import ARRIVALS
from gpuaas.limits import MAX_JOBS, MAX_NODES, MAX_SECONDS, MAX_SEED, MAX_SIMULATIONS
from gpuaas.rescheduler import DEFAULT_OVERHEAD, DEFAULT_STARTUP

log = logging.getLogger(__name__)

_SPEC_FIELDS = {
    "name", "catalog", "nodes", "arrivals", "jobs_per_node", "seeds", "solver_seeds",
    "methods", "node_multipliers", "options", "noise", "overhead", "startup",
}  # fmt: skip

#: the cell's parameters, in grid order
PARAM_COLUMNS = [
    "cell", "arrivals", "nodes", "jobs", "trace_seed", "method", "seed", "node_multiplier",
    "sim_nodes", "noise", "overhead", "startup", "options", "catalog",
]  # fmt: skip
#: what the simulation measured (one number per column; `extra` holds any other scalar as JSON)
METRIC_COLUMNS = [
    "status", "total_cost", "vm_cost", "tardiness_cost", "events", "migrations", "preemptions",
    "moves_per_job", "lost_work_cost", "startup_cost",
    "jobs_completed", "late_jobs", "mean_jct", "max_jct", "mean_waiting", "max_waiting",
    "makespan", "solver_calls", "tick", "predicted_total_cost", "predicted_vm_cost",
    "predicted_tardiness_cost", "cost_deviation", "error", "extra", "bound", "cost_over_bound",
]  # fmt: skip
#: columns added since the first results files; files without them are still read (values None)
ADDED_COLUMNS = ["startup", "moves_per_job", "lost_work_cost", "startup_cost", "bound", "cost_over_bound"]
#: wall-clock measurements: they differ from run to run and between backends
TIMING_COLUMNS = [
    "solver_seconds_mean", "solver_seconds_p95", "solver_seconds_max", "solver_seconds_total",
    "wall_seconds", "cpu_seconds", "solver_cpu_seconds", "cell_seconds", "worker", "timing_extra",
]  # fmt: skip
COLUMNS = PARAM_COLUMNS + METRIC_COLUMNS + TIMING_COLUMNS
_LEGACY_COLUMNS = [c for c in COLUMNS if c not in ADDED_COLUMNS]

_INT_COLUMNS = {"nodes", "jobs", "trace_seed", "seed", "node_multiplier", "sim_nodes", "events",
                "migrations", "preemptions", "jobs_completed", "late_jobs", "solver_calls"}  # fmt: skip
_STR_COLUMNS = {"cell", "arrivals", "method", "options", "catalog", "status", "error", "extra",
                "worker", "timing_extra"}  # fmt: skip
_RESULT_KEYS = {"method", "seed", "nodes", "total_cost", "vm_cost", "tardiness_cost", "jobs",
                "events", "migrations", "preemptions", "solver_seconds", "wall_seconds",
                "cpu_seconds", "solver_cpu_seconds", "makespan", "noise", "overhead", "startup", "tick", "predicted",
                "cost_deviation", "moves_per_job", "lost_work_cost", "startup_cost", "bound", "cost_over_bound",
                "bound_detail"}  # fmt: skip


@dataclass(frozen=True)
class Cell:
    """One simulation of a campaign: a generated trace, a method, a seed and a node count."""

    arrivals: str
    nodes: int  # N of the generated trace
    jobs: int  # J of the generated trace
    trace_seed: int
    method: str
    seed: int  # the solver's seed
    node_multiplier: int = 1  # the simulation runs with node_multiplier * nodes nodes
    noise: float = 0.0
    overhead: float = DEFAULT_OVERHEAD  # seconds of work lost per migration or preemption
    startup: float = DEFAULT_STARTUP  # seconds a VM opened or resized is billed before it works
    options: str = "{}"  # solver options, canonical JSON
    catalog: str = "azure-2021"

    @property
    def key(self) -> str:
        """A readable identifier, unique within a campaign (the results file's `cell` column)."""
        k = (f"{self.arrivals}-N{self.nodes}-J{self.jobs}-t{self.trace_seed}-{self.method}"
             f"-s{self.seed}-x{self.node_multiplier}")  # fmt: skip
        if self.noise:
            k += f"-noise{self.noise:g}"
        if self.overhead:
            k += f"-ovh{self.overhead:g}"
        if self.startup:
            k += f"-up{self.startup:g}"
        if self.options != "{}":
            k += "-o" + hashlib.sha1(self.options.encode()).hexdigest()[:8]
        if self.catalog != "azure-2021":
            k += f"-{self.catalog}"
        return k

    def params(self) -> dict[str, Any]:
        """The cell's parameter columns."""
        d = asdict(self)
        d["cell"] = self.key
        d["sim_nodes"] = self.nodes * self.node_multiplier
        return {c: d[c] for c in PARAM_COLUMNS}


@dataclass(frozen=True)
class CampaignSpec:
    """A parsed, checked campaign spec: the grid that `expand` turns into cells.

    Attributes
    ----------
    name : str
        Campaign name (defaults to the spec file's stem).
    nodes : tuple of int
        Node counts N of the generated traces.
    arrivals : tuple of str
        Arrival patterns ("exponential", "high", "low", "mixed").
    jobs_per_node : float
        Job-count factor: each trace has J = round(jobs_per_node * N) jobs (paper: 10).
    seeds : tuple of int
        Trace seeds: one generated trace per seed and scenario.
    solver_seeds : tuple of int or None
        Solver seeds simulated on every trace; None means the trace's own seed.
    methods : tuple of str
        Registered method names.
    node_multipliers : dict
        Method -> multipliers m (the method is simulated with m * N nodes); default (1,).
    options : dict
        Method -> solver options passed to `simulate` (canonical JSON per cell).
    noise : tuple of float
        Prediction-error levels (mean absolute relative error of actual durations).
    overhead, startup : tuple of float
        Reconfiguration costs simulated (seconds of work lost per migration or preemption;
        seconds a VM opened or resized is billed before it works): grid axes, default the
        package's defaults; 0 and 0 is the paper's setting.
    catalog : str
        Catalog name.
    """

    name: str
    nodes: tuple[int, ...]
    arrivals: tuple[str, ...]
    jobs_per_node: float
    seeds: tuple[int, ...]
    solver_seeds: tuple[int, ...] | None
    methods: tuple[str, ...]
    node_multipliers: dict[str, tuple[int, ...]]
    options: dict[str, dict[str, Any]]
    noise: tuple[float, ...] = (0.0,)
    overhead: tuple[float, ...] = (DEFAULT_OVERHEAD,)
    startup: tuple[float, ...] = (DEFAULT_STARTUP,)
    catalog: str = "azure-2021"


def _int_list(value: Any, source: str | None, field: str, minimum: int,
              maximum: int) -> tuple[int, ...]:  # fmt: skip
    """Parse 3, [1, 2, 5], "1-10" or "1,3,5-7" into a tuple of distinct ints in [minimum,
    maximum] (at most MAX_SIMULATIONS of them)."""
    items: list[Any]
    if isinstance(value, bool):
        raise InputError(source, field, f"expected integers, got {value!r}")
    if isinstance(value, int):
        items = [value]
    elif isinstance(value, str):
        items = []
        for part in value.split(","):
            lo, sep, hi = part.strip().partition("-")
            try:
                a, b = int(lo), int(hi) if sep else int(lo)
            except ValueError:
                raise InputError(source, field, f"cannot read range {part.strip()!r}") from None
            if b < a:
                raise InputError(source, field, f"empty range {part.strip()!r}")
            if b > maximum or len(items) + b - a + 1 > MAX_SIMULATIONS:
                raise InputError(source, field, f"range {part.strip()!r} goes beyond {maximum} or "
                                 f"lists more than {MAX_SIMULATIONS} values (gpuaas.limits)")  # fmt: skip
            items.extend(range(a, b + 1))
    elif isinstance(value, list):
        items = value
    else:
        raise InputError(source, field, f"expected an integer, a list or a range like '1-10', got {value!r}")
    out: list[int] = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, int):
            raise InputError(source, field, f"expected integers, got {v!r}")
        if v < minimum:
            raise InputError(source, field, f"{v} is below the minimum {minimum}")
        if v > maximum:
            raise InputError(source, field, f"{v} is above the maximum {maximum} (gpuaas.limits)")
        if v in out:
            raise InputError(source, field, f"{v} is listed twice")
        out.append(v)
    if not out:
        raise InputError(source, field, "is empty")
    return tuple(out)


def _str_list(value: Any, source: str | None, field: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(v, str) for v in items):
        raise InputError(source, field, f"expected a non-empty list of names, got {value!r}")
    if len(set(items)) != len(items):
        raise InputError(source, field, "a name is listed twice")
    return tuple(items)


def parse_spec(data: Any, source: str | None = None) -> CampaignSpec:
    """Check a campaign spec (the parsed YAML mapping) and return it as a `CampaignSpec`.

    Parameters
    ----------
    data : dict
        The spec: ``nodes``, ``arrivals``, ``seeds``, ``methods`` (required); ``jobs_per_node``
        (10), ``solver_seeds``, ``node_multipliers`` (a list for every method or a mapping
        method -> list), ``options`` (method -> solver options), ``noise`` (list),
        ``overhead`` (s), ``catalog``, ``name``.
    source : str, optional
        File name used in error messages.

    Raises
    ------
    InputError
        Naming the field and the problem (unknown field, unknown method or arrival pattern,
        bad range, ...).
    """
    from gpuaas.catalog import load_catalog
    from gpuaas.methods import METHODS, check_options

    if not isinstance(data, dict):
        raise InputError(source, None, "a campaign spec must be a YAML mapping")
    unknown = sorted(set(data) - _SPEC_FIELDS)
    if unknown:
        raise InputError(source, unknown[0], f"unknown field; expected one of {', '.join(sorted(_SPEC_FIELDS))}")
    for req in ("nodes", "arrivals", "seeds", "methods"):
        if req not in data:
            raise InputError(source, req, "missing required field")
    nodes = _int_list(data["nodes"], source, "nodes", 1, MAX_NODES)
    arrivals = _str_list(data["arrivals"], source, "arrivals")
    for a in arrivals:
        if a not in ARRIVALS:
            raise InputError(source, "arrivals", f"unknown arrival pattern {a!r}; expected one of {', '.join(ARRIVALS)}")
    methods = _str_list(data["methods"], source, "methods")
    for m in methods:
        if m not in METHODS:
            raise InputError(source, "methods", f"unknown method {m!r}; available: {', '.join(METHODS)}")
    jpn = data.get("jobs_per_node", 10)
    if isinstance(jpn, bool) or not isinstance(jpn, int | float) or not math.isfinite(jpn) or jpn <= 0:
        raise InputError(source, "jobs_per_node", f"expected a positive number, got {jpn!r}")
    if jpn * max(nodes) > MAX_JOBS:
        raise InputError(source, "jobs_per_node", f"{jpn:g} x {max(nodes)} nodes is more than "
                         f"{MAX_JOBS} jobs (gpuaas.limits)")  # fmt: skip
    seeds = _int_list(data["seeds"], source, "seeds", 0, MAX_SEED)
    solver_seeds = None
    if data.get("solver_seeds") is not None:
        solver_seeds = _int_list(data["solver_seeds"], source, "solver_seeds", 0, MAX_SEED)
    mult_raw = data.get("node_multipliers", [1])
    multipliers: dict[str, tuple[int, ...]] = {}
    if isinstance(mult_raw, dict):
        for m, v in mult_raw.items():
            if m not in methods:
                raise InputError(source, f"node_multipliers.{m}", "not one of the spec's methods")
            multipliers[m] = _int_list(v, source, f"node_multipliers.{m}", 1, MAX_NODES // max(nodes))
    else:
        every = _int_list(mult_raw, source, "node_multipliers", 1, MAX_NODES // max(nodes))
        multipliers = {m: every for m in methods}
    options_raw = data.get("options") or {}
    if not isinstance(options_raw, dict):
        raise InputError(source, "options", "expected a mapping method -> solver options")
    options: dict[str, dict[str, Any]] = {}
    for m, o in options_raw.items():
        if m not in methods:
            raise InputError(source, f"options.{m}", "not one of the spec's methods")
        if not isinstance(o, dict):
            raise InputError(source, f"options.{m}", f"expected a mapping of solver options, got {o!r}")
        try:
            json.dumps(o)
        except TypeError as exc:
            raise InputError(source, f"options.{m}", f"not JSON-serialisable: {exc}") from None
        try:
            check_options(m, o)
        except InputError as exc:
            raise InputError(source, f"options.{m}", exc.problem) from None
        options[m] = o
    noise_list = _number_list(data.get("noise", [0.0]), source, "noise", "numbers in [0, 0.5)", 0.5, True)
    overhead = _number_list(data.get("overhead", DEFAULT_OVERHEAD), source, "overhead", "numbers of seconds",
                            MAX_SECONDS)  # fmt: skip
    startup = _number_list(data.get("startup", DEFAULT_STARTUP), source, "startup", "numbers of seconds",
                           MAX_SECONDS)  # fmt: skip
    catalog = data.get("catalog", "azure-2021")
    if not isinstance(catalog, str):
        raise InputError(source, "catalog", "a campaign names a bundled catalog or a catalog YAML file")
    load_catalog(catalog, source)
    per_trace = sum(len(multipliers.get(m, (1,))) for m in methods) * len(solver_seeds or (1,))
    cells = len(arrivals) * len(nodes) * len(seeds) * len(noise_list) * per_trace
    if cells > MAX_SIMULATIONS:
        raise InputError(source, None, f"the grid has {cells} simulations; at most {MAX_SIMULATIONS} (gpuaas.limits)")
    name = data.get("name") or (Path(source).stem if source else "campaign")
    return CampaignSpec(
        name=str(name), nodes=nodes, arrivals=arrivals, jobs_per_node=float(jpn), seeds=seeds,
        solver_seeds=solver_seeds, methods=methods,
        node_multipliers={m: multipliers.get(m, (1,)) for m in methods}, options=options,
        noise=noise_list or (0.0,), overhead=overhead or (DEFAULT_OVERHEAD,),
        startup=startup or (DEFAULT_STARTUP,), catalog=catalog,
    )  # fmt: skip


def _number_list(value: Any, source: str | None, field: str, what: str, high: float,
                 high_open: bool = False) -> tuple[float, ...]:  # fmt: skip
    """A number in [0, high] ([0, high) with `high_open`) or a list of them, as floats."""
    values = value if isinstance(value, list) else [value]
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= high \
                or (high_open and v == high):
            raise InputError(source, field, f"expected non-negative {what}, got {v!r}")
    return tuple(float(v) for v in values)


def load_spec(path: str | Path) -> CampaignSpec:
    """Read and check a campaign spec YAML file (errors name the file and the field)."""
    return parse_spec(read_yaml(path), str(path))


def expand(spec: CampaignSpec) -> list[Cell]:
    """The spec's grid as a list of independent cells, in a fixed (grid) order."""
    cells = []
    for arrivals in spec.arrivals:
        for n in spec.nodes:
            jobs = max(1, round(spec.jobs_per_node * n))
            for trace_seed in spec.seeds:
                for method in spec.methods:
                    opts = json.dumps(spec.options.get(method, {}), sort_keys=True)
                    seeds = spec.solver_seeds or (trace_seed,)
                    if _method_attr("seed_independent", method, False):
                        seeds = seeds[:1]  # the same result for every seed: simulate it once
                    for mult in spec.node_multipliers[method]:
                        for seed, noise, ovh, up in itertools.product(seeds, spec.noise, spec.overhead,
                                                                      spec.startup):
                            cells.append(Cell(arrivals, n, jobs, trace_seed, method, seed, mult,
                                              noise, ovh, up, opts, spec.catalog))  # fmt: skip
    return cells


# ---------------------------------------------------------------------------------------------
# one cell


def _method_attr(name: str, method: str, default: Any) -> Any:
    """methods.<name>(method) where the registry has that helper, else `default`."""
    from gpuaas import methods

    fn = getattr(methods, name, None)
    return default if fn is None else fn(method)


def make_trace(cell: Cell) -> Any:
    """The cell's generated trace as an Instance (seeded: the same on every machine)."""
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance

    data = generate_trace(cell.nodes, jobs=cell.jobs, arrivals=cell.arrivals, seed=cell.trace_seed,
                          catalog=cell.catalog)  # fmt: skip
    return Instance.from_dict(data, f"generated trace {cell.key}")


def result_row(cell: Cell, result: dict[str, Any]) -> dict[str, Any]:
    """Flatten a simulation result (SimulationResult.to_dict()) into the cell's results row."""
    jobs = result.get("jobs") or []
    jct = [j["jct"] for j in jobs if j.get("jct") is not None]
    wait = [j["waiting"] for j in jobs if j.get("waiting") is not None]
    solver = result.get("solver_seconds") or {}
    predicted = result.get("predicted") or {}
    # any other scalar is kept as JSON; one named for seconds is a measurement, not a result
    other = {k: v for k, v in result.items()
             if k not in _RESULT_KEYS and isinstance(v, int | float | str | bool)}  # fmt: skip
    extra = {k: v for k, v in other.items() if "seconds" not in k}
    timing = {k: v for k, v in other.items() if "seconds" in k}
    row = cell.params()
    row.update({
        "status": "ok",
        "total_cost": float(result["total_cost"]),
        "vm_cost": float(result["vm_cost"]),
        "tardiness_cost": float(result["tardiness_cost"]),
        "events": int(result["events"]),
        "migrations": int(result["migrations"]),
        "preemptions": int(result["preemptions"]),
        "moves_per_job": result.get("moves_per_job"),
        "lost_work_cost": result.get("lost_work_cost"),
        "startup_cost": result.get("startup_cost"),
        "jobs_completed": sum(1 for j in jobs if j.get("completion") is not None),
        "late_jobs": sum(1 for j in jobs if (j.get("tardiness_cost") or 0.0) > 0.0),
        "mean_jct": sum(jct) / len(jct) if jct else None,
        "max_jct": max(jct) if jct else None,
        "mean_waiting": sum(wait) / len(wait) if wait else None,
        "max_waiting": max(wait) if wait else None,
        "makespan": result.get("makespan"),
        "solver_calls": solver.get("calls"),
        "tick": result.get("tick"),
        "predicted_total_cost": predicted.get("total_cost"),
        "predicted_vm_cost": predicted.get("vm_cost"),
        "predicted_tardiness_cost": predicted.get("tardiness_cost"),
        "cost_deviation": result.get("cost_deviation"),
        "bound": result.get("bound"),
        "cost_over_bound": result.get("cost_over_bound"),
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
    })  # fmt: skip
    return row


def failed_row(cell: Cell, error: str, seconds: float | None = None) -> dict[str, Any]:
    """The row of a cell whose simulation raised: its parameters, status "failed" and the error."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(cell.params())
    row.update(status="failed", error=error, cell_seconds=seconds, worker=_worker_name())
    return row


def _worker_name() -> str:
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


def run_cell(cell: Cell) -> dict[str, Any]:
    """Generate the cell's trace, simulate it and return its results row; never raises.

    An exception inside the simulation becomes a row with status "failed" and the error, so a
    failing cell is recorded and the campaign goes on.
    """
    t0 = time.perf_counter()
    try:
        from gpuaas.simulator import simulate

        trace = make_trace(cell)
        # no tick given: the simulator uses the method's own period (DP: 15 min) [§4.2.1]
        result = simulate(trace, cell.method, seed=cell.seed, nodes=cell.nodes * cell.node_multiplier,
                          noise=cell.noise, overhead=cell.overhead, startup=cell.startup,
                          bound=cell_bound(cell, trace),
                          **json.loads(cell.options))  # fmt: skip
        row = result_row(cell, result.to_dict())
    except Exception as exc:  # noqa: BLE001 - a failing cell is data, not a crash
        return failed_row(cell, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0)
    row["cell_seconds"] = time.perf_counter() - t0
    row["worker"] = _worker_name()
    return row


_bounds: dict[tuple[Any, ...], Any] = {}  # this process's bounds by (trace, simulated nodes)


def cell_bound(cell: Cell, trace: Any) -> Any:
    """`gpuaas.bound` of the cell's trace on its simulated node count, computed once per
    process for all the methods and seeds that share them."""
    from gpuaas.simulator import trace_bound

    key = (cell.arrivals, cell.nodes, cell.jobs, cell.trace_seed, cell.catalog, cell.nodes * cell.node_multiplier)
    if key not in _bounds:
        if len(_bounds) >= 64:
            _bounds.clear()
        _bounds[key] = trace_bound(trace, key[-1])
    return _bounds[key]


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
        cell = Cell("exponential", 1, 3, 0, method, 0)
        row = run_cell(cell)
        if row["status"] != "ok":
            errors[method] = row["error"]
    from numba.core import config

    return {"worker": _worker_name(), "seconds": time.perf_counter() - t0,
            "numba_cache_dir": config.CACHE_DIR or "(next to the sources)", "errors": errors}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# the results file


def _format(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(float(value))  # numpy floats are floats whose repr names the type
    return str(value)


def _parse(column: str, text: str) -> Any:
    if text == "":
        return None
    if column in _STR_COLUMNS:
        return text
    if column in _INT_COLUMNS:
        return int(text)
    return float(text)


def _read_csv(path: Path) -> list[dict[str, Any]]:
    """Rows of a campaign CSV, typed; a last line cut by a crash is dropped (and cut from the file)."""
    with open(path, newline="") as fh:
        text = fh.read()
    if not text:
        return []
    if not text.endswith("\n"):
        cut = text.rfind("\n") + 1
        log.warning("%s: dropping an incomplete last line (interrupted write)", path)
        text = text[:cut]
        with open(path, "r+") as fh:
            fh.truncate(cut)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        return []
    if header not in (COLUMNS, _LEGACY_COLUMNS):
        missing = [c for c in COLUMNS if c not in header]
        raise InputError(str(path), None, "not a results file of this gpuaas version (columns differ"
                         + (f", missing {', '.join(missing)}" if missing else "") + "); write to a new file")  # fmt: skip
    rows = []
    for i, rec in enumerate(reader, start=2):
        if len(rec) != len(header):
            raise InputError(str(path), f"line {i}", f"expected {len(header)} fields, found {len(rec)}")
        try:
            rows.append(dict.fromkeys(COLUMNS) | {c: _parse(c, v) for c, v in zip(header, rec)})
        except ValueError as exc:
            raise InputError(str(path), f"line {i}", f"cannot read a value: {exc}") from None
    return rows


def _csv_header(path: Path) -> list[str]:
    with open(path, newline="") as fh:
        return next(csv.reader(fh), [])


def _csv_line(row: dict[str, Any]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([_format(row.get(c)) for c in COLUMNS])
    return buf.getvalue()


def _write_csv_atomic(path: Path, rows: list[dict[str, Any]]) -> None:
    write_atomic(path, _csv_line(dict(zip(COLUMNS, COLUMNS))) + "".join(_csv_line(r) for r in rows))


def _have_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


class ResultStore:
    """One results file (CSV, or Parquet when asked and pyarrow is present), appended row by row.

    CSV rows are appended and flushed as cells finish. Parquet files cannot be appended to, so
    rows stream into a CSV journal beside them (``<file>.partial.csv``) and `finalize` writes the
    Parquet file; a resumed campaign reads both.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.parquet = self.path.suffix.lower() == ".parquet"
        if self.parquet and not _have_pyarrow():
            raise InputError(str(path), None, "writing Parquet needs pyarrow (pip install 'gpuaas[parquet]'); or use a .csv file")
        check_output(self.path, stream_ok=False)  # the file is read back to resume
        self.journal = self.path.with_name(self.path.name + ".partial.csv") if self.parquet else self.path
        self._fh: Any = None

    def load(self) -> list[dict[str, Any]]:
        """Every row already in the file (and the journal)."""
        rows = []
        if self.parquet and self.path.exists():
            rows.extend(read_results(self.path))
        if self.journal.exists():
            journal = _read_csv(self.journal)
            if journal and _csv_header(self.journal) != COLUMNS:  # a file of an older version:
                _write_csv_atomic(self.journal, journal)  # rows appended next need its columns
            rows.extend(journal)
        return rows

    def drop(self, keep: Callable[[dict[str, Any]], bool]) -> int:
        """Rewrite the file without the rows `keep` rejects; returns how many were dropped."""
        rows = self.load()
        kept = [r for r in rows if keep(r)]
        if len(kept) != len(rows):
            self._rewrite(kept)
        return len(rows) - len(kept)

    def append(self, row: dict[str, Any]) -> None:
        """Write one row and flush it, so a crash loses at most the cell being written."""
        if self._fh is None:
            new = not self.journal.exists() or self.journal.stat().st_size == 0
            self._fh = open(self.journal, "a", newline="")  # noqa: SIM115 - kept open across appends
            if new:
                self._fh.write(_csv_line(dict(zip(COLUMNS, COLUMNS))))
        self._fh.write(_csv_line(row))
        self._fh.flush()

    def close(self) -> None:
        """Close the file (rows already written stay)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def finalize(self, order: list[str]) -> list[dict[str, Any]]:
        """Rewrite the rows in grid order (the cells of `order` first) and return them.

        Two runs of the same spec then give files that differ only in the timing columns.
        """
        self.close()
        rows = self.load()
        rank = {k: i for i, k in enumerate(order)}
        rows.sort(key=lambda r: (rank.get(r["cell"], len(rank)), r["cell"]))
        self._rewrite(rows)
        return rows

    def _rewrite(self, rows: list[dict[str, Any]]) -> None:
        self.close()
        if self.parquet:
            _write_parquet(self.path, rows)
            if self.journal.exists():
                self.journal.unlink()
        else:
            _write_csv_atomic(self.path, rows)


def _arrow_schema() -> Any:
    import pyarrow as pa

    def kind(c: str) -> Any:
        return pa.int64() if c in _INT_COLUMNS else pa.string() if c in _STR_COLUMNS else pa.float64()

    return pa.schema([(c, kind(c)) for c in COLUMNS])


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as a Parquet file (typed columns, missing values null) through `open_output`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist([{c: r.get(c) for c in COLUMNS} for r in rows], schema=_arrow_schema())
    with open_output(path, binary=True) as fh:
        pq.write_table(table, fh)


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a campaign results file (CSV or Parquet) as typed dicts (missing = None)."""
    path = Path(path)
    if not path.exists():
        raise InputError(str(path), None, "no such results file")
    if path.suffix.lower() != ".parquet":
        return _read_csv(path)
    if not _have_pyarrow():
        raise InputError(str(path), None, "reading Parquet needs pyarrow (pip install 'gpuaas[parquet]')")
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise InputError(str(path), None, f"not a readable Parquet file: {exc}") from None
    if table.column_names not in (COLUMNS, _LEGACY_COLUMNS):
        raise InputError(str(path), None, "not a results file of this gpuaas version (columns differ)")
    return [dict.fromkeys(COLUMNS) | r for r in table.to_pylist()]


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows without their timing columns, sorted by cell: equal for equal campaigns on any backend."""
    out = [{c: r[c] for c in COLUMNS if c not in TIMING_COLUMNS} for r in rows]
    return sorted(out, key=lambda r: r["cell"])


# ---------------------------------------------------------------------------------------------
# runners


def dask_available() -> bool:
    """Whether dask.distributed can be imported (the `dask` extra)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


DASK_HINT = "for the distributed mode (a Dask LocalCluster or --scheduler): pip install 'gpuaas[dask]'"


class SerialRunner:
    """Runs the cells one after another in this process (debugging; the serial baseline)."""

    name = "serial"
    workers = 1

    def __init__(self, methods: Iterable[str], numba_cache_dir: str | None = None):
        self.info = [warm_up(methods, numba_cache_dir)]

    def run(self, cells: list[Cell]) -> Iterator[dict[str, Any]]:
        """Yield each cell's row as it finishes."""
        for cell in cells:
            yield run_cell(cell)

    def close(self, abort: bool = False) -> None:
        """Nothing to release."""


class ProcessRunner:
    """Runs the cells in local worker processes (concurrent.futures), one cell per process at a time."""

    name = "processes"

    def __init__(self, methods: Iterable[str], workers: int | None = None,
                 numba_cache_dir: str | None = None):  # fmt: skip
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = tuple(methods)
        # compile (or load) the kernels here first: the workers then load them from the cache
        self.info = [warm_up(methods, numba_cache_dir)]
        self.workers = workers or os.cpu_count() or 1
        self.pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=warm_up, initargs=(methods, numba_cache_dir))  # fmt: skip

    def run(self, cells: list[Cell]) -> Iterator[dict[str, Any]]:
        """Yield each cell's row as it finishes (any order)."""
        from concurrent.futures import as_completed

        futures = {self.pool.submit(run_cell, c): c for c in cells}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker process died
                yield failed_row(futures[fut], f"{type(exc).__name__}: {exc}")

    def close(self, abort: bool = False) -> None:
        """Stop the worker processes, dropping cells not started; `abort` also stops running ones.

        Without `abort` (every cell done) the workers exit normally. An interrupted campaign
        must not wait for long cells whose rows would be dropped anyway: their processes are
        terminated (concurrent.futures has no public way to do that).
        """
        procs = list((getattr(self.pool, "_processes", None) or {}).values()) if abort else []
        self.pool.shutdown(wait=not abort, cancel_futures=True)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10)


class DaskRunner:
    """Runs the cells on dask.distributed: a LocalCluster (default) or an existing scheduler.

    The LocalCluster has one single-threaded worker process per core (the kernels are
    CPU-bound; processes avoid the GIL). Every worker is warmed up first (`warm_up`), so cells
    never pay numba compilation.
    """

    name = "dask"

    def __init__(self, methods: Iterable[str], scheduler: str | None = None,
                 workers: int | None = None, numba_cache_dir: str | None = None):  # fmt: skip
        if not dask_available():
            raise InputError(None, "scheduler" if scheduler else "backend", f"dask is not installed; {DASK_HINT}")
        from distributed import Client, LocalCluster

        methods = tuple(methods)
        self.cluster = None
        self.futures: list[Any] = []
        if scheduler is None:
            if numba_cache_dir:
                os.environ["NUMBA_CACHE_DIR"] = str(numba_cache_dir)
            warm_up(methods, numba_cache_dir)  # write the cache once, before the workers start
            self.cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        silence_logs=logging.ERROR)  # fmt: skip
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout=10)
            except (OSError, TimeoutError) as exc:
                raise InputError(None, "scheduler", f"cannot connect to {scheduler}: {exc}") from None
            try:  # at least one worker (or the number asked for) before anything is sent
                self.client.wait_for_workers(workers or 1, timeout=60)
            except TimeoutError:
                n = len(self.client.nthreads())
                self.close(abort=True)
                raise InputError(None, "scheduler", f"{n} worker(s) joined {scheduler} within 60 s,"
                                 f" {workers or 1} needed") from None  # fmt: skip
        try:
            self.info = list(self.client.run(warm_up, methods, numba_cache_dir).values())
        except Exception as exc:  # noqa: BLE001 - e.g. a worker without gpuaas installed
            self.close(abort=True)
            raise InputError(None, "scheduler", f"the workers cannot run gpuaas ({type(exc).__name__}: {exc});"
                             " install the same gpuaas on every worker") from None  # fmt: skip
        self.workers = max(1, sum(self.client.nthreads().values()))

    def run(self, cells: list[Cell]) -> Iterator[dict[str, Any]]:
        """Yield each cell's row as it finishes (any order)."""
        from distributed import as_completed

        cell_of = {}
        for c in cells:
            fut = self.client.submit(run_cell, c, key=f"gpuaas-cell-{c.key}", pure=False)
            cell_of[fut.key] = c
            self.futures.append(fut)
        for fut in as_completed(self.futures):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker died with the cell
                yield failed_row(cell_of[fut.key], f"{type(exc).__name__}: {exc}")
            fut.release()

    def close(self, abort: bool = False) -> None:
        """Cancel what is left, disconnect, and stop the LocalCluster if this runner started it."""
        if self.futures:
            self.client.cancel(self.futures)
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_runner(methods: Iterable[str], backend: str = "auto", *, scheduler: str | None = None,
                workers: int | None = None, numba_cache_dir: str | None = None) -> Any:  # fmt: skip
    """The runner for `backend`: "auto" (Dask if installed, else local processes), "dask",
    "processes" or "serial"; a `scheduler` address implies Dask."""
    if backend not in ("auto", "dask", "processes", "serial"):
        raise InputError(None, "backend", f"unknown backend {backend!r}; expected auto, dask, processes or serial")
    if scheduler is not None and backend not in ("auto", "dask"):
        raise InputError(None, "scheduler", f"an existing scheduler needs the dask backend, not {backend!r}")
    if backend == "auto":
        if dask_available():
            backend = "dask"
        else:
            log.warning("dask is not installed: running the cells in local processes; %s", DASK_HINT)
            backend = "processes"
    if backend == "dask":
        return DaskRunner(methods, scheduler, workers, numba_cache_dir)
    if backend == "processes":
        return ProcessRunner(methods, workers, numba_cache_dir)
    return SerialRunner(methods, numba_cache_dir)


# ---------------------------------------------------------------------------------------------
# the campaign


class Progress:
    """done / failed / remaining and an ETA on one line, at most every `interval` seconds.

    On a terminal the line is redrawn in place (default every second); elsewhere (a log file)
    a new line is written, by default every 10 seconds, and always for the last cell.
    """

    def __init__(self, total: int, stream: Any = None, interval: float | None = None):
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (1.0 if self.tty else 10.0)
        self.t0 = time.perf_counter()
        self._last = -math.inf

    def update(self, row: dict[str, Any]) -> None:
        """Count one finished row and redraw when due."""
        self.done += 1
        self.failed += row["status"] != "ok"
        now = time.perf_counter()
        if now - self._last >= self.interval or self.done == self.total:
            self._last = now
            self.stream.write(("\r" if self.tty else "") + self.line() + ("" if self.tty else "\n"))
            self.stream.flush()

    def line(self) -> str:
        """The progress line."""
        elapsed = time.perf_counter() - self.t0
        left = self.total - self.done
        eta = elapsed / self.done * left if self.done else math.nan
        return (f"campaign: {self.done - self.failed} done, {self.failed} failed, {left} remaining"
                f" of {self.total}  elapsed {_hms(elapsed)}  ETA {_hms(eta)}")  # fmt: skip

    def close(self) -> None:
        """End the line on a terminal."""
        if self.tty and self.done:
            self.stream.write("\n")
            self.stream.flush()


def _hms(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--"
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


@dataclass
class CampaignReport:
    """What one `run_campaign` call did."""

    cells: int  # cells in the spec
    skipped: int  # already in the results file
    ran: int  # run now
    failed: int  # of those run now, how many failed
    seconds: float  # wall time of this call (runner start-up included)
    backend: str
    workers: int
    rows: list[dict[str, Any]]  # every row of the file, in grid order


def run_campaign(spec: CampaignSpec, output: str | Path, *, backend: str = "auto",
                 scheduler: str | None = None, workers: int | None = None,
                 retry_failed: bool = False, progress: bool | Any = True,
                 numba_cache_dir: str | None = None) -> CampaignReport:  # fmt: skip
    """Run the cells of `spec` missing from `output`, streaming one row per cell into it.

    Parameters
    ----------
    spec : CampaignSpec
        The grid (`load_spec`).
    output : path
        Results file (.csv, or .parquet with pyarrow). Cells already in it are skipped, so an
        interrupted campaign resumes; at the end the file is rewritten in grid order.
    backend : {"auto", "dask", "processes", "serial"}
        "auto" uses a Dask LocalCluster when dask is installed, else local processes.
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``).
    workers : int, optional
        Worker processes (default: one per core); with `scheduler`, wait for that many.
    retry_failed : bool
        Run again the cells recorded as failed (their old rows are removed first).
    progress : bool or file
        Progress line on stderr (True), on the given stream, or none (False).
    numba_cache_dir : str, optional
        NUMBA_CACHE_DIR for the workers (default: numba's, shared by processes on one machine).

    Returns
    -------
    CampaignReport
    """
    t0 = time.perf_counter()
    cells = expand(spec)
    order = [c.key for c in cells]
    store = ResultStore(output)
    if retry_failed:
        store.drop(lambda r: r["status"] == "ok")
    present = {r["cell"] for r in store.load()}
    todo = [c for c in cells if c.key not in present]
    skipped = len(cells) - len(todo)
    failed = 0
    backend_name, n_workers = "none", 0
    if todo:
        runner = make_runner({c.method for c in todo}, backend, scheduler=scheduler,
                             workers=workers, numba_cache_dir=numba_cache_dir)  # fmt: skip
        backend_name, n_workers = runner.name, runner.workers
        for info in runner.info:
            log.info("worker %s ready in %.1f s (numba cache %s)", info["worker"], info["seconds"],
                     info["numba_cache_dir"])  # fmt: skip
            for m, err in info["errors"].items():
                log.warning("warm-up of %s failed on %s: %s", m, info["worker"], err)
        bar = None
        if progress:
            bar = Progress(len(todo), None if progress is True else progress)
        finished = False
        try:
            for row in runner.run(todo):
                store.append(row)
                failed += row["status"] != "ok"
                if bar is not None:
                    bar.update(row)
            finished = True
        finally:
            if bar is not None:
                bar.close()
            store.close()
            runner.close(abort=not finished)
    rows = store.finalize(order)
    return CampaignReport(len(cells), skipped, len(todo), failed, time.perf_counter() - t0,
                          backend_name, n_workers, rows)  # fmt: skip
