"""The one output writer (gpuaas.files): regular files atomically, symlinks followed, FIFOs
written through, directories / read-only places / full disks refused in one line."""

import contextlib
import errno
import io
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuaas import files
from gpuaas.cli import cli, main
from gpuaas.errors import InputError

GEN = ["generate", "--nodes", "2", "--jobs", "3", "--seed", "1"]


def _generated() -> str:
    res = CliRunner().invoke(cli, [*GEN, "--json"])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_new_and_regular_files_are_replaced_atomically(tmp_path):
    """A new path is created; an existing file is replaced whole and keeps its mode."""
    out = tmp_path / "out.txt"
    files.write_atomic(out, "one\n")
    assert out.read_text() == "one\n"
    out.chmod(0o640)
    files.write_atomic(out, b"two\n")
    assert out.read_bytes() == b"two\n" and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temporary left


def test_failure_inside_the_block_keeps_the_old_file(tmp_path):
    """An exception while writing leaves the old content and no temporary file."""
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    with pytest.raises(RuntimeError), files.open_output(out) as fh:
        fh.write("partial")
        raise RuntimeError("boom")
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_symlink_is_followed_and_kept(tmp_path):
    """-o LINK writes the file the link points to; the link stays a link."""
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    res = CliRunner().invoke(cli, [*GEN, "-o", str(link)])
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["nodes"] == 2


def test_fifo_is_written_through(tmp_path):
    """-o FIFO streams the output into the FIFO (the FIFO is not replaced by a file)."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    res = CliRunner().invoke(cli, [*GEN, "-o", str(fifo)])
    reader.join(timeout=30)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert json.loads(got[0]) == json.loads(_generated())


def test_directory_and_socket_are_refused(tmp_path):
    """A directory (or socket) as output is one line, exit 2, before any work."""
    res = CliRunner().invoke(cli, [*GEN, "-o", str(tmp_path)])  # click's own check
    assert res.exit_code == 2 and "is a directory" in res.output
    with pytest.raises(InputError) as err:
        files.check_output(tmp_path)
    assert (
        str(err.value)
        == f"{tmp_path}: is a directory; write to a regular file, a FIFO or a character device"
    )
    import socket

    sock_path = Path(tempfile.mkdtemp()) / "s"  # short path: AF_UNIX limits its length
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        with pytest.raises(InputError, match="is a socket"):
            files.check_output(sock_path)


def test_missing_output_directory(tmp_path):
    res = CliRunner().invoke(cli, [*GEN, "-o", str(tmp_path / "no" / "x.json")])
    assert res.exit_code == 2
    assert (
        res.output
        == f"gpuaas: error: {tmp_path / 'no' / 'x.json'}: output directory {str(tmp_path / 'no')!r} does not exist\n"
    )


@contextlib.contextmanager
def _unprivileged():
    """Run as user nobody when root (root ignores directory permissions)."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)


def test_read_only_directory(tmp_path):
    """Output into a directory the user cannot write: one line, exit 2, nothing written."""
    base = Path(tempfile.mkdtemp(prefix="gpuaas-ro-"))
    try:
        base.chmod(0o755)
        ro = base / "ro"
        ro.mkdir(mode=0o555)
        ro.chmod(0o555)
        out = ro / "x.json"
        runner = CliRunner()
        with _unprivileged():
            res = runner.invoke(cli, [*GEN, "-o", str(out)])
            with pytest.raises(InputError, match="cannot write: Permission denied"):
                files.write_atomic(out, "x")  # the writer itself, past the early check
        assert res.exit_code == 2
        assert res.output == f"gpuaas: error: {out}: cannot write: Permission denied\n"
        assert list(ro.iterdir()) == []
    finally:
        (base / "ro").chmod(0o755)
        import shutil

        shutil.rmtree(base)


def test_full_disk_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    """The disk fills while the output file is written (os.write writes part of its bytes,
    then fails with ENOSPC): one line, exit 2, no file and no temporary."""
    real_write, room = os.write, [4096]

    def write(fd, data):
        if fd > 2:  # the output file, not the test's standard streams
            if room[0] == 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            data, room[0] = bytes(data[: room[0]]), room[0] - min(room[0], len(data))
        return real_write(fd, data)

    monkeypatch.setattr(files.os, "write", write)
    out = tmp_path / "x.json"
    res = CliRunner().invoke(cli, [*GEN, "--jobs", "100", "-o", str(out)])
    assert res.exit_code == 2
    assert res.output == f"gpuaas: error: {out}: cannot write: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_full_standard_output_is_one_line(monkeypatch, capsys):
    """Writing to a full standard output (e.g. > /dev/full): one line on stderr, exit 2."""

    class FullStdout(io.StringIO):
        def write(self, s):
            raise OSError(errno.ENOSPC, "No space left on device")

        def fileno(self):
            raise io.UnsupportedOperation("no fileno")

    monkeypatch.setattr(sys, "argv", ["gpuaas", *GEN, "--json"])
    monkeypatch.setattr(sys, "stdout", FullStdout())
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    assert (
        capsys.readouterr().err
        == "gpuaas: error: standard output: cannot write: No space left on device\n"
    )


def test_closed_pipe_on_standard_output():
    """`gpuaas ... | head -c 0`: a one-line error and exit 2, no traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuaas", *GEN, "--jobs", "2000", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 2
    assert "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("gpuaas: error: standard output: cannot write: Broken pipe"), err


def test_json_output_never_holds_nan():
    """to_json names the first non-finite number instead of writing NaN / Infinity."""
    assert files.to_json({"a": [1.0, 2]}, indent=None) == '{"a": [1.0, 2]}'
    with pytest.raises(InputError, match=r"^output\.jobs\[1\]\.cost: is not a finite number"):
        files.to_json({"jobs": [{"cost": 1.0}, {"cost": float("inf")}]})


def test_a_signal_while_the_temporary_is_created_leaves_nothing(tmp_path, monkeypatch):
    """SIGTERM arriving as `open_output` creates its temporary (the file made, the call not yet
    returned) unwinds the command without leaving the temporary: the race
    `tests/test_faults.py::test_signal_removes_temporaries` met now and then in CI, where
    `tempfile.mkstemp` made the file before `open_output` knew its name."""

    class Stop(Exception):
        pass

    def stop(signum, frame):
        raise Stop

    real = os.open

    def open_then_signal(path, flags, *args):
        fd = real(path, flags, *args)
        if str(path).endswith(".tmp"):
            os.kill(os.getpid(), signal.SIGTERM)  # handled at the next bytecode check: in here
        return fd

    old = signal.signal(signal.SIGTERM, stop)
    try:
        monkeypatch.setattr(files.os, "open", open_then_signal)
        with pytest.raises(Stop):
            with files.open_output(tmp_path / "out.json") as fh:
                fh.write("{}")
    finally:
        monkeypatch.undo()
        signal.signal(signal.SIGTERM, old)
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_name_in_use_is_passed_over_and_left_alone(tmp_path, monkeypatch):
    """The temporary's name is new (O_EXCL): a file already bearing it is another's, neither
    written nor removed."""
    names = iter(["a" * 16, "b" * 16])
    monkeypatch.setattr(files.secrets, "token_hex", lambda n: next(names))
    other = tmp_path / f".out.json.{'a' * 16}.tmp"
    other.write_text("theirs")
    files.write_atomic(tmp_path / "out.json", "{}")
    assert (tmp_path / "out.json").read_text() == "{}"
    assert other.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, "out.json"]


def test_report_page_keeps_its_hand_written_text(tmp_path):
    """`write_below_marker`: a new page starts with the GENERATED line; a page's text above the
    line is kept and only what is below it replaced; a page without the line is refused with
    one InputError and left as it was (writing would lose its text)."""
    from gpuaas.files import GENERATED, page_head, write_below_marker

    page = tmp_path / "report.md"
    write_below_marker(page, "\n### t\n\n| a |\n")
    assert page.read_text() == f"{GENERATED}\n\n### t\n\n| a |\n"
    page.write_text("# Title\n\nreading\n\n" + page.read_text())
    write_below_marker(page, "### t\n\n| b |")
    assert page.read_text() == f"# Title\n\nreading\n\n{GENERATED}\n\n### t\n\n| b |\n"
    assert page_head(page) == "# Title\n\nreading\n\n"
    mine = tmp_path / "notes.md"
    mine.write_text("my notes\n")
    with pytest.raises(InputError, match="notes.md.*has no line"):
        write_below_marker(mine, "| c |")
    assert mine.read_text() == "my notes\n"
    with pytest.raises(InputError, match="does not exist"):
        page_head(tmp_path / "missing" / "report.md")
