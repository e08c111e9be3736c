"""The `gpuaas` command line: solve, check, generate, ... (one-line errors, exit code 2)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import numpy as np

import gpuaas
from gpuaas.errors import GpuaasError, InputError
from gpuaas.experiments.analysis import BASELINE, REFERENCE
from gpuaas.files import (
    check_output,
    checked_stdout,
    distinct_outputs,
    read_json,
    to_json,
    write_atomic,
)
from gpuaas.importers import FORMATS as IMPORT_FORMATS
from gpuaas.instance import Instance, load_instance
from gpuaas.limits import MAX_COUNT, MAX_JOBS, MAX_NODES, MAX_SECONDS, MAX_SEED
from gpuaas.methods import DEFAULT_METHOD, METHODS, SPOT_METHODS, method_options
from gpuaas.methods import solve as solve_instance
from gpuaas.noise import DEFAULT_NOISE_MODEL, NOISE_MODELS
from gpuaas.objective import OBJECTIVES
from gpuaas.reconfiguration import (
    DEFAULT_CHECKPOINT,
    DEFAULT_OVERHEAD,
    DEFAULT_STARTUP,
    PAPER_COSTS,
)
from gpuaas.run_config import RunConfig


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


@cli.command()
@click.argument("instance_file", type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--method",
    type=click.Choice(list(METHODS)),
    default=DEFAULT_METHOD,
    show_default=True,
    help="Solution method.",
)
@click.option(
    "--seed",
    type=SEED,
    default=1,
    show_default=True,
    help="Random seed (same seed, same solution).",
)
@click.option(
    "--time-limit", type=SECONDS, default=None, help="Stop the solver after this many seconds."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the solution as JSON (format: docs/design.md §10).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the JSON solution to this file."
)
@click.option("--preset", type=click.Path(dir_okay=False), help=PRESET_HELP)
@click.option(
    "--gap",
    type=FloatRange(0, 1e9),
    default=None,
    help="milp: stop at this relative MIP gap (e.g. 0.05).",
)
@click.option("--threads", type=click.IntRange(1, 256), default=None, help="milp: solver threads.")
@click.option(
    "--warm-start",
    "warm_method",
    type=click.Choice([m for m in METHODS if m != "milp"] + ["none"]),
    default=None,
    help="milp: solve with this method first (within the time limit); its solution is "
    "returned unless the solver finds a better one (P1$: the solver starts from it) "
    "[default: incremental for P1$, greedy for P1a; none: no warm start].",
)
@click.option(
    "--solver", default=None, help="milp: 'highs' (default), 'cbc' or another PuLP solver name."
)
@click.option(
    "--write-lp",
    type=click.Path(dir_okay=False),
    default=None,
    help="milp: also write the model to this LP file.",
)
@click.option(
    "--write-mps",
    type=click.Path(dir_okay=False),
    default=None,
    help="milp: also write the model to this MPS file.",
)
@click.option(
    "--p1n/--no-p1n",
    default=None,
    help="milp: require exactly min(N, J) open nodes (P1n; default on for P1a, off for P1$).",
)
@click.option(
    "--objective",
    type=click.Choice(OBJECTIVES),
    default=None,
    help="The objective reported (and solved by milp, hierarchical): 'dollars', P1$, what the "
    "plan costs (formulations/P1D.md); 'p1a', the paper's f_OBJ [default: the preset's, "
    "else dollars].",
)
@click.pass_context
def solve(
    ctx: click.Context,
    instance_file: str,
    method: str,
    seed: int,
    time_limit: float | None,
    as_json: bool,
    output: str | None,
    preset: str | None,
    gap: float | None,
    threads: int | None,
    warm_method: str | None,
    solver: str | None,
    write_lp: str | None,
    write_mps: str | None,
    p1n: bool | None,
    objective: str | None,
) -> None:
    """Solve the scheduling problem of INSTANCE_FILE at its `time` (jobs with release <= time).

    The objective printed is P1$, what the plan costs in dollars, the same for every method;
    the paper's presets (heuristics/*.yaml) and --objective p1a print the paper's f_OBJ (P1a).
    With --method milp the output adds the solver's status, best bound and gap. Exit codes:
    0 solved, 2 bad input, 3 no solution (e.g. a time limit reached before any solution).
    """
    check_output(output)
    distinct_outputs(
        {"-o": output, "--write-lp": write_lp, "--write-mps": write_mps},
        {"INSTANCE_FILE": instance_file, "--preset": preset},
    )
    milp_options = {
        k: v
        for k, v in (
            ("gap", gap),
            ("threads", threads),
            ("solver", solver),
            ("write_lp", check_output(write_lp)),
            ("write_mps", check_output(write_mps)),
            ("p1n", p1n),
        )
        if v is not None
    }
    if (milp_options or warm_method) and method != "milp":
        raise InputError(
            None,
            "options",
            "--gap, --threads, --warm-start, --solver, --write-lp, "
            "--write-mps and --p1n apply to --method milp only",
        )
    method, options, time_limit, taken, objective = _with_preset(
        ctx, preset, method, time_limit, objective
    )
    instance = load_instance(instance_file).released()
    options.update(milp_options)
    if warm_method is not None:
        options["warm_start"] = None if warm_method == "none" else warm_method
    with _blame(preset, taken - set(milp_options) - {"warm_start"}):
        solution = solve_instance(instance, method, seed=seed, time_limit=time_limit, **options)
    data = solution.to_dict(objective or "dollars")
    emit(data, as_json, _human_solution(data), output)


def _human_solution(data: dict[str, Any]) -> str:
    jobs = data["jobs"]
    run = [j for j in jobs if j["node"] is not None]
    lines = [
        f"method     {data['method']}",
        f"objective  {data['objective']:.6g}  "
        + (
            "(f_OBJ, P1a)"
            if data["objective_function"] == "p1a"
            else "(P1$, what the plan costs in $)"
        ),
        f"nodes      {len(data['nodes'])} open",
        f"jobs       {len(run)} running, {len(jobs) - len(run)} postponed",
        f"seconds    {data['stats'].get('seconds', float('nan')):.3f}",
    ]
    for k in ("status", "bound", "gap"):
        if k in data["stats"]:
            lines.append(f"{k:<10} {data['stats'][k]}")
    for nd in data["nodes"]:
        on = [f"{j['id']}({j['gpus']})" for j in run if j["node"] == nd["node"]]
        lines.append(f"  node {nd['node']:>3} {nd['vm']:<6} {' '.join(on)}")
    return "\n".join(lines)


@cli.command()
@click.argument("instance_file", type=click.Path(dir_okay=False))
@click.argument("solution_file", type=click.Path(dir_okay=False))
@click.option("--p1n", is_flag=True, help="Also require exactly min(N, J) open nodes (P1n).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check(instance_file: str, solution_file: str, p1n: bool, as_json: bool) -> None:
    """Validate SOLUTION_FILE against INSTANCE_FILE and recompute its objective (the one its
    `objective_function` names: P1$ for `gpuaas solve`'s files, P1a for the paper presets' and
    for files without it).

    Exits 0 when the solution is valid; 1 when it is not: infeasible, a job listed twice or
    missing, or a stated objective that is not a number or differs from the recomputed one
    (relative tolerance 1e-6); 2 on unreadable or malformed input.
    """
    import math

    from gpuaas.validator import check_file

    instance = load_instance(instance_file).released()
    data = read_json(solution_file)
    report = check_file(instance, data, solution_file, p1n=p1n)
    kind = data.get("objective_function", "p1a")
    kind = kind if kind in OBJECTIVES else "p1a"
    claimed = data.get("objective")
    number = (
        not isinstance(claimed, bool)
        and isinstance(claimed, (int, float))
        and math.isfinite(claimed)
    )
    if as_json:
        click.echo(
            to_json(
                {
                    "valid": report.ok,
                    "errors": report.errors,
                    "objective": report.value(kind),
                    "objective_function": kind,
                    "claimed_objective": claimed if number else None,
                }
            ),
            nl=False,
        )
    else:
        click.echo(
            f"{'valid' if report.ok else 'INVALID'}  objective {report.value(kind):.6g}"
            + (" (P1a)" if kind == "p1a" else " (P1$)")
            + (f"  (file says {claimed:.6g})" if number else "")
        )
        for e in report.errors:
            click.echo(f"  {e}")
    sys.exit(0 if report.ok else 1)


def disruption_options(f: Any) -> Any:
    """--max-moves and --moves-per-hour: the disruption limits of a simulation."""
    f = click.option(
        "--moves-per-hour",
        type=click.IntRange(0, MAX_COUNT),
        default=None,
        help="At most this many voluntary moves (migrations, preemptions) in any hour.",
    )(f)
    return click.option(
        "--max-moves",
        type=click.IntRange(0, MAX_COUNT),
        default=None,
        help="At most this many voluntary moves per job (a lost spot VM does not count).",
    )(f)


def reconfiguration_options(f: Any) -> Any:
    """--overhead, --startup and --paper-costs: the reconfiguration costs of a simulation."""
    f = click.option(
        "--paper-costs",
        is_flag=True,
        help="The paper's setting: no restart overhead, no VM start-up (0 and 0).",
    )(f)
    f = click.option(
        "--startup",
        type=SECONDS_OR_ZERO,
        default=None,
        help=f"Seconds a VM opened or resized is billed before it runs jobs [default: {DEFAULT_STARTUP:g}].",
    )(f)
    return click.option(
        "--overhead",
        type=SECONDS_OR_ZERO,
        default=None,
        help=f"Seconds of work a job loses per migration or preemption [default: {DEFAULT_OVERHEAD:g}].",
    )(f)


def spot_options(f: Any) -> Any:
    """--spot, --availability, --checkpoint and --notice: spot capacity (docs/spot.md)."""
    f = click.option(
        "--notice",
        type=SECONDS_OR_ZERO,
        default=None,
        help="Seconds a job needs to write a checkpoint on an interruption notice; if the "
        "provider's warning is that long (AWS 120, GCP and Azure 30), an interrupted job "
        "loses only the restart overhead [default: no checkpoint on notice].",
    )(f)
    f = click.option(
        "--checkpoint",
        type=SECONDS_OR_ZERO,
        default=DEFAULT_CHECKPOINT,
        show_default=True,
        help="Seconds between a job's checkpoints (a job's own `checkpoint` wins; 0: "
        "continuous): an interrupted job loses the work since its last one.",
    )(f)
    f = click.option(
        "--availability",
        metavar="SOURCE",
        default=None,
        help="Spot capacity to replay (implies --spot): 'model[:rate=R,spell_rate=S,"
        "spell_mean=M,seed=K]' or trace files '[VM=]PATH,...' (Can't Be Late .json, "
        "Bamboo/Parcae node-event .csv, Bamboo GCP count-log .txt) [default with --spot: "
        "model].",
    )(f)
    return click.option(
        "--spot",
        is_flag=True,
        help="Let the catalog's spot VMs (spot price, interruptible) be used; availability "
        "from the default model unless --availability names one.",
    )(f)


def spot_settings(
    spot: bool, availability: str | None, checkpoint: float, notice: float | None
) -> dict[str, Any]:
    """The RunConfig fields of the spot options."""
    return {
        "spot": spot or availability is not None,
        "availability": availability,
        "checkpoint": checkpoint,
        "notice": notice,
    }


def require_spot_catalog(trace: Instance, spot: bool, availability: str | None) -> None:
    """--spot and --availability need a catalog with spot prices (one line naming it)."""
    if spot or availability is not None:
        from gpuaas.availability import require_spot_prices

        require_spot_prices(trace.catalog.without_spot())


def reconfiguration(overhead: float | None, startup: float | None, paper: bool) -> dict[str, float]:
    """The overhead and start-up to simulate: explicit values, else the paper's or the defaults."""
    base = PAPER_COSTS if paper else {"overhead": DEFAULT_OVERHEAD, "startup": DEFAULT_STARTUP}
    return {
        "overhead": base["overhead"] if overhead is None else overhead,
        "startup": base["startup"] if startup is None else startup,
    }


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--method",
    type=click.Choice(list(METHODS)),
    default=DEFAULT_METHOD,
    show_default=True,
    help="Solution method called at every event.",
)
@click.option(
    "--seed", type=SEED, default=1, show_default=True, help="Seed of the method and the noise."
)
@click.option("--nodes", type=NODES, default=None, help="Override the trace's N.")
@click.option(
    "--noise",
    type=FloatRange(0, 1, max_open=True),
    default=0.0,
    show_default=True,
    help="Mean absolute relative error of predicted durations (paper: 0.11; uniform model: "
    "below 0.5).",
)
@click.option(
    "--noise-model",
    type=click.Choice(NOISE_MODELS),
    default=DEFAULT_NOISE_MODEL,
    show_default=True,
    help="How actual durations are drawn: one uniform factor per job, one log-normal factor "
    "per job, or log-normal per job and configuration (gpuaas/noise.py).",
)
@click.option(
    "--oracle",
    is_flag=True,
    help="Tell the method the actual durations (what a prediction error is measured against).",
)
@click.option(
    "--learn-speed/--no-learn-speed",
    default=True,
    show_default=True,
    help="Estimate each job's speed from its measured progress and plan with it.",
)
@disruption_options
@reconfiguration_options
@spot_options
@click.option(
    "--tick",
    type=SECONDS,
    default=None,
    help="Rescheduling interval when nothing happens (default: the method's, else H).",
)
@click.option(
    "--time-limit", type=SECONDS, default=None, help="Time limit of the method at each event (s)."
)
@click.option("--preset", type=click.Path(dir_okay=False), help=PRESET_HELP)
@click.option(
    "--log",
    "log_file",
    type=click.Path(dir_okay=False),
    help="Write the event log (JSON lines, one per interval between events).",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress (a bar on a terminal, elsewhere a line every 10 s of a long run).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON (format: docs/design.md §10)."
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the JSON result to this file."
)
@click.pass_context
def simulate(
    ctx: click.Context,
    trace_file: str,
    method: str,
    seed: int,
    nodes: int | None,
    noise: float,
    noise_model: str,
    oracle: bool,
    learn_speed: bool,
    max_moves: int | None,
    moves_per_hour: int | None,
    overhead: float | None,
    startup: float | None,
    paper_costs: bool,
    spot: bool,
    availability: str | None,
    checkpoint: float,
    notice: float | None,
    tick: float | None,
    time_limit: float | None,
    preset: str | None,
    log_file: str | None,
    quiet: bool,
    as_json: bool,
    output: str | None,
) -> None:
    """Replay the jobs of TRACE_FILE through the online rescheduler; report costs and metrics.

    Exit codes: 0 done, 2 bad input (e.g. a tick needing more than 1000 events per job),
    3 a run that cannot end (stopped by the simulator's guards; no output file).
    """
    from gpuaas.simulator import simulate as run_simulation

    check_output(output)
    check_output(log_file)
    distinct_outputs(
        {"-o": output, "--log": log_file}, {"TRACE_FILE": trace_file, "--preset": preset}
    )
    method, options, time_limit, taken, _ = _with_preset(ctx, preset, method, time_limit)
    trace = load_instance(trace_file)
    require_spot_catalog(trace, spot, availability)
    if time_limit is not None:
        options["time_limit"] = time_limit
    with _blame(preset, taken):
        config = RunConfig(
            method=method,
            seed=seed,
            nodes=nodes,
            noise=noise,
            noise_model=noise_model,
            oracle=oracle,
            learn_speed=learn_speed,
            max_moves=max_moves,
            moves_per_hour=moves_per_hour,
            tick=tick,
            options=options,
            **reconfiguration(overhead, startup, paper_costs),
            **spot_settings(spot, availability, checkpoint, notice),
        )
        result = run_simulation(trace, config=config, log=log_file, progress=not quiet)
    emit(result.to_dict(), as_json, result.summary(), output)


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option("--nodes", type=click.IntRange(min=1), default=None, help="Override the trace's N.")
@click.option(
    "--slot",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Slot length of the capacity LP in seconds [default: the smallest multiple of "
    "1 h giving at most 50 000 columns, at most 1 day; beyond, groups of consecutive jobs].",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds for the capacity LPs [default: 120]; then a valid dual bound is reported.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the bounds as JSON.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the JSON bounds to this file."
)
@click.option(
    "--spot",
    is_flag=True,
    help="Spot VMs at the spot price, their capacity that of --availability (in hindsight).",
)
@click.option(
    "--availability",
    metavar="SOURCE",
    default=None,
    help="Spot capacity (implies --spot): a model or trace files, as for simulate "
    "[default with --spot: model, seed --seed].",
)
@click.option("--seed", type=SEED, default=1, show_default=True, help="Seed of a spot model.")
def bound(
    trace_file: str,
    nodes: int | None,
    slot: float | None,
    time_limit: float | None,
    as_json: bool,
    output: str | None,
    spot: bool,
    availability: str | None,
    seed: int,
) -> None:
    """The lowest total cost (VM + tardiness) any schedule of TRACE_FILE could reach.

    The best of the per-job bound (each job alone, cheapest mix of configurations) and the
    capacity LP (N nodes, time slots), for the trace's predicted times (formulations/BOUND.md);
    with --spot, spot VMs at the spot price within the capacity of the availability (the one
    `gpuaas simulate --spot --seed S` replays for the same source and seed).
    """
    from gpuaas.bounds import bound as compute_bound
    from gpuaas.progress import Progress

    check_output(output)
    distinct_outputs({"-o": output}, {"TRACE_FILE": trace_file})
    with Progress("bound") as say:
        say(f"reading {trace_file}")
        trace = load_instance(trace_file)
        require_spot_catalog(trace, spot, availability)
        market = None
        if spot or availability is not None:
            from gpuaas.simulator import spot_availability

            config = RunConfig(spot=True, availability=availability, seed=seed, nodes=nodes)
            market = spot_availability(trace, config)
        result = compute_bound(
            trace,
            nodes=nodes,
            slot=slot,
            time_limit=time_limit,
            progress=say,
            availability=market,
        )
    emit(result.to_dict(), as_json, result.summary(), output)


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option(
    "--methods",
    default=None,
    help="Comma-separated methods to simulate [default: "
    + ",".join(m for m in METHODS if METHODS[m].compare)
    + "; with --spot: "
    + ",".join(SPOT_METHODS)
    + "].",
)
@click.option("--seeds", default="1", show_default=True, help="Method seeds, e.g. 1-10 or 1,3,5.")
@click.option(
    "--node-multiplier",
    "multipliers",
    default="",
    metavar="M=K,...",
    help="Simulate method M with K x N nodes (paper §4.5), e.g. edf=2,dp-fastb=4.",
)
@click.option(
    "--tick",
    type=SECONDS,
    default=None,
    help="Rescheduling interval for every method (default: each method's own, else H).",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="M.OPTION=VALUE",
    help="A solver option of method M (repeatable), e.g. hierarchical.controller_time_limit=1.",
)
@click.option(
    "--workers",
    type=WORKERS,
    default=1,
    show_default=True,
    help="Simulations run in this many processes.",
)
@reconfiguration_options
@disruption_options
@spot_options
@click.option(
    "--json", "as_json", is_flag=True, help="Print the rows (one per simulation) as JSON."
)
@click.option("--csv", "as_csv", is_flag=True, help="Print the rows as CSV.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the rows to this file (CSV if it ends in .csv or with --csv, else JSON); "
    "`gpuaas plot` reads the CSV.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
def compare(
    trace_file: str,
    methods: str | None,
    seeds: str,
    multipliers: str,
    tick: float | None,
    settings: tuple[str, ...],
    workers: int,
    overhead: float | None,
    startup: float | None,
    paper_costs: bool,
    max_moves: int | None,
    moves_per_hour: int | None,
    spot: bool,
    availability: str | None,
    checkpoint: float,
    notice: float | None,
    as_json: bool,
    as_csv: bool,
    output: str | None,
    quiet: bool,
) -> None:
    """Simulate several methods on TRACE_FILE and compare their total costs (paper §4.3-§4.5).

    A campaign over one trace: the rows are campaign rows (docs/experiments.md), one per
    simulation (a seed-independent method is simulated once). The table gives per method the
    mean over its runs of the total, VM and tardiness costs, the ratio to EDF's mean cost, the
    ratio to the lower bound of any schedule on the same number of nodes (gpuaas bound), the
    deadline-miss rate, the late jobs' 95th-percentile lateness and the 95th-percentile JCT
    (every job metric is in the rows: gpuaas/metrics.py) and Path Relinking's cost reduction
    pct = (C - C_PR) / C (eq. 3), paired by seed, min / mean / max. With --max-moves or
    --moves-per-hour every method also runs with those disruption limits ("METHOD cap K",
    "METHOD B/h") and "cap cost %" is what they add to its cost.
    """
    from gpuaas.experiments import analysis
    from gpuaas.experiments import compare as cmp
    from gpuaas.experiments.rows import to_csv

    if as_json and as_csv:
        raise InputError(None, "--json/--csv", "choose one output format")
    check_output(output)
    distinct_outputs({"-o": output}, {"TRACE_FILE": trace_file})
    if methods is not None:
        names = [m.strip() for m in methods.split(",") if m.strip()]
    elif spot or availability is not None:
        names = list(SPOT_METHODS)
    else:
        names = cmp.default_methods()
    seed_list = cmp.parse_seeds(seeds)
    mult = cmp.parse_multipliers(multipliers, names)
    options = cmp.parse_settings(settings, names)
    trace = load_instance(trace_file)
    require_spot_catalog(trace, spot, availability)

    def progress(row: dict[str, Any]) -> None:
        if not quiet:
            click.echo(
                f"  {analysis.row_run(row)} seed {row['seed']}: "
                f"{row['total_cost']:.2f} $ ({row['wall_seconds'] or 0:.1f} s)",
                err=True,
            )

    if not quiet:
        click.echo(
            f"compare: {len(names)} method(s) x {len(seed_list)} seed(s) on {trace_file}", err=True
        )
    rows = cmp.compare(
        trace,
        names,
        seed_list,
        multipliers=mult,
        tick=tick,
        options=options,
        name=trace_file,
        workers=workers,
        on_row=progress,
        max_moves=max_moves,
        moves_per_hour=moves_per_hour,
        **reconfiguration(overhead, startup, paper_costs),
        **spot_settings(spot, availability, checkpoint, notice),
    )
    csv_out = as_csv or (output is not None and output.endswith(".csv"))
    text = to_csv(rows) if csv_out else to_json(rows)
    if output is not None:
        write_atomic(output, text)
    if as_json or as_csv:
        if output is None:
            click.echo(text, nl=False)
    else:
        click.echo(
            f"{trace_file}: N = {trace.nodes}, J = {trace.n_jobs}, seeds {seeds}; /bound: "
            "total cost over the lowest any schedule on the same nodes could reach\n"
            "miss %: jobs completed after their due date; late p95: how late the late jobs "
            "were (95th percentile); every job metric is in the rows (-o, --csv)"
        )
        click.echo(analysis.format_table(analysis.summarize(rows)))


@cli.command()
@click.option("--nodes", type=NODES, required=True, help="Number of nodes N.")
@click.option(
    "--jobs",
    type=JOBS,
    default=None,
    help="Number of jobs J [default: 10 x nodes; 4.5 x nodes with --snapshot].",
)
@click.option(
    "--arrivals",
    type=str,
    default=None,
    help="Inter-arrival pattern: exponential (default), high, low or mixed (paper §4.1).",
)
@click.option(
    "--seed", type=SEED, default=1, show_default=True, help="Random seed (same seed, same output)."
)
@click.option(
    "--catalog",
    default="azure-2021",
    show_default=True,
    help="Bundled catalog name or YAML file of VM types.",
)
@click.option(
    "--snapshot",
    is_flag=True,
    help="One rescheduling point: J concurrent jobs released by --time, some running.",
)
@click.option(
    "--time",
    "at",
    type=SECONDS_OR_ZERO,
    default=None,
    help="Time T_c of a --snapshot in seconds [default: 1e6].",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the instance JSON to stdout (when no -o)."
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the instance JSON to this file."
)
def generate(
    nodes: int,
    jobs: int | None,
    arrivals: str | None,
    seed: int,
    catalog: str,
    snapshot: bool,
    at: float | None,
    as_json: bool,
    output: str | None,
) -> None:
    """Generate a seeded job trace (paper §4.1) or a single-point snapshot, as an instance file."""
    from gpuaas.generator import SNAPSHOT_TIME, generate_snapshot, generate_trace
    from gpuaas.progress import Progress

    check_output(output)
    distinct_outputs({"-o": output}, {"--catalog": catalog if os.path.isfile(catalog) else None})
    if snapshot and arrivals is not None:
        raise InputError(None, "--arrivals", "applies to traces, not to --snapshot")
    if not snapshot and at is not None:
        raise InputError(None, "--time", "applies to --snapshot only (a trace starts at 0)")
    with Progress("generate") as say:
        if snapshot:
            at = SNAPSHOT_TIME if at is None else at
            data = generate_snapshot(nodes, jobs, seed, time=at, catalog=catalog, progress=say)
        else:
            arrivals = arrivals or "exponential"
            data = generate_trace(
                nodes, jobs, seed, arrivals=arrivals, catalog=catalog, progress=say
            )
        rel = [j["release"] for j in data["jobs"]]
        kind = "snapshot" if snapshot else f"trace ({arrivals} arrivals)"
        human = (
            f"{kind}: {data['nodes']} nodes, {len(rel)} jobs, seed {seed}, "
            f"releases {min(rel) / 3600:.1f} h .. {max(rel) / 3600:.1f} h"
            + (f"; written to {output}" if output else "; use -o FILE or --json for the instance")
        )
        say(f"writing {len(rel)} jobs")
        emit(data, as_json, human, output)


@cli.command("catalogs")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the catalogs (with their VM types) as JSON."
)
def catalogs_cmd(as_json: bool) -> None:
    """List the bundled VM catalogs: provider, region, date of the prices, VM types, GPUs."""
    from gpuaas.catalog import bundled_catalogs, load_catalog

    cats = [load_catalog(name) for name in bundled_catalogs()]
    if as_json:
        click.echo(to_json([c.to_dict() for c in cats]), nl=False)
        return
    rows = [("name", "provider", "region", "date", "VMs", "GPUs", "spot")]
    for c in cats:
        spot = int(np.isfinite(c.spot_per_hour).sum())
        rows.append(
            (
                c.name,
                c.info.get("provider", "-"),
                c.info.get("region", "-"),
                c.info.get("date", "-"),
                str(c.n_vms),
                ",".join(dict.fromkeys(c.gpu_models)),
                f"{spot}/{c.n_vms}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        click.echo("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    click.echo(
        "spot = VM types with a spot price (their spot variants with --spot); "
        "sources: gpuaas catalogs --json"
    )


@cli.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(IMPORT_FORMATS))
@click.argument("src", type=click.Path())
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    required=True,
    help="The trace file to write (instance JSON, what `gpuaas simulate` reads).",
)
@click.option(
    "--throughputs",
    metavar="FILE",
    help="Throughput table: CSV (model,gpu,gpus,steps_per_second), Gavel's JSON, or a bundled "
    "name [default: none; elasticflow: performance-model].",
)
@click.option(
    "--catalog",
    default=None,
    help="Bundled catalog name or YAML file of VM types to time the jobs on "
    "[default: azure-2021; elasticflow: gcp-us-central1].",
)
@click.option(
    "--nodes",
    default=None,
    metavar="N|jobs|demand",
    help="N, or its rule: jobs = ceil(J / 10) as the paper's traces, demand = the 95th "
    "percentile of the trace's GPU demand over the GPUs of the catalog's largest VM "
    "[default: jobs; elasticflow: demand].",
)
@click.option(
    "--seed",
    type=int,
    default=1,
    show_default=True,
    help="Seed of the drawn due dates and weights.",
)
@click.option("--limit", type=int, default=None, help="Keep the first K jobs (by submit time).")
@click.option(
    "--window",
    metavar="START:END",
    default=None,
    help="Keep jobs submitted in [START, END) seconds of the trace's clock.",
)
@click.option(
    "--gpu-counts",
    type=click.Choice(["any", "requested"]),
    default="any",
    show_default=True,
    help="Model jobs may run on any GPU count the table has, or only on the requested one.",
)
@click.option(
    "--scaling",
    type=click.Choice(["none", "linear"]),
    default="none",
    show_default=True,
    help="linear: a GPU count missing from the table scales the largest smaller one (g / g0).",
)
@click.option("--any-gpu", is_flag=True, help="Duration jobs run equally fast on every GPU model.")
@click.option(
    "--measured-on",
    metavar="GPU",
    default=None,
    help="GPU model of measured durations when the trace does not name it "
    "[default: none; elasticflow: A100].",
)
@click.option(
    "--skip-unrunnable", is_flag=True, help="Drop jobs no configuration of the catalog can run."
)
def import_trace(
    fmt: str,
    src: str,
    output: str,
    throughputs: str | None,
    catalog: str | None,
    nodes: str | None,
    seed: int,
    limit: int | None,
    window: str | None,
    gpu_counts: str,
    scaling: str,
    any_gpu: bool,
    measured_on: str | None,
    skip_unrunnable: bool,
) -> None:
    """Convert the trace SRC in FORMAT (gavel, alibaba-pai-2020, csv, elasticflow) into a
    gpuaas trace.

    Formats, what is mapped, assumed and dropped, and each format's defaults:
    instances/README.md. Missing due dates and weights follow the paper's rules (seeded) and
    are written into the output.
    """
    from gpuaas.importers import build_trace, import_defaults, parse_window, read_trace
    from gpuaas.progress import Progress
    from gpuaas.throughputs import load_throughputs

    check_output(output)
    default = import_defaults(fmt)
    catalog = catalog or default["catalog"]
    throughputs = throughputs or default["throughputs"]
    given = throughputs if throughputs is not None and os.path.isfile(throughputs) else None
    distinct_outputs({"-o": output}, {"SRC": src, "--throughputs": given})
    span = parse_window(window)
    table = load_throughputs(throughputs) if throughputs is not None else None
    if fmt == "gavel" and table is None:
        raise InputError(
            None,
            "--throughputs",
            "the gavel format needs a throughput table (e.g. Gavel's simulation_throughputs.json)",
        )
    with Progress("import") as say:
        say(f"reading {src}")
        jobs, report = read_trace(fmt, src)
        data, report = build_trace(
            jobs,
            src,
            catalog=catalog,
            throughputs=table,
            nodes=_nodes_option(nodes or default["nodes"]),
            seed=seed,
            limit=limit,
            window=span,
            gpu_counts=gpu_counts,
            scaling=scaling,
            any_gpu=any_gpu,
            measured_on=measured_on or default["measured_on"],
            skip_unrunnable=skip_unrunnable,
            report=report,
            progress=say,
        )
        say(f"writing {output}")
        write_atomic(output, to_json(data, indent=1))
    last = max(j["release"] for j in data["jobs"]) / 3600.0
    click.echo(
        f"imported {report.summary()}; catalog {catalog}; releases 0 .. {last:.1f} h; "
        f"written to {output}"
    )


def _nodes_option(text: str) -> int | str:
    """`--nodes` of `gpuaas import`: an integer, or a rule name (checked by build_trace)."""
    try:
        return int(text)
    except ValueError:
        return text


@cli.command()
@click.argument("spec_file", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Results file, .csv or .parquet (default: SPEC's name with .csv, here).",
)
@click.option(
    "--scheduler", metavar="ADDRESS", help="Run on an existing Dask cluster (tcp://host:port)."
)
@click.option(
    "--backend",
    type=click.Choice(["auto", "dask", "processes", "serial"]),
    default="auto",
    show_default=True,
    help="auto: a Dask LocalCluster if dask is installed, else local processes.",
)
@click.option("--workers", type=WORKERS, help="Worker processes (default: one per core).")
@click.option("--retry-failed", is_flag=True, help="Run again the cells recorded as failed.")
@click.option(
    "--numba-cache-dir", type=click.Path(file_okay=False), help="NUMBA_CACHE_DIR for the workers."
)
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def campaign(
    spec_file: str,
    output: str | None,
    scheduler: str | None,
    backend: str,
    workers: int | None,
    retry_failed: bool,
    numba_cache_dir: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Run the simulations of the campaign SPEC_FILE (YAML grid) into one results file.

    Cells already in the results file are skipped (an interrupted campaign resumes); a failing
    cell is recorded with its error. Exits 1 when the file holds failed cells.
    """
    from gpuaas.experiments.campaign import run_campaign
    from gpuaas.experiments.runners import DASK_HINT, dask_available
    from gpuaas.experiments.spec import load_spec

    spec = load_spec(spec_file)
    output = output or f"{Path(spec_file).stem}.csv"
    check_output(output)
    distinct_outputs({"-o": output}, {"SPEC_FILE": spec_file})
    if scheduler is None and backend == "auto" and not dask_available():
        click.echo(
            f"gpuaas: dask is not installed, running in local processes; {DASK_HINT}", err=True
        )
    report = run_campaign(
        spec,
        output,
        backend=backend,
        scheduler=scheduler,
        workers=workers,
        retry_failed=retry_failed,
        progress=not quiet,
        numba_cache_dir=numba_cache_dir,
    )
    failed = sum(r["status"] != "ok" for r in report.rows)
    summary = {
        "spec": spec_file,
        "results": output,
        "cells": report.cells,
        "skipped": report.skipped,
        "ran": report.ran,
        "failed_now": report.failed,
        "failed_in_file": failed,
        "backend": report.backend,
        "workers": report.workers,
        "seconds": report.seconds,
    }
    if as_json:
        click.echo(to_json(summary), nl=False)
    else:
        click.echo(
            f"campaign {spec.name}: {report.cells} cells, {report.skipped} already in {output}, "
            f"ran {report.ran} ({report.failed} failed) on {report.backend} with "
            f"{report.workers} worker(s) in {report.seconds:.1f} s"
        )
        if failed:
            click.echo(
                f"{failed} failed cell(s) in {output} (see its 'error' column; --retry-failed"
                " runs them again)"
            )
    sys.exit(1 if failed else 0)


@cli.group(cls=Group)
def plot() -> None:
    """Plot campaign results or one simulation's event log (PNG, SVG or PDF by -o's extension)."""


def _plot_out(output: str | None, source: str, kind: str, trace: str | None = None) -> str:
    out = output or str(Path(source).with_name(f"{Path(source).stem}-{kind}.png"))
    distinct_outputs({"-o": out}, {"the input": source, "--trace": trace})
    return out


_results_arg = click.argument("results", type=click.Path(dir_okay=False))
_plot_output = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Image file (default: beside the input, <name>-<plot>.png).",
)


@plot.command("costs")
@_results_arg
@_plot_output
@click.option(
    "--reference", default=BASELINE, show_default=True, help="Method the cost ratio divides by."
)
def plot_costs_cmd(results: str, output: str | None, reference: str) -> None:
    """Mean total cost by method and scenario, with the ratio to EDF (paper Fig. 3)."""
    from gpuaas.experiments.store import read_results
    from gpuaas.plots import plot_costs

    click.echo(plot_costs(read_results(results), _plot_out(output, results, "costs"), reference))


@plot.command("pct")
@_results_arg
@_plot_output
@click.option("--reference", default=REFERENCE, show_default=True, help="The method compared with.")
def plot_pct_cmd(results: str, output: str | None, reference: str) -> None:
    """Percentage cost reduction of path relinking over each method, min/mean/max (Fig. 4)."""
    from gpuaas.experiments.store import read_results
    from gpuaas.plots import plot_pct

    click.echo(plot_pct(read_results(results), _plot_out(output, results, "pct"), reference))


@plot.command("solver-time")
@_results_arg
@_plot_output
@click.option(
    "--clock",
    type=click.Choice(["wall", "cpu"]),
    default="wall",
    show_default=True,
    help="Wall-clock time, or process CPU time (steadier on a shared machine).",
)
def plot_solver_time_cmd(results: str, output: str | None, clock: str) -> None:
    """Mean solver time per rescheduling event against N, per method (Fig. 5)."""
    from gpuaas.experiments.store import read_results
    from gpuaas.plots import plot_solver_time

    click.echo(
        plot_solver_time(read_results(results), _plot_out(output, results, "solver-time"), clock)
    )


@plot.command("cdf")
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False))
@_plot_output
def plot_cdf_cmd(results: tuple[str, ...], output: str | None) -> None:
    """CDFs of JCT and lateness over the jobs of simulation results (gpuaas simulate --json -o
    r.json), one curve per file."""
    from gpuaas.plots import plot_cdf

    click.echo(plot_cdf(list(results), _plot_out(output, results[0], "cdf")))


_events_arg = click.argument("events", type=click.Path(dir_okay=False))
_trace_opt = click.option(
    "--trace",
    required=True,
    type=click.Path(dir_okay=False),
    help="The simulated trace (catalog, due dates, weights).",
)


@plot.command("gantt")
@_events_arg
@_trace_opt
@_plot_output
def plot_gantt_cmd(events: str, trace: str, output: str | None) -> None:
    """Gantt chart of one simulation: nodes (VM type) and jobs (GPUs, due dates)."""
    from gpuaas.plots import plot_gantt

    click.echo(plot_gantt(events, trace, _plot_out(output, events, "gantt", trace)))


@plot.command("cost-over-time")
@_events_arg
@_trace_opt
@_plot_output
def plot_cost_over_time_cmd(events: str, trace: str, output: str | None) -> None:
    """Cumulative VM, tardiness and total cost of one simulation over time."""
    from gpuaas.plots import plot_cost_over_time

    out = _plot_out(output, events, "cost-over-time", trace)
    click.echo(plot_cost_over_time(events, trace, out))


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


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated(signum)


def main() -> None:
    """Console-script entry point (`Group.main` formats every error in one line; standard
    output is written whole or fails, `gpuaas.files.checked_stdout`). SIGTERM and SIGHUP
    unwind the command (`Terminated`), then end the process by the same signal."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    compile_notice()
    try:
        with checked_stdout():
            cli.main(prog_name="gpuaas")
    except Terminated as exc:
        signum = exc.args[0]
        click.echo(f"gpuaas: stopped by {signal.Signals(signum).name}", err=True)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _quiet_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
