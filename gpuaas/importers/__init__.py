"""Trace importers: public cluster traces and plain CSV turned into gpuaas traces.

Each reader (`gavel`, `alibaba_pai`, `csv_trace`) parses its format into `TraceJob` records
(`records`), with one-line errors naming file, line and field; `build_trace` (`build`) turns
them into a normal
instance/trace dict (the format `gpuaas simulate` reads) on a chosen catalog:

- a job given as model + steps gets, per configuration (v, g), ``steps / steps_per_second`` from
  a throughput table (`gpuaas.throughputs`); a configuration the table lacks is unavailable;
- a job given as a measured duration runs in that time on exactly its requested GPU count, on
  VM types of the GPU model it was measured on (any GPU model with ``any_gpu=True``, an explicit
  assumption) — nothing else is known about it;
- releases are shifted so the first kept job arrives at 0;
- a missing due date is release + U[1, 3] x the job's fastest time and a missing weight
  ω ~ U[0.003, 0.015] $/s (the paper's §4.1 rules, `gpuaas.generator`), drawn from `seed`;
  both are written into the output, so the trace is self-contained.

Jobs no configuration of the catalog can run are an error naming the line, unless
``skip_unrunnable=True`` drops them (they are counted in the report).
"""

from __future__ import annotations

from collections.abc import Callable

from gpuaas.errors import InputError
from gpuaas.importers.alibaba_pai import read_pai
from gpuaas.importers.build import GPU_COUNTS, build_trace, parse_window
from gpuaas.importers.csv_trace import read_csv_trace
from gpuaas.importers.gavel import read_gavel
from gpuaas.importers.records import ImportReport, TraceJob

#: format name (the CLI's FORMAT) -> reader of that format
READERS: dict[str, Callable[[str], tuple[list[TraceJob], ImportReport]]] = {
    "gavel": read_gavel,
    "alibaba-pai-2020": read_pai,
    "csv": read_csv_trace,
}
FORMATS = tuple(READERS)

__all__ = [
    "FORMATS",
    "GPU_COUNTS",
    "READERS",
    "ImportReport",
    "TraceJob",
    "build_trace",
    "parse_window",
    "read_trace",
]


def read_trace(fmt: str, src: str) -> tuple[list[TraceJob], ImportReport]:
    """The jobs of `src` in format `fmt` (one of FORMATS) and the reader's drop counts."""
    if fmt not in READERS:
        raise InputError(
            None, "FORMAT", f"unknown trace format {fmt!r}; choose from {', '.join(FORMATS)}"
        )
    return READERS[fmt](src)
