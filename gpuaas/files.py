"""Reading the package's input files and writing its output files: every failure is one
InputError naming the file.

**Input** (JSON, YAML, CSV and text, through `read_bytes`): missing file, directory, not UTF-8,
bad syntax with line and column. An input is a regular file (a symlink is followed) of at most
``MAX_INPUT_BYTES`` (`gpuaas.limits`): a device, FIFO or socket is refused before it is opened
and a larger file before it is read, and the read itself stops past the limit (a file that grows,
a /proc file whose size says 0), so that a link to ``/dev/zero`` is one line, not gigabytes.

**Output** goes through one writer, `open_output` (and `write_atomic`, `check_output` built on it):

- a regular file, or a path that does not exist yet, is written to a temporary file in the same
  directory and renamed into place when complete, so a failure leaves neither a partial file
  nor a clobbered old one (a replaced file keeps its permission bits; a new one gets the
  umask's);
- a symbolic link is followed: the rule applies to the file it points to, and the link stays;
- a FIFO or a character device (a pipe, a terminal, ``/dev/null``) is *written through*: the
  output streams into it as it is produced (there is no file to leave behind; opening a FIFO
  waits for a reader, as a shell redirection does);
- a directory, a block device or a socket is refused with one line.

Any OSError (read-only file system, full disk, permission denied ...) becomes
``InputError(path, None, "cannot write: <reason>")``. JSON output is produced by `to_json`,
which never writes NaN or Infinity (they are not JSON). A report page whose tables a script
generates below hand-written text is written by `write_below_marker`, which keeps the text.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import secrets
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import yaml

from gpuaas.errors import InputError
from gpuaas.limits import MAX_INPUT_BYTES, MAX_YAML_NODES


def _not_regular(source: str, mode: int) -> InputError | None:
    """The error for an input that is not a regular file (None for one)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return InputError(source, None, "is a directory, not a file")
    what = (
        "a FIFO (a pipe)"
        if stat.S_ISFIFO(mode)
        else "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    return InputError(source, None, f"is {what}; inputs are read from regular files")


def read_bytes(path: str | Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file `path` (symlinks followed), at most `limit` of them: a
    device, FIFO or socket is refused before it is opened (``/dev/zero`` never ends, a FIFO
    waits for a writer) and a larger file before it is read (module docstring)."""
    source = str(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(source, None, "no such file") from None
    except OSError as exc:
        raise InputError(source, None, f"cannot read: {exc.strerror}") from None
    error = _not_regular(source, mode)
    if error is not None:
        raise error
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())  # the file opened, should it have changed since
            error = _not_regular(source, info.st_mode)
            if error is not None:
                raise error
            data = b"" if info.st_size > limit else fh.read(limit + 1)
            size = max(info.st_size, len(data))
    except OSError as exc:
        raise InputError(source, None, f"cannot read: {exc.strerror}") from None
    if size > limit:
        raise InputError(
            source,
            None,
            f"is {size} bytes, more than the {limit} ({_size(limit)}) an input may have "
            "(gpuaas.limits)",
        )
    return data


def _size(n: int) -> str:
    return f"{n / 2**20:.3g} MiB" if n >= 2**20 else f"{n / 2**10:.3g} KiB"


def _read_text(path: str | Path, kind: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of `path` (`read_bytes`) without a leading byte-order mark (which some
    editors write), line ends as Python's text files read them (CR LF and CR become LF)."""
    data = read_bytes(path, limit)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), None, f"not UTF-8 text (byte {exc.start}); {kind} files are UTF-8"
        ) from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_json(path: str | Path, limit: int = MAX_INPUT_BYTES) -> Any:
    """The JSON document in `path` (at most `limit` bytes)."""
    text = _read_text(path, "JSON", limit)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            str(path), None, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise InputError(str(path), None, "not valid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer of more digits than Python converts (4300)
        raise InputError(str(path), None, f"not valid JSON: {str(exc).split(':')[0]}") from None


class _TooLarge(yaml.YAMLError):
    """A YAML document whose aliases expand to more than `MAX_YAML_NODES` nodes."""

    def __init__(self, nodes: int) -> None:
        super().__init__()
        self.problem = (
            f"its aliases expand to more than {nodes} nodes (gpuaas.limits); "
            "write the values out or use fewer aliases"
        )
        self.problem_mark = None


class BoundedLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a document of more than `MAX_YAML_NODES` nodes once its
    aliases are expanded (a 1 KB "billion laughs" file expands to 10^9), before building it."""

    def compose_document(self) -> Any:
        node = super().compose_document()
        sizes: dict[int, int] = {}

        def size(n: yaml.Node) -> int:  # expanded nodes under n; an alias's node is shared
            if id(n) not in sizes:
                sizes[id(n)] = 0  # an alias loop (which PyYAML cannot build anyway) counts 0
                kids: list[yaml.Node] = []
                if isinstance(n, yaml.MappingNode):
                    kids = [x for pair in n.value for x in pair]
                elif isinstance(n, yaml.SequenceNode):
                    kids = n.value
                total = 1
                for k in kids:
                    total += size(k)
                    if total > MAX_YAML_NODES:
                        raise _TooLarge(MAX_YAML_NODES)
                sizes[id(n)] = total
            return sizes[id(n)]

        if node is not None:
            size(node)
        return node


def load_yaml(text: str) -> Any:
    """The YAML document in `text` (safe types only, aliases bounded: `BoundedLoader`)."""
    return yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a SafeLoader subclass


def read_yaml(path: str | Path) -> Any:
    """The YAML document in `path` (None for an empty file)."""
    text = _read_text(path, "YAML")
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise InputError(str(path), None, f"not valid YAML: {problem}{where}") from None

    except RecursionError:
        raise InputError(str(path), None, "not valid YAML: nested too deeply") from None


def read_text(path: str | Path, kind: str = "text", limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of `path` (`kind` names the format in the not-UTF-8 error, e.g. "CSV";
    at most `limit` bytes)."""
    return _read_text(path, kind, limit)


def csv_fields(line: str, source: str, where: str) -> list[str]:
    """The fields of one CSV line; a line the csv module refuses (a field over its 128 KB
    limit, a NUL byte) is an InputError naming `where` (e.g. "line 7")."""
    try:
        return next(csv.reader([line]), [])
    except csv.Error as exc:
        raise InputError(source, where, f"not valid CSV: {exc}") from None


# ---------------------------------------------------------------------------------------------
# output


def _kind(path: Path) -> tuple[Path, str]:
    """(the path symlinks lead to, "file" | "stream") of an output path; InputError if refused."""
    source = str(path)
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(path).st_mode  # through links: /dev/stdout on a pipe leads to no path
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise InputError(source, None, f"cannot write: {exc.strerror}") from None
    if mode is None or stat.S_ISREG(mode):
        if not target.parent.is_dir():
            shown = path.parent if not path.parent.is_dir() else target.parent  # a link's target
            raise InputError(source, None, f"output directory {str(shown)!r} does not exist")
        return target, "file"
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return target, "stream"
    what = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise InputError(
        source, None, f"is {what}; write to a regular file, a FIFO or a character device"
    )


def check_output(path: str | Path | None, *, stream_ok: bool = True) -> str | None:
    """Check, before any work is done, that `path` can receive output (None passes).

    Refuses a missing output directory, a directory, a block device or a socket, a directory
    or an existing file that is not writable, and (with ``stream_ok=False``, for files that are
    read back, such as campaign results) a FIFO or a character device.
    """
    if path is None:
        return None
    target, kind = _kind(Path(path))
    if kind == "stream":
        if not stream_ok:
            raise InputError(str(path), None, "must be a regular file (it is read back)")
        return str(path)
    where = target if target.exists() else target.parent
    if not os.access(where, os.W_OK):
        code = errno.EROFS if _read_only_fs(where) else errno.EACCES
        raise InputError(str(path), None, f"cannot write: {os.strerror(code)}")
    return str(path)


def distinct_outputs(outputs: dict[str, Any], inputs: dict[str, Any]) -> None:
    """Refuse an output file that is also an input or another output of the command (by name:
    {"-o": path, ...}; None entries are absent): writing it would destroy the input, or one
    output would replace the other. FIFOs and character devices (/dev/null) may repeat."""

    def place(path: Any) -> str | None:
        if path is None:
            return None
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            return None
        return os.path.realpath(path)

    seen = {name: place(p) for name, p in inputs.items()}
    for name, path in outputs.items():
        at = place(path)
        if at is None:
            continue
        for other, there in seen.items():
            if there == at:
                raise InputError(
                    str(path), None, f"{name} is the same file as {other}; it would be overwritten"
                )
        seen[name] = at


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class FullWriter(io.RawIOBase):
    """A raw writer on file descriptor `fd` whose every write is whole or raises.

    ``os.write`` may write part of its bytes (a disk that fills, a file size limit), and
    Python's buffered and text layers drop the rest of a large write without an error; here
    the rest is written again, so the next write reports the failure (ENOSPC, EFBIG, EPIPE)
    and a write of 0 bytes is ENOSPC. The descriptor is not closed with the writer.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            n = os.write(self.fd, view[done:])
            if n == 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            done += n
        return done


def _writer(fd: int, binary: bool, line_buffering: bool = False) -> IO[Any]:
    """A buffered (binary) or UTF-8 text file object writing whole through `FullWriter`."""
    raw = io.BufferedWriter(FullWriter(fd))
    if binary:
        return raw
    return io.TextIOWrapper(raw, encoding="utf-8", line_buffering=line_buffering)


@contextmanager
def checked_stdout() -> Iterator[None]:
    """`sys.stdout` written through `FullWriter` in the block (the console script runs in
    one), so that output cut by a full disk (`--json > file`) is an error, never a file cut
    short. Without a file descriptor (a test's captured output) nothing changes."""
    out = sys.stdout
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    out.flush()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(FullWriter(fd)),
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=out.line_buffering,
    )
    try:
        yield
    finally:
        checked, sys.stdout = sys.stdout, out
        checked.detach()  # unflushed output was reported by the block; fd stays open


@contextmanager
def open_output(path: str | Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """A file object whose content becomes `path`'s when the block ends without an exception
    (module docstring: temporary file + rename, symlinks followed, FIFOs and character devices
    written through). Any OSError, in the block too, is ``InputError(path, None, "cannot
    write: ...")``."""
    source = str(path)
    target, kind = _kind(Path(path))
    tmp: str | None = None
    try:
        if kind == "stream":
            # the path itself: /dev/stdout's target on a pipe, "pipe:[N]", is no path
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            try:
                with _writer(fd, binary) as fh:
                    yield fh
            finally:
                os.close(fd)
            return
        fd = -1
        try:
            for tmp in _temporary_names(target):  # its name known before the file exists
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    break
                except FileExistsError:
                    tmp = None  # another's: not ours to remove
            try:
                old = os.stat(target).st_mode & 0o7777
            except FileNotFoundError:
                umask = os.umask(0)
                os.umask(umask)
                old = 0o666 & ~umask  # made 0600; give the file the usual mode
            os.chmod(tmp, old)
            with _writer(fd, binary) as fh:
                yield fh
        finally:
            if fd >= 0:
                os.close(fd)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise InputError(source, None, f"cannot write: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)


def _temporary_names(target: Path) -> Iterator[str]:
    """Names for `target`'s temporary (hidden, beside it); `open_output` creates each with
    O_EXCL until one is new. Not `tempfile.mkstemp`: a signal unwinding the command
    (`gpuaas.cli.base`) inside it, after it made the file and before the caller had its name,
    left the temporary behind; a name known before the file exists is always cleaned up."""
    for _ in range(100):
        yield str(target.parent / f".{target.name}.{secrets.token_hex(8)}.tmp")
    raise FileExistsError(errno.EEXIST, "no unused temporary name", str(target.parent))


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write `data` (text or bytes) to `path` through `open_output`."""
    with open_output(path, binary=isinstance(data, bytes)) as fh:
        fh.write(data)


#: the line after which a report page is generated (`write_below_marker`): the text above it
#: is written by hand and kept when the page's command writes its tables again
GENERATED = "<!-- generated below this line by the command above; the text above is kept -->"


def page_head(path: str | Path) -> str:
    """The hand-written text of the report page `path`, before its `GENERATED` line ("" for a
    new page or a stream). A page that exists without the line, or that cannot be written (its
    directory missing, a directory), is an InputError: writing it would lose its text or fail.
    A report's command asks before its runs, so that it fails at once."""
    target = Path(path)
    if _kind(target)[1] != "file" or not target.exists():
        return ""
    old = read_text(target, "markdown")
    at = old.find(GENERATED)
    if at < 0:
        raise InputError(
            str(path),
            None,
            f"has no line {GENERATED!r}; put it where the generated tables begin (the text "
            "above it is kept), or write to a new file",
        )
    return old[:at]


def write_below_marker(path: str | Path, generated: str) -> None:
    """Write `generated` (a report's tables) to the markdown page `path` below its hand-written
    text (`page_head`), after the `GENERATED` line."""
    text = page_head(path) + GENERATED + "\n\n" + generated.strip("\n") + "\n"
    write_atomic(path, text)


def to_json(data: Any, indent: int | None = 2) -> str:
    """JSON text of `data`, ending in a newline when indented; a NaN or Infinity anywhere in it
    is an InputError naming its place (JSON cannot hold them, and the input checks should
    have made them impossible)."""
    try:
        text = json.dumps(data, indent=indent, allow_nan=False)
    except ValueError:
        raise InputError(
            None,
            _non_finite(data, "output") or "output",
            "is not a finite number; JSON cannot hold NaN or Infinity",
        ) from None
    return text + "\n" if indent is not None else text


def _non_finite(value: Any, where: str) -> str | None:
    """The place of the first NaN or infinity in `value` (e.g. "output.jobs[2].jct"), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    if isinstance(value, dict):
        items = ((f"{where}.{k}", v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for at, v in items:
        found = _non_finite(v, at)
        if found:
            return found
    return None
