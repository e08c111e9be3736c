"""A campaign spec: the grid of simulations, checked field by field, and its expansion into cells.

A spec (YAML, or built by `gpuaas compare`) simulates either generated traces (``nodes``,
``arrivals``, ``seeds``, ``jobs_per_node``, ``catalog``: one trace per arrival pattern, N and
seed, built by `gpuaas.generator.generate_trace` on any machine) or given trace files
(``traces``), with every method, solver seed, node multiplier and value of each run setting
that is a grid axis (`gpuaas.run_config.Setting`); ``exclude`` drops cells matching a pattern. `expand` turns it into
independent `Cell`s (`gpuaas.experiments.cell`). The fields: scripts/campaigns/README.md.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuaas import checks
from gpuaas.errors import InputError
from gpuaas.experiments.cell import Cell
from gpuaas.files import read_yaml
from gpuaas.generator import ARRIVALS
from gpuaas.limits import (
    MAX_COUNT,
    MAX_JOBS,
    MAX_NODES,
    MAX_SECONDS,
    MAX_SEED,
    MAX_SIMULATIONS,
)
from gpuaas.noise import DEFAULT_NOISE_MODEL, MAX_NOISE
from gpuaas.run_config import RunConfig, settings

#: the run settings (`gpuaas.run_config.Setting`) a spec gives by their own name, in key order:
#: grid axes ("axis") and one value per campaign ("one")
_RUN_FIELDS = {name: s for name, _, s in settings() if s.spec in ("axis", "one")}
_DEFAULTS = {name: default for name, default, _ in settings()}
_SPEC_FIELDS = {
    "name",
    "catalog",
    "nodes",
    "arrivals",
    "jobs_per_node",
    "seeds",
    "solver_seeds",
    "traces",
    "methods",
    "node_multipliers",
    "options",
    "exclude",
    "spot",
    "upper",
    *_RUN_FIELDS,
}
#: the fields of a generated-trace grid (a spec of given `traces` has none of them)
_GENERATED = ("nodes", "arrivals", "seeds", "jobs_per_node", "catalog")
#: cell parameters an `exclude` pattern may name: the trace's, the method's, the axes'
_EXCLUDE_KEYS = (
    "trace",
    "catalog",
    "arrivals",
    "nodes",
    "trace_seed",
    "method",
    "seed",
    "node_multiplier",
    *(name for name, s in _RUN_FIELDS.items() if s.spec == "axis"),
    "spot",
)
#: the run settings that act only with spot (`Setting.needs`): without it, their default only
_NEEDS_SPOT = tuple(
    name for name, s in _RUN_FIELDS.items() if s.needs == "spot" and s.spec == "axis"
)
#: exclude keys whose values are true / false
_BOOL_KEYS = tuple(name for name, s in _RUN_FIELDS.items() if s.values == "switch")


@dataclass(frozen=True)
class CampaignSpec:
    """A parsed, checked campaign spec: the grid that `expand` turns into cells.

    Attributes
    ----------
    name : str
        Campaign name (defaults to the spec file's stem).
    nodes : tuple of int
        Node counts N of the generated traces (empty with `traces`).
    arrivals : tuple of str
        Arrival patterns ("exponential", "high", "low", "mixed") of the generated traces.
    jobs_per_node : float
        Job-count factor: each generated trace has J = round(jobs_per_node * N) jobs (paper: 10).
    seeds : tuple of int
        Trace seeds: one generated trace per seed and scenario.
    solver_seeds : tuple of int or None
        Solver seeds simulated on every trace; None means the trace's own seed (a given trace:
        seed 1).
    methods : tuple of str
        Registered method names.
    node_multipliers : dict
        Method -> multipliers m (the method is simulated with m * N nodes); default (1,).
    options : dict
        Method -> solver options passed to `simulate` (canonical JSON per cell).
    catalog : tuple of str
        Catalogs (bundled names or YAML files) of the generated traces: a grid axis.
    traces : dict
        Given traces: name (the file as the spec writes it) -> Instance.
    exclude : tuple of dict
        Cells matching every (parameter, value) of one of these patterns are left out.
    grid : dict
        Run setting (`RunConfig` field) -> the values simulated: one per campaign, or several
        (a grid axis, `Setting.spec`), default the field's default; ``availability``: the spot
        availability sources (None: on-demand only; the spec's ``spot``).
    upper : bool
        Rows also get `upper` and `cost_over_upper` (`gpuaas.upper`, once per trace, node
        count and restart costs; opt-in: it simulates a portfolio of runs).
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
    catalog: tuple[str, ...] = ("azure-2021",)
    traces: dict[str, Any] = field(default_factory=dict)
    exclude: tuple[dict[str, Any], ...] = ()
    grid: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    upper: bool = False


def _int_list(
    value: Any, source: str | None, field: str, minimum: int, maximum: int
) -> tuple[int, ...]:
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
                raise InputError(
                    source,
                    field,
                    f"range {part.strip()!r} goes beyond {maximum} or "
                    f"lists more than {MAX_SIMULATIONS} values (gpuaas.limits)",
                )
            items.extend(range(a, b + 1))
    elif isinstance(value, list):
        items = value
    else:
        raise InputError(
            source, field, f"expected an integer, a list or a range like '1-10', got {value!r}"
        )
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


def _number_list(value: Any, source: str | None, field: str, **bounds: Any) -> tuple[float, ...]:
    """A number or a list of them, each checked by `gpuaas.checks.number` within `bounds`."""
    values = value if isinstance(value, list) else [value]
    return tuple(checks.number(v, field, source, **bounds) for v in values)


def _flag_list(value: Any, source: str | None, field: str) -> tuple[bool, ...]:
    """true / false, or a list of them."""
    values = value if isinstance(value, list) else [value]
    out = tuple(checks.flag(v, field, source) for v in values)
    if not out or len(set(out)) != len(out):
        raise InputError(
            source, field, "expected true, false or both once, got an empty list or a repeat"
        )
    return out


def _limit_list(value: Any, source: str | None, field: str) -> tuple[int | None, ...]:
    """A limit (an integer >= 0, or null: none), or a list of them."""
    values = value if isinstance(value, list) else [value]
    out = tuple(
        None if v is None else checks.integer(v, field, source, minimum=0, maximum=MAX_COUNT)
        for v in values
    )
    if not out or len(set(out)) != len(out):
        raise InputError(source, field, "is empty or lists a value twice")
    return out


def parse_spec(
    data: Any, source: str | None = None, traces: dict[str, Any] | None = None
) -> CampaignSpec:
    """Check a campaign spec (the parsed YAML mapping) and return it as a `CampaignSpec`.

    Parameters
    ----------
    data : dict
        The spec: ``methods`` (required) and either ``nodes``, ``arrivals``, ``seeds``
        (required), ``jobs_per_node`` (10) and ``catalog``, or ``traces`` (trace files,
        relative to the spec file's directory); ``solver_seeds``, ``node_multipliers`` (a list
        for every method or a mapping method -> list), ``options`` (method -> solver options),
        ``exclude`` (list of mappings parameter -> value), ``spot`` (availability sources, a
        source or a list; null: on-demand only), ``name``, and every run setting a spec gives
        by its name (`RunConfig` fields whose `Setting.spec` is "axis": a value or a list, or
        "one": a value; `settings_table`).
    source : str, optional
        File name used in error messages (and the directory trace files are relative to).
    traces : dict, optional
        Name -> Instance for the names of ``traces`` already loaded (`gpuaas compare`).

    Raises
    ------
    InputError
        Naming the field and the problem (unknown field, unknown method or arrival pattern,
        bad range, unreadable trace, ...).
    """
    from gpuaas.catalog import load_catalog
    from gpuaas.methods import METHODS, check_option_values, check_options

    if not isinstance(data, dict):
        raise InputError(source, None, "a campaign spec must be a YAML mapping")
    unknown = sorted(set(data) - _SPEC_FIELDS)
    if unknown:
        raise InputError(
            source, unknown[0], f"unknown field; expected one of {', '.join(sorted(_SPEC_FIELDS))}"
        )
    given = _load_traces(data, source, traces or {})
    for req in ("methods",) if given else ("nodes", "arrivals", "seeds", "methods"):
        if req not in data:
            raise InputError(source, req, "missing required field")
    if given:
        nodes = (max(t.nodes for t in given.values()),)  # for the multiplier limit below
        arrivals: tuple[str, ...] = ()
        seeds: tuple[int, ...] = ()
        jpn = 0.0
    else:
        nodes = _int_list(data["nodes"], source, "nodes", 1, MAX_NODES)
        arrivals = _str_list(data["arrivals"], source, "arrivals")
        for a in arrivals:
            if a not in ARRIVALS:
                raise InputError(
                    source,
                    "arrivals",
                    f"unknown arrival pattern {a!r}; expected one of {', '.join(ARRIVALS)}",
                )
        jpn = checks.number(data.get("jobs_per_node", 10), "jobs_per_node", source, positive=True)
        if jpn * max(nodes) > MAX_JOBS:
            raise InputError(
                source,
                "jobs_per_node",
                f"{jpn:g} x {max(nodes)} nodes is more than {MAX_JOBS} jobs (gpuaas.limits)",
            )
        seeds = _int_list(data["seeds"], source, "seeds", 0, MAX_SEED)
    methods = _str_list(data["methods"], source, "methods")
    for m in methods:
        if m not in METHODS:
            raise InputError(
                source, "methods", f"unknown method {m!r}; available: {', '.join(METHODS)}"
            )
    solver_seeds = None
    if data.get("solver_seeds") is not None:
        solver_seeds = _int_list(data["solver_seeds"], source, "solver_seeds", 0, MAX_SEED)
    mult_raw = data.get("node_multipliers", [1])
    multipliers: dict[str, tuple[int, ...]] = {}
    if isinstance(mult_raw, dict):
        for m, v in mult_raw.items():
            if m not in methods:
                raise InputError(source, f"node_multipliers.{m}", "not one of the spec's methods")
            multipliers[m] = _int_list(
                v, source, f"node_multipliers.{m}", 1, MAX_NODES // max(nodes)
            )
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
            raise InputError(
                source, f"options.{m}", f"expected a mapping of solver options, got {o!r}"
            )
        try:
            json.dumps(o)
        except TypeError as exc:
            raise InputError(source, f"options.{m}", f"not JSON-serialisable: {exc}") from None
        try:
            check_options(m, o)
            check_option_values(m, o)
        except InputError as exc:
            field = f"options.{m}" if exc.field in (None, "options") else f"options.{m}.{exc.field}"
            raise InputError(source, field, exc.problem) from None
        options[m] = o
    grid = {name: _setting_values(name, data, source) for name in _RUN_FIELDS}
    for m in grid["noise_model"]:
        for v in grid["noise"]:
            if v >= MAX_NOISE[m]:
                raise InputError(
                    source, "noise", f"must be < {MAX_NOISE[m]:g} for the {m} model, got {v!r}"
                )
    grid["availability"] = _spot_list(data.get("spot"), source)
    catalog = _str_list(data.get("catalog", "azure-2021"), source, "catalog")
    catalogs = (
        [t.catalog for t in given.values()]
        if given
        else [load_catalog(name, source) for name in catalog]
    )
    if any(v is not None for v in grid["availability"]):
        from gpuaas.availability import require_spot_prices

        for cat in catalogs:
            require_spot_prices(cat, source, "spot")
    exclude = _exclude(data.get("exclude", []), source)
    per_trace = sum(len(multipliers.get(m, (1,))) for m in methods) * len(solver_seeds or (1,))
    cells = (len(given) or len(catalog) * len(arrivals) * len(nodes) * len(seeds)) * per_trace
    for values in grid.values():
        cells *= len(values)
    if cells > MAX_SIMULATIONS:
        raise InputError(
            source,
            None,
            f"the grid has {cells} simulations; at most {MAX_SIMULATIONS} (gpuaas.limits)",
        )
    name = data.get("name") or (Path(source).stem if source else "campaign")
    return CampaignSpec(
        name=str(name),
        nodes=() if given else nodes,
        arrivals=arrivals,
        jobs_per_node=float(jpn),
        seeds=seeds,
        solver_seeds=solver_seeds,
        methods=methods,
        node_multipliers={m: multipliers.get(m, (1,)) for m in methods},
        options=options,
        catalog=catalog,
        traces=given,
        exclude=exclude,
        upper=checks.flag(data.get("upper", False), "upper", source),
        grid=grid,
    )


def _setting_values(name: str, data: dict[str, Any], source: str | None) -> tuple[Any, ...]:
    """The values of the run setting `name` a spec gives (its default if it gives none),
    checked as its kind of values (`Setting.values`) requires: a list of them for a grid axis."""
    s, default = _RUN_FIELDS[name], _DEFAULTS[name]
    value = data.get(name, default)
    seconds = {"minimum": 0.0, "maximum": MAX_SECONDS}
    if s.spec == "one":
        if value is None and default is None:
            return (None,)
        if s.values == "positive-seconds":
            return (checks.number(value, name, source, maximum=MAX_SECONDS, positive=True),)
        if s.values == "seconds":
            return (checks.number(value, name, source, **seconds),)
        return (_checked(name, value, source),)
    if s.values == "switch":
        return _flag_list(value, source, name)
    if s.values == "count":
        return _limit_list(value, source, name)
    if s.values == "seconds":
        return _number_list(value, source, name, **seconds)
    if s.values == "noise":  # below the top of each model: checked with the models
        return _number_list(value, source, name, minimum=0.0)
    values = _str_list(value, source, name) if s.values == "name" else value
    values = values if isinstance(values, list | tuple) else [values]
    if not values or len(set(map(repr, values))) != len(values):
        raise InputError(source, name, "is empty or lists a value twice")
    return tuple(_checked(name, v, source) for v in values)


def _checked(name: str, value: Any, source: str | None) -> Any:
    """`value` of the run setting `name` as a RunConfig takes it (its checks, naming `source`)."""
    try:
        return getattr(RunConfig(**{name: value}), name)
    except InputError as exc:
        raise InputError(source, name, exc.problem) from None


def _spot_list(value: Any, source: str | None) -> tuple[str | None, ...]:
    """The `spot` axis: availability sources (strings), null for on-demand only."""
    items = value if isinstance(value, list) else [value]
    if not items:
        raise InputError(source, "spot", "is empty; leave it out for on-demand only")
    for v in items:
        if v is not None and (not isinstance(v, str) or not v.strip()):
            raise InputError(
                source,
                "spot",
                f"expected availability sources ('model[:k=v,...]' or trace files) or null, "
                f"got {v!r}",
            )
    if len(set(items)) != len(items):
        raise InputError(source, "spot", "a source is listed twice")
    return tuple(items)


def _load_traces(
    data: dict[str, Any], source: str | None, loaded: dict[str, Any]
) -> dict[str, Any]:
    """The spec's given traces, name -> Instance (files relative to the spec's directory)."""
    from gpuaas.instance import load_instance

    if "traces" not in data:
        return {}
    both = [f for f in _GENERATED if f in data]
    if both:
        raise InputError(
            source, both[0], "a spec simulates either generated traces or given traces, not both"
        )
    names = _str_list(data["traces"], source, "traces")
    stems = [Path(n).stem for n in names]
    if len(set(stems)) != len(stems):
        raise InputError(source, "traces", "two trace files have the same name (it keys the cells)")
    here = Path(source).parent if source else Path()
    return {n: loaded[n] if n in loaded else load_instance(here / n) for n in names}


def _exclude(value: Any, source: str | None) -> tuple[dict[str, Any], ...]:
    """The `exclude` patterns: a list of mappings cell parameter -> value."""
    if not isinstance(value, list):
        raise InputError(
            source, "exclude", f"expected a list of mappings parameter -> value, got {value!r}"
        )
    out = []
    for i, pat in enumerate(value):
        if not isinstance(pat, dict) or not pat:
            raise InputError(
                source, f"exclude[{i}]", f"expected a mapping parameter -> value, got {pat!r}"
            )
        for k, v in pat.items():
            if k not in _EXCLUDE_KEYS:
                raise InputError(
                    source,
                    f"exclude[{i}].{k}",
                    f"not a cell parameter; expected one of {', '.join(_EXCLUDE_KEYS)}",
                )
            if k in _BOOL_KEYS:
                checks.flag(v, f"exclude[{i}].{k}", source)
            elif isinstance(v, bool) or not isinstance(v, int | float | str | None):
                raise InputError(
                    source, f"exclude[{i}].{k}", f"expected a number, a name or null, got {v!r}"
                )
        out.append(dict(pat))
    return tuple(out)


def load_spec(path: str | Path) -> CampaignSpec:
    """Read and check a campaign spec YAML file (errors name the file and the field)."""
    return parse_spec(read_yaml(path), str(path))


def expand(spec: CampaignSpec) -> list[Cell]:
    """The spec's grid as a list of independent cells, in a fixed (grid) order.

    A method that is seed independent (`gpuaas.methods.Method.seed_independent`) is simulated
    once per trace, with the first seed. Without noise the error model and the oracle do not
    apply: such cells are simulated once (the default model, not told); so are cells whose grid
    axes do not act (`_inactive`: `deadline_safe` without spot or for a method that ignores it),
    at the axes' defaults.
    """
    from gpuaas.methods import METHODS

    traces: list[dict[str, Any]] = []
    for name, inst in spec.traces.items():
        traces.append(
            {
                "trace": name,
                "instance": inst,
                "arrivals": None,
                "nodes": inst.nodes,
                "jobs": inst.n_jobs,
                "trace_seed": None,
                "catalog": inst.catalog.name,
            }
        )
    for catalog in spec.catalog:
        for arrivals in spec.arrivals:
            for n in spec.nodes:
                for trace_seed in spec.seeds:
                    traces.append(
                        {
                            "arrivals": arrivals,
                            "nodes": n,
                            "jobs": max(1, round(spec.jobs_per_node * n)),
                            "trace_seed": trace_seed,
                            "catalog": catalog,
                        }
                    )
    errors = ("noise", "noise_model", "oracle")  # `_errors`: the levels and their models
    axes = {k: v for k, v in spec.grid.items() if k not in errors}
    cells = []
    for t in traces:
        for method in spec.methods:
            seeds = spec.solver_seeds or (1 if t["trace_seed"] is None else t["trace_seed"],)
            if METHODS[method].seed_independent:
                seeds = seeds[:1]  # the same result for every seed: simulate it once
            for mult in spec.node_multipliers[method]:
                for seed in seeds:
                    for error in _errors(spec):
                        for values in itertools.product(*axes.values()):
                            run = dict(zip(errors, error), **dict(zip(axes, values)))
                            if _inactive(run, axes, method):
                                continue  # the same cell as at the axes' defaults
                            config = RunConfig(
                                method=method,
                                seed=seed,
                                options=spec.options.get(method, {}),
                                spot=run["availability"] is not None,
                                **run,
                            )
                            cell = Cell(run=config, node_multiplier=mult, upper=spec.upper, **t)
                            if not any(_matches(cell, pat) for pat in spec.exclude):
                                cells.append(cell)
    return cells


def _inactive(run: dict[str, Any], axes: dict[str, tuple[Any, ...]], method: str) -> bool:
    """Whether the cell of `run` is another's: the grid axes that do not act in it (those that
    act only with spot, `_NEEDS_SPOT`, in a cell without; `deadline_safe` for a method that
    does not take it, `gpuaas.methods.takes_deadline_safe`) are set to their defaults in `run`,
    and True when one was not and its axis holds the default too (that cell is simulated)."""
    from gpuaas.methods import takes_deadline_safe

    idle = set(_NEEDS_SPOT) if run["availability"] is None else set()
    if "deadline_safe" in axes and not takes_deadline_safe(method):
        idle.add("deadline_safe")
    again = False
    for k in sorted(idle):
        if run[k] != _DEFAULTS[k]:
            again = again or _DEFAULTS[k] in axes[k]
            run[k] = _DEFAULTS[k]
    return again


def _errors(spec: CampaignSpec) -> list[tuple[float, str, bool]]:
    """(level, model, oracle) of the spec's grid; level 0 once, with the default model."""
    out: list[tuple[float, str, bool]] = []
    for noise in spec.grid["noise"]:
        if noise == 0:
            out.append((0.0, DEFAULT_NOISE_MODEL, False))
        else:
            out += [(noise, m, o) for m in spec.grid["noise_model"] for o in spec.grid["oracle"]]
    return out


def _matches(cell: Cell, pattern: dict[str, Any]) -> bool:
    """Whether the cell's parameters (as its results row names them) match every pair."""
    params = cell.params()
    return all(params[k] == v for k, v in pattern.items())


#: how a spec writes the values of each kind of run setting (`Setting.values`): (one, axis)
_SYNTAX = {
    "switch": ("`true` or `false`", "`true`, `false` or both"),
    "count": ("an integer or `null` (no limit)", "an integer, `null` (no limit) or a list"),
    "seconds": ("seconds", "seconds, a number or a list"),
    "positive-seconds": ("seconds (> 0)", "seconds (> 0), a number or a list"),
    "noise": ("a number", "a number or a list"),
    "name": ("a name", "a name or a list"),
    "names": ('`"a,b"`', '`"a,b"`, `null` (all) or a list of them'),
}


def settings_table() -> list[str]:
    """The rows of the run settings in the campaign README's table of spec fields
    (scripts/campaigns/README.md; a test keeps them equal): field, meaning, default."""
    rows = []
    for name, s in _RUN_FIELDS.items():
        meaning, _, default = s.help.partition(" [default: ")
        meaning = meaning.rstrip(".")
        if default:
            default = default.rstrip(".]")
        else:
            default = f"`{_yaml(_DEFAULTS[name])}`"
        syntax = _SYNTAX.get(s.values, ("a value", "a value or a list"))[s.spec == "axis"]
        choices = f" ({', '.join(f'`{c}`' for c in s.choices)})" if s.choices else ""
        axis = " (a grid axis)" if s.spec == "axis" else ""
        rows.append(f"| `{name}` | {meaning}: {syntax}{choices}{axis} | {default} |")
    rows.append(
        "| `spot` | spot capacity: availability sources replayed (`model[:k=v,...]` or trace "
        "files, `gpuaas.availability.load_availability`), a source or a list (a grid axis); "
        "`null` in it: on-demand only | `null` |"
    )
    return rows


def _yaml(value: Any) -> str:
    """A default value as a spec writes it."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return format(value, "g") if isinstance(value, float) else str(value)
