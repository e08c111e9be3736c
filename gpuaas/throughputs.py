"""Throughput tables: measured (or modelled) training steps per second per (model, GPU, GPUs).

A job given as a model and an amount of work (steps) instead of `times` takes, on a
configuration (v, g) of a catalog, ``steps / steps_per_second(model, gpu of v, g)`` seconds. A
(model, GPU, GPU count) the table does not list is **not available**: the job cannot run on it.
Nothing is extrapolated unless the caller asks for the one documented rule, `scaling="linear"`
(below).

Table format (CSV, UTF-8, a header line, one row per measurement)::

    model,gpu,gpus,steps_per_second
    ResNet-50 (batch size 32),V100,1,7.79
    ResNet-50 (batch size 32),V100,4,13.8

- ``model``: any non-empty name; the job names it exactly (case-sensitive).
- ``gpu``: a GPU model, matched case-insensitively with the catalog's ``gpu`` field.
- ``gpus``: integer >= 1, the number of GPUs of **one VM** the job runs on (data parallel).
- ``steps_per_second``: > 0, the job's aggregate steps per second on those GPUs (a step is
  whatever the trace counts: Gavel counts steps summed over workers).

Lines starting with ``#`` are comments; a (model, gpu, gpus) given twice is an error.
Gavel's throughput JSON (``simulation_throughputs.json``: ``{worker: {"(job type, scale
factor)": {"null": steps/s, ...}}}``) is read too: only the isolated throughput (``"null"``)
of the consolidated worker types (``k80``, ``p100``, ``v100``; the ``*_unconsolidated`` ones,
GPUs spread over servers, are not what one VM is) is used; a throughput of 0 (Gavel's mark
for a job that does not fit, e.g. out of GPU memory) leaves that configuration unavailable.

Scaling rule ``linear`` (opt-in, never the default): a GPU count g that the table lacks for a
(model, GPU) takes the throughput of the largest measured count g0 < g times g / g0 (perfect
data-parallel scaling, an optimistic assumption); counts below the smallest measured one stay
unavailable.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from gpuaas.catalog import Catalog
from gpuaas.errors import InputError
from gpuaas.files import csv_fields, read_json, read_text

COLUMNS = ("model", "gpu", "gpus", "steps_per_second")
SCALING = ("none", "linear")
#: Gavel worker types read from its JSON (GPUs of one server).
GAVEL_WORKERS = ("k80", "p100", "v100")


@dataclass(frozen=True)
class ThroughputTable:
    """Steps per second keyed by (model, GPU model upper-cased, GPU count)."""

    name: str
    rates: dict[tuple[str, str, int], float] = field(default_factory=dict)

    @property
    def models(self) -> set[str]:
        return {m for m, _, _ in self.rates}

    def job_times(
        self,
        model: str,
        steps: float,
        catalog: Catalog,
        *,
        gpus: set[int] | None = None,
        scaling: str = "none",
    ) -> np.ndarray:
        """Whole-job seconds per configuration (C,) of `catalog`; inf where not available.

        Parameters
        ----------
        model : str
            A model of the table (KeyError otherwise: callers check `models` first).
        steps : float
            Steps of the whole job, > 0.
        catalog : Catalog
            The configurations (v, g) to time.
        gpus : set of int, optional
            Only these GPU counts are allowed (e.g. the count the trace requested).
        scaling : {"none", "linear"}
            "none": only measured counts; "linear": the module docstring's rule.
        """
        if model not in self.models:
            raise KeyError(model)
        out = np.full(catalog.n_configs, np.inf)
        for v, gpu in enumerate(catalog.gpu_models):
            for g in range(1, int(catalog.gpus[v]) + 1):
                if gpus is not None and g not in gpus:
                    continue
                rate = self.rate(model, gpu, g, scaling)
                if rate is not None:
                    out[catalog.config(v, g)] = steps / rate
        return out

    def rate(self, model: str, gpu: str, g: int, scaling: str = "none") -> float | None:
        """Steps per second of `model` on `g` GPUs of model `gpu` (None: not available)."""
        key = (model, gpu.upper(), g)
        if key in self.rates:
            return self.rates[key]
        if scaling == "linear":
            lower = [n for (m, u, n) in self.rates if m == model and u == key[1] and n < g]
            if lower:
                g0 = max(lower)
                return self.rates[(model, key[1], g0)] * g / g0
        return None


def read_throughputs(path: str | Path) -> ThroughputTable:
    """A throughput table from a CSV file (module docstring) or Gavel's throughput JSON."""
    source = str(path)
    if source.endswith(".json"):
        return _from_gavel(read_json(path), source)
    return parse_throughputs(read_text(path, "CSV"), source)


def parse_throughputs(text: str, source: str) -> ThroughputTable:
    """Parse the CSV text of a throughput table; errors name `source`, the line and the field."""
    lines = [
        (n, line)
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise InputError(
            source, None, f"empty throughput table; expected a header {','.join(COLUMNS)}"
        )
    header_no, header = lines[0]
    names = [h.strip() for h in csv_fields(header, source, f"line {header_no}")]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise InputError(
            source,
            f"line {header_no}",
            f"missing column(s) {', '.join(missing)}; the header must name {','.join(COLUMNS)}",
        )
    col = {c: names.index(c) for c in COLUMNS}
    rates: dict[tuple[str, str, int], float] = {}
    for n, line in lines[1:]:
        at = f"line {n}"
        row = csv_fields(line, source, at)
        if len(row) != len(names):
            raise InputError(source, at, f"has {len(row)} field(s), the header has {len(names)}")
        model, gpu = row[col["model"]].strip(), row[col["gpu"]].strip()
        if not model:
            raise InputError(source, f"{at}: model", "must be a non-empty name")
        if not gpu:
            raise InputError(source, f"{at}: gpu", "must be a non-empty GPU model")
        g = parse_int(row[col["gpus"]], source, f"{at}: gpus", minimum=1)
        rate = parse_float(
            row[col["steps_per_second"]], source, f"{at}: steps_per_second", positive=True
        )
        key = (model, gpu.upper(), g)
        if key in rates:
            raise InputError(source, at, f"({model}, {key[1]}, {g}) given twice")
        rates[key] = rate
    if not rates:
        raise InputError(source, None, "no rows after the header")
    return ThroughputTable(Path(source).name, rates)


def _from_gavel(data: Any, source: str) -> ThroughputTable:
    """Gavel's `{worker: {"(job type, scale factor)": {"null": steps/s}}}` JSON."""
    if not isinstance(data, dict) or not any(w in data for w in GAVEL_WORKERS):
        raise InputError(
            source,
            None,
            "not a Gavel throughput file: expected top-level worker "
            f"types {', '.join(GAVEL_WORKERS)}",
        )
    rates: dict[tuple[str, str, int], float] = {}
    for worker in GAVEL_WORKERS:
        table = data.get(worker, {})
        if not isinstance(table, dict):
            raise InputError(source, worker, "must be an object")
        for key, entry in table.items():
            try:
                job_type, scale = ast.literal_eval(key)
            except (ValueError, SyntaxError, TypeError):
                raise InputError(
                    source, f"{worker}.{key}", "key must be \"('job type', scale factor)\""
                ) from None
            rate = entry.get("null") if isinstance(entry, dict) else None
            if (
                not isinstance(job_type, str)
                or isinstance(scale, bool)
                or not isinstance(scale, int)
                or scale < 1
            ):
                raise InputError(
                    source, f"{worker}.{key}", "key must be \"('job type', scale factor)\""
                )
            if (
                isinstance(rate, bool)
                or not isinstance(rate, (int, float))
                or not math.isfinite(rate)
                or rate < 0
            ):
                raise InputError(
                    source,
                    f"{worker}.{key}.null",
                    f"must be a throughput >= 0 steps/s, got {rate!r}",
                )
            if rate == 0:  # Gavel's mark for "does not run" (e.g. out of GPU memory)
                continue
            rates[(job_type, worker.upper(), scale)] = float(rate)
    return ThroughputTable(Path(source).name, rates)


def bundled_throughputs() -> list[str]:
    """Names of the throughput tables shipped with gpuaas."""
    files = resources.files("gpuaas") / "throughput_tables"
    if not files.is_dir():
        return []
    return sorted(p.name.removesuffix(".csv") for p in files.iterdir() if p.name.endswith(".csv"))


def load_throughputs(spec: str | Path) -> ThroughputTable:
    """A bundled table by name, or a CSV / Gavel JSON file."""
    if isinstance(spec, str) and spec in bundled_throughputs():
        text = (resources.files("gpuaas") / "throughput_tables" / f"{spec}.csv").read_text(
            encoding="utf-8"
        )
        return parse_throughputs(text, f"throughputs {spec}")
    if not str(spec).endswith((".csv", ".json")):
        raise InputError(
            str(spec),
            None,
            "unknown throughput table: give a .csv or Gavel .json file, "
            f"or a bundled name ({', '.join(bundled_throughputs())})",
        )
    return read_throughputs(spec)


def parse_int(text: str, source: str, where: str, minimum: int | None = None) -> int:
    """An integer field of a text file ("4" and "4.0" are 4); one-line error otherwise."""
    raw = text.strip()
    try:
        value = float(raw)
    except ValueError:
        raise InputError(source, where, f"must be an integer, got {raw!r}") from None
    if not math.isfinite(value) or value != int(value):
        raise InputError(source, where, f"must be an integer, got {raw!r}")
    if minimum is not None and value < minimum:
        raise InputError(source, where, f"must be >= {minimum}, got {raw!r}")
    return int(value)


def parse_float(
    text: str, source: str, where: str, *, minimum: float | None = None, positive: bool = False
) -> float:
    """A finite number field of a text file; one-line error otherwise."""
    raw = text.strip()
    try:
        value = float(raw)
    except ValueError:
        raise InputError(source, where, f"must be a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise InputError(source, where, f"must be finite, got {raw!r}")
    if positive and value <= 0:
        raise InputError(source, where, f"must be > 0, got {raw!r}")
    if minimum is not None and value < minimum:
        raise InputError(source, where, f"must be >= {minimum:g}, got {raw!r}")
    return value
