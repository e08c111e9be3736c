"""`gpuaas.progress.Progress`: a long command's steps on stderr, after a few seconds only."""

from __future__ import annotations

import io
import logging
import time

from gpuaas import progress as progress_module
from gpuaas.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_quiet_before_after_then_each_new_step(monkeypatch):
    monkeypatch.setattr(progress_module, "POLL", 0.01)
    monkeypatch.setattr(progress_module, "GAP", 0.0)
    out = Terminal()
    with Progress("bound", out, after=0.3) as say:
        say("per-job bound")
        time.sleep(0.1)
        assert out.getvalue() == ""  # a command done within `after` prints nothing
        time.sleep(0.4)
        say("capacity LP")
        time.sleep(0.2)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("gpuaas bound: per-job bound (")
    assert lines[-1].startswith("gpuaas bound: capacity LP (") and len(lines) == 2


def test_not_a_terminal_goes_to_the_log(monkeypatch, caplog):
    monkeypatch.setattr(progress_module, "POLL", 0.01)
    out = io.StringIO()
    with caplog.at_level(logging.INFO, logger="gpuaas.progress"):
        with Progress("import", out, after=0.0) as say:
            say("reading t.csv")
            time.sleep(0.2)
    assert out.getvalue() == ""
    assert any("gpuaas import: reading t.csv" in r.getMessage() for r in caplog.records)
