"""Trace importers: public cluster traces and plain CSV turned into gpuaas traces.

Each reader (`gavel`, `alibaba_pai`, `csv_trace`, `elasticflow`, `eva`) parses its format into `TraceJob` records
(`records`), with one-line errors naming file, line and field; `build_trace` (`build`) turns
them into a normal
instance/trace dict (the format `gpuaas simulate` reads) on a chosen catalog:

- a job given as model + steps gets, per configuration (v, g), ``steps / steps_per_second`` from
  a throughput table (`gpuaas.throughputs`); a configuration the table lacks is unavailable;
- a job given as a measured duration runs in that time on exactly its requested GPU count, on
  VM types of the GPU model it was measured on (any GPU model with ``any_gpu=True``, an explicit
  assumption) — nothing else is known about it;
- a job given as a model and a measured duration (ElasticFlow's) has the work that takes that
  duration on its requested GPU count of the GPU it was measured on, by the table:
  steps = duration x steps_per_second, then timed as a model + steps job;
- releases are shifted so the first kept job arrives at 0;
- N is given, or ceil(J / 10) (``nodes="jobs"``), or from the trace's GPU demand
  (``nodes="demand"``, `build.demand_nodes`);
- a missing due date is release + U[1, 3] x the job's fastest time and a missing weight
  ω ~ U[0.003, 0.015] $/s (the paper's §4.1 rules, `gpuaas.generator`), drawn from `seed`;
  both are written into the output, so the trace is self-contained; a given due date before
  its job's submission is an error naming the line.

Jobs no configuration of the catalog can run are an error naming the line, unless
``skip_unrunnable=True`` drops them (they are counted in the report).
"""

from __future__ import annotations

from collections.abc import Callable

from gpuaas.catalog import Catalog
from gpuaas.errors import InputError
from gpuaas.importers.alibaba_pai import read_pai
from gpuaas.importers.build import GPU_COUNTS, NODE_RULES, build_trace, parse_window
from gpuaas.importers.csv_trace import read_csv_trace
from gpuaas.importers.elasticflow import MEASURED_ON, read_elasticflow
from gpuaas.importers.eva import MEASURED_ON as EVA_MEASURED_ON
from gpuaas.importers.eva import read_eva, read_eva_catalog, read_eva_contention
from gpuaas.importers.gavel import read_gavel
from gpuaas.importers.records import ImportReport, TraceJob

#: format name (the CLI's FORMAT) -> reader of that format
READERS: dict[str, Callable[[str], tuple[list[TraceJob], ImportReport]]] = {
    "gavel": read_gavel,
    "alibaba-pai-2020": read_pai,
    "csv": read_csv_trace,
    "elasticflow": read_elasticflow,
    "eva": read_eva,
}
FORMATS = tuple(READERS)
#: the import options' defaults, and each format's own (`gpuaas import` without the option)
DEFAULTS: dict[str, str | None] = {
    "catalog": "azure-2021",
    "throughputs": None,
    "measured_on": None,
    "nodes": "jobs",
}
FORMAT_DEFAULTS: dict[str, dict[str, str]] = {
    # ElasticFlow reproduces the ITP jobs on 8-GPU A100 servers; gcp-us-central1 sells A100 VMs
    # of 1, 2, 4 and 8 GPUs, every count the trace requests (above 8: folded, see the reader)
    "elasticflow": {
        "catalog": "gcp-us-central1",
        "throughputs": "performance-model",
        "measured_on": MEASURED_ON,
        "nodes": "demand",
    },
    # Eva's GPU instances are p3 (V100) at the bundled aws-us-east-1 prices; Eva caps no
    # cluster size, so N follows the GPU demand
    "eva": {"catalog": "aws-us-east-1", "measured_on": EVA_MEASURED_ON, "nodes": "demand"},
}

__all__ = [
    "DEFAULTS",
    "FORMATS",
    "FORMAT_DEFAULTS",
    "GPU_COUNTS",
    "NODE_RULES",
    "READERS",
    "ImportReport",
    "TraceJob",
    "build_trace",
    "import_catalog",
    "import_defaults",
    "parse_window",
    "read_eva_contention",
    "read_trace",
]


def read_trace(fmt: str, src: str) -> tuple[list[TraceJob], ImportReport]:
    """The jobs of `src` in format `fmt` (one of FORMATS) and the reader's drop counts."""
    if fmt not in READERS:
        raise InputError(
            None, "FORMAT", f"unknown trace format {fmt!r}; choose from {', '.join(FORMATS)}"
        )
    return READERS[fmt](src)


def import_defaults(fmt: str) -> dict[str, str | None]:
    """The defaults of the import options for format `fmt` (DEFAULTS, then the format's own)."""
    return {**DEFAULTS, **FORMAT_DEFAULTS.get(fmt, {})}


def import_catalog(fmt: str, spec: str) -> str | Catalog:
    """The catalog `--catalog` names: a bundled name or YAML path as it is; for the eva format
    a ``.json`` file is Eva's EC2 config (`read_eva_catalog`)."""
    if fmt == "eva" and spec.endswith(".json"):
        return read_eva_catalog(spec)
    return spec
