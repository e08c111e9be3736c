"""The results store: one file of rows (`gpuaas.experiments.rows`), appended as cells finish.

A CSV results file is appended to and flushed row by row, so an interrupted campaign resumes
where it stopped (a last line cut by a crash is dropped); Parquet (the `parquet` extra) is
written at the end from a CSV journal. `read_results` reads either, and files written before a
column existed.
"""

from __future__ import annotations

import csv
import io
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpuaas.errors import InputError
from gpuaas.experiments.rows import (
    ADDED_COLUMNS,
    BOOL_COLUMNS,
    COLUMNS,
    INT_COLUMNS,
    STR_COLUMNS,
    csv_line,
    parse_value,
    readable_header,
    to_csv,
)
from gpuaas.files import check_output, open_output, write_atomic

log = logging.getLogger(__name__)


def _read_csv(path: Path) -> list[dict[str, Any]]:
    """Rows of a campaign CSV, typed; a last line cut by a crash is dropped (and cut from the
    file); a cell given twice is an InputError (two campaigns wrote the file at once)."""
    source = str(path)
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise InputError(source, None, f"not UTF-8 text (byte {exc.start})") from None
    if not text:
        return []
    if not text.endswith("\n"):
        cut = text.rfind("\n") + 1
        log.warning("%s: dropping an incomplete last line (interrupted write)", path)
        text = text[:cut]
        with open(path, "r+b") as fh:
            fh.truncate(len(text.encode("utf-8")))  # bytes, not characters
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    try:
        return _typed_rows(reader, source)
    except csv.Error as exc:
        raise InputError(source, f"line {reader.line_num}", f"not valid CSV: {exc}") from None


def _typed_rows(reader: Any, source: str) -> list[dict[str, Any]]:
    header = next(reader, None)
    if header is None:
        return []
    if not readable_header(header):
        missing = [c for c in COLUMNS if c not in header and c not in ADDED_COLUMNS]
        raise InputError(
            source,
            None,
            "not a results file of this gpuaas version (columns differ"
            + (f", missing {', '.join(missing)}" if missing else "")
            + "); files of the retired compare / "
            "reproduce_paper formats: scripts/convert_results.py",
        )
    rows, lines = [], []
    for rec in reader:
        i = reader.line_num
        if len(rec) != len(header):
            raise InputError(
                source, f"line {i}", f"expected {len(header)} fields, found {len(rec)}"
            )
        try:
            rows.append(
                dict.fromkeys(COLUMNS) | {c: parse_value(c, v) for c, v in zip(header, rec)}
            )
        except ValueError as exc:
            raise InputError(source, f"line {i}", f"cannot read a value: {exc}") from None
        lines.append(f"line {i}")
    return _unique(rows, source, lines)


def _unique(rows: list[dict[str, Any]], source: str, where: list[str]) -> list[dict[str, Any]]:
    """`rows`, or an InputError at the second row of a cell given twice (`where` names each
    row's place): resume, `plot` and the analysis count every row, so a cell that two campaigns
    both ran would count twice."""
    first: dict[Any, str] = {}
    for row, at in zip(rows, where):
        if row["cell"] in first:
            raise InputError(
                source,
                at,
                f"cell {row['cell']} is given twice (first on {first[row['cell']]}): two "
                "campaigns wrote this file at once? keep one row per cell",
            )
        first[row["cell"]] = at
    return rows


def _csv_header(path: Path) -> list[str]:
    with open(path, newline="") as fh:
        return next(csv.reader(fh), [])


def write_csv(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as a results CSV at once (`gpuaas.files.write_atomic`: no partial file)."""
    write_atomic(path, to_csv(rows))


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
            raise InputError(
                str(path),
                None,
                "writing Parquet needs pyarrow (pip install 'gpuaas[parquet]'); or use a .csv file",
            )
        check_output(self.path, stream_ok=False)  # the file is read back to resume
        # the file itself, whatever symlink names it: its lock and journal are beside it, so
        # two campaigns through two aliases of one file share them
        self.real = Path(os.path.realpath(self.path))
        self.journal = (
            self.real.with_name(self.real.name + ".partial.csv") if self.parquet else self.path
        )
        self._fh: Any = None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store for one campaign: an exclusive lock (flock) on ``<file>.lock`` beside
        it, or an InputError naming the process that holds it. Two campaigns appending to one
        file would duplicate cells, and the first to finish would rename the file away from the
        other, whose rows would then be lost; so the second refuses. The file is the one
        symlinks lead to (`os.path.realpath`), so every alias of it shares one lock. The lock
        dies with its process (a campaign killed by SIGKILL leaves the file, not the lock)."""
        import fcntl

        lock = self.real.with_name(self.real.name + ".lock")
        while True:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise InputError(
                    str(self.path),
                    None,
                    f"another campaign (pid {holder}) is writing this results file; "
                    "wait for it to end or write to another file",
                ) from None
            try:  # the holder before may have removed the file between our open and flock
                same = os.stat(lock).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            yield
        finally:
            os.unlink(lock)  # while still holding it: a waiting process sees a new file
            os.close(fd)

    def load(self) -> list[dict[str, Any]]:
        """Every row already in the file (and the journal); InputError if a cell is in it twice."""
        rows = []
        if self.parquet and self.path.exists():
            rows.extend(read_results(self.path))
        where = [f"row {i + 1}" for i in range(len(rows))]
        if self.journal.exists():
            journal = _read_csv(self.journal)
            if _csv_header(self.journal) not in ([], COLUMNS):  # a file of an older version
                write_csv(self.journal, journal)  # (rows or only its header): rows appended next
                # need today's columns, or the file no longer reads
            rows.extend(journal)
            where += [f"{self.journal.name} row {i + 1}" for i in range(len(journal))]
        return _unique(rows, str(self.path), where)

    def drop(self, keep: Callable[[dict[str, Any]], bool]) -> int:
        """Rewrite the file without the rows `keep` rejects; returns how many were dropped."""
        rows = self.load()
        kept = [r for r in rows if keep(r)]
        if len(kept) != len(rows):
            self._rewrite(kept)
        return len(rows) - len(kept)

    def append(self, row: dict[str, Any]) -> None:
        """Write one row and flush it, so a crash loses at most the cell being written."""
        with self._writing():
            if self._fh is None:
                new = not self.journal.exists() or self.journal.stat().st_size == 0
                self._fh = open(self.journal, "a", newline="")  # noqa: SIM115 - kept open
                if new:
                    self._fh.write(csv_line(dict(zip(COLUMNS, COLUMNS))))
            self._fh.write(csv_line(row))
            self._fh.flush()

    def close(self) -> None:
        """Close the file (rows already written stay)."""
        if self._fh is not None:
            fh, self._fh = self._fh, None
            with self._writing():
                fh.close()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """An OSError of the block (a full disk: its errors name no file) as an InputError
        naming the file written, not "standard output"; a row cut by it is dropped on resume."""
        try:
            yield
        except OSError as exc:
            if self._fh is not None:
                fh, self._fh = self._fh, None
                try:
                    fh.close()  # flushes the rest of the row again, which fails again
                except OSError:
                    pass
            raise InputError(
                str(self.journal), None, f"cannot write: {exc.strerror or exc}"
            ) from None

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
            write_csv(self.path, rows)


def _arrow_schema() -> Any:
    import pyarrow as pa

    def kind(c: str) -> Any:
        if c in BOOL_COLUMNS:
            return pa.bool_()
        return pa.int64() if c in INT_COLUMNS else pa.string() if c in STR_COLUMNS else pa.float64()

    return pa.schema([(c, kind(c)) for c in COLUMNS])


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as a Parquet file (typed columns, missing values null) through `open_output`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(
        [{c: r.get(c) for c in COLUMNS} for r in rows], schema=_arrow_schema()
    )
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
        raise InputError(
            str(path), None, "reading Parquet needs pyarrow (pip install 'gpuaas[parquet]')"
        )
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise InputError(str(path), None, f"not a readable Parquet file: {exc}") from None
    if not readable_header(table.column_names):
        raise InputError(
            str(path), None, "not a results file of this gpuaas version (columns differ)"
        )
    rows = [dict.fromkeys(COLUMNS) | r for r in table.to_pylist()]
    return _unique(rows, str(path), [f"row {i + 1}" for i in range(len(rows))])
