"""`csv_rows`: the rows of a CSV file whose header line names its columns (any order).

UTF-8 (a byte-order mark is ignored); blank lines and lines starting with ``#`` are skipped,
and those after the header are counted in the report as rows commented out (an id that starts
with ``#`` is quoted: ``"#7"``); the header must name every required column, no unknown one
and none twice; every row has as many fields as the header. Each failure is one `InputError`
naming the file and the line. Lines are read one at a time, so memory grows with the rows kept,
not with the file's lines. The `csv` and `elasticflow` trace readers share it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from gpuaas.errors import InputError
from gpuaas.files import csv_fields, read_text
from gpuaas.importers.records import ImportReport

#: the report's reason for rows after the header that start with "#"
COMMENTED = "commented out (line starting with #; quote an id that starts with #)"


def csv_rows(
    path: str, required: tuple[str, ...], optional: tuple[str, ...], report: ImportReport
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: stripped value}) of every row of `path` (module docstring);
    each row and each commented-out row counts in `report.read`."""
    source = str(path)
    names: list[str] | None = None
    for n, line in enumerate(io.StringIO(read_text(path, "CSV")), start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            if names is not None:  # a row commented out, or a comment among the rows: said
                report.read += 1
                report.drop(COMMENTED)
            continue
        if names is None:
            names = _header(line, n, source, required, optional)
            continue
        fields = csv_fields(line, source, f"line {n}")
        if len(fields) != len(names):
            raise InputError(
                source, f"line {n}", f"has {len(fields)} field(s), the header has {len(names)}"
            )
        report.read += 1
        yield n, {k: v.strip() for k, v in zip(names, fields)}
    if names is None:
        raise InputError(source, None, f"empty trace; expected a header with {', '.join(required)}")


def _header(
    line: str, n: int, source: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> list[str]:
    """The column names of the header line `n`, checked."""
    names = [h.strip() for h in csv_fields(line, source, f"line {n}")]
    missing = [c for c in required if c not in names]
    if missing:
        raise InputError(source, f"line {n}", f"missing column(s) {', '.join(missing)}")
    unknown = [c for c in names if c not in required + optional]
    if unknown:
        raise InputError(
            source,
            f"line {n}",
            f"unknown column(s) {', '.join(unknown)}; allowed: {', '.join(required + optional)}",
        )
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise InputError(source, f"line {n}", f"column(s) {', '.join(dup)} given twice")
    return names
