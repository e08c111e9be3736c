"""`Progress`: what a long command is doing, on stderr, once it has run a few seconds.

`gpuaas generate`, `import` and `bound` name their current step (`progress("timing 15802 jobs
on gcp-us-central1")`); a background thread prints it as ``gpuaas bound: <step> (12 s)`` once
the command has run `AFTER` seconds, again whenever the step changes, and every `EVERY` seconds
while one step lasts. On a terminal only (a pipe or a file stays clean, as `simulate`'s
progress line); elsewhere the same lines go to the ``gpuaas.progress`` logger at INFO level
(``gpuaas -v``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import IO

log = logging.getLogger(__name__)

#: seconds before the first line
AFTER = 3.0
#: seconds between lines while one step lasts, and at least between two lines
EVERY = 10.0
GAP = 2.0
#: how often the thread looks at the step
POLL = 0.5


class Progress:
    """A context manager; call it with each new step (module docstring)."""

    def __init__(self, command: str, stream: IO[str] | None = None, after: float = AFTER) -> None:
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.after = after
        self.step = ""
        self.start = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gpuaas-progress", daemon=True)

    def __call__(self, step: str) -> None:
        self.step = step  # one reference assignment: the thread reads a whole string

    def __enter__(self) -> Progress:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        shown, last = "", 0.0  # the step last printed, and when
        while not self._stop.wait(POLL):
            now, step = time.perf_counter(), self.step
            if not step or now - self.start < self.after:
                continue
            if (step != shown and now - last >= GAP) or now - last >= EVERY:
                shown, last = step, now
                self._emit(f"gpuaas {self.command}: {step} ({now - self.start:.0f} s)")

    def _emit(self, line: str) -> None:
        if self.terminal:
            try:
                print(line, file=self.stream, flush=True)
            except (OSError, ValueError):  # a closed terminal: progress is not worth an error
                pass
        else:
            log.info(line)
