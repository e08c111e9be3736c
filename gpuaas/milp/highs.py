"""The HiGHS backend: a P1Model into highspy (`addVars`, `addRows`, `changeColsIntegrality`),
solved with a time limit that holds, and written as LP or MPS.

HiGHS fixes its thread count once per process (per calling thread): a later run with a
different `threads` fails. `solve_highs` therefore resets HiGHS's scheduler when a call asks
for a thread count other than the one this Python thread last used; do not run HiGHS in two
Python threads at once with different `threads` values (the reset is not thread-safe).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import sys
import tempfile
import threading
import time as _time
from typing import Any

import highspy
import numpy as np

from gpuaas.errors import InputError, SolverError
from gpuaas.files import write_atomic
from gpuaas.milp.builder import INF
from gpuaas.milp.model import P1Model, SparseLP

_scheduler_threads: dict[int, int] = {}  # Python thread id -> HiGHS thread count it initialised


def _set_threads(h: highspy.Highs, threads: int | None) -> None:
    """Use `threads` HiGHS threads, resetting the scheduler HiGHS fixes on its first run."""
    if threads is None:
        return  # 0: whatever this thread's scheduler already uses (HiGHS's default on first run)
    me = threading.get_ident()
    if _scheduler_threads.get(me) != threads:
        highspy.Highs.resetGlobalScheduler(True)
        _scheduler_threads[me] = threads
    h.setOptionValue("threads", int(threads))


_banner_lock = threading.Lock()
_banner_shown = False


def new_highs() -> highspy.Highs:
    """An empty highspy.Highs with output off.

    highspy prints a banner on the process's C-level stdout when the first Highs is made,
    before any option can turn output off; it would corrupt `--json` output, so that first
    construction runs with file descriptor 1 pointed at the null device.
    """
    global _banner_shown
    with _banner_lock:
        if not _banner_shown:
            sys.stdout.flush()
            saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            try:
                h = highspy.Highs()
                try:  # the banner may sit in C stdio's buffer
                    ctypes.CDLL(None).fflush(None)
                except (OSError, AttributeError, TypeError):
                    pass
            finally:
                os.dup2(saved, 1)
                os.close(saved)
                os.close(null)
            _banner_shown = True
        else:
            h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def load_lp(h: highspy.Highs, lp: SparseLP) -> None:
    """Add the columns (bounds, costs) and the CSR rows of `lp` to `h`."""
    h.addVars(lp.n_cols, lp.col_lower, lp.col_upper)
    if lp.n_cols:
        h.changeColsCost(lp.n_cols, np.arange(lp.n_cols, dtype=np.int32), lp.col_cost)
    h.addRows(
        lp.n_rows,
        lp.row_lower,
        lp.row_upper,
        len(lp.data),
        np.asarray(lp.indptr[:-1], dtype=np.int32),
        lp.indices,
        lp.data,
    )


def to_highs(model: P1Model, names: bool = True, offset: bool = True) -> highspy.Highs:
    """A highspy.Highs holding `model` (columns, CSR rows, integrality, the objective's
    constant if `offset` and, if `names`, the names), output off."""
    h = new_highs()
    load_lp(h, model)
    ints = np.flatnonzero(model.col_integer).astype(np.int32)
    if ints.size:
        h.changeColsIntegrality(len(ints), ints, np.full(len(ints), 1, dtype=np.uint8))
    if model.offset and offset:
        h.changeObjectiveOffset(model.offset)
    if names:
        for i, name in enumerate(model.col_names):
            h.passColName(i, name)
        for i, name in enumerate(model.row_names):
            h.passRowName(i, name)
    return h


def write_model(model: P1Model, path: str, offset: bool = True) -> None:
    """Write the model as LP or MPS (by the file's extension, HiGHS's writer), through
    `gpuaas.files.write_atomic` (HiGHS writes a temporary file that is then copied); without
    the objective's constant if not `offset` (PuLP's MPS reader cannot read it)."""
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in (".lp", ".mps"):
        raise InputError(str(path), None, "model file must end in .lp or .mps")
    with tempfile.TemporaryDirectory(prefix="gpuaas-model-") as tmp:
        out = os.path.join(tmp, f"p1{ext}")
        status = to_highs(model, offset=offset).writeModel(out)
        if status == highspy.HighsStatus.kError or not os.path.exists(out):
            raise SolverError(f"HiGHS could not write {path}")
        with open(out, "rb") as fh:
            write_atomic(path, fh.read())


def solve_highs(
    model: P1Model,
    *,
    time_limit: float | None = None,
    gap: float | None = None,
    threads: int | None = None,
    seed: int = 0,
    warm_start: np.ndarray | None = None,
    solver_log: bool = False,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Solve `model` with HiGHS; return {status, values, bound, solver_objective, consistent, ...}.

    status is "optimal", "time_limit" (stopped at a limit, the time or one of `options` such as
    ``mip_max_nodes``, with an incumbent), "no_solution" (stopped without one) or "infeasible";
    values is None without an incumbent. `options` are HiGHS's own. consistent is False
    when the objective of the returned values is not the one HiGHS reports (HiGHS 1.16 can
    return a MIP start as "optimal" with the objective of its presolved space).

    With a time limit, HiGHS runs in a forked child process that is killed at the limit:
    HiGHS checks its time limit only between the steps of its presolve and MIP setup, which
    take several seconds each on N = 20, J = 100 (measured: a 5 s limit stopped after 13-38 s).
    The child reports every improving solution and, periodically, the dual bound, so a killed
    run still returns its incumbent. Without `fork` (not Linux or macOS), or in a daemonic
    process (which may not have children, e.g. some cluster workers), HiGHS runs here.
    """
    if (
        time_limit is None
        or "fork" not in multiprocessing.get_all_start_methods()
        or multiprocessing.current_process().daemon
    ):
        h = _prepared(model, time_limit, gap, threads, seed, warm_start, solver_log, options)
        if h.run() == highspy.HighsStatus.kError:
            raise SolverError(f"HiGHS failed: {h.modelStatusToString(h.getModelStatus())}")
        return _result(model, h)
    return _solve_in_child(
        model, float(time_limit), gap, threads, seed, warm_start, solver_log, options
    )


def _prepared(
    model: P1Model,
    time_limit: float | None,
    gap: float | None,
    threads: int | None,
    seed: int,
    warm_start: np.ndarray | None,
    solver_log: bool,
    options: dict[str, Any] | None = None,
) -> highspy.Highs:
    h = to_highs(model, names=False)
    for key, value in (options or {}).items():  # HiGHS's own options, e.g. mip_max_nodes
        h.setOptionValue(key, value)
    h.setOptionValue("output_flag", bool(solver_log))
    h.setOptionValue("random_seed", int(seed) % 2147483647)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    if gap is not None:
        h.setOptionValue("mip_rel_gap", float(gap))
    _set_threads(h, threads)
    if warm_start is not None:
        idx = np.arange(model.n_cols, dtype=np.int32)
        h.setSolution(model.n_cols, idx, np.asarray(warm_start, dtype=np.float64))
    return h


def _result(model: P1Model, h: highspy.Highs) -> dict[str, Any]:
    """The result dict of a finished HiGHS run."""
    ms = h.getModelStatus()
    info = h.getInfo()
    has = info.primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    if ms == highspy.HighsModelStatus.kInfeasible:
        status = "infeasible"
    elif ms == highspy.HighsModelStatus.kOptimal:
        status = "optimal"
    elif has:
        status = "time_limit"
    else:
        status = "no_solution"
    values = np.array(h.getSolution().col_value) if has and status != "infeasible" else None
    return _checked(
        model,
        {
            "status": status,
            "values": values,
            "bound": float(info.mip_dual_bound),
            "solver_objective": float(info.objective_function_value)
            if values is not None
            else None,
            "solver_status": h.modelStatusToString(ms),
            "nodes": int(info.mip_node_count),
            "lp_iterations": int(info.simplex_iteration_count),
        },
    )


def _checked(model: P1Model, res: dict[str, Any]) -> dict[str, Any]:
    """Add `consistent`: the values have the objective HiGHS reports for them."""
    res["consistent"] = True
    if res["values"] is not None and res["solver_objective"] is not None:
        mine, theirs = (
            float(model.col_cost @ res["values"]) + model.offset,
            float(res["solver_objective"]),
        )
        res["consistent"] = abs(mine - theirs) <= 1e-6 * max(1.0, abs(mine), abs(theirs))
    return res


def _solve_in_child(
    model: P1Model,
    time_limit: float,
    gap: float | None,
    threads: int | None,
    seed: int,
    warm_start: np.ndarray | None,
    solver_log: bool,
    options: dict[str, Any] | None,
) -> dict[str, Any]:
    """solve_highs in a forked process, killed `time_limit` seconds from now (see there)."""
    stop = _time.monotonic() + time_limit
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    args = (send, model, time_limit, gap, threads, seed, warm_start, solver_log, options)
    proc = ctx.Process(target=_child, args=args, daemon=True, name="gpuaas-highs")
    incumbent: tuple[np.ndarray, float] | None = None
    bound = -INF
    done: dict[str, Any] | None = None
    error = None
    try:
        proc.start()
        send.close()
        while done is None and error is None:
            wait = stop - _time.monotonic()
            if wait <= 0:
                break
            if not receive.poll(min(wait, 3600.0)):  # poll() refuses more than ~24 days
                continue
            try:
                kind, *data = receive.recv()
            except EOFError:  # the child died
                error = f"the HiGHS process ended with code {proc.exitcode}"
                break
            if kind == "incumbent":
                incumbent = (data[0], data[1])
                bound = max(bound, data[2])
            elif kind == "bound":
                bound = max(bound, data[0])
            elif kind == "done":
                done = data[0]
            else:
                error = data[0]
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        receive.close()
    if done is not None:
        return done
    if error is not None and incumbent is None:
        raise SolverError(f"HiGHS failed: {error}")
    values, objective = incumbent if incumbent is not None else (None, None)
    return _checked(
        model,
        {
            "status": "time_limit" if values is not None else "no_solution",
            "values": values,
            "bound": bound,
            "solver_objective": objective,
            "solver_status": "Time limit reached",
            "killed": True,
            "nodes": None,
            "lp_iterations": None,
        },
    )


def _child(
    send: Any,
    model: P1Model,
    time_limit: float,
    gap: float | None,
    threads: int | None,
    seed: int,
    warm_start: np.ndarray | None,
    solver_log: bool,
    options: dict[str, Any] | None,
) -> None:  # pragma: no cover - child
    """The forked HiGHS run: improving solutions and bounds go to the parent as they come."""
    try:
        highspy.Highs.resetGlobalScheduler(True)  # the parent's HiGHS worker threads are not here
        _scheduler_threads.clear()
        h = _prepared(model, time_limit, gap, threads, seed, warm_start, solver_log, options)
        last = [0.0]

        def improving(e: Any) -> None:
            d = e.data_out
            send.send(
                (
                    "incumbent",
                    np.array(d.mip_solution),
                    float(d.objective_function_value),
                    float(d.mip_dual_bound),
                )
            )

        def progress(e: Any) -> None:
            now = _time.monotonic()
            if now - last[0] > 0.1:
                last[0] = now
                send.send(("bound", float(e.data_out.mip_dual_bound)))

        h.cbMipImprovingSolution.subscribe(improving)
        h.cbMipInterrupt.subscribe(progress)
        if h.run() == highspy.HighsStatus.kError:
            send.send(("error", f"HiGHS failed: {h.modelStatusToString(h.getModelStatus())}"))
        else:
            send.send(("done", _result(model, h)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        try:
            send.send(("error", repr(exc)))
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(0)
