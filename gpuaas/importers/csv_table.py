"""`csv_rows`: the rows of a CSV file whose header line names its columns (any order).

UTF-8; blank lines and lines starting with ``#`` are skipped; the header must name every
required column, no unknown one and none twice; every row has as many fields as the header.
Each failure is one `InputError` naming the file and the line. The `csv` and `elasticflow`
trace readers share it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from gpuaas.errors import InputError
from gpuaas.files import read_text


def csv_rows(
    path: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: stripped value}) of every row of `path` (module docstring)."""
    source = str(path)
    lines = [
        (n, line)
        for n, line in enumerate(read_text(path, "CSV").splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise InputError(source, None, f"empty trace; expected a header with {', '.join(required)}")
    header_no, header = lines[0]
    names = [h.strip() for h in next(csv.reader([header]))]
    missing = [c for c in required if c not in names]
    if missing:
        raise InputError(source, f"line {header_no}", f"missing column(s) {', '.join(missing)}")
    unknown = [c for c in names if c not in required + optional]
    if unknown:
        raise InputError(
            source,
            f"line {header_no}",
            f"unknown column(s) {', '.join(unknown)}; allowed: {', '.join(required + optional)}",
        )
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise InputError(source, f"line {header_no}", f"column(s) {', '.join(dup)} given twice")
    body = csv.reader(io.StringIO("\n".join(line for _, line in lines[1:])))
    for (n, _), fields in zip(lines[1:], body):
        if len(fields) != len(names):
            raise InputError(
                source, f"line {n}", f"has {len(fields)} field(s), the header has {len(names)}"
            )
        yield n, {k: v.strip() for k, v in zip(names, fields)}
