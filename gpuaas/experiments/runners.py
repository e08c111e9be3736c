"""Runners: where the cells of an experiment run — this process, local processes or Dask.

Every runner warms up the methods first (`gpuaas.experiments.cell.warm_up`: numba kernels
loaded or compiled once, so that cells measure solving) and yields one row per cell as it
finishes. Rows never depend on the runner.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator
from typing import Any

from gpuaas.errors import InputError
from gpuaas.experiments.cell import Cell, failed_row, run_cell, simulate_cell, warm_up

log = logging.getLogger(__name__)


def dask_available() -> bool:
    """Whether dask.distributed can be imported (the `dask` extra)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


DASK_HINT = (
    "for the distributed mode (a Dask LocalCluster or --scheduler): pip install 'gpuaas[dask]'"
)


class SerialRunner:
    """Runs the cells one after another in this process (debugging; the serial baseline)."""

    name = "serial"
    workers = 1

    def __init__(self, methods: Iterable[str], numba_cache_dir: str | None = None):
        self.info = [warm_up(methods, numba_cache_dir)]

    def run(self, cells: list[Cell], strict: bool = False) -> Iterator[dict[str, Any]]:
        """Yield each cell's row as it finishes (`strict`: a failing cell raises its error)."""
        for cell in cells:
            yield simulate_cell(cell) if strict else run_cell(cell)

    def close(self, abort: bool = False) -> None:
        """Nothing to release."""


class ProcessRunner:
    """Runs the cells in local worker processes (concurrent.futures), one cell per process at a time."""

    name = "processes"

    def __init__(
        self, methods: Iterable[str], workers: int | None = None, numba_cache_dir: str | None = None
    ):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = tuple(methods)
        # compile (or load) the kernels here first: the workers then load them from the cache
        self.info = [warm_up(methods, numba_cache_dir)]
        self.workers = workers or os.cpu_count() or 1
        self.pool = ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=warm_up,
            initargs=(methods, numba_cache_dir),
        )

    def run(self, cells: list[Cell], strict: bool = False) -> Iterator[dict[str, Any]]:
        """Yield each cell's row as it finishes (any order; `strict`: a failing cell raises its error)."""
        from concurrent.futures import as_completed

        futures = {self.pool.submit(simulate_cell if strict else run_cell, c): c for c in cells}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker process died
                if strict:
                    raise
                yield failed_row(futures[fut], f"{type(exc).__name__}: {exc}")

    def close(self, abort: bool = False) -> None:
        """Stop the worker processes, dropping cells not started; `abort` also stops running ones.

        Without `abort` (every cell done) the workers exit normally. An interrupted campaign
        must not wait for long cells whose rows would be dropped anyway: their processes are
        terminated (concurrent.futures has no public way to do that).
        """
        procs = list((getattr(self.pool, "_processes", None) or {}).values()) if abort else []
        self.pool.shutdown(wait=not abort, cancel_futures=True)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10)


class DaskRunner:
    """Runs the cells on dask.distributed: a LocalCluster (default) or an existing scheduler.

    The LocalCluster has one single-threaded worker process per core (the kernels are
    CPU-bound; processes avoid the GIL). Every worker is warmed up first (`warm_up`), so cells
    never pay numba compilation.
    """

    name = "dask"

    def __init__(
        self,
        methods: Iterable[str],
        scheduler: str | None = None,
        workers: int | None = None,
        numba_cache_dir: str | None = None,
    ):
        if not dask_available():
            raise InputError(
                None, "scheduler" if scheduler else "backend", f"dask is not installed; {DASK_HINT}"
            )
        from distributed import Client, LocalCluster

        methods = tuple(methods)
        self.cluster = None
        self.futures: list[Any] = []
        if scheduler is None:
            if numba_cache_dir:
                os.environ["NUMBA_CACHE_DIR"] = str(numba_cache_dir)
            warm_up(methods, numba_cache_dir)  # write the cache once, before the workers start
            self.cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout=10)
            except (OSError, TimeoutError) as exc:
                raise InputError(
                    None, "scheduler", f"cannot connect to {scheduler}: {exc}"
                ) from None
            try:  # at least one worker (or the number asked for) before anything is sent
                self.client.wait_for_workers(workers or 1, timeout=60)
            except TimeoutError:
                n = len(self.client.nthreads())
                self.close(abort=True)
                raise InputError(
                    None,
                    "scheduler",
                    f"{n} worker(s) joined {scheduler} within 60 s, {workers or 1} needed",
                ) from None
        try:
            self.info = list(self.client.run(warm_up, methods, numba_cache_dir).values())
        except Exception as exc:  # noqa: BLE001 - e.g. a worker without gpuaas installed
            self.close(abort=True)
            raise InputError(
                None,
                "scheduler",
                f"the workers cannot run gpuaas ({type(exc).__name__}: {exc});"
                " install the same gpuaas on every worker",
            ) from None
        self.workers = max(1, sum(self.client.nthreads().values()))

    def run(self, cells: list[Cell], strict: bool = False) -> Iterator[dict[str, Any]]:
        """Yield each cell's row as it finishes (any order; `strict`: a failing cell raises its error)."""
        from distributed import as_completed

        cell_of = {}
        for c in cells:
            fut = self.client.submit(
                simulate_cell if strict else run_cell, c, key=f"gpuaas-cell-{c.key}", pure=False
            )
            cell_of[fut.key] = c
            self.futures.append(fut)
        for fut in as_completed(self.futures):
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker died with the cell
                if strict:
                    raise
                yield failed_row(cell_of[fut.key], f"{type(exc).__name__}: {exc}")
            fut.release()

    def close(self, abort: bool = False) -> None:
        """Cancel what is left, disconnect, and stop the LocalCluster if this runner started it."""
        if self.futures:
            self.client.cancel(self.futures)
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_runner(
    methods: Iterable[str],
    backend: str = "auto",
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    numba_cache_dir: str | None = None,
) -> Any:
    """The runner for `backend`: "auto" (Dask if installed, else local processes), "dask",
    "processes" or "serial"; a `scheduler` address implies Dask."""
    if backend not in ("auto", "dask", "processes", "serial"):
        raise InputError(
            None,
            "backend",
            f"unknown backend {backend!r}; expected auto, dask, processes or serial",
        )
    if scheduler is not None and backend not in ("auto", "dask"):
        raise InputError(
            None, "scheduler", f"an existing scheduler needs the dask backend, not {backend!r}"
        )
    if backend == "auto":
        if dask_available():
            backend = "dask"
        else:
            log.warning(
                "dask is not installed: running the cells in local processes; %s", DASK_HINT
            )
            backend = "processes"
    if backend == "dask":
        return DaskRunner(methods, scheduler, workers, numba_cache_dir)
    if backend == "processes":
        return ProcessRunner(methods, workers, numba_cache_dir)
    return SerialRunner(methods, numba_cache_dir)
