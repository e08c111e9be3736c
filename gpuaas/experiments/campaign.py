"""A campaign: the cells of a spec that its results file lacks, run and streamed into it.

`run_campaign` sends the cells that the results file does not hold yet to a runner (a Dask
cluster, local processes or this process), streams each finished row to the file (so an
interrupted campaign resumes where it stopped) and records a failing cell with its error
instead of stopping. Only the timing columns (`rows.TIMING_COLUMNS`) differ between two runs of
the same spec.
"""

from __future__ import annotations

import logging
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuaas.experiments.cell import with_bounds
from gpuaas.experiments.runners import make_runner
from gpuaas.experiments.spec import CampaignSpec, expand
from gpuaas.experiments.store import ResultStore

log = logging.getLogger(__name__)


class Progress:
    """done / failed / remaining and an ETA on one line, at most every `interval` seconds.

    On a terminal the line is redrawn in place (default every second); elsewhere (a log file)
    a new line is written, by default every 10 seconds, and always for the last cell.
    """

    def __init__(self, total: int, stream: Any = None, interval: float | None = None):
        self.total, self.done, self.failed = total, 0, 0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (1.0 if self.tty else 10.0)
        self.t0 = time.perf_counter()
        self._last = -math.inf

    def update(self, row: dict[str, Any]) -> None:
        """Count one finished row and redraw when due."""
        self.done += 1
        self.failed += row["status"] != "ok"
        now = time.perf_counter()
        if now - self._last >= self.interval or self.done == self.total:
            self._last = now
            self.stream.write(("\r" if self.tty else "") + self.line() + ("" if self.tty else "\n"))
            self.stream.flush()

    def line(self) -> str:
        """The progress line."""
        elapsed = time.perf_counter() - self.t0
        left = self.total - self.done
        eta = elapsed / self.done * left if self.done else math.nan
        return (
            f"campaign: {self.done - self.failed} done, {self.failed} failed, {left} remaining"
            f" of {self.total}  elapsed {_hms(elapsed)}  ETA {_hms(eta)}"
        )

    def close(self) -> None:
        """End the line on a terminal."""
        if self.tty and self.done:
            self.stream.write("\n")
            self.stream.flush()


def _hms(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--"
    s = round(seconds)
    return (
        f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


@dataclass
class CampaignReport:
    """What one `run_campaign` call did."""

    cells: int  # cells in the spec
    skipped: int  # already in the results file
    ran: int  # run now
    failed: int  # of those run now, how many failed
    seconds: float  # wall time of this call (runner start-up included)
    backend: str
    workers: int
    rows: list[dict[str, Any]]  # every row of the file, in grid order


def run_campaign(
    spec: CampaignSpec,
    output: str | Path,
    *,
    backend: str = "auto",
    scheduler: str | None = None,
    workers: int | None = None,
    retry_failed: bool = False,
    progress: bool | Any = True,
    numba_cache_dir: str | None = None,
) -> CampaignReport:
    """Run the cells of `spec` missing from `output`, streaming one row per cell into it.

    Parameters
    ----------
    spec : CampaignSpec
        The grid (`load_spec`).
    output : path
        Results file (.csv, or .parquet with pyarrow). Cells already in it are skipped, so an
        interrupted campaign resumes; at the end the file is rewritten in grid order. A second
        campaign on the same file while one runs is refused (`ResultStore.locked`).
    backend : {"auto", "dask", "processes", "serial"}
        "auto" uses a Dask LocalCluster when dask is installed, else local processes.
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``).
    workers : int, optional
        Worker processes (default: one per core); with `scheduler`, wait for that many.
    retry_failed : bool
        Run again the cells recorded as failed (their old rows are removed first).
    progress : bool or file
        Progress line on stderr (True), on the given stream, or none (False).
    numba_cache_dir : str, optional
        NUMBA_CACHE_DIR for the workers (default: numba's, shared by processes on one machine).

    Returns
    -------
    CampaignReport
    """
    store = ResultStore(output)
    with store.locked():
        return _run(
            spec, store, backend, scheduler, workers, retry_failed, progress, numba_cache_dir
        )


def _run(
    spec: CampaignSpec,
    store: ResultStore,
    backend: str,
    scheduler: str | None,
    workers: int | None,
    retry_failed: bool,
    progress: bool | Any,
    numba_cache_dir: str | None,
) -> CampaignReport:
    """`run_campaign` with the store locked."""
    t0 = time.perf_counter()
    cells = expand(spec)
    order = [c.key for c in cells]
    if retry_failed:
        store.drop(lambda r: r["status"] == "ok")
    present = {r["cell"] for r in store.load()}
    todo = [c for c in cells if c.key not in present]
    skipped = len(cells) - len(todo)
    failed = 0
    backend_name, n_workers = "none", 0
    if todo:
        runner = make_runner(
            {c.method for c in todo},
            backend,
            scheduler=scheduler,
            workers=workers,
            numba_cache_dir=numba_cache_dir,
        )
        backend_name, n_workers = runner.name, runner.workers
        for info in runner.info:
            log.info(
                "worker %s ready in %.1f s (numba cache %s)",
                info["worker"],
                info["seconds"],
                info["numba_cache_dir"],
            )
            for m, err in info["errors"].items():
                log.warning("warm-up of %s failed on %s: %s", m, info["worker"], err)
        bar = None
        if progress:
            bar = Progress(len(todo), None if progress is True else progress)
        finished = False
        try:
            for row in runner.run(with_bounds(todo)):
                store.append(row)
                failed += row["status"] != "ok"
                if bar is not None:
                    bar.update(row)
            finished = True
        finally:
            if bar is not None:
                bar.close()
            store.close()
            runner.close(abort=not finished)
    rows = store.finalize(order)
    return CampaignReport(
        len(cells),
        skipped,
        len(todo),
        failed,
        time.perf_counter() - t0,
        backend_name,
        n_workers,
        rows,
    )
