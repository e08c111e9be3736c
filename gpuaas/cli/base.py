"""The `gpuaas` command group and what every command shares: one-line errors (exit code 2, 3
no result), the option types, JSON or human output, presets, the compile notice and `main`."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

import gpuaas
from gpuaas.errors import GpuaasError, InputError
from gpuaas.files import checked_stdout, to_json, write_atomic
from gpuaas.limits import MAX_JOBS, MAX_NODES, MAX_SECONDS, MAX_SEED
from gpuaas.methods import method_options
from gpuaas.objective import OBJECTIVES


class UserError(click.ClickException):
    """Bad input or an impossible request (exit code 2), or no result (3): one line on stderr."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(one_line(message))
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"gpuaas: error: {self.format_message()}", err=True)


class FloatRange(click.FloatRange):
    """click.FloatRange that also refuses NaN (which compares false with both bounds)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if rv != rv:
            self.fail(f"{value!r} is not a number", param, ctx)
        return rv


#: The option types of every command: one seed range, one range of seconds, node and job counts.
SEED = click.IntRange(0, MAX_SEED)
SECONDS = FloatRange(0, MAX_SECONDS, min_open=True)
SECONDS_OR_ZERO = FloatRange(0, MAX_SECONDS)
NODES = click.IntRange(1, MAX_NODES)
JOBS = click.IntRange(1, MAX_JOBS)
WORKERS = click.IntRange(1, 1024)


class Group(click.Group):
    """Turns every GpuaasError raised by a command into a UserError with the error's exit code
    (2 bad input, 3 no result), and an OSError that escaped (e.g. writing to a full standard
    output) into the same one line."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """click's main, except that in standalone mode (the console script, click's test
        runner) every usage or input error is one line on stderr, exit 2 (3: no result), and
        standard output that cannot be written (full disk, closed pipe) too."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, "gpuaas", complete_var, False, **extra)
            sys.stdout.flush()
        except click.exceptions.Abort:
            click.echo("gpuaas: aborted", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            hint = ""
            if isinstance(exc, click.UsageError):
                hint = f" (see '{exc.ctx.command_path if exc.ctx else 'gpuaas'} --help')"
            click.echo(f"gpuaas: error: {one_line(exc.format_message())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except OSError as exc:  # flushing standard output at the end
            _quiet_stdout()
            click.echo(f"gpuaas: error: {_os_error(exc)}", err=True)
            sys.exit(2)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GpuaasError as exc:
            raise UserError(str(exc), exc.exit_code) from None
        except OSError as exc:
            raise UserError(_os_error(exc)) from None
        except RecursionError:  # e.g. options nested thousands deep in a state or spec
            raise UserError("input nested too deeply") from None
        except MemoryError:
            raise UserError("out of memory (see the limits in instances/README.md)") from None


def one_line(text: str) -> str:
    """`text` with its control characters (newlines ...) escaped: an error is one line."""
    return text.translate(_CONTROL)


_CONTROL = {i: f"\\x{i:02x}" for i in range(32)}


def _os_error(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "standard output"
    return f"{where}: cannot write: {exc.strerror or exc}"


def emit(data: Any, as_json: bool, human: str, out: str | None) -> None:
    """Write JSON to `out` (through `gpuaas.files.open_output`) or stdout; print the human text
    otherwise."""
    text = to_json(data)
    if out is not None:
        write_atomic(out, text)
    if as_json and out is None:
        click.echo(text, nl=False)
    elif not as_json:
        click.echo(human)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(gpuaas.__version__, prog_name="gpuaas")
@click.option("-v", "--verbose", count=True, help="Log progress to stderr (-vv for debug).")
def cli(verbose: int) -> None:
    """Schedule deep-learning training jobs on rented cloud GPU VMs.

    Decides which VMs to rent, how to split their GPUs among jobs and which jobs run now or
    wait, minimising VM rental plus due-date tardiness cost (Filippini et al., IEEE TSC 2023).
    """
    if verbose:
        logging.basicConfig(
            level=logging.DEBUG if verbose > 1 else logging.INFO,
            format="%(asctime)s %(name)s %(message)s",
            stream=sys.stderr,
        )


PRESET_HELP = "YAML file of method options (e.g. heuristics/path_relinking.yaml)."


def _with_preset(
    ctx: click.Context,
    preset: str | None,
    method: str,
    time_limit: float | None,
    objective: str | None = None,
) -> tuple[str, dict[str, Any], float | None, set[str], str | None]:
    """(method, options, time limit, the names of those taken from the `--preset` file, the
    objective) with the file's, if any; the file's method applies unless `--method` was given,
    its objective unless `--objective` was. The objective is passed on to a method that solves
    under either (milp, hierarchical)."""
    options: dict[str, Any] = {}
    taken: set[str] = set()
    if preset is not None:
        from gpuaas.heuristics.presets import load_preset, preset_options

        data = load_preset(preset)
        if ctx.get_parameter_source("method") is click.core.ParameterSource.DEFAULT:
            method = data.get("method", method)
        options = preset_options(data, method, preset)
        taken = set(options)
        if time_limit is None and data.get("time_limit") is not None:
            time_limit = data["time_limit"]
            taken.add("time_limit")
        if objective is None and data.get("objective") is not None:
            objective = data["objective"]
            if objective not in OBJECTIVES:
                raise InputError(
                    preset,
                    "objective",
                    f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}",
                )
    if objective is not None and "objective" in method_options(method):
        options["objective"] = objective
    return method, options, time_limit, taken, objective


@contextlib.contextmanager
def _blame(preset: str | None, taken: set[str]) -> Iterator[None]:
    """Name the preset file in an error about an option value it set (the methods check their
    options when called, without knowing where the values came from)."""
    try:
        yield
    except InputError as e:
        if preset is not None and e.source is None and e.field in taken:
            raise InputError(preset, e.field, e.problem) from None
        raise


COMPILE_NOTICE = "gpuaas: compiling kernels (first run only, about 30 s of CPU time)"


def compile_notice() -> None:
    """Print `COMPILE_NOTICE` on stderr, once, when numba starts compiling a kernel, i.e. when
    its cache has no usable entry (first run, new numba, changed source): numba signals a
    "numba:compile" event only after its cache lookup failed, so a cached run prints nothing."""
    from numba.core import event

    if any(type(x).__name__ == "CompileNotice" for x in event._registered.get("numba:compile", [])):
        return  # once per process

    class CompileNotice(event.Listener):
        shown = False

        def on_start(self, ev: event.Event) -> None:
            if not self.shown:
                self.shown = True
                click.echo(COMPILE_NOTICE, err=True)

        def on_end(self, ev: event.Event) -> None:
            pass

    event.register("numba:compile", CompileNotice())


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds the command like Ctrl-C, so that every output
    file's temporary is removed (`gpuaas.files.open_output`) and a campaign's lock released."""


_received: list[int] = []  # the signals `_terminate` was called for, in order


def _terminate(signum: int, frame: Any) -> None:
    _received.append(signum)
    raise Terminated(signum)


def _unraisable(arg: Any) -> None:
    """Say nothing of a `Terminated` that a callback could not raise (`main` acts on it)."""
    if not isinstance(arg.exc_value, Terminated):
        sys.__unraisablehook__(arg)


def main() -> None:
    """Console-script entry point (`Group.main` formats every error in one line; standard
    output is written whole or fails, `gpuaas.files.checked_stdout`). SIGTERM and SIGHUP
    unwind the command (`Terminated`), then end the process by the same signal."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    sys.unraisablehook = _unraisable
    compile_notice()
    try:
        with checked_stdout():
            cli.main(prog_name="gpuaas")
    except BaseException:
        # A signal that came while numba compiled a kernel is raised inside an LLVM callback,
        # which ignores it; numba then fails with its own error (a kill left a traceback and
        # exit 1). The recorded signal, not the exception that reached here, says why it ended.
        if not _received:
            raise
    if _received:  # also when the command ended normally after its `Terminated` was ignored
        signum = _received[0]
        click.echo(f"gpuaas: stopped by {signal.Signals(signum).name}", err=True)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _quiet_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
