"""`gpuaas compare`: a campaign over one given trace, as the paper's §4.3-§4.5.

Every (method, seed) pair is one cell (`gpuaas.experiments.cell`): a simulation of the whole
trace, with the method's node multiplier m (m·N nodes, §4.5) and its own rescheduling tick
unless one is given (the DP baselines: Δt = 15 min); a seed-independent method is simulated
once. The rows are the campaign rows (`gpuaas.experiments.rows`), so `gpuaas plot` reads a
comparison's CSV; the table (`analysis.summarize`) gives per run the mean costs over seeds,
their ratio to EDF's (Fig. 3), Path Relinking's cost reduction (eq. 3) paired by seed, and
cost / bound with the lower bound on the run's own node count, computed once per node count.
With disruption limits every method is simulated without and with them, and the table gives
what they cost.
Unlike a campaign, a simulation that fails stops the comparison with its error.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gpuaas.errors import InputError, brief
from gpuaas.experiments.cell import with_bounds
from gpuaas.experiments.runners import make_runner
from gpuaas.experiments.spec import expand, parse_spec
from gpuaas.instance import Instance
from gpuaas.limits import MAX_SEED, MAX_SIMULATIONS
from gpuaas.run_config import settings as run_settings

log = logging.getLogger(__name__)

#: the method that `gpuaas compare --spot` simulates without spot: the reference the spot rows
#: are compared with
ON_DEMAND = "on-demand"


def default_methods() -> list[str]:
    """The methods `gpuaas compare` simulates unless told (their records' `compare`)."""
    from gpuaas.methods import METHODS

    return [m.name for m in METHODS.values() if m.compare]


def parse_seeds(text: str) -> list[int]:
    """Seeds from "1-10", "1,3,7" or a mix ("1-3,8"); each >= 0, no duplicates.

    Parameters
    ----------
    text : str
        The seed list.

    Returns
    -------
    list[int]
    """
    seeds: list[int] = []
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*(\d{1,20})\s*(?:-\s*(\d{1,20})\s*)?", part)
        if not m:
            raise InputError(None, "seeds", f"expected e.g. '1-10' or '1,3,5', got {brief(text)}")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise InputError(None, "seeds", f"empty range {part.strip()!r}")
        if hi > MAX_SEED:
            raise InputError(None, "seeds", f"seeds are integers in 0..{MAX_SEED}, got {hi}")
        if len(seeds) + hi - lo + 1 > MAX_SIMULATIONS:
            raise InputError(None, "seeds", f"more than {MAX_SIMULATIONS} seeds (gpuaas.limits)")
        seeds.extend(range(lo, hi + 1))
    if len(set(seeds)) != len(seeds):
        raise InputError(None, "seeds", f"duplicate seeds in {text!r}")
    return seeds


def parse_multipliers(text: str | None, methods: Sequence[str]) -> dict[str, int]:
    """Node multipliers from "edf=2,dp-fastb=4" (methods must be among `methods`; m >= 1).

    Parameters
    ----------
    text : str or None
        The multiplier list; None or "" means none.
    methods : sequence of str
        The compared methods.

    Returns
    -------
    dict[str, int]
    """
    out: dict[str, int] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        m = re.fullmatch(r"\s*([\w.-]+)\s*=\s*(\d+)\s*", part)
        if not m:
            raise InputError(
                None, "node-multiplier", f"expected METHOD=INTEGER, got {part.strip()!r}"
            )
        name, k = m.group(1), int(m.group(2))
        if name not in methods:
            raise InputError(None, "node-multiplier", f"{name!r} is not among the compared methods")
        if k < 1:
            raise InputError(None, "node-multiplier", f"{name}: must be >= 1, got {k}")
        out[name] = k
    return out


def parse_settings(settings: Iterable[str], methods: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Solver options from "METHOD.OPTION=VALUE" strings (VALUE read as YAML: 1, 0.5, true, text).

    Parameters
    ----------
    settings : iterable of str
        E.g. ``["hierarchical.controller_time_limit=1"]``.
    methods : sequence of str
        The compared methods (an option for another method is an error).

    Returns
    -------
    dict
        Method -> {option: value}.
    """
    import yaml

    from gpuaas.files import load_yaml

    out: dict[str, dict[str, Any]] = {}
    for item in settings:
        m = re.fullmatch(r"\s*([\w-]+)\.(\w+)\s*=\s*(.*?)\s*", item)
        if not m:
            raise InputError(None, "set", f"expected METHOD.OPTION=VALUE, got {item!r}")
        method, key, raw = m.groups()
        if method not in methods:
            raise InputError(None, "set", f"{method!r} is not among the compared methods")
        try:
            value = load_yaml(raw) if raw else None
        except yaml.YAMLError:
            value = raw
        out.setdefault(method, {})[key] = value
    return out


def compare(
    trace: Instance,
    methods: Sequence[str],
    seeds: Sequence[int],
    *,
    multipliers: dict[str, int] | None = None,
    options: dict[str, dict[str, Any]] | None = None,
    workers: int = 1,
    name: str = "trace",
    on_row: Callable[[dict[str, Any]], None] | None = None,
    upper: bool = False,
    **settings: Any,
) -> list[dict[str, Any]]:
    """Simulate every method with every seed on `trace`: the rows, in method then seed order.

    Parameters
    ----------
    trace : Instance
        The whole trace (all jobs, by release).
    methods : sequence of str
        Registered method names.
    seeds : sequence of int
        Seeds of the methods' randomness (the trace is fixed); a seed-independent method runs
        with the first only.
    multipliers : dict, optional
        Method -> m: simulate that method with m·N nodes (§4.5).
    options : dict, optional
        Method -> solver options passed through the simulator.
    workers : int
        Simulations run in this many processes (1: in this process).
    name : str
        The trace's name in the rows (`trace` column and cell keys): its file.
    on_row : callable, optional
        Called with each row as it is produced (progress reporting).
    upper : bool
        Rows also get `upper` and `cost_over_upper` (`gpuaas.upper`, computed once per node
        count and restart costs).
    **settings
        Run settings of every simulation (`gpuaas.run_config.RunConfig` fields: ``overhead``,
        ``startup``, ``tick``, ``spot``, ``availability``, ...). Those that contrast
        (`Setting.contrast`, the disruption limits) are simulated without and with them (all
        together), so that the table shows what they cost; with ``spot``, the availability
        source (default ``model``) is replayed for every method but ``on-demand``, which is
        simulated without spot capacity (its row is the run `gpuaas simulate` makes without
        ``--spot``: the reference of the spot rows).

    Returns
    -------
    list[dict]
        Rows of `gpuaas.experiments.rows.COLUMNS`.
    """
    if workers < 1:
        raise InputError(None, "workers", f"must be >= 1, got {workers}")
    known = {k: s for k, _, s in run_settings()}
    own = [k for k in settings if k not in known or known[k].spec == "own"]
    own = [k for k in own if k not in ("spot", "availability")]
    if own:
        raise InputError(None, own[0], "not a run setting that gpuaas compare sets for every run")
    data: dict[str, Any] = {
        "traces": [name],
        "methods": list(methods),
        "solver_seeds": list(seeds),
        "node_multipliers": {m: [k] for m, k in (multipliers or {}).items()},
        "options": options or {},
        "upper": upper,
    }
    contrast = {}
    for k, v in settings.items():
        if k in ("spot", "availability"):
            continue
        if known[k].contrast:
            if v is not None:
                contrast[k] = v
        else:
            data[k] = v
    for k in (k for k, s in known.items() if s.contrast):
        if contrast:
            data[k] = [None] if k not in contrast else [None, contrast[k]]
    if len(contrast) > 1:  # every limit or none
        mixes = itertools.product(*([None, v] for v in contrast.values()))
        data["exclude"] = [
            dict(zip(contrast, mix))
            for mix in mixes
            if any(m is None for m in mix) and any(m is not None for m in mix)
        ]
    if settings.get("spot") or settings.get("availability") is not None:
        source = settings.get("availability") or "model"
        data["spot"] = [None, source]
        # the on-demand reference runs without spot capacity at all, as `gpuaas simulate`
        # without --spot (replaying the availability would only add re-plans); every other
        # method replays it
        data["exclude"] = [
            *data.get("exclude", []),
            {"method": ON_DEMAND, "spot": source},
            *({"method": m, "spot": None} for m in methods if m != ON_DEMAND),
        ]
    spec = parse_spec(data, None, traces={name: trace})
    cells = expand(spec)
    order = {c.key: i for i, c in enumerate(cells)}
    runner = make_runner(
        spec.methods,
        "serial" if workers == 1 or len(cells) == 1 else "processes",
        workers=min(workers, len(cells)),
    )
    rows = []
    try:
        for row in runner.run(with_bounds(cells), strict=True):
            log.info("%s seed %d: total %.2f $", row["method"], row["seed"], row["total_cost"])
            rows.append(row)
            if on_row is not None:
                on_row(row)
    finally:
        runner.close(abort=len(rows) < len(cells))
    return sorted(rows, key=lambda r: order[r["cell"]])
